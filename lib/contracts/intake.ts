/**
 * Contract of the `intake` service (spec §2.1–§2.4, §4.1, §4.3): the order
 * aggregate, with the booking state and lifecycle status other services
 * report to it.
 */
import type { Readable } from "node:stream";
import type { RouteParams } from "../platform/openapi/route";
import type { CodStatus, CodStatusUpdate } from "./billing";
import type { Address, BookingState, PaymentMode, ShipmentDirection, UploadParams } from "./common";
import type { INTAKE_ROUTES } from "./http/intake";
import type { INTAKE_BULK_ROUTES } from "./http/intake-bulk";

/** The intake route definitions (lib/contracts/http/intake.ts, intake-bulk.ts). */
type IntakeRoutes = typeof INTAKE_ROUTES & typeof INTAKE_BULK_ROUTES;

/** The parcel of an order. kg, cm, rupees. */
export interface OrderProduct {
	product_name: string;
	product_sku: string | null;
	/** kg */
	physical_weight: number;
	/** rupees */
	declared_order_total: number;
	/** rupees; null unless the order is COD */
	cod_amount: number | null;
	/** cm; null when not given */
	length: number | null;
	width: number | null;
	height: number | null;
}

/** What a return (reverse order, §2.2) carries besides the forward fields. */
export interface ReverseDetails {
	forward_source: string | null;
	old_fwd_awb_no: string | null;
	reverse_pickup_address_id: number | null;
	/** where the buyer's return is collected, as the merchant sent it (spec field names) */
	return_address: Record<string, unknown> | null;
}

/** The order aggregate as intake answers it internally. Money in rupees; timestamps ISO-8601 UTC. */
export interface OrderRecord {
	order_id: number;
	sender_id: number;
	/** stored reference (with `-R` for returns) */
	customer_order_no: string;
	direction: ShipmentDirection;
	channel: string | null;
	payment_mode: PaymentMode;
	pickup_address_id: number | null;
	rto_address_id: number | null;
	/** who receives a forward parcel, or where a return is collected (the spec's `receiver`) */
	consignee: Address;
	product: OrderProduct;
	/** returns only */
	reverse: ReverseDetails | null;
	state: BookingState;
	status: string;
	awb_number: string | null;
	courier: string | null;
	logistic_id: number | null;
	failure_reason: string | null;
	created_at: string;
	order_date: string;
	order_from_source: string | null;
	booked_at: string | null;
	updated_at: string;
}

/**
 * Why a booking failed, as a machine code (BookingUpdate `failure_code`; the
 * unshipped queue's `error_type` of a failed order).
 */
export type FailureCode =
	| "courier_refused"
	| "courier_unreachable"
	| "pickup_unavailable"
	| "order_changed"
	| "booking_error";

/** Booking progress reported by booking to intake (outbox → acknowledged call). */
export interface BookingUpdate {
	order_id: number;
	sender_id: number;
	/** booking attempt id; updates of an older attempt never overwrite a newer one */
	attempt_id: number;
	/**
	 * monotonically increasing per attempt: 1 queued, 2 booked / failed / cancelled by the worker,
	 * then the attempt's next `order_seq` (3, 4, …) for each later update: a tracking status change,
	 * a cancel through POST /v1/shipping/cancel. Status `cancelled` releases the order number.
	 */
	seq: number;
	state: BookingState;
	status: string;
	awb_number?: string | null;
	courier?: string | null;
	logistic_id?: number | null;
	failure_reason?: string | null;
	/**
	 * Why a failed booking failed, as a machine code (the unshipped queue's
	 * `error_type`): `courier_refused`, `courier_unreachable`,
	 * `pickup_unavailable` (warehouse retired / location unknown), `order_changed`
	 * (order gone or B2B), `booking_error` (anything else). Omitted: kept for the
	 * same attempt, cleared for a new one (like the fields above).
	 */
	failure_code?: FailureCode | null;
	/** When `status` was reached (ISO-8601 UTC; a scan's time for courier statuses); omitted: now */
	status_at?: string | null;
}

