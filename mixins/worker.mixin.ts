/**
 * BullMQ worker mixin (after treatwell/moleculer-essentials): the worker starts
 * only after the broker has started and hands each job to a Moleculer action,
 * so metrics, tracing and logging cover jobs like any other call. Jobs are
 * at-least-once: the action must be idempotent. A thrown error fails the
 * attempt and BullMQ retries it with the queue's backoff.
 */
import type { ServiceSchema } from "moleculer";
import { createWorker } from "../lib/queue";

export interface WorkerSpec {
	/** Queue name (without prefix). */
	queue: string;
	/** Fully qualified action that processes one job: receives `job.data`, meta `{ job: {id, attemptsMade, name} }`. */
	action: string;
	/** Parallel jobs per process (a function is read when the worker starts, so env set by tests applies). */
	concurrency?: number | (() => number);
	/** Lock duration in ms before a job of a dead worker is re-run. */
	lockDuration?: number;
}

/** Adds one or more BullMQ workers to a service. */
export function WorkerMixin(specs: WorkerSpec[]): Partial<ServiceSchema> {
	return {
		async started(this: any) {
			this.$workers = [];
			for (const spec of specs) {
				const worker = createWorker(
					spec.queue,
					async (job) =>
						this.broker.call(spec.action, job.data, {
							meta: { job: { id: job.id, name: job.name, attemptsMade: job.attemptsMade } },
							timeout: 120_000,
						}),
					{
						concurrency:
							(typeof spec.concurrency === "function" ? spec.concurrency() : spec.concurrency) ?? 8,
						lockDuration: spec.lockDuration ?? 60_000,
					},
				);
				worker.on("error", (err: Error) => this.logger.warn(`worker ${spec.queue}: ${err.message}`));
				worker.on("failed", (job: any, err: Error) =>
					this.logger.warn(
						`job ${spec.queue}/${job?.id} failed (attempt ${job?.attemptsMade}): ${err.message}`,
					),
				);
				this.$workers.push(worker);
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
		async stopped(this: any) {
			this.$stopping = true;
			await Promise.all((this.$workers ?? []).map((w: any) => w.close().catch(() => undefined)));
		},
	};
}
