/**
 * `booking` service: courier booking of orders (spec §4.2 book, §2.4, §3;
 * docs/ARCHITECTURE.md §5 durability).
 *
 * Public (gateway): `booking.book` — POST /v1/shipping/book; `booking.bookSync` —
 * POST /v1/shipping/book/sync (same attempt/outbox/claim path, courier called inline).
 * Internal (lib/contracts/booking.ts): `booking.getShipment` {sender_id, order_id} → ShipmentRecord | null.
 * Internal: `booking.awbOwner` {awb_number} → {sender_id, order_id} | null (signed label links);
 * `booking.pickupScans` {questions} → the first pickup scan per (account, warehouse, courier, IST day);
 * `booking.shipmentByAwb` {awb_number} → the live shipment for the buyer's tracking page, or null.
 * Worker: `booking.processAttempt` {attempt_id} — handed each job of BullMQ queue "booking".
 * Ops: `booking.relayOutbox` → {delivered, failed}, `booking.sweep` → {enqueued}.
 * Tracking (issue 7; lib/booking/tracking.ts): `booking.tracking` — GET /v1/orders/{id}/tracking;
 * `booking.sandboxEvent` — POST /v1/sandbox/orders/{order_id}/events (SANDBOX=1); `booking.courierPush` —
 * POST /v1/tracking/webhooks/{courier} (no bearer token; the courier's signature); ops
 * `booking.pollTracking`, also run every `BOOKING_TRACK_MS` by the poller tick. Courier scans are folded
 * into one status per shipment, each change sent to intake through the outbox (seq = the attempt's
 * `order_seq` + 1) and broadcast as `shipment.status_changed` / `shipment.undelivered`.
 * Manifests (issue 8): internal `booking.markManifested` (documents' outbox) moves booked shipments to
 * `manifested` through the same fold. Each status change is also published durably to the channel
 * `shipment.status_changed` (an outbox row, lib/platform/channels.ts;
 * docs/decisions/0033-shipment-events.md).
 *
 * Durability (docs/ARCHITECTURE.md §5):
 * 1. The request commits, in ONE transaction, the attempt (state `queued`,
 *    chosen courier, quoted charges in paise) and two outbox rows: the seq-1
 *    `order_update` (booking_in_progress) and `enqueue_booking`. Then it
 *    delivers both at once (acknowledged `intake.applyBookingUpdate`; BullMQ
 *    add with jobId `attempt-<id>`) and answers 202. A delivery that fails is
 *    retried by the outbox relay (every `BOOKING_RELAY_MS`, backoff per row)
 *    until acknowledged.
 * 2. The worker claims the attempt with a conditional UPDATE (queued → claimed,
 *    or a stale claim), calls the courier with the attempt id as the client
 *    reference, and after an ambiguous failure (timeout, reset, 5xx) looks the
 *    reference up before retrying. Booked/failed is committed with the seq-2
 *    `order_update` in one transaction, then relayed.
 * 3. A sweeper (every `BOOKING_SWEEP_MS`) re-enqueues queued attempts (and
 *    stale claims) whose BullMQ job is missing (Redis loss), same jobId, and
 *    settles attempts unsettled for `BOOKING_UNSETTLED_MS` by asking the
 *    courier about their reference (booked → booked; else failed).
 * 5. AUTO falls over: a definitive refusal fails the attempt and creates the
 *    next ranked courier's attempt in one transaction (lib/booking/fallover.ts).
 * 6. Money: `booked` records the ledger charge in the same transaction; a new
 *    attempt passes the account's credit check in the transaction that creates it.
 * 4. One order never holds two live AWBs: a partial unique index allows one
 *    live attempt (queued, claimed, booked) per order; an attempt that failed
 *    with the courier unreachable is marked `ambiguous`, and the next attempt
 *    of that order first looks its reference up and cancels what it finds.
 *
 * Timings: see lib/booking/settings.ts. The logic lives in lib/booking: the
 * request path of book/bookSync in request.ts, the worker and settlements in
 * worker.ts, the outbox relay and sweeper in relay.ts (over deps.ts's BookingDeps).
 */

