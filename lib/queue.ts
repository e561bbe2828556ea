/**
 * BullMQ queues and workers on Redis (`REDIS_URL`) or, when no Redis is
 * configured, on BullMQ's PostgreSQL backend in the same database
 * (ARCHITECTURE §2). Queue names are prefixed by `QUEUE_PREFIX` so test runs
 * sharing one Redis never see each other's jobs.
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

type AnyQueue = {
	add(name: string, data: unknown, opts?: JobsOptions): Promise<Job>;
	close(): Promise<void>;
} & Record<string, any>;
type AnyWorker = {
	close(force?: boolean): Promise<void>;
	run(): Promise<void>;
	on(ev: string, fn: (...a: any[]) => void): unknown;
} & Record<string, any>;

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

/** Which backend this process uses ("redis" or "postgres"). */
export function queueBackend(): "redis" | "postgres" {
	return loadConfig().redisUrl ? "redis" : "postgres";
}

/** Returns (and caches) the producer side of queue `name`. */
export function getQueue(name: string): AnyQueue {
	const cfg = loadConfig();
	const key = `${cfg.queuePrefix}:${name}`;
	let q = queues.get(key);
	if (q) return q;
	if (cfg.redisUrl) {
		q = new Queue(name, {
			connection: redisConnection(cfg.redisUrl),
			prefix: cfg.queuePrefix,
		}) as unknown as AnyQueue;
	} else {
		const pg = withBackend(createPostgresBackend);
		q = new pg.Queue(name, {
			connection: {
				connectionString: cfg.databaseUrl,
				schema: pgSchema(cfg.queuePrefix),
				max: 4,
				migrate: true,
			},
		}) as unknown as AnyQueue;
	}
	queues.set(key, q);
	return q;
}

function pgSchema(prefix: string): string {
	return `bullmq_${prefix.replace(/[^a-z0-9_]/gi, "_").toLowerCase()}`;
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
	const cfg = loadConfig();
	if (cfg.redisUrl) {
		return new Worker(name, processor as any, {
			connection: redisConnection(cfg.redisUrl),
			prefix: cfg.queuePrefix,
			autorun: false,
			...opts,
		}) as unknown as AnyWorker;
	}
	const pg = withBackend(createPostgresBackend);
	return new pg.Worker(name, processor as any, {
		connection: {
			connectionString: cfg.databaseUrl,
			schema: pgSchema(cfg.queuePrefix),
			max: 4,
			migrate: true,
		},
		autorun: false,
		...(opts as any),
	}) as unknown as AnyWorker;
}

/** Closes every queue this process opened. */
export async function closeAllQueues(): Promise<void> {
	const all = [...queues.values()];
	queues.clear();
	await Promise.all(all.map((q) => q.close().catch(() => undefined)));
}
