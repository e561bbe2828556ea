/**
 * Input rules of the order create endpoints (spec §2.1 forward, §2.2 reverse).
 *
 * The spec leaves types and bounds "not shown"; these are the rules of this
 * implementation (documented in the README and on `intake.createOrder`):
 *
 * Top level
 * - `customer_order_no` (required): 1–50 characters of `A-Z a-z 0-9 _ - / # .`,
 *   leading/trailing whitespace trimmed; a JSON integer is accepted and stored as
 *   its decimal string.
 * - `channel` (optional): string, at most 50 characters.
 * - Unknown top-level fields are ignored. Unknown fields inside `receiver`,
 *   `product` and `order` are ignored too.
 *
 * `receiver` (required object)
 * - `name` 1–100, `address_1` 3–255, `address_2?` ≤ 255, `landmark?` ≤ 255,
 *   `city?` ≤ 100, `state?` ≤ 100 characters (trimmed; no control characters;
 *   an empty optional string counts as absent).
 * - `pincode`: 6 digits, first digit 1–9 (`^[1-9]\d{5}$`); a JSON integer is
 *   accepted.
 * - `mobile_no`: Indian mobile number, 10 digits starting 6–9. Spaces, hyphens,
 *   dots and brackets are ignored and a `+91`, `91` or `0` prefix is accepted;
 *   the stored value is the bare 10 digits.
 *
 * `product` (required object; an array — multi-SKU list — is refused)
 * - `product_name` 1–255, `product_sku?` ≤ 100 characters.
 * - `physical_weight`: kg, > 0 and ≤ 50 (B2C), at most 3 decimals (grams).
 * - `declared_order_total`: rupees, ≥ 0 and ≤ 10,00,000, at most 2 decimals.
 * - `cod_amount`: rupees, at most 2 decimals; required and > 0 when
 *   `order_type` is 1 (COD) and not more than `declared_order_total`; absent, null
 *   or 0 when prepaid.
 * - `length?`, `width?`, `height?`: cm, > 0 and ≤ 300, at most 2 decimals.
 * - Numbers may be JSON numbers or plain decimal strings (`"1.25"`).
 *
 * `order` (required object)
 * - `pickup_address_id`: positive integer (or digit string), one of the caller's
 *   active warehouses (checked by the service: 400 `invalid_pickup_address`).
 * - `rto_address_id?`: same rules as `pickup_address_id`.
 * - `order_type`: 0 (prepaid) or 1 (COD) (`"0"`/`"1"` accepted).
 * - `order_date?`: `YYYY-MM-DD` (an India Standard Time calendar day) or an
 *   ISO-8601 timestamp (no offset means IST); from 2000-01-01 up to one day
 *   ahead of now. Defaults to the time of creation.
 * - `order_from_source?`: string, at most 50 characters.
 *
 * Reverse (§2.2) — same blocks; `receiver` is where the courier collects the
 * return (the buyer); `order` also carries:
 * - `forward_source` (required): `tekipost` or `external`.
 * - `old_fwd_awb_no` (required): 1–50 characters of `A-Z a-z 0-9 -`.
 * - `reverse_pickup_address_id?`: the caller's warehouse the return goes back
 *   to; when given it is the order's warehouse (overrides `pickup_address_id`).
 *   At least one of the two is required.
 * - `return_address?`: object with optional `name`, `address_1`, `address_2`,
 *   `landmark`, `city`, `state`, `pincode`, `mobile_no` (same rules as
 *   `receiver`).
 * - Reverse orders are prepaid: `order_type` absent or 0; `cod_amount` absent
 *   or 0.
 *
 * Failures answer 400 `validation_failed` with one `details` string per
 * failing field, `path: reason` (e.g. `receiver.pincode: must be 6 digits`).
 *
 * Hostile input (issue 12): the validator never sees the caller's object. It
 * runs on a copy of the KNOWN keys only ({@link pickOrderShape}: at most three
 * levels, the blocks above); an object or array where a scalar is expected is
 * replaced by a flat marker before any rule runs (it fails as "must be a
 * string" / "must be a number"…), so no rule, message or clone can recurse on
 * a deeply nested value, whoever the caller (the gateway caps nesting too,
 * but internal NATS callers bypass it). Text fields refuse every control
 * character (lib/shared/fields.ts `CONTROL_CHARS`).
 */
