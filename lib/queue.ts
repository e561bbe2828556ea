/**
 * BullMQ queues and workers on Redis (`REDIS_URL`) or, when no Redis is
 * configured, on BullMQ's PostgreSQL backend in the same database
 * (ARCHITECTURE §2). Keys (Redis) or the schema (PostgreSQL) are namespaced by
 * `QUEUE_PREFIX`, so test runs sharing one server never see each other's jobs.
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
	close(): Promise<void>;
}

/** A worker, whichever backend. */
export interface AnyWorker {
	close(force?: boolean): Promise<void>;
	run(): Promise<void>;
	on(ev: string, fn: (...a: any[]) => void): unknown;
}

/** Queue / Worker constructors plus the options that bind them to this process's backend. */
interface Backend {
	Queue: new (name: string, opts: any) => unknown;
	Worker: new (name: string, processor: any, opts: any) => unknown;
	options: Record<string, unknown>;
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
		return { Queue, Worker, options: { connection: redisConnection(cfg.redisUrl), prefix: cfg.queuePrefix } };
	}
	const pg = withBackend(createPostgresBackend);
	const schema = `bullmq_${cfg.queuePrefix.replace(/[^a-z0-9_]/gi, "_").toLowerCase()}`;
	return {
		Queue: pg.Queue,
		Worker: pg.Worker,
		options: { connection: { connectionString: cfg.databaseUrl, schema, max: 4, migrate: true } },
	};
}

/** Returns (and caches per process) the producer side of queue `name`. */
export function getQueue(name: string): AnyQueue {
	const key = `${loadConfig().queuePrefix}:${name}`;
	let q = queues.get(key);
	if (!q) {
		const b = backend();
		q = new b.Queue(name, b.options) as AnyQueue;
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
	opts: Partial<WorkerOptions> = {},
): AnyWorker {
	const b = backend();
	return new b.Worker(name, processor, { ...b.options, autorun: false, ...opts }) as AnyWorker;
}

/** Closes every queue this process opened. */
export async function closeAllQueues(): Promise<void> {
	const all = [...queues.values()];
	queues.clear();
	await Promise.all(all.map((q) => q.close().catch(() => undefined)));
}
