/**
 * `booking` service: courier booking of orders (spec §4.2 book, §2.4, §3;
 * ARCHITECTURE §5 durability).
 *
 * Public (gateway): `booking.book` — POST /v1/shipping/book; `booking.bookSync` —
 * POST /v1/shipping/book/sync (same attempt/outbox/claim path, courier called inline).
 * Internal (lib/contracts/booking.ts): `booking.getShipment` {sender_id, order_id} → ShipmentRecord | null.
 * Worker: `booking.processAttempt` {attempt_id} — handed each job of BullMQ queue "booking".
 * Ops: `booking.relayOutbox` → {delivered, failed}, `booking.sweep` → {enqueued}.
 *
 * Durability (ARCHITECTURE §5):
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
 * Timings: see lib/booking/settings.ts.
 */
import type { Job } from "bullmq";
import { senderOf } from "../lib/auth";
import { cancelBooking, orderStateOf, parseCancelInput } from "../lib/booking/cancel";
import { couriersAnswer, couriersQuery, parsePriorityBody, setRanking } from "../lib/booking/couriers";
import { chainAfter, chainReason, durationWords, nextCourier } from "../lib/booking/fallover";
import { BOOKING_MIGRATIONS } from "../lib/booking/migrations";
import { parseBookInput, parseBookSyncInput } from "../lib/booking/params";
import { pickAuto, rankCouriers } from "../lib/booking/ranking";
import {
	BACKOFF_JITTER,
	BOOKING_QUEUE,
	type BookingTimings,
	bookingTimings,
	jobIdOf,
} from "../lib/booking/settings";
import { bookRequestOf, laneOf } from "../lib/booking/shipment";
import {
	type AttemptRow,
	ambiguousAttempts,
	attemptById,
	chargesOf,
	claimAttempt,
	createAttempt,
	enqueueNow,
	failOver,
	leaseOutbox,
	liveAttempt,
	markBooked,
	markFailed,
	markLateCancelled,
	type OutboxRow,
	orderUpdateRows,
	outboxDelivered,
	outboxRetryLater,
	releaseAttempt,
	settleAmbiguous,
	shipmentOf,
	sweepCandidates,
	takeOverUnsettled,
	unsettledAttempts,
} from "../lib/booking/store";
import { latestAttempt } from "../lib/booking/store/cancel";
import { parseWalletQuery, setCreditLimit, walletOf } from "../lib/booking/wallet";
import { assertNotB2B } from "../lib/channel";
import {
	type BookAnswer,
	type BookSyncAnswer,
	type Caller,
	type CallOptions,
	type CourierInfo,
	type CouriersAnswer,
	type CreditLimit,
	call,
	type OrderRecord,
	type ProcessResult,
	type Quote,
	type ShipmentDirection,
	type ShipmentRecord,
	type WalletAnswer,
	type Warehouse,
} from "../lib/contracts";
import type { CancelAnswer, OrderBookingState } from "../lib/contracts/booking";
import {
	adapterFor,
	type BookRequest,
	type BookResult,
	type CourierAdapter,
	CourierRefused,
	CourierUnavailable,
	PickupLocationUnknown,
	pickupLocationOf,
} from "../lib/couriers";
import { cursorSecretConfigured } from "../lib/cursor";
import { ApiError, apiError, validationFailed } from "../lib/errors";
import { getQueue } from "../lib/queue";
import { defineService } from "../lib/service";
import { DbMixin } from "../mixins/db.mixin";
import { WorkerMixin } from "../mixins/worker.mixin";

/** Outbox rows leased (and delivered concurrently) per relay round. */
const RELAY_BATCH = 50;

/** 409 for an order that already has a live attempt. */
function conflictFor(order_id: number, live: AttemptRow | undefined): ApiError {
	if (live?.state === "booked") {
		return apiError(
			409,
			"already_booked",
			`order ${order_id} is already booked; cancel it before booking again`,
			{
				state: "booked",
			},
		);
	}
	return apiError(409, "booking_in_progress", `a booking of order ${order_id} is already in progress`, {
		state: "booking_in_progress",
	});
}

/** Resolves `p` or rejects after `ms` (the work itself is not cancelled). */
function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	return Promise.race([
		p,
		new Promise<T>((_, reject) => {
			timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
		}),
	]).finally(() => clearTimeout(timer));
}

function message(err: unknown): string {
	return (err as Error)?.message ?? String(err);
}

/**
 * Thrown inside the worker to end an attempt as failed (plain words).
 * `fallover`: a failure of this courier (refusal, no integration, gone), after
 * which an AUTO booking moves on to the next ranked courier.
 */
