/**
 * The booking worker (docs/ARCHITECTURE.md §5 durability, points 2, 3, 4 and
 * 5; spec §4.2, §3): runs a claimed attempt at its courier (the attempt id as
 * the client reference), settles earlier ambiguous attempts of the order first,
 * falls over (AUTO) to the next ranked courier, cancels a late AWB when a
 * cancel was requested meanwhile, and settles (for the sweeper) attempts left
 * unsettled by asking the courier about their reference. Plain functions over
 * {@link BookingDeps}; timings in milliseconds, charges in paise; SQL in
 * lib/booking/store.
 */

import {
	type Caller,
	call,
	type FailureCode,
	type OrderRecord,
	type ProcessResult,
	type Warehouse,
} from "../contracts";
import {
	adapterFor,
	type BookRequest,
	type BookResult,
	type CourierAdapter,
	CourierDuplicate,
	CourierRefused,
	CourierUnavailable,
	PickupLocationUnknown,
	pickupLocationOf,
} from "../couriers";
import { ApiError } from "../platform/errors";
import { countBooking } from "../platform/metrics";
import { assertNotB2B } from "../shared/b2b";
import { laneOf } from "../shared/lane";
import { type BookingDeps, message } from "./deps";
import { chainAfter, chainReason, durationWords, nextCourier } from "./fallover";
import { rankCouriers } from "./ranking";
import { bookRequestOf } from "./shipment";
import {
	type AttemptRow,
	ambiguousAttempts,
	attemptById,
	chargesOf,
	claimAttempt,
	failOver,
	markBooked,
	markFailed,
	markLateCancelled,
	releaseAttempt,
	settleAmbiguous,
	takeOverUnsettled,
	unsettledAttempts,
} from "./store";

/**
 * Thrown inside the worker to end an attempt as failed (plain words).
 * `fallover`: a failure of this courier (refusal, no integration, gone), after
 * which an AUTO booking moves on to the next ranked courier. `code`: the
 * failure's class for the unshipped queue (default `booking_error`).
 */
export class AttemptFailed extends Error {
	constructor(
		readonly reason: string,
		readonly opts: { ambiguous?: boolean; fallover?: boolean; code?: FailureCode } = {},
	) {
		super(reason);
	}
}

/**
 * How a claimed attempt ended, or moved on, after `settleAttempt`. `outbox`:
 * the ids committed with it (order updates, the next attempt's job). `lost`:
 * the claim was no longer this one's (another worker or the sweeper took it);
 * `attempt` is then the current row.
 */
export type Outcome =
	| { kind: "booked"; attempt: AttemptRow; awb: string; outbox: number[] | null }
	| { kind: "failed"; attempt: AttemptRow; reason: string; outbox: number[] }
	| { kind: "cancelled"; attempt: AttemptRow; outbox: number[] }
	| { kind: "next"; attempt: AttemptRow; next: AttemptRow; outbox: number[] }
	| { kind: "lost"; attempt: AttemptRow };

/** What the worker read for an attempt (kept for an AUTO fall-over). */
export interface Seen {
	order?: OrderRecord;
	warehouse?: Warehouse;
}

/**
 * The worker step for attempt `id` (the `booking.processAttempt` action, one
 * BullMQ job of queue "booking"; at-least-once, idempotent): claims the
 * attempt (queued → claimed, or a stale claim) and settles it
 * ({@link settleAttempt}), relaying the committed outbox rows. An attempt not
 * claimable is answered as it stands (`missing` when absent); one claimed by
 * another worker throws (BullMQ retries) unless this is the last try.
 * `attemptsMade`: the job's tries before this one (undefined outside a job).
 * A transient failure releases the claim and is rethrown (retry with backoff);
 * on the last try (`jobAttempts`) the attempt ends failed in plain words
 * (AUTO: the whole chain), marked ambiguous when the courier was unreachable.
 * Returns `{attempt_id, state, awb_number?}`.
 */
