/**
 * Contract of the `booking` service (spec §2.4, §2.8, §3, §4.2): booking
 * attempts (async and sync), cancellation, per-account courier rankings, the
 * wallet ledger, the outbox and the booking worker.
 */
import type { ErrorCode } from "../platform/errors/catalogue";
import type { RouteParams } from "../platform/openapi/route";
import type { ShipmentStatus } from "../shared/shipment-status";
import type { BookingState, ShipmentDirection } from "./common";
import type { BOOKING_ROUTES } from "./http/booking";
import type { SimulatorEvent } from "./platform";

/** The booking route definitions (lib/contracts/http/booking.ts). */
type Routes = typeof BOOKING_ROUTES;

// ---------------------------------------------------------------------------
// Input bounds of the routes (checked by hand in lib/booking, documented in
// lib/contracts/http/booking.ts)
// ---------------------------------------------------------------------------

/** §7 code (and message) of a `shipment_type` outside 0, 1, 2 on `GET /v1/shipping/couriers` (lib/booking/couriers.ts `couriersQuery`). */
export const SHIPMENT_TYPE_MSG = "shipment_type must be 0 (forward), 1 or 2 (reverse)" satisfies ErrorCode;

/** Most couriers one `PATCH /v1/shipping/couriers/priority` may list (a rate card has a handful). */
export const MAX_RANKING = 100;

/** The events `POST /v1/sandbox/orders/{order_id}/events` accepts (issue 7), in lifecycle order. */
export const SANDBOX_EVENTS: readonly SimulatorEvent[] = [
	"picked_up",
	"in_transit",
	"out_for_delivery",
	"delivered",
	"undelivered",
	"rto_initiated",
	"rto_delivered",
];

/** Default `scan_limit` of `GET /v1/orders/{id}/tracking` (scans). */
export const SCAN_LIMIT_DEFAULT = 100;
/** Largest `scan_limit` of `GET /v1/orders/{id}/tracking` (scans). */
export const SCAN_LIMIT_MAX = 500;

/** A live shipment (booking attempt that holds an AWB). Money in rupees. */
export interface ShipmentRecord {
	order_id: number;
	attempt_id: number;
	logistic_id: number;
	courier_name: string;
	awb_number: string;
	state: BookingState;
	/** sort / routing code from the courier, if any */
	routing_code: string | null;
	charges: { freight_charge: number; cod_charge: number; shipping_charge_tax: number; total: number } | null;
	booked_at: string;
	/**
	 * true when the courier issues its own label file for this shipment
	 * (its adapter's setting when booked): documents serves the captured file,
	 * or 409 `carrier_label_missing`; absent or false → we draw the label.
	 */
	courier_label?: boolean;
}

/** 202 answer of `POST /v1/shipping/book`. Never carries the AWB. */
export type BookAnswer =
	| { status: "queued"; idem_key: string }
	| { status: "queued"; mode: "auto"; idem_key: string };

/** Answer of the worker step `booking.processAttempt`. */
export interface ProcessResult {
	attempt_id: number;
	state: string;
	awb_number?: string | null;
}

/**
 * 200 answer of `POST /v1/shipping/book/sync` (§4.2). `forward_id` is our
 * booking (shipment) id, `bk_<attempt id>` (the `idem_key` of the async
 * route); `label_url` the signed label link of the AWB (lib/shared/label-link.ts,
 * docs/decisions/0035-signed-label-links.md).
 */
export interface BookSyncAnswer {
	status: "booked";
	awb: string;
	forward_id: string;
	logistic_id: number;
	order_id: number;
	courier_name: string;
	label_url: string;
}

/** 200 answer of `POST /v1/shipping/cancel` (§4.2). `refunded` in rupees (0 when nothing was charged). */
export interface CancelAnswer {
	status: "cancelled";
	/** null when the booking was cancelled before the courier issued an AWB */
	awb: string | null;
	forward_id: string;
	refunded: number;
	order_id: number;
	mode: "auto" | "forced";
}

/** One courier of a merchant's ranking (§2.8). */
export interface CourierRankEntry {
	logistic_id: number;
	logistic_name: string;
	/** active on the rate card for this shipment type */
	enabled: boolean;
	/** position in the AUTO ranking, 1 = first; a permutation of 1..n */
	priority: number;
	/** how many pincodes of the India Post directory the courier serves for this shipment type */
	serviceable_pincodes: number;
}

