/**
 * Columns of a bulk order file (issue 10, spec §2.1, §2.3): one header row,
 * the same layout in a CSV and in the first sheet of an XLSX.
 *
 * Canonical columns (the §2.1 create-body fields flattened with underscores):
 *
 * | column               | §2.1 field                      | required |
 * |----------------------|---------------------------------|----------|
 * | customer_order_no    | customer_order_no               | yes      |
 * | channel              | channel                         | no       |
 * | receiver_name        | receiver.name                   | yes      |
 * | receiver_address_1   | receiver.address_1              | yes      |
 * | receiver_address_2   | receiver.address_2              | no       |
 * | receiver_landmark    | receiver.landmark               | no       |
 * | receiver_city        | receiver.city                   | no       |
 * | receiver_state       | receiver.state                  | no       |
 * | receiver_pincode     | receiver.pincode                | yes      |
 * | receiver_mobile_no   | receiver.mobile_no              | yes      |
 * | product_name         | product.product_name            | yes      |
 * | product_sku          | product.product_sku             | no       |
 * | physical_weight      | product.physical_weight (kg)    | yes      |
 * | declared_order_total | product.declared_order_total    | yes      |
 * | cod_amount           | product.cod_amount              | no (COD: yes) |
 * | length, width, height| product.length/width/height (cm)| no       |
 * | order_type           | order.order_type (0 prepaid, 1 COD; also "prepaid"/"cod") | yes |
 * | order_date           | order.order_date                | no       |
 *
 * `order.pickup_address_id` is the upload's `sender_address_id` (one pickup
 * warehouse per file).
 *
 * Header matching: case-insensitive; spaces, hyphens, dots and underscores
 * are the same (`Receiver Pincode`, `receiver-pincode`); surrounding spaces
 * and a UTF-8 BOM are ignored. Accepted store-export names ({@link ALIASES}):
 * Order ID / Order Number / Order No / Order # / Reference → customer_order_no;
 * Name / Customer Name / Shipping Name / Buyer Name / Consignee Name → receiver_name;
 * Address / Address 1 / Address Line 1 / Shipping Address1 → receiver_address_1;
 * Address 2 / Address Line 2 / Shipping Address2 → receiver_address_2;
 * Landmark → receiver_landmark; City / Shipping City → receiver_city;
 * State / Province / Shipping Province → receiver_state;
 * Pincode / Pin / Pin Code / Zip / Zip Code / Postal Code / Shipping Zip → receiver_pincode;
 * Phone / Mobile / Mobile No / Phone Number / Contact / Shipping Phone → receiver_mobile_no;
 * Product / Item / Item Name / Lineitem Name → product_name; SKU / Lineitem SKU → product_sku;
 * Weight / Weight (kg) → physical_weight; Order Total / Total / Order Value / Invoice Value /
 * Declared Value → declared_order_total; COD / COD Amount / Collectable Amount → cod_amount;
 * Payment Mode / Payment Type / Payment Method → order_type; Date / Created At → order_date;
 * Length (cm) / Width (cm) / Height (cm) / Breadth → length / width / height; Source / Sales Channel → channel.
 *
 * An unknown column, a column named twice or a missing required column fails
 * the job before any row is processed, naming them ({@link mapHeader}).
 */

import {
	type BulkColumn,
	REPORT_COLUMNS,
	REQUIRED_COLUMNS,
	TEMPLATE_COLUMNS,
} from "../../contracts/http/intake-bulk-input";
import { neutralise, unneutralise } from "../../shared/csv-cell";
import { capText, listSome, MAX_NAME_CHARS } from "./bounds";

/** A row's cells by canonical column (absent: empty cell or column not in the file). */
export type RowCells = Partial<Record<BulkColumn, string>>;