export async function processAttempt(
	deps: BookingDeps,
	via: Caller,
	id: number,
	attemptsMade: number | undefined,
): Promise<ProcessResult> {
	const lastTry = attemptsMade !== undefined && attemptsMade + 1 >= deps.timings.jobAttempts;
	const a = await claimAttempt(deps.db, id, deps.timings.claimStaleMs);
	if (!a) {
		const cur = await attemptById(deps.db, id);
		if (!cur) return { attempt_id: id, state: "missing" };
		if (cur.state === "claimed" && !lastTry) {
			throw new Error(`attempt ${id} is being processed by another worker`);
		}
		return { attempt_id: id, state: cur.state, awb_number: cur.awb_number };
	}
	try {
		const out = await settleAttempt(deps, via, a, 0);
		if (out.kind === "lost") {
			return { attempt_id: id, state: out.attempt.state, awb_number: out.attempt.awb_number };
		}
		deps.finish(out.outbox);
		if (out.kind === "booked") return { attempt_id: id, state: "booked", awb_number: out.awb };
		return { attempt_id: id, state: out.kind === "cancelled" ? "cancelled" : "failed" };
	} catch (err) {
		if (lastTry) {
			const courierDown = err instanceof CourierUnavailable;
			const reason = courierDown
				? `${a.courier_name} could not be reached after ${a.tries} tries; no AWB was issued`
				: `the booking could not be completed after ${a.tries} tries (a service was unavailable)`;
			const whole = a.chain.length ? chainReason(chainAfter(a, reason)) : reason;
			const out = await endFailed(
				deps,
				a,
				whole,
				courierDown,
				courierDown ? "courier_unreachable" : "booking_error",
			);
			if (out.kind !== "lost") deps.finish(out.outbox);
			return { attempt_id: id, state: out.attempt.state };
		}
		await releaseAttempt(deps.db, a, message(err));
		throw err;
	}
}

/**
 * Settles attempts unsettled (queued or claimed) for longer than
 * `unsettledMs` since their creation: takes each over (a new claim, so a
 * worker still holding the old one can no longer settle it) and asks the
 * courier about our reference. Returns how many settled.
 */
export async function resolveUnsettled(deps: BookingDeps): Promise<number> {
	const ms = deps.timings.unsettledMs;
	let settled = 0;
	for (const id of await unsettledAttempts(deps.db, ms)) {
		const a = await takeOverUnsettled(deps.db, id, ms);
		if (!a) continue;
		try {
			const ids = await confirmWithCourier(deps, a);
			if (ids) {
				settled++;
				deps.finish(ids);
			}
		} catch (err) {
			deps.logger.warn(`booking sweeper: attempt ${id} not settled: ${message(err)}`);
			await releaseAttempt(deps.db, a, message(err));
		}
	}
	return settled;
}

/**
 * Ends an unsettled attempt `a` (claimed by the sweeper) by what the courier
 * knows of our reference: booked → booked and charged (or, cancel requested,
 * the AWB cancelled at the courier and the attempt cancelled); cancel
 * requested and the AWB already cancelled at the courier (another pod's
 * sweeper cancelled it, then lost the attempt to this claim) → cancelled with
 * that AWB on record; cancelled or
 * unknown → failed "…could not be confirmed with the courier within
 * <BOOKING_UNSETTLED_MS>; no AWB was issued"; courier unreachable → failed,
 * marked ambiguous (a later attempt of the order looks it up again and
 * cancels what it finds) — except an attempt whose cancel was requested: the
 * look-up error is rethrown (released, asked again by the next sweeper pass),
 * since no later attempt would cancel an AWB the courier may hold. Returns the committed outbox ids (null: settled meanwhile).
 */
