/**
 * Bulk labels: `POST /v1/documents/label` (spec §4.4, §7;
 * docs/decisions/0024-bulk-labels.md).
 *
 * One request, ONE PDF: the labels of up to 200 of the caller's booked orders,
 * one page each in the requested order, drawn into ONE pdf-lib document whose
 * fonts are embedded once and subset (lib/documents/label.ts
 * `createLabelDocument` + `drawLabelPage`), never per-label PDFs merged
 * (STACK-NOTES: merging repeats every font subset). A courier-issued label
 * that was captured is placed as it came: its PDF pages copied in, or its PNG
 * image on a 4 × 6 inch page.
 *
 * All or nothing: every id is checked before anything is drawn or stamped. In
 * this order, the first failing check answers, listing every id that fails it
 * in request order:
 * 1. 404 `{message:"orders not found: <ids>"}`: missing or another account's
 *    (identical answers, spec §1 rule 4);
 * 2. 409 `{code:"not_ready_to_ship", message, order_ids}`: no live booked
 *    shipment (not booked, in progress, failed or cancelled), as the single
 *    label answers;
 * 3. 409 `{code:"carrier_label_missing", message, order_ids}`: courier-issued
 *    labels not captured (§7); with `data.retry_after` (the gateway's
 *    `Retry-After`) when every one of them is still pending;
 * 4. 409 `{code:"carrier_label_unmergeable", message, order_ids}`: captured
 *    courier files that cannot be put into a PDF (not a readable PDF or PNG);
 *    they still download one at a time.
 * On success every order of the batch gets `label_downloaded_at` stamped,
 * exactly as a single download does.
 */

import pMap from "p-map";
import { PDFDocument } from "pdf-lib";
import type { Sequelize } from "sequelize";
import {
	type Caller,
	type CallOptions,
	call,
	type HttpParams,
	MAX_BULK_LABELS,
	type Warehouse,
} from "../contracts";
import { errorBodyOf, fail, failWith } from "../platform/errors";
import { parsePositiveInt } from "../shared/fields";
import { buildLabelData } from "./data";
import { createLabelDocument, drawLabelPage, LABEL_SIZE, type LabelData } from "./label";
import { loadBookedOrder, withRetryAfter } from "./source";
import { type CourierLabelFile, courierLabelsOf, stampDownload } from "./store";

/** Collaborator calls (intake + booking per order) and stamps in flight at once for one request. */
const LOAD_CONCURRENCY = 32;

/**
 * The `order_ids` of a bulk label request, duplicates dropped (the first
 * position kept). Each id is a JSON integer or a string of digits (as the
 * single label's path), positive. Throws 400 `{message}`: `order_ids is
 * required: an array of 1 to 200 positive integers` (absent or not an array),
 * `order_ids must not be empty`, `max 200 orders per request` (more than 200
 * elements, counted before duplicates are dropped), `order_ids[<i>] must be a
 * positive integer`.
 */
export function parseOrderIds(params: HttpParams | undefined): number[] {
	const raw = params?.order_ids;
	if (!Array.isArray(raw)) throw fail("documents.bad_order_ids", "required");
	if (raw.length === 0) throw fail("documents.bad_order_ids", "empty");
	if (raw.length > MAX_BULK_LABELS) throw fail("documents.bad_order_ids", "too_many");
	const out: number[] = [];
	const seen = new Set<number>();
	for (let i = 0; i < raw.length; i++) {
		const id = parsePositiveInt(raw[i], { trim: false });
		if (id === null) throw fail("documents.bad_order_ids", { item: i });
		if (!seen.has(id)) {
			seen.add(id);
			out.push(id);
		}
	}
	return out;
}

/** The row key a download stamps. */
interface StampKey {
	order_id: number;
	sender_id: number;
	awb_number: string;
	logistic_id: number;
}

/** One page (or page set) of a bulk document. */
export type BulkLabel =
	| { kind: "generated"; key: StampKey; data: LabelData }
	| { kind: "courier_pdf"; key: StampKey; doc: PDFDocument }
	| { kind: "courier_png"; key: StampKey; png: Uint8Array };

/** Collaborator failures are rethrown as they came (503 through the gateway), as the single label does. */
const PASS_THROUGH: CallOptions = { unavailable: false };

/** A courier file as a mergeable item, or null when it cannot be merged. */
async function courierItem(key: StampKey, file: CourierLabelFile): Promise<BulkLabel | null> {
	if (file.content_type === "image/png") return { kind: "courier_png", key, png: file.bytes };
	if (file.content_type !== "application/pdf") return null;
	try {
		const doc = await PDFDocument.load(file.bytes);
		return doc.getPageCount() > 0 ? { kind: "courier_pdf", key, doc } : null;
	} catch {
		return null; // encrypted or unreadable: downloadable alone, not mergeable
	}
}

/**
 * Loads everything the labels of `order_ids` (parsed, distinct) need: each
 * order and its live shipment (intake, booking; at most
 * {@link LOAD_CONCURRENCY} in flight), the courier-issued labels among them
 * (one query), and each distinct pickup / RTO warehouse once. Answers the
 * labels in request order. Throws the batch errors of the module notes (404,
 * 409 not_ready_to_ship, carrier_label_missing, carrier_label_unmergeable);
 * a collaborator's failure as it came.
 */
