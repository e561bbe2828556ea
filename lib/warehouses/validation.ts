/**
 * Warehouse input validation (spec §2.9, §7 `validation_failed`, §8 name length).
 *
 * The rules are the couriers' (§2.9: "a warehouse passing here is one a courier
 * will collect from"), with the messages clients see in `details`, one entry
 * per failing field, e.g. `contact_no: must be 10 digits`,
 * `return_pincode: must be 6 digits`.
 *
 * | field | rule |
 * |---|---|
 * | `warehouse_name` | required string, trimmed, 3–191 characters |
 * | `contact_person_name` | required string, trimmed, 3–100 characters (couriers refuse shorter names) |
 * | `contact_no` | required, `^\d{10}$` (a JSON number is accepted and read as its digits) |
 * | `contact_email` | optional (null / "" = none), valid e-mail, ≤ 191 |
 * | `address_line_1` | required string, trimmed, 10–255 characters (couriers refuse sparse addresses) |
 * | `address_line_2` | optional, ≤ 255 |
 * | `city`, `state` | required non-blank strings, ≤ 100 |
 * | `pincode` | required, `^\d{6}$` (JSON number accepted); must exist in the India Post directory (checked by the service) |
 * | `gstin` | optional, `^[0-9]{2}[A-Z]{5}[0-9]{4}[A-Z][1-9A-Z]Z[0-9A-Z]$` |
 * | `warehouse_type` | optional, `fulfillment_pickup` (default) / `pickup` / `fulfillment` |
 * | `is_return_same` | optional boolean (true/false, 1/0, "true"/"false", "1"/"0"); absent = false |
 * | `is_default` | optional boolean (same spellings) |
 * | `return_*` | when `is_return_same` is truthy, mirrored from the forward fields (any `return_*` sent is ignored); otherwise `return_warehouse_name`, `return_contact_person_name`, `return_contact_no`, `return_address_line_1`, `return_city`, `return_state`, `return_pincode` are required and validated like their forward twins (§2.9: every `return_*` field the forward leg requires); `return_contact_email`, `return_address_line_2` are optional, as their twins |
 *
 * Unknown keys (including `sender_id`) are ignored.
 *
 * Every text field (names, address lines, city, state, e-mail) refuses control
 * characters after trimming (lib/shared/fields.ts `CONTROL_CHARS`, the orders' rule):
 * `city: must not contain control characters`. An object or array where a
 * scalar is expected fails as `must be a string` / `must be a boolean` and is
 * never read further (issue 12: no `String()` of a nested value; nothing is
 * converted implicitly, a JSON number for `contact_no` / `pincode` is read as
 * its decimal digits here).
 */
import type { ValidationError, ValidationSchema } from "fastest-validator";
import type { WarehouseFields } from "../contracts";
import {
	FORWARD_OPTIONAL,
	FORWARD_REQUIRED,
	RETURN_OPTIONAL,
	RETURN_REQUIRED,
	ruleFor,
} from "../contracts/http/warehouses";
import { compile, describe } from "../platform/validate";
import { isPlainObject, PINCODE_FORMAT, parseBool, scalarOrMarker } from "../shared/fields";

/** Result of validating a create or patch body. */
export interface ParsedWarehouse {
	/** Failures, one per field (`field: message`); empty when valid. */
	details: string[];
	/** The complete resulting record (meaningful only when `details` is empty). */
	value: WarehouseFields;
	/** `is_default` as sent (undefined when absent). */
	is_default?: boolean;
	/** Well-formed pincodes the caller sent, to check against the India Post directory. */
	pincodes: { field: "pincode" | "return_pincode"; pincode: string }[];
	/** Keys of {@link WarehouseFields} the body named (patch bookkeeping). */
	sent: string[];
}

/** Forward address/contact fields and their return-leg twins (mirror map). */
const MIRROR: ReadonlyArray<[keyof WarehouseFields, keyof WarehouseFields]> = [
	["warehouse_name", "return_warehouse_name"],
	["contact_person_name", "return_contact_person_name"],
	["contact_no", "return_contact_no"],
	["contact_email", "return_contact_email"],
	["address_line_1", "return_address_line_1"],
	["address_line_2", "return_address_line_2"],
	["city", "return_city"],
	["state", "return_state"],
	["pincode", "return_pincode"],
];

