/**
 * The request path `book` and `bookSync` share (spec §4.2, §3, §7;
 * docs/ARCHITECTURE.md §5 point 1): the checks before an attempt (order,
 * channel, direction, live attempt, warehouse, courier and quote), committing
 * the attempt with its outbox rows, and book/sync's inline booking within its
 * budget (`BOOKING_SYNC_BUDGET_MS`) before handing over to the worker. Plain
 * functions over {@link BookingDeps}; money in rupees at the edge, paise in
 * the attempt; SQL in lib/booking/store.
 */

import {
	type BookAnswer,
	type BookSyncAnswer,
	type Caller,
	type CourierInfo,
	call,
	type OrderRecord,
	type Quote,
	type ShipmentDirection,
	type Warehouse,
} from "../contracts";
import { type ApiError, errorBodyOf, fail, failWith, validationFailed } from "../platform/errors";
import { assertNotB2B } from "../shared/b2b";
import { labelLinkUrl } from "../shared/label-link";
import { laneOf } from "../shared/lane";
import { type BookingDeps, message } from "./deps";
import { pickAuto, rankCouriers } from "./ranking";
import { deliverNow } from "./relay";
import {
	type AttemptRow,
	chargesOf,
	claimAttempt,
	createAttempt,
	enqueueNow,
	liveAttempt,
	releaseAttempt,
} from "./store";
import { type Outcome, settleAttempt } from "./worker";

/** 409 for an order that already has a live attempt. */
function conflictFor(order_id: number, live: AttemptRow | undefined): ApiError {
	if (live?.state === "booked") {
		return failWith("already_booked", { state: "booked" }, order_id);
	}
	return failWith("booking_in_progress", { state: "booking_in_progress" }, order_id);
}

/** What `book` and `bookSync` have checked before creating the attempt. */
export interface Prepared {
	order: OrderRecord;
	warehouse: Warehouse;
	courier: CourierInfo;
	quote: Quote;
}

/**
 * The 200 body of book/sync for a booked attempt (§4.2). `label_url` is the
 * signed label link of the AWB (spec §4.4, §5 rule 7; lib/shared/label-link.ts):
 * `/v1/documents/label/t/{awb}.{hmac}`, absolute when `PUBLIC_BASE_URL` is set.
 */
function syncAnswer(a: AttemptRow, awb: string): BookSyncAnswer {
	return {
		status: "booked",
		awb,
		forward_id: a.idem_key,
		logistic_id: a.logistic_id,
		order_id: a.order_id,
		courier_name: a.courier_name,
		label_url: labelLinkUrl(awb),
	};
}

/** The 202 body (the async route's) for an attempt handed to the worker. */
export function queuedAnswer(a: AttemptRow): BookAnswer {
	return a.mode === "auto"
		? { status: "queued", mode: "auto", idem_key: a.idem_key }
		: { status: "queued", idem_key: a.idem_key };
}

/**
 * The courier of a booking and its quote (rupees): the forced `logistic_id`,
 * or (undefined) the top-ranked courier that prices the lane (AUTO).
 * @throws 400 `unknown_logistic` (forced courier not on the active card),
 *   422 `lane_not_priced`, 503 `rate_unavailable`
 */
export async function pickCourier(
	deps: BookingDeps,
	via: Caller,
	sender: number,
	order: OrderRecord,
	warehouse: Warehouse,
	logistic_id: number | undefined,
): Promise<{ courier: CourierInfo; quote: Quote }> {
	const opts = deps.callOptions("rate_unavailable");
	const lane = `${warehouse.pickup.pincode} → ${order.consignee.pincode}`;
	if (logistic_id === undefined) {
		const [ranked, q] = await Promise.all([
			rankCouriers(deps.db, via, sender, order.direction, opts),
			call(via, "rates.quote", laneOf(order, warehouse), opts),
		]);
		const pick = pickAuto(ranked, q.data ?? []);
		if (!pick) {
			throw fail("lane_not_priced", `no courier on the rate card prices this lane (${lane})`);
		}
		return pick;
	}
	const courier = await call(via, "rates.getCourier", { logistic_id }, opts);
	if (!courier?.active) {
		throw fail("unknown_logistic", [logistic_id]);
	}
	const q = await call(via, "rates.quote", laneOf(order, warehouse, logistic_id), opts);
	const quote = (q.data ?? []).find((x) => x.logistic_id === logistic_id);
	if (!quote) {
		const why = (q.dropped_couriers ?? []).find((d) => d.logistic_id === logistic_id);
		throw fail(
			"lane_not_priced",
			`${courier.logistic_name} does not price this lane (${lane})` +
				(why ? `: ${why.detail || why.reason}` : ""),
		);
	}
	return { courier, quote };
}

