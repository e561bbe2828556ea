/**
 * Input rules of the order create endpoints (spec §2.1 forward, §2.2 reverse).
 *
 * The spec leaves types and bounds "not shown"; these are the rules of this
 * implementation (documented in the README and on `intake.createOrder`). The
 * fastest-validator schemas are part of the contract
 * (lib/contracts/http/intake-input.ts, the route definitions' `body`); this
 * module compiles them and adds the cross-field rules:
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
import type { ValidationError } from "fastest-validator";
import { type PaymentMode, paymentModeOf, type ReceiverFields, type ShipmentDirection } from "../contracts";
import { INTAKE_ROUTES } from "../contracts/http/intake";
import { productProps, receiverProps, returnAddressProps } from "../contracts/http/intake-input";
import { validationFailed } from "../platform/errors";
import { compile, describe } from "../platform/validate";
import { isPlainObject, scalarOrMarker } from "../shared/fields";
import { toPaise } from "../shared/money";

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
	/** the buyer's e-mail (`receiver.email`, lower-cased; issue 29), or null */
	receiver_email: string | null;
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

/** A create body after the schema ran: each field that passed holds its normalised value (kg, rupees, cm). */
interface CheckedBody {
	customer_order_no: string;
	channel?: string | null;
	/** the receiver block as the schema leaves it: its optional parts may be absent */
	receiver: Pick<ReceiverFields, "name" | "address_1" | "pincode" | "mobile_no"> &
		Partial<ReceiverFields> & { email?: string | null };
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

/** The create bodies' validators, compiled from the route definitions (lib/contracts/http/intake.ts). */
const checkForward = compile(INTAKE_ROUTES["intake.createOrder"].body);
const checkReverse = compile(INTAKE_ROUTES["intake.createReverse"].body);

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
		receiver_email: opt(r.email),
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
