/**
 * Shared setup of the webhooks specs: a broker running the real `webhooks`
 * service (real PostgreSQL, BullMQ and the durable channels on Redis) with a
 * fake intake typed by its contract (`intake.getOrder`: the fixture order with
 * the test's `order_no` and `courier`),
 * and a local receiver (HTTP on 127.0.0.1, allowed because the broker runs
 * with SANDBOX=1 unless told otherwise) whose answer per path the test sets.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ServiceBroker } from "moleculer";
import {
	type ActionName,
	MERCHANT_EVENTS_CHANNEL,
	type MerchantEvent,
	type MerchantEventBatch,
	type ParamsOf,
	SHIPMENT_STATUS_CHANNEL,
	type ShipmentStatusChanged,
} from "../../../lib/contracts";
import type { Role } from "../../../lib/platform/auth";
import { publishToChannel } from "../../../lib/platform/channels";
import { getSequelize, select } from "../../../lib/platform/db";
import { getQueue } from "../../../lib/platform/queue";
import { loadServiceSchema } from "../../../lib/platform/system";
import { jobIdOf, WEBHOOK_QUEUE } from "../../../lib/webhooks/worker";
import { callAsOn, testBrokerOptions } from "../../helpers/broker";
import { fakeService } from "../../helpers/call";
import { useEnv } from "../../helpers/env";
import { order } from "../../helpers/fixtures";

/** One request the receiver got. */
export interface Received {
	path: string;
	headers: IncomingHttpHeaders;
	body: string;
	at: number;
}

/** What the receiver answers on a path: a status, or a function of the request count on that path. */
export type Answer = number | ((n: number) => number | "hang");

/** A local webhook receiver. */
export class Receiver {
	readonly got: Received[] = [];
	private readonly answers = new Map<string, Answer>();
	private readonly counts = new Map<string, number>();
	private server: Server | undefined;
	private hanging: Array<() => void> = [];
	base = "";

	async start(): Promise<void> {
		this.server = createServer((req, res) => {
			const chunks: Buffer[] = [];
			req.on("data", (c: Buffer) => chunks.push(c));
			req.on("end", () => {
				const path = req.url ?? "/";
				const n = (this.counts.get(path) ?? 0) + 1;
				this.counts.set(path, n);
				this.got.push({
					path,
					headers: req.headers,
					body: Buffer.concat(chunks).toString("utf8"),
					at: Date.now(),
				});
				const a = this.answers.get(path) ?? 204;
				const status = typeof a === "function" ? a(n) : a;
				if (status === "hang") {
					this.hanging.push(() => res.destroy());
					return;
				}
				if (status >= 300 && status < 400)
					res.setHeader("location", "http://169.254.169.254/latest/meta-data/");
				res.writeHead(status, { "content-type": "text/plain" });
				res.end(status >= 400 ? "x".repeat(10_000) : "ok");
			});
		});
		const server = this.server;
		await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
		this.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	}

	/** Sets the answer of `path` (default 204). */
	answer(path: string, a: Answer): void {
		this.answers.set(path, a);
	}

	/** The requests to `path`. */
	on(path: string): Received[] {
		return this.got.filter((r) => r.path === path);
	}

	async stop(): Promise<void> {
		for (const h of this.hanging) h();
		this.server?.closeAllConnections();
		await new Promise((r) => this.server?.close(r));
	}
}

const ENV: Record<string, string> = {
	SANDBOX: "1",
	WEBHOOK_BACKOFF_MS: "100",
	WEBHOOK_MAX_ATTEMPTS: "4",
	WEBHOOK_TIMEOUT_MS: "1500",
	WEBHOOK_ENDPOINT_INFLIGHT: "2",
	WEBHOOK_CONCURRENCY: "16",
	WEBHOOK_ORDER_HOLD_MS: "3000",
	WEBHOOK_SWEEP_MS: "3600000",
};

/** Order numbers the fake intake answers (order id → number). */
export const orderNos = new Map<number, string>();
/** Couriers the fake intake answers (order id → the booked courier's name). */
export const orderCouriers = new Map<number, string>();

let current: ServiceBroker | undefined;

/** The delivery worker's events this setup listens to (BullMQ's `Worker`). */
interface EventfulWorker {
	on(event: "completed", f: (job: { id?: string }, result: unknown) => void): unknown;
	on(event: "failed", f: (job: { id?: string } | undefined, err: Error) => void): unknown;
}

/** The last outcome of each delivery job of this run (job id → "completed: <what>" or "failed: <message>"). */
const jobOutcomes = new Map<string, string>();

/** The broker of the running spec file. */
export function broker(): ServiceBroker {
	if (!current) throw new Error("the webhooks broker is not started");
	return current;
}