class AttemptFailed extends Error {
	constructor(
		readonly reason: string,
		readonly opts: { ambiguous?: boolean; fallover?: boolean } = {},
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
type Outcome =
	| { kind: "booked"; attempt: AttemptRow; awb: string; outbox: number[] | null }
	| { kind: "failed"; attempt: AttemptRow; reason: string; outbox: number[] }
	| { kind: "cancelled"; attempt: AttemptRow; outbox: number[] }
	| { kind: "next"; attempt: AttemptRow; next: AttemptRow; outbox: number[] }
	| { kind: "lost"; attempt: AttemptRow };

/** What the worker read for an attempt (kept for an AUTO fall-over). */
interface Seen {
	order?: OrderRecord;
	warehouse?: Warehouse;
}

/** What `book` and `bookSync` have checked before creating the attempt. */
interface Prepared {
	order: OrderRecord;
	warehouse: Warehouse;
	courier: CourierInfo;
	quote: Quote;
}

/** The 200 body of book/sync for a booked attempt (§4.2). */
function syncAnswer(a: AttemptRow, awb: string): BookSyncAnswer {
	return {
		status: "booked",
		awb,
		forward_id: a.idem_key,
		logistic_id: a.logistic_id,
		order_id: a.order_id,
		courier_name: a.courier_name,
		label_url: `/v1/documents/label/${a.order_id}`,
	};
}

/** The 202 body (the async route's) for an attempt handed to the worker. */
function queuedAnswer(a: AttemptRow): BookAnswer {
	return a.mode === "auto"
		? { status: "queued", mode: "auto", idem_key: a.idem_key }
		: { status: "queued", idem_key: a.idem_key };
}

type Periodic = "relay" | "sweep";

/** State set in `created` / `started` (db comes from the DbMixin). */
interface BookingVars {
	timings: BookingTimings;
	/** interval timers of the periodic relay and sweeper */
	timers: NodeJS.Timeout[];
	/** periodic runs in progress (a run never overlaps the previous one of its kind) */
	ticking: Set<Periodic>;
	/** background work in progress (awaited by `stopped`) */
	inflight: Set<Promise<unknown>>;
	bookingStopping: boolean;
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
				concurrency: () => Number(process.env.BOOKING_CONCURRENCY) || 50,
				// a killed worker's job runs again after this lock expires
				lockDuration: () => Number(process.env.BOOKING_LOCK_MS) || 60_000,
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
		callOptions(unavailable?: string): CallOptions {
			return { timeout: this.timings.callTimeoutMs, unavailable: unavailable ?? "service_unavailable" };
		},

		/**
		 * The courier of a booking and its quote (rupees): the forced `logistic_id`,
		 * or (undefined) the top-ranked courier that prices the lane (AUTO).
		 * @throws 400 `unknown_logistic` (forced courier not on the active card),
		 *   422 `lane_not_priced`, 503 `rate_unavailable`
		 */
		async pickCourier(
			via: Caller,
			sender: number,
			order: OrderRecord,
			warehouse: Warehouse,
			logistic_id: number | undefined,
		): Promise<{ courier: CourierInfo; quote: Quote }> {
			const opts = this.callOptions("rate_unavailable");
			const lane = `${warehouse.pickup.pincode} → ${order.consignee.pincode}`;
			if (logistic_id === undefined) {
				const [ranked, q] = await Promise.all([
					rankCouriers(this.db, via, sender, order.direction, opts),
					call(via, "rates.quote", laneOf(order, warehouse), opts),
				]);
				const pick = pickAuto(ranked, q.data ?? []);
				if (!pick) {
					throw apiError(422, "lane_not_priced", `no courier on the rate card prices this lane (${lane})`);
				}
				return pick;
			}
			const courier = await call(via, "rates.getCourier", { logistic_id }, opts);
			if (!courier?.active) {
				throw apiError(
					400,
					"unknown_logistic",
					`logistic_id ${logistic_id} is not a courier on the active rate card`,
				);
			}
			const q = await call(via, "rates.quote", laneOf(order, warehouse, logistic_id), opts);
			const quote = (q.data ?? []).find((x) => x.logistic_id === logistic_id);
			if (!quote) {
				const why = (q.dropped_couriers ?? []).find((d) => d.logistic_id === logistic_id);
				throw apiError(
					422,
					"lane_not_priced",
					`${courier.logistic_name} does not price this lane (${lane})` +
						(why ? `: ${why.detail || why.reason}` : ""),
				);
			}
			return { courier, quote };
		},

		/**
		 * Outbox relay: leases up to {@link RELAY_BATCH} due undelivered rows (all,
		 * or only `ids`) with `FOR UPDATE SKIP LOCKED`, delivers them concurrently
		 * by acknowledged calls (each bounded by `callTimeoutMs`), marks the
		 * acknowledged ones delivered (one UPDATE) and schedules the redelivery of
		 * the others with backoff; repeats while full
		 * batches come back. The lease (3 × `callTimeoutMs`, at least 30 s) outlives
		 * a round, so another relay never takes a row this one is still delivering;
		 * a relay that dies leaves its rows to be re-leased when the lease ends.
		 * Receivers are idempotent and ordered by (attempt_id, seq), so neither a
		 * redelivery nor the order of deliveries within a round matters.
		 */
		async relay(ids?: number[]): Promise<{ delivered: number; failed: number }> {
			const leaseMs = Math.max(30_000, 3 * this.timings.callTimeoutMs);
			let delivered = 0;
			let failed = 0;
			for (;;) {
				const rows = await leaseOutbox(this.db, RELAY_BATCH, leaseMs, ids);
				const acked: number[] = [];
				await Promise.all(
					rows.map(async (row) => {
						try {
							await this.deliver(row);
							acked.push(row.id);
						} catch (err) {
							failed++;
							this.logger.warn(
								`booking outbox ${row.id} (${row.kind}) not delivered (try ${row.tries}): ${message(err)}`,
							);
							await outboxRetryLater(this.db, row, message(err), this.timings.relayBackoffMs);
						}
					}),
				);
				// the round's acknowledged rows in one UPDATE (a relay dying before it only redelivers them)
				await outboxDelivered(this.db, acked);
				delivered += acked.length;
				if (ids || rows.length < RELAY_BATCH || this.bookingStopping) break;
			}
			return { delivered, failed };
		},

		/**
		 * Delivers one outbox row; resolves only when acknowledged. A failure is
		 * rethrown as it came (the relay logs it and redelivers the row later).
		 */
		async deliver(row: OutboxRow): Promise<void> {
			if (row.kind === "order_update") {
				await call(this.broker, "intake.applyBookingUpdate", row.payload, {
					timeout: this.timings.callTimeoutMs,
					unavailable: false,
				});
			} else if (row.kind === "enqueue_booking") {
				await this.enqueue(Number(row.payload.attempt_id));
			} else {
				throw new Error(`unknown outbox kind ${(row as OutboxRow).kind}`);
			}
		},

		/** Adds the attempt's job (jobId `attempt-<id>`: BullMQ ignores a duplicate add). */
		async enqueue(attempt_id: number): Promise<void> {
			const t = this.timings;
			await withTimeout(
				getQueue(BOOKING_QUEUE).add(
					"book",
					{ attempt_id },
					{
						jobId: jobIdOf(attempt_id),
						attempts: t.jobAttempts,
						backoff: { type: "exponential", delay: t.backoffMs, jitter: BACKOFF_JITTER },
						removeOnComplete: true,
						removeOnFail: { age: 7 * 24 * 3600 },
					},
				),
				t.callTimeoutMs,
				"booking queue add",
			);
		},

		/**
		 * Sweeper pass: first settles attempts unsettled for `unsettledMs`
		 * ({@link resolveUnsettled}); then attempts queued for longer than
		 * `sweepAfterMs` (or with a stale claim) whose job is missing, finished or
		 * unknown get their job re-added under the same jobId.
		 */
		async sweepOnce(): Promise<{ enqueued: number }> {
			const settled = await this.resolveUnsettled();
			if (settled)
				this.logger.info(`booking sweeper: settled ${settled} unsettled attempt(s) with the courier`);
			const ids = await sweepCandidates(this.db, this.timings.sweepAfterMs, this.timings.claimStaleMs);
			let enqueued = 0;
			const q = getQueue(BOOKING_QUEUE);
			for (const id of ids) {
				let job: Job | undefined = await withTimeout(
					q.getJob(jobIdOf(id)),
					this.timings.callTimeoutMs,
					"booking queue getJob",
				);
				if (job) {
					const st = await job.getState();
					if (st === "completed" || st === "failed" || st === "unknown") {
						await job.remove().catch(() => undefined);
						job = undefined;
					}
				}
				if (!job) {
					await this.enqueue(id);
					enqueued++;
					this.logger.info(`booking sweeper: re-enqueued attempt ${id}`);
				}
			}
			return { enqueued };
		},

		/**
		 * Settles attempts unsettled (queued or claimed) for longer than
		 * `unsettledMs` since their creation: takes each over (a new claim, so a
		 * worker still holding the old one can no longer settle it) and asks the
		 * courier about our reference. Returns how many settled.
		 */
		async resolveUnsettled(): Promise<number> {
			const ms = this.timings.unsettledMs;
			let settled = 0;
			for (const id of await unsettledAttempts(this.db, ms)) {
				const a = await takeOverUnsettled(this.db, id, ms);
				if (!a) continue;
				try {
					const ids = await this.confirmWithCourier(a);
					if (ids) {
						settled++;
						this.finish(ids);
					}
				} catch (err) {
					this.logger.warn(`booking sweeper: attempt ${id} not settled: ${message(err)}`);
					await releaseAttempt(this.db, a, message(err));
				}
			}
			return settled;
		},

		/**
		 * Ends an unsettled attempt `a` (claimed by the sweeper) by what the courier
		 * knows of our reference: booked → booked and charged (or, cancel requested,
		 * the AWB cancelled at the courier and the attempt cancelled); cancelled or
		 * unknown → failed "…could not be confirmed with the courier within
		 * <BOOKING_UNSETTLED_MS>; no AWB was issued"; courier unreachable → failed,
		 * marked ambiguous (a later attempt of the order looks it up again and
		 * cancels what it finds). Returns the committed outbox ids (null: settled meanwhile).
		 */
		async confirmWithCourier(a: AttemptRow): Promise<number[] | null> {
			const within = durationWords(this.timings.unsettledMs);
			const adapter = await this.adapterOf(this.broker, a.logistic_id);
			let found: BookResult | null = null;
			if (adapter) {
				try {
					found = await adapter.lookupByReference(String(a.attempt_id));
				} catch (err) {
					this.logger.warn(`booking ${a.attempt_id}: look-up failed: ${message(err)}`);
					const reason = `${a.courier_name} could not be reached to confirm the booking within ${within}; any AWB it issued is cancelled before the order is booked again`;
					return markFailed(this.db, a, reason, true);
				}
			}
			if (found?.status === "booked" && adapter) {
				if (a.cancel_requested_at) {
					const out = await this.cancelLate(adapter, a, found.awb_number);
					return out.kind === "lost" ? null : out.outbox;
				}
				return markBooked(this.db, a, found.awb_number, found.routing_code);
			}
			const reason = `${a.courier_name}: the booking could not be confirmed with the courier within ${within}; no AWB was issued`;
			return markFailed(this.db, a, reason, found === null);
		},

		/** The adapter of courier `logistic_id`; null when the courier is gone or has no integration. */
		async adapterOf(via: Caller, logistic_id: number): Promise<CourierAdapter | null> {
			const c = await call(via, "rates.getCourier", { logistic_id }, this.callOptions());
			try {
				return c ? adapterFor(c) : null;
			} catch {
				return null;
			}
		},

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
		async runAttempt(
			via: Caller,
			a: AttemptRow,
			seen: Seen,
		): Promise<{ result: BookResult; adapter: CourierAdapter }> {
			const opts = this.callOptions();
			const order = await call(
				via,
				"intake.getOrder",
				{ sender_id: a.sender_id, order_id: a.order_id },
				opts,
			);
			if (!order) throw new AttemptFailed("the order no longer exists");
			try {
				assertNotB2B(order);
			} catch (err) {
				throw new AttemptFailed(`unsupported_channel: ${message(err)}`);
			}
			const warehouse = order.pickup_address_id
				? await call(via, "warehouses.resolve", { sender_id: a.sender_id, id: order.pickup_address_id }, opts)
				: null;
			if (!warehouse) throw new AttemptFailed("the pickup warehouse is no longer active");
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
			await this.settlePrevious(via, a);
			const req = bookRequestOf(a.attempt_id, order, warehouse, rto);
			try {
				return { result: await this.bookAt(adapter, req, warehouse), adapter };
			} catch (err) {
				if (err instanceof CourierRefused) {
					throw new AttemptFailed(`${courier.logistic_name} refused: ${err.message}`, { fallover: true });
				}
				if (!(err instanceof CourierUnavailable)) throw err;
				// Ambiguous: the courier may have booked it. Ask before retrying.
				const found = await adapter.lookupByReference(req.reference).catch((e2) => {
					this.logger.warn(`booking ${a.attempt_id}: look-up failed: ${message(e2)}`);
					return null;
				});
				if (!found) throw err;
				if (found.status === "cancelled") {
					throw new AttemptFailed(`${courier.logistic_name} reports the shipment as cancelled`);
				}
				this.logger.info(`booking ${a.attempt_id}: reconciled by reference look-up after: ${err.message}`);
				return { result: found, adapter };
			}
		},

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
		async settleAttempt(via: Caller, a: AttemptRow, enqueueDelayMs: number): Promise<Outcome> {
			if (a.cancel_requested_at) return this.settleCancelRequested(via, a);
			const seen: Seen = {};
			let booked: { result: BookResult; adapter: CourierAdapter };
			try {
				booked = await this.runAttempt(via, a, seen);
			} catch (err) {
				if (!(err instanceof AttemptFailed)) throw err;
				let reason = err.reason;
				if (a.mode === "auto" && err.opts.fallover && seen.order && seen.warehouse) {
					const moved = await this.fallOver(via, a, err.reason, seen.order, seen.warehouse, enqueueDelayMs);
					if (typeof moved !== "string") return moved;
					reason = moved;
				} else if (a.chain.length) {
					reason = chainReason(chainAfter(a, err.reason));
				}
				return this.endFailed(a, reason, err.opts.ambiguous ?? false);
			}
			const { result, adapter } = booked;
			const ids = await markBooked(this.db, a, result.awb_number, result.routing_code);
			if (ids) return { kind: "booked", attempt: a, awb: result.awb_number, outbox: ids };
			const cur = await attemptById(this.db, a.attempt_id);
			if (cur?.state === "claimed" && cur.tries === a.tries && cur.cancel_requested_at) {
				return this.cancelLate(adapter, a, result.awb_number);
			}
			if (
				cur &&
				cur.awb_number !== result.awb_number &&
				(cur.state === "failed" || cur.state === "cancelled")
			) {
				// settled without this AWB (the sweeper found nothing): the AWB must not stay live
				await adapter
					.cancel(result.awb_number)
					.then(() => this.logger.warn(`booking ${a.attempt_id}: late AWB ${result.awb_number} cancelled`))
					.catch((e) =>
						this.logger.error(
							`booking ${a.attempt_id}: late AWB ${result.awb_number} not cancelled: ${message(e)}`,
						),
					);
			}
			return { kind: "lost", attempt: cur ?? a };
		},

		/**
		 * AUTO fall-over after attempt `a`'s courier failed definitively with
		 * `reason`: the next courier of the account's ranking that prices the lane
		 * and was not tried yet gets a new attempt, created with `a`'s failure in
		 * one transaction (failOver). Returns the `next` outcome, or the plain-words
		 * failure_reason of the whole booking when it ends here (no courier left:
		 * the chain; the next courier over the credit limit).
		 */
		async fallOver(
			via: Caller,
			a: AttemptRow,
			reason: string,
			order: OrderRecord,
			warehouse: Warehouse,
			enqueueDelayMs: number,
		): Promise<Outcome | string> {
			const chain = chainAfter(a, reason);
			const opts = this.callOptions("rate_unavailable");
			const [ranked, q] = await Promise.all([
				rankCouriers(this.db, via, a.sender_id, a.direction, opts),
				call(via, "rates.quote", laneOf(order, warehouse), opts),
			]);
			const pick = nextCourier(a, ranked, q.data ?? []);
			if (!pick) return chainReason(chain);
			try {
				const res = await failOver(this.db, a, reason, {
					order_id: a.order_id,
					sender_id: a.sender_id,
					logistic_id: pick.courier.logistic_id,
					courier_name: pick.courier.logistic_name,
					mode: "auto",
					charges: chargesOf(pick.quote),
					direction: a.direction,
					via: a.via,
					chain,
					enqueueDelayMs,
				});
				// lost claim or cancel requested: endFailed settles (or finds it settled)
				if (!res) return chainReason(chain);
				this.logger.info(
					`booking ${a.attempt_id}: ${reason}; falling over to ${pick.courier.logistic_name} (attempt ${res.attempt.attempt_id})`,
				);
				return { kind: "next", attempt: a, next: res.attempt, outbox: res.outbox };
			} catch (err) {
				if (err instanceof ApiError && err.type === "credit_limit_exceeded") {
					return `${chainReason(chain)}; ${pick.courier.logistic_name} not tried: ${err.message}`;
				}
				throw err;
			}
		},

		/** Ends claimed attempt `a` as failed (or cancelled, if a cancel was requested); `lost` when no longer ours. */
		async endFailed(a: AttemptRow, reason: string, ambiguous: boolean): Promise<Outcome> {
			const ids = await markFailed(this.db, a, reason, ambiguous);
			const cur = (await attemptById(this.db, a.attempt_id)) ?? a;
			if (!ids) return { kind: "lost", attempt: cur };
			return cur.state === "cancelled"
				? { kind: "cancelled", attempt: cur, outbox: ids }
				: { kind: "failed", attempt: cur, reason: cur.failure_reason ?? reason, outbox: ids };
		},

		/**
		 * Claimed attempt `a` whose cancel was requested before its courier call:
		 * asks the courier about our reference (an earlier try may have booked
		 * it), cancels a booked AWB there, and ends the attempt `cancelled`.
		 * Throws (retry) while the courier cannot be reached.
		 */
		async settleCancelRequested(via: Caller, a: AttemptRow): Promise<Outcome> {
			const adapter = await this.adapterOf(via, a.logistic_id);
			const found = adapter ? await adapter.lookupByReference(String(a.attempt_id)) : null;
			if (adapter && found?.status === "booked") return this.cancelLate(adapter, a, found.awb_number);
			const ids = await markLateCancelled(this.db, a, null, "cancelled before the courier issued an AWB");
			return ids
				? { kind: "cancelled", attempt: a, outbox: ids }
				: { kind: "lost", attempt: (await attemptById(this.db, a.attempt_id)) ?? a };
		},

		/**
		 * The courier issued `awb` for attempt `a` after its cancel was requested:
		 * cancels the AWB at the courier, then ends the attempt `cancelled` (no
		 * charge; order update not_shipped / cancelled). A courier refusing the
		 * cancel is recorded in the note (and logged); unreachable → throws (retry).
		 */
		async cancelLate(adapter: CourierAdapter, a: AttemptRow, awb: string): Promise<Outcome> {
			let note = `cancelled while booking: late AWB ${awb} cancelled at the courier`;
			try {
				await adapter.cancel(awb);
			} catch (err) {
				if (!(err instanceof CourierRefused)) throw err;
				note = `cancelled while booking: late AWB ${awb} could not be cancelled at the courier: ${err.message}`;
				this.logger.error(`booking ${a.attempt_id}: ${note}`);
			}
			const ids = await markLateCancelled(this.db, a, awb, note);
			return ids
				? { kind: "cancelled", attempt: a, outbox: ids }
				: { kind: "lost", attempt: (await attemptById(this.db, a.attempt_id)) ?? a };
		},

		/**
		 * The checks `book` and `bookSync` share (spec §4.2, §7), in order: the
		 * order is the caller's (403), not B2B (400 unsupported_channel), of the
		 * `direction` asked (bookSync's operation; 400 validation_failed), has no
		 * live attempt (409), has an active pickup warehouse (400
		 * invalid_pickup_address); then the courier and its quote (pickCourier).
		 */
		async prepareBooking(
			via: Caller,
			sender: number,
			order_id: number,
			logistic_id: number | undefined,
			direction?: ShipmentDirection,
		): Promise<Prepared> {
			const order = await call(via, "intake.getOrder", { sender_id: sender, order_id }, this.callOptions());
			if (!order || Number(order.sender_id) !== sender) {
				const msg = "cannot create booking for another sender";
				throw apiError(403, msg, msg);
			}
			assertNotB2B(order);
			if (direction && order.direction !== direction) {
				throw validationFailed([
					direction === "reverse"
						? `operation: reverse books return orders; order ${order_id} is a forward order (use book)`
						: `operation: book books forward orders; order ${order_id} is a return order (use reverse)`,
				]);
			}
			const live = await liveAttempt(this.db, order_id);
			if (live) throw conflictFor(order_id, live);
			const warehouse = order.pickup_address_id
				? await call(
						via,
						"warehouses.resolve",
						{ sender_id: sender, id: order.pickup_address_id },
						this.callOptions(),
					)
				: null;
			if (!warehouse) {
				throw apiError(
					400,
					"invalid_pickup_address",
					"the order's pickup warehouse is not one of your active warehouses; set one before booking",
				);
			}
			const { courier, quote } = await this.pickCourier(via, sender, order, warehouse, logistic_id);
			return { order, warehouse, courier, quote };
		},

		/**
		 * Commits the attempt of a prepared booking (createAttempt: credit check,
		 * attempt, seq-1 order update, job due after `enqueueDelayMs`).
		 * @throws 409 `already_booked` / `booking_in_progress` (a concurrent booking won),
		 *   409 `credit_limit_exceeded`
		 */
		async openAttempt(
			sender: number,
			input: { order_id: number; logistic_id?: number },
			p: Prepared,
			via: "async" | "sync",
			enqueueDelayMs: number,
		): Promise<{ attempt: AttemptRow; outbox: number[] }> {
			const res = await createAttempt(this.db, {
				order_id: input.order_id,
				sender_id: sender,
				logistic_id: p.courier.logistic_id,
				courier_name: p.courier.logistic_name,
				mode: input.logistic_id === undefined ? "auto" : "forced",
				charges: chargesOf(p.quote),
				direction: p.order.direction,
				via,
				enqueueDelayMs,
			});
			if ("conflict" in res) throw conflictFor(input.order_id, res.conflict);
			return res;
		},

		/** Delivers outbox rows `ids` now (logged, left to the relay on failure). */
		async deliverNow(attempt_id: number, ids: number[] | null): Promise<void> {
			if (!ids?.length) return;
			try {
				await this.relay(ids);
			} catch (err) {
				this.logger.warn(`booking ${attempt_id}: outbox delivery deferred: ${message(err)}`);
			}
		},

		/**
		 * The inline part of book/sync: claims attempt `a` (the same conditional
		 * UPDATE as the worker) and runs it, AUTO fall-over included, until it
		 * settles or `deadline` (epoch ms) passes. Booked → 200 BookSyncAnswer;
		 * failed → 422 `booking_failed` (the courier's words; AUTO: the chain);
		 * a transient failure → the claim released, the job made due now, 202
		 * with the async body; the deadline → the job made due now, the courier
		 * call left to finish in the background (it still holds the claim), 202.
		 */
		async bookInline(
			via: Caller,
			first: AttemptRow,
			deadline: number,
		): Promise<{ status: 200; body: BookSyncAnswer } | { status: 202; body: BookAnswer }> {
			let current = first;
			for (;;) {
				const a = await claimAttempt(this.db, current.attempt_id, this.timings.claimStaleMs);
				if (!a) return this.handOver(current, false);
				const left = Math.max(0, deadline - Date.now());
				const work = this.settleAttempt(via, a, left);
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
					void this.background(`booking ${a.attempt_id} (sync, after its budget)`, () =>
						this.settleLater(work, a),
					);
					this.logger.info(`booking ${a.attempt_id}: sync budget spent; the worker takes over`);
					return this.handOver(a, true);
				}
				if ("err" in raced) {
					await releaseAttempt(this.db, a, message(raced.err));
					this.logger.info(
						`booking ${a.attempt_id}: sync booking handed to the worker: ${message(raced.err)}`,
					);
					return this.handOver(a, true);
				}
				const out = raced.out;
				if (out.kind !== "lost") await this.deliverNow(a.attempt_id, out.outbox);
				if (out.kind === "booked") return { status: 200, body: syncAnswer(a, out.awb) };
				if (out.kind === "next") {
					current = out.next;
					continue;
				}
				if (out.kind === "failed") throw apiError(422, "booking_failed", out.reason);
				if (out.kind === "cancelled") {
					throw apiError(422, "booking_failed", "the booking was cancelled while the courier was booking it");
				}
				const cur = out.attempt;
				if (cur.state === "booked" && cur.awb_number)
					return { status: 200, body: syncAnswer(cur, cur.awb_number) };
				if (cur.state === "failed")
					throw apiError(422, "booking_failed", cur.failure_reason ?? "booking failed");
				return this.handOver(cur, false);
			}
		},

		/** After the sync budget: lets the inline courier call settle the attempt (or release its claim). */
		async settleLater(work: Promise<Outcome>, a: AttemptRow): Promise<void> {
			try {
				const out = await work;
				if (out.kind !== "lost") this.finish(out.outbox);
				// a fall-over's next attempt is enqueued by the relay when its row falls due
				if (out.kind === "next") this.finish(await enqueueNow(this.db, out.next.attempt_id));
			} catch (err) {
				await releaseAttempt(this.db, a, message(err));
				throw err;
			}
		},

		/** 202 of book/sync: the attempt is the worker's now (its job made due and relayed when `now`). */
		async handOver(a: AttemptRow, now: boolean): Promise<{ status: 202; body: BookAnswer }> {
			if (now) this.finish(await enqueueNow(this.db, a.attempt_id));
			return { status: 202, body: queuedAnswer(a) };
		},

		/** Books; an unknown pickup location is registered once, then the booking is retried. */
		async bookAt(adapter: CourierAdapter, req: BookRequest, warehouse: Warehouse): Promise<BookResult> {
			try {
				return await adapter.book(req);
			} catch (err) {
				if (!(err instanceof PickupLocationUnknown)) throw err;
				await adapter.registerWarehouse(pickupLocationOf(warehouse));
				return adapter.book(req);
			}
		},

		/**
		 * Settles earlier attempts of the same order that failed with the courier
		 * unreachable: looks their reference up and cancels a shipment the courier
		 * did book, so the order never holds two live AWBs. An earlier courier that
		 * is gone or has no integration settles as such. Throws a plain Error
		 * (retry) while that courier cannot be reached; AttemptFailed when it
		 * refuses the cancel.
		 */
		async settlePrevious(via: Caller, a: AttemptRow): Promise<void> {
			// known at the claim: no earlier ambiguous attempt (none can become one while `a` is live)
			if (a.earlier_ambiguous === false) return;
			for (const p of await ambiguousAttempts(this.db, a.order_id, a.attempt_id)) {
				const c = await call(via, "rates.getCourier", { logistic_id: p.logistic_id }, this.callOptions());
				let adapter: CourierAdapter | null = null;
				try {
					adapter = c && adapterFor(c);
				} catch {
					/* no integration: nothing to look up */
				}
				if (!c || !adapter) {
					const note = c ? "courier has no integration" : "courier no longer configured";
					await settleAmbiguous(this.db, p.attempt_id, note);
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
				await settleAmbiguous(this.db, p.attempt_id, note);
			}
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
			void this.background("booking outbox relay", () => this.relay(ids));
		},

		/** One timer tick; a run never overlaps the previous one of its kind. */
		tick(kind: Periodic): void {
			if (this.bookingStopping || this.ticking.has(kind)) return;
			this.ticking.add(kind);
			const work = kind === "relay" ? () => this.relay() : () => this.sweepOnce();
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
			access: { writes: true },
			async handler(ctx): Promise<BookAnswer> {
				const sender = senderOf(ctx);
				const input = parseBookInput(ctx.params);
				const prepared = await this.prepareBooking(ctx, sender, input.order_id, input.logistic_id);
				const res = await this.openAttempt(sender, input, prepared, "async", 0);
				// Committed: deliver the outbox now; whatever fails is retried by the relay.
				await this.deliverNow(res.attempt.attempt_id, res.outbox);
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
				const id = ctx.params.attempt_id;
				const job = ctx.meta?.job;
				const lastTry = job !== undefined && Number(job.attemptsMade ?? 0) + 1 >= this.timings.jobAttempts;
				const a = await claimAttempt(this.db, id, this.timings.claimStaleMs);
				if (!a) {
					const cur = await attemptById(this.db, id);
					if (!cur) return { attempt_id: id, state: "missing" };
					if (cur.state === "claimed" && !lastTry) {
						throw new Error(`attempt ${id} is being processed by another worker`);
					}
					return { attempt_id: id, state: cur.state, awb_number: cur.awb_number };
				}
				try {
					const out = await this.settleAttempt(ctx, a, 0);
					if (out.kind === "lost") {
						return { attempt_id: id, state: out.attempt.state, awb_number: out.attempt.awb_number };
					}
					this.finish(out.outbox);
					if (out.kind === "booked") return { attempt_id: id, state: "booked", awb_number: out.awb };
					return { attempt_id: id, state: out.kind === "cancelled" ? "cancelled" : "failed" };
				} catch (err) {
					if (lastTry) {
						const courierDown = err instanceof CourierUnavailable;
						const reason = courierDown
							? `${a.courier_name} could not be reached after ${a.tries} tries; no AWB was issued`
							: `the booking could not be completed after ${a.tries} tries (a service was unavailable)`;
						const whole = a.chain.length ? chainReason(chainAfter(a, reason)) : reason;
						const out = await this.endFailed(a, whole, courierDown);
						if (out.kind !== "lost") this.finish(out.outbox);
						return { attempt_id: id, state: out.attempt.state };
					}
					await releaseAttempt(this.db, a, message(err));
					throw err;
				}
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
		 *   logistic_id, order_id, courier_name, label_url:"/v1/documents/label/<order_id>"}`
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
			access: { writes: true },
			async handler(ctx): Promise<BookSyncAnswer | BookAnswer> {
				const started = Date.now();
				const sender = senderOf(ctx);
				const input = parseBookSyncInput(ctx.params);
				const direction: ShipmentDirection = input.operation === "reverse" ? "reverse" : "forward";
				const prepared = await this.prepareBooking(ctx, sender, input.order_id, input.logistic_id, direction);
				const budget = this.timings.syncBudgetMs;
				const res = await this.openAttempt(sender, input, prepared, "sync", budget);
				await this.deliverNow(res.attempt.attempt_id, await orderUpdateRows(this.db, res.outbox));
				const answer = await this.bookInline(ctx, res.attempt, started + budget);
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
		 *   `cancelled` (intake releases the order number), relayed before the answer;
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
			access: { writes: true },
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
					const msg = "cannot cancel for another sender";
					throw apiError(403, msg, msg);
				}
				const relay = async (ids: number[]): Promise<void> => {
					try {
						await this.relay(ids);
					} catch (err) {
						this.logger.warn(`cancel of order ${input.order_id}: outbox delivery deferred: ${message(err)}`);
					}
				};
				return cancelBooking(
					{ db: this.db, via: ctx, callOptions: this.callOptions(), relay },
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
		 * GET /v1/shipping/couriers (spec §4.2, §2.8, §7). Query `shipment_type`:
		 * absent or `0` forward, `1` or `2` reverse. Answers 200 CouriersAnswer:
		 * `data` = the account's AUTO ranking for that direction
		 * `[{logistic_id, logistic_name, enabled, priority (1..n), serviceable_pincodes}]`
		 * over the couriers of the active rate card; `strategy`, `unique_pincodes`,
		 * `rules`, `restrictions`, `shipments_30d` (lib/booking/couriers.ts
		 * `couriersAnswer`; shapes in docs/DECISIONS.md). Any authenticated role.
		 *
		 * Errors: 400 `shipment_type must be 0 (forward), 1 or 2 (reverse)`;
		 * 503 `rate_unavailable` (rates or the pincode directory unreachable).
		 */
		couriers: {
			access: { auth: true },
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
			access: { writes: true, capability: "courier.rank" },
			async handler(ctx): Promise<CouriersAnswer> {
				const sender = senderOf(ctx);
				const input = parsePriorityBody(ctx.params);
				const opts = this.callOptions("rate_unavailable");
				await setRanking(this.db, ctx, sender, input, opts);
				return couriersAnswer(this.db, ctx, sender, input, opts);
			},
		},

		/**
		 * GET /v1/wallet (ours; docs/DECISIONS.md; §2.12, §4.8): the caller's
		 * post-paid wallet. Query `limit` (integer 1–1000, default 20), `cursor`
		 * (a `nextCursor` of this route). Answers 200 `{balance, credit_limit,
		 * data:[{id, kind:"charge"|"refund", amount, order_id, attempt_id,
		 * awb_number, note, created_at}], pagination:{mode:"cursor", limit,
		 * nextCursor}}`: money in rupees (balance = refunds − charges, negative =
		 * owed; credit_limit null = none), movements newest first, timestamps UTC,
		 * `nextCursor` null on the last page. Only the caller's account.
		 *
		 * Access: any authenticated role (read-only roles may read).
		 *
		 * Errors: 400 `validation_failed` details `limit: must be an integer from 1 to 1000`;
		 * 400 `cursor: unrecognised shape` (not a cursor this route issued to this account).
		 */
		wallet: {
			access: { auth: true },
			async handler(ctx): Promise<WalletAnswer> {
				const sender = senderOf(ctx);
				return walletOf(this.db, sender, parseWalletQuery(ctx.params, sender));
			},
		},

		/**
		 * Ops (internal, no route): sets an account's credit limit in rupees
		 * (≥ 0, rounded to the paisa) or removes it (`null`: post-paid without
		 * limit, the default). `{sender_id, credit_limit}` → the same, as stored.
		 * A booking that would take the outstanding amount beyond the limit is
		 * refused with 409 `credit_limit_exceeded` (lib/booking/store/ledger.ts `assertCredit`).
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

		/** Ops: delivers due outbox rows now. → `{delivered, failed}`. */
		relayOutbox: {
			async handler(): Promise<{ delivered: number; failed: number }> {
				return this.relay();
			},
		},

		/** Ops: one sweeper pass now. → `{enqueued}`. */
		sweep: {
			async handler(): Promise<{ enqueued: number }> {
				return this.sweepOnce();
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
	/** Refuses to run without a cursor secret (wallet pages are signed; ARCHITECTURE §2: fail loudly at start). */
	async started() {
		if (!cursorSecretConfigured()) {
			throw new Error("booking: CURSOR_SECRET or LABEL_LINK_SECRET is required (signed page cursors)");
		}
		this.bookingStopping = false;
		this.timers = [
			setInterval(() => this.tick("relay"), this.timings.relayMs),
			setInterval(() => this.tick("sweep"), this.timings.sweepMs),
		];
	},
	async stopped() {
		this.bookingStopping = true;
		for (const t of this.timers) clearInterval(t);
		this.timers = [];
		await Promise.allSettled([...this.inflight]);
	},
});
