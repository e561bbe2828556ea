/**
 * Courier pincode serviceability sync (issue 14; DOMAIN.md "A real courier
 * API: Delhivery B2C" pin-codes API): for a courier whose adapter implements
 * the optional `serviceability` operation (lib/couriers/types.ts), every
 * pincode of our directory is asked in batches of `serviceabilityBatchSize`
 * and the answers replace that courier's rows of `rates.courier_pincodes` in
 * ONE transaction (a failed fetch writes nothing: the previous rows stay and
 * the error is recorded in `rates.serviceability_syncs`).
 *
 * Quoting (lib/rates/quote.ts) reads the synced rows from the catalog
 * snapshot ({@link SyncedPincodes}): a courier with synced rows is dropped
 * `not_serviceable` on a lane they say it does not serve
 * ({@link syncedRefusal}); a courier never synced is not filtered.
 */
import type { Sequelize } from "sequelize";
import type { ServiceabilitySyncStatus } from "../contracts";
import type { CourierAdapter, PincodeServiceability } from "../couriers/types";
import { setting } from "../platform/config";
import { exec, select } from "../platform/db";
import { kgToGrams } from "../shared/lane";
import { toPaise, toRupees } from "../shared/money";

/** Default interval of the scheduled sync (24 h), ms. */
export const DEFAULT_SYNC_MS = setting("RATES_SERVICEABILITY_SYNC_MS", {});
/** Batch size used when an adapter implements `serviceability` but states no `serviceabilityBatchSize`. */
export const DEFAULT_BATCH = 50;
/** Queue (lib/platform/queue.ts) of the scheduled sync job, owned by the rates service. */
export const SYNC_QUEUE = "rates-serviceability";

/** Bits of one synced pincode in {@link SyncedPincodes}. */
export const PIN = { prepaid: 1, cod: 2, pickup: 4, reverse: 8, oda: 16 } as const;

/** Synced serviceability held in memory: logistic_id → pincode → {@link PIN} bits. Couriers never synced are absent. */
export type SyncedPincodes = Map<number, Map<string, number>>;

/**
 * Interval of the scheduled sync from `RATES_SERVICEABILITY_SYNC_MS` (ms):
 * unset or empty → {@link DEFAULT_SYNC_MS}; `0` → off (answers 0).
 * @throws Error when the value is not a non-negative integer
 */
export function syncIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
	return setting("RATES_SERVICEABILITY_SYNC_MS", env);
}

/** One courier's answer for one pincode, as stored (paise, grams). */
export interface CourierPincodeRow {
	pincode: string;
	prepaid: boolean;
	cod: boolean;
	pickup: boolean;
	reverse: boolean;
	oda: boolean;
	max_amount_paise: number | null;
	max_weight_g: number | null;
	sort_code: string | null;
}

/** Whether `adapter` implements the optional serviceability operation. */
export function syncsServiceability(
	adapter: CourierAdapter,
): adapter is CourierAdapter & Required<Pick<CourierAdapter, "serviceability">> {
	return typeof adapter.serviceability === "function";
}

/** The stored row of pincode `pin` from the adapter's answer (rupees → paise, kg → grams). */
function rowOf(pin: string, s: PincodeServiceability): CourierPincodeRow {
	return {
		pincode: pin,
		prepaid: s.prepaid,
		cod: s.cod,
		pickup: s.pickup,
		reverse: s.reverse,
		oda: s.oda,
		max_amount_paise: s.max_amount === null ? null : toPaise(s.max_amount),
		max_weight_g: s.max_weight_kg === null ? null : kgToGrams(s.max_weight_kg),
		sort_code: s.sort_code,
	};
}

/**
 * Asks `adapter` the serviceability of every pincode of `pincodes` (six-digit
 * strings), sequentially in batches of its `serviceabilityBatchSize`
 * (default {@link DEFAULT_BATCH}). Pincodes the courier does not answer, or
 * answers outside the batch asked, are left out (not served). Throws whatever
 * the adapter throws (CourierUnavailable / CourierRefused): nothing partial
 * is answered.
 */
export async function fetchServiceability(
	adapter: CourierAdapter,
	pincodes: readonly string[],
): Promise<CourierPincodeRow[]> {
	if (!syncsServiceability(adapter)) throw new Error("adapter has no serviceability operation");
	const size = Math.max(1, Math.floor(adapter.serviceabilityBatchSize ?? DEFAULT_BATCH));
	const out: CourierPincodeRow[] = [];
	for (let i = 0; i < pincodes.length; i += size) {
		const batch = pincodes.slice(i, i + size);
		const asked = new Set(batch);
		const res = await adapter.serviceability(batch);
		for (const [pin, s] of res) if (asked.has(pin)) out.push(rowOf(pin, s));
	}
	return out;
}

