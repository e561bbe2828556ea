/**
 * `booking` service: courier booking of orders (spec §4.2 book, §2.4, §3;
 * ARCHITECTURE §5 durability).
 *
 * Public (gateway): `booking.book` — POST /v1/shipping/book.
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
 *    stale claims) whose BullMQ job is missing (Redis loss), same jobId.
 * 4. One order never holds two live AWBs: a partial unique index allows one
 *    live attempt (queued, claimed, booked) per order; an attempt that failed
 *    with the courier unreachable is marked `ambiguous`, and the next attempt
 *    of that order first looks its reference up and cancels what it finds.
 *
 * Timings: see lib/booking/settings.ts.
 */
import type { Job } from "bullmq";
import { senderOf } from "../lib/auth";
import { BOOKING_MIGRATIONS } from "../lib/booking/migrations";
import { parseBookInput } from "../lib/booking/params";
import { pickAuto, rankCouriers } from "../lib/booking/ranking";
import { BOOKING_QUEUE, type BookingTimings, bookingTimings, jobIdOf } from "../lib/booking/settings";
import { bookRequestOf, laneOf } from "../lib/booking/shipment";
import {
	type AttemptRow,
	ambiguousAttempts,
	attemptById,
	chargesOf,
	claimAttempt,
	createAttempt,
	leaseOutbox,
	liveAttempt,
	markBooked,
	markFailed,
	type OutboxRow,
	outboxDelivered,
	outboxRetryLater,
	releaseAttempt,
	settleAmbiguous,
	shipmentOf,
	sweepCandidates,
} from "../lib/booking/store";
import { assertNotB2B } from "../lib/channel";
import {
	type BookAnswer,
	type Caller,
	type CallOptions,
	type CourierInfo,
	call,
	type OrderRecord,
	type ProcessResult,
	type Quote,
	type ShipmentRecord,
	type Warehouse,
} from "../lib/contracts";
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
import { type ApiError, apiError } from "../lib/errors";
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

