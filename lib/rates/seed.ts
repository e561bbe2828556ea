/**
 * Sandbox seed of the rates schema (docs/ARCHITECTURE.md §4): the couriers,
 * rate cards, pickup rules and transit days of `data/sandbox-rates.json`. Run by the rates service in
 * `started` (after migrations) only when `loadConfig().sandbox` is true.
 * Idempotent: every insert is `ON CONFLICT DO NOTHING`, so an operator's edits
 * in the database survive restarts and concurrent starts insert each row once.
 */
import type { Sequelize } from "sequelize";
import sandboxData from "../../data/sandbox-rates.json";
import type { CourierInfo } from "../contracts";
import { SANDBOX_DELHIVERY_CODE } from "../platform/config";
import { exec } from "../platform/db";

/** [first_slab_kg, first_slab_paise, additional_slab_kg, additional_slab_paise, min_chargeable_kg] */
export type RateCardTuple = number[];

/** One sandbox courier as written in the data file. */
export interface SeedCourier extends Omit<CourierInfo, "active" | "pickup"> {
	mode: string;
	volumetric_divisor: number;
	max_weight_kg: number | null;
	rate_cards: { forward?: Record<string, RateCardTuple>; reverse?: Record<string, RateCardTuple> };
	cod_config?: { flat_paise: number; percent_bp: number } | null;
	rto_percent_bp: number | null;
	serviceability: { pincode_prefix: string; applies_to: string; serviceable: boolean; note?: string }[];
	/** the daily cut-off (IST `HH:MM`) and pickup week days (0 = Sunday) */
	pickup: { cutoff: string; weekdays: number[] };
	/** [min, max] transit working days per direction and zone */
	transit_days: { forward?: Record<string, number[]>; reverse?: Record<string, number[]> };
}

/** The sandbox couriers of `data/sandbox-rates.json`. */
const FILE_COURIERS: SeedCourier[] = sandboxData.couriers as SeedCourier[];

/**
 * The sandbox Delhivery courier (issue 14): the REAL Delhivery adapter
 * (`adapter: "delhivery"`) pointed at the simulator's Delhivery protocol
 * (`<simulatorUrl>/delhivery`, zero setup: `sandboxDelhiveryOverrides` in
 * lib/platform/config.ts). Forward and reverse, COD, surface; Sandbox Surface's rate
 * cards; the lowest priority, so AUTO fall-over of the other sandbox couriers
 * is unchanged. Sandbox Surface's lane rules too (no delivery to the Andaman
 * and Nicobar Islands …), besides what the serviceability sync learns.
 */
export const SANDBOX_DELHIVERY: SeedCourier = (() => {
	const surface = FILE_COURIERS.find((c) => c.code === "sbx-surface");
	const forward = surface?.rate_cards.forward ?? {};
	return {
		logistic_id: Math.max(0, ...FILE_COURIERS.map((c) => c.logistic_id)) + 1,
		logistic_name: "Sandbox Delhivery",
		adapter: "delhivery",
		code: SANDBOX_DELHIVERY_CODE,
		forward: true,
		reverse: true,
		cod: true,
		mode: "surface",
		volumetric_divisor: 5000,
		max_weight_kg: 30,
		default_priority: Math.max(0, ...FILE_COURIERS.map((c) => c.default_priority)) + 1,
		rate_cards: { forward, reverse: forward },
		cod_config: { flat_paise: 3500, percent_bp: 200 },
		rto_percent_bp: 10000,
		serviceability: surface?.serviceability ?? [],
		pickup: surface?.pickup ?? { cutoff: "14:00", weekdays: [1, 2, 3, 4, 5, 6] },
		transit_days: {
			forward: surface?.transit_days.forward ?? {},
			reverse: surface?.transit_days.forward ?? {},
		},
	};
})();

/**
 * The sandbox couriers seeded at start: those of `data/sandbox-rates.json`
 * (the sandbox adapter) and {@link SANDBOX_DELHIVERY} (the real Delhivery
 * adapter against the simulator's Delhivery protocol).
 */
export const SANDBOX_COURIERS: SeedCourier[] = [...FILE_COURIERS, SANDBOX_DELHIVERY];

/**
 * Inserts the sandbox couriers, rate cards, COD configs, RTO rules and
 * serviceability rules (idempotent). Returns the number of rows inserted.
 */
