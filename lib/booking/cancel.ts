/**
 * Cancellation of a booking (spec §4.2 `POST /v1/shipping/cancel`, §3 row
 * "booked → cancel", §7) and booking's own view of an order's state
 * (`booking.orderState`, read-your-writes of `GET /v1/orders/status`).
 *
 * Decisions (docs/decisions/0015-cancel.md):
 * - Body `order_id` and `logistic_id`: JSON integers or digit strings, both
 *   required; anything else is 400 `validation_failed` naming each bad field.
 * - The booking cancelled is the order's latest attempt, and only when it is
 *   at the courier the body names (`logistic_id`); otherwise 409 `not_cancellable`.
 * - Attempt `queued` and never tried (no courier call yet): cancelled at once, nothing charged.
 *   Attempt `queued` again after a try (released after a transient courier
 *   failure, so the courier may hold an AWB): handled like `claimed`.
 *   Attempt `claimed` (courier call in flight): the cancel is recorded and
 *   answered 200 with `awb: null`; the worker never books it and cancels a late
 *   AWB at the courier. Attempt `booked`: cancelled at the courier first, then
 *   committed with the refund (the charged total) and the order update.
 * - Repeating a cancel answers the same 200 body; the refund is one ledger row
 *   per attempt, so it is never paid twice.
 * - The courier's "already cancelled" is a success (the simulator answers it so),
 *   which makes a retry after a crash between the courier and our commit safe.
 */
import type { Sequelize } from "sequelize";
import {
	type BookingState,
	broadcast,
	type Caller,
	type CallOptions,
	type CancelAnswer,
	call,
	type OrderBookingState,
} from "../contracts";
import { adapterFor, type CourierAdapter, CourierRefused } from "../couriers";
import { type ApiError, fail, validationFailed } from "../platform/errors";
import { parsePositiveInt } from "../shared/fields";
import { toRupees } from "../shared/money";
import { message } from "./deps";
import {
	type AttemptView,
	cancelQueued,
	latestAttempt,
	refundedPaise,
	requestCancel,
	settleCancel,
} from "./store/cancel";

/** Validated body of `POST /v1/shipping/cancel`. */
export interface CancelInput {
	order_id: number;
	logistic_id: number;
}

/**
 * Validates the cancel body: `order_id` and `logistic_id` required positive
 * integers (JSON integers or digit strings, untrimmed); other keys ignored.
 * @throws ApiError 400 `validation_failed`, `details` one `<field>: must be a positive integer` per bad field
 */
export function parseCancelInput(body: unknown): CancelInput {
	const b = body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
	const order_id = parsePositiveInt(b.order_id, { trim: false });
	const logistic_id = parsePositiveInt(b.logistic_id, { trim: false });
	const details: string[] = [];
	if (order_id === null) details.push("order_id: must be a positive integer");
	if (logistic_id === null) details.push("logistic_id: must be a positive integer");
	if (order_id === null || logistic_id === null) throw validationFailed(details);
	return { order_id, logistic_id };
}

/** 409 `not_cancellable` with why, for order `order_id`. */
function notCancellable(order_id: number, why: string): ApiError {
	return fail("not_cancellable", order_id, why);
}

/** What cancelling the order's latest attempt takes. */
export type CancelStep = "answer" | "cancel_queued" | "request_cancel" | "cancel_at_courier";

/**
 * Decides the step for the order's latest attempt `a` (undefined: none) and the
 * body's courier.
 * - `answer`: already cancelled, or ended (failed) after a cancel request: answer as before;
 * - `cancel_queued`, `request_cancel`, `cancel_at_courier`: by the attempt's state.
 * @throws ApiError 409 `not_cancellable` (no booking; latest booking failed; another courier)
 */
export function cancelStep(input: CancelInput, a: AttemptView | undefined): CancelStep {
	if (!a) return throwNot(input.order_id, "it has no booking");
	const cancelled = a.state === "cancelled" || (a.state === "failed" && a.cancel_requested_at !== null);
	if (a.logistic_id !== input.logistic_id) {
		const held = cancelled ? "its booking was cancelled" : `its booking is ${a.state}`;
		return throwNot(
			input.order_id,
			`${held} at ${a.courier_name} (logistic_id ${a.logistic_id}), not at logistic_id ${input.logistic_id}`,
		);
	}
	if (cancelled) return "answer";
	switch (a.state) {
		case "queued":
			// queued again after a try: the courier may hold an AWB for it; the worker settles it
			return a.tries > 0 ? "request_cancel" : "cancel_queued";
		case "claimed":
			return "request_cancel";
		case "booked":
			return "cancel_at_courier";
		default:
			return throwNot(input.order_id, "its latest booking failed; there is nothing to cancel");
	}
}

function throwNot(order_id: number, why: string): never {
	throw notCancellable(order_id, why);
}

/** The 200 body (§4.2) for attempt `a`; `refunded_paise` from the ledger, answered in rupees. */
export function cancelAnswer(a: AttemptView, refunded_paise: number): CancelAnswer {
	return {
		status: "cancelled",
		awb: a.state === "booked" || a.state === "cancelled" ? a.awb_number : null,
		forward_id: `bk_${a.attempt_id}`,
		refunded: toRupees(refunded_paise),
		order_id: a.order_id,
		mode: a.mode,
	};
}

/**
 * Cancels AWB `a.awb_number` at its courier (adapter from `rates.getCourier`).
 * The courier's "already cancelled" is success.
 * @throws ApiError 422 `cancel_failed` with the courier's words (refused), or
 *   when the courier is no longer configured / has no integration;
 *   503 `cancel_unavailable` (rates or the courier unreachable; nothing changed, retry)
 */