/** Each column's §2.1 create-body path (`block.field`, or top level). */
export const COLUMN_FIELDS: Readonly<Record<BulkColumn, string>> = {
	customer_order_no: "customer_order_no",
	channel: "channel",
	receiver_name: "receiver.name",
	receiver_address_1: "receiver.address_1",
	receiver_address_2: "receiver.address_2",
	receiver_landmark: "receiver.landmark",
	receiver_city: "receiver.city",
	receiver_state: "receiver.state",
	receiver_pincode: "receiver.pincode",
	receiver_mobile_no: "receiver.mobile_no",
	product_name: "product.product_name",
	product_sku: "product.product_sku",
	physical_weight: "product.physical_weight",
	declared_order_total: "product.declared_order_total",
	cod_amount: "product.cod_amount",
	length: "product.length",
	width: "product.width",
	height: "product.height",
	order_type: "order.order_type",
	order_date: "order.order_date",
};

/** The column of a §2.1 field path (`receiver.pincode` → `receiver_pincode`); null when no column maps to it. */
export function columnOfField(field: string): BulkColumn | null {
	for (const c of TEMPLATE_COLUMNS) if (COLUMN_FIELDS[c] === field) return c;
	return null;
}

/** The template's example row (a valid COD order), in {@link TEMPLATE_COLUMNS} order. */
export const TEMPLATE_EXAMPLE: Readonly<Record<BulkColumn, string>> = {
	customer_order_no: "ORD-1001",
	channel: "shopify",
	receiver_name: "Asha Verma",
	receiver_address_1: "14, 2nd Cross, Indiranagar",
	receiver_address_2: "Near metro station",
	receiver_landmark: "Opposite City Park",
	receiver_city: "Bengaluru",
	receiver_state: "Karnataka",
	receiver_pincode: "560038",
	receiver_mobile_no: "9876543210",
	product_name: "Cotton kurta",
	product_sku: "KRT-M-BLU",
	physical_weight: "0.45",
	declared_order_total: "1299.50",
	cod_amount: "1299.50",
	length: "30",
	width: "20",
	height: "4",
	order_type: "1",
	order_date: "2025-01-15",
};