/**
 * The checks `book` and `bookSync` share (spec §4.2, §7), in order: the
 * order is the caller's (403), not B2B (400 unsupported_channel), of the
 * `direction` asked (bookSync's operation; 400 validation_failed), has no
 * live attempt (409), has an active pickup warehouse (400
 * invalid_pickup_address); then the courier and its quote (pickCourier).
 * The live attempt is not read up front: a booking that gets through finds
 * it where its attempt is inserted ({@link openAttempt}), and a check after
 * it that fails asks for it then ({@link liveFirst}), so the answers keep
 * this order (docs/decisions/0156-live-attempt-on-refusal.md).
 */
export async function prepareBooking(
	deps: BookingDeps,
	via: Caller,
	sender: number,
	order_id: number,
	logistic_id: number | undefined,
	direction?: ShipmentDirection,
): Promise<Prepared> {
	// for_booking: intake records that an attempt may follow before one can exist (status reads rely on it)
	const order = await call(
		via,
		"intake.getOrder",
		{ sender_id: sender, order_id, for_booking: true },
		deps.callOptions(),
	);
	if (!order || Number(order.sender_id) !== sender) {
		throw fail("cannot create booking for another sender");
	}
	assertNotB2B(order);
	if (direction && order.direction !== direction) {
		throw validationFailed([
			direction === "reverse"
				? `operation: reverse books return orders; order ${order_id} is a forward order (use book)`
				: `operation: book books forward orders; order ${order_id} is a return order (use reverse)`,
		]);
	}
	try {
		const warehouse = order.pickup_address_id
			? await call(
					via,
					"warehouses.resolve",
					{ sender_id: sender, id: order.pickup_address_id },
					deps.callOptions(),
				)
			: null;
		if (!warehouse) {
			throw fail("invalid_pickup_address", "order_warehouse");
		}
		const { courier, quote } = await pickCourier(deps, via, sender, order, warehouse, logistic_id);
		return { order, warehouse, courier, quote };
	} catch (err) {
		throw await liveFirst(deps, order_id, err);
	}
}

/**
 * What a check that comes after the live-attempt check in {@link prepareBooking}'s
 * order answers when it fails with `err`: the 409 `already_booked` /
 * `booking_in_progress` of order `order_id`'s live attempt when it has one
 * (that check comes first), else `err`. A failed read of the attempt leaves
 * `err` as it is. Only a refused booking pays this read.
 */
async function liveFirst(deps: BookingDeps, order_id: number, err: unknown): Promise<unknown> {
	let live: AttemptRow | undefined;
	try {
		live = await liveAttempt(deps.db, order_id);
	} catch {
		return err;
	}
	return live ? conflictFor(order_id, live) : err;
}

/**
 * A call sent again after the node running it died (lib/platform/dead-node.ts,
 * docs/decisions/0113-dead-node-rescue.md) arrives with the same context id:
 * when `err` is the 409 `already_booked` / `booking_in_progress` of order
 * `order_id` and its live attempt was created by that very call (its
 * `call_key` is `callKey`), that attempt, whose answer is the call's; else
 * undefined (the 409 stands). Only the conflict path pays this query.
 */
export async function ownLiveAttempt(
	deps: BookingDeps,
	order_id: number,
	callKey: string | undefined,
	err: unknown,
): Promise<AttemptRow | undefined> {
	const code = errorBodyOf(err)?.body.error;
	if (!callKey || (code !== "already_booked" && code !== "booking_in_progress")) return undefined;
	const live = await liveAttempt(deps.db, order_id);
	return live?.call_key === callKey ? live : undefined;
}

/**
 * Commits the attempt of a prepared booking (createAttempt: credit check,
 * attempt with its lane's pincodes, seq-1 order update, job due after `enqueueDelayMs`).
 * This is where a booking finds the order's live attempt (the partial unique index).
 * @throws 409 `already_booked` / `booking_in_progress` (the order has a live
 *   attempt: booked before, or a concurrent booking won), 409 `credit_limit_exceeded`
 *   (only when the order has no live attempt)
 */
export async function openAttempt(
	deps: BookingDeps,
	sender: number,
	input: { order_id: number; logistic_id?: number; call_key?: string },
	p: Prepared,
	via: "async" | "sync",
	enqueueDelayMs: number,
): Promise<{ attempt: AttemptRow; outbox: number[] }> {
	const lane = laneOf(p.order, p.warehouse);
	const res = await createAttempt(deps.db, {
		order_id: input.order_id,
		sender_id: sender,
		logistic_id: p.courier.logistic_id,
		courier_name: p.courier.logistic_name,
		mode: input.logistic_id === undefined ? "auto" : "forced",
		charges: chargesOf(p.quote),
		direction: p.order.direction,
		via,
		enqueueDelayMs,
		// the lane its delivered / RTO outcome is recorded for (lib/booking/tracking.ts)
		from_pin: lane.from_pin,
		to_pin: lane.to_pin,
		// the pickup it travels with (GET /v1/pickups `picked_up`: booking.pickupScans)
		warehouse_id: p.warehouse.id,
		// the promise the buyer's tracking page shows (issue 29)
		edd: p.quote.edd,
		// the same call sent again after its node died is answered this attempt (ownLiveAttempt)
		call_key: input.call_key,
	}).catch(async (err: unknown) => {
		// credit_limit_exceeded: an order already booked answers its 409 first
		throw await liveFirst(deps, input.order_id, err);
	});
	if ("conflict" in res) throw conflictFor(input.order_id, res.conflict);
	return res;
}