/** §4.5 409 warehouse_in_use body parts. */
export interface WarehouseUsage {
	count: number;
	unshipped: number;
	awaiting_pickup: number;
	order_ids: number[];
}

/** 201 `{order_id}` or 200 `{order_id, deduped:true}` (§4.1). */
export type CreateOrderResult = { order_id: number } | { order_id: number; deduped: true };

/**
 * A return's create answer: {@link CreateOrderResult} plus `order_no`, the
 * stored reference (`customer_order_no` + `-R`) that `GET /v1/orders/status`
 * and the lists know it by.
 */
export type CreateReverseResult = CreateOrderResult & { order_no: string };

/** §2.4 booking status record. */
export interface StatusRecord {
	order_no: string;
	state: BookingState;
	awb_number: string | null;
	courier: string | null;
	status: string;
	failure_reason: string | null;
	/** ISO-8601 UTC */
	created_at: string;
	/**
	 * the signed label link of the AWB (`/v1/documents/label/t/{awb}.{hmac}`, no
	 * bearer; lib/shared/label-link.ts `bookedLabelUrl`) when `booked`, else null
	 */
	label_url: string | null;
}

/**
 * A row of `GET /v1/orders` (§2.5 list row; field list in
 * docs/decisions/0030-orders-read-side.md). Money in rupees, timestamps
 * ISO-8601 UTC.
 */
export interface OrderListRow {
	order_id: number;
	/** the stored reference: `customer_order_no` as sent, `-R` appended for returns */
	order_no: string;
	/** 0 forward, 1 reverse (spec numbers at the edge) */
	shipment_type: 0 | 1;
	/** payment mode: 0 prepaid, 1 COD (§2.1) */
	order_type: 0 | 1;
	channel: string | null;
	/** rupees: the declared order total */
	order_value: number;
	/** rupees: what the courier collects; null for prepaid */
	cod_amount: number | null;
	/** the consignee (§2.1 receiver names): who receives it (forward) or where a return is collected */
	receiver: { name: string; city: string | null; pincode: string };
	pickup_address_id: number | null;
	/** booking state (§2.4): not_shipped, booking_in_progress, booked, failed */
	state: BookingState;
	/** lifecycle status (lib/shared/shipment-status.ts) */
	status: string;
	/** words for `status` */
	status_name: string;
	/** list bucket of `status` (§3); null for orders not booked yet (listed only under `all`) */
	bucket: string | null;
	awb_number: string | null;
	courier: string | null;
	logistic_id: number | null;
	/** buyer-facing tracking page of the AWB (TRACKING_URL_TEMPLATE); null until an AWB exists */
	tracking_url: string | null;
	/** the signed label link of the AWB (no bearer; lib/shared/label-link.ts `bookedLabelUrl`) when `booked`, else null */
	label_url: string | null;
	created_at: string;
	booked_at: string | null;
	/** when `status` was reached (created_at for a new order) */
	status_at: string;
}

/** §2.12 cursor page. */
export interface CursorPage<T> {
	data: T[];
	pagination: { mode: "cursor"; limit: number; nextCursor: string | null };
}

/**
 * `GET /v1/orders/{id}` (§2.5 detail: the full order row plus `channel`,
 * `tracking_url`; every field in docs/decisions/0030-orders-read-side.md).
 * Money rupees, weight kg, dimensions cm, timestamps ISO-8601 UTC (null: not
 * reached).
 */
