/**
 * Body of `POST /v1/shipping/ndr` (spec §4.2, §7): parsing and validation only
 * (no I/O). The courier-side checks (the DEFER_DLV window, the courier's
 * answer) are in ./courier-action.ts.
 *
 * Rules (docs/decisions/0037-ndr-courier-actions.md):
 * - `order_id`, `logistic_id` (required): positive integers, JSON integers or
 *   digit strings (no whitespace, as on book/cancel).
 * - `ndr_act`: `RE-ATTEMPT` (default when absent or null), `DEFER_DLV` or
 *   `EDIT_DETAILS`, exactly so spelled; anything else → 400 `invalid_ndr_act`
 *   (checked first: it answers before any other field failure).
 * - `deferred_date`: required with `DEFER_DLV`, refused with the other acts;
 *   `YYYY-MM-DD`, a real calendar day (an India Standard Time day).
 * - `phone`, `address`: only with `EDIT_DETAILS`, which needs at least one.
 *   `phone`: the order-create rule (lib/shared/fields.ts `normaliseMobile`: an Indian
 *   mobile, spaces / hyphens / dots / brackets ignored, `+91`/`91`/`0` prefix
 *   accepted, stored as the bare 10 digits; a JSON integer accepted).
 *   `address`: an object; `address_1` 3–255, `address_2?` / `landmark?` ≤ 255,
 *   `city?` / `state?` ≤ 100 characters (trimmed, no control characters, an
 *   empty optional counts as absent), `pincode?` 6 digits, first 1–9 (a JSON
 *   integer accepted): the receiver rules of order create.
 * - Unknown keys are ignored.
 * Field failures answer 400 `validation_failed` with one `details` string per
 * failing field, `field: reason` (e.g. `deferred_date: is required with DEFER_DLV`).
 */
import { NDR_ACTS, type NdrAct, type NdrActInput, type NdrAddress } from "../contracts/ndr";
import { fail, validationFailed } from "../platform/errors";
import {
	codeString,
	INDIAN_PINCODE,
	isPlainObject,
	normaliseMobile,
	parsePositiveInt,
} from "../shared/fields";

/** The act a body without `ndr_act` asks for (§4.2). */
export const DEFAULT_NDR_ACT: NdrAct = "RE-ATTEMPT";

const YMD = /^(\d{4})-(\d{2})-(\d{2})$/;
const CONTROL = /\p{Cc}/u;

/** True when `s` is `YYYY-MM-DD` and a real calendar day (`2026-02-30`, `2026-2-3` are not). */
export function isCalendarDate(s: string): boolean {
	const m = YMD.exec(s);
	if (!m) return false;
	const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
	const t = new Date(Date.UTC(y, mo - 1, d));
	return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}

/** Whether `v` is one of {@link NDR_ACTS} (case-sensitive). */
export function isNdrAct(v: unknown): v is NdrAct {
	return typeof v === "string" && (NDR_ACTS as readonly string[]).includes(v);
}

/**
 * Free text of the address: trimmed, `min`–`max` characters, no control
 * characters; an empty optional → undefined. Pushes `field: reason` on failure.
 */
function text(
	v: unknown,
	field: string,
	details: string[],
	min: number,
	max: number,
	optional: boolean,
): string | undefined {
	if (v === undefined || (optional && v === null)) return undefined;
	if (typeof v !== "string") {
		details.push(`${field}: must be a string`);
		return undefined;
	}
	const s = v.trim();
	if (optional && s === "") return undefined;
	if (s.length < min || s.length > max) {
		details.push(
			`${field}: ${optional && min <= 1 ? `must be at most ${max} characters` : `must be ${min} to ${max} characters`}`,
		);
		return undefined;
	}
	if (CONTROL.test(s)) {
		details.push(`${field}: must not contain control characters`);
		return undefined;
	}
	return s;
}