/**
 * 200 answer of `GET /v1/shipping/couriers` and `PATCH /v1/shipping/couriers/priority`
 * (§4.2, §2.8). Inner shapes of `strategy`, `rules`, `restrictions` are ours
 * (the spec says "not shown"; docs/decisions/0019-courier-rankings.md).
 */
export interface CouriersAnswer {
	data: CourierRankEntry[];
	strategy: Record<string, unknown>;
	/** distinct pincodes served by at least one of the couriers */
	unique_pincodes: number;
	rules: unknown[];
	restrictions: Record<string, unknown>;
	/** the account's bookings of this shipment type over the last 30 days */
	shipments_30d: number;
}

/** An account's credit limit (ops action `booking.setCreditLimit`): rupees, null = no limit (post-paid). */
export interface CreditLimit {
	sender_id: number;
	credit_limit: number | null;
}

/** Booking's own view of an order's latest attempt (read-your-writes for `GET /v1/orders/status`). */
export interface OrderBookingState {
	attempt_id: number;
	state: BookingState;
	status: string;
	awb_number: string | null;
	courier: string | null;
	logistic_id: number;
	failure_reason: string | null;
	direction: ShipmentDirection;
}

/**
 * A live booked shipment as the buyer's tracking page shows it (issue 29; `booking.shipmentByAwb`):
 * nothing about the buyer. Times ISO-8601 UTC; `edd` an IST day.
 */
export interface AwbShipmentView {
	sender_id: number;
	order_id: number;
	awb_number: string;
	logistic_id: number;
	courier_name: string;
	/** the folded normalized status (`booked` before any scan) */
	status: ShipmentStatus;
	status_at: string | null;
	/** the delivery date the booking's quote promised (IST `YYYY-MM-DD`), or null */
	edd: string | null;
	/** the newest scans (at most `scan_limit`), oldest first */
	scans: { at: string; location: string; status: ShipmentStatus }[];
}

/** One question of `booking.pickupScans`: a pickup request's account, warehouse, courier and IST day. */
export interface PickupScanQuestion {
	sender_id: number;
	warehouse_id: number;
	logistic_id: number;
	/** IST calendar day `YYYY-MM-DD` */
	day: string;
}

