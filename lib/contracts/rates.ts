/**
 * Contract of the `rates` service (spec §2.7, §4.2 serviceable; DOMAIN.md
 * zones and slabs): couriers, rate cards, COD/RTO rules, lane prices.
 */
import type { RouteParams } from "../platform/openapi/route";
import type { PaymentMode, ShipmentDirection } from "./common";
import type { RATES_ROUTES } from "./http/rates";

/** The rates route definitions (lib/contracts/http/rates.ts). */
type Routes = typeof RATES_ROUTES;

/** `rates.quote` input: a lane to price. */
export interface QuoteParams {
	from_pin: string;
	to_pin: string;
	/** kg, > 0 */
	physical_weight: number;
	/** kg, default 0 */
	volumetric_weight?: number;
	/** default prepaid */
	payment_mode?: PaymentMode;
	/** rupees, the amount collected on delivery (COD only) */
	cod_amount?: number;
	/** "reverse" prices the return leg; default forward */
	direction?: ShipmentDirection;
	/** price only this courier */
	logistic_id?: number;
}

/** Zones A–E (DOMAIN.md "Zones"). */
export type Zone = "A" | "B" | "C" | "D" | "E";

/** One element of `data` (§2.7). Money in rupees. */
export interface Quote {
	logistic_id: number;
	courier_name: string;
	total: number;
	cod_charge: number;
	freight_charge: number;
	shipping_charge_tax: number;
	zone: Zone;
	/** chargeable weight in kg (rounded up to the slab) */
	weight: number;
	rto_charge: number;
	/** null until the lane has enough history; avg_tat_days null when nothing was delivered yet */
	performance: { delivered_pct: number; rto_pct: number; avg_tat_days: number | null } | null;
	/**
	 * estimated delivery date (IST `YYYY-MM-DD`): the latest likely day if booked now (issue 28;
	 * docs/decisions/0106-working-days-and-edd.md); null when the courier has no transit data
	 */
	edd: string | null;
	/** calendar days from today (IST) to the earliest and the latest likely delivery day; null with `edd` */
	edd_range: { min_days: number; max_days: number } | null;
}

/** One element of `dropped_couriers` (§2.7). */
export interface DroppedCourier {
	logistic_id: number;
	logistic_name: string;
	reason: string;
	detail: string;
}

/** §2.7 answer of `GET /v1/shipping/serviceable` and of `rates.quote`. */
export interface QuoteResult {
	data: Quote[];
	dropped_couriers: DroppedCourier[];
}

/** 200 of `GET /v1/shipping/edd` (ours; issue 28): the earliest estimate among the couriers serving the lane. */
export interface EddAnswer {
	from_pin: string;
	to_pin: string;
	payment_mode: PaymentMode;
	serviceable: boolean;
	/** IST `YYYY-MM-DD`, or null when no courier serves the lane */
	edd: string | null;
	edd_range: { min_days: number; max_days: number } | null;
	logistic_id: number | null;
	courier_name: string | null;
	/** the pickup day assumed (IST) */
	pickup_date: string | null;
	/** when the answer can change next (the courier's next cut-off; ISO-8601 UTC) */
	valid_until: string;
}

/** A courier as the rates service knows it. */
export interface CourierInfo {
	logistic_id: number;
	logistic_name: string;
	/** adapter key in lib/couriers (e.g. "sandbox") */
	adapter: string;
	/** adapter-specific code (e.g. the simulator's courier code) */
	code: string;
	forward: boolean;
	reverse: boolean;
	cod: boolean;
	/** default AUTO position (1 = first) */
	default_priority: number;
	active: boolean;
	/**
	 * its pickup rules (lib/shared/calendar.ts `PickupRules`): the week days it collects on
	 * (0 = Sunday) and its daily cut-off, minutes after midnight IST (after it, today is not offered)
	 */
	pickup: { weekdays: readonly number[]; cutoff_minutes: number };
}

/** What one courier takes for a direction (`rates.coverage` `limits`). */
export interface CourierLimits {
	/** kg, null = no limit */
	max_weight_kg: number | null;
	mode: "air" | "surface";
	/** zones with a rate card for the direction */
	zones: Zone[];
}