export async function loadBulkLabels(
	via: Caller,
	db: Sequelize,
	sender_id: number,
	order_ids: readonly number[],
): Promise<BulkLabel[]> {
	const loaded = await pMap(
		order_ids,
		async (order_id) => {
			try {
				return { order_id, ...(await loadBookedOrder(via, sender_id, order_id)) };
			} catch (err) {
				const e = errorBodyOf(err);
				if (e?.status === 404) return { order_id, failure: "missing" as const };
				if (e?.status === 409 && e.body.code === "not_ready_to_ship")
					return { order_id, failure: "not_booked" as const };
				throw err;
			}
		},
		{ concurrency: LOAD_CONCURRENCY },
	);
	const missing = loaded.flatMap((l) => ("failure" in l && l.failure === "missing" ? [l.order_id] : []));
	if (missing.length) throw fail("documents.orders_not_found", missing);
	const notBooked = loaded.flatMap((l) => ("failure" in l ? [l.order_id] : []));
	if (notBooked.length) throw failWith("not_ready_to_ship", { order_ids: notBooked }, { batch: notBooked });
	const booked = loaded.flatMap((l) => ("failure" in l ? [] : [l]));

	const courier = await courierLabelsOf(
		db,
		sender_id,
		booked.map((b) => b.shipment),
	);
	const uncaptured = booked.flatMap((b) => {
		const file = courier.get(b.order_id);
		return file === null || file === "pending" ? [b.order_id] : [];
	});
	if (uncaptured.length) {
		// every one still pending (captures on their way): worth a retry in a moment (Retry-After)
		const pending = uncaptured.every((id) => courier.get(id) === "pending");
		throw withRetryAfter(
			failWith("carrier_label_missing", { order_ids: uncaptured }, pending, uncaptured),
			pending,
		);
	}

	const warehouses = new Map<number, Promise<Warehouse | null>>();
	const warehouse = (id: number | null): Promise<Warehouse | null> => {
		if (!id) return Promise.resolve(null);
		let w = warehouses.get(id);
		if (!w) {
			w = call(via, "warehouses.get", { sender_id, id, include_retired: true }, PASS_THROUGH).then(
				(x) => x ?? null,
			);
			warehouses.set(id, w);
		}
		return w;
	};

	const items = await Promise.all(
		booked.map(async ({ order, shipment }): Promise<BulkLabel | number> => {
			const key = {
				order_id: order.order_id,
				sender_id,
				awb_number: shipment.awb_number,
				logistic_id: shipment.logistic_id,
			};
			const file = courier.get(order.order_id);
			if (file && file !== "pending") return (await courierItem(key, file)) ?? order.order_id;
			const pickupId = order.pickup_address_id;
			const rtoId = order.rto_address_id && order.rto_address_id !== pickupId ? order.rto_address_id : null;
			const [pickup, rto] = await Promise.all([warehouse(pickupId), warehouse(rtoId)]);
			return { kind: "generated", key, data: buildLabelData({ order, shipment, pickup, rto }) };
		}),
	);
	const unmergeable = items.flatMap((i) => (typeof i === "number" ? [i] : []));
	if (unmergeable.length)
		throw failWith("carrier_label_unmergeable", { order_ids: unmergeable }, unmergeable);
	return items.filter((i): i is BulkLabel => typeof i !== "number");
}

/**
 * Draws `labels` into ONE PDF, in order (see the module notes): the fonts of
 * every generated label embedded once, subset; a courier PDF's pages copied
 * in; a courier PNG scaled to fit a 4 × 6 inch page. Pure (no I/O).
 */
export async function renderBulkLabels(labels: readonly BulkLabel[]): Promise<Uint8Array> {
	const generated = labels.flatMap((l) => (l.kind === "generated" ? [l.data] : []));
	const ld = await createLabelDocument(generated);
	for (const l of labels) {
		if (l.kind === "generated") drawLabelPage(ld, l.data);
		else if (l.kind === "courier_pdf") {
			for (const page of await ld.doc.copyPages(l.doc, l.doc.getPageIndices())) ld.doc.addPage(page);
		} else {
			const img = await ld.doc.embedPng(l.png);
			const [W, H] = LABEL_SIZE;
			const scale = Math.min(W / img.width, H / img.height);
			const w = img.width * scale;
			const h = img.height * scale;
			ld.doc.addPage(LABEL_SIZE).drawImage(img, { x: (W - w) / 2, y: (H - h) / 2, width: w, height: h });
		}
	}
	return ld.doc.save();
}

/** Stamps `label_downloaded_at` on every label of a delivered batch (one upsert each, as the single label). */
export async function stampBulkDownloads(db: Sequelize, labels: readonly BulkLabel[]): Promise<void> {
	await pMap(labels, (l) => stampDownload(db, l.key), { concurrency: LOAD_CONCURRENCY });
}