export async function confirmWithCourier(deps: BookingDeps, a: AttemptRow): Promise<number[] | null> {
	const within = durationWords(deps.timings.unsettledMs);
	const adapter = await adapterOf(deps, deps.broker, a.logistic_id);
	let found: BookResult | null = null;
	if (adapter) {
		try {
			found = await adapter.lookupByReference(String(a.attempt_id));
		} catch (err) {
			deps.logger.warn(`booking ${a.attempt_id}: look-up failed: ${message(err)}`);
			// A cancelled booking is never closed while its courier may hold a live AWB: no later attempt of
			// the order would look it up again. Rethrown: resolveUnsettled releases it, the next pass asks again.
			if (a.cancel_requested_at) throw err;
			const reason = `${a.courier_name} could not be reached to confirm the booking within ${within}; any AWB it issued is cancelled before the order is booked again`;
			return counted(a, "failed", await markFailed(deps.db, a, reason, true, "courier_unreachable"));
		}
	}
	if (a.cancel_requested_at && adapter) {
		const out = await cancelFound(deps, adapter, a, found);
		if (out) return out.kind === "lost" ? null : out.outbox;
	}
	if (found?.status === "booked" && adapter) {
		return counted(
			a,
			"booked",
			await markBooked(deps.db, a, found.awb_number, found.routing_code, adapter.issuesOwnLabel),
		);
	}
	const reason = `${a.courier_name}: the booking could not be confirmed with the courier within ${within}; no AWB was issued`;
	return counted(
		a,
		a.cancel_requested_at ? "cancelled" : "failed",
		await markFailed(deps.db, a, reason, found === null, "courier_unreachable"),
	);
}

/**
 * Counts attempt `a` settled with `outcome` in `msa_bookings_total` (per
 * courier; lib/platform/metrics.ts) when `ids` (the outbox rows of its settlement) is
 * not null, i.e. this call settled it. Answers `ids`.
 */
function counted(
	a: AttemptRow,
	outcome: "booked" | "failed" | "cancelled",
	ids: number[] | null,
): number[] | null {
	if (ids) countBooking(a.courier_name, outcome);
	return ids;
}

/** The adapter of courier `logistic_id`; null when the courier is gone or has no integration. */
export async function adapterOf(
	deps: BookingDeps,
	via: Caller,
	logistic_id: number,
): Promise<CourierAdapter | null> {
	const c = await call(via, "rates.getCourier", { logistic_id }, deps.callOptions());
	try {
		return c ? adapterFor(c) : null;
	} catch {
		return null;
	}
}

/**
 * Books a claimed attempt at its courier and returns the courier's answer
 * (and the adapter); throws AttemptFailed for a definitive failure
 * (`fallover` when it is this courier's), anything else for a transient one.
 * Fills `seen` with the order and warehouse it read.
 *
 * The order, its warehouses and the courier are read afresh here although
 * `book` read them moments before: a job may run minutes later (retries,
 * sweeper), on another pod, and must refuse what changed meanwhile (order
 * gone or B2B — spec §1 has the worker refuse `unsupported_channel` —,
 * warehouse retired, courier deactivated). The attempt row therefore holds
 * no copy of them (nor the consignee's address).
 */
