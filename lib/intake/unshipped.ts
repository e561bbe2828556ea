/**
 * The unshipped queue (spec §2.5, §3, §4.3, §4.8, §7; issue 7): orders that
 * have not reached a courier and why, their counts, the buyer-detail edit
 * and hiding. Request parsing, the closed `error_type` list and row shaping
 * live here; the SQL in ./unshipped-store.ts.
 *
 * An order is in the queue when it is not hidden, not cancelled (status
 * `cancelled`: its number was released) and its booking state is
 * `not_shipped`, `booking_in_progress` or `failed`.
 *
 * `error_type` (one per row, first rule that applies):
 *
 * | error_type | when | label |
 * |---|---|---|
 * | `in_queue` | state `booking_in_progress` | Booking in progress |
 * | `pickup_address_missing` | no pickup warehouse (`pickup_address_id` null) | Pickup address missing |
 * | `not_booked` | state `not_shipped`: never booked | Not booked |
 * | `courier_refused` | failed: the courier refused the booking | Courier refused |
 * | `courier_unreachable` | failed: no courier could be reached | Courier unreachable |
 * | `pickup_unavailable` | failed: the warehouse was retired or unknown to the courier | Pickup unavailable |
 * | `order_changed` | failed: the order changed or is not bookable (gone, B2B) | Order changed |
 * | `booking_error` | failed: any other failure, or no failure code stored | Booking error |
 *
 * The failed types are the booking update's `failure_code`
 * (lib/contracts/intake.ts `BookingUpdate`).
 */
import { createHash } from "node:crypto";
import type {
	FailureCode,
	HttpParams,
	OrderConfirmation,
	ReceiverFields,
	ShipmentDirection,
	UnshippedErrorType,
	UnshippedErrorTypeEntry,
} from "../contracts";
import {
	EDIT_WINDOW_DAYS,
	EDITABLE_FIELDS,
	ERROR_TYPE_NAMES,
	UNSHIPPED_DEFAULT_LIMIT,
	UNSHIPPED_MAX_LIMIT,
	UNSHIPPED_ORDER_NO_MAX,
} from "../contracts/http/intake-input";
import { type CursorPosition, decodeCursor, encodeCursor } from "../platform/cursor";
import { type ApiError, errorBodyOf, fail, failWith } from "../platform/errors";
import { toPaise } from "../shared/money";
import { parseOrderInput } from "./validation";

/** Cursor kind of the unshipped list (lib/platform/cursor.ts). */
const KIND = "unshipped";

/** Words of each `error_type`: label, description, and the row's `reason` when no courier words exist. */
interface ErrorTypeWords {
	label: string;
	description: string;
	reason: string;
}

/** The words of each `error_type` of the closed list ({@link ERROR_TYPE_NAMES} gives the order `error-types` answers). */
export const ERROR_TYPES: Readonly<Record<UnshippedErrorType, ErrorTypeWords>> = {
	pickup_address_missing: {
		label: "Pickup address missing",
		description:
			"The order has no pickup warehouse. Create a warehouse (it adopts orders without one) and book the order.",
		reason: "The order has no pickup warehouse.",
	},
	not_booked: {
		label: "Not booked",
		description: "The order was created but no booking was requested. Book it when ready.",
		reason: "The order has not been booked yet.",
	},
	in_queue: {
		label: "Booking in progress",
		description: "A booking was requested and the courier's answer is awaited (usually within seconds).",
		reason: "Booking is in progress.",
	},
	courier_refused: {
		label: "Courier refused",
		description:
			"The courier refused the booking (for example the lane or the parcel). Fix the order or book another courier.",
		reason: "The courier refused the booking.",
	},
	courier_unreachable: {
		label: "Courier unreachable",
		description: "No courier could be reached when the booking was tried. Book again.",
		reason: "The courier could not be reached.",
	},
	pickup_unavailable: {
		label: "Pickup unavailable",
		description:
			"The pickup warehouse was retired or the courier does not know it. Check the warehouse and book again.",
		reason: "The pickup warehouse is not available to the courier.",
	},
	order_changed: {
		label: "Order changed",
		description:
			"The order changed while it was being booked or cannot be booked as it is (for example B2B).",
		reason: "The order could not be booked as it is.",
	},
	booking_error: {
		label: "Booking error",
		description: "The booking failed for another reason. The reason shows the details; book again.",
		reason: "The booking failed.",
	},
};

/**
 * The `error_type`s of a failed order: its `failure_code` (lib/contracts/intake.ts
 * `FailureCode`); a failure stored without a code (or with another) is `booking_error`.
 */