import { cancelBooking, orderStateOf, parseCancelInput } from "../lib/booking/cancel";
import { couriersAnswer, couriersQuery, parsePriorityBody, setRanking } from "../lib/booking/couriers";
import { setCreditLimit } from "../lib/booking/credit";
import { type BookingDeps, message, type OutboxBatch } from "../lib/booking/deps";
import { BOOKING_MIGRATIONS } from "../lib/booking/migrations";
import { parseBookInput, parseBookSyncInput } from "../lib/booking/params";
import { forgetOldPushes } from "../lib/booking/push-replay";
import { deliverNow, outboxBatch, relay, sweepOnce } from "../lib/booking/relay";
import {
	bookInline,
	openAttempt,
	ownLiveAttempt,
	prepareBooking,
	queuedAnswer,
	resumeInline,
} from "../lib/booking/request";
import { BOOKING_QUEUE, type BookingTimings, bookingTimings } from "../lib/booking/settings";
import {
	bookedAwbOwner,
	closeOpenCancellation,
	orderUpdateRows,
	pickupScans,
	shipmentOf,
} from "../lib/booking/store";
import { latestAttempt, latestAttempts } from "../lib/booking/store/cancel";
import {
	courierPush,
	markManifested,
	parseSandboxEvent,
	parseTrackingQuery,
	pollOnce,
	sandboxEvent,
	shipmentByAwb,
	trackingOf,
} from "../lib/booking/tracking";
import { processAttempt } from "../lib/booking/worker";
import {
	type BookAnswer,
	type BookSyncAnswer,
	type CallOptions,
	type CouriersAnswer,
	type CreditLimit,
	call,
	type ProcessResult,
	type ShipmentDirection,
	type ShipmentRecord,
} from "../lib/contracts";
import type {
	CancelAnswer,
	OrderBookingState,
	PollResult,
	PushAnswer,
	SandboxEventAnswer,
	TrackingAnswer,
} from "../lib/contracts/booking";
import { BOOKING_ROUTES } from "../lib/contracts/http/booking";
import { requireSandboxWebhookSecret } from "../lib/couriers/sandbox/settings";
import { senderOf } from "../lib/platform/auth";
import { loadConfig, setting } from "../lib/platform/config";
import { fail, type UnreachableCode } from "../lib/platform/errors";
import { EventOutboxRelay } from "../lib/platform/merchant-events-outbox";
import { defineService } from "../lib/platform/service";
import { toRupees } from "../lib/shared/money";
import { DbMixin } from "../mixins/db.mixin";
import { WorkerMixin } from "../mixins/worker.mixin";

type Periodic = "relay" | "sweep" | "track";

/** State set in `created` / `started` (db comes from the DbMixin). */
interface BookingVars {
	/**
	 * relays `booking.event_outbox` (order.booked / order.booking_failed / order.cancelled) to `merchant.events`
	 * (issue 11)
	 */
	eventRelay: EventOutboxRelay | undefined;
	timings: BookingTimings;
	/** interval timers of the periodic relay and sweeper */
	timers: NodeJS.Timeout[];
	/** periodic runs in progress (a run never overlaps the previous one of its kind) */
	ticking: Set<Periodic>;
	/** background work in progress (awaited by `stopped`) */
	inflight: Set<Promise<unknown>>;
	bookingStopping: boolean;
	/** coalesced outbox lease / delivered marks of this instance (made in `started`: needs the db) */
	outbox: OutboxBatch;
}

