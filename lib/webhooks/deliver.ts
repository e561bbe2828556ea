/**
 * One delivery attempt (issue 11; docs/decisions/0044-merchant-webhooks.md),
 * run by the BullMQ job of the delivery (./worker.ts). In order:
 *
 * 1. the delivery, its event and endpoint are read in one statement; a
 *    delivery that is gone (endpoint deleted), settled, or of an older
 *    generation (redelivered since) ends the job;
 * 2. a disabled endpoint ends the delivery `failed` (no attempt);
 * 3. ordering per shipment: while an earlier status event of the same
 *    shipment is pending for this endpoint, or the previous one has not
 *    arrived yet (for at most `orderHoldMs`), the job is deferred (no
 *    attempt counted): a `delivered` is never sent before its `picked_up`;
 * 4. per-endpoint cap ({@link EndpointSlots}): at most `endpointInflight`
 *    attempts in flight to one endpoint per process; a job waits up to
 *    {@link SLOT_WAIT_MS} for a slot, then is deferred, so one slow endpoint
 *    holds at most that many of the process's `concurrency` worker slots;
 * 5. `order_no` missing from the event (booking's and status events of an
 *    order the service has not seen created) is asked of intake once and
 *    stored with the event;
 * 6. the body `{type, timestamp, data}` is signed (./secrets.ts: current
 *    secret, and the previous one within 24 h of a rotation) and POSTed
 *    (./http.ts: checked address, no redirects, 10 s, capped answer);
 * 7. the outcome is recorded; a failure that is not the last attempt
 *    answers `retry` with the delay (BullMQ's exponential backoff with
 *    jitter, ./worker.ts), the last one (`maxAttempts`, or older than
 *    `maxAgeH`) ends the delivery `failed` and may disable the endpoint.
 */
import { Backoffs } from "bullmq";
import type { ServiceBroker } from "moleculer";
import type { Sequelize } from "sequelize";
import { call } from "../contracts";
import { coalesce } from "../platform/coalesce";
import { postWebhook } from "./http";
import { openSecret, signHeaders } from "./secrets";
import type { WebhookSettings } from "./settings";
import {
	type AttemptContext,
	attemptContexts,
	giveUp,
	recordAttempt,
	recordSuccesses,
	type Success,
	setOrderRef,
} from "./store";

/** Jitter of the retry backoff (BullMQ `exponential`: a delay in [(1 − j)·d, d]). */
export const BACKOFF_JITTER = 0.2;

/** What an attempt needs. */
export interface DeliverDeps {
	db: Sequelize;
	broker: ServiceBroker;
	settings: WebhookSettings;
	logger: { info(msg: string): void; warn(msg: string): void };
	/** attempts in flight per endpoint (this process) */
	slots: EndpointSlots;
	/** the coalesced reads and success marks of this process ({@link deliveryBatch}) */
	batch: DeliveryBatch;
}

/** What the job does next. */
export type DeliverOutcome =
	| { kind: "done"; what: string }
	| { kind: "defer"; ms: number; why: string }
	| { kind: "retry"; ms: number; error: string };

/**
 * The statements every attempt runs, coalesced across the attempts in flight
 * (lib/platform/coalesce.ts): one read of the contexts and one write of the successes
 * per batch instead of one each per delivery.
 */
export interface DeliveryBatch {
	read(id: number): Promise<AttemptContext | null>;
	delivered(s: Success): Promise<void>;
}

/** The {@link DeliveryBatch} of a process. */
export function deliveryBatch(db: Sequelize, holdMs: number): DeliveryBatch {
	const reads = coalesce((ids: number[]) => attemptContexts(db, ids, holdMs));
	const writes = coalesce((ok: Success[]) => recordSuccesses(db, ok));
	return {
		read: async (id) => (await reads([id])).get(id) ?? null,
		delivered: (s) => writes([s]),
	};
}

/** How long a job waits in the worker for a free slot of its endpoint before it is deferred (ms). */
export const SLOT_WAIT_MS = 50;

/**
 * Per-endpoint in-flight slots of this process: at most `cap` attempts to one
 * endpoint at a time. {@link acquire} waits up to `waitMs` for a slot (a fast
 * endpoint frees one within that), else answers false and the job is
 * deferred, so a slow endpoint never holds more than `cap` worker slots for
 * long.
 */
export class EndpointSlots {
	private readonly busy = new Map<number, { n: number; waiters: Array<() => void> }>();

	constructor(private readonly cap: number) {}

	/** Takes a slot of `endpoint` within `waitMs`; false when none freed up. */
	async acquire(endpoint: number, waitMs: number): Promise<boolean> {
		let e = this.busy.get(endpoint);
		if (!e) {
			e = { n: 0, waiters: [] };
			this.busy.set(endpoint, e);
		}
		if (e.n < this.cap) {
			e.n++;
			return true;
		}
		const entry = e;
		return new Promise<boolean>((resolve) => {
			const wake = () => {
				clearTimeout(timer);
				entry.n++;
				resolve(true);
			};
			const timer = setTimeout(() => {
				const i = entry.waiters.indexOf(wake);
				if (i >= 0) entry.waiters.splice(i, 1);
				resolve(false);
			}, waitMs);
			entry.waiters.push(wake);
		});
	}