import type { ValidationError, ValidationSchema } from "fastest-validator";
import { type PaymentMode, paymentModeOf, type ReceiverFields, type ShipmentDirection } from "../contracts";
import { validationFailed } from "../platform/errors";
import { compile, describe } from "../platform/validate";
import {
	CONTROL_CHARS,
	codeString,
	INDIAN_PINCODE,
	isPlainObject,
	normaliseMobile,
	parseDecimal,
	parsePositiveInt,
	scalarOrMarker,
} from "../shared/fields";
import { toPaise } from "../shared/money";

/** Upper bound of a B2C parcel's dead weight (kg). */
export const MAX_WEIGHT_KG = 50;
/** Upper bound of any one dimension (cm). */
export const MAX_DIMENSION_CM = 300;
/** Upper bound of declared value and COD amount (rupees). */
export const MAX_AMOUNT_RUPEES = 1_000_000;
/** Length bound of `customer_order_no` as sent (the stored return reference adds `-R`). */
export const MAX_ORDER_NO_LENGTH = 50;

/** Buyer block, normalised (absent optional parts null; mobile as bare 10 digits): the contract's receiver block. */
export type ReceiverInput = ReceiverFields;

/** Product block, normalised: kg, paise, cm. */
export interface ProductInput {
	product_name: string;
	product_sku: string | null;
	/** kg */
	physical_weight: number;
	/** paise */
	declared_order_total_paise: number;
	/** paise (0 when prepaid) */
	cod_amount_paise: number;
	/** cm */
	length: number | null;
	width: number | null;
	height: number | null;
}

/** Reverse-only fields (§2.2), normalised. */
export interface ReverseInput {
	forward_source: "tekipost" | "external";
	old_fwd_awb_no: string;
	reverse_pickup_address_id: number | null;
	return_address: Record<string, string> | null;
}

/** A validated create request (forward or reverse). */
export interface OrderInput {
	/** as sent (without the `-R` of returns) */
	customer_order_no: string;
	direction: ShipmentDirection;
	channel: string | null;
	receiver: ReceiverInput;
	product: ProductInput;
	order: {
		/** the warehouse the order ships from (reverse: returns to); null only for internal callers */
		pickup_address_id: number | null;
		rto_address_id: number | null;
		/** the request's `order_type` (1 = COD); returns are always prepaid */
		payment_mode: PaymentMode;
		/** null: time of creation */
		order_date: Date | null;
		order_from_source: string | null;
	};
	reverse: ReverseInput | null;
	/** every warehouse id the body names, with the field that named it (all must be the caller's) */
	warehouse_refs: Array<{ field: string; id: number }>;
}

type Errs = Array<Partial<ValidationError> & { type: string; message: string }>;
type Checker = (value: unknown, errors: Errs) => unknown;

/** The message of a required field or block that is absent. */
const REQUIRED = { required: "is required" };

/** A custom leaf rule: `check` parses and normalises, pushing `{type, message}` on failure. */
function rule(check: Checker, optional = false): Record<string, unknown> {
	return { type: "custom", optional, check, messages: REQUIRED };
}

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

const receiverProps: ValidationSchema = {
	name: text(1, 100),
	address_1: text(3, 255),
	address_2: text(0, 255, true),
	landmark: text(0, 255, true),
	city: text(0, 100, true),
	state: text(0, 100, true),
	pincode: pincode(),
	mobile_no: mobile(),
};

const returnAddressProps: ValidationSchema = {
	name: text(0, 100, true),
	address_1: text(0, 255, true),
	address_2: text(0, 255, true),
	landmark: text(0, 255, true),
	city: text(0, 100, true),
	state: text(0, 100, true),
	pincode: pincode(true),
	mobile_no: mobile(true),
};

