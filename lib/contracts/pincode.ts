/**
 * Contract of the `pincode` service (spec §4.7; docs/ARCHITECTURE.md §1): the
 * India Post directory with zone facts, held in memory.
 */
import type { RouteParams } from "../platform/openapi/route";
import type { PINCODE_ROUTES } from "./http/pincode";

/** The pincode route definitions (lib/contracts/http/pincode.ts). */
type Routes = typeof PINCODE_ROUTES;

/** Pincode directory answer (§4.7 plus zone facts). */
export interface PincodeInfo {
	found: boolean;
	pincode: string;
	/** District name of the chosen office (the city field of §4.7). */
	city: string;
	state: string;
	district?: string;
	/** Metro area name when the pincode is in a metro (zone C), else null. */
	metro?: string | null;
	/** True for north-east / J&K / Ladakh / islands / other special regions (zone E). */
	special?: boolean;
}

/** §4.7 answer: exactly these four keys. */
export type PincodeLookup = Pick<PincodeInfo, "found" | "pincode" | "city" | "state">;

export interface PincodeActions {
	/** GET /v1/pincode/:pincode (§4.7): `{pincode}` (path string) → {@link PincodeLookup}; 400 `pincode must be 6 digits`, 502 `lookup_failed`. */
	"pincode.lookup": { params: RouteParams<Routes["pincode.lookup"]>; result: PincodeLookup };
	/** Internal: one pincode (whitespace stripped; malformed or unknown → `found:false`); 502 `lookup_failed`. */
	"pincode.info": { params: { pincode: string }; result: PincodeInfo };
	/** Internal: at most 1000 pincodes → info keyed by each pincode exactly as given; 502 `lookup_failed`. */
	"pincode.lookupMany": { params: { pincodes: string[] }; result: Record<string, PincodeInfo> };
	/** Internal: every pincode of the directory (six-digit strings, ascending); 502 `lookup_failed`. */
	"pincode.all": { params: Record<string, never>; result: string[] };
	/** Internal: re-reads the directory on every instance (broadcasts `pincode.changed`) → `{pincodes}` count. */
	"pincode.reload": { params: Record<string, never>; result: { pincodes: number } };
}

export interface PincodeEvents {
	/** Broadcast after `pincode.reload`: the directory or its zone facts changed; drop cached pincode facts. */
	"pincode.changed": Record<string, never>;
}
