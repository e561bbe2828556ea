/**
 * The rates catalog snapshot: couriers, rate cards, COD configs, RTO rules,
 * serviceability rules and lane performance, read from the `rates` schema in
 * one go and held in memory (no database query on the quote hot path). A new
 * snapshot replaces the old one atomically on reload.
 */
import type { Sequelize } from "sequelize";
import type { CourierInfo, ShipmentDirection, Zone } from "../contracts";
import { select } from "../platform/db";
import { DEFAULT_PICKUP, minutesOf, type PickupRules } from "../shared/calendar";
import { kgToGrams } from "../shared/lane";
import type { CodConfig, RateCard, ServiceabilityRule } from "./pricing";
import {
	loadSyncedLimits,
	loadSyncedPincodes,
	type SyncedLimits,
	type SyncedPincodes,
} from "./serviceability";

/** Minimum shipments on a lane before its performance is answered (never invented below it). */
export const MIN_LANE_SHIPMENTS = 20;

/** A courier as held in the snapshot. */
export interface CourierRow extends CourierInfo {
	mode: "air" | "surface";
	volumetric_divisor: number;
	/** Maximum billable weight in grams, or null for no limit. */
	max_weight_g: number | null;
	/** its pickup week days and daily cut-off (lib/shared/calendar.ts) */
	pickup: PickupRules;
}

/** Lane performance answered in a quote (§2.7). `avg_tat_days` is null when nothing was delivered yet. */
export interface LanePerformance {
	delivered_pct: number;
	rto_pct: number;
	avg_tat_days: number | null;
	shipments: number;
}

export interface CatalogSnapshot {
	/** All couriers (active or not), by default_priority then logistic_id. */
	couriers: CourierRow[];
	byId: Map<number, CourierRow>;
	/** key `${logistic_id}:${zone}:${direction}` */
	cards: Map<string, RateCard>;
	cod: Map<number, CodConfig>;
	/** RTO percent of the forward freight, basis points. */
	rto: Map<number, number>;
	rules: Map<number, ServiceabilityRule[]>;
	/** key `${logistic_id}:${from_pin}:${to_pin}`, only lanes with ≥ {@link MIN_LANE_SHIPMENTS} shipments */
	performance: Map<string, LanePerformance>;
	/** transit working days {min, max}, key `${logistic_id}:${zone}:${direction}` (as {@link cardKey}) */
	transit: Map<string, { min: number; max: number }>;
	/**
	 * The observed transit of lanes with ≥ {@link MIN_LANE_SHIPMENTS} delivered shipments: the 80th percentile of
	 * pickup-to-delivery days (rounded up), key {@link laneKey}
	 */
	learned: Map<string, number>;
	/**
	 * Each synced courier's own pincode serviceability (lib/rates/serviceability.ts,
	 * `rates.courier_pincodes`); couriers never synced are absent (not filtered).
	 */
	synced?: SyncedPincodes;
	/** The stated limits (COD amount, weight) of synced pincodes ({@link loadSyncedLimits}); absent = none. */
	syncedLimits?: SyncedLimits;
	loadedAt: Date;
}

/** Key of a rate card in {@link CatalogSnapshot.cards}. */
export const cardKey = (id: number, zone: Zone, dir: ShipmentDirection) => `${id}:${zone}:${dir}`;
/** Key of a lane in {@link CatalogSnapshot.performance}. */
export const laneKey = (id: number, from: string, to: string) => `${id}:${from}:${to}`;

const round1 = (x: number) => Math.round(x * 10) / 10;

/** A numeric column as pg answers it: integers as numbers, `numeric` and `bigint` as strings. */
type Num = number | string;