export const FAILED_TYPES = [
	"courier_refused",
	"courier_unreachable",
	"pickup_unavailable",
	"order_changed",
	"booking_error",
] as const satisfies readonly FailureCode[];

/** `{data:[{error_type, label, description, count}]}` entries from per-type counts (absent types: 0). */
export function errorTypeEntries(counts: Partial<Record<string, number>>): UnshippedErrorTypeEntry[] {
	return ERROR_TYPE_NAMES.map((t) => ({
		error_type: t,
		label: ERROR_TYPES[t].label,
		description: ERROR_TYPES[t].description,
		count: counts[t] ?? 0,
	}));
}

/** Whether `s` is one of the closed `error_type` values. */
export function isErrorType(s: unknown): s is UnshippedErrorType {
	return typeof s === "string" && Object.hasOwn(ERROR_TYPES, s);
}

/** A row's `reason`: the stored failure reason of a failed booking, else the type's sentence. */
export function reasonOf(t: UnshippedErrorType, failure_reason: string | null): string {
	const words = failure_reason?.trim();
	return (FAILED_TYPES as readonly string[]).includes(t) && words ? words : ERROR_TYPES[t].reason;
}

/** §2.5 `confirmation` of a row: COD forward orders `pending`, everything else `not_required`. */
export function confirmationOf(order_type: number, shipment_type: number): OrderConfirmation {
	return order_type === 1 && shipment_type === 0 ? "pending" : "not_required";
}

/** What keeps an order from being edited (the `reason` of a 409 `not_editable`). */
export type NotEditableReason = "booked" | "booking_in_progress" | "cancelled" | "hidden" | "expired";

const NOT_EDITABLE_WORDS: Record<NotEditableReason, string> = {
	booked: "The order is booked: the courier has its address. Cancel the booking to change it.",
	booking_in_progress: "A booking of the order is in progress.",
	cancelled: "The order's booking was cancelled and its number released.",
	hidden: "The order is hidden.",
	expired: `The order was created more than ${EDIT_WINDOW_DAYS} days ago: its editable window has closed.`,
};

/**
 * 409 `not_editable` (§3, §7) with `reason` (see {@link NotEditableReason});
 * null (an order that looked editable again when re-read: a concurrent change) answers
 * without `reason`.
 */
export function notEditable(reason: NotEditableReason | null): ApiError {
	if (!reason) return fail("not_editable");
	return failWith("not_editable", { reason }, NOT_EDITABLE_WORDS[reason]);
}

// ---------------------------------------------------------------------------
// GET /v1/orders/unshipped: query
// ---------------------------------------------------------------------------

/** The filters of the unshipped list, normalised (money in paise). */
export interface UnshippedFilters {
	error_type: UnshippedErrorType | null;
	customer_order_no: string | null;
	pickup_address_id: number | null;
	order_type: 0 | 1 | null;
	amount_min_paise: number | null;
	amount_max_paise: number | null;
}

/** Parsed query of `GET /v1/orders/unshipped`. */
export interface UnshippedQuery {
	limit: number;
	filters: UnshippedFilters;
	/** rows with an order_id below this one (the next page), or null (the first page) */
	before_id: number | null;
}

/** 400 whose body names the offending query key in `field` (§7 unshipped list). */
function badFilter(field: string, reason: string, code: FilterCode = "validation_failed"): ApiError {
	const detail = `${field}: ${reason}`;
	return code === "validation_failed"
		? failWith(code, { details: [detail], field }, detail)
		: failWith(code, { field });
}

/** The codes of a bad unshipped filter: §7 names some filters' own codes (code = message). */
type FilterCode =
	| "validation_failed"
	| "order_type: must be 0 (prepaid) or 1 (COD)"
	| "amount_min: must be a rupee amount"
	| "amount_max: must be a rupee amount"
	| "shipment_type: must be 0 (forward) or 1 (reverse)";

/** A query value as one string; undefined when absent or empty (`?x=`); 400 when repeated or not text. */
function one(params: HttpParams, key: string, reason: string, code?: FilterCode): string | undefined {
	const v = params[key];
	if (v === undefined || v === null) return undefined;
	if (typeof v === "number" && Number.isFinite(v)) return String(v);
	if (typeof v !== "string") throw badFilter(key, reason, code);
	const s = v.trim();
	return s === "" ? undefined : s;
}

const ID = /^[1-9]\d*$/;
const RUPEES = /^\d{1,9}(\.\d{1,2})?$/;

/** Parses a rupee filter (`^\d{1,9}(\.\d{1,2})?$`) to paise; 400 `<key>: must be a rupee amount`. */
function rupeeFilter(params: HttpParams, key: "amount_min" | "amount_max"): number | null {
	const msg = `${key}: must be a rupee amount` as const;
	const s = one(params, key, "must be a rupee amount", msg);
	if (s === undefined) return null;
	if (!RUPEES.test(s)) throw badFilter(key, "must be a rupee amount", msg);
	return toPaise(Number(s));
}

