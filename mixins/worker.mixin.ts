/**
 * BullMQ worker mixin (after treatwell/moleculer-essentials): the worker starts
 * only after the broker has started and hands each job to a Moleculer action,
 * so metrics, tracing and logging cover jobs like any other call. Jobs are
 * at-least-once: the action must be idempotent. A thrown error fails the
 * attempt and BullMQ retries it with the queue's backoff.
 *
 * Metrics (lib/platform/metrics.ts, when on): every attempt's end counts in
 * `msa_queue_jobs_total{queue,outcome}`, and the process running a queue's
 * workers samples its depth (`msa_queue_jobs{queue,state}`) every
 * `METRICS_SAMPLE_MS`.
 */
import type { Job } from "bullmq";
import type { Service } from "moleculer";
import { type ActionName, call, type ParamsOf } from "../lib/contracts";
import { countJob, everySample, metricsOn, setQueueDepth } from "../lib/platform/metrics";
import { type AnyWorker, createWorker, getQueue } from "../lib/platform/queue";
import type { Mixin } from "../lib/platform/service";

/** A queue connection as BullMQ's `waitUntilReady()` answers it (ioredis: `status` "ready" while connected). */
interface QueueConnection {
	status?: unknown;
}

/** Connections of this process's workers; undefined while a worker has not connected yet. */
const connections = new Map<object, QueueConnection | undefined>();

/**
 * Readiness hook (issue 12): true when every BullMQ worker of this process
 * has connected to its queue backend and (Redis) its connection is up now.
 * Read by the `/ready` probes (lib/platform/system.ts).
 */
export function workersReady(): boolean {
	for (const c of connections.values()) {
		if (c === undefined) return false;
		if (typeof c.status === "string" && c.status !== "ready") return false;
	}
	return true;
}

/** Timeout of the action call that processes one job (ms). */
const JOB_CALL_TIMEOUT_MS = 120_000;

export interface WorkerSpec<N extends ActionName = ActionName> {
	/** Queue name (without prefix). */
	queue: string;
	/** Action that processes one job: receives `job.data` as its params, meta `{ job: {id, attemptsMade, name} }`. */
	action: N;
	/** Parallel jobs per process (a function is read when the worker starts, so env set by tests applies). */
	concurrency?: number | (() => number);
	/**
	 * Lock duration in ms before a job of a dead worker is re-run (also the
	 * stalled-job check interval, at most 30 s); a function is read when the
	 * worker starts. Default 60 000.
	 */
	lockDuration?: number | (() => number);
	/** Timeout (ms) of the action call of one job; default {@link JOB_CALL_TIMEOUT_MS} (a long job, e.g. a bulk file, sets more). */
	callTimeout?: number;
	/** Whether this service instance runs the worker (asked at start; default yes): e.g. intake with `INTAKE_BULK_WORKER=off` leaves bulk files to other processes. */
	enabled?: (svc: Service) => boolean;
}

/** Members the worker mixin adds to a service. */
export interface WorkerVars {
	/** the BullMQ workers of this service instance */
	$workers: AnyWorker[];
	/** set once the service is stopping (no worker starts after it) */
	$stopping?: boolean;
	/** stops the queue-depth samplers (metrics on) */
	$stopSamplers?: (() => void)[];
}

type WorkerThis = Service & WorkerVars;

/** The spec's lock duration in ms (default 60 000). */
function lockOf(spec: WorkerSpec): number {
	const v = typeof spec.lockDuration === "function" ? spec.lockDuration() : spec.lockDuration;
	return v && v > 0 ? v : 60_000;
}

/** Adds one or more BullMQ workers to a service. */
export function WorkerMixin(specs: WorkerSpec[]): Mixin<WorkerVars> {
	return {
		async started(this: WorkerThis) {
			this.$workers = [];
			const active = specs.filter((spec) => spec.enabled?.(this) ?? true);
			for (const spec of active) {
				const worker = createWorker(
					spec.queue,
					async (job: Job) =>
						call(this.broker, spec.action, job.data as ParamsOf<typeof spec.action>, {
							meta: { job: { id: job.id, name: job.name, attemptsMade: job.attemptsMade } },
							timeout: spec.callTimeout ?? JOB_CALL_TIMEOUT_MS,
							unavailable: false,
							// run the job on this node, which holds its lock (with NATS queue
							// groups the call could otherwise land on another node and outlive it)
							nodeID: this.broker.nodeID,
						}),
					{
						concurrency:
							(typeof spec.concurrency === "function" ? spec.concurrency() : spec.concurrency) ?? 8,
						lockDuration: lockOf(spec),
						stalledInterval: Math.min(lockOf(spec), 30_000),
					},
				);
				worker.on("error", (err: Error) => this.logger.warn(`worker ${spec.queue}: ${err.message}`));
				worker.on("failed", (job: Job | undefined, err: Error) => {
					countJob(this.broker, spec.queue, "failed");
					this.logger.warn(
						`job ${spec.queue}/${job?.id} failed (attempt ${job?.attemptsMade}): ${err.message}`,
					);
				});
				worker.on("completed", () => countJob(this.broker, spec.queue, "completed"));
				this.$workers.push(worker);
				connections.set(worker, undefined);
				const ready = (worker as { waitUntilReady?: () => Promise<unknown> }).waitUntilReady;
				if (typeof ready === "function")
					ready.call(worker).then(
						(c) => {
							if (connections.has(worker))
								connections.set(worker, typeof c === "object" && c !== null ? (c as QueueConnection) : {});
						},
						(e: Error) => this.logger.warn(`worker ${spec.queue} not connected: ${e.message}`),
					);
				else connections.set(worker, {});
			}
			this.$stopSamplers = [];
			if (metricsOn(this.broker))
				for (const spec of active) {
					const queue = getQueue(spec.queue);
					this.$stopSamplers.push(
						everySample(
							async () =>
								setQueueDepth(
									this.broker,
									spec.queue,
									await queue.getJobCounts("waiting", "active", "delayed", "failed"),
								),
							(e) => this.logger.debug(`queue ${spec.queue} depth not sampled: ${e.message}`),
						),
					);
				}
			// Run once the whole broker is up, so the target action is callable.
			const startWhenReady = async () => {
				while (!this.broker.started && !this.$stopping) await new Promise((r) => setTimeout(r, 50));
				if (this.$stopping) return;
				for (const w of this.$workers)
					w.run().catch((e: Error) => this.logger.error(`worker stopped: ${e.message}`));
			};
			void startWhenReady();
		},
		async stopped(this: WorkerThis) {
			this.$stopping = true;
			for (const stop of this.$stopSamplers ?? []) stop();
			for (const w of this.$workers ?? []) connections.delete(w);
			await Promise.all((this.$workers ?? []).map((w) => w.close().catch(() => undefined)));
		},
	};
}
