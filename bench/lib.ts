/**
 * Shared parts of the benchmarks (bench/run.ts, bench/booking.ts): the system
 * started as in production (bin/start.ts with real PostgreSQL, Redis and an
 * external JWKS; all services in one process, or split over NATS with
 * BENCH_SPLIT=1) on its own database and Redis prefix, removed afterwards;
 * a merchant with a warehouse; percentiles.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import IORedis from "ioredis";
import { Client } from "pg";
import { createDevIdp, serveJwks } from "../lib/platform/devidp";
import { warehouseBody } from "../test/helpers/fixtures";
import { client } from "../test/helpers/flow";
import { dropStreams } from "../test/helpers/global";
import { freePort } from "../test/helpers/net";
import { buildOnce, type StartedProcess, startProcess, waitReady } from "../test/helpers/processes";

const adminUrl = process.env.TEST_PG_ADMIN_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const redisUrl = process.env.TEST_REDIS_URL || "redis://127.0.0.1:6379";

/**
 * The sandbox couriers' push key of this bench process and the systems it
 * starts: `SANDBOX_WEBHOOK_SECRET` when set, else a random one chosen once
 * (and put into this process's environment, so a bench signing pushes itself
 * signs with the key its system checks).
 */
export function benchSandboxWebhookSecret(): string {
	process.env.SANDBOX_WEBHOOK_SECRET ||= randomBytes(16).toString("hex");
	return process.env.SANDBOX_WEBHOOK_SECRET;
}
/** The NATS (with JetStream) the benchmarks run against (`TEST_NATS_URL`). */
export const natsUrl = process.env.TEST_NATS_URL || "nats://127.0.0.1:4222";

/** Whether the benchmark runs split over NATS (`BENCH_SPLIT=1`). */
export const split = process.env.BENCH_SPLIT === "1";

/** CPU seconds (user + system) process `pid` has used so far (/proc/<pid>/stat); 0 when it is gone or not on this host. */
export function cpuSeconds(pid: number): number {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
		return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100/s)
	} catch {
		return 0;
	}
}

/**
 * A meter of the CPU of processes `pids` (same host): answers a function
 * giving the CPU seconds (user + system) they have used since the meter was
 * made.
 */
export function cpuMeter(pids: readonly number[]): () => number {
	const used = () => pids.reduce((n, pid) => n + cpuSeconds(pid), 0);
	const at0 = used();
	return () => used() - at0;
}

/**
 * A {@link cpuMeter} of PostgreSQL's own processes (same host): the backends
 * and background workers listed in `pg_stat_activity` when it is made (a
 * backend that starts later is not counted).
 */
export async function postgresCpuMeter(pg: Client): Promise<() => number> {
	const pids = (await pg.query<{ pid: number }>("SELECT pid FROM pg_stat_activity")).rows.map((r) => r.pid);
	return cpuMeter(pids);
}