/** `rates.recordLaneOutcome` input: one shipment's final outcome on its lane (§2.7 `performance`). */
export interface LaneOutcomeParams {
	/** booking attempt id: an outcome is counted once per attempt */
	attempt_id: number;
	logistic_id: number;
	/** six-digit pickup pincode */
	from_pin: string;
	/** six-digit delivery pincode */
	to_pin: string;
	/** delivered to the consignee, or returned to origin (rto_delivered) */
	outcome: "delivered" | "rto";
	/** turnaround in days (≥ 0, two decimals kept): pickup to delivery, or to the RTO delivery */
	tat_days: number;
}

/** One courier's last pincode serviceability sync (`rates.serviceabilityStatus`; issue 14). Times ISO-8601 UTC. */
export interface ServiceabilitySyncStatus {
	logistic_id: number;
	/** last successful sync, null when none succeeded yet */
	synced_at: string | null;
	/** pincodes stored by the last successful sync */
	rows: number;
	/** last attempt, successful or not */
	attempted_at: string;
	/** words of the last failed sync (kept after a later success: compare `last_error_at` with `synced_at`) */
	last_error: string | null;
	last_error_at: string | null;
}

/** What one courier's sync did (`rates.syncServiceability`). */
export interface ServiceabilitySyncOutcome {
	logistic_id: number;
	/** true: its rows were replaced; false: the previous rows stay and `error` says why */
	ok: boolean;
	/** pincodes stored (ok), else null */
	rows: number | null;
	error: string | null;
}

export interface RatesActions {
	/** GET /v1/shipping/serviceable (§4.2, §2.7): query strings → {@link QuoteResult}; 400, 422 `lane_not_priced`, 503 `rate_unavailable`. */
	"rates.serviceable": { params: RouteParams<Routes["rates.serviceable"]>; result: QuoteResult };
	/** Internal: prices a lane (never throws `lane_not_priced`: `data: []` with reasons); 400 on malformed input, 503 `rate_unavailable`. */
	"rates.quote": { params: QuoteParams; result: QuoteResult };
	/** GET /v1/shipping/edd (ours; issue 28): the earliest delivery estimate of a lane for a storefront. */
	"rates.edd": { params: RouteParams<Routes["rates.edd"]>; result: EddAnswer };
	/** Internal: active couriers by default priority; `direction` filters forward / reverse couriers, absent → all. */
	"rates.listCouriers": { params: { direction?: ShipmentDirection }; result: CourierInfo[] };
	/**
	 * Internal: how many directory pincodes each active courier serves for
	 * `direction` (keyed by logistic_id), and how many distinct pincodes at
	 * least one of them serves; `limits` (keyed by logistic_id) what each takes.
	 */
	"rates.coverage": {
		params: { direction: ShipmentDirection };
		result: {
			couriers: Record<string, number>;
			unique_pincodes: number;
			limits: Record<string, CourierLimits>;
		};
	};
	/** Internal: one courier (active or not), or null. */
	"rates.getCourier": { params: { logistic_id: number }; result: CourierInfo | null };
	/**
	 * Internal: counts a shipment's final outcome into its lane's performance, once per `attempt_id`
	 * (`recorded: false` for a repeat, nothing changed); the quote's `performance` reflects it at once on
	 * this instance. 400 `validation_failed` for an unknown courier; 503 `rate_unavailable`.
	 */
	"rates.recordLaneOutcome": { params: LaneOutcomeParams; result: { recorded: boolean } };
	/** Internal: re-reads the catalog on every instance (broadcasts `rates.changed`); 503 `rate_unavailable`. */
	/**
	 * Internal (issue 14): pulls the pincode serviceability of every courier whose adapter implements it (or only
	 * `logistic_id`) into `rates.courier_pincodes`, then reloads the catalog everywhere. A courier's failure is
	 * answered in its outcome (previous rows kept); 503 `rate_unavailable` when the directory or database fails.
	 */
	"rates.syncServiceability": {
		params: { logistic_id?: number };
		result: { couriers: ServiceabilitySyncOutcome[] };
	};
	/** Internal (issue 14): the last serviceability sync of every courier ever synced, by logistic_id; 503 `rate_unavailable`. */
	"rates.serviceabilityStatus": {
		params: Record<string, never>;
		result: { couriers: ServiceabilitySyncStatus[] };
	};
	"rates.reload": {
		params: Record<string, never>;
		result: { couriers: number; rate_cards: number; lanes: number };
	};
}

export interface RatesEvents {
	/** Broadcast after `rates.reload`: every other rates instance re-reads its catalog. */
	"rates.changed": Record<string, never>;
}