/** Normalised header key: lower case, separators removed, `#` kept as `no`. */
export function headerKey(h: string): string {
	return h
		.replace(/^\uFEFF/, "")
		.trim()
		.toLowerCase()
		.replace(/#/g, "no")
		.replace(/\(.*?\)/g, "")
		.replace(/[\s_\-.]+/g, "");
}

/** Store-export header names (normalised by {@link headerKey} at load) → canonical column. */
const ALIASES: Readonly<Record<string, BulkColumn>> = (() => {
	const src: Array<[BulkColumn, string[]]> = [
		[
			"customer_order_no",
			["order id", "order number", "order no", "order #", "order", "reference", "order reference"],
		],
		["channel", ["source", "sales channel", "store"]],
		[
			"receiver_name",
			["name", "customer name", "shipping name", "buyer name", "consignee name", "consignee", "receiver"],
		],
		[
			"receiver_address_1",
			[
				"address",
				"address 1",
				"address1",
				"address line 1",
				"shipping address1",
				"shipping address 1",
				"shipping street",
			],
		],
		[
			"receiver_address_2",
			["address 2", "address2", "address line 2", "shipping address2", "shipping address 2"],
		],
		["receiver_landmark", ["landmark"]],
		["receiver_city", ["city", "shipping city"]],
		["receiver_state", ["state", "province", "shipping province", "shipping state"]],
		[
			"receiver_pincode",
			["pincode", "pin", "pin code", "zip", "zip code", "zipcode", "postal code", "postcode", "shipping zip"],
		],
		[
			"receiver_mobile_no",
			[
				"phone",
				"mobile",
				"mobile no",
				"mobile number",
				"phone number",
				"contact",
				"contact number",
				"shipping phone",
			],
		],
		["product_name", ["product", "item", "item name", "lineitem name", "product title", "sku name"]],
		["product_sku", ["sku", "lineitem sku", "item sku"]],
		["physical_weight", ["weight", "weight kg", "dead weight"]],
		[
			"declared_order_total",
			[
				"order total",
				"total",
				"order value",
				"invoice value",
				"declared value",
				"order amount",
				"total amount",
			],
		],
		["cod_amount", ["cod", "cod amount", "collectable amount", "collectible amount", "cod value"]],
		["length", ["length cm"]],
		["width", ["width cm", "breadth", "breadth cm"]],
		["height", ["height cm"]],
		["order_type", ["payment mode", "payment type", "payment method", "payment"]],
		["order_date", ["date", "created at", "order created at"]],
	];
	const out: Record<string, BulkColumn> = {};
	for (const c of TEMPLATE_COLUMNS) out[headerKey(c)] = c;
	for (const [c, names] of src) for (const n of names) out[headerKey(n)] = c;
	return out;
})();

/** A header row mapped to canonical columns. */
export interface HeaderMap {
	/** index in the row → column (null: an empty trailing header cell, ignored) */
	columns: Array<BulkColumn | null>;
}

/**
 * Why a header row is refused (the job fails with {@link HeaderError.message}).
 * The message is bounded whatever the header (./bounds.ts `listSome`): the
 * unknown and the repeated columns are named 10 at most per list (each name
 * cut to 40 characters by {@link mapHeader}) with how many more there were,
 * e.g. `invalid header row: unknown column(s): "x1", …, "x10" … and 19,990
 * more`; the missing ones are a few of the template's. The arrays keep every name.
 */
export class HeaderError extends Error {
	constructor(
		readonly unknown: string[],
		readonly missing: BulkColumn[],
		readonly duplicate: string[],
	) {
		const parts: string[] = [];
		if (unknown.length) parts.push(`unknown column(s): ${listSome(unknown)}`);
		if (duplicate.length) parts.push(`column(s) given twice: ${listSome(duplicate)}`);
		if (missing.length) parts.push(`missing required column(s): ${missing.join(", ")}`);
		super(`invalid header row: ${parts.join("; ")}`);
		this.name = "HeaderError";
	}
}

const REPORT_KEYS = new Set<string>(REPORT_COLUMNS.map(headerKey));

/**
 * Maps a header row to canonical columns.
 * Empty header cells and the export's {@link REPORT_COLUMNS} are ignored
 * (spreadsheets often carry blank trailing columns).
 * @throws HeaderError naming the unknown, duplicated and missing required
 * columns (names cut to 40 characters, lists bounded: see {@link HeaderError})
 */
export function mapHeader(cells: readonly string[]): HeaderMap {
	const columns: Array<BulkColumn | null> = [];
	const unknown: string[] = [];
	const duplicate: string[] = [];
	const seen = new Set<BulkColumn>();
	for (const raw of cells) {
		const h = String(raw ?? "");
		if (headerKey(h) === "" || REPORT_KEYS.has(headerKey(h))) {
			columns.push(null);
			continue;
		}
		const key = headerKey(h);
		// own names only: `constructor` (a property of every object) is an unknown column like any other
		const c = Object.hasOwn(ALIASES, key) ? ALIASES[key] : undefined;
		if (!c) {
			unknown.push(JSON.stringify(capText(neutralise(h.trim()), MAX_NAME_CHARS)));
			columns.push(null);
			continue;
		}
		if (seen.has(c)) duplicate.push(`${c} (${JSON.stringify(capText(h.trim(), MAX_NAME_CHARS))})`);
		seen.add(c);
		columns.push(c);
	}
	const missing = REQUIRED_COLUMNS.filter((c) => !seen.has(c));
	if (unknown.length || missing.length || duplicate.length)
		throw new HeaderError(unknown, missing, duplicate);
	return { columns };
}

/**
 * Cells of one data row by column; empty (after trim) cells are left out. A
 * cell the export neutralised (`'` then a formula-starting character, see
 * {@link neutralise}) gets its original text back ({@link unneutralise}), so a
 * corrected export uploaded again reads as the file first uploaded.
 */
export function cellsOf(map: HeaderMap, row: readonly string[]): RowCells {
	const out: RowCells = {};
	const n = Math.min(row.length, map.columns.length);
	for (let i = 0; i < n; i++) {
		const c = map.columns[i];
		if (!c) continue;
		const v = row[i];
		if (v !== undefined && v !== null && v.trim() !== "") out[c] = unneutralise(v);
	}
	return out;
}