/**
 * Replaces courier `logisticId`'s rows of `rates.courier_pincodes` by `rows`
 * in one transaction (under an advisory lock per courier, so two syncs of one
 * courier never interleave) and records the success in
 * `rates.serviceability_syncs` (time, row count; the last error is kept for
 * history). Answers the row count and the sync time (ISO-8601 UTC). Throws
 * the pg error when the database fails (nothing changed then).
 */
export async function replaceCourierPincodes(
	db: Sequelize,
	logisticId: number,
	rows: readonly CourierPincodeRow[],
): Promise<{ rows: number; synced_at: string }> {
	return db.transaction(async (t) => {
		await exec(db, "SELECT pg_advisory_xact_lock(hashtext('rates.courier_pincodes'), $1)", [logisticId], t);
		await exec(db, "DELETE FROM rates.courier_pincodes WHERE logistic_id = $1", [logisticId], t);
		const [{ now }] = await select<{ now: Date }>(db, "SELECT now() AS now", [], t);
		if (rows.length)
			await exec(
				db,
				`INSERT INTO rates.courier_pincodes (logistic_id, pincode, prepaid, cod, pickup, reverse, oda,
				                                     max_amount_paise, max_weight_g, sort_code, synced_at)
				 SELECT $1, pincode, prepaid, cod, pickup, reverse, oda, max_amount_paise, max_weight_g, sort_code, now()
				   FROM jsonb_to_recordset($2::jsonb) AS x(pincode text, prepaid boolean, cod boolean, pickup boolean,
				        reverse boolean, oda boolean, max_amount_paise bigint, max_weight_g integer, sort_code text)`,
				[logisticId, JSON.stringify(rows)],
				t,
			);
		await exec(
			db,
			`INSERT INTO rates.serviceability_syncs (logistic_id, synced_at, rows, attempted_at)
			 VALUES ($1, now(), $2, now())
			 ON CONFLICT (logistic_id) DO UPDATE SET synced_at = now(), rows = EXCLUDED.rows, attempted_at = now()`,
			[logisticId, rows.length],
			t,
		);
		return { rows: rows.length, synced_at: new Date(now).toISOString() };
	});
}

/**
 * Records a failed sync of courier `logisticId` (`message`: the error's words,
 * cut to 500 characters) in `rates.serviceability_syncs`; its rows of
 * `rates.courier_pincodes` are not touched. Throws the pg error.
 */
export async function recordSyncError(db: Sequelize, logisticId: number, message: string): Promise<void> {
	await exec(
		db,
		`INSERT INTO rates.serviceability_syncs (logistic_id, attempted_at, last_error, last_error_at)
		 VALUES ($1, now(), $2, now())
		 ON CONFLICT (logistic_id) DO UPDATE SET attempted_at = now(), last_error = EXCLUDED.last_error,
		                                         last_error_at = now()`,
		[logisticId, message.slice(0, 500)],
	);
}

/** One courier's last sync (`rates.serviceabilityStatus`). */
export type SyncStatus = ServiceabilitySyncStatus;

interface SyncStatusDbRow {
	logistic_id: number | string;
	synced_at: Date | null;
	rows: number | string;
	attempted_at: Date;
	last_error: string | null;
	last_error_at: Date | null;
}

const iso = (d: Date | null) => (d === null ? null : new Date(d).toISOString());

/** Every courier's last sync from `rates.serviceability_syncs`, by logistic_id. Throws the pg error. */
export async function readSyncStatus(db: Sequelize): Promise<SyncStatus[]> {
	const rows = await select<SyncStatusDbRow>(
		db,
		"SELECT logistic_id, synced_at, rows, attempted_at, last_error, last_error_at FROM rates.serviceability_syncs ORDER BY logistic_id",
	);
	return rows.map((r) => ({
		logistic_id: Number(r.logistic_id),
		synced_at: iso(r.synced_at),
		rows: Number(r.rows),
		attempted_at: new Date(r.attempted_at).toISOString(),
		last_error: r.last_error,
		last_error_at: iso(r.last_error_at),
	}));
}

/**
 * The synced rows of every courier that has had a successful sync (a courier
 * whose last success answered zero pincodes is present with an empty map: it
 * serves nothing). Throws the pg error.
 */
export async function loadSyncedPincodes(db: Sequelize): Promise<SyncedPincodes> {
	const [synced, rows] = await Promise.all([
		select<{ logistic_id: number | string }>(
			db,
			"SELECT logistic_id FROM rates.serviceability_syncs WHERE synced_at IS NOT NULL",
		),
		select<{ logistic_id: number | string; pincode: string; bits: number | string }>(
			db,
			`SELECT logistic_id, pincode,
			        (prepaid::int * ${PIN.prepaid} + cod::int * ${PIN.cod} + pickup::int * ${PIN.pickup}
			         + reverse::int * ${PIN.reverse} + oda::int * ${PIN.oda}) AS bits
			   FROM rates.courier_pincodes`,
		),
	]);
	const out: SyncedPincodes = new Map();
	for (const s of synced) out.set(Number(s.logistic_id), new Map());
	for (const r of rows) out.get(Number(r.logistic_id))?.set(r.pincode, Number(r.bits));
	return out;
}