export interface OrderDetail extends Omit<OrderListRow, "receiver"> {
	order_status_id: number;
	order_date: string;
	order_from_source: string | null;
	/** §2.1 receiver block as stored (mobile as its 10 digits) */
	receiver: ReceiverFields;
	/** §2.1 product block (rupees, kg, cm) */
	product: OrderProduct;
	rto_address_id: number | null;
	/** returns only (§2.2) */
	reverse: ReverseDetails | null;
	/** the booked shipment's charges (booking), rupees; null when not booked */
	charges: { freight_charge: number; cod_charge: number; shipping_charge_tax: number; total: number } | null;
	failure_reason: string | null;
	failure_code: string | null;
	manifested_at: string | null;
	picked_up_at: string | null;
	delivered_at: string | null;
	rto_at: string | null;
	closed_at: string | null;
	/** the order number was released (booking cancelled) */
	released_at: string | null;
	/** hidden from lists (`POST /v1/orders/{id}/hide`); still readable here */
	hidden_at: string | null;
	/** buyer details last edited (`PATCH /v1/orders/unshipped/{id}`) */
	edited_at: string | null;
	/** last download of the current AWB's label (documents) */
	label_downloaded_at: string | null;
	/** where the COD cash is (billing); null for prepaid and for a COD order without an AWB */
	cod_status: CodStatus | null;
	/** the courier's remittance that paid it (billing), rupees; null until remitted */
	cod_remittance: { reference: string; remitted_on: string; amount: number } | null;
	/**
	 * the buyer's tracking page of the AWB (issue 29; lib/shared/label-link.ts `bookedTrackingPageUrl`,
	 * a signed bearer link) when `booked`, else null
	 */
	tracking_page_url: string | null;
	updated_at: string;
}

type SenderOrder = { sender_id: number; order_id: number };
type SenderWarehouse = { sender_id: number; warehouse_id: number };

