/**
 * Contract of the `documents` service (spec §4.4, §7 documents exceptions):
 * labels and their download record.
 */
import type { RouteParams } from "../platform/openapi/route";
import type { DOCUMENTS_ROUTES } from "./http/documents";

/** The documents route definitions (lib/contracts/http/documents.ts). */
type Routes = typeof DOCUMENTS_ROUTES;

/**
 * Most orders in one bulk label or manifest request (spec §4.4, §7): more
 * `order_ids` elements (counted before duplicates are dropped) answer 400
 * `max 200 orders per request`. Enforced by lib/documents/bulk.ts `parseOrderIds`.
 */
export const MAX_BULK_LABELS = 200;

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

/** Params of `documents.captureCourierLabel` (the payload of booking's `courier_label` outbox row). */
export interface CourierLabelCapture {
	sender_id: number;
	order_id: number;
	awb_number: string;
	logistic_id: number;
}

/**
 * Answer of `documents.captureCourierLabel`: `captured` (fetched and stored
 * now), `already_captured` (stored before; the courier was not asked),
 * `missing` (the courier definitively has no file: recorded with the reason,
 * downloads answer 409 `carrier_label_missing`). `content_type` and `bytes`
 * describe the stored file (null and 0 when missing).
 */
export interface CourierLabelCaptured {
	awb_number: string;
	status: "captured" | "already_captured" | "missing";
	content_type: string | null;
	bytes: number;
}

export interface DocumentsActions {
	/** GET /v1/documents/label/:orderId (§4.4): the PDF (or the courier's own file) as bytes. */
	"documents.label": { params: RouteParams<Routes["documents.label"]>; result: Buffer };
	/** POST /v1/documents/label (§4.4): `order_ids` (1–200) → ONE PDF, one page per order in the requested order. */
	"documents.labels": { params: RouteParams<Routes["documents.labels"]>; result: Buffer };
	/** GET /v1/documents/label/t/:token (§4.4, §5 rule 7; no bearer token): the same label bytes as an attachment. */
	"documents.labelLink": { params: RouteParams<Routes["documents.labelLink"]>; result: Buffer };
	/**
	 * POST /v1/documents/manifest (§4.4, §3): the handover manifest PDF of `order_ids` (one section and
	 * manifest number per courier and pickup warehouse); meta headers `x-manifest-no`, `x-manifest-count`.
	 */
	"documents.manifest": { params: RouteParams<Routes["documents.manifest"]>; result: Buffer };
	/** GET /v1/documents/manifest/:manifestNo (ours): a stored manifest printed again, as first answered. */
	"documents.manifestCopy": { params: RouteParams<Routes["documents.manifestCopy"]>; result: Buffer };
	/** Ops / tests: delivers the due documents outbox rows (booking.markManifested) now. */
	"documents.relayOutbox": { params: Record<string, never>; result: { delivered: number; failed: number } };
	/** Internal: the label row of an order (its most recent AWB), or null. */
	"documents.labelInfo": { params: { sender_id: number; order_id: number }; result: LabelInfo | null };
	/**
	 * Internal (booking's outbox, when a shipment of a courier that issues its own
	 * label is booked): fetches the courier's label file and stores it; idempotent per AWB.
	 */
	"documents.captureCourierLabel": { params: CourierLabelCapture; result: CourierLabelCaptured };
}

export type DocumentsEvents = Record<never, never>;