/** Rows of the six catalog queries, as pg answers them. */
interface CourierDbRow extends Omit<CourierInfo, "logistic_id" | "default_priority"> {
	logistic_id: Num;
	default_priority: Num;
	mode: "air" | "surface";
	volumetric_divisor: Num;
	/** kg */
	max_weight_kg: Num | null;
	pickup_cutoff: string;
	pickup_weekdays: number[];
}
interface RateCardDbRow {
	logistic_id: Num;
	/** `char(1)`, may come space-padded */
	zone: string;
	direction: ShipmentDirection;
	first_slab_kg: Num;
	first_slab_paise: Num;
	additional_slab_kg: Num;
	additional_slab_paise: Num;
	min_chargeable_kg: Num;
}
interface CodDbRow {
	logistic_id: Num;
	flat_paise: Num;
	percent_bp: Num;
}
interface RtoDbRow {
	logistic_id: Num;
	percent_bp: Num;
}
interface ServiceabilityDbRow {
	logistic_id: Num;
	pincode_prefix: string;
	applies_to: ServiceabilityRule["applies_to"];
	serviceable: boolean;
}
/** A `rates.lane_performance` row as pg answers it. */
export interface LaneDbRow {
	logistic_id: Num;
	from_pin: string;
	to_pin: string;
	shipments: Num;
	delivered: Num;
	rto: Num;
	/** days, summed over the delivered shipments */
	tat_days_sum: Num;
}

/**
 * The answered performance of a lane's counters, or null under
 * {@link MIN_LANE_SHIPMENTS} shipments: delivered % and RTO % of all
 * shipments (one decimal), average turnaround days over the delivered ones
 * (one decimal; null when none was delivered).
 */
export function lanePerformanceOf(r: LaneDbRow): LanePerformance | null {
	const shipments = Number(r.shipments);
	if (!(shipments >= MIN_LANE_SHIPMENTS)) return null;
	const delivered = Number(r.delivered);
	return {
		delivered_pct: round1((delivered * 100) / shipments),
		rto_pct: round1((Number(r.rto) * 100) / shipments),
		avg_tat_days: delivered > 0 ? round1(Number(r.tat_days_sum) / delivered) : null,
		shipments,
	};
}

/** The public {@link CourierInfo} of a courier row (exactly the contract's keys). */
export function courierInfo(c: CourierRow): CourierInfo {
	return {
		logistic_id: c.logistic_id,
		logistic_name: c.logistic_name,
		adapter: c.adapter,
		code: c.code,
		forward: c.forward,
		reverse: c.reverse,
		cod: c.cod,
		default_priority: c.default_priority,
		active: c.active,
		pickup: c.pickup,
	};
}

/**
 * Reads the whole catalog from PostgreSQL (six small queries, plus the synced
 * courier pincodes of lib/rates/serviceability.ts). Throws when the
 * database is unreachable. Lane performance: delivered % and RTO % of all
 * shipments on the lane (one decimal), average turnaround in days over the
 * delivered ones (one decimal); lanes under 20 shipments are left out.
 */
