/**
 * `booking` service: courier booking of orders (spec §4.2 book, §2.4, §3;
 * ARCHITECTURE §5 durability).
 *
 * Public (gateway): `booking.book` — POST /v1/shipping/book.
 * Internal (lib/contracts.ts): `booking.getShipment` {sender_id, order_id} → ShipmentRecord | null.
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
import type { Context, ServiceSchema } from "moleculer";
import type { Sequelize } from "sequelize";
import { senderOf } from "../lib/auth";
import { BOOKING_MIGRATIONS } from "../lib/booking/migrations";
import { parseBookInput } from "../lib/booking/params";
import { type Caller, pickAuto, rankCouriers } from "../lib/booking/ranking";
import { BOOKING_QUEUE, type BookingTimings, bookingTimings, jobIdOf } from "../lib/booking/settings";
import { bookRequestOf, isUnsupportedChannel, laneOf, pickupLocationOf } from "../lib/booking/shipment";
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
import type {
	CourierInfo,
	OrderRecord,
	Quote,
	QuoteResult,
	ShipmentRecord,
	WarehouseRow,
} from "../lib/contracts";
import {
	adapterFor,
	type BookRequest,
	type BookResult,
	type CourierAdapter,
	CourierRefused,
	CourierUnavailable,
	PickupLocationUnknown,
} from "../lib/couriers";
import { type ApiError, apiError, errorBodyOf } from "../lib/errors";
import { getQueue } from "../lib/queue";
import { DbMixin } from "../mixins/db.mixin";
import { WorkerMixin } from "../mixins/worker.mixin";

/** Answer of `booking.book` (202). Never carries the AWB. */
export type BookAnswer =
	| { status: "queued"; idem_key: string }
	| { status: "queued"; mode: "auto"; idem_key: string };

/** Answer of `booking.processAttempt`. */
export interface ProcessResult {
	attempt_id: number;
	state: string;
	awb_number?: string | null;
}

const B2B_MESSAGE = "B2B / multi-box consignments are not supported";

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

interface BookingVars {
	db: Sequelize;
	timings: BookingTimings;
	relayTimer?: NodeJS.Timeout;
	sweepTimer?: NodeJS.Timeout;
	relayRunning?: Promise<unknown>;
	sweepRunning?: Promise<unknown>;
	bookingStopping?: boolean;
}

interface BookingMethods {
	callService<R>(ctx: Context | null, action: string, params: unknown, unavailable: string): Promise<R>;
	relay(ids?: number[]): Promise<{ delivered: number; failed: number }>;
	deliver(row: OutboxRow): Promise<void>;
	enqueue(attempt_id: number): Promise<void>;
	sweepOnce(): Promise<{ enqueued: number }>;
	runAttempt(ctx: Context, a: AttemptRow): Promise<ProcessResult>;
	bookAt(adapter: CourierAdapter, req: BookRequest, warehouse: WarehouseRow): Promise<BookResult>;
	settlePrevious(ctx: Context, a: AttemptRow): Promise<void>;
	finish(ids: number[] | null): void;
	tick(kind: "relay" | "sweep"): void;
}

type This = BookingVars & BookingMethods & { broker: any; logger: any };