export async function runAttempt(
	deps: BookingDeps,
	via: Caller,
	a: AttemptRow,
	seen: Seen,
): Promise<{ result: BookResult; adapter: CourierAdapter }> {
	const opts = deps.callOptions();
	const order = await call(via, "intake.getOrder", { sender_id: a.sender_id, order_id: a.order_id }, opts);
	if (!order) throw new AttemptFailed("the order no longer exists", { code: "order_changed" });
	try {
		assertNotB2B(order);
	} catch (err) {
		throw new AttemptFailed(`unsupported_channel: ${message(err)}`, { code: "order_changed" });
	}
	const warehouse = order.pickup_address_id
		? await call(via, "warehouses.resolve", { sender_id: a.sender_id, id: order.pickup_address_id }, opts)
		: null;
	if (!warehouse)
		throw new AttemptFailed("the pickup warehouse is no longer active", { code: "pickup_unavailable" });
	seen.order = order;
	seen.warehouse = warehouse;
	const rto =
		order.rto_address_id && order.rto_address_id !== order.pickup_address_id
			? await call(via, "warehouses.resolve", { sender_id: a.sender_id, id: order.rto_address_id }, opts)
			: null;
	const courier = await call(via, "rates.getCourier", { logistic_id: a.logistic_id }, opts);
	if (!courier?.active) {
		throw new AttemptFailed(`${a.courier_name} is no longer available`, { fallover: true });
	}
	let adapter: CourierAdapter;
	try {
		adapter = adapterFor(courier);
	} catch {
		throw new AttemptFailed(`${a.courier_name} has no courier integration`, { fallover: true });
	}
	await settlePrevious(deps, via, a);
	const req = bookRequestOf(a.attempt_id, order, warehouse, rto);
	try {
		return { result: await bookAt(adapter, req, warehouse), adapter };
	} catch (err) {
		if (err instanceof CourierDuplicate)
			return { result: await duplicateBooked(deps, a, adapter, req, err), adapter };
		if (err instanceof CourierRefused) {
			throw new AttemptFailed(`${courier.logistic_name} refused: ${err.message}`, {
				fallover: true,
				code: "courier_refused",
			});
		}
		if (!(err instanceof CourierUnavailable)) throw err;
		// Ambiguous: the courier may have booked it. Ask before retrying.
		const found = await adapter.lookupByReference(req.reference).catch((e2) => {
			deps.logger.warn(`booking ${a.attempt_id}: look-up failed: ${message(e2)}`);
			return null;
		});
		if (!found) throw err;
		if (found.status === "cancelled") {
			throw new AttemptFailed(`${courier.logistic_name} reports the shipment as cancelled`);
		}
		deps.logger.info(`booking ${a.attempt_id}: reconciled by reference look-up after: ${err.message}`);
		return { result: found, adapter };
	}
}

/**
 * The courier refused a create because it already holds a shipment under our
 * reference (an earlier create of this attempt went through: unknown
 * outcome, crash). The parcel is booked there, so the answer is that
 * booking: the AWB the courier named, else what a look-up by reference
 * finds. When neither gives an AWB (a courier without look-up, Xpressbees),
 * the attempt fails WITHOUT falling over to another courier (that would ship
 * the parcel twice), code `booking_error`, with words for the merchant and
 * an error log line for ops to reconcile the shipment at the courier.
 * @throws AttemptFailed as above; CourierUnavailable when the look-up cannot reach the courier (retried)
 */
async function duplicateBooked(
	deps: BookingDeps,
	a: AttemptRow,
	adapter: CourierAdapter,
	req: BookRequest,
	err: CourierDuplicate,
): Promise<BookResult> {
	if (err.awb_number) {
		deps.logger.info(`booking ${a.attempt_id}: ${a.courier_name} already held AWB ${err.awb_number} for it`);
		return { reference: req.reference, awb_number: err.awb_number, routing_code: null, status: "booked" };
	}
	let found: BookResult | null = null;
	try {
		found = await adapter.lookupByReference(req.reference);
	} catch (e2) {
		if (e2 instanceof CourierUnavailable) throw e2;
		deps.logger.warn(`booking ${a.attempt_id}: look-up after a duplicate refused: ${message(e2)}`);
	}
	if (found?.status === "booked") return found;
	deps.logger.error(
		`booking ${a.attempt_id}: ${a.courier_name} holds a shipment for reference ${req.reference} (order ${a.order_id}) ` +
			`whose AWB it did not give (${err.message}); reconcile it at the courier`,
	);
	throw new AttemptFailed(
		`${a.courier_name} already holds a shipment for this booking but did not give its AWB; it was not booked with another courier. Support will reconcile it with ${a.courier_name}`,
		{ code: "booking_error" },
	);
}

