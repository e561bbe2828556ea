/**
 * Contracts of the platform services: `gateway` (probes), `devauth` (the
 * development identity provider of the zero-setup start, docs/ARCHITECTURE.md
 * §3) and `simulator` (the sandbox couriers, docs/ARCHITECTURE.md §4).
 */
import type { JWK } from "jose";
import type { ShipmentStatus } from "../shared/shipment-status";
import type { HttpParams } from "./common";

/** §5.5 token answer of the development identity provider. */
export interface TokenResponse {
	access_token: string;
	refresh_token: string;
	/** seconds */
	expires_in: number;
	token_type: "bearer";
}

/**
 * Tracking events the simulator can emit on demand (docs/ARCHITECTURE.md §4):
 * every normalized shipment status (lib/shared/shipment-status.ts) but `booked`,
 * `manifested` and `cancelled`, which the simulator writes itself (on create
 * and cancel) or which are ours.
 */
export type SimulatorEvent = Exclude<ShipmentStatus, "booked" | "manifested" | "cancelled">;

/** A scan the simulator emitted. */
export interface EmittedScan {
	/** the sandbox courier's code, e.g. `sbx-express` */
	courier_code: string;
	awb_number: string;
	/** the event emitted (the scan's normalized status) */
	code: SimulatorEvent;
	/** ISO-8601 UTC */
	at: string;
}

/** The simulator's ops view (`simulator.state`, `GET /state` of its HTTP server). */
export interface SimulatorState {
	couriers: {
		/** courier code, e.g. `sbx-express` */
		code: string;
		name: string;
		cod: boolean;
		/** digits of its AWBs */
		awb_length: number;
		packages: number;
		cancelled: number;
		pickup_locations: number;
	}[];
}

/**
 * What the sandbox couriers hold for one client reference (our booking attempt
 * id): `simulator.references`, `GET /references` of its HTTP server. Tests
 * check the exactly-once invariant with it (one live AWB per order).
 */
export interface SimulatorReference {
	/** the client reference asked for */
	reference: string;
	/** packages booked under it at any sandbox courier, oldest first */
	packages: {
		courier_code: string;
		awb_number: string;
		/** ISO-8601 UTC, null while not cancelled */
		cancelled_at: string | null;
	}[];
	/** packages not cancelled */
	live: number;
	/** create calls received for it (any outcome: booked, duplicate, refused, 503) */
	creates: number;
}

/** Most AWB numbers `simulator.remittanceFile` takes in `awb_numbers`. */
export const MAX_REMITTANCE_AWBS = 10_000;

/**
 * Params of `simulator.remittanceFile`, all optional: the sandbox couriers'
 * COD remittance file is restricted to `courier_code` (e.g. `sbx-delhivery`)
 * and/or to `awb_numbers` (1–{@link MAX_REMITTANCE_AWBS}) when given;
 * `remittance_date` is a real calendar day `YYYY-MM-DD` (default: today in
 * IST, Asia/Kolkata).
 */
export interface RemittanceFileParams {
	courier_code?: string;
	awb_numbers?: string[];
	remittance_date?: string;
}

/**
 * A sandbox courier's COD remittance file (`simulator.remittanceFile`), as a
 * courier sends one to the aggregator: `csv` (csv-stringify, `\n` line ends)
 * with header `awb_number,amount,remittance_reference,remittance_date` and one
 * line per delivered, not-cancelled COD package, ordered by AWB: the AWB, the
 * COD amount in rupees with two decimals (`1499.00`), the reference
 * `SBX-REM-<YYYYMMDD>-<courier_code>` and the remittance date `YYYY-MM-DD`
 * (IST); `lines` the number of package lines (the header not counted).
 */
export interface RemittanceFile {
	csv: string;
	lines: number;
}

/** Most AWB numbers `simulator.weightFile` takes in `awb_numbers`. */
export const MAX_WEIGHT_FILE_AWBS = 10_000;

/** Heaviest weight `simulator.overweigh` records, kg. */
export const MAX_CHARGED_WEIGHT_KG = 1000;

/** Longest side `simulator.overweigh` records, cm. */
export const MAX_CHARGED_DIMENSION_CM = 500;

/**
 * Params of `simulator.overweigh`: the weight the sandbox courier "measured"
 * for package `waybill` (an AWB the simulator holds, any courier, cancelled
 * or not): `charged_weight_kg` in kg (at least 0.001, at most
 * {@link MAX_CHARGED_WEIGHT_KG}; stored to the gram, three decimals) and,
 * all three or none, its measured dimensions `length_cm`, `width_cm`,
 * `height_cm` in cm (each at least 0.01, at most
 * {@link MAX_CHARGED_DIMENSION_CM}; stored with two decimals).
 */