/** Position in the list: account `s`, last order id `id`, hash `f` of the filters it was issued for. */
type UnshippedPosition = { s: number; id: number; f: string };

/** Short stable hash of the normalised filters (binds a cursor to them). */
function filtersHash(f: UnshippedFilters): string {
	const canonical = JSON.stringify([
		f.error_type,
		f.customer_order_no,
		f.pickup_address_id,
		f.order_type,
		f.amount_min_paise,
		f.amount_max_paise,
	]);
	return createHash("sha256").update(canonical).digest("base64url").slice(0, 22);
}

/**
 * Parses the query of `GET /v1/orders/unshipped` for account `sender_id`
 * (§4.3, §4.8). Empty values (`?x=`) count as absent; unknown keys (and
 * `sender_id`) are ignored.
 * - `limit`: integer 1–1000, default {@link UNSHIPPED_DEFAULT_LIMIT};
 * - `cursor`: a `nextCursor` of this account's unshipped list issued for the
 *   same filters (the limit may change between pages);
 * - `error_type`: one of {@link ERROR_TYPE_NAMES};
 * - `customer_order_no`: the stored reference, exact (returns with `-R`), ≤ 100 characters;
 * - `pickup_address_id`: `^[1-9]\d*$`;
 * - `order_type`: `0` or `1`;
 * - `amount_min` / `amount_max`: rupees `^\d{1,9}(\.\d{1,2})?$`, inclusive
 *   bounds of the declared order total; min ≤ max.
 * @throws 400 `order_type: must be 0 (prepaid) or 1 (COD)`, `amount_min: must be a rupee amount`,
 *   `amount_max: must be a rupee amount` (§7 codes, body `field`); 400 `validation_failed`
 *   (`details`, `field`) for `limit`, `error_type`, `customer_order_no`, `pickup_address_id` and
 *   amount_min > amount_max; 400 `cursor: unrecognised shape` for a cursor not issued for this
 *   account and these filters
 */
export function parseUnshippedQuery(params: HttpParams, sender_id: number): UnshippedQuery {
	const limitMsg = `must be an integer from 1 to ${UNSHIPPED_MAX_LIMIT}`;
	let limit = UNSHIPPED_DEFAULT_LIMIT;
	const rawLimit = one(params, "limit", limitMsg);
	if (rawLimit !== undefined) {
		if (!ID.test(rawLimit) || Number(rawLimit) > UNSHIPPED_MAX_LIMIT) throw badFilter("limit", limitMsg);
		limit = Number(rawLimit);
	}

	const typeMsg = `must be one of ${ERROR_TYPE_NAMES.join(", ")}`;
	const et = one(params, "error_type", typeMsg);
	if (et !== undefined && !isErrorType(et)) throw badFilter("error_type", typeMsg);

	const refMsg = `must be at most ${UNSHIPPED_ORDER_NO_MAX} characters`;
	const ref = one(params, "customer_order_no", refMsg);
	if (ref !== undefined && ref.length > UNSHIPPED_ORDER_NO_MAX) throw badFilter("customer_order_no", refMsg);

	const idMsg = "must be a positive integer";
	const pickup = one(params, "pickup_address_id", idMsg);
	if (pickup !== undefined && (!ID.test(pickup) || !Number.isSafeInteger(Number(pickup))))
		throw badFilter("pickup_address_id", idMsg);

	const otCode: FilterCode = "order_type: must be 0 (prepaid) or 1 (COD)";
	const ot = one(params, "order_type", "must be 0 (prepaid) or 1 (COD)", otCode);
	if (ot !== undefined && ot !== "0" && ot !== "1")
		throw badFilter("order_type", "must be 0 (prepaid) or 1 (COD)", otCode);

	const min = rupeeFilter(params, "amount_min");
	const max = rupeeFilter(params, "amount_max");
	if (min !== null && max !== null && min > max) throw badFilter("amount_min", "must not exceed amount_max");

	const filters: UnshippedFilters = {
		error_type: et ?? null,
		customer_order_no: ref ?? null,
		pickup_address_id: pickup === undefined ? null : Number(pickup),
		order_type: ot === undefined ? null : ot === "1" ? 1 : 0,
		amount_min_paise: min,
		amount_max_paise: max,
	};
	const cursor = params.cursor;
	if (cursor === undefined || cursor === "") return { limit, filters, before_id: null };
	const f = filtersHash(filters);
	const ours = (p: CursorPosition): p is UnshippedPosition =>
		p.s === sender_id && p.f === f && typeof p.id === "number" && Number.isSafeInteger(p.id) && p.id > 0;
	return { limit, filters, before_id: decodeCursor(KIND, cursor, ours).id };
}