/**
 * Runs claimed attempt `a` to its outcome (see {@link Outcome}); throws on a
 * transient failure (the caller releases the claim and retries).
 * - cancel requested before the courier call: the reference is looked up,
 *   a late AWB cancelled at the courier, the attempt `cancelled`;
 * - the courier issued an AWB: booked and charged (markBooked), unless a
 *   cancel was requested meanwhile (then the AWB is cancelled at the
 *   courier, the attempt `cancelled`, nothing charged) or the claim was
 *   lost to a settlement without this AWB (then the AWB is cancelled);
 * - a definitive failure of this courier on an AUTO booking: falls over to
 *   the next ranked courier (its job due after `enqueueDelayMs`; the sync
 *   path books it inline); none left → failed with the whole chain;
 * - any other definitive failure: failed (plain words).
 */
export async function settleAttempt(
	deps: BookingDeps,
	via: Caller,
	a: AttemptRow,
	enqueueDelayMs: number,
): Promise<Outcome> {
	if (a.cancel_requested_at) return settleCancelRequested(deps, via, a);
	const seen: Seen = {};
	let booked: { result: BookResult; adapter: CourierAdapter };
	try {
		booked = await runAttempt(deps, via, a, seen);
	} catch (err) {
		if (!(err instanceof AttemptFailed)) throw err;
		let reason = err.reason;
		if (a.mode === "auto" && err.opts.fallover && seen.order && seen.warehouse) {
			const moved = await fallOver(deps, via, a, err.reason, seen.order, seen.warehouse, enqueueDelayMs);
			if (typeof moved !== "string") return moved;
			reason = moved;
		} else if (a.chain.length) {
			reason = chainReason(chainAfter(a, err.reason));
		}
		return endFailed(deps, a, reason, err.opts.ambiguous ?? false, err.opts.code);
	}
	const { result, adapter } = booked;
	const ids = counted(
		a,
		"booked",
		await markBooked(deps.db, a, result.awb_number, result.routing_code, adapter.issuesOwnLabel),
	);
	if (ids) return { kind: "booked", attempt: a, awb: result.awb_number, outbox: ids };
	const cur = await attemptById(deps.db, a.attempt_id);
	if (cur?.state === "claimed" && cur.tries === a.tries && cur.cancel_requested_at) {
		return cancelLate(deps, adapter, a, result.awb_number);
	}
	if (cur && cur.awb_number !== result.awb_number && (cur.state === "failed" || cur.state === "cancelled")) {
		// settled without this AWB (the sweeper found nothing): the AWB must not stay live
		await adapter
			.cancel(result.awb_number)
			.then(() => deps.logger.warn(`booking ${a.attempt_id}: late AWB ${result.awb_number} cancelled`))
			.catch((e) =>
				deps.logger.error(
					`booking ${a.attempt_id}: late AWB ${result.awb_number} not cancelled: ${message(e)}`,
				),
			);
	}
	return { kind: "lost", attempt: cur ?? a };
}

/**
 * AUTO fall-over after attempt `a`'s courier failed definitively with
 * `reason`: the next courier of the account's ranking that prices the lane
 * and was not tried yet gets a new attempt, created with `a`'s failure in
 * one transaction (failOver). Returns the `next` outcome, or the plain-words
 * failure_reason of the whole booking when it ends here (no courier left:
 * the chain; the next courier over the credit limit).
 */