export interface OverweighParams {
	waybill: string;
	charged_weight_kg: number;
	length_cm?: number;
	width_cm?: number;
	height_cm?: number;
}

/**
 * What `simulator.overweigh` recorded for a package, as stored: the charged
 * weight in kg (three decimals) and the measured dimensions in cm (two
 * decimals), each null when none were given.
 */
export interface ChargedWeight {
	waybill: string;
	/** kg */
	charged_weight_kg: number;
	/** cm, null when not measured */
	length_cm: number | null;
	/** cm, null when not measured */
	width_cm: number | null;
	/** cm, null when not measured */
	height_cm: number | null;
}

/**
 * Params of `simulator.weightFile`, all optional: the sandbox couriers'
 * weight file is restricted to `courier_code` (e.g. `sbx-delhivery`) and/or
 * to `awb_numbers` (1–{@link MAX_WEIGHT_FILE_AWBS}) when given; `weighed_on`
 * is a real calendar day `YYYY-MM-DD` (default: today in IST, Asia/Kolkata).
 */
export interface WeightFileParams {
	courier_code?: string;
	awb_numbers?: string[];
	weighed_on?: string;
}

/**
 * A sandbox courier's weight (billing) file (`simulator.weightFile`), as a
 * courier reports the weight it charged: `csv` (csv-stringify, `\n` line ends)
 * with header `awb_number,charged_weight_kg,length_cm,width_cm,height_cm,weighed_on`
 * and one line per not-cancelled package, ordered by AWB: the AWB, the
 * charged weight in kg with three decimals (`1.250`; the over-weighed one when
 * recorded, else the declared one), the dimensions in cm with at most two
 * decimals (`30`, `25.5`; measured, else declared, else empty cells) and the
 * day `YYYY-MM-DD` (IST); `lines` the number of package lines (the header not
 * counted). The same shape as {@link RemittanceFile}.
 */
export type WeightFile = RemittanceFile;

export interface PlatformActions {
	/** GET /health: liveness of this gateway process. */
	"gateway.health": { params: Record<string, never>; result: { status: "ok" } };
	/** GET /ready: every service behind an alias has an endpoint; else 503 `not_ready`. */
	"gateway.ready": {
		params: Record<string, never>;
		result: { status: "ready"; services: Record<string, boolean> };
	};
	/** POST /auth/v1/token?grant_type=password (§5.5, zero-setup only). */
	"devauth.token": { params: HttpParams; result: TokenResponse };
	/** GET /auth/v1/.well-known/jwks.json (zero-setup only). */
	"devauth.jwks": { params: Record<string, never>; result: { keys: JWK[] } };
	/**
	 * Sandbox: the simulated courier emits a tracking scan for a booked AWB (and pushes it, signed, to
	 * `SANDBOX_SCAN_PUSH_URL` when set); 404 `not_found` for an unknown AWB.
	 */
	"simulator.emitScan": {
		params: { awb_number: string; event: SimulatorEvent; reason?: string };
		result: EmittedScan;
	};
	/** Ops view of the simulator: packages, cancellations and pickup locations per courier code. */
	"simulator.state": { params: Record<string, never>; result: SimulatorState };
	/** Per client reference (at most 500): the packages the sandbox couriers hold and the creates received. */
	"simulator.references": {
		params: { references: string[] };
		result: { references: SimulatorReference[] };
	};
	/**
	 * Sandbox: the couriers' COD remittance file (CSV) of their delivered, not-cancelled COD packages, optionally
	 * of one courier and/or some AWBs, dated `remittance_date` (default today, IST); billing's reconciliation reads it.
	 */
	"simulator.remittanceFile": { params: RemittanceFileParams; result: RemittanceFile };
	/**
	 * Sandbox: the courier "measures" package `waybill` heavier (and/or bigger) than declared; upsert, answers what is
	 * recorded; 404 `not_found` for an AWB the simulator does not hold, 422 when only some dimensions are given.
	 */
	"simulator.overweigh": { params: OverweighParams; result: ChargedWeight };
	/**
	 * Sandbox: the couriers' weight (billing) file (CSV) of their not-cancelled packages, optionally of one courier
	 * and/or some AWBs, dated `weighed_on` (default today, IST): the charged weight (over-weighed, else declared) and
	 * dimensions per AWB; billing's weight reconciliation reads it.
	 */
	"simulator.weightFile": { params: WeightFileParams; result: WeightFile };
}

export type PlatformEvents = Record<never, never>;
