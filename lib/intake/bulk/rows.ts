/**
 * One bulk row (issue 10): cells → the §2.1 create body → `parseOrderInput`
 * (lib/intake/validation.ts, the one validation path of POST
 * /v1/intake/order; no rule is copied here) → classification.
 *
 * - failed: the validator's (or the B2B check's) failures, each mapped back to
 *   `{column, field, message}` (column null when no column maps to the field).
 * - review (a human decides; batch-level checks in ./process.ts):
 *   `pincode_mismatch` (the pincode exists but the row's city or state
 *   disagrees with the directory), `reference_conflict` (the
 *   customer_order_no is already used with different content; same content →
 *   deduped), `cod_above_order_value` (COD amount above declared_order_total:
 *   the one validator failure that goes to review instead).
 *
 * Cells are kept as text in `bulk_rows.data` (never evaluated); values echoed
 * in messages are neutralised (./columns.ts `neutralise`).
 */
import type { Sequelize } from "sequelize";
import type { BulkColumn } from "../../contracts/http/intake-bulk-input";
import { errorBodyOf } from "../../platform/errors";
import { assertNotB2B } from "../../shared/b2b";
import { neutralise } from "../../shared/csv-cell";
import { insertOrder } from "../store";
import { type OrderInput, parseOrderInput } from "../validation";
import { COLUMN_FIELDS, columnOfField, type RowCells } from "./columns";
import { rowData } from "./store";

/** One failure of a row. */
export interface RowError {
	column: string | null;
	field: string | null;
	message: string;
}

/** The validator's message for COD above the declared total (sent to review). */
const COD_ABOVE = "product.cod_amount: must not exceed declared_order_total";

/** Result of {@link parseRow}. */
export type ParsedRow =
	| { kind: "valid"; input: OrderInput }
	| { kind: "cod_above"; input: OrderInput }
	| { kind: "failed"; errors: RowError[] };

/** `order_type` words accepted besides 0/1. */
function orderType(v: string | undefined): string | undefined {
	if (v === undefined) return undefined;
	const s = v.trim().toLowerCase();
	if (s === "cod" || s === "cash on delivery" || s === "cash") return "1";
	if (s === "prepaid" || s === "ppd" || s === "paid" || s === "online") return "0";
	return v.trim();
}

/** Money cells: thousands separators and a leading ₹ / Rs dropped. */
function money(v: string | undefined): string | undefined {
	if (v === undefined) return undefined;
	return v
		.trim()
		.replace(/^(₹|rs\.?|inr)\s*/i, "")
		.replace(/,/g, "");
}

/** The §2.1 create body of a row (pickup warehouse = the upload's `sender_address_id`). */
export function bodyOf(cells: RowCells, pickup_address_id: number): Record<string, unknown> {
	const c = cells;
	return {
		customer_order_no: c.customer_order_no?.trim(),
		channel: c.channel,
		receiver: {
			name: c.receiver_name,
			address_1: c.receiver_address_1,
			address_2: c.receiver_address_2,
			landmark: c.receiver_landmark,
			city: c.receiver_city,
			state: c.receiver_state,
			pincode: c.receiver_pincode?.trim(),
			mobile_no: c.receiver_mobile_no,
		},
		product: {
			product_name: c.product_name,
			product_sku: c.product_sku,
			physical_weight: c.physical_weight?.trim(),
			declared_order_total: money(c.declared_order_total),
			cod_amount: money(c.cod_amount),
			length: c.length?.trim(),
			width: c.width?.trim(),
			height: c.height?.trim(),
		},
		order: {
			pickup_address_id,
			order_type: orderType(c.order_type),
			order_date: c.order_date?.trim(),
		},
	};
}

/** `field: message` → {column, field, message}. */
function rowError(detail: string): RowError {
	const i = detail.indexOf(": ");
	if (i < 0) return { column: null, field: null, message: neutralise(detail) };
	const field = detail.slice(0, i);
	const column: string | null =
		columnOfField(field) ?? (field === "order.pickup_address_id" ? "sender_address_id" : null);
	return { column, field, message: neutralise(detail.slice(i + 2)) };
}

/**
 * Validates a row through `parseOrderInput` (and the B2B refusal of the
 * create endpoint).
 */
export function parseRow(cells: RowCells, pickup_address_id: number): ParsedRow {
	const body = bodyOf(cells, pickup_address_id);
	try {
		assertNotB2B(body);
	} catch (e) {
		const eb = errorBodyOf(e);
		return {
			kind: "failed",
			errors: [
				{ column: "channel", field: "channel", message: String(eb?.body.message ?? "unsupported channel") },
			],
		};
	}
	try {
		return { kind: "valid", input: parseOrderInput(body, "forward") };
	} catch (e) {
		const eb = errorBodyOf(e);
		if (!eb) throw e;
		const details = Array.isArray(eb.body.details)
			? (eb.body.details as string[])
			: [String(eb.body.message)];
		if (details.length === 1 && details[0] === COD_ABOVE) {
			// valid but for COD > declared: validate again with the declared total raised to the COD amount
			const b = bodyOf(cells, pickup_address_id) as { product: Record<string, unknown> };
			b.product.declared_order_total = b.product.cod_amount;
			const input = parseOrderInput(b, "forward");
			return { kind: "cod_above", input: withDeclared(input, cells) };
		}
		return { kind: "failed", errors: details.map(rowError) };
	}
}

