/**
 * Small value helpers the connectors share (reading untyped JSON and form fields in the mappers, JSON
 * settings in settings.ts), and the one Indian-mobile normaliser of buyer messages: the connectors'
 * recipients and inbound senders, and the consignee's phone in lib/notifications/dispatch.ts `mobileOf`.
 */

/** A JSON object (not an array, not null). */
export type Obj = Record<string, unknown>;

/** Whether `v` is a JSON object (not an array, not null). */
export function isObj(v: unknown): v is Obj {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `v` as text: a string trimmed, a number in decimal, anything else empty. */
export function str(v: unknown): string {
	return typeof v === "string" ? v.trim() : typeof v === "number" ? String(v) : "";
}

/**
 * The JSON object of setting `name`'s value `raw`.
 * @throws Error `<name> is not valid JSON`, or `<name> must be a JSON object <shape>` (never the value)
 */
export function jsonObjectSetting(raw: string, name: string, shape: string): Obj {
	let parsed: unknown;
	try {
		parsed = JSON.parse(raw);
	} catch {
		throw new Error(`${name} is not valid JSON`);
	}
	if (!isObj(parsed)) throw new Error(`${name} must be a JSON object ${shape}`);
	return parsed;
}

/**
 * The buyer's mobile as 10 digits (`9876543210`), from 10 digits, `91` + 10, `+91 …` or `0` + 10 (any
 * separators dropped), or null when it is not an Indian mobile (10 digits starting 6–9) or absent.
 */
export function indianMobile(raw: string | null | undefined): string | null {
	let d = String(raw ?? "").replace(/\D/g, "");
	if (d.length === 12 && d.startsWith("91")) d = d.slice(2);
	else if (d.length === 11 && d.startsWith("0")) d = d.slice(1);
	return /^[6-9]\d{9}$/.test(d) ? d : null;
}
