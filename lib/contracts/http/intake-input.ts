/**
 * The input rules of the intake routes (issue 26; docs/decisions/0093-route-definitions.md),
 * part of the contract: the fastest-validator schemas of the order create
 * bodies (spec §2.1 forward, §2.2 reverse), which lib/intake/validation.ts
 * compiles (through `INTAKE_ROUTES`, lib/contracts/http/intake.ts) and the
 * document converts, and the bounds and closed lists of the hand-written
 * parsers of the orders list, the unshipped queue and the buyer-detail edit
 * (lib/intake/list.ts, lib/intake/unshipped.ts), which those parsers use and
 * the document states.
 *
 * The create rules are custom leaves (each parses and normalises its field,
 * pushing `{type, message}` on failure); every rule and every message is
 * described in lib/intake/validation.ts. Units: weights kg, dimensions cm,
 * money rupees (≤ 2 decimals).
 */
import type { ValidationError, ValidationSchema } from "fastest-validator";
import {
	CONTROL_CHARS,
	codeString,
	INDIAN_PINCODE,
	normaliseMobile,
	parseDecimal,
	parsePositiveInt,
} from "../../shared/fields";
import type { ReceiverFields, UnshippedErrorType } from "../intake";

// ---------------------------------------------------------------------------
// Order create bodies (spec §2.1, §2.2; compiled by lib/intake/validation.ts)
// ---------------------------------------------------------------------------

/** Upper bound of a B2C parcel's dead weight (kg). */
export const MAX_WEIGHT_KG = 50;
/** Upper bound of any one dimension (cm). */
export const MAX_DIMENSION_CM = 300;
/** Upper bound of declared value and COD amount (rupees). */
export const MAX_AMOUNT_RUPEES = 1_000_000;
/** Length bound of `customer_order_no` as sent (the stored return reference adds `-R`). */
export const MAX_ORDER_NO_LENGTH = 50;

type Errs = Array<Partial<ValidationError> & { type: string; message: string }>;
type Checker = (value: unknown, errors: Errs) => unknown;

/** The message of a required field or block that is absent. */
const REQUIRED = { required: "is required" };

/** A custom leaf rule: `check` parses and normalises, pushing `{type, message}` on failure. */
function rule(check: Checker, optional = false): Record<string, unknown> {
	return { type: "custom", optional, check, messages: REQUIRED };
}

/** Records `message` as the field's failure; returns `value` (the rule's result is then ignored). */
function fail(errors: Errs, message: string, value: unknown = undefined): unknown {
	errors.push({ type: "invalid", message });
	return value;
}

const CONTROL = CONTROL_CHARS;

/**
 * Free text: trimmed, `min`–`max` characters, no control characters.
 * Optional text treats "" (after trim) as absent (null).
 */
function text(min: number, max: number, optional = false): Record<string, unknown> {
	return rule((value, errors) => {
		if (typeof value !== "string") return fail(errors, "must be a string", value);
		const s = value.trim();
		if (optional && s === "") return null;
		if (s.length < min || s.length > max)
			return fail(
				errors,
				optional && min <= 1
					? `must be at most ${max} characters`
					: `must be ${Math.max(min, 1)} to ${max} characters`,
				s,
			);
		if (CONTROL.test(s)) return fail(errors, "must not contain control characters", s);
		return s;
	}, optional);
}

