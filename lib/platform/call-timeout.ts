/**
 * Moleculer's `Timeout` middleware without a timer and a promise race per call (issue 32,
 * docs/decisions/0125-call-deadlines.md; a framework patch, docs/decisions/0087-framework-patches.md §12).
 *
 * Moleculer 0.15's `Timeout` middleware bounds every action call, local and remote, by `ctx.options.timeout`
 * through `Promise.prototype.timeout`: a new promise holding a `setTimeout`, a `Promise.race` of it with the
 * call, and a `.then`/`.catch` pair clearing the timer; then a `.catch` of its own. A bearer GET is two calls in
 * one process (the gateway's `rest` action and the action it calls), so that is two timers and about a dozen
 * promises per request. {@link CallTimeout} keeps its behaviour (the same default resolution, `startHrTime`, log
 * line, `moleculer.request.timeout.total` metric, stream event and `RequestTimeoutError`) and replaces the
 * mechanism: one promise per call, settled by the call or by {@link DeadlineClock} at its deadline.
 */

import { Stream } from "node:stream";
import { type ActionSchema, type Context, Errors, type Middleware, type ServiceBroker } from "moleculer";

/** Moleculer's counter of timed-out requests (its `METRIC.MOLECULER_REQUEST_TIMEOUT_TOTAL`). */
const TIMEOUT_TOTAL = "moleculer.request.timeout.total";

/**
 * The width of a deadline slot (ms): a deadline fires at the first tick at or after it, between 0 and about
 * this much late (plus the event loop's own lateness); never early.
 */
export const DEADLINE_SLOT_MS = 10;

/** A pending deadline: {@link DeadlineClock.arm}'s handle. */
export interface Deadline {
	/** Its slot: `ceil(deadline / DEADLINE_SLOT_MS)`, the deadline in ms of `performance.now()` (monotonic). */
	slot: number;
	/** Called once at the deadline unless disarmed before. */
	expire: () => void;
}

/**
 * Many deadlines on one interval timer: each deadline joins the set of its {@link DEADLINE_SLOT_MS} slot, and a
 * tick every slot width expires the sets whose slot has come. Arming and disarming is a set insertion and
 * deletion, where a `setTimeout` per deadline is an object in Node's timer lists and a system timer update. A slot's
 * set stays until its tick, even emptied, and the interval runs until the first tick that finds nothing pending (it
 * keeps the process alive as a pending `setTimeout` would): a call that settles within its own turn of the event
 * loop, as a lookup in memory does, neither creates a set nor starts a timer once its slot has one.
 */
export class DeadlineClock {
	private readonly slots = new Map<number, Set<Deadline>>();
	private pending = 0;
	/** The last slot whose deadlines were expired. */
	private swept = 0;
	private timer: NodeJS.Timeout | null = null;

	/** Calls `expire` once, `ms` milliseconds (> 0) from now or up to a slot later, unless {@link disarm}ed. */
	arm(ms: number, expire: () => void): Deadline {
		const slot = Math.ceil((performance.now() + ms) / DEADLINE_SLOT_MS);
		const d: Deadline = { slot, expire };
		let set = this.slots.get(slot);
		if (set === undefined) {
			set = new Set();
			this.slots.set(slot, set);
		}
		set.add(d);
		this.pending++;
		if (this.timer === null) this.start();
		return d;
	}

	/** Forgets `d` (an expired or already disarmed deadline is ignored). */
	disarm(d: Deadline): void {
		if (this.slots.get(d.slot)?.delete(d)) this.pending--;
	}

	/** Deadlines armed and neither expired nor disarmed. */
	size(): number {
		return this.pending;
	}

	/** Whether the interval timer runs. */
	running(): boolean {
		return this.timer !== null;
	}

	private start(): void {
		this.swept = Math.floor(performance.now() / DEADLINE_SLOT_MS);
		this.timer = setInterval(() => this.tick(), DEADLINE_SLOT_MS);
	}