export async function cancelAtCourier(via: Caller, a: AttemptView, opts: CallOptions): Promise<void> {
	const awb = a.awb_number ?? "";
	const courier = await call(
		via,
		"rates.getCourier",
		{ logistic_id: a.logistic_id },
		{ ...opts, unavailable: "cancel_unavailable" },
	);
	let adapter: CourierAdapter | null = null;
	try {
		adapter = courier && adapterFor(courier);
	} catch {
		/* no integration */
	}
	if (!adapter) {
		throw fail("cancel_failed", { no_integration: a.courier_name, awb });
	}
	let ok: boolean;
	try {
		ok = (await adapter.cancel(awb)).cancelled;
	} catch (err) {
		if (err instanceof CourierRefused) throw fail("cancel_failed", { refused: err.message });
		throw fail("cancel_unavailable", { courier: a.courier_name, awb });
	}
	if (!ok) throw fail("cancel_failed", { not_done: a.courier_name, awb });
}

/** What {@link cancelBooking} needs from the booking service. */
export interface CancelDeps {
	db: Sequelize;
	via: Caller;
	/** options of calls to other services (timeout) */
	callOptions: CallOptions;
	/** delivers committed outbox rows now (failures are retried by the relay later) */
	relay(ids: number[]): Promise<void>;
	/** logs a warning (a `shipment.cancelled` broadcast that failed) */
	warn(line: string): void;
}

/**
 * Broadcasts `shipment.cancelled` `{order_id, sender_id, awb_number, logistic_id}` for attempt `a`,
 * whose cancellation committed, when it held an AWB (it was booked; without an AWB there was no
 * shipment to show, and nothing is sent; docs/decisions/0159-cancel-drops-tracking-page.md). Best
 * effort: a failure is passed to `warn`, never thrown (the cancel stands; what the event clears
 * expires by itself).
 */
export async function announceCancelled(
	via: Caller,
	a: AttemptView,
	warn: (line: string) => void,
): Promise<void> {
	if (!a.awb_number) return;
	try {
		await broadcast(via, "shipment.cancelled", {
			order_id: a.order_id,
			sender_id: a.sender_id,
			awb_number: a.awb_number,
			logistic_id: a.logistic_id,
		});
	} catch (err) {
		warn(`shipment.cancelled of AWB ${a.awb_number} not sent: ${message(err)}`);
	}
}

/** Rounds of re-reading the attempt after losing a race with the worker before answering 503. */
const MAX_ROUNDS = 5;

/**
 * Cancels the latest booking of the sender's order `input.order_id` (ownership
 * already checked) and answers the §4.2 200 body. Each step is a conditional
 * UPDATE; a step that loses a race with the worker (queued → claimed, claimed →
 * booked) re-reads the attempt and takes the step of its new state. A booked
 * attempt's cancellation, once committed, is announced ({@link announceCancelled}).
 * @throws ApiError 409 `not_cancellable`, 422 `cancel_failed`, 503 `cancel_unavailable`
 */
export async function cancelBooking(
	deps: CancelDeps,
	sender: number,
	input: CancelInput,
): Promise<CancelAnswer> {
	const { db } = deps;
	for (let round = 0; round < MAX_ROUNDS; round++) {
		const a = await latestAttempt(db, sender, input.order_id);
		const step = cancelStep(input, a);
		const at = a as AttemptView;
		if (step === "answer") return cancelAnswer(at, await refundedPaise(db, at.attempt_id));
		if (step === "request_cancel") {
			if (await requestCancel(db, at.attempt_id)) return cancelAnswer(at, 0);
			continue;
		}
		if (step === "cancel_at_courier") await cancelAtCourier(deps.via, at, deps.callOptions);
		const ids = step === "cancel_queued" ? await cancelQueued(db, at) : await settleCancel(db, at);
		if (ids) {
			await deps.relay(ids);
			// a booked shipment's page may be kept by the buyer's side: it goes now, not when its keep expires
			await announceCancelled(deps.via, at, deps.warn);
		}
		// committed (or settled by a concurrent cancel): the next round answers from the cancelled attempt
	}
	throw fail("cancel_unavailable", { order_id: input.order_id });
}

/** Order state of an attempt state (§2.4): queued/claimed are booking_in_progress, cancelled is not_shipped. */
const STATE_OF: Record<AttemptView["state"], { state: BookingState; status: string }> = {
	queued: { state: "booking_in_progress", status: "booking_queued" },
	claimed: { state: "booking_in_progress", status: "booking_queued" },
	booked: { state: "booked", status: "booked" },
	failed: { state: "failed", status: "booking_failed" },
	cancelled: { state: "not_shipped", status: "cancelled" },
};

/**
 * Booking's view of attempt `a` for `booking.orderState`: state and status as
 * intake would hold them after applying the attempt's latest order update;
 * AWB and courier only when booked, failure reason only when failed.
 */
export function orderStateOf(a: AttemptView): OrderBookingState {
	const { state, status } = STATE_OF[a.state];
	return {
		attempt_id: a.attempt_id,
		state,
		status,
		awb_number: state === "booked" ? a.awb_number : null,
		courier: state === "booked" ? a.courier_name : null,
		logistic_id: a.logistic_id,
		failure_reason: state === "failed" ? a.failure_reason : null,
		direction: a.direction,
	};
}