const RETURN_FIELDS = [...RETURN_REQUIRED, ...RETURN_OPTIONAL] as const;
const FORWARD_FIELDS = [...FORWARD_REQUIRED, ...FORWARD_OPTIONAL, "warehouse_type"] as const;

/** Every key of {@link WarehouseFields} a body may carry, plus `is_default`. */
const INPUT_KEYS: readonly string[] = [...FORWARD_FIELDS, "is_return_same", ...RETURN_FIELDS, "is_default"];

/** Optional fields: null, "" or whitespace mean "none". */
const NULLABLE = new Set<string>([...FORWARD_OPTIONAL, ...RETURN_OPTIONAL]);

const baseOf = (field: string) => (field.startsWith("return_") ? field.slice("return_".length) : field);
const OPTIONAL_ALWAYS = new Set<string>([...NULLABLE, "warehouse_type"]);

/** Compiled checks by "field list + required/optional" key (compiled once, reused). */
const checks = new Map<string, ReturnType<typeof compile>>();

/** Checks `fields` of `obj` (mutating it: trims, converts); required ones may not be absent. */
function checkFields(obj: Record<string, unknown>, fields: readonly string[], required: boolean): string[] {
	if (!fields.length) return [];
	const key = `${required ? "R" : "O"}:${fields.join(",")}`;
	let check = checks.get(key);
	if (!check) {
		const schema: ValidationSchema = { $$strict: false };
		for (const f of fields) schema[f] = ruleFor(baseOf(f), !required || OPTIONAL_ALWAYS.has(f));
		check = compile(schema);
		checks.set(key, check);
	}
	const res = check(obj);
	if (res === true) return [];
	if (res instanceof Promise) throw new Error("async validation is not supported");
	return onePerField(res);
}

/** Keeps the first failure of each field, in report order. */
function onePerField(errs: ValidationError[]): string[] {
	const seen = new Set<string>();
	const out: string[] = [];
	for (const e of errs) {
		if (seen.has(String(e.field))) continue;
		seen.add(String(e.field));
		out.push(describe(e));
	}
	return out;
}

/** Code fields whose JSON number is read as its decimal digits (`9876543210` → `"9876543210"`). */
const CODE_FIELDS = new Set(["contact_no", "return_contact_no", "pincode", "return_pincode"]);

/**
 * Copies the known keys present in `body`; blank optional strings become
 * null; an object or array becomes the flat NON_SCALAR marker (refused by
 * every rule without being read); a number in a code field becomes its
 * decimal string (what fastest-validator's `convert` did, without its
 * `String()` of arrays).
 */
function pick(body: Record<string, unknown>): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const k of INPUT_KEYS) {
		if (!Object.hasOwn(body, k) || body[k] === undefined) continue;
		let v = scalarOrMarker(body[k]);
		if (NULLABLE.has(k) && (v === null || (typeof v === "string" && v.trim() === ""))) v = null;
		if (CODE_FIELDS.has(k) && typeof v === "number") v = String(v);
		out[k] = v;
	}
	return out;
}

function mirror(rec: Record<string, unknown>): void {
	for (const [fwd, ret] of MIRROR) rec[ret] = rec[fwd] ?? null;
}

const blank = (v: unknown) => v === undefined || v === null || (typeof v === "string" && v.trim() === "");

/**
 * Takes the optional boolean `key` out of `rec`: undefined when absent; null
 * (after adding `key: must be a boolean` to `details`) when unreadable.
 */
function takeBool(rec: Record<string, unknown>, key: string, details: string[]): boolean | null | undefined {
	const v = rec[key];
	delete rec[key];
	if (v === undefined) return undefined;
	const b = parseBool(v);
	if (b !== undefined) return b;
	details.push(`${key}: must be a boolean`);
	return null;
}

/**
 * Validates a `POST /v1/warehouses` body (spec §2.9). Never throws for bad
 * input: failures come back in `details`.
 */