export interface IntakeActions {
	/** POST /v1/intake/order (§2.1, §4.1). */
	"intake.createOrder": {
		params: RouteParams<IntakeRoutes["intake.createOrder"]>;
		result: CreateOrderResult;
	};
	/** POST /v1/intake/reverse (§2.2, §4.1). */
	"intake.createReverse": {
		params: RouteParams<IntakeRoutes["intake.createReverse"]>;
		result: CreateReverseResult;
	};
	/** GET /v1/orders/status (§2.4, §4.3). */
	"intake.status": { params: RouteParams<IntakeRoutes["intake.status"]>; result: StatusRecord };
	/**
	 * Internal: the sender's order, or null (missing and not theirs are the same). `for_booking`: booking reads
	 * it to book it, and intake records that booking may now hold an attempt (docs/decisions/0129-status-without-booking.md).
	 */
	"intake.getOrder": { params: SenderOrder & { for_booking?: boolean }; result: OrderRecord | null };
	/** Internal, from booking's outbox: idempotent and ordered by (attempt_id, seq). */
	"intake.applyBookingUpdate": { params: BookingUpdate; result: { applied: boolean } };
	/**
	 * Internal, from billing's outbox (docs/decisions/0102-cod-remittance.md): the COD statuses of AWBs, the
	 * newest version per AWB kept (the orders list's `cod_status` filter). Idempotent.
	 */
	"intake.applyCodStatuses": { params: { items: CodStatusUpdate[] }; result: { applied: number } };
	/** Internal: open orders shipping from a warehouse (§4.5 `warehouse_in_use`). */
	"intake.warehouseUsage": { params: SenderWarehouse; result: WarehouseUsage };
	/** Internal: gives the sender's not-yet-shipped orders without a pickup warehouse this one (§4.5 `orders_repaired`). */
	"intake.adoptOrphanOrders": { params: SenderWarehouse; result: { count: number } };
	/** Internal: orders booked at or after `since` (ISO-8601) per pickup warehouse id (§2.9 `shipped_30d`). */
	"intake.shippedCounts": { params: { sender_id: number; since: string }; result: Record<string, number> };
	/** Internal, from BullMQ queue `intake-bulk` (jobId `bulk-<job_id>`): parses and processes (or resumes) a bulk upload job (lib/intake/bulk/process.ts). Idempotent. */
	"intake.processBulkJob": {
		params: { job_id: number };
		result: { status: "completed" | "failed" | "skipped"; error?: string };
	};
	// orders read side
	/** GET /v1/orders (§2.5, §2.12, §4.3, §4.8): the caller's orders, newest first, cursor-paged. */
	"intake.listOrders": {
		params: RouteParams<IntakeRoutes["intake.listOrders"]>;
		result: CursorPage<OrderListRow>;
	};
	/** GET /v1/orders/{id} (§2.5, §4.3): the caller's order with its shipment. */
	"intake.orderDetail": { params: RouteParams<IntakeRoutes["intake.orderDetail"]>; result: OrderDetail };
	// unshipped queue
	/** GET /v1/orders/unshipped (§2.5, §2.12, §4.3, §4.8): the caller's stuck orders, newest first. */
	"intake.listUnshipped": {
		params: RouteParams<IntakeRoutes["intake.listUnshipped"]>;
		result: UnshippedPage;
	};
	/** GET /v1/orders/unshipped/error-types (§4.3; shape ours): the `error_type` values with the caller's counts. */
	"intake.unshippedErrorTypes": {
		params: RouteParams<IntakeRoutes["intake.unshippedErrorTypes"]>;
		result: { data: UnshippedErrorTypeEntry[] };
	};
	/** GET /v1/orders/unshipped/counts (§4.3): forward or reverse counts of the queue. */
	"intake.unshippedCounts": {
		params: RouteParams<IntakeRoutes["intake.unshippedCounts"]>;
		result: UnshippedCounts;
	};
	/** PATCH /v1/orders/unshipped/{id} (§3, §4.3): buyer-detail edit of an unbooked order. */
	"intake.editUnshipped": {
		params: RouteParams<IntakeRoutes["intake.editUnshipped"]>;
		result: UnshippedEditResult;
	};
	/** POST /v1/orders/{id}/hide (§3, §4.3): hides the order from every list and count. */
	"intake.hideOrder": { params: RouteParams<IntakeRoutes["intake.hideOrder"]>; result: HideOrderResult };
	// bulk upload (issue 10; docs/decisions/0039-bulk-upload-api.md)
	/** POST /v1/intake/bulk (§2.3, §4.1): the raw multipart body arrives as `ctx.stream`. 202. */
	"intake.bulkUpload": { params: UploadParams; result: BulkUploadResult };
	/** GET /v1/intake/jobs (§4.1): the caller's bulk jobs, newest first, cursor-paged. */
	"intake.bulkJobs": {
		params: RouteParams<IntakeRoutes["intake.bulkJobs"]>;
		result: CursorPage<BulkJobSummary>;
	};
	/** GET /v1/intake/jobs/{id} (§4.1): the job object with a cursor-paged page of its per-row outcomes. */
	"intake.bulkJob": {
		params: RouteParams<IntakeRoutes["intake.bulkJob"]>;
		result: BulkJob;
	};
	/** GET /v1/intake/bulk/template.csv | template.xlsx: the upload template (binary answer). */
	"intake.bulkTemplate": {
		params: RouteParams<IntakeRoutes["intake.bulkTemplate"]>;
		result: Buffer;
	};
	/** GET /v1/intake/jobs/{id}/review: the job's rows waiting for a decision, cursor-paged. */
	"intake.bulkReview": {
		params: RouteParams<IntakeRoutes["intake.bulkReview"]>;
		result: CursorPage<BulkReviewRow>;
	};
	/** a CSV byte stream (lib/intake/bulk/export.ts) */
	"intake.bulkRowsCsv": {
		params: RouteParams<IntakeRoutes["intake.bulkRowsCsv"]>;
		result: Readable;
	};
	/** POST /v1/intake/jobs/{id}/review/{row|all}/{approve|reject}: decides review rows. */
	"intake.bulkReviewDecide": {
		params: RouteParams<IntakeRoutes["intake.bulkReviewDecide"]>;
		result: BulkDecisionResult;
	};
}