const productProps: ValidationSchema = {
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

/** A create body after the schema ran: each field that passed holds its normalised value (kg, rupees, cm). */
interface CheckedBody {
	customer_order_no: string;
	channel?: string | null;
	/** the receiver block as the schema leaves it: its optional parts may be absent */
	receiver: Pick<ReceiverFields, "name" | "address_1" | "pincode" | "mobile_no"> & Partial<ReceiverFields>;
	product: {
		product_name: string;
		product_sku?: string | null;
		physical_weight: number;
		declared_order_total: number;
		cod_amount?: number | null;
		length?: number | null;
		width?: number | null;
		height?: number | null;
	};
	order: {
		pickup_address_id?: number | null;
		reverse_pickup_address_id?: number | null;
		rto_address_id?: number | null;
		/** the spec's number (1 = COD); absent on returns */
		order_type?: 0 | 1;
		order_date?: Date | null;
		order_from_source?: string | null;
		forward_source?: "tekipost" | "external";
		old_fwd_awb_no?: string;
		return_address?: Record<string, unknown> | null;
	};
}

const checkForward = compile(forwardSchema);
const checkReverse = compile(reverseSchema);

/** Sub-blocks of each block (the only non-scalar values the rules read): top level → receiver / product / order → return_address. */
const SUB_BLOCKS: Record<string, readonly string[]> = {
	"": ["receiver", "product", "order"],
	order: ["return_address"],
};

/** Leaf keys of each block (forward ∪ reverse schemas): anything else is ignored by the rules. */
const LEAVES: Record<string, readonly string[]> = {
	"": ["customer_order_no", "channel"],
	receiver: Object.keys(receiverProps),
	product: Object.keys(productProps),
	order: [
		"pickup_address_id",
		"reverse_pickup_address_id",
		"rto_address_id",
		"order_type",
		"order_date",
		"order_from_source",
		"forward_source",
		"old_fwd_awb_no",
	],
	return_address: Object.keys(returnAddressProps),
};

/**
 * Copies the keys of `src` listed for `block`: scalars as they are, a
 * non-scalar leaf as the flat marker of {@link scalarOrMarker}; sub-blocks
 * one level down (an array in a block's place becomes `[]`, so the block's
 * rule refuses it without reading it). Recursion is bounded by SUB_BLOCKS.
 */
function copyBlock(src: Record<string, unknown>, block: string): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const k of LEAVES[block]) if (Object.hasOwn(src, k)) out[k] = scalarOrMarker(src[k]);
	for (const k of SUB_BLOCKS[block] ?? []) {
		if (!Object.hasOwn(src, k)) continue;
		const v = src[k];
		out[k] = isPlainObject(v) ? copyBlock(v, k) : Array.isArray(v) ? [] : scalarOrMarker(v);
	}
	return out;
}

/**
 * The part of a create body the rules read, as a fresh object bounded to the
 * contract's shape (top level → receiver / product / order → return_address):
 * replaces `structuredClone`, which recursed (RangeError, 500) on a body
 * nested 10,000 levels deep in an ignored key. Never recurses deeper than
 * three levels and never reads an unknown key, whatever `body` holds.
 */
export function pickOrderShape(body: Record<string, unknown>): Record<string, unknown> {
	return copyBlock(body, "");
}

/**
 * Validates and normalises a create body (spec §2.1 forward, §2.2 reverse).
 * Does not look at `sender_id` or B2B markers (see {@link assertNotB2B}); does
 * not check that warehouse ids are the caller's (the service does).
 * The validator normalises in place, so it runs on {@link pickOrderShape}'s
 * bounded copy of the known keys (never on `body` itself, never on a deep
 * value).
 * @throws ApiError 400 `validation_failed` with one `details` entry per failing field
 */