export interface BookingActions {
	/** POST /v1/shipping/book (§4.2, §3, §7): 202 {@link BookAnswer}. */
	"booking.book": { params: RouteParams<Routes["booking.book"]>; result: BookAnswer };
	/** POST /v1/shipping/book/sync (§4.2, §3, §7): 200 {@link BookSyncAnswer}, or 202 {@link BookAnswer} when the courier call is handed to the worker. */
	"booking.bookSync": {
		params: RouteParams<Routes["booking.bookSync"]>;
		result: BookSyncAnswer | BookAnswer;
	};
	/** POST /v1/shipping/cancel (§4.2, §3, §7): 200 {@link CancelAnswer}. */
	"booking.cancel": { params: RouteParams<Routes["booking.cancel"]>; result: CancelAnswer };
	/** GET /v1/shipping/couriers (§4.2, §2.8). */
	"booking.couriers": { params: RouteParams<Routes["booking.couriers"]>; result: CouriersAnswer };
	/** PATCH /v1/shipping/couriers/priority (§4.2, §2.8): the re-read ranking. */
	"booking.setPriority": { params: RouteParams<Routes["booking.setPriority"]>; result: CouriersAnswer };
	/** Ops: sets (rupees ≥ 0) or removes (null) an account's credit limit; answers what is now set. */
	"booking.setCreditLimit": { params: CreditLimit; result: CreditLimit };
	/** Internal: the order's latest booking attempt as booking knows it, or null (none, or not that sender's). */
	"booking.orderState": { params: { sender_id: number; order_id: number }; result: OrderBookingState | null };
	/**
	 * Internal (intake's coalesced status reads, issue 32): `booking.orderState` of many orders at once (at most
	 * 500), answered in the order asked (null: no attempt of that sender).
	 */
	"booking.orderStates": {
		params: { orders: { sender_id: number; order_id: number }[] };
		result: (OrderBookingState | null)[];
	};
	/** Worker (BullMQ queue "booking"): books one attempt; at-least-once, idempotent. */
	"booking.processAttempt": { params: { attempt_id: number }; result: ProcessResult };
	/** Internal: the order's live booked shipment, or null. */
	"booking.getShipment": { params: { sender_id: number; order_id: number }; result: ShipmentRecord | null };
	/** Internal (signed label links, §4.4): the account and order of a live booked AWB, or null. */
	"booking.awbOwner": {
		params: { awb_number: string };
		result: { sender_id: number; order_id: number } | null;
	};
	/**
	 * Internal (warehouses' pickup sweep, issue 28): per question, the first pickup scan (UTC ISO)
	 * on IST day `day` of a shipment booked with `logistic_id` from `warehouse_id` of `sender_id`,
	 * and how many of its shipments were collected that day (answers in the questions' order).
	 */
	"booking.pickupScans": {
		params: { questions: PickupScanQuestion[] };
		result: { first_scan_at: string | null; shipments: number }[];
	};
	/**
	 * Internal (the buyer's tracking page, issue 29): the live booked shipment holding
	 * `awb_number`, or null (unknown, cancelled, failed).
	 */
	"booking.shipmentByAwb": {
		params: { awb_number: string; scan_limit?: number };
		result: AwbShipmentView | null;
	};
	/** Ops: delivers due outbox rows now. */
	"booking.relayOutbox": { params: Record<string, never>; result: { delivered: number; failed: number } };
	/** Ops: one sweeper pass now. */
	"booking.sweep": { params: Record<string, never>; result: { enqueued: number } };
	/**
	 * Internal (intake's `POST /v1/orders/{id}/hide`, §4.3): closes the order's
	 * open cancellation, if any, without contacting the courier; `closed` says
	 * whether one was open, `refunded` (rupees) is what the wallet ledger
	 * refunded for the order's cancelled bookings (0 when none).
	 */
	"booking.closeCancellation": {
		params: { sender_id: number; order_id: number };
		result: { closed: boolean; refunded: number };
	};
	// tracking (issue 7)
	/**
	 * Ops: one tracking poll pass now (lib/booking/tracking.ts `pollOnce`): leases
	 * the due open shipments, asks their couriers in batches, folds the scans.
	 */
	"booking.pollTracking": { params: Record<string, never>; result: PollResult };
	/**
	 * POST /v1/tracking/webhooks/{courier} (ours; no bearer token; the gateway's
	 * webhook route passes the raw body base64-encoded and the lower-cased
	 * headers): 200 {@link PushAnswer}; 404 `not_found`, 401 `invalid_signature`,
	 * 400 `validation_failed`.
	 */
	"booking.courierPush": {
		params: { courier: string; body: string; headers: Record<string, string> };
		result: PushAnswer;
	};
	/**
	 * Internal (documents' outbox after `POST /v1/documents/manifest`; spec §3
	 * manifest row): moves the sender's booked shipments with these AWBs to
	 * `manifested` through the tracking fold (never backwards; idempotent);
	 * `moved` counts the shipments whose status changed by this call.
	 */
	"booking.markManifested": { params: MarkManifestedParams; result: { moved: number } };
	/** POST /v1/sandbox/orders/{order_id}/events (docs/ARCHITECTURE.md §4; only with SANDBOX=1): 200 {@link SandboxEventAnswer}. */
	"booking.sandboxEvent": { params: RouteParams<Routes["booking.sandboxEvent"]>; result: SandboxEventAnswer };
	/** GET /v1/orders/{id}/tracking (§2.6, §4.3): 200 {@link TrackingAnswer}. */
	"booking.tracking": { params: RouteParams<Routes["booking.tracking"]>; result: TrackingAnswer };
}

/** Params of `booking.markManifested`. */
export interface MarkManifestedParams {
	sender_id: number;
	/** the manifest number (documents), carried by the status events */
	manifest_no: string;
	/** ISO-8601 UTC: when the manifest was made (the status time) */
	at: string;
	/** AWBs of the manifest (1–1000); other senders' and unknown ones are ignored */
	awb_numbers: string[];
}