/** Format of an uploaded bulk file. */
export type BulkFormat = "csv" | "xlsx";

/** Lifecycle of a bulk job: queued → processing → completed | failed. */
export type BulkJobStatus = "queued" | "processing" | "completed" | "failed";

/**
 * Outcome of one data row: `created` (a new order), `deduped` (the
 * customer_order_no already had a live order: nothing written), `failed`
 * (invalid: see `errors`), `review` (waiting for a human decision: see
 * `review_reason`), then `approved` (order created or found on approval) or
 * `rejected`.
 */
export type BulkRowOutcome = "created" | "deduped" | "failed" | "review" | "approved" | "rejected";

/** Why a row failed: the file's column (null when no column maps), the §2.1 field path, the message. */
export interface BulkRowError {
	column: string | null;
	field: string;
	message: string;
}

/** 202 answer of `POST /v1/intake/bulk`. */
export interface BulkUploadResult {
	job_id: number;
	status: "queued";
}

/** A bulk job as listed (`GET /v1/intake/jobs`). Timestamps ISO-8601 UTC. */
export interface BulkJobSummary {
	job_id: number;
	status: BulkJobStatus;
	file_name: string;
	format: BulkFormat;
	size_bytes: number;
	sender_address_id: number;
	/**
	 * `total`: data rows of the file (null until the job has counted them);
	 * `processed`: rows fully handled; then the rows per outcome (approved rows
	 * count as created or deduped; `in_review` is what still waits).
	 */
	counts: {
		total: number | null;
		processed: number;
		created: number;
		deduped: number;
		failed: number;
		in_review: number;
		rejected: number;
	};
	/** 0–100: processed / total while processing (0 while queued or total unknown), 100 once completed */
	progress: number;
	/** why a job failed (e.g. a missing required column), else null */
	error: string | null;
	created_at: string;
	started_at: string | null;
	finished_at: string | null;
}

/** One row's outcome (`GET /v1/intake/jobs/{id}` → `rows.data`). */
export interface BulkRowView {
	/** 1-based data row (the header is row 0) */
	row_no: number;
	outcome: BulkRowOutcome;
	order_id: number | null;
	errors: BulkRowError[];
	review_reason: string | null;
	decided_at: string | null;
}

/** A row of the review queue: its outcome plus the cells read from the file (by canonical column). */
export interface BulkReviewRow extends BulkRowView {
	data: Record<string, string>;
}

/** `GET /v1/intake/jobs/{id}`: the job, the first created order ids, one page of row outcomes. */
export interface BulkJob extends BulkJobSummary {
	/** ids of orders the job created (created and approved rows), in row order, the first 1000 */
	created_order_ids: number[];
	/** the §2.12 page of row outcomes (`?limit=&cursor=&outcome=`) */
	rows: CursorPage<BulkRowView>;
}

/** Answer of a review decision. */
export interface BulkDecisionResult {
	job_id: number;
	/** each decided row: approved (with order_id; deduped when it already existed), rejected, or failed (with errors) */
	decided: Array<{
		row_no: number;
		outcome: "approved" | "rejected" | "failed";
		order_id: number | null;
		deduped?: boolean;
		errors?: BulkRowError[];
	}>;
	/** rows of the job still in review after this call */
	in_review: number;
}

/**
 * Why an order sits in the unshipped queue (`error_type`, a closed list; spec
 * §4.3 leaves the values to `GET /v1/orders/unshipped/error-types`; table and
 * words in lib/intake/unshipped.ts): a failed order's {@link FailureCode}, or
 * what keeps an unfailed one from shipping.
 */
export type UnshippedErrorType = "pickup_address_missing" | "in_queue" | "not_booked" | FailureCode;

