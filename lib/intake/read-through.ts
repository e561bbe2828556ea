/**
 * Read-your-writes of `GET /v1/orders/status` (spec §2.4, §4.2; issue 6):
 * once `POST /v1/shipping/book` answered 202 the order must never read
 * `not_shipped`, even while booking's order update has not reached intake yet
 * (booking commits the attempt and its outbox first, and the relay retries the
 * update until intake acknowledges it).
 *
 * Rule: when intake's stored state is one that a newer booking attempt would
 * replace (`not_shipped`, `failed`) and booking has read the order to book it
 * (in `intake.booking_requests`), `intake.status` asks booking
 * (`booking.orderState`, short timeout) for the order's latest attempt and
 * answers booking's state when that attempt is newer than the last update
 * intake applied. If booking cannot be asked (down, slow), intake answers what
 * it has: the read is best effort, the outbox still converges.
 */
import type { OrderBookingState, StatusRecord } from "../contracts";
import { bookedLabelUrl } from "../shared/label-link";
import type { StoredStatus } from "./store";

/** Timeout of the `booking.orderState` call of a status read (ms). */
export const BOOKING_STATE_TIMEOUT_MS = 1_000;

/**
 * Whether booking may know a newer attempt than intake's stored state: the
 * state is `not_shipped` or `failed` and booking has read the order to book it
 * (`booking_requested`: the order is in `intake.booking_requests`, entered
 * before booking can create an attempt; an order booking never read has no
 * attempt to read through, docs/decisions/0129-status-without-booking.md).
 */
export function mayLag(s: StoredStatus): boolean {
	return s.booking_requested && (s.record.state === "not_shipped" || s.record.state === "failed");
}

/**
 * The §2.4 record to answer: booking's state `b` when its attempt is newer than
 * the last one intake applied (`awb_number`/`courier`/`label_url` only when booked,
 * `failure_reason` only when failed; `order_no`, `created_at` intake's), else
 * intake's stored record.
 */
export function readThrough(s: StoredStatus, b: OrderBookingState | null): StatusRecord {
	if (!b || b.attempt_id <= (s.booking_attempt_id ?? 0)) return s.record;
	return {
		...s.record,
		state: b.state,
		status: b.status,
		awb_number: b.state === "booked" ? b.awb_number : null,
		courier: b.state === "booked" ? b.courier : null,
		failure_reason: b.state === "failed" ? b.failure_reason : null,
		label_url: b.state === "booked" ? bookedLabelUrl(b.state, b.awb_number) : null,
	};
}