export async function seedSandbox(
	db: Sequelize,
	couriers: SeedCourier[] = SANDBOX_COURIERS,
): Promise<number> {
	const cards: Record<string, unknown>[] = [];
	const cods: Record<string, unknown>[] = [];
	const rtos: Record<string, unknown>[] = [];
	const rules: Record<string, unknown>[] = [];
	const transit: Record<string, unknown>[] = [];
	for (const c of couriers) {
		for (const direction of ["forward", "reverse"] as const)
			for (const [zone, [min_days, max_days]] of Object.entries(c.transit_days?.[direction] ?? {}))
				transit.push({ logistic_id: c.logistic_id, zone, direction, min_days, max_days });
		for (const direction of ["forward", "reverse"] as const) {
			for (const [zone, t] of Object.entries(c.rate_cards[direction] ?? {})) {
				cards.push({
					logistic_id: c.logistic_id,
					zone,
					direction,
					first_slab_kg: t[0],
					first_slab_paise: t[1],
					additional_slab_kg: t[2],
					additional_slab_paise: t[3],
					min_chargeable_kg: t[4] ?? 0,
				});
			}
		}
		if (c.cod_config) cods.push({ logistic_id: c.logistic_id, ...c.cod_config });
		if (c.rto_percent_bp !== null && c.rto_percent_bp !== undefined)
			rtos.push({ logistic_id: c.logistic_id, percent_bp: c.rto_percent_bp });
		for (const r of c.serviceability) rules.push({ logistic_id: c.logistic_id, note: null, ...r });
	}
	return db.transaction(async (transaction) => {
		const q = async (sql: string, rows: unknown[]) =>
			rows.length ? (await exec(db, sql, [JSON.stringify(rows)], transaction)).count : 0;
		let n = 0;
		n += await q(
			`INSERT INTO rates.couriers (logistic_id, logistic_name, adapter, code, forward, reverse, cod, mode,
				volumetric_divisor, max_weight_kg, default_priority, active, pickup_cutoff, pickup_weekdays)
			 SELECT logistic_id, logistic_name, adapter, code, forward, reverse, cod, mode,
				volumetric_divisor, max_weight_kg, default_priority, true, COALESCE(pickup->>'cutoff', '14:00'),
				COALESCE(ARRAY(SELECT jsonb_array_elements_text(pickup->'weekdays'))::smallint[], '{1,2,3,4,5,6}')
			   FROM jsonb_to_recordset($1::jsonb) AS x(logistic_id integer, logistic_name text, adapter text, code text,
				forward boolean, reverse boolean, cod boolean, mode text, volumetric_divisor integer,
				max_weight_kg numeric, default_priority integer, pickup jsonb)
			 ON CONFLICT DO NOTHING`,
			couriers,
		);
		n += await q(
			`INSERT INTO rates.transit_days (logistic_id, zone, direction, min_days, max_days)
			 SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(logistic_id integer, zone char(1), direction text,
				min_days smallint, max_days smallint)
			 ON CONFLICT DO NOTHING`,
			transit,
		);
		n += await q(
			`INSERT INTO rates.rate_cards (logistic_id, zone, direction, first_slab_kg, first_slab_paise,
				additional_slab_kg, additional_slab_paise, min_chargeable_kg)
			 SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(logistic_id integer, zone char(1), direction text,
				first_slab_kg numeric, first_slab_paise bigint, additional_slab_kg numeric, additional_slab_paise bigint,
				min_chargeable_kg numeric)
			 ON CONFLICT DO NOTHING`,
			cards,
		);
		n += await q(
			`INSERT INTO rates.cod_config (logistic_id, flat_paise, percent_bp)
			 SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(logistic_id integer, flat_paise bigint, percent_bp integer)
			 ON CONFLICT DO NOTHING`,
			cods,
		);
		n += await q(
			`INSERT INTO rates.rto_rules (logistic_id, percent_bp)
			 SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(logistic_id integer, percent_bp integer)
			 ON CONFLICT DO NOTHING`,
			rtos,
		);
		n += await q(
			`INSERT INTO rates.serviceability (logistic_id, pincode_prefix, applies_to, serviceable, note)
			 SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(logistic_id integer, pincode_prefix text, applies_to text,
				serviceable boolean, note text)
			 ON CONFLICT DO NOTHING`,
			rules,
		);
		return n;
	});
}