export async function fallOver(
	deps: BookingDeps,
	via: Caller,
	a: AttemptRow,
	reason: string,
	order: OrderRecord,
	warehouse: Warehouse,
	enqueueDelayMs: number,
): Promise<Outcome | string> {
	const chain = chainAfter(a, reason);
	const opts = deps.callOptions("rate_unavailable");
	const [ranked, q] = await Promise.all([
		rankCouriers(deps.db, via, a.sender_id, a.direction, opts),
		call(via, "rates.quote", laneOf(order, warehouse), opts),
	]);
	const pick = nextCourier(a, ranked, q.data ?? []);
	if (!pick) return chainReason(chain);
	try {
		const res = await failOver(deps.db, a, reason, {
			order_id: a.order_id,
			sender_id: a.sender_id,
			logistic_id: pick.courier.logistic_id,
			courier_name: pick.courier.logistic_name,
			mode: "auto",
			charges: chargesOf(pick.quote),
			edd: pick.quote.edd,
			direction: a.direction,
			via: a.via,
			chain,
			enqueueDelayMs,
		});
		// lost claim or cancel requested: endFailed settles (or finds it settled)
		if (!res) return chainReason(chain);
		deps.logger.info(
			`booking ${a.attempt_id}: ${reason}; falling over to ${pick.courier.logistic_name} (attempt ${res.attempt.attempt_id})`,
		);
		return { kind: "next", attempt: a, next: res.attempt, outbox: res.outbox };
	} catch (err) {
		if (err instanceof ApiError && err.type === "credit_limit_exceeded") {
			return `${chainReason(chain)}; ${pick.courier.logistic_name} not tried: ${err.message}`;
		}
		throw err;
	}
}

/**
 * Ends claimed attempt `a` as failed with `reason` and failure `code` (default
 * `booking_error`), or cancelled if a cancel was requested; `lost` when no longer ours.
 */
export async function endFailed(
	deps: BookingDeps,
	a: AttemptRow,
	reason: string,
	ambiguous: boolean,
	code?: FailureCode,
): Promise<Outcome> {
	const ids = await markFailed(deps.db, a, reason, ambiguous, code);
	const cur = (await attemptById(deps.db, a.attempt_id)) ?? a;
	if (!ids) return { kind: "lost", attempt: cur };
	countBooking(a.courier_name, cur.state === "cancelled" ? "cancelled" : "failed");
	return cur.state === "cancelled"
		? { kind: "cancelled", attempt: cur, outbox: ids }
		: { kind: "failed", attempt: cur, reason: cur.failure_reason ?? reason, outbox: ids };
}

/**
 * Claimed attempt `a` whose cancel was requested before its courier call:
 * asks the courier about our reference (an earlier try may have booked
 * it), cancels a booked AWB there, and ends the attempt `cancelled`.
 * Throws (retry) while the courier cannot be reached.
 */
export async function settleCancelRequested(deps: BookingDeps, via: Caller, a: AttemptRow): Promise<Outcome> {
	const adapter = await adapterOf(deps, via, a.logistic_id);
	const found = adapter ? await adapter.lookupByReference(String(a.attempt_id)) : null;
	const out = adapter ? await cancelFound(deps, adapter, a, found) : null;
	return out ?? lateCancelled(deps, a, null, "cancelled before the courier issued an AWB");
}

/**
 * Ends attempt `a`, whose cancel was requested, by what its courier reports
 * of its reference (`found`): booked → the late AWB cancelled there
 * ({@link cancelLate}); already cancelled there (another pod's sweeper
 * cancelled it, then lost the attempt to this claim) → cancelled with that
 * AWB on record. Null when the courier holds no AWB for it (the caller ends it).
 */
async function cancelFound(
	deps: BookingDeps,
	adapter: CourierAdapter,
	a: AttemptRow,
	found: BookResult | null,
): Promise<Outcome | null> {
	if (found?.status === "booked") return cancelLate(deps, adapter, a, found.awb_number);
	if (found?.status !== "cancelled") return null;
	const note = `cancelled while booking: late AWB ${found.awb_number} already cancelled at the courier`;
	return lateCancelled(deps, a, found.awb_number, note);
}

/**
 * claimed → cancelled with `awb` (null: none issued) and `note` on record
 * (store `markLateCancelled`), counted in `msa_bookings_total` once; `lost`
 * when the attempt is no longer ours.
 */
