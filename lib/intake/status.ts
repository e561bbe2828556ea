/**
 * Order lifecycle `status` strings held on `intake.orders.status` (spec §2.4:
 * "present; its values are not enumerated in the contract").
 *
 * intake itself only writes {@link STATUS_NEW} (on create). Every later value is
 * reported by its owner through `intake.applyBookingUpdate` (booking: queued,
 * booked, failed, cancelled; documents: manifested; tracking: pickup onwards).
 * Values in use:
 *
 * | status | meaning |
 * |---|---|
 * | `new` | created, no booking requested (`state` not_shipped) |
 * | `booking_queued` | booking requested, worker pending (`booking_in_progress`) |
 * | `booked` | AWB issued (`booked`) |
 * | `booking_failed` | booking gave up (`failed`, see `failure_reason`) |
 * | `manifested` | on a handover manifest: Ready-for-pickup |
 * | `picked_up`, `in_transit`, `out_for_delivery`, `delivered` | courier scans |
 * | `undelivered` | failed delivery attempt (NDR) |
 * | `rto_initiated`, `rto_in_transit`, `rto_delivered` | return to origin |
 * | `cancelled` | booking cancelled at the courier |
 * | `lost`, `damaged` | courier exceptions |
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