/** Thrown inside the worker to end an attempt as failed (plain words). */
class AttemptFailed extends Error {
	constructor(
		readonly reason: string,
		readonly ambiguous = false,
	) {
		super(reason);
	}
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
					rankCouriers(via, sender, order.direction, opts),
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
		 * by acknowledged calls (each bounded by `callTimeoutMs`), marks each
		 * delivered or schedules its redelivery with backoff; repeats while full
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
				await Promise.all(
					rows.map(async (row) => {
						try {
							await this.deliver(row);
							await outboxDelivered(this.db, row.id);
							delivered++;
						} catch (err) {
							failed++;
							this.logger.warn(
								`booking outbox ${row.id} (${row.kind}) not delivered (try ${row.tries}): ${message(err)}`,
							);
							await outboxRetryLater(this.db, row, message(err), this.timings.relayBackoffMs);
						}
					}),
				);
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
						backoff: { type: "exponential", delay: t.backoffMs },
						removeOnComplete: true,
						removeOnFail: { age: 7 * 24 * 3600 },
					},
				),
				t.callTimeoutMs,
				"booking queue add",
			);
		},

		/**
		 * Sweeper pass: attempts queued for longer than `sweepAfterMs` (or with a
		 * stale claim) whose job is missing, finished or unknown get their job
		 * re-added under the same jobId.
		 */
		async sweepOnce(): Promise<{ enqueued: number }> {
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
		 * Books a claimed attempt; throws AttemptFailed for a definitive failure.
		 *
		 * The order, its warehouses and the courier are read afresh here although
		 * `book` read them moments before: a job may run minutes later (retries,
		 * sweeper), on another pod, and must refuse what changed meanwhile (order
		 * gone or B2B — spec §1 has the worker refuse `unsupported_channel` —,
		 * warehouse retired, courier deactivated). The attempt row therefore holds
		 * no copy of them (nor the consignee's address).
		 */
		async runAttempt(via: Caller, a: AttemptRow): Promise<ProcessResult> {
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
			const rto =
				order.rto_address_id && order.rto_address_id !== order.pickup_address_id
					? await call(via, "warehouses.resolve", { sender_id: a.sender_id, id: order.rto_address_id }, opts)
					: null;
			const courier = await call(via, "rates.getCourier", { logistic_id: a.logistic_id }, opts);
			if (!courier?.active) throw new AttemptFailed(`${a.courier_name} is no longer available`);
			let adapter: CourierAdapter;
			try {
				adapter = adapterFor(courier);
			} catch {
				throw new AttemptFailed(`${a.courier_name} has no courier integration`);
			}
			await this.settlePrevious(via, a);
			const req = bookRequestOf(a.attempt_id, order, warehouse, rto);
			let result: BookResult | null = null;
			try {
				result = await this.bookAt(adapter, req, warehouse);
			} catch (err) {
				if (err instanceof CourierRefused)
					throw new AttemptFailed(`${courier.logistic_name} refused: ${err.message}`);
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
				result = found;
			}
			this.finish(await markBooked(this.db, a, result.awb_number, result.routing_code));
			return { attempt_id: a.attempt_id, state: "booked", awb_number: result.awb_number };
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
				const order = await call(
					ctx,
					"intake.getOrder",
					{ sender_id: sender, order_id: input.order_id },
					this.callOptions(),
				);
				if (!order || Number(order.sender_id) !== sender) {
					const msg = "cannot create booking for another sender";
					throw apiError(403, msg, msg);
				}
				assertNotB2B(order);
				const live = await liveAttempt(this.db, input.order_id);
				if (live) throw conflictFor(input.order_id, live);
				const warehouse = order.pickup_address_id
					? await call(
							ctx,
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
				const { courier, quote } = await this.pickCourier(ctx, sender, order, warehouse, input.logistic_id);
				const res = await createAttempt(this.db, {
					order_id: input.order_id,
					sender_id: sender,
					logistic_id: courier.logistic_id,
					courier_name: courier.logistic_name,
					mode: input.logistic_id === undefined ? "auto" : "forced",
					charges: chargesOf(quote),
				});
				if ("conflict" in res) throw conflictFor(input.order_id, res.conflict);
				// Committed: deliver the outbox now; whatever fails is retried by the relay.
				try {
					await this.relay(res.outbox);
				} catch (err) {
					this.logger.warn(`booking ${res.attempt.attempt_id}: outbox delivery deferred: ${message(err)}`);
				}
				ctx.meta.$statusCode = 202;
				const idem_key = res.attempt.idem_key;
				return input.logistic_id === undefined
					? { status: "queued", mode: "auto", idem_key }
					: { status: "queued", idem_key };
			},
		},

		/**
		 * Worker step for one attempt (BullMQ job of queue "booking"; at-least-once,
		 * idempotent). Claims the attempt (queued → claimed, or a stale claim);
		 * an attempt already booked/failed/cancelled is a no-op. Books at the courier
		 * with the attempt id as reference. Courier unreachable (timeout, reset, 5xx):
		 * looks the reference up; found → booked; else the claim is released and the
		 * error thrown so BullMQ retries with backoff; on the last try → failed (plain
		 * words). Courier refusal → failed `<courier> refused: <courier's words>`.
		 * Returns `{attempt_id, state, awb_number?}`.
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
					return await this.runAttempt(ctx, a);
				} catch (err) {
					if (err instanceof AttemptFailed) {
						this.finish(await markFailed(this.db, a, err.reason, err.ambiguous));
						return { attempt_id: id, state: "failed" };
					}
					if (lastTry) {
						const courierDown = err instanceof CourierUnavailable;
						const reason = courierDown
							? `${a.courier_name} could not be reached after ${a.tries} tries; no AWB was issued`
							: `the booking could not be completed after ${a.tries} tries (a service was unavailable)`;
						this.finish(await markFailed(this.db, a, reason, courierDown));
						return { attempt_id: id, state: "failed" };
					}
					await releaseAttempt(this.db, id, message(err));
					throw err;
				}
			},
		},

		// STUB(sync): replaced by the sync work of issue 6.
		bookSync: {
			access: { writes: true },
			handler() {
				throw apiError(501, "not_implemented", "bookSync is not implemented yet");
			},
		},
		// END STUB(sync)

		// STUB(cancel): replaced by the cancel work of issue 6.
		cancel: {
			access: { writes: true },
			handler() {
				throw apiError(501, "not_implemented", "cancel is not implemented yet");
			},
		},
		// END STUB(cancel)

		// STUB(cancel): replaced by the cancel work of issue 6.
		orderState: {
			handler() {
				throw apiError(501, "not_implemented", "orderState is not implemented yet");
			},
		},
		// END STUB(cancel)

		// STUB(couriers): replaced by the couriers work of issue 6.
		couriers: {
			access: { auth: true },
			handler() {
				throw apiError(501, "not_implemented", "couriers is not implemented yet");
			},
		},
		// END STUB(couriers)

		// STUB(couriers): replaced by the couriers work of issue 6.
		setPriority: {
			access: { writes: true, capability: "courier.rank" },
			handler() {
				throw apiError(501, "not_implemented", "setPriority is not implemented yet");
			},
		},
		// END STUB(couriers)

		// STUB(wallet): replaced by the wallet work of issue 6.
		wallet: {
			access: { auth: true },
			handler() {
				throw apiError(501, "not_implemented", "wallet is not implemented yet");
			},
		},
		// END STUB(wallet)

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
	async started() {
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