/** A synced pincode's own limits: the most COD collected there (paise) and the heaviest parcel (grams); null = none stated. */
export interface PinLimits {
	max_amount_paise: number | null;
	max_weight_g: number | null;
}

/** Synced limits in memory: logistic_id → pincode → {@link PinLimits}, only for pincodes that state one. */
export type SyncedLimits = Map<number, Map<string, PinLimits>>;

/** Reads the stated limits of every synced pincode (rows without any are left out). Throws when the database is unreachable. */
export async function loadSyncedLimits(db: Sequelize): Promise<SyncedLimits> {
	const rows = await select<{
		logistic_id: number | string;
		pincode: string;
		max_amount_paise: number | string | null;
		max_weight_g: number | string | null;
	}>(
		db,
		`SELECT logistic_id, pincode, max_amount_paise, max_weight_g FROM rates.courier_pincodes
		  WHERE max_amount_paise IS NOT NULL OR max_weight_g IS NOT NULL`,
	);
	const out: SyncedLimits = new Map();
	for (const r of rows) {
		const id = Number(r.logistic_id);
		const m = out.get(id) ?? new Map<string, PinLimits>();
		out.set(id, m);
		m.set(r.pincode, {
			max_amount_paise: r.max_amount_paise === null ? null : Number(r.max_amount_paise),
			max_weight_g: r.max_weight_g === null ? null : Number(r.max_weight_g),
		});
	}
	return out;
}

/**
 * The first limit of courier `limits` (its synced pincodes' stated limits;
 * undefined → none) that the parcel passes on lane `from` → `to`, or null:
 * - `over_weight_limit`: the billable weight (grams) above either pincode's
 *   `max_weight` (Delhivery `max_weight`);
 * - `not_serviceable`: a COD amount (paise; forward COD only, else null)
 *   above the delivery pincode's `max_amount` (the most COD the courier
 *   collects there, Delhivery `max_amount`).
 * Details name the pincode and the limit in kg / rupees.
 */
export function syncedLimitRefusal(
	limits: Map<string, PinLimits> | undefined,
	from: string,
	to: string,
	codAmountPaise: number | null,
	billableG: number,
): { reason: "over_weight_limit" | "not_serviceable"; detail: string } | null {
	if (!limits) return null;
	for (const pin of [from, to]) {
		const maxG = limits.get(pin)?.max_weight_g ?? null;
		if (maxG !== null && billableG > maxG)
			return {
				reason: "over_weight_limit",
				detail: `billable weight ${billableG / 1000} kg exceeds the ${maxG / 1000} kg limit at pincode ${pin}`,
			};
	}
	const maxPaise = limits.get(to)?.max_amount_paise ?? null;
	if (codAmountPaise !== null && maxPaise !== null && codAmountPaise > maxPaise)
		return {
			reason: "not_serviceable",
			detail: `COD of ₹${toRupees(codAmountPaise)} is above the ₹${toRupees(maxPaise)} collected at delivery pincode ${to}`,
		};
	return null;
}

/**
 * Why courier `pins` (its synced rows; undefined = never synced → null, not
 * filtered) does not serve the lane `from` → `to`, or null when it does:
 * - forward: the origin must allow `pickup`; the destination `cod` for a COD
 *   shipment, else `prepaid`;
 * - reverse (`from` is the customer, `to` the warehouse, as everywhere in
 *   rates): the customer's pincode must allow `reverse` pickups and the
 *   warehouse's take a prepaid delivery.
 * A pincode absent from the courier's rows is not served at all.
 */
export function syncedRefusal(
	pins: Map<string, number> | undefined,
	from: string,
	to: string,
	direction: "forward" | "reverse",
	cod: boolean,
): string | null {
	if (!pins) return null;
	const has = (pin: string, bit: number) => ((pins.get(pin) ?? 0) & bit) !== 0;
	const why: string[] = [];
	if (direction === "forward") {
		if (!has(from, PIN.pickup)) why.push(`pickup pincode ${from}`);
		if (!has(to, cod ? PIN.cod : PIN.prepaid))
			why.push(`delivery pincode ${to} (${cod ? "COD" : "prepaid"})`);
	} else {
		if (!has(from, PIN.reverse)) why.push(`pickup pincode ${from} (reverse pickup)`);
		if (!has(to, PIN.prepaid)) why.push(`delivery pincode ${to}`);
	}
	return why.length ? why.join(" and ") : null;
}
