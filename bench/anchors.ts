/**
 * Starting and measuring the anchors of bench/anchor.ts (issue 32) from a
 * benchmark: each anchor is its own child process (as the system under test
 * is), so a route's figure and its anchor's come from the same machine in the
 * same run and the bench prints their ratio.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { freePort } from "../test/helpers/net";

const root = resolve(__dirname, "..");

/** Spawns bench/anchor.ts with `env` (tsx, as the system under test runs). */
function spawnAnchor(env: Record<string, string>): { child: ChildProcess; out: () => string } {
	const child = spawn(process.execPath, ["--require", "tsx/cjs", "bench/anchor.ts"], {
		cwd: root,
		env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", NODE_ENV: "production", ...env },
		stdio: ["ignore", "pipe", "pipe"],
	});
	let out = "";
	child.stdout?.on("data", (d: Buffer) => {
		out += d.toString();
	});
	child.stderr?.on("data", (d: Buffer) => {
		out += d.toString();
	});
	process.once("exit", () => child.kill("SIGKILL"));
	return { child, out: () => out };
}

/** Resolves when `out()` contains `text`; rejects after `ms` or when the child exits first. */
function waitFor(p: { child: ChildProcess; out: () => string }, text: string, ms: number): Promise<void> {
	return new Promise((ok, fail) => {
		const t0 = Date.now();
		const tick = setInterval(() => {
			if (p.out().includes(text)) {
				clearInterval(tick);
				ok();
			} else if (p.child.exitCode !== null || Date.now() - t0 > ms) {
				clearInterval(tick);
				fail(new Error(`anchor did not get ready: ${p.out().slice(-2000)}`));
			}
		}, 50);
	});
}

/** Stops a child with SIGTERM and waits for it. */
function stop(child: ChildProcess): Promise<void> {
	if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
	return new Promise((r) => {
		child.once("exit", () => r());
		child.kill("SIGTERM");
	});
}

/** What the gateway anchor verifies tokens against. */
export interface AnchorAuth {
	jwksUrl: string;
	issuer: string;
	audience: string;
}

/** A started gateway anchor: `url` answers `GET` with a bearer token; `close` stops its processes. */
export interface GatewayAnchor {
	url: string;
	pids: number[];
	close(): Promise<void>;
}

/**
 * Anchor b (one process) or, with `nats` (a NATS URL), b-nats (the gateway
 * and the service in two processes over NATS, namespace `namespace`); with `verify: false` the floor anchor
 * (the same, no token verification).
 */
export async function startGatewayAnchor(
	auth: AnchorAuth,
	opts: { nats?: string; namespace?: string; verify?: boolean } = {},
): Promise<GatewayAnchor> {
	const port = await freePort();
	const common = {
		ANCHOR: "gateway",
		ANCHOR_PORT: String(port),
		ANCHOR_JWKS_URL: auth.jwksUrl,
		ANCHOR_ISSUER: auth.issuer,
		ANCHOR_AUDIENCE: auth.audience,
		ANCHOR_NAMESPACE: opts.namespace ?? `anchor-${port}`,
		ANCHOR_VERIFY: opts.verify === false ? "0" : "1",
	};
	const procs = opts.nats
		? [
				spawnAnchor({ ...common, ANCHOR_ROLE: "service", ANCHOR_TRANSPORTER: opts.nats }),
				spawnAnchor({ ...common, ANCHOR_ROLE: "gateway", ANCHOR_TRANSPORTER: opts.nats }),
			]
		: [spawnAnchor(common)];
	const close = async () => {
		await Promise.all(procs.map((p) => stop(p.child)));
	};
	try {
		for (const p of procs) await waitFor(p, "ready", 60_000);
	} catch (err) {
		await close();
		throw err;
	}
	return { url: `http://127.0.0.1:${port}/anchor`, pids: procs.map((p) => p.child.pid as number), close };
}

/** Anchor c: inserts per second of 8 pg clients looping an `INSERT … ON CONFLICT` for `seconds` into `databaseUrl`. */
export async function measureInsertAnchor(databaseUrl: string, seconds: number): Promise<number> {
	const p = spawnAnchor({
		ANCHOR: "insert",
		ANCHOR_DATABASE_URL: databaseUrl,
		ANCHOR_SECONDS: String(seconds),
	});
	await new Promise<void>((r) => p.child.once("exit", () => r()));
	const line = p
		.out()
		.split("\n")
		.find((l) => l.startsWith("{"));
	if (!line) throw new Error(`insert anchor failed: ${p.out().slice(-2000)}`);
	const { inserts, seconds: s } = JSON.parse(line) as { inserts: number; seconds: number };
	return inserts / s;
}
