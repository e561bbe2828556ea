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
}

export type PlatformEvents = Record<never, never>;