/** The `nextCursor` after a page whose last row is `last_order_id`. */
export function nextUnshippedCursor(
	sender_id: number,
	filters: UnshippedFilters,
	last_order_id: number,
): string {
	return encodeCursor(KIND, { s: sender_id, id: last_order_id, f: filtersHash(filters) });
}

// ---------------------------------------------------------------------------
// GET /v1/orders/unshipped/counts: query
// ---------------------------------------------------------------------------

/**
 * `shipment_type` of the counts: `0` forward (also when absent or empty), `1` reverse.
 * @throws 400 `shipment_type: must be 0 (forward) or 1 (reverse)` (body `field`)
 */
export function parseCountsDirection(params: HttpParams): ShipmentDirection {
	const code: FilterCode = "shipment_type: must be 0 (forward) or 1 (reverse)";
	const st = one(params, "shipment_type", "must be 0 (forward) or 1 (reverse)", code);
	if (st === undefined || st === "0") return "forward";
	if (st === "1") return "reverse";
	throw badFilter("shipment_type", "must be 0 (forward) or 1 (reverse)", code);
}

// ---------------------------------------------------------------------------
// PATCH /v1/orders/unshipped/{id}: body
// ---------------------------------------------------------------------------

/** A validated edit: the fields sent, normalised as on create (optional ones may be null: cleared). */
export type ReceiverPatch = Partial<ReceiverFields>;

/** Keys the edit accepts besides the writable fields: the path `id` and `sender_id` (stripped, §4.3). */
const IGNORED_KEYS = new Set(["id", "sender_id"]);

/**
 * A valid create body whose receiver is `receiver`: the fields' rules are
 * lib/intake/validation.ts's, run by `parseOrderInput`; every other field is a
 * constant that passes, so each failure names a `receiver.` field.
 */
function createBodyWith(receiver: Record<string, unknown>): Record<string, unknown> {
	return {
		customer_order_no: "EDIT",
		receiver: { name: "x", address_1: "xxx", pincode: "110001", mobile_no: "9876543210", ...receiver },
		product: { product_name: "x", physical_weight: 1, declared_order_total: 0 },
		order: { pickup_address_id: 1, order_type: 0 },
	};
}

/**
 * Validates the body of `PATCH /v1/orders/unshipped/{id}` (spec §4.3, §7):
 * flat keys from {@link EDITABLE_FIELDS}, each checked and normalised exactly
 * as the same `receiver` field on create (lib/intake/validation.ts: trimmed
 * text bounds, pincode `^[1-9]\d{5}$`, mobile normalised to 10 digits; `null`
 * or `""` clears an optional field, a required one refuses it). `sender_id`
 * and the path `id` are ignored. An empty body is a valid no-op.
 * @throws 400 `validation_failed` with `details` and `field` (the first
 *   offending key): any other key (`<key>: is not an editable field`), or a
 *   value the create rules refuse (`pincode: must be 6 digits (first digit 1-9)`)
 */
export function parseReceiverPatch(params: HttpParams): ReceiverPatch {
	const editable: readonly string[] = EDITABLE_FIELDS;
	const unknown = Object.keys(params).filter((k) => !editable.includes(k) && !IGNORED_KEYS.has(k));
	if (unknown.length) {
		const details = unknown.map((k) => `${k}: is not an editable field (editable: ${editable.join(", ")})`);
		throw failWith("validation_failed", { details, field: unknown[0] }, details[0]);
	}
	const sent: Record<string, unknown> = {};
	for (const k of EDITABLE_FIELDS) if (Object.hasOwn(params, k)) sent[k] = params[k];
	const keys = Object.keys(sent) as (keyof ReceiverFields)[];
	if (!keys.length) return {};
	let parsed: ReturnType<typeof parseOrderInput>;
	try {
		parsed = parseOrderInput(createBodyWith(sent), "forward");
	} catch (err) {
		const eb = errorBodyOf(err);
		const raw = Array.isArray(eb?.body.details) ? (eb.body.details as unknown[]) : [];
		const details = raw.map((d) => String(d).replace(/^receiver\./, ""));
		if (!eb || !details.length) throw err;
		const field = details[0].slice(0, details[0].indexOf(":"));
		throw failWith("validation_failed", { details, field }, details);
	}
	const out: ReceiverPatch = {};
	const r = parsed.receiver;
	for (const k of keys) (out as Record<string, string | null>)[k] = r[k];
	return out;
}
