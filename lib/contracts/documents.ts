/**
 * Contract of the `documents` service (spec §4.4, §7 documents exceptions):
 * labels and their download record.
 */
import type { HttpParams } from "./common";

/** Where a label's bytes come from. */
export type LabelSourceKind = "generated" | "courier";

/** A `documents.labels` row (timestamps ISO-8601 UTC). */
export interface LabelInfo {
	order_id: number;
	sender_id: number;
	awb_number: string;
	logistic_id: number;
	source: LabelSourceKind;
	/** whether the courier's own file is stored (the bytes are never answered here) */
	has_courier_file: boolean;
	label_downloaded_at: string | null;
	first_downloaded_at: string | null;
	download_count: number;
	created_at: string;
}

export interface DocumentsActions {
	/** GET /v1/documents/label/:orderId (§4.4): the PDF (or the courier's own file) as bytes. */
	"documents.label": { params: HttpParams; result: Buffer };
	/** Internal: the label row of an order (its most recent AWB), or null. */
	"documents.labelInfo": { params: { sender_id: number; order_id: number }; result: LabelInfo | null };
}

export type DocumentsEvents = Record<never, never>;