/** Registers before/after hooks starting the broker (webhooks + fake intake) with `env` over the defaults. */
export function useWebhooksBroker(env: Record<string, string> = {}): void {
	useEnv({ ...ENV, ...env });
	before(async () => {
		current = new ServiceBroker(testBrokerOptions(false));
		current.createService(loadServiceSchema("webhooks"));
		current.createService(
			fakeService("intake", {
				getOrder(ctx) {
					const { sender_id, order_id } = ctx.params;
					const no = orderNos.get(Number(order_id));
					const courier = orderCouriers.get(Number(order_id)) ?? null;
					// the fixture order (webhooks reads its number and courier only)
					return no ? order(sender_id, 1, { order_id, customer_order_no: no, courier }) : null;
				},
			}),
		);
		await current.start();
		// what each delivery job ended with (a completed job is removed: its outcome is kept here for diagnoses)
		const worker = (current.getLocalService("webhooks") as unknown as { worker?: EventfulWorker }).worker;
		worker?.on("completed", (job, result) => jobOutcomes.set(String(job.id), `completed: ${String(result)}`));
		worker?.on("failed", (job, err) => job && jobOutcomes.set(String(job.id), `failed: ${err.message}`));
	});
	after(async () => {
		await current?.stop();
		current = undefined;
	});
}

export { bodyOf } from "../../helpers/broker";

/** Calls `action` as `sender` with `role` on this suite's broker; answers the result and the status set (200 unless set). */
export function callAs<A extends ActionName>(
	action: A,
	params: ParamsOf<A>,
	sender: number,
	role: Role = "merchant",
) {
	return callAsOn(broker(), action, params, sender, role);
}

/** Publishes a publisher event on `merchant.events` as a batch of one (an event outbox relay's message). */
export async function publishEvent(e: MerchantEvent): Promise<void> {
	await publishEvents([e]);
}

/** Publishes `events` on `merchant.events` as one batch, as an event outbox relay does for one round. */
export async function publishEvents(events: MerchantEvent[]): Promise<void> {
	await publishToChannel(broker(), MERCHANT_EVENTS_CHANNEL, { events } satisfies MerchantEventBatch, {
		msgId: events.map((e) => e.event_id).join(","),
	});
}

/** Publishes a lone event on `merchant.events`: the message shape publishers sent before they batched. */
export async function publishLoneEvent(e: MerchantEvent): Promise<void> {
	await publishToChannel(broker(), MERCHANT_EVENTS_CHANNEL, e, { msgId: e.event_id });
}

/** Publishes a status event on `shipment.status_changed` (as booking's outbox relay does). */
export async function publishStatus(e: ShipmentStatusChanged): Promise<void> {
	await publishToChannel(broker(), SHIPMENT_STATUS_CHANNEL, e, { msgId: e.event_id });
}

/** An `order.created` event of `order_id`. */
export function orderCreated(
	sender_id: number,
	order_id: number,
	order_no = `ORD-${order_id}`,
): MerchantEvent {
	return {
		event_id: `order.created:${order_id}`,
		type: "order.created",
		sender_id,
		order_id,
		occurred_at: new Date().toISOString(),
		data: { order_id, order_no, direction: "forward", payment_mode: "prepaid", status: "new" },
	};
}

/** A status event of shipment (attempt) `attempt_id` at `seq`. */
export function statusEvent(
	sender_id: number,
	order_id: number,
	attempt_id: number,
	seq: number,
	status: ShipmentStatusChanged["status"],
): ShipmentStatusChanged {
	return {
		event_id: `${attempt_id}-${seq}`,
		order_id,
		sender_id,
		awb_number: `AWB${attempt_id}`,
		logistic_id: 1,
		status,
		status_name: status,
		status_at: new Date(Date.now() + seq * 1000).toISOString(),
		seq,
	};
}

/** The rows of `webhooks.deliveries` of an endpoint, oldest first. */
export async function deliveriesOf(endpoint_id: number): Promise<any[]> {
	return select(getSequelize(), "SELECT * FROM webhooks.deliveries WHERE endpoint_id = $1 ORDER BY id", [
		endpoint_id,
	]);
}

/**
 * The deliveries of `endpoint_id` with their BullMQ job's state (`missing`
 * when none): what a failure message shows when a delivery does not arrive.
 */
export async function deliveryStates(endpoint_id: number): Promise<unknown[]> {
	const q = getQueue(WEBHOOK_QUEUE);
	const out = [];
	for (const d of await deliveriesOf(endpoint_id)) {
		const jobId = jobIdOf({ id: Number(d.id), gen: Number(d.gen) });
		const job = await q.getJob(jobId);
		const job_state = job ? await job.getState() : "missing";
		const outcome = jobOutcomes.get(jobId);
		const { id, event_id, status, gen, attempts, error, next_retry_at } = d;
		out.push({
			id,
			event_id,
			status,
			gen,
			attempts,
			error,
			next_retry_at,
			job_state,
			job_failed: job?.failedReason,
			outcome,
		});
	}
	return out;
}

let ids = 900_000_000 + Math.floor(Math.random() * 1_000_000) * 10;
/** A fresh order / attempt id. */
export function freshNumber(): number {
	ids += 1;
	return ids;
}