/** The input with the row's own declared total (paise) restored (the review shows the row as sent). */
function withDeclared(input: OrderInput, cells: RowCells): OrderInput {
	const d = Number(money(cells.declared_order_total));
	return Number.isFinite(d)
		? { ...input, product: { ...input.product, declared_order_total_paise: Math.round(d * 100) } }
		: input;
}

/** Lower-case letters only (for city/state comparison). */
const squash = (s: string) => s.toLowerCase().replace(/[^a-z]/g, "");

/** Common alternative spellings of cities/states (squashed) → the directory's. */
const SAME: Readonly<Record<string, string>> = {
	bengaluru: "bangalore",
	bengalurucity: "bangalore",
	bangaloreurban: "bangalore",
	mumbaicity: "mumbai",
	bombay: "mumbai",
	madras: "chennai",
	calcutta: "kolkata",
	gurugram: "gurgaon",
	orissa: "odisha",
	newdelhi: "delhi",
	pondicherry: "puducherry",
};

/** A place name squashed, in the directory's spelling when {@link SAME} knows another (own names only: "Constructor" is a place name, not Object's constructor). */
function placeKey(name: string): string {
	const k = squash(name);
	return Object.hasOwn(SAME, k) ? SAME[k] : k;
}

/** Whether a written place name matches one of the directory's names. */
function samePlace(written: string, names: Array<string | null | undefined>): boolean {
	const w = placeKey(written);
	if (!w) return true;
	for (const n of names) {
		if (!n) continue;
		const d = placeKey(n);
		if (d && (d === w || d.includes(w) || w.includes(d))) return true;
	}
	return false;
}

/** Directory facts of a pincode used by {@link pincodeMismatch}. */
export interface PinFacts {
	found: boolean;
	city: string;
	state: string;
	district?: string;
	metro?: string | null;
}

/** The review reason when the row's city/state disagree with the directory (null: agree or not checkable). */
export function pincodeMismatch(input: OrderInput, info: PinFacts | undefined): string | null {
	if (!info?.found) return null;
	const r = input.receiver;
	const bad: string[] = [];
	if (r.city && !samePlace(r.city, [info.city, info.district, info.metro]))
		bad.push(`city "${neutralise(r.city)}" (directory: ${info.city})`);
	if (r.state && !samePlace(r.state, [info.state]))
		bad.push(`state "${neutralise(r.state)}" (directory: ${info.state})`);
	return bad.length ? `pincode_mismatch: pincode ${r.pincode} ${bad.join(", ")}` : null;
}

/** The fields of a bulk job {@link createFromRow} needs. */
export interface BulkJobRef {
	job_id: number;
	sender_address_id: number;
}

/**
 * Approving a review row (B1's endpoint): creates the row's order through the
 * same path as POST /v1/intake/order (`parseOrderInput` + `insertOrder`,
 * idempotent by customer_order_no). Does not change the `bulk_rows` row (the
 * caller records `approved` and the order id).
 *
 * - `cod_above_order_value` approved: the order is created with
 *   `declared_order_total` raised to the COD amount (the validator's rule
 *   COD ≤ declared holds for every stored order).
 * - `reference_conflict` approved: the reference is held by a live order, so
 *   no second order can exist: answers that order with `deduped: true`.
 * - `pincode_mismatch` approved: created as written.
 * `via` is unused (kept for the shared signature: lookups are not repeated).
 * @throws Error when the row does not exist or no longer validates
 */
export async function createFromRow(
	db: Sequelize,
	via: unknown,
	sender_id: number,
	job: BulkJobRef,
	row_no: number,
): Promise<{ order_id: number; deduped: boolean }> {
	void via;
	const data = await rowData(db, job.job_id, row_no);
	if (!data) throw new Error(`bulk row ${job.job_id}/${row_no} has no data`);
	const cells: RowCells = {};
	for (const [k, v] of Object.entries(data)) if (Object.hasOwn(COLUMN_FIELDS, k)) cells[k as BulkColumn] = v;
	const parsed = parseRow(cells, job.sender_address_id);
	if (parsed.kind === "failed")
		throw new Error(
			`bulk row ${row_no} is not valid: ${parsed.errors.map((e) => `${e.field}: ${e.message}`).join("; ")}`,
		);
	let input = parsed.input;
	if (parsed.kind === "cod_above")
		input = {
			...input,
			product: { ...input.product, declared_order_total_paise: input.product.cod_amount_paise },
		};
	const res = await insertOrder(db, sender_id, input);
	return { order_id: res.order_id, deduped: !res.created };
}