	/** Stops the interval; nothing is pending, so every set left is empty. */
	private stop(): void {
		if (this.timer !== null) clearInterval(this.timer);
		this.timer = null;
		this.slots.clear();
	}

	/** Expires every deadline whose slot is at or before now's. */
	private tick(): void {
		const now = Math.floor(performance.now() / DEADLINE_SLOT_MS);
		for (let s = this.swept + 1; s <= now; s++) {
			const set = this.slots.get(s);
			if (set === undefined) continue;
			this.slots.delete(s);
			this.pending -= set.size;
			for (const d of set) d.expire();
		}
		this.swept = now;
		if (this.pending === 0) this.stop();
	}
}

/** The clock of every broker of this process. */
const deadlines = new DeadlineClock();

/**
 * `p`, or a rejection with `expired()`'s error once `ms` (> 0) milliseconds have passed (up to a
 * {@link DEADLINE_SLOT_MS} slot later) without `p` settling; the deadline is disarmed as soon as `p` settles.
 */
export function settleBy<T>(p: Promise<T>, ms: number, expired: () => Error): Promise<T> {
	return new Promise<T>((resolve, reject) => {
		const d = deadlines.arm(ms, () => reject(expired()));
		p.then(
			(v) => {
				deadlines.disarm(d);
				resolve(v);
			},
			(e) => {
				deadlines.disarm(d);
				reject(e);
			},
		);
	});
}

/**
 * Moleculer middleware replacing its `Timeout` (list it where `internalMiddlewares()` had "Timeout"): bounds
 * every local and remote action call by `ctx.options.timeout` ms (defaulted, as Moleculer does, to the action's
 * `timeout`, else the broker's `requestTimeout`; 0 or less: unbounded). At the deadline the caller is rejected with
 * `RequestTimeoutError` (code 504, retryable, data `{ action, nodeID }`), the warning is logged and the counter
 * `moleculer.request.timeout.total{service,action}` incremented, as Moleculer does; the call itself runs on.
 */
export function CallTimeout(broker: ServiceBroker): Middleware {
	function wrap(handler: (ctx: Context) => Promise<unknown>, action: ActionSchema) {
		const actionTimeout = action.timeout;
		const actionName = action.name as string;
		const service = (action.service as { fullName?: string } | undefined)?.fullName ?? null;

		/** The error of `ctx`'s call at its deadline, with Moleculer's log line, stream event and metric. */
		function timedOut(ctx: Context): Error {
			broker.logger.warn(`Request '${actionName}' is timed out.`, {
				requestID: ctx.requestID,
				nodeID: ctx.nodeID,
				timeout: ctx.options.timeout,
			});
			if (ctx.params instanceof Stream) ctx.params.emit("moleculer-timeout-middleware", ctx.options.timeout);
			broker.metrics.increment(TIMEOUT_TOTAL, { service, action: actionName });
			return new Errors.RequestTimeoutError({ action: actionName, nodeID: ctx.nodeID as string });
		}

		return function callTimeout(ctx: Context): Promise<unknown> {
			const opts = ctx.options;
			if (opts.timeout == null) opts.timeout = actionTimeout ?? broker.options.requestTimeout;
			const ms = opts.timeout as number;
			if (!(ms > 0)) return handler(ctx);
			// for the distributed timeout: a nested call's timeout is what is left of this one
			if (!ctx.startHrTime) ctx.startHrTime = process.hrtime();
			return settleBy(handler(ctx), ms, () => timedOut(ctx));
		};
	}

	return {
		name: "Timeout",
		created() {
			if (broker.isMetricsEnabled())
				broker.metrics.register({
					name: TIMEOUT_TOTAL,
					type: "counter",
					labelNames: ["service", "action"],
					description: "Number of timed out requests",
					rate: true,
				});
		},
		localAction: wrap,
		remoteAction: wrap,
	} satisfies Middleware;
}
