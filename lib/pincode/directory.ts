/**
 * The in-memory pincode directory: every pincode of `pincode.pincodes` with its
 * zone facts, held in a Map after start so lookups never touch the database
 * (`GET /v1/shipping/serviceable` must reach ≥ 2,000 req/s).
 */
import type { Sequelize } from "sequelize";
import type { PincodeInfo } from "../contracts";
import { select } from "../platform/db";
import { shareAnswer } from "../platform/shared-answers";

/** Full directory entry (a found {@link PincodeInfo} plus provenance). */
export interface DirectoryEntry extends Required<PincodeInfo> {
	/** Special-region group (e.g. "North East") or null. */
	special_region: string | null;
	/** Other (district, state) pairs the pincode also spans. */
	alternatives: { district: string; state: string; offices: number }[];
}

/** Removes every whitespace character (spec §4.7: whitespace is stripped before the check). */
export function stripWhitespace(v: unknown): string {
	return v === undefined || v === null ? "" : String(v).replace(/\s+/g, "");
}

/** True for a six-digit pincode string (`^[0-9]{6}$`). */
export function isPincode(v: string): boolean {
	return /^[0-9]{6}$/.test(v);
}

/** The answer for a pincode that is not in the directory. */
function notFound(pincode: string): PincodeInfo {
	return { found: false, pincode, city: "", state: "", district: "", metro: null, special: false };
}

interface Row {
	pincode: string;
	district: string;
	state: string;
	alternatives: { district: string; state: string; offices: number }[] | string;
	metro: string | null;
	special_region: string | null;
}

/**
 * Loads the whole directory from PostgreSQL into a Map keyed by pincode.
 * `city` is the district of the chosen office (see lib/pincode/source.ts for
 * the choice rule); `metro` comes from `pincode.metro_districts`, `special`
 * from `pincode.special_states` (state names compared case-insensitively).
 * Throws when the database is unreachable.
 */
export async function loadDirectory(db: Sequelize): Promise<Map<string, DirectoryEntry>> {
	const rows = await select<Row>(
		db,
		`SELECT p.pincode, p.district, p.state, p.alternatives, m.metro, s.region AS special_region
		   FROM pincode.pincodes p
		   LEFT JOIN pincode.metro_districts m
		     ON lower(m.state) = lower(p.state) AND lower(m.district) = lower(p.district)
		   LEFT JOIN pincode.special_states s ON lower(s.state) = lower(p.state)`,
	);
	const map = new Map<string, DirectoryEntry>();
	for (const r of rows) {
		map.set(r.pincode, {
			found: true,
			pincode: r.pincode,
			city: r.district,
			state: r.state,
			district: r.district,
			metro: r.metro ?? null,
			special: r.special_region !== null,
			special_region: r.special_region ?? null,
			alternatives: typeof r.alternatives === "string" ? JSON.parse(r.alternatives) : (r.alternatives ?? []),
		});
	}
	return map;
}

/** What `GET /v1/pincode/{pincode}` answers (spec §4.7): exactly these four fields. */
export interface LookupAnswer {
	found: boolean;
	pincode: string;
	city: string;
	state: string;
}

/** The shared lookup answer of each directory entry, made on its first lookup (goes with the entry on a reload). */
const lookupAnswers = new WeakMap<DirectoryEntry, LookupAnswer>();

/**
 * The lookup answer of a stripped, six-digit pincode `pin` in `dir` (issue 32, docs/decisions/0138-pincode-answers.md):
 * for a pincode of the directory, one frozen answer per directory entry, shared by every request
 * (lib/platform/shared-answers.ts `shareAnswer`: its JSON is made once); for any other, `found: false` with empty
 * names, made each time.
 */
export function lookupAnswerOf(dir: ReadonlyMap<string, DirectoryEntry>, pin: string): LookupAnswer {
	const e = dir.get(pin);
	if (e === undefined) return { found: false, pincode: pin, city: "", state: "" };
	let answer = lookupAnswers.get(e);
	if (answer === undefined) {
		answer = shareAnswer({ found: true, pincode: e.pincode, city: e.city, state: e.state });
		lookupAnswers.set(e, answer);
	}
	return answer;
}

/** The internal {@link PincodeInfo} of a directory entry (no provenance fields). */
function toInfo(e: DirectoryEntry): PincodeInfo {
	return {
		found: true,
		pincode: e.pincode,
		city: e.city,
		state: e.state,
		district: e.district,
		metro: e.metro,
		special: e.special,
	};
}

/**
 * {@link PincodeInfo} of a raw value from `dir`: every whitespace character is
 * stripped first (the answer's `pincode` is the stripped value); a malformed or
 * unknown pincode answers `found:false` with empty names.
 */
export function infoOf(dir: ReadonlyMap<string, DirectoryEntry>, raw: unknown): PincodeInfo {
	const pin = stripWhitespace(raw);
	const e = isPincode(pin) ? dir.get(pin) : undefined;
	return e ? toInfo(e) : notFound(pin);
}