export function parseCreate(body: unknown): ParsedWarehouse {
	const empty = {} as WarehouseFields;
	if (!isPlainObject(body))
		return { details: ["body: must be a JSON object"], value: empty, pincodes: [], sent: [] };
	const rec = pick(body);
	const sent = Object.keys(rec);
	const details = checkFields(rec, [...FORWARD_REQUIRED, ...FORWARD_OPTIONAL, "warehouse_type"], true);
	if (rec.warehouse_type == null) rec.warehouse_type = "fulfillment_pickup";
	for (const f of FORWARD_OPTIONAL) if (rec[f] === undefined) rec[f] = null;

	const returnSame = takeBool(rec, "is_return_same", details);
	const isReturnSame = returnSame === true;
	rec.is_return_same = isReturnSame;
	const isDefault = takeBool(rec, "is_default", details) ?? undefined;

	if (isReturnSame) mirror(rec);
	// an unreadable is_return_same: the return-leg rules depend on it, judge them once it is readable
	else if (returnSame !== null) {
		details.push(...checkFields(rec, [...RETURN_REQUIRED, ...RETURN_OPTIONAL], true));
		for (const f of RETURN_OPTIONAL) if (rec[f] === undefined) rec[f] = null;
	}
	return parsedOf(rec, details, isReturnSame, isDefault, sent);
}

/**
 * Validates a `PATCH /v1/warehouses/{id}` body against the stored record:
 * the fields sent are validated like on create; the result is the complete
 * record after the change. Cross-field rules: with `is_return_same` (sent or
 * stored) truthy the return leg is re-mirrored from the forward fields; with it
 * false the resulting return block must be complete (a switch from true to
 * false keeps the mirrored copy as the independent return address unless new
 * `return_*` values are sent). A body naming no updatable field fails with
 * `body: no updatable field`.
 */
export function parsePatch(body: unknown, stored: WarehouseFields): ParsedWarehouse {
	if (!isPlainObject(body))
		return { details: ["body: must be a JSON object"], value: stored, pincodes: [], sent: [] };
	const rec = pick(body);
	const sent = Object.keys(rec);
	if (!sent.length) return { details: ["body: no updatable field"], value: stored, pincodes: [], sent };
	const fwd = FORWARD_FIELDS.filter((f) => f in rec);
	const details = checkFields(rec, fwd, false);
	const requiredNull = fwd.filter((f) => !OPTIONAL_ALWAYS.has(f) && rec[f] === null);
	for (const f of requiredNull)
		if (!details.some((d) => d.startsWith(`${f}:`))) details.push(`${f}: is required`);

	const isReturnSame = takeBool(rec, "is_return_same", details) ?? stored.is_return_same;
	const isDefault = takeBool(rec, "is_default", details) ?? undefined;

	const merged: Record<string, unknown> = { ...stored };
	for (const f of fwd) merged[f] = rec[f];
	if (merged.warehouse_type == null) merged.warehouse_type = "fulfillment_pickup";
	merged.is_return_same = isReturnSame;
	if (isReturnSame) mirror(merged);
	else {
		const ret = RETURN_FIELDS.filter((f) => f in rec);
		const retDetails = checkFields(rec, ret, false);
		for (const f of ret) merged[f] = rec[f];
		for (const f of RETURN_REQUIRED) {
			if (retDetails.some((d) => d.startsWith(`${f}:`))) continue;
			if (blank(merged[f])) retDetails.push(`${f}: is required`);
		}
		details.push(...retDetails);
	}
	return parsedOf(merged, details, isReturnSame, isDefault, sent);
}

/** The parse result of the complete record `rec` (meaningful as a record only when `details` is empty). */
function parsedOf(
	rec: Record<string, unknown>,
	details: string[],
	isReturnSame: boolean,
	isDefault: boolean | undefined,
	sent: string[],
): ParsedWarehouse {
	return {
		details,
		// every WarehouseFields key was validated (or mirrored / defaulted) above when `details` is empty
		value: rec as unknown as WarehouseFields,
		is_default: isDefault,
		pincodes: pincodesOf(rec, details, isReturnSame, sent),
		sent,
	};
}

/** Pincodes the caller sent that are well formed (to check against the directory). */
function pincodesOf(
	rec: Record<string, unknown>,
	details: string[],
	isReturnSame: boolean,
	sent: string[],
): ParsedWarehouse["pincodes"] {
	const out: ParsedWarehouse["pincodes"] = [];
	const ok = (f: string) =>
		!details.some((d) => d.startsWith(`${f}:`)) &&
		typeof rec[f] === "string" &&
		PINCODE_FORMAT.test(rec[f] as string);
	if (sent.includes("pincode") && ok("pincode"))
		out.push({ field: "pincode", pincode: rec.pincode as string });
	if (!isReturnSame && sent.includes("return_pincode") && ok("return_pincode"))
		out.push({ field: "return_pincode", pincode: rec.return_pincode as string });
	return out;
}