/**
 * book/sync's answer for its own attempt `a`, found again by a resent call
 * ({@link ownLiveAttempt}): booked → 200 with its AWB; otherwise the inline
 * booking goes on ({@link bookInline}: a claim still held by the dead node
 * hands over to the worker, 202).
 */
export async function resumeInline(
	deps: BookingDeps,
	via: Caller,
	a: AttemptRow,
	deadline: number,
): Promise<{ status: 200; body: BookSyncAnswer } | { status: 202; body: BookAnswer }> {
	if (a.state === "booked" && a.awb_number) return { status: 200, body: syncAnswer(a, a.awb_number) };
	return bookInline(deps, via, a, deadline);
}

/**
 * The inline part of book/sync: claims attempt `a` (the same conditional
 * UPDATE as the worker) and runs it, AUTO fall-over included, until it
 * settles or `deadline` (epoch ms) passes. Booked → 200 BookSyncAnswer;
 * failed → 422 `booking_failed` (the courier's words; AUTO: the chain);
 * a transient failure → the claim released, the job made due now, 202
 * with the async body; the deadline → the job made due now, the courier
 * call left to finish in the background (it still holds the claim), 202.
 */
export async function bookInline(
	deps: BookingDeps,
	via: Caller,
	first: AttemptRow,
	deadline: number,
): Promise<{ status: 200; body: BookSyncAnswer } | { status: 202; body: BookAnswer }> {
	let current = first;
	for (;;) {
		const a = await claimAttempt(deps.db, current.attempt_id, deps.timings.claimStaleMs);
		if (!a) return handOver(deps, current, false);
		const left = Math.max(0, deadline - Date.now());
		const work = settleAttempt(deps, via, a, left);
		let timer: NodeJS.Timeout | undefined;
		const spent = new Promise<{ spent: true }>((r) => {
			timer = setTimeout(() => r({ spent: true }), left);
		});
		const raced = await Promise.race([
			work.then(
				(out) => ({ out }),
				(err: unknown) => ({ err }),
			),
			spent,
		]).finally(() => clearTimeout(timer));
		if ("spent" in raced) {
			void deps.background(`booking ${a.attempt_id} (sync, after its budget)`, () =>
				settleLater(deps, work, a),
			);
			deps.logger.info(`booking ${a.attempt_id}: sync budget spent; the worker takes over`);
			return handOver(deps, a, true);
		}
		if ("err" in raced) {
			await releaseAttempt(deps.db, a, message(raced.err));
			deps.logger.info(`booking ${a.attempt_id}: sync booking handed to the worker: ${message(raced.err)}`);
			return handOver(deps, a, true);
		}
		const out = raced.out;
		if (out.kind !== "lost") await deliverNow(deps, a.attempt_id, out.outbox);
		if (out.kind === "booked") return { status: 200, body: syncAnswer(a, out.awb) };
		if (out.kind === "next") {
			current = out.next;
			continue;
		}
		if (out.kind === "failed") throw fail("booking_failed", { reason: out.reason });
		if (out.kind === "cancelled") {
			throw fail("booking_failed", "cancelled");
		}
		const cur = out.attempt;
		if (cur.state === "booked" && cur.awb_number)
			return { status: 200, body: syncAnswer(cur, cur.awb_number) };
		if (cur.state === "failed") throw fail("booking_failed", { reason: cur.failure_reason });
		return handOver(deps, cur, false);
	}
}

/** After the sync budget: lets the inline courier call settle the attempt (or release its claim). */
export async function settleLater(deps: BookingDeps, work: Promise<Outcome>, a: AttemptRow): Promise<void> {
	try {
		const out = await work;
		if (out.kind !== "lost") deps.finish(out.outbox);
		// a fall-over's next attempt is enqueued by the relay when its row falls due
		if (out.kind === "next") deps.finish(await enqueueNow(deps.db, out.next.attempt_id));
	} catch (err) {
		await releaseAttempt(deps.db, a, message(err));
		throw err;
	}
}

/** 202 of book/sync: the attempt is the worker's now (its job made due and relayed when `now`). */
export async function handOver(
	deps: BookingDeps,
	a: AttemptRow,
	now: boolean,
): Promise<{ status: 202; body: BookAnswer }> {
	if (now) deps.finish(await enqueueNow(deps.db, a.attempt_id));
	return { status: 202, body: queuedAnswer(a) };
}