export async function loadCatalog(db: Sequelize): Promise<CatalogSnapshot> {
	const [couriers, cards, cods, rtos, rules, perf, synced, syncedLimits] = await Promise.all([
		select<CourierDbRow>(
			db,
			`SELECT logistic_id, logistic_name, adapter, code, forward, reverse, cod, mode, volumetric_divisor,
			        max_weight_kg, default_priority, active, pickup_cutoff, pickup_weekdays
			   FROM rates.couriers ORDER BY default_priority, logistic_id`,
		),
		select<RateCardDbRow>(db, "SELECT * FROM rates.rate_cards"),
		select<CodDbRow>(db, "SELECT logistic_id, flat_paise, percent_bp FROM rates.cod_config"),
		select<RtoDbRow>(db, "SELECT logistic_id, percent_bp FROM rates.rto_rules"),
		select<ServiceabilityDbRow>(
			db,
			"SELECT logistic_id, pincode_prefix, applies_to, serviceable FROM rates.serviceability",
		),
		select<LaneDbRow>(
			db,
			"SELECT logistic_id, from_pin, to_pin, shipments, delivered, rto, tat_days_sum FROM rates.lane_performance WHERE shipments >= $1",
			[MIN_LANE_SHIPMENTS],
		),
		loadSyncedPincodes(db),
		loadSyncedLimits(db),
	]);
	const [transit, learned] = await Promise.all([
		select<{ logistic_id: Num; zone: string; direction: ShipmentDirection; min_days: Num; max_days: Num }>(
			db,
			"SELECT logistic_id, zone, direction, min_days, max_days FROM rates.transit_days",
		),
		select<{ logistic_id: Num; from_pin: string; to_pin: string; p80: Num }>(
			db,
			`SELECT logistic_id, from_pin, to_pin, percentile_cont(0.8) WITHIN GROUP (ORDER BY tat_days) AS p80
			 FROM rates.lane_outcomes WHERE outcome = 'delivered'
			 GROUP BY logistic_id, from_pin, to_pin HAVING count(*) >= $1`,
			[MIN_LANE_SHIPMENTS],
		),
	]);
	const snap: CatalogSnapshot = {
		couriers: [],
		byId: new Map(),
		cards: new Map(),
		cod: new Map(),
		rto: new Map(),
		rules: new Map(),
		performance: new Map(),
		transit: new Map(
			transit.map((r) => [
				cardKey(Number(r.logistic_id), String(r.zone).trim() as Zone, r.direction),
				{ min: Number(r.min_days), max: Number(r.max_days) },
			]),
		),
		learned: new Map(
			learned.map((r) => [laneKey(Number(r.logistic_id), r.from_pin, r.to_pin), Math.ceil(Number(r.p80))]),
		),
		synced,
		syncedLimits,
		loadedAt: new Date(),
	};
	for (const r of couriers) {
		const c: CourierRow = {
			logistic_id: Number(r.logistic_id),
			logistic_name: r.logistic_name,
			adapter: r.adapter,
			code: r.code,
			forward: r.forward,
			reverse: r.reverse,
			cod: r.cod,
			default_priority: Number(r.default_priority),
			active: r.active,
			mode: r.mode,
			volumetric_divisor: Number(r.volumetric_divisor),
			max_weight_g: r.max_weight_kg === null ? null : kgToGrams(Number(r.max_weight_kg)),
			pickup: {
				weekdays: (r.pickup_weekdays ?? DEFAULT_PICKUP.weekdays).map(Number),
				cutoff_minutes: minutesOf(r.pickup_cutoff ?? "") ?? DEFAULT_PICKUP.cutoff_minutes,
			},
		};
		snap.couriers.push(c);
		snap.byId.set(c.logistic_id, c);
	}
	for (const r of cards) {
		snap.cards.set(cardKey(Number(r.logistic_id), String(r.zone).trim() as Zone, r.direction), {
			first_slab_g: kgToGrams(Number(r.first_slab_kg)),
			first_slab_paise: Number(r.first_slab_paise),
			additional_slab_g: kgToGrams(Number(r.additional_slab_kg)),
			additional_slab_paise: Number(r.additional_slab_paise),
			min_chargeable_g: kgToGrams(Number(r.min_chargeable_kg)),
		});
	}
	for (const r of cods)
		snap.cod.set(Number(r.logistic_id), {
			flat_paise: Number(r.flat_paise),
			percent_bp: Number(r.percent_bp),
		});
	for (const r of rtos) snap.rto.set(Number(r.logistic_id), Number(r.percent_bp));
	for (const r of rules) {
		const id = Number(r.logistic_id);
		const list = snap.rules.get(id) ?? [];
		list.push({ prefix: r.pincode_prefix, applies_to: r.applies_to, serviceable: r.serviceable });
		snap.rules.set(id, list);
	}
	for (const r of perf) {
		const p = lanePerformanceOf(r);
		if (p) snap.performance.set(laneKey(Number(r.logistic_id), r.from_pin, r.to_pin), p);
	}
	return snap;
}