const BookingService = {
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
			async handler(this: This, ctx: Context<Record<string, unknown>, any>): Promise<BookAnswer> {
				const sender = senderOf(ctx);
				const input = parseBookInput(ctx.params);
				const order = await this.callService<OrderRecord | null>(
					ctx,
					"intake.getOrder",
					{ sender_id: sender, order_id: input.order_id },
					"service_unavailable",
				);
				if (!order || Number(order.sender_id) !== sender) {
					const msg = "cannot create booking for another sender";
					throw apiError(403, msg, msg);
				}
				if (isUnsupportedChannel(order)) throw apiError(400, "unsupported_channel", B2B_MESSAGE);
				const live = await liveAttempt(this.db, input.order_id);
				if (live) throw conflictFor(input.order_id, live);
				const warehouse = order.pickup_address_id
					? await this.callService<WarehouseRow | null>(
							ctx,
							"warehouses.resolve",
							{ sender_id: sender, id: order.pickup_address_id },
							"service_unavailable",
						)
					: null;
				if (!warehouse) {
					throw apiError(
						400,
						"invalid_pickup_address",
						"the order's pickup warehouse is not one of your active warehouses; set one before booking",
					);
				}
				const shipment_type = order.shipment_type === 1 ? 1 : 0;
				let courier: CourierInfo;
				let quote: Quote;
				if (input.logistic_id !== undefined) {
					const id = input.logistic_id;
					const c = await this.callService<CourierInfo | null>(
						ctx,
						"rates.getCourier",
						{ logistic_id: id },
						"rate_unavailable",
					);
					if (!c?.active) {
						throw apiError(
							400,
							"unknown_logistic",
							`logistic_id ${id} is not a courier on the active rate card`,
						);
					}
					const q = await this.callService<QuoteResult>(
						ctx,
						"rates.quote",
						laneOf(order, warehouse, id),
						"rate_unavailable",
					);
					const hit = (q.data ?? []).find((x) => x.logistic_id === id);
					if (!hit) {
						const why = (q.dropped_couriers ?? []).find((d) => d.logistic_id === id);
						throw apiError(
							422,
							"lane_not_priced",
							`${c.logistic_name} does not price this lane (${warehouse.pincode} → ${order.receiver.pincode})` +
								(why ? `: ${why.detail || why.reason}` : ""),
						);
					}
					courier = c;
					quote = hit;
				} else {
					const call: Caller = (action, params) => this.callService(ctx, action, params, "rate_unavailable");
					const [ranked, q] = await Promise.all([
						rankCouriers(call, sender, shipment_type),
						this.callService<QuoteResult>(ctx, "rates.quote", laneOf(order, warehouse), "rate_unavailable"),
					]);
					const pick = pickAuto(ranked, q.data ?? []);
					if (!pick) {
						throw apiError(
							422,
							"lane_not_priced",
							`no courier on the rate card prices this lane (${warehouse.pincode} → ${order.receiver.pincode})`,
						);
					}
					courier = pick.courier;
					quote = pick.quote;
				}
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
			async handler(this: This, ctx: Context<{ attempt_id: number }, any>): Promise<ProcessResult> {
				const id = ctx.params.attempt_id;
				const job = ctx.meta?.job as { attemptsMade?: number } | undefined;
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

		/** Internal (lib/contracts.ts): the booked shipment of an order, or null. Money in rupees. */
		getShipment: {
			params: {
				sender_id: { type: "number", integer: true, positive: true, convert: true },
				order_id: { type: "number", integer: true, positive: true, convert: true },
			},
			async handler(
				this: This,
				ctx: Context<{ sender_id: number; order_id: number }>,
			): Promise<ShipmentRecord | null> {
				return shipmentOf(this.db, ctx.params.sender_id, ctx.params.order_id);
			},
		},

		/** Ops: delivers due outbox rows now. → `{delivered, failed}`. */
		relayOutbox: {
			async handler(this: This) {
				return this.relay();
			},
		},

		/** Ops: one sweeper pass now. → `{enqueued}`. */
		sweep: {
			async handler(this: This) {
				return this.sweepOnce();
			},
		},
	},
	methods: {
		/**
		 * Calls another service with the configured timeout. Contract errors
		 * (ApiError) pass through; anything else (unreachable, timeout) becomes
		 * 503 `<unavailable>`.
		 */
		async callService<R>(
			this: This,
			ctx: Context | null,
			action: string,
			params: unknown,
			unavailable: string,
		): Promise<R> {
			try {
				const opts = { timeout: this.timings.callTimeoutMs };
				return (await (ctx ? ctx.call(action, params, opts) : this.broker.call(action, params, opts))) as R;
			} catch (err) {
				if (errorBodyOf(err)) throw err;
				this.logger.warn(`booking: ${action} failed: ${message(err)}`);
				throw apiError(503, unavailable, `${action.split(".")[0]} is unavailable; retry`);
			}
		},

		/**
		 * Outbox relay: leases due undelivered rows (all, or only `ids`) with
		 * `FOR UPDATE SKIP LOCKED`, delivers each by an acknowledged call, marks it
		 * delivered, or schedules a redelivery with backoff.
		 */
		async relay(this: This, ids?: number[]) {
			let delivered = 0;
			let failed = 0;
			for (;;) {
				const rows = await leaseOutbox(this.db, 50, 30_000, ids);
				for (const row of rows) {
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
				}
				if (ids || rows.length < 50 || this.bookingStopping) break;
			}
			return { delivered, failed };
		},

		/** Delivers one outbox row; resolves only when acknowledged. */
		async deliver(this: This, row: OutboxRow) {
			if (row.kind === "order_update") {
				await this.broker.call("intake.applyBookingUpdate", row.payload, {
					timeout: this.timings.callTimeoutMs,
				});
			} else if (row.kind === "enqueue_booking") {
				await this.enqueue(Number(row.payload.attempt_id));
			} else {
				throw new Error(`unknown outbox kind ${(row as OutboxRow).kind}`);
			}
		},

		/** Adds the attempt's job (jobId `attempt-<id>`: BullMQ ignores a duplicate add). */
		async enqueue(this: This, attempt_id: number) {
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
		async sweepOnce(this: This) {
			const ids = await sweepCandidates(this.db, this.timings.sweepAfterMs, this.timings.claimStaleMs);
			let enqueued = 0;
			const q = getQueue(BOOKING_QUEUE);
			for (const id of ids) {
				let job = await withTimeout<any>(
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

		/** Books a claimed attempt; throws AttemptFailed for a definitive failure. */
		async runAttempt(this: This, ctx: Context, a: AttemptRow): Promise<ProcessResult> {
			const call = <R>(action: string, params: unknown) =>
				this.callService<R>(ctx, action, params, "service_unavailable");
			const order = await call<OrderRecord | null>("intake.getOrder", {
				sender_id: a.sender_id,
				order_id: a.order_id,
			});
			if (!order) throw new AttemptFailed("the order no longer exists");
			if (isUnsupportedChannel(order)) throw new AttemptFailed(`unsupported_channel: ${B2B_MESSAGE}`);
			const warehouse = order.pickup_address_id
				? await call<WarehouseRow | null>("warehouses.resolve", {
						sender_id: a.sender_id,
						id: order.pickup_address_id,
					})
				: null;
			if (!warehouse) throw new AttemptFailed("the pickup warehouse is no longer active");
			const rto =
				order.rto_address_id && order.rto_address_id !== order.pickup_address_id
					? await call<WarehouseRow | null>("warehouses.resolve", {
							sender_id: a.sender_id,
							id: order.rto_address_id,
						})
					: null;
			const courier = await call<CourierInfo | null>("rates.getCourier", { logistic_id: a.logistic_id });
			if (!courier?.active) throw new AttemptFailed(`${a.courier_name} is no longer available`);
			let adapter: CourierAdapter;
			try {
				adapter = adapterFor(courier);
			} catch {
				throw new AttemptFailed(`${a.courier_name} has no courier integration`);
			}
			await this.settlePrevious(ctx, a);
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
		async bookAt(this: This, adapter: CourierAdapter, req: BookRequest, warehouse: WarehouseRow) {
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
		 * did book, so the order never holds two live AWBs. Throws (retry) while
		 * that courier cannot be reached; AttemptFailed when it refuses the cancel.
		 */
		async settlePrevious(this: This, ctx: Context, a: AttemptRow) {
			for (const p of await ambiguousAttempts(this.db, a.order_id, a.attempt_id)) {
				const c = await this.callService<CourierInfo | null>(
					ctx,
					"rates.getCourier",
					{ logistic_id: p.logistic_id },
					"service_unavailable",
				);
				if (!c) {
					await settleAmbiguous(this.db, p.attempt_id, "courier no longer configured");
					continue;
				}
				const adapter = adapterFor(c);
				const found = await adapter.lookupByReference(String(p.attempt_id));
				if (found && found.status === "booked") {
					try {
						await adapter.cancel(found.awb_number);
					} catch (err) {
						if (err instanceof CourierRefused) {
							throw new AttemptFailed(
								`an earlier booking at ${c.logistic_name} (AWB ${found.awb_number}) could not be cancelled: ${err.message}`,
							);
						}
						throw err;
					}
					await settleAmbiguous(
						this.db,
						p.attempt_id,
						`late AWB ${found.awb_number} cancelled at the courier`,
					);
				} else {
					await settleAmbiguous(
						this.db,
						p.attempt_id,
						found ? "already cancelled at the courier" : "unknown to the courier",
					);
				}
			}
		},

		/** Relays freshly committed outbox rows without waiting (the timer retries failures). */
		finish(this: This, ids: number[] | null) {
			if (!ids?.length) return;
			this.relay(ids).catch((err) => this.logger.warn(`booking outbox relay: ${message(err)}`));
		},

		/** One timer tick; a tick never overlaps the previous one of its kind. */
		tick(this: This, kind: "relay" | "sweep") {
			if (this.bookingStopping) return;
			if (kind === "relay" && !this.relayRunning) {
				this.relayRunning = this.relay()
					.catch((err) => this.logger.warn(`booking outbox relay: ${message(err)}`))
					.finally(() => {
						this.relayRunning = undefined;
					});
			}
			if (kind === "sweep" && !this.sweepRunning) {
				this.sweepRunning = this.sweepOnce()
					.catch((err) => this.logger.warn(`booking sweeper: ${message(err)}`))
					.finally(() => {
						this.sweepRunning = undefined;
					});
			}
		},
	},
	created(this: This) {
		this.timings = bookingTimings();
	},
	async started(this: This) {
		this.bookingStopping = false;
		this.relayTimer = setInterval(() => this.tick("relay"), this.timings.relayMs);
		this.sweepTimer = setInterval(() => this.tick("sweep"), this.timings.sweepMs);
	},
	async stopped(this: This) {
		this.bookingStopping = true;
		clearInterval(this.relayTimer);
		clearInterval(this.sweepTimer);
		await Promise.allSettled([this.relayRunning, this.sweepRunning]);
	},
} satisfies ServiceSchema<Record<string, never>, any, any>;

export default BookingService;
