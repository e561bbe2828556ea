/**
 * Order lifecycle `status` strings held on `intake.orders.status` (spec §2.4:
 * "present; its values are not enumerated in the contract").
 *
 * The vocabulary, its words, ids, buckets and fold rule live in ONE place:
 * lib/shared/shipment-status.ts (`LifecycleStatus` = the intake-only `new`,
 * `booking_queued`, `booking_failed` plus every normalized `ShipmentStatus`
 * from `booked` to `cancelled`; its table says which `GET /v1/orders` bucket
 * each belongs to, and migration 0003 stores that bucket as a generated
 * column). This module only keeps the status groups intake's own SQL needs.
 *
 * intake itself only writes {@link STATUS_NEW} (on create). Every later value is
 * reported by its owner through `intake.applyBookingUpdate` (booking: queued,
 * booked, failed, cancelled and the courier statuses it folds from scans;
 * documents: manifested).
 */

/** Status of a freshly created order. */
export const STATUS_NEW = "new";

/** Statuses after which an order is closed (no longer "ships from" its warehouse). */
export const CLOSED_STATUSES = ["delivered", "rto_delivered", "cancelled", "lost", "damaged"] as const;

/** Statuses of a booked order that the courier has already collected. */
export const PICKED_UP_STATUSES = [
	"picked_up",
	"in_transit",
	"out_for_delivery",
	"undelivered",
	"rto_initiated",
	"rto_in_transit",
] as const;

/** Booking states of an order not (yet) handed to a courier. */
export const UNSHIPPED_STATES = ["not_shipped", "failed", "booking_in_progress"] as const;
