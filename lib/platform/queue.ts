/**
 * BullMQ queues and workers on Redis (`REDIS_URL`) or, when no Redis is
 * configured, on BullMQ's PostgreSQL backend in the same database
 * (docs/ARCHITECTURE.md §2). Keys (Redis) or the schema (PostgreSQL) are
 * namespaced by `QUEUE_PREFIX`, so test runs sharing one server never see each
 * other's jobs.
 */
import {
	type ConnectionOptions,
	createPostgresBackend,
	type Job,
	type JobsOptions,
	Queue,
	Worker,
	type WorkerOptions,
	withBackend,
} from "bullmq";
import { loadConfig } from "./config";

/** The producer side of a queue, whichever backend. */
export interface AnyQueue {
	add(name: string, data: unknown, opts?: JobsOptions): Promise<Job>;
	getJob(id: string): Promise<Job | undefined>;
	/** Jobs per state, e.g. `getJobCounts("waiting", "active")` → `{waiting: 3, active: 1}` (queue-depth metrics, lib/platform/metrics.ts). */
	getJobCounts(...types: string[]): Promise<Record<string, number>>;
	close(): Promise<void>;
}

/** A worker, whichever backend. */
export interface AnyWorker {
	close(force?: boolean): Promise<void>;
	run(): Promise<void>;
	/** BullMQ worker events used here: `error` (Error), `failed` (job or undefined, Error) and `completed` (job). */
	on(ev: "error", fn: (err: Error) => void): unknown;
	on(ev: "failed", fn: (job: Job | undefined, err: Error) => void): unknown;
	on(ev: "completed", fn: (job: Job) => void): unknown;
}

/** Worker options a caller may set (the backend sets the connection and key prefix). */
export type WorkerTuning = Omit<Partial<WorkerOptions>, "connection" | "prefix">;

/** Makes queues and workers on this process's backend (Redis or PostgreSQL). */
interface Backend {
	queue(name: string): AnyQueue;
	worker<D, R>(name: string, processor: (job: Job<D, R>) => Promise<R>, opts: WorkerTuning): AnyWorker;
}

const queues = new Map<string, AnyQueue>();

function redisConnection(url: string): ConnectionOptions {
	const u = new URL(url);
	return {
		host: u.hostname,
		port: Number(u.port || 6379),
		username: u.username || undefined,
		password: u.password ? decodeURIComponent(u.password) : undefined,
		db: u.pathname && u.pathname !== "/" ? Number(u.pathname.slice(1)) : 0,
		maxRetriesPerRequest: null,
		enableOfflineQueue: true,
	};
}

/** Redis when `REDIS_URL` is set; otherwise PostgreSQL schema `bullmq_<prefix>` (migrated on first use). */
function backend(): Backend {
	const cfg = loadConfig();
	if (cfg.redisUrl) {
		const options = { connection: redisConnection(cfg.redisUrl), prefix: cfg.queuePrefix };
		return {
			queue: (name) => new Queue(name, options),
			worker: (name, processor, opts) => new Worker(name, processor, { ...options, autorun: false, ...opts }),
		};
	}
	const pg = withBackend(createPostgresBackend);
	const schema = `bullmq_${cfg.queuePrefix.replace(/[^a-z0-9_]/gi, "_").toLowerCase()}`;
	const options = { connection: { connectionString: cfg.databaseUrl, schema, max: 4, migrate: true } };
	return {
		queue: (name) => new pg.Queue(name, options),
		worker: (name, processor, opts) =>
			new pg.Worker(name, processor, { ...options, autorun: false, ...opts }),
	};
}

/** Returns (and caches per process) the producer side of queue `name`. */
export function getQueue(name: string): AnyQueue {
	const key = `${loadConfig().queuePrefix}:${name}`;
	let q = queues.get(key);
	if (!q) {
		q = backend().queue(name);
		queues.set(key, q);
	}
	return q;
}

/**
 * Creates a worker for queue `name`. The worker is created paused
 * (`autorun: false`); call `run()` once the broker has started.
 */
export function createWorker<D = unknown, R = unknown>(
	name: string,
	processor: (job: Job<D, R>) => Promise<R>,
	opts: WorkerTuning = {},
): AnyWorker {
	return backend().worker(name, processor, opts);
}

/** Closes every queue this process opened. */
export async function closeAllQueues(): Promise<void> {
	const all = [...queues.values()];
	queues.clear();
	await Promise.all(all.map((q) => q.close().catch(() => undefined)));
}