export default defineService<BookingVars>()({
	name: "booking",
	mixins: [
		DbMixin("booking", BOOKING_MIGRATIONS),
		WorkerMixin([
			{
				queue: BOOKING_QUEUE,
				action: "booking.processAttempt",
				// courier calls are I/O-bound (seconds at real couriers): many in flight per pod
				concurrency: () => setting("BOOKING_CONCURRENCY"),
				// a killed worker's job runs again after this lock expires
				lockDuration: () => setting("BOOKING_LOCK_MS"),
			},
		]),
	],
	settings: {},
	// Each handler spells out its return type: an unannotated handler that uses
	// `this` keeps defineService from inferring the methods (TypeScript fixes
	// `this` before it has read them).
	methods: {
		/**
		 * Options of a call to another service: the configured timeout
		 * (`callTimeoutMs`) and the 503 code a failure without a contract body
		 * becomes (contract errors pass through; see lib/contracts/call.ts).
		 */
		callOptions(unavailable?: UnreachableCode): CallOptions {
			return { timeout: this.timings.callTimeoutMs, unavailable: unavailable ?? "service_unavailable" };
		},

		/**
		 * What the booking modules (lib/booking/worker.ts, relay.ts, request.ts)
		 * need from this service: its db, broker, timings, logger and the
		 * background/relay hooks below (see lib/booking/deps.ts).
		 */
		deps(): BookingDeps {
			return {
				db: this.db,
				broker: this.broker,
				timings: this.timings,
				logger: this.logger,
				callOptions: (unavailable) => this.callOptions(unavailable),
				outbox: this.outbox,
				finish: (ids) => this.finish(ids),
				background: (what, work) => this.background(what, work),
				stopping: () => this.bookingStopping,
			};
		},

		/** Runs `work` in the background: failures are logged, `stopped` waits for it. */
		background(what: string, work: () => Promise<unknown>): Promise<void> {
			const run: Promise<void> = work()
				.then(() => undefined)
				.catch((err) => this.logger.warn(`${what}: ${message(err)}`))
				.finally(() => this.inflight.delete(run));
			this.inflight.add(run);
			return run;
		},

		/**
		 * Relays freshly committed outbox rows without waiting (the timer retries
		 * failures). Once stopping, nothing new starts: the rows stay in the outbox
		 * for the next relay (another pod, or this one after a restart).
		 */
		finish(ids: number[] | null): void {
			if (!ids?.length || this.bookingStopping) return;
			void this.background("booking outbox relay", () => relay(this.deps(), ids));
		},

		/** One timer tick; a run never overlaps the previous one of its kind. */
		tick(kind: Periodic): void {
			if (this.bookingStopping || this.ticking.has(kind)) return;
			this.ticking.add(kind);
			const work =
				kind === "relay"
					? () => relay(this.deps())
					: kind === "sweep"
						? async () => {
								await sweepOnce(this.deps());
								await forgetOldPushes(this.db);
							}
						: () => pollOnce(this.deps());
			void this.background(`booking ${kind}`, work).finally(() => this.ticking.delete(kind));
		},
	},
	actions: {
		/**
		 * POST /v1/shipping/book (spec §4.2, §3, §7). Body `{order_id, logistic_id?}`;
		 * `logistic_id` omitted (or null) = AUTO. Answers 202 `{status:"queued", idem_key}`
		 * (forced) or `{status:"queued", mode:"auto", idem_key}` (AUTO), never an AWB;
		 * `idem_key` is `bk_<attempt id>`, stable for the attempt. The attempt is
		 * committed (with its outbox) before the answer; the courier is called by the worker.
		 *
		 * Access: `writes` — read-only roles get 403 `Read-only role`. Spec §5 rule 3
		 * calls accepting them here a defect, so we refuse them on purpose. No capability.
		 *
		 * Errors:
		 * - 400 `order_id must be a positive integer` (missing/malformed; integers or digit strings only)
		 * - 400 `validation_failed` details `logistic_id: must be a positive integer`
		 * - 403 `cannot create booking for another sender`: no such order on the caller's
		 *   account (the §7 row is specific, so it wins over §1 rule 4's 404; a missing
		 *   order and a foreign order get the same answer, so nothing leaks)
		 * - 400 `unsupported_channel` (B2B / multi-box)
		 * - 400 `invalid_pickup_address`: the order's pickup warehouse is not active
		 * - 409 `already_booked` `{state:"booked"}` / `booking_in_progress`
		 *   `{state:"booking_in_progress"}`; a failed (or cancelled) order may be booked again
		 * - 400 `unknown_logistic`: forced courier not on the active rate card
		 * - 422 `lane_not_priced`: the forced courier (or, AUTO, no courier) prices the lane
		 * - 503 `rate_unavailable` (rates unreachable), `service_unavailable` (intake/warehouses)
		 */
		book: {
			access: BOOKING_ROUTES["booking.book"].access,
			async handler(ctx): Promise<BookAnswer> {
				const sender = senderOf(ctx);
				const input = parseBookInput(ctx.params);
				const deps = this.deps();
				let res: Awaited<ReturnType<typeof openAttempt>>;
				try {
					const prepared = await prepareBooking(deps, ctx, sender, input.order_id, input.logistic_id);
					res = await openAttempt(deps, sender, { ...input, call_key: ctx.id }, prepared, "async", 0);
				} catch (err) {
					// this call, sent again after its node died, had committed: its answer
					const own = await ownLiveAttempt(deps, input.order_id, ctx.id, err);
					if (!own) throw err;
					ctx.meta.$statusCode = 202;
					return queuedAnswer(own);
				}
				// Committed: deliver the outbox now; whatever fails is retried by the relay.
				await deliverNow(deps, res.attempt.attempt_id, res.outbox);
				ctx.meta.$statusCode = 202;
				return queuedAnswer(res.attempt);
			},
		},

		/**
		 * Worker step for one attempt (BullMQ job of queue "booking"; at-least-once,
		 * idempotent). Claims the attempt (queued → claimed, or a stale claim);
		 * an attempt already booked/failed/cancelled is a no-op. Books at the courier
		 * with the attempt id as reference (settleAttempt). Courier unreachable
		 * (timeout, reset, 5xx): looks the reference up; found → booked; else the
		 * claim is released and the error thrown so BullMQ retries (exponential
		 * backoff with jitter); on the last try → failed (plain words). Courier
		 * refusal → failed `<courier> refused: <courier's words>`; AUTO falls over to
		 * the next ranked courier (a new attempt, its own job). Booked → charged.
		 * A cancel requested meanwhile → the late AWB cancelled at the courier,
		 * attempt `cancelled`. Returns `{attempt_id, state, awb_number?}`.
		 */
		processAttempt: {
			params: { attempt_id: { type: "number", integer: true, positive: true, convert: true } },
			async handler(ctx): Promise<ProcessResult> {
				const job = ctx.meta?.job;
				const attemptsMade = job === undefined ? undefined : Number(job.attemptsMade ?? 0);
				return processAttempt(this.deps(), ctx, ctx.params.attempt_id, attemptsMade);
			},
		},

		/**
		 * POST /v1/shipping/book/sync (spec §4.2, §3 row "any → book/sync", §7).
		 * Body `{order_id, logistic_id?, operation?}`: `logistic_id` omitted (or
		 * null) = AUTO, forward only; `operation` `book` (default, forward orders)
		 * or `reverse` (return orders, courier required). Goes through the same
		 * attempt/outbox/claim path as `book`: the attempt (via `sync`), its seq-1
		 * order update and its job are committed first (the job due only after
		 * `BOOKING_SYNC_BUDGET_MS`, so a crash hands it to the worker), the seq-1
		 * update delivered, then the attempt claimed with the worker's conditional
		 * UPDATE and booked inline (AUTO falls over inline).
		 *
		 * Answers:
		 * - 200 {@link BookSyncAnswer} `{status:"booked", awb, forward_id:"bk_<attempt id>",
		 *   logistic_id, order_id, courier_name, label_url:"/v1/documents/label/t/<awb>.<hmac>"}` (the signed link, lib/shared/label-link.ts)
		 *   (the booked, charged attempt; the order update delivered before the answer)
		 * - 202 {@link BookAnswer} `{status:"queued", idem_key}` (`mode:"auto"` for AUTO)
		 *   when the courier failed transiently (timeout, 5xx, reset) or the budget
		 *   ran out: the worker books it; a client timeout never means "not booked".
		 *
		 * Access: `writes` (read-only roles 403, as `book`). Errors: 400 `order_id and
		 * logistic_id must be positive integers`; 400 `validation_failed` (operation
		 * not book/reverse, reverse without logistic_id, operation not matching the
		 * order's direction); then as `book`: 403 `cannot create booking for another
		 * sender`, 400 `unsupported_channel`, 400 `invalid_pickup_address`, 409
		 * `already_booked` / `booking_in_progress`, 400 `unknown_logistic`, 422
		 * `lane_not_priced`, 409 `credit_limit_exceeded`, 503 `rate_unavailable` /
		 * `service_unavailable`; and 422 `booking_failed` with the courier's words as
		 * `message` (forced courier refused; AUTO: every ranked courier refused, the
		 * chain "A refused: …; B refused: …").
		 */
		bookSync: {
			// the sync budget (BOOKING_SYNC_BUDGET_MS, 25 s) plus margin: not the 4 s default (issue 12)
			timeout: 30_000,
			access: BOOKING_ROUTES["booking.bookSync"].access,
			async handler(ctx): Promise<BookSyncAnswer | BookAnswer> {
				const started = Date.now();
				const sender = senderOf(ctx);
				const input = parseBookSyncInput(ctx.params);
				const direction: ShipmentDirection = input.operation === "reverse" ? "reverse" : "forward";
				const deps = this.deps();
				const budget = this.timings.syncBudgetMs;
				let res: Awaited<ReturnType<typeof openAttempt>>;
				try {
					const prepared = await prepareBooking(
						deps,
						ctx,
						sender,
						input.order_id,
						input.logistic_id,
						direction,
					);
					res = await openAttempt(deps, sender, { ...input, call_key: ctx.id }, prepared, "sync", budget);
				} catch (err) {
					// this call, sent again after its node died, had committed: go on with its attempt
					const own = await ownLiveAttempt(deps, input.order_id, ctx.id, err);
					if (!own) throw err;
					const answer = await resumeInline(deps, ctx, own, started + budget);
					ctx.meta.$statusCode = answer.status;
					return answer.body;
				}
				await deliverNow(deps, res.attempt.attempt_id, await orderUpdateRows(this.db, res.outbox));
				const answer = await bookInline(deps, ctx, res.attempt, started + budget);
				ctx.meta.$statusCode = answer.status;
				return answer.body;
			},
		},

		/**
		 * POST /v1/shipping/cancel (spec §4.2, §3, §7; lib/booking/cancel.ts). Body
		 * `{order_id, logistic_id}`, both required positive integers. Cancels the
		 * order's latest booking at courier `logistic_id` and answers 200
		 * {@link CancelAnswer} `{status:"cancelled", awb, forward_id:"bk_<attempt id>",
		 * refunded (rupees, from the wallet ledger), order_id, mode}`:
		 * - booked: cancelled at the courier, then (one transaction) attempt
		 *   `cancelled`, refund of the charged total, order update not_shipped /
		 *   `cancelled` (intake releases the order number), relayed before the answer
		 *   with the attempt's undelivered ledger rows (charge and refund in billing's
		 *   wallet when answered; record 0161), then event `shipment.cancelled`
		 *   broadcast (best effort; record 0159);
		 * - queued: cancelled at once (`awb` null, `refunded` 0);
		 * - claimed (courier call in flight): the cancel is recorded (`awb` null,
		 *   `refunded` 0) and the worker cancels a late AWB at the courier;
		 * - already cancelled: the same body again (the refund is never paid twice).
		 *
		 * Access: `writes` (read-only roles 403 `Read-only role`, §5 rule 3).
		 * Errors: 400 `validation_failed` (details name `order_id` / `logistic_id`);
		 * 403 `cannot cancel for another sender` (missing or not the caller's order);
		 * 409 `not_cancellable` (no booking, latest booking failed, or booked at
		 * another courier than `logistic_id`); 422 `cancel_failed` (the courier's
		 * words); 503 `cancel_unavailable` (courier or rates unreachable: nothing
		 * changed, retry), `service_unavailable` (intake).
		 */
		cancel: {
			// courier cancel + look-up after an ambiguous failure (5 s courier timeout each; issue 12)
			timeout: 20_000,
			access: BOOKING_ROUTES["booking.cancel"].access,
			async handler(ctx): Promise<CancelAnswer> {
				const sender = senderOf(ctx);
				const input = parseCancelInput(ctx.params);
				const order = await call(
					ctx,
					"intake.getOrder",
					{ sender_id: sender, order_id: input.order_id },
					this.callOptions(),
				);
				if (!order || Number(order.sender_id) !== sender) {
					throw fail("cannot cancel for another sender");
				}
				const relayRows = async (ids: number[]): Promise<void> => {
					try {
						await relay(this.deps(), ids);
					} catch (err) {
						this.logger.warn(`cancel of order ${input.order_id}: outbox delivery deferred: ${message(err)}`);
					}
				};
				return cancelBooking(
					{
						db: this.db,
						via: ctx,
						callOptions: this.callOptions(),
						relay: relayRows,
						warn: (line) => this.logger.warn(line),
					},
					sender,
					input,
				);
			},
		},

		/**
		 * Internal (lib/contracts/booking.ts): `{sender_id, order_id}` → the order's
		 * latest attempt as {@link OrderBookingState} (queued/claimed →
		 * booking_in_progress, booked → booked, failed → failed, cancelled →
		 * not_shipped with status `cancelled`), or null (no attempt, or not that
		 * sender's). Used by `intake.status` for read-your-writes.
		 */
		orderState: {
			params: {
				sender_id: { type: "number", integer: true, positive: true, convert: true },
				order_id: { type: "number", integer: true, positive: true, convert: true },
			},
			async handler(ctx): Promise<OrderBookingState | null> {
				const a = await latestAttempt(this.db, ctx.params.sender_id, ctx.params.order_id);
				return a ? orderStateOf(a) : null;
			},
		},

		/**
		 * Internal (intake's coalesced status reads, issue 32): `{orders:
		 * [{sender_id, order_id}]}` (1–500) → `orderState` of each, in the order
		 * asked (null: no attempt of that sender), read in one statement.
		 */
		orderStates: {
			params: {
				orders: {
					type: "array",
					min: 1,
					max: 500,
					items: {
						type: "object",
						props: {
							sender_id: { type: "number", integer: true, positive: true },
							order_id: { type: "number", integer: true, positive: true },
						},
					},
				},
			},
			async handler(ctx): Promise<(OrderBookingState | null)[]> {
				const rows = await latestAttempts(this.db, ctx.params.orders);
				const byKey = new Map(rows.map((a) => [`${a.sender_id}:${a.order_id}`, a]));
				return ctx.params.orders.map((o) => {
					const a = byKey.get(`${o.sender_id}:${o.order_id}`);
					return a ? orderStateOf(a) : null;
				});
			},
		},

		/**
		 * Internal (intake's `POST /v1/orders/{id}/hide`, spec §3, §4.3):
		 * `{sender_id, order_id}` → `{closed, refunded}`. Closes the order's open
		 * cancellation (a cancel requested while the courier call was in flight)
		 * without contacting the courier; the worker still guarantees no live AWB.
		 * `closed`: whether this call closed one (a repeat answers false);
		 * `refunded`: rupees the wallet ledger refunded for the order's cancelled
		 * bookings (0 when none). Another sender's order: `{closed:false, refunded:0}`.
		 */
		closeCancellation: {
			params: {
				sender_id: { type: "number", integer: true, positive: true, convert: true },
				order_id: { type: "number", integer: true, positive: true, convert: true },
			},
			async handler(ctx): Promise<{ closed: boolean; refunded: number }> {
				const r = await closeOpenCancellation(this.db, ctx.params.sender_id, ctx.params.order_id);
				return { closed: r.closed, refunded: toRupees(r.refunded_paise) };
			},
		},

		/**
		 * GET /v1/shipping/couriers (spec §4.2, §2.8, §7). Query `shipment_type`:
		 * absent or `0` forward, `1` or `2` reverse. Answers 200 CouriersAnswer:
		 * `data` = the account's AUTO ranking for that direction
		 * `[{logistic_id, logistic_name, enabled, priority (1..n), serviceable_pincodes}]`
		 * over the couriers of the active rate card; `strategy`, `unique_pincodes`,
		 * `rules`, `restrictions`, `shipments_30d` (lib/booking/couriers.ts
		 * `couriersAnswer`; shapes in docs/decisions/0019-courier-rankings.md).
		 * Any authenticated role.
		 *
		 * Errors: 400 `shipment_type must be 0 (forward), 1 or 2 (reverse)`;
		 * 503 `rate_unavailable` (rates or the pincode directory unreachable).
		 */
		couriers: {
			access: BOOKING_ROUTES["booking.couriers"].access,
			async handler(ctx): Promise<CouriersAnswer> {
				const sender = senderOf(ctx);
				const scope = couriersQuery(ctx.params);
				return couriersAnswer(this.db, ctx, sender, scope, this.callOptions("rate_unavailable"));
			},
		},

		/**
		 * PATCH /v1/shipping/couriers/priority (spec §4.2, §2.8, §7). Body
		 * `{shipment_type: 0|1, order: [{logistic_id, priority}]}`: reorder only,
		 * every courier of the active rate card for that direction exactly once,
		 * priorities a permutation of 1..n. Replaces the account's ranking for that
		 * direction in one transaction (the other direction and other accounts are
		 * untouched) and answers 200 the re-read ranking (the GET answer for that
		 * `shipment_type`).
		 *
		 * Access: `writes` + capability `courier.rank`: read-only roles 403
		 * `Read-only role`, roles without the capability 403 `forbidden` `{cap}`.
		 *
		 * Errors: 400 `validation_failed` with `details` (malformed body,
		 * `shipment_type` not 0|1); 400 `duplicate_logistic` `{logistic_ids}`;
		 * 400 `unknown_logistic` `{logistic_ids}` (not on the active card for the
		 * direction); 400 `incomplete_ranking` `{missing}` (a courier of the card left
		 * out) or `{priorities}` (not a permutation of 1..n); 503 `rate_unavailable`.
		 */
		setPriority: {
			access: BOOKING_ROUTES["booking.setPriority"].access,
			async handler(ctx): Promise<CouriersAnswer> {
				const sender = senderOf(ctx);
				const input = parsePriorityBody(ctx.params);
				const opts = this.callOptions("rate_unavailable");
				await setRanking(this.db, ctx, sender, input, opts);
				return couriersAnswer(this.db, ctx, sender, input, opts);
			},
		},

		/**
		 * Ops (internal, no route): sets an account's credit limit in rupees
		 * (≥ 0, rounded to the paisa) or removes it (`null`: post-paid without
		 * limit, the default). `{sender_id, credit_limit}` → the same, as stored.
		 * A booking that would take the outstanding amount beyond the limit is
		 * refused with 409 `credit_limit_exceeded` (lib/booking/store/ledger.ts `assertCredit`).
		 * The limit is mirrored to billing (`GET /v1/wallet`) through the outbox.
		 */
		setCreditLimit: {
			params: {
				sender_id: { type: "number", integer: true, positive: true, convert: true },
				credit_limit: { type: "number", min: 0, max: 1e12, nullable: true, convert: true },
			},
			async handler(ctx): Promise<CreditLimit> {
				return setCreditLimit(this.db, ctx.params.sender_id, ctx.params.credit_limit);
			},
		},

		/** Internal (lib/contracts/booking.ts): the booked shipment of an order, or null. Money in rupees. */
		getShipment: {
			params: {
				sender_id: { type: "number", integer: true, positive: true, convert: true },
				order_id: { type: "number", integer: true, positive: true, convert: true },
			},
			async handler(ctx): Promise<ShipmentRecord | null> {
				return shipmentOf(this.db, ctx.params.sender_id, ctx.params.order_id);
			},
		},

		/**
		 * Internal (documents' signed label link, spec §4.4): `{sender_id, order_id}`
		 * of the booked attempt holding AWB `awb_number` (1–64 chars), or null when
		 * no live booking holds it (unknown, cancelled, failed).
		 */
		awbOwner: {
			params: { awb_number: { type: "string", min: 1, max: 64 } },
			async handler(ctx): Promise<{ sender_id: number; order_id: number } | null> {
				return bookedAwbOwner(this.db, ctx.params.awb_number);
			},
		},

		/**
		 * Internal (warehouses' pickup sweep, issue 28; docs/decisions/0107-pickup-requests.md):
		 * `{questions: [{sender_id, warehouse_id, logistic_id, day}]}` (1–500; `day` an IST
		 * `YYYY-MM-DD`) → per question, in order, `{first_scan_at, shipments}`: the earliest pickup
		 * scan that IST day (ISO-8601 UTC, null when none) of a shipment of that account booked with
		 * that courier from that warehouse, and how many were collected that day. One statement.
		 */
		pickupScans: {
			params: {
				questions: {
					type: "array",
					min: 1,
					max: 500,
					items: {
						type: "object",
						strict: "remove",
						props: {
							sender_id: { type: "number", integer: true, positive: true },
							warehouse_id: { type: "number", integer: true, positive: true },
							logistic_id: { type: "number", integer: true, positive: true },
							day: { type: "string", pattern: /^\d{4}-\d{2}-\d{2}$/ },
						},
					},
				},
			},
			async handler(ctx): Promise<{ first_scan_at: string | null; shipments: number }[]> {
				return pickupScans(this.db, ctx.params.questions);
			},
		},

		/**
		 * Internal (the buyer's tracking page, issue 29; docs/decisions/0108-buyer-tracking-page.md):
		 * `{awb_number, scan_limit?}` (1–64 characters; scans 1–100, default 50) → the live booked
		 * shipment holding the AWB (account, order, courier, status, promised `edd`, newest scans
		 * oldest first) or null (unknown, cancelled, failed). Nothing about the buyer.
		 */
		shipmentByAwb: {
			params: {
				awb_number: { type: "string", min: 1, max: 64 },
				scan_limit: { type: "number", integer: true, min: 1, max: 100, optional: true },
			},
			async handler(ctx) {
				return shipmentByAwb(this.deps(), ctx.params.awb_number, ctx.params.scan_limit ?? 50);
			},
		},

		/** Ops: delivers due outbox rows now. → `{delivered, failed}`. */
		relayOutbox: {
			async handler(): Promise<{ delivered: number; failed: number }> {
				return relay(this.deps());
			},
		},

		/** Ops: one sweeper pass now. → `{enqueued}`. */
		sweep: {
			async handler(): Promise<{ enqueued: number }> {
				return sweepOnce(this.deps());
			},
		},

		// --- tracking (issue 7; lib/booking/tracking.ts) ---

		/**
		 * Ops: one tracking poll pass now (the periodic tick every
		 * `BOOKING_TRACK_MS` runs the same): leases the due open shipments,
		 * asks their couriers in batches (`trackMany`), folds the scans.
		 * → {@link PollResult} `{leased, calls, accepted, applied, failed}`.
		 */
		pollTracking: {
			async handler(): Promise<PollResult> {
				return pollOnce(this.deps());
			},
		},

		/**
		 * POST /v1/tracking/webhooks/{courier} (ours; no bearer token: the
		 * gateway's webhook route passes `{courier, body: raw body base64,
		 * headers: lower-cased}`). The courier's signature is checked on the raw
		 * body (sandbox: timestamped, at most 5 minutes old, never replayed),
		 * then its scans are folded. 200 {@link PushAnswer} `{accepted,
		 * applied}`. Errors: 404 `not_found` (unknown courier code), 401
		 * `invalid_signature` (missing, wrong, stale or replayed signature; no key
		 * configured), 400 `validation_failed` (unreadable body, a text field breaking the text rule, e.g. NUL),
		 * 503 `service_unavailable`. See lib/booking/tracking.ts `courierPush`.
		 */
		courierPush: {
			params: {
				courier: { type: "string", max: 100 },
				body: { type: "string" },
				headers: { type: "record", key: { type: "string" }, value: { type: "string" } },
			},
			async handler(ctx): Promise<PushAnswer> {
				return courierPush(this.deps(), ctx, ctx.params);
			},
		},

		/**
		 * Internal (documents' outbox after `POST /v1/documents/manifest`; spec §3
		 * manifest row, §6): `{sender_id, manifest_no, at (ISO-8601 UTC), awb_numbers
		 * (1–1000)}` → `{moved}`. Moves the sender's booked shipments with those AWBs
		 * to `manifested` (Ready for pickup) through the tracking fold: never
		 * backwards (a picked-up shipment stays), terminal never reopens, another
		 * sender's / cancelled / unknown AWBs ignored; each change reaches intake
		 * (order update) and the `shipment.status_changed` channel (with
		 * `manifest_no`) through the outbox. Idempotent: a redelivery moves nothing.
		 * Errors: 422 (params), 400 `validation_failed` (`at` not a time).
		 * See lib/booking/tracking.ts `markManifested`.
		 */
		markManifested: {
			params: {
				sender_id: { type: "number", integer: true, positive: true, convert: true },
				manifest_no: { type: "string", min: 1, max: 100 },
				at: { type: "string", min: 1, max: 64 },
				awb_numbers: { type: "array", min: 1, max: 1000, items: { type: "string", min: 1, max: 100 } },
			},
			async handler(ctx): Promise<{ moved: number }> {
				return markManifested(this.deps(), ctx.params);
			},
		},

		/**
		 * POST /v1/sandbox/orders/{order_id}/events (docs/ARCHITECTURE.md §4; only
		 * with `SANDBOX=1`, else 404 `not_found`). Body `{event, reason?}`: event
		 * one of picked_up, in_transit, out_for_delivery, delivered, undelivered
		 * (`reason` required), rto_initiated, rto_delivered. The simulator emits
		 * the scan for the order's AWB, which is polled back and folded at once:
		 * 200 {@link SandboxEventAnswer} `{order_id, awb_number, event, status,
		 * status_name}`. Access: `writes` (read-only roles 403).
		 * Errors: 400 `validation_failed`; 404 `order not found`; 409
		 * `not_booked`, `not_sandbox_courier`; 503 `courier_unavailable`,
		 * `service_unavailable`. See lib/booking/tracking.ts `sandboxEvent`.
		 */
		sandboxEvent: {
			access: BOOKING_ROUTES["booking.sandboxEvent"].access,
			async handler(ctx): Promise<SandboxEventAnswer> {
				if (!loadConfig().sandbox) throw fail("not_found");
				const sender = senderOf(ctx);
				return sandboxEvent(this.deps(), ctx, sender, parseSandboxEvent(ctx.params));
			},
		},

		/**
		 * GET /v1/orders/{id}/tracking (spec §2.6, §4.3). Query `scan_limit`
		 * (1–500, default 100). 200 {@link TrackingAnswer} `{scans, truncated,
		 * scan_limit, status_name, order_status_id}`: the current shipment's
		 * scans oldest first (the newest `scan_limit` kept), each `{at (UTC),
		 * location, status, status_name, courier_code, courier_status,
		 * remarks}`. Access: any authenticated role.
		 * Errors: 400 `validation_failed` (`id`, `scan_limit`); 404 `order not
		 * found` (missing or another account's); 503 `service_unavailable`.
		 * See lib/booking/tracking.ts `trackingOf`.
		 */
		tracking: {
			access: BOOKING_ROUTES["booking.tracking"].access,
			async handler(ctx): Promise<TrackingAnswer> {
				const sender = senderOf(ctx);
				return trackingOf(this.deps(), ctx, sender, parseTrackingQuery(ctx.params));
			},
		},
	},
	created() {
		this.timings = bookingTimings();
		this.timers = [];
		this.ticking = new Set();
		this.inflight = new Set();
		this.bookingStopping = false;
	},
	/**
	 * Refuses to run with SANDBOX=1 without `SANDBOX_WEBHOOK_SECRET` (the sandbox
	 * couriers' push key; docs/ARCHITECTURE.md §2: fail loudly at start).
	 */
	async started() {
		// the sandbox couriers' pushes are checked with this key
		// (docs/decisions/0078-sandbox-scan-signatures.md)
		requireSandboxWebhookSecret("booking");
		this.bookingStopping = false;
		this.outbox = outboxBatch(this.db, this.timings, this.broker);
		this.timers = [
			setInterval(() => this.tick("relay"), this.timings.relayMs),
			setInterval(() => this.tick("sweep"), this.timings.sweepMs),
			setInterval(() => this.tick("track"), this.timings.trackMs),
		];
		this.eventRelay = new EventOutboxRelay(this.db, "booking", this.broker, this.logger);
		await this.eventRelay.start();
	},
	async stopped() {
		this.bookingStopping = true;
		for (const t of this.timers) clearInterval(t);
		this.timers = [];
		await Promise.allSettled([...this.inflight]);
		await this.eventRelay?.stop();
		this.eventRelay = undefined;
	},
});