export function parseOrderInput(body: unknown, kind: ShipmentDirection): OrderInput {
	const raw: Record<string, unknown> = isPlainObject(body) ? pickOrderShape(body) : {};
	const res = (kind === "forward" ? checkForward : checkReverse)(raw);
	if (res instanceof Promise) throw new Error("async validation is not supported");
	const errs = res === true ? [] : (res as ValidationError[]);
	const details = errs.map(describe);
	const bad = new Set(errs.map((e) => e.field));
	const ok = (field: string) => !bad.has(field) && ![...bad].some((f) => field.startsWith(`${f}.`));

	// The schema normalised every field in place; the cross-field rules below
	// read only fields that passed (`ok`), so their values have these types.
	const b = raw as Partial<CheckedBody>;
	const product = b.product;
	const order = b.order;

	// Cross-field rules, only over fields that passed on their own.
	if (kind === "reverse") {
		if (ok("order.order_type") && order && order.order_type === 1)
			details.push("order.order_type: must be 0 (reverse orders are prepaid)");
		if (ok("product.cod_amount") && product && (product.cod_amount ?? 0) > 0)
			details.push("product.cod_amount: must be absent or 0 (reverse orders are prepaid)");
		if (
			order &&
			ok("order.pickup_address_id") &&
			ok("order.reverse_pickup_address_id") &&
			order.pickup_address_id == null &&
			order.reverse_pickup_address_id == null
		)
			details.push("order.pickup_address_id: is required (or order.reverse_pickup_address_id)");
	} else if (ok("order.order_type") && ok("product.cod_amount") && order && product) {
		const cod = product.cod_amount ?? 0;
		if (order.order_type === 1) {
			if (!(cod > 0))
				details.push("product.cod_amount: is required and must be greater than 0 for COD orders");
			else if (ok("product.declared_order_total") && cod > product.declared_order_total)
				details.push("product.cod_amount: must not exceed declared_order_total");
		} else if (cod > 0)
			details.push("product.cod_amount: must be absent or 0 for prepaid orders (order_type 0)");
	}
	if (details.length) throw validationFailed(details);

	// Valid: every required block and field is present.
	const { receiver: r, product: p, order: o } = b as CheckedBody;
	const opt = <T>(x: T | undefined | null): T | null => (x === undefined ? null : x);
	const reverse: ReverseInput | null =
		kind === "reverse"
			? {
					forward_source: o.forward_source!,
					old_fwd_awb_no: o.old_fwd_awb_no!,
					reverse_pickup_address_id: opt(o.reverse_pickup_address_id),
					return_address: o.return_address ? compact(o.return_address) : null,
				}
			: null;
	const payment_mode = kind === "forward" ? paymentModeOf(o.order_type) : "prepaid";
	const warehouse_refs: OrderInput["warehouse_refs"] = [];
	for (const f of ["pickup_address_id", "reverse_pickup_address_id", "rto_address_id"] as const) {
		const id = o[f];
		if (typeof id === "number") warehouse_refs.push({ field: `order.${f}`, id });
	}
	return {
		customer_order_no: b.customer_order_no!,
		direction: kind,
		channel: opt(b.channel),
		receiver: {
			name: r.name,
			address_1: r.address_1,
			address_2: opt(r.address_2),
			landmark: opt(r.landmark),
			city: opt(r.city),
			state: opt(r.state),
			pincode: r.pincode,
			mobile_no: r.mobile_no,
		},
		product: {
			product_name: p.product_name,
			product_sku: opt(p.product_sku),
			physical_weight: p.physical_weight,
			declared_order_total_paise: toPaise(p.declared_order_total),
			cod_amount_paise: payment_mode === "cod" ? toPaise(p.cod_amount ?? 0) : 0,
			length: opt(p.length),
			width: opt(p.width),
			height: opt(p.height),
		},
		order: {
			pickup_address_id: reverse?.reverse_pickup_address_id ?? opt(o.pickup_address_id),
			rto_address_id: opt(o.rto_address_id),
			payment_mode,
			order_date: opt(o.order_date),
			order_from_source: opt(o.order_from_source),
		},
		reverse,
		warehouse_refs,
	};
}

/** Drops null/undefined entries of a normalised return address; null when nothing is left. */
function compact(a: Record<string, unknown>): Record<string, string> | null {
	const out: Record<string, string> = {};
	for (const [k, val] of Object.entries(a)) if (val !== null && val !== undefined) out[k] = String(val);
	return Object.keys(out).length ? out : null;
}
