/**
 * Mocha global setup: every test run gets its own PostgreSQL database, Redis key
 * prefix and Moleculer namespace, and removes them afterwards. Real servers on
 * 127.0.0.1 (override with TEST_PG_ADMIN_URL / TEST_REDIS_URL / TEST_NATS_URL).
 */
import { randomBytes } from "node:crypto";
import IORedis from "ioredis";
import { connect } from "nats";
import { Client } from "pg";
import { closeAllPools } from "../../lib/platform/db";
import { closeAllQueues } from "../../lib/platform/queue";

const runId = `${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
const dbName = `msa_test_${runId}`;
const adminUrl = process.env.TEST_PG_ADMIN_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const redisUrl = process.env.TEST_REDIS_URL || "redis://127.0.0.1:6379";

function withDb(url: string, db: string): string {
	const u = new URL(url);
	u.pathname = `/${db}`;
	return u.toString();
}

/** Creates the run's database and sets the environment every service reads. */
export async function mochaGlobalSetup(): Promise<void> {
	const c = new Client({ connectionString: adminUrl });
	await c.connect();
	await c.query(`CREATE DATABASE "${dbName}"`);
	await c.end();
	process.env.DATABASE_URL = withDb(adminUrl, dbName);
	process.env.REDIS_URL = redisUrl;
	process.env.QUEUE_PREFIX = `msa-test-${runId}`;
	process.env.NAMESPACE = `t${runId}`;
	process.env.TEST_NATS_URL = process.env.TEST_NATS_URL || "nats://127.0.0.1:4222";
	process.env.LABEL_LINK_SECRET = "test-label-link-secret";
	// the sandbox couriers' push key (no default: booking refuses to start with SANDBOX=1 without one)
	process.env.SANDBOX_WEBHOOK_SECRET = `test-sandbox-webhook-${runId}`;
	process.env.LOGLEVEL = process.env.LOGLEVEL || "warn";
	// no Prometheus endpoint in test brokers (the metrics specs set their own METRICS_PORT)
	process.env.METRICS_PORT = process.env.METRICS_PORT || "off";
	// no scheduled serviceability sync in tests (test/unit/rates/serviceability-sync.spec.ts runs it itself)
	process.env.RATES_SERVICEABILITY_SYNC_MS = process.env.RATES_SERVICEABILITY_SYNC_MS || "0";
	process.env.MSA_TEST_RUN_ID = runId;
}

/**
 * Deletes the JetStream streams whose name starts with `prefix` (durable
 * channels of lib/platform/channels.ts are named after the Moleculer namespace: a test
 * run's start with `t<runId>`, a benchmark's with `bench-<run>`).
 */
export async function dropStreams(prefix: string, servers = process.env.TEST_NATS_URL): Promise<void> {
	const nc = await connect({ servers, timeout: 3000 });
	try {
		const jsm = await nc.jetstreamManager();
		for await (const s of jsm.streams.list()) {
			if (s.config.name.startsWith(prefix)) await jsm.streams.delete(s.config.name);
		}
	} finally {
		await nc.close();
	}
}

/** Drops the run's database, deletes its Redis keys and its JetStream streams. */
export async function mochaGlobalTeardown(): Promise<void> {
	await closeAllQueues();
	await closeAllPools();
	const c = new Client({ connectionString: adminUrl });
	await c.connect();
	await c.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
	await c.end();
	const r = new IORedis(redisUrl, { lazyConnect: true });
	await r.connect();
	let cursor = "0";
	do {
		const [next, keys] = await r.scan(cursor, "MATCH", `${process.env.QUEUE_PREFIX}:*`, "COUNT", 1000);
		cursor = next;
		if (keys.length) await r.del(...keys);
	} while (cursor !== "0");
	await r.quit();
	await dropStreams(`t${runId}`).catch((err) =>
		console.warn(`JetStream streams of run ${runId} not removed: ${err}`),
	);
}

/** Root hooks of the OpenAPI contract check of every gateway response (issue 11; ./contract.ts, `CONTRACT_CHECK=0` disables). */
export { mochaHooks } from "./contract";