/** Peak RSS (VmHWM of /proc/<pid>/status) of a process in MB. */
export function peakRssMb(pid: number): number {
	const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
	return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** Resets a process's peak RSS to its current RSS (`5` to /proc/<pid>/clear_refs), so the next peak is a phase's own. */
export function resetPeakRss(pid: number): void {
	writeFileSync(`/proc/${pid}/clear_refs`, "5");
}

/** The `p`-th percentile (0–100) of ascending `sorted`; NaN when empty. */
export function pct(sorted: number[], p: number): number {
	if (!sorted.length) return Number.NaN;
	return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * The production defaults a bench system runs with (record 0098): the log level info, so the access log is on with
 * its default policy (`GATEWAY_ACCESS_LOG` unset: sampled, record 0127; a system's own environment may set it),
 * metrics on a free port, the account limiter on Redis with a limit no bench account reaches (request ids are always
 * on).
 */
export async function productionDefaults(): Promise<Record<string, string>> {
	return {
		LOGLEVEL: "info",
		METRICS_PORT: String(await freePort()),
		RATE_LIMIT_ACCOUNT_PER_MIN: "100000000",
	};
}

/**
 * The settings a bench adds to a system's environment from the JSON object in the variable `name` (e.g.
 * `BENCH_SYSTEM_ENV='{"GATEWAY_ACCESS_LOG":"1"}'`); `{}` when unset.
 * @throws Error naming the variable when it is not a JSON object of strings
 */
export function envFromJson(name: string): Record<string, string> {
	const raw = process.env[name];
	if (!raw) return {};
	let v: unknown;
	try {
		v = JSON.parse(raw);
	} catch (err) {
		throw new Error(`${name} must be a JSON object of strings: ${(err as Error).message}`);
	}
	if (
		v === null ||
		typeof v !== "object" ||
		Array.isArray(v) ||
		Object.values(v).some((x) => typeof x !== "string")
	)
		throw new Error(`${name} must be a JSON object of strings, e.g. '{"GATEWAY_ACCESS_LOG":"1"}'`);
	return v as Record<string, string>;
}

/** A started system with one merchant (sender 900001) and its warehouse. */
export interface BenchSystem {
	/** e.g. `http://127.0.0.1:PORT` */
	base: string;
	/** the run's own database */
	databaseUrl: string;
	/** run id (order numbers use it) */
	run: string;
	/** bearer token of the merchant */
	token: string;
	api: ReturnType<typeof client>;
	/** the merchant's warehouse id */
	warehouseId: number;
	/** the mode in words, e.g. "1 process" */
	mode: string;
	/** the system's processes (pids), the gateway's first */
	pids: number[];
	/** a bearer token of account `sender_id` (merchant role) */
	tokenFor(sender_id: number): Promise<string>;
	/** where the system's tokens are verified (the anchors verify the same) */
	auth: { jwksUrl: string; issuer: string; audience: string };
	/** stops the processes, drops the database and the Redis keys */
	close(): Promise<void>;
}

/** A benchmark's own database, identity provider, ports and environment (see {@link benchEnvironment}). */
export interface BenchEnvironment {
	/** run id (database, Redis prefix and NATS namespace carry it) */
	run: string;
	/** e.g. `http://127.0.0.1:PORT` (the gateway's `PORT` in `common`) */
	base: string;
	databaseUrl: string;
	idp: Awaited<ReturnType<typeof createDevIdp>>;
	/** the environment every process of the run gets (plus its own SERVICES, TRANSPORTER, …) */
	common: Record<string, string | undefined>;
	/** closes the JWKS server, drops the database, the Redis keys and the run's JetStream streams */
	cleanup(): Promise<void>;
}

/**
 * Creates a run's database, a development identity provider serving its JWKS,
 * free ports and the environment common to every process (sandbox on, edge
 * rate limits off unless set: one bench merchant sends far more than a real
 * account would), with `env` on top. `cleanup` removes all of it.
 */
export async function benchEnvironment(
	env: Record<string, string | undefined> = {},
): Promise<BenchEnvironment> {
	const run = `${Date.now().toString(36)}_${randomBytes(2).toString("hex")}`;
	const db = `msa_bench_${run}`;
	const admin = new Client({ connectionString: adminUrl });
	await admin.connect();
	await admin.query(`CREATE DATABASE "${db}"`);
	const u = new URL(adminUrl);
	u.pathname = `/${db}`;
	const idp = await createDevIdp();
	const jwks = await serveJwks(idp);
	const port = await freePort();
	const common = {
		DATABASE_URL: u.toString(),
		REDIS_URL: redisUrl,
		QUEUE_PREFIX: `msa-bench-${run}`,
		NAMESPACE: `bench-${run}`,
		AUTH_JWKS_URL: jwks.url,
		AUTH_ISSUER: idp.issuer,
		AUTH_AUDIENCE: idp.audience,
		LABEL_LINK_SECRET: "bench",
		// the sandbox push key (no default); the parent signs with the same (bench/tracking.ts)
		SANDBOX_WEBHOOK_SECRET: benchSandboxWebhookSecret(),
		SANDBOX: "1",
		SANDBOX_COURIER_PORT: String(await freePort()),
		SANDBOX_COURIER_DELAY_MS: process.env.SANDBOX_COURIER_DELAY_MS,
		PORT: String(port),
		LOGLEVEL: "warn",
		NODE_ENV: "production",
		RATE_LIMIT_ACCOUNT_PER_MIN: process.env.RATE_LIMIT_ACCOUNT_PER_MIN ?? "0",
		RATE_LIMIT_LINK_PER_MIN: process.env.RATE_LIMIT_LINK_PER_MIN ?? "0",
		...env,
	};
	const cleanup = async () => {
		jwks.server.close();
		await admin.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
		await admin.end();
		const r = new IORedis(redisUrl);
		let cursor = "0";
		do {
			const [next, keys] = await r.scan(cursor, "MATCH", `msa-bench-${run}:*`, "COUNT", 1000);
			cursor = next;
			if (keys.length) await r.del(...keys);
		} while (cursor !== "0");
		await r.quit();
		await dropStreams(`bench-${run}`, natsUrl).catch(() => undefined);
	};
	return { run, base: `http://127.0.0.1:${port}`, databaseUrl: u.toString(), idp, common, cleanup };
}

/**
 * Starts the system (`BENCH_SPLIT`, plus `env` for every process: e.g.
 * SANDBOX_COURIER_DELAY_MS, BOOKING_*) on its own {@link benchEnvironment},
 * waits for `/ready` and creates the merchant's warehouse. On failure
 * everything is removed. Each process runs as `npm start` runs it: the build (`dist/`, made once per
 * benchmark) with start:prod's command line (docs/decisions/0136-npm-start-compiled.md); `BENCH_TSX=1` runs the
 * TypeScript under tsx instead, as `npm run dev` does. `opts.root`: another checkout whose built dist/ runs instead
 * (bench/ab.ts `BENCH_B_ROOT`: two commits side by side; its own migrations make its database).
 */
export async function startSystem(
	env: Record<string, string | undefined> = {},
	opts: { root?: string } = {},
): Promise<BenchSystem> {
	const compiled = process.env.BENCH_TSX !== "1";
	if (compiled && opts.root === undefined) await buildOnce();
	if (opts.root !== undefined && !existsSync(join(opts.root, "dist/bin/start.js")))
		throw new Error(`${opts.root}/dist/bin/start.js is missing: run npm run build there first`);
	const { run, base, databaseUrl, idp, common, cleanup } = await benchEnvironment(env);
	// BENCH_COURIER=process: the sandbox courier (simulator) runs in its own process, as an
	// external courier would, so the system's figures do not include the courier's own work.
	const courierApart = process.env.BENCH_COURIER === "process";
	const sim = courierApart ? "" : ",simulator";
	// stdout (the access log, one line per request) to files, as a log collector would take it:
	// reading it through a pipe here would cost the load generator's own CPU
	const logs: string[] = [];
	const logFile = () => {
		const f = join(tmpdir(), `msa-bench-${run}-${logs.length}.log`);
		logs.push(f);
		return { stdoutFile: f, compiled, root: opts.root };
	};
	const procs: StartedProcess[] = split
		? [
				startProcess({ ...common, TRANSPORTER: natsUrl, SERVICES: "gateway,documents" }, logFile()),
				startProcess(
					{
						...common,
						TRANSPORTER: natsUrl,
						SERVICES: `pincode,rates,warehouses,intake,booking,billing,ndr,webhooks,notifications${sim}`,
					},
					logFile(),
				),
			]
		: [
				startProcess(
					courierApart
						? {
								...common,
								SERVICES:
									"gateway,pincode,rates,warehouses,intake,booking,billing,documents,ndr,webhooks,notifications",
							}
						: common,
					logFile(),
				),
			];
	if (courierApart)
		procs.push(startProcess({ ...common, SERVICES: "simulator", PORT: String(await freePort()) }, logFile()));
	const close = async () => {
		await Promise.all(procs.map((p) => p.stop()));
		// BENCH_KEEP_LOGS=1: the processes' stdout stays for reading after the run
		if (process.env.BENCH_KEEP_LOGS === "1") console.error(`logs kept: ${logs.join(" ")}`);
		else for (const f of logs) rmSync(f, { force: true });
		await cleanup();
	};
	try {
		await waitReady(base, procs, 90_000);
		const token = await idp.tokenFor(900_001);
		const api = client(base, token);
		const wh = await api.post("/v1/warehouses", warehouseBody({ warehouse_name: "Bench warehouse" }));
		if (wh.status !== 201) throw new Error(`warehouse: ${JSON.stringify(wh.body)}`);
		return {
			base,
			databaseUrl,
			run,
			token,
			api,
			warehouseId: wh.body.data.id as number,
			mode: `${split ? "2 processes over NATS" : "1 process"}${courierApart ? " + the sandbox courier in its own process" : ""}`,
			pids: procs.map((p) => p.child.pid as number),
			tokenFor: (sender_id: number) => idp.tokenFor(sender_id),
			auth: { jwksUrl: String(common.AUTH_JWKS_URL), issuer: idp.issuer, audience: idp.audience },
			close,
		};
	} catch (err) {
		await close();
		throw err;
	}
}