const ORDER_NO = /^[A-Za-z0-9_\-/#.]+$/;

/** `customer_order_no`: 1–50 of [A-Za-z0-9_-/#.]; a JSON integer (≥ 0) becomes its string. */
const orderNo = rule((value, errors) => {
	const s = typeof value === "number" && value < 0 ? undefined : codeString(value);
	if (s === undefined) return fail(errors, "must be a string", value);
	if (s.length < 1 || s.length > MAX_ORDER_NO_LENGTH)
		return fail(errors, `must be 1 to ${MAX_ORDER_NO_LENGTH} characters`, s);
	if (!ORDER_NO.test(s)) return fail(errors, "may contain only letters, digits and _ - / # .", s);
	return s;
});

/** Pincode: 6 digits, first 1–9; JSON integers accepted; returns the string. */
function pincode(optional = false): Record<string, unknown> {
	return rule((value, errors) => {
		const s = codeString(value);
		if (s === undefined) return fail(errors, "must be 6 digits", value);
		if (optional && s === "") return null;
		if (!INDIAN_PINCODE.test(s)) return fail(errors, "must be 6 digits (first digit 1-9)", s);
		return s;
	}, optional);
}

/** Indian mobile: separators ignored, +91/91/0 prefix accepted; returns 10 digits. */
function mobile(optional = false): Record<string, unknown> {
	return rule((value, errors) => {
		const s = codeString(value);
		if (s === undefined) return fail(errors, "must be a 10-digit Indian mobile number", value);
		if (optional && s === "") return null;
		return normaliseMobile(s) ?? fail(errors, "must be a 10-digit Indian mobile number starting with 6-9", s);
	}, optional);
}

const EMAIL = /^[^\s@<>(),;:"\\]+@[^\s@<>(),;:"\\]+\.[^\s@<>(),;:"\\]+$/;

/**
 * The buyer's e-mail (optional; ours, issue 29): trimmed, lower-cased, at most 191 characters, one
 * `@` and a dot in the domain, no spaces, quotes or brackets; "" counts as absent.
 */
function email(): Record<string, unknown> {
	return rule((value, errors) => {
		if (typeof value !== "string") return fail(errors, "must be a string", value);
		const s = value.trim().toLowerCase();
		if (s === "") return null;
		if (s.length > 191 || !EMAIL.test(s)) return fail(errors, "must be an e-mail address", s);
		return s;
	}, true);
}

/** Number of decimals needed to write `n` (up to 6). */
function decimals(n: number): number {
	for (let d = 0; d <= 6; d++) {
		const scaled = n * 10 ** d;
		const r = Math.round(scaled);
		// close to a whole number AND that number scaled back is n: a tiny value (5e-324) rounds to 0, which is
		// not n, so it never passes as "0 decimals" (it was stored as 0 g and answered 500)
		if (
			Math.abs(scaled - r) < 1e-6 * Math.max(1, Math.abs(scaled) / 1e6) &&
			Math.abs(r / 10 ** d - n) <= Math.abs(n) * 1e-9
		)
			return d;
	}
	return 7;
}

interface DecimalOpts {
	/** exclusive lower bound */
	gt?: number;
	/** inclusive lower bound */
	min?: number;
	max: number;
	places: number;
	unit: string;
	optional?: boolean;
}

/** Bounded decimal (kg, cm, rupees) with at most `places` decimals. */
function decimal(o: DecimalOpts): Record<string, unknown> {
	return rule((value, errors) => {
		if (o.optional && typeof value === "string" && value.trim() === "") return null;
		const n = parseDecimal(value);
		if (n === null) return fail(errors, `must be a number (${o.unit})`, value);
		if (o.gt !== undefined && !(n > o.gt)) return fail(errors, `must be greater than ${o.gt} ${o.unit}`, n);
		if (o.min !== undefined && n < o.min) return fail(errors, `must be at least ${o.min} ${o.unit}`, n);
		if (n > o.max) return fail(errors, `must be at most ${o.max} ${o.unit}`, n);
		if (decimals(n) > o.places) return fail(errors, `must have at most ${o.places} decimal places`, n);
		return n;
	}, o.optional ?? false);
}

/** Positive integer id (JSON integer or digit string). */
function id(optional = false): Record<string, unknown> {
	return rule((value, errors) => {
		if (optional && typeof value === "string" && value.trim() === "") return null;
		return parsePositiveInt(value) ?? fail(errors, "must be a positive integer", value);
	}, optional);
}

/** `order_type`: 0 (prepaid) or 1 (COD). */
function orderType(optional = false): Record<string, unknown> {
	return rule((value, errors) => {
		if (value === 0 || value === "0") return 0;
		if (value === 1 || value === "1") return 1;
		return fail(errors, "must be 0 (prepaid) or 1 (COD)", value);
	}, optional);
}

const YMD = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;
const EARLIEST_ORDER_DATE = Date.UTC(2000, 0, 1);

/** True when y-m-d is a real calendar day. */
function realDay(y: number, m: number, d: number): boolean {
	const t = new Date(Date.UTC(y, m - 1, d));
	return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

/** `order_date`: YYYY-MM-DD (IST day) or ISO-8601 (no offset = IST). Returns a Date. */
const orderDate = rule((value, errors) => {
	const msg = "must be a date (YYYY-MM-DD) or an ISO-8601 timestamp";
	if (typeof value !== "string") return fail(errors, msg, value);
	const s = value.trim();
	if (s === "") return null;
	let t: number;
	const ymd = YMD.exec(s);
	const iso = ymd ? null : ISO.exec(s);
	if (ymd) {
		if (!realDay(+ymd[1], +ymd[2], +ymd[3])) return fail(errors, msg, s);
		t = Date.parse(`${s}T00:00:00+05:30`);
	} else if (iso) {
		if (!realDay(+iso[1], +iso[2], +iso[3]) || +iso[4] > 23 || +iso[5] > 59 || +(iso[6] ?? 0) > 59)
			return fail(errors, msg, s);
		t = Date.parse(iso[7] ? s.replace(" ", "T") : `${s.replace(" ", "T")}+05:30`);
	} else return fail(errors, msg, s);
	if (!Number.isFinite(t)) return fail(errors, msg, s);
	if (t < EARLIEST_ORDER_DATE) return fail(errors, "must not be before 2000-01-01", s);
	if (t > Date.now() + 86_400_000) return fail(errors, "must not be in the future", s);
	return new Date(t);
}, true);

const AWB = /^[A-Za-z0-9-]{1,50}$/;

const oldAwb = rule((value, errors) => {
	const s = codeString(value);
	if (s === undefined) return fail(errors, "must be a string", value);
	if (s.length < 1 || s.length > 50) return fail(errors, "must be 1 to 50 characters", s);
	if (!AWB.test(s)) return fail(errors, "may contain only letters, digits and -", s);
	return s;
});

const forwardSource = rule((value, errors) => {
	if (value === "tekipost" || value === "external") return value;
	return fail(errors, "must be tekipost or external", value);
});

/** An object block: unknown keys removed; `objectMessage` when the value is not an object. */
function obj(
	props: ValidationSchema,
	optional = false,
	objectMessage = "must be an object",
): Record<string, unknown> {
	return {
		type: "object",
		strict: "remove",
		optional,
		props,
		messages: { ...REQUIRED, object: objectMessage },
	};
}

/** The rules of the §2.1 `receiver` block (also the edit's fields, lib/intake/unshipped.ts `parseReceiverPatch`). */
export const receiverProps: ValidationSchema = {
	name: text(1, 100),
	address_1: text(3, 255),
	address_2: text(0, 255, true),
	landmark: text(0, 255, true),
	city: text(0, 100, true),
	state: text(0, 100, true),
	pincode: pincode(),
	mobile_no: mobile(),
	email: email(),
};

/** The rules of a return's `order.return_address` (§2.2): the receiver's, every field optional. */
export const returnAddressProps: ValidationSchema = {
	name: text(0, 100, true),
	address_1: text(0, 255, true),
	address_2: text(0, 255, true),
	landmark: text(0, 255, true),
	city: text(0, 100, true),
	state: text(0, 100, true),
	pincode: pincode(true),
	mobile_no: mobile(true),
};

/** The rules of the §2.1 `product` block: kg, rupees, cm. */
export const productProps: ValidationSchema = {
	product_name: text(1, 255),
	product_sku: text(0, 100, true),
	physical_weight: decimal({ gt: 0, max: MAX_WEIGHT_KG, places: 3, unit: "kg" }),
	declared_order_total: decimal({ min: 0, max: MAX_AMOUNT_RUPEES, places: 2, unit: "rupees" }),
	cod_amount: decimal({ min: 0, max: MAX_AMOUNT_RUPEES, places: 2, unit: "rupees", optional: true }),
	length: decimal({ gt: 0, max: MAX_DIMENSION_CM, places: 2, unit: "cm", optional: true }),
	width: decimal({ gt: 0, max: MAX_DIMENSION_CM, places: 2, unit: "cm", optional: true }),
	height: decimal({ gt: 0, max: MAX_DIMENSION_CM, places: 2, unit: "cm", optional: true }),
};

const productRule = obj(
	productProps,
	false,
	"must be an object (one product per order; multi-SKU lists are not supported)",
);

/** The fields forward and reverse bodies share (§2.1, §2.2). */
const commonFields: ValidationSchema = {
	$$strict: "remove",
	customer_order_no: orderNo,
	channel: text(0, 50, true),
	receiver: obj(receiverProps),
	product: productRule,
};

/**
 * The body of `POST /v1/intake/order` (spec §2.1): `customer_order_no`,
 * `channel?`, `receiver`, `product`, `order` (unknown keys removed).
 */
export const forwardSchema: ValidationSchema = {
	...commonFields,
	order: obj({
		pickup_address_id: id(),
		rto_address_id: id(true),
		order_type: orderType(),
		order_date: orderDate,
		order_from_source: text(0, 50, true),
	}),
};

/**
 * The body of `POST /v1/intake/reverse` (spec §2.2): the forward blocks,
 * `order` also carrying `forward_source`, `old_fwd_awb_no`,
 * `reverse_pickup_address_id?` and `return_address?`.
 */
export const reverseSchema: ValidationSchema = {
	...commonFields,
	order: obj({
		pickup_address_id: id(true),
		reverse_pickup_address_id: id(true),
		rto_address_id: id(true),
		order_type: orderType(true),
		order_date: orderDate,
		order_from_source: text(0, 50, true),
		forward_source: forwardSource,
		old_fwd_awb_no: oldAwb,
		return_address: obj(returnAddressProps, true),
	}),
};

// ---------------------------------------------------------------------------
// Orders list (GET /v1/orders; parsed by lib/intake/list.ts)
// ---------------------------------------------------------------------------

/** Page size of `GET /v1/orders` when `limit` is absent (§8 "not shown": decided here). */
export const ORDERS_DEFAULT_LIMIT = 50;
/** Largest `limit` (§4.8, §8). */
export const ORDERS_MAX_LIMIT = 1000;
/** Longest `city` filter (§8). */
export const CITY_MAX_LENGTH = 100;
/** Longest `awb_number` filter (AWBs are alphanumeric, hyphens allowed). */
export const AWB_MAX_LENGTH = 64;

// ---------------------------------------------------------------------------
// Unshipped queue (GET /v1/orders/unshipped*, PATCH /v1/orders/unshipped/:id;
// parsed by lib/intake/unshipped.ts)
// ---------------------------------------------------------------------------

/** Page size of `GET /v1/orders/unshipped` when `limit` is absent (the orders list's default). */
export const UNSHIPPED_DEFAULT_LIMIT = 50;
/** Largest `limit` (§4.8, §8). */
export const UNSHIPPED_MAX_LIMIT = 1000;
/** Longest `customer_order_no` filter of the unshipped list (the stored reference is at most 50 + `-R`). */
export const UNSHIPPED_ORDER_NO_MAX = 100;
/** Days after creation during which an unbooked order's buyer details may be edited (§3 "editable window"). */
export const EDIT_WINDOW_DAYS = 30;

/** The `error_type`s of the unshipped queue as keys (every one, by its type), in the order they are answered. */
const ERROR_TYPE_KEYS: Readonly<Record<UnshippedErrorType, true>> = {
	pickup_address_missing: true,
	not_booked: true,
	in_queue: true,
	courier_refused: true,
	courier_unreachable: true,
	pickup_unavailable: true,
	order_changed: true,
	booking_error: true,
};

/**
 * Every `error_type` of the unshipped queue (a closed list, spec §4.3), in
 * the order `GET /v1/orders/unshipped/error-types` answers them (their words:
 * lib/intake/unshipped.ts `ERROR_TYPES`).
 */
export const ERROR_TYPE_NAMES = Object.keys(ERROR_TYPE_KEYS) as UnshippedErrorType[];

/** The writable fields of the buyer-detail edit: the §2.1 `receiver` names, in this order (the `changed` order). */
export const EDITABLE_FIELDS = [
	"name",
	"address_1",
	"address_2",
	"landmark",
	"city",
	"state",
	"pincode",
	"mobile_no",
] as const satisfies readonly (keyof ReceiverFields)[];