async function lateCancelled(
	deps: BookingDeps,
	a: AttemptRow,
	awb: string | null,
	note: string,
): Promise<Outcome> {
	const ids = counted(a, "cancelled", await markLateCancelled(deps.db, a, awb, note));
	return ids
		? { kind: "cancelled", attempt: a, outbox: ids }
		: { kind: "lost", attempt: (await attemptById(deps.db, a.attempt_id)) ?? a };
}

/**
 * The courier issued `awb` for attempt `a` after its cancel was requested:
 * cancels the AWB at the courier, then ends the attempt `cancelled` (no
 * charge; order update not_shipped / cancelled). A courier refusing the
 * cancel is recorded in the note (and logged); unreachable → throws (retry).
 */
export async function cancelLate(
	deps: BookingDeps,
	adapter: CourierAdapter,
	a: AttemptRow,
	awb: string,
): Promise<Outcome> {
	let note = `cancelled while booking: late AWB ${awb} cancelled at the courier`;
	try {
		await adapter.cancel(awb);
	} catch (err) {
		if (!(err instanceof CourierRefused)) throw err;
		note = `cancelled while booking: late AWB ${awb} could not be cancelled at the courier: ${err.message}`;
		deps.logger.error(`booking ${a.attempt_id}: ${note}`);
	}
	return lateCancelled(deps, a, awb, note);
}

/** Books; an unknown pickup location is registered once, then the booking is retried. */
async function bookAt(adapter: CourierAdapter, req: BookRequest, warehouse: Warehouse): Promise<BookResult> {
	try {
		return await adapter.book(req);
	} catch (err) {
		if (!(err instanceof PickupLocationUnknown)) throw err;
		await adapter.registerWarehouse(pickupLocationOf(warehouse));
		return adapter.book(req);
	}
}

/**
 * Settles earlier attempts of the same order that failed with the courier
 * unreachable: looks their reference up and cancels a shipment the courier
 * did book, so the order never holds two live AWBs. An earlier courier that
 * is gone or has no integration settles as such. Throws a plain Error
 * (retry) while that courier cannot be reached; AttemptFailed when it
 * refuses the cancel.
 */
export async function settlePrevious(deps: BookingDeps, via: Caller, a: AttemptRow): Promise<void> {
	// known at the claim: no earlier ambiguous attempt (none can become one while `a` is live)
	if (a.earlier_ambiguous === false) return;
	for (const p of await ambiguousAttempts(deps.db, a.order_id, a.attempt_id)) {
		const c = await call(via, "rates.getCourier", { logistic_id: p.logistic_id }, deps.callOptions());
		let adapter: CourierAdapter | null = null;
		try {
			adapter = c && adapterFor(c);
		} catch {
			/* no integration: nothing to look up */
		}
		if (!c || !adapter) {
			const note = c ? "courier has no integration" : "courier no longer configured";
			await settleAmbiguous(deps.db, p.attempt_id, note);
			continue;
		}
		const earlier = `an earlier booking at ${c.logistic_name}`;
		let note: string;
		let awb: string | undefined;
		try {
			const found = await adapter.lookupByReference(String(p.attempt_id));
			if (found?.status === "booked") {
				awb = found.awb_number;
				await adapter.cancel(awb);
				note = `late AWB ${awb} cancelled at the courier`;
			} else note = found ? "already cancelled at the courier" : "unknown to the courier";
		} catch (err) {
			if (err instanceof CourierRefused) {
				throw new AttemptFailed(`${earlier} (AWB ${awb}) could not be cancelled: ${err.message}`);
			}
			// A plain error (retried): on the last try it must not read as this attempt's courier being down.
			throw new Error(`${earlier} could not be settled: ${message(err)}`);
		}
		await settleAmbiguous(deps.db, p.attempt_id, note);
	}
}