/** The new address of EDIT_DETAILS (receiver rules of order create), or undefined with `details` filled. */
function parseAddress(v: unknown, details: string[]): NdrAddress | undefined {
	if (!isPlainObject(v)) {
		details.push("address: must be an object");
		return undefined;
	}
	const before = details.length;
	const address_1 = text(v.address_1, "address.address_1", details, 3, 255, false);
	if (address_1 === undefined && v.address_1 === undefined) details.push("address.address_1: is required");
	const address_2 = text(v.address_2, "address.address_2", details, 0, 255, true);
	const landmark = text(v.landmark, "address.landmark", details, 0, 255, true);
	const city = text(v.city, "address.city", details, 0, 100, true);
	const state = text(v.state, "address.state", details, 0, 100, true);
	let pincode: string | undefined;
	if (v.pincode !== undefined && v.pincode !== null) {
		const s = codeString(v.pincode);
		if (s === undefined || (s !== "" && !INDIAN_PINCODE.test(s)))
			details.push("address.pincode: must be 6 digits (first digit 1-9)");
		else if (s !== "") pincode = s;
	}
	if (details.length > before || address_1 === undefined) return undefined;
	return {
		address_1,
		...(address_2 ? { address_2 } : {}),
		...(landmark ? { landmark } : {}),
		...(city ? { city } : {}),
		...(state ? { state } : {}),
		...(pincode ? { pincode } : {}),
	};
}

/**
 * Validates the body of `POST /v1/shipping/ndr` (§4.2) and answers the
 * normalized input (see the module doc for every rule).
 * @throws ApiError 400 `invalid_ndr_act` ({@link INVALID_NDR_ACT_MESSAGE}) when
 *   `ndr_act` is given and not one of the three values; 400
 *   `validation_failed` with `details` (one `field: reason` per failing field)
 */
export function parseNdrActBody(body: unknown): NdrActInput {
	const b = isPlainObject(body) ? body : {};
	const raw = b.ndr_act;
	if (raw !== undefined && raw !== null && !isNdrAct(raw)) throw fail("invalid_ndr_act", NDR_ACTS);
	const ndr_act: NdrAct = raw ?? DEFAULT_NDR_ACT;
	const details: string[] = [];
	const order_id = parsePositiveInt(b.order_id, { trim: false });
	if (order_id === null) details.push("order_id: must be a positive integer");
	const logistic_id = parsePositiveInt(b.logistic_id, { trim: false });
	if (logistic_id === null) details.push("logistic_id: must be a positive integer");

	const given = (k: string) => b[k] !== undefined && b[k] !== null;
	let deferred_date: string | undefined;
	if (ndr_act === "DEFER_DLV") {
		if (!given("deferred_date")) details.push("deferred_date: is required with DEFER_DLV");
		else if (typeof b.deferred_date !== "string" || !isCalendarDate(b.deferred_date))
			details.push("deferred_date: must be a real calendar date (YYYY-MM-DD)");
		else deferred_date = b.deferred_date;
	} else if (given("deferred_date")) details.push("deferred_date: is only accepted with DEFER_DLV");

	let phone: string | undefined;
	let address: NdrAddress | undefined;
	if (ndr_act === "EDIT_DETAILS") {
		if (!given("phone") && !given("address"))
			details.push("phone: phone or address is required with EDIT_DETAILS");
		if (given("phone")) {
			const s = codeString(b.phone);
			const m = s === undefined ? null : normaliseMobile(s);
			if (m === null) details.push("phone: must be a 10-digit Indian mobile number starting with 6-9");
			else phone = m;
		}
		if (given("address")) address = parseAddress(b.address, details);
	} else {
		for (const k of ["phone", "address"])
			if (given(k)) details.push(`${k}: is only accepted with EDIT_DETAILS`);
	}
	if (details.length || order_id === null || logistic_id === null) throw validationFailed(details);
	return {
		order_id,
		logistic_id,
		ndr_act,
		...(deferred_date ? { deferred_date } : {}),
		...(phone ? { phone } : {}),
		...(address ? { address } : {}),
	};
}