	/** Gives a slot of `endpoint` back (to the next waiter, if any). */
	release(endpoint: number): void {
		const e = this.busy.get(endpoint);
		if (!e) return;
		e.n--;
		const next = e.waiters.shift();
		if (next) next();
		else if (e.n <= 0) this.busy.delete(endpoint);
	}

	/** Attempts in flight to `endpoint`. */
	inFlight(endpoint: number): number {
		return this.busy.get(endpoint)?.n ?? 0;
	}
}

/** The retry delay after failed attempt number `attempt` (1-based): BullMQ's exponential strategy with jitter. */
export function retryDelayMs(attempt: number, baseMs: number): number {
	const strategy = Backoffs.builtinStrategies.exponential(baseMs, BACKOFF_JITTER);
	return Number(strategy(attempt));
}

/** A random extra of up to `ms` (spreads deferred jobs). */
function jitter(ms: number): number {
	return Math.floor(Math.random() * ms);
}

/** The Standard Webhooks envelope of an event: `{type, timestamp, data}`. */
export function envelopeOf(type: string, occurred_at: Date | string, data: Record<string, unknown>): string {
	return JSON.stringify({ type, timestamp: new Date(occurred_at).toISOString(), data });
}

/** Runs one attempt of delivery `id` (job generation `gen`); see the module doc. */
export async function attemptDelivery(deps: DeliverDeps, id: number, gen: number): Promise<DeliverOutcome> {
	const s = deps.settings;
	const c = await deps.batch.read(id);
	if (!c) return { kind: "done", what: "gone" };
	if (c.gen !== gen || c.status !== "pending") return { kind: "done", what: "settled" };
	if (!c.enabled) {
		await giveUp(deps.db, id, gen, "endpoint disabled");
		return { kind: "done", what: "endpoint disabled" };
	}
	if (c.blocked)
		return { kind: "defer", ms: 500 + jitter(500), why: "an earlier event of the shipment is pending" };
	if (c.gap)
		return {
			kind: "defer",
			ms: 500 + jitter(500),
			why: "the previous event of the shipment has not arrived",
		};
	let data = c.data;
	// what the fan-out could not add from `order_refs` (an order created or booked before its account had an
	// endpoint: those events were not kept), asked of intake once and stored with the event
	const wantsCourier = c.type === "shipment.status_changed" && !("courier" in data);
	if (c.order_id !== null && (!("order_no" in data) || wantsCourier)) {
		try {
			const o = await call(
				deps.broker,
				"intake.getOrder",
				{ sender_id: c.sender_id, order_id: c.order_id },
				{ timeout: s.callTimeoutMs, unavailable: false },
			);
			const order_no = "order_no" in data ? (data.order_no as string | null) : (o?.customer_order_no ?? null);
			const courier = wantsCourier ? (o?.courier ?? null) : null;
			await setOrderRef(deps.db, c.event_id, { order_no, courier });
			data = { ...data, order_no, ...(courier !== null ? { courier } : {}) };
		} catch (err) {
			return { kind: "defer", ms: 5000 + jitter(2000), why: `order_no: ${(err as Error).message}` };
		}
	}
	const body = envelopeOf(c.type, c.occurred_at, data);
	const secrets = [openSecret(c.secret), ...(c.previous_secret ? [openSecret(c.previous_secret)] : [])];
	const headers = signHeaders(c.msg_id, new Date(), body, secrets);
	if (!(await deps.slots.acquire(c.endpoint_id, SLOT_WAIT_MS)))
		return { kind: "defer", ms: 100 + jitter(200), why: "endpoint busy" };
	let out: Awaited<ReturnType<typeof postWebhook>>;
	try {
		out = await postWebhook(new URL(c.url), body, {
			timeoutMs: s.timeoutMs,
			capBytes: s.responseCapBytes,
			sandbox: s.sandbox,
			headers: { ...headers },
		});
	} finally {
		deps.slots.release(c.endpoint_id);
	}
	const attempt = c.attempts + 1;
	if (out.ok && out.status !== null) {
		await deps.batch.delivered({
			id,
			gen,
			status_code: out.status,
			latency_ms: out.latency_ms,
			response: out.body || null,
		});
		return { kind: "done", what: "delivered" };
	}
	const final = out.ok || attempt >= s.maxAttempts || c.age_ms >= s.maxAgeH * 3_600_000;
	const retry_in_ms = final ? null : retryDelayMs(attempt, s.backoffMs);
	const { disabled } = await recordAttempt(deps.db, {
		id,
		gen,
		endpoint_id: c.endpoint_id,
		ok: out.ok,
		final,
		status_code: out.status,
		latency_ms: out.latency_ms,
		error: out.error,
		response: out.body || null,
		retry_in_ms,
	});
	if (disabled) deps.logger.warn(`webhook endpoint ${c.endpoint_id} disabled after continuous failure`);
	if (out.ok) return { kind: "done", what: "delivered" };
	if (final) return { kind: "done", what: `failed: ${out.error}` };
	return { kind: "retry", ms: retry_in_ms ?? s.backoffMs, error: out.error ?? "failed" };
}