/**
 * The buyer's address by the §2.1 `receiver` field names: the one declaration
 * of the receiver block (a validated create body's, lib/intake/validation.ts
 * `ReceiverInput`; {@link OrderDetail}'s; an unshipped row's and the
 * `PATCH /v1/orders/unshipped/{id}` names). `name`, `address_1`, `pincode`
 * (six digits), `address_2` and `landmark` are {@link Address}'s; it differs
 * from it in the wire names the spec gives: `mobile_no` (Address: `phone`),
 * no `email`, and every optional part present, null when not given.
 */
export interface ReceiverFields
	extends Pick<Address, "name" | "address_1" | "pincode">,
		Required<Pick<Address, "address_2" | "landmark">> {
	city: string | null;
	state: string | null;
	/** bare 10-digit Indian mobile number */
	mobile_no: string;
}

/**
 * COD buyer confirmation of an unshipped row (§2.5 `confirmation`):
 * `not_required` (prepaid orders and returns), `pending` (COD, not confirmed
 * by the buyer; this system has no confirmation channel yet, so every COD row
 * answers `pending`).
 */
export type OrderConfirmation = "not_required" | "pending";

/** One row of `GET /v1/orders/unshipped` (§2.5). Money rupees, timestamps ISO-8601 UTC. */
export interface UnshippedRow {
	order_id: number;
	/** the stored reference (returns carry `-R`) */
	customer_order_no: string;
	/** 0 forward, 1 reverse */
	shipment_type: 0 | 1;
	/** 0 prepaid, 1 COD */
	order_type: 0 | 1;
	channel: string | null;
	/** rupees: the declared order total */
	order_value: number;
	/** rupees; null unless COD */
	cod_amount: number | null;
	confirmation: OrderConfirmation;
	/** the buyer (forward) or where a return is collected */
	address: ReceiverFields;
	product_name: string;
	/** kg */
	physical_weight: number;
	pickup_address_id: number | null;
	/** booking state: not_shipped, booking_in_progress or failed */
	state: BookingState;
	/** lifecycle status (lib/shared/shipment-status.ts) */
	status: string;
	error_type: UnshippedErrorType;
	/** why the order is stuck, in plain words (the courier's failure reason when there is one) */
	reason: string;
	created_at: string;
	order_date: string;
	/** last buyer-detail edit (PATCH /v1/orders/unshipped/{id}), or null */
	edited_at: string | null;
}

/** §2.12 page of unshipped rows. */
export interface UnshippedPage {
	data: UnshippedRow[];
	pagination: { mode: "cursor"; limit: number; nextCursor: string | null };
}

/** One entry of `GET /v1/orders/unshipped/error-types`. */
export interface UnshippedErrorTypeEntry {
	error_type: UnshippedErrorType;
	/** short words for a filter chip */
	label: string;
	/** what it means and what to do */
	description: string;
	/** the caller's unshipped orders of this type now (both directions) */
	count: number;
}

/** §4.3 counts: forward `{total, unshipped, failed, in_queue}`, reverse `{unshipped, failed}`. */
export type UnshippedCounts =
	| { total: number; unshipped: number; failed: number; in_queue: number }
	| { unshipped: number; failed: number };

/** 200 of PATCH /v1/orders/unshipped/{id} (§4.3). */
export interface UnshippedEditResult {
	order_id: number;
	/** the order's lifecycle status (unchanged by the edit) */
	status: string;
	/** the fields whose stored value changed, in allow-list order */
	changed: Array<keyof ReceiverFields>;
}

/** 200 of POST /v1/orders/{id}/hide (§4.3). */
export interface HideOrderResult {
	order_id: number;
	/** the stored reference */
	order_no: string;
	hidden: true;
	/** an open cancellation was closed (booking.closeCancellation) */
	closed: boolean;
	/** rupees refunded for the order's cancelled bookings (wallet ledger) */
	refunded: number;
}

export type IntakeEvents = Record<never, never>;