/** Answer of `booking.pollTracking` (one poll pass). */
export interface PollResult {
	/** shipments leased (due, open) */
	leased: number;
	/** trackMany calls made */
	calls: number;
	/** scans read for known shipments (duplicates included) */
	accepted: number;
	/** shipments whose status changed */
	applied: number;
	/** trackMany calls that failed (courier unreachable, no adapter) */
	failed: number;
}

/**
 * 200 answer of the courier scan webhook: `accepted` scans read from the body
 * for shipments we know (re-sent ones included), `applied` shipments whose
 * status changed.
 */
export interface PushAnswer {
	accepted: number;
	applied: number;
}

/** 200 answer of `POST /v1/sandbox/orders/{order_id}/events`: the scan emitted and the status it folded into. */
export interface SandboxEventAnswer {
	order_id: number;
	awb_number: string;
	event: string;
	/** the shipment's status after the scan was polled and folded */
	status: ShipmentStatus;
	status_name: string;
}

/** One courier scan of `GET /v1/orders/{id}/tracking` (§2.6; fields: docs/decisions/0029-shipment-tracking.md). */
export interface TrackingScanView {
	/** ISO-8601 UTC */
	at: string;
	location: string;
	/** normalized status (lib/shared/shipment-status.ts) */
	status: ShipmentStatus;
	status_name: string;
	/** the courier's own status code */
	courier_code: string;
	/** the courier's own words */
	courier_status: string;
	remarks: string | null;
}

/** §2.6 tracking result: scans oldest first, capped at `scan_limit` (the newest kept) with `truncated`. */
export interface TrackingAnswer {
	scans: TrackingScanView[];
	truncated: boolean;
	scan_limit: number;
	status_name: string;
	order_status_id: number;
}

/**
 * `shipment.status_changed` (§6; docs/decisions/0033-shipment-events.md): a
 * shipment's folded status changed — a courier scan, or a handover manifest
 * (`manifested`, "Ready for pickup"). Published durably to the channel
 * `shipment.status_changed` (booking's outbox, lib/platform/channels.ts; at-least-once
 * per consumer group: dedupe on `event_id`) and broadcast as a Moleculer event
 * after commit (best effort, in-cluster).
 */
export interface ShipmentStatusChanged {
	/** `<attempt_id>-<seq>`: one per status change, the same on every redelivery */
	event_id: string;
	order_id: number;
	sender_id: number;
	awb_number: string;
	logistic_id: number;
	/** normalized status (lib/shared/shipment-status.ts) */
	status: ShipmentStatus;
	/** its display name, e.g. "Ready for pickup" for `manifested` */
	status_name: string;
	/** ISO-8601 UTC: when the status was reached (the scan's or the manifest's time) */
	status_at: string;
	/** per shipment, increasing: a consumer may drop an event older than one it applied */
	seq: number;
	/** the manifest number, when a manifest moved the shipment to `manifested` */
	manifest_no?: string;
	/** `undelivered` only (the NDR reason, issue 9): the courier's status words of the scan that reached it */
	courier_status?: string;
	/** `undelivered` only: the courier's remarks of that scan (e.g. "Consignee not available"), or null */
	remarks?: string | null;
}

/** Event `shipment.undelivered`: a failed delivery attempt (NDR) was scanned (after commit). */
export interface ShipmentUndelivered {
	order_id: number;
	sender_id: number;
	awb_number: string;
	logistic_id: number;
	/** the courier's remarks (NDR reason), else its status words */
	reason: string;
	/** ISO-8601 UTC scan time */
	at: string;
}

/**
 * Event `shipment.cancelled`: a booked shipment (one that had an AWB) was cancelled by
 * `POST /v1/shipping/cancel` (spec §4.2): broadcast once its cancellation committed, best effort
 * (lib/booking/cancel.ts). Notifications drops the buyer's cached tracking page of the AWB
 * (docs/decisions/0159-cancel-drops-tracking-page.md).
 */
export interface ShipmentCancelled {
	order_id: number;
	sender_id: number;
	awb_number: string;
	logistic_id: number;
}

/** Events booking broadcasts (lib/booking/tracking.ts, lib/booking/cancel.ts). */
export interface BookingEvents {
	"shipment.status_changed": ShipmentStatusChanged;
	"shipment.undelivered": ShipmentUndelivered;
	"shipment.cancelled": ShipmentCancelled;
}
