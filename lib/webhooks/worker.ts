/**
 * The delivery queue (issue 11; docs/decisions/0044-merchant-webhooks.md): one
 * BullMQ job per delivery and generation (jobId `wh-<delivery id>-<gen>`, so
 * a repeated add is ignored), retried by BullMQ with exponential backoff and
 * jitter (its own `exponential` strategy, ./deliver.ts `retryDelayMs`; the
 * delay of each retry is also stored as the delivery's `next_retry_at`),
 * at-least-once: a worker that dies mid-attempt leaves its job to be run
 * again once its lock expires (`WEBHOOK_LOCK_MS`), with the same
 * `webhook-id`.
 *
 * The worker is created here rather than through mixins/worker.mixin.ts:
 * deferring a job without counting an attempt (per-endpoint cap, ordering
 * per shipment) needs the job and its lock token (`job.moveToDelayed` +
 * BullMQ's `DelayedError`), which the mixin's action call does not carry.
 */
import { DelayedError, type Job, type JobsOptions } from "bullmq";
import { setting } from "../platform/config";
import { type AnyQueue, type AnyWorker, createWorker, getQueue } from "../platform/queue";
import { attemptDelivery, type DeliverDeps, retryDelayMs } from "./deliver";
import type { WebhookSettings } from "./settings";
import type { NewDelivery } from "./store";

/** The queue of deliveries. */
export const WEBHOOK_QUEUE = "webhooks";

/** Custom BullMQ backoff type of delivery jobs (the delay is the one ./deliver.ts stored). */
const BACKOFF_TYPE = "webhook";

/** Job data of a delivery. */
export interface DeliveryJob {
	delivery_id: number;
	gen: number;
}

/** The job id of a delivery generation. */
export function jobIdOf(d: NewDelivery): string {
	return `wh-${d.id}-${d.gen}`;
}

/** A failed attempt to retry after `delayMs` (BullMQ's backoff strategy below reads it). */
export class RetryLater extends Error {
	constructor(
		readonly delayMs: number,
		message: string,
	) {
		super(message);
		this.name = "RetryLater";
	}
}

/** Job options: more BullMQ attempts than `maxAttempts` (./deliver.ts decides the last one). */
function jobOptions(d: NewDelivery, s: WebhookSettings): JobsOptions {
	return {
		jobId: jobIdOf(d),
		attempts: s.maxAttempts + 2,
		backoff: { type: BACKOFF_TYPE },
		removeOnComplete: true,
		removeOnFail: { age: 7 * 24 * 3600 },
	};
}

/** BullMQ's `Queue.addBulk` (not part of lib/platform/queue.ts `AnyQueue`). */
interface BulkAdd {
	addBulk(jobs: { name: string; data: DeliveryJob; opts: JobsOptions }[]): Promise<unknown>;
}

/** Adds the jobs of `deliveries` (a job already present is left alone). */
export async function enqueueDeliveries(deliveries: NewDelivery[], s: WebhookSettings): Promise<void> {
	if (!deliveries.length) return;
	const q: AnyQueue & Partial<BulkAdd> = getQueue(WEBHOOK_QUEUE);
	const jobs = deliveries.map((d) => ({
		name: "deliver",
		data: { delivery_id: d.id, gen: d.gen } satisfies DeliveryJob,
		opts: jobOptions(d, s),
	}));
	// one round trip for the deliveries of an event (BullMQ's addBulk), when the backend has it
	if (q.addBulk && jobs.length > 1) await q.addBulk(jobs);
	else await Promise.all(jobs.map((j) => q.add(j.name, j.data, j.opts)));
}

/** True when the delivery's job is missing or finished (the sweeper re-adds it). */
export async function jobMissing(d: NewDelivery): Promise<boolean> {
	const job = await getQueue(WEBHOOK_QUEUE).getJob(jobIdOf(d));
	if (!job) return true;
	const st = await job.getState();
	if (st === "completed" || st === "failed" || st === "unknown") {
		await job.remove().catch(() => undefined);
		return true;
	}
	return false;
}

/** The lock of a running job (ms): a dead worker's job runs again after it. */
export function lockMs(): number {
	return setting("WEBHOOK_LOCK_MS");
}

/** Creates (paused) the delivery worker of this process; `run()` it once the broker is up. */
export function deliveryWorker(deps: DeliverDeps): AnyWorker {
	const s = deps.settings;
	const lock = lockMs();
	return createWorker(
		WEBHOOK_QUEUE,
		async (job: Job, token?: string) => {
			const data = job.data as DeliveryJob;
			const out = await attemptDelivery(deps, Number(data.delivery_id), Number(data.gen));
			if (out.kind === "defer") {
				await job.moveToDelayed(Date.now() + out.ms, token);
				throw new DelayedError();
			}
			if (out.kind === "retry") throw new RetryLater(out.ms, out.error);
			return out.what;
		},
		{
			concurrency: s.concurrency,
			lockDuration: lock,
			stalledInterval: Math.min(lock, 30_000),
			settings: {
				backoffStrategy: (attemptsMade: number, _type?: string, err?: Error) =>
					err instanceof RetryLater ? err.delayMs : retryDelayMs(attemptsMade, s.backoffMs),
			},
		},
	);
}
