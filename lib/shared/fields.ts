/**
 * Field parsing shared by the request validators (intake orders, warehouses):
 * the lenient readings of JSON inputs that several endpoints accept (a boolean
 * spelled `1` / `"true"`, an id sent as a digit string, a pincode sent as a
 * JSON number) and the Indian formats (pincode, 10-digit phone).
 *
 * Only parsing lives here; each endpoint keeps its own messages and bounds.
 */

/**
 * Control characters refused in every free-text field (orders, returns,
 * warehouses, NDR addresses; issue 12): Unicode category Cc, i.e. C0
 * U+0000–U+001F (NUL, tab, CR and LF included: single-line fields reach
 * courier registrations and labels as they are), DEL U+007F and C1
 * U+0080–U+009F. Checked after trimming.
 */
export const CONTROL_CHARS = /\p{Cc}/u;

/** True when `s` contains a character of {@link CONTROL_CHARS}. */
export function hasControlChars(s: string): boolean {
	return CONTROL_CHARS.test(s);
}

/** What a validator sees instead of an object or array where a scalar is expected (flat: `String()` of it never recurses). */
export const NON_SCALAR: Readonly<Record<string, never>> = Object.freeze({});

/**
 * `v` when it is a scalar (string, number, boolean, null, undefined), else
 * {@link NON_SCALAR}. Used before a validator touches a value: fastest-validator
 * renders `String(actual)` into its messages and `convert` calls `String(v)`,
 * both of which recurse without bound on a deeply nested array (issue 12).
 */
export function scalarOrMarker(v: unknown): unknown {
	return v === null || (typeof v !== "object" && typeof v !== "function") ? v : NON_SCALAR;
}

/** True for a non-null, non-array object (a JSON object body or block). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * True for an object literal: an object whose prototype is `Object.prototype` or null (what `{…}` and JSON.parse
 * make). Unlike {@link isPlainObject}, false for a class instance, an Error, a Date, a Buffer.
 */
export function isObjectLiteral(v: unknown): v is Record<string, unknown> {
	if (typeof v !== "object" || v === null) return false;
	const proto = Object.getPrototypeOf(v);
	return proto === Object.prototype || proto === null;
}

/**
 * Reads a boolean the legacy way: true/false, 1/0, "true"/"false", "1"/"0"
 * (strings case-insensitive, trimmed). Returns undefined for anything else.
 */
export function parseBool(v: unknown): boolean | undefined {
	if (v === true || v === 1) return true;
	if (v === false || v === 0) return false;
	if (typeof v === "string") {
		const s = v.trim().toLowerCase();
		if (s === "true" || s === "1") return true;
		if (s === "false" || s === "0") return false;
	}
	return undefined;
}

const POSITIVE_INT = /^[1-9]\d{0,15}$/;

/**
 * A positive safe integer sent as a JSON integer or a digit string (surrounding
 * whitespace ignored, no sign, no leading zero, no exponent); null otherwise
 * (`0`, `-3`, `1.5`, `"1e3"`, `"007"`, beyond 2^53 − 1). Used for ids (path
 * `:id`, `pickup_address_id`, `order_id`, internal `sender_id`); `{trim:false}`
 * also refuses surrounding whitespace (booking and label ids are strict).
 */
export function parsePositiveInt(v: unknown, opts: { trim?: boolean } = {}): number | null {
	if (typeof v === "number") return Number.isSafeInteger(v) && v > 0 ? v : null;
	if (typeof v !== "string") return null;
	const s = opts.trim === false ? v : v.trim();
	if (!POSITIVE_INT.test(s)) return null;
	const n = Number(s);
	return Number.isSafeInteger(n) ? n : null;
}

/**
 * A code sent as a string or a JSON integer (pincode, phone, AWB): the trimmed
 * string, or the integer's decimal digits; undefined for any other type.
 */
export function codeString(v: unknown): string | undefined {
	if (typeof v === "number") return Number.isSafeInteger(v) ? String(v) : undefined;
	if (typeof v === "string") return v.trim();
	return undefined;
}

/** Pincode format of the contract (§2.9, §4.2, §4.7): exactly six digits. */
export const PINCODE_FORMAT = /^\d{6}$/;

/** A plausible Indian pincode: six digits, the first 1–9 (no postal zone 0). */
export const INDIAN_PINCODE = /^[1-9]\d{5}$/;

/** Phone format of the contract (§2.9 `contact_no`): exactly ten digits. */
export const PHONE_10_DIGITS = /^\d{10}$/;

const MOBILE = /^(?:\+?91|0)?([6-9]\d{9})$/;

/**
 * Normalises an Indian mobile number written by a person: spaces, hyphens,
 * dots and brackets are ignored and a `+91`, `91` or `0` prefix is accepted.
 * Returns the bare 10 digits (starting 6–9), or null when it is not one.
 */
export function normaliseMobile(s: string): string | null {
	const m = MOBILE.exec(s.replace(/[\s\-.()]/g, ""));
	return m ? m[1] : null;
}

const DECIMAL = /^\d{1,12}(?:\.\d+)?$/;

/** A JSON number or a plain decimal string (trimmed; no sign, no exponent); null when not a number. */
export function parseDecimal(value: unknown): number | null {
	if (typeof value === "number") return Number.isFinite(value) ? value : null;
	if (typeof value === "string") {
		const s = value.trim();
		return DECIMAL.test(s) ? Number(s) : null;
	}
	return null;
}
