/**
 * Starts the system in child processes, from the TypeScript (bin/start.ts under tsx, as `npm run dev` does) or
 * compiled as `npm start` and production run it (`start:prod`, after {@link buildOnce}), and
 * waits for `/ready`. Used by the end-to-end and zero-setup smoke tests and by
 * the benchmarks.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import { resolve } from "node:path";
import { createDevIdp, type DevIdp, serveJwks } from "../../lib/platform/devidp";
import { freePort } from "./net";

const root = resolve(__dirname, "../..");

export interface StartedProcess {
	child: ChildProcess;
	output: () => string;
	/** SIGTERM and wait; resolves with the exit code. */
	stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Children not yet exited: killed when this process exits, however it exits (a crash included), so none is left running. */
const live = new Set<ChildProcess>();
process.once("exit", () => {
	for (const c of live) c.kill("SIGKILL");
});

/** The arguments of `node` in package.json's `start:prod` script (no shell syntax there: plain words). */
function prodArgs(): string[] {
	const pkg = JSON.parse(readFileSync(resolve(root, "package.json"), "utf8")) as {
		scripts: Record<string, string>;
	};
	const words = pkg.scripts["start:prod"].trim().split(/\s+/);
	if (words[0] !== "node") throw new Error("start:prod must start with `node`");
	return words.slice(1);
}

/**
 * Spawns `node --require tsx/cjs bin/start.ts` with exactly `env` (plus
 * PATH/HOME); with `opts.compiled`, the command of package.json's
 * `start:prod` script (`node <V8 flags> dist/bin/start.js`; run `npm run
 * build` first): the compiled JavaScript production runs, with its flags and
 * without tsx's compiler in memory. `opts.args` (with `compiled`): the
 * command line a Deployment gives instead of the image's CMD
 * (test/chaos/rss.ts `manifestArgs`, e.g. intake-bulk's own semi-space), `node` first.
 * `opts.stdoutFile`: stdout goes to that file (opened for appending) instead of
 * a pipe read by this process: a benchmark's logs then cost the load generator
 * nothing, as a container runtime's log collector would (`output()` has stderr only).
 * `opts.root`: the checkout whose code runs (default this one; with `compiled`, its dist/ must be built: a
 * benchmark comparing two commits, bench/ab.ts `BENCH_B_ROOT`).
 */
export function startProcess(
	env: Record<string, string | undefined>,
	opts: { compiled?: boolean; args?: string[]; stdoutFile?: string; root?: string } = {},
): StartedProcess {
	const clean: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root" };
	for (const [k, v] of Object.entries(env)) if (v !== undefined) clean[k] = v;
	if (opts.args && opts.args[0] !== "node")
		throw new Error(`a command line starts with node: ${opts.args.join(" ")}`);
	const args = opts.compiled ? (opts.args?.slice(1) ?? prodArgs()) : ["--require", "tsx/cjs", "bin/start.ts"];
	const outFd = opts.stdoutFile ? openSync(opts.stdoutFile, "a") : undefined;
	const child = spawn(process.execPath, args, {
		cwd: opts.root ?? root,
		env: clean,
		stdio: ["ignore", outFd ?? "pipe", "pipe"],
	});
	if (outFd !== undefined) closeSync(outFd); // the child holds its own copy
	let out = "";
	const keep = (d: Buffer) => {
		out += d.toString();
		if (out.length > 200_000) out = out.slice(-100_000);
	};
	live.add(child);
	child.once("exit", () => live.delete(child));
	child.stdout?.on("data", keep);
	child.stderr?.on("data", keep);
	return {
		child,
		output: () => out,
		stop(signal: NodeJS.Signals = "SIGTERM") {
			if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
			return new Promise((r) => {
				child.once("exit", (code) => r(code));
				child.kill(signal);
			});
		},
	};
}

/**
 * The environment every child process of a test system needs to reach this
 * run's infrastructure: its PostgreSQL, Redis and NATS, its `QUEUE_PREFIX`
 * and `NAMESPACE` (with `-<suffix>` when given, so the child system never
 * meets the in-process brokers of other specs).
 */
export function childEnv(suffix?: string): Record<string, string | undefined> {
	const tail = suffix === undefined ? "" : `-${suffix}`;
	return {
		DATABASE_URL: process.env.DATABASE_URL,
		REDIS_URL: process.env.REDIS_URL,
		QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}${tail}`,
		NAMESPACE: `${process.env.NAMESPACE}${tail}`,
		TRANSPORTER: process.env.TEST_NATS_URL,
	};
}

/** What {@link childSystem} prepared. */
export interface ChildSystem {
	/** the development IdP whose JWKS the gateway process verifies tokens against */
	idp: DevIdp;
	/** the server of that JWKS (close it after the test) */
	jwks: Server;
	/** the gateway's port and base URL `http://127.0.0.1:<port>` */
	port: number;
	base: string;
	/** the sandbox courier's (simulator's) port */
	courierPort: number;
	/** the environment shared by every process of the system (add SERVICES, NODEID and the rest per process) */
	env: Record<string, string | undefined>;
}

/**
 * Prepares a system of child processes (`npm start` split by SERVICES over
 * NATS): a development IdP serving its JWKS over HTTP, free ports for the
 * gateway and the sandbox courier, and their shared environment
 * ({@link childEnv} with `suffix`, the IdP's `AUTH_*`, SANDBOX=1,
 * `LABEL_LINK_SECRET` and `LOGLEVEL` as given).
 */
export async function childSystem(
	suffix: string,
	opts: { labelLinkSecret: string; logLevel: string },
): Promise<ChildSystem> {
	const idp = await createDevIdp();
	const served = await serveJwks(idp);
	const port = await freePort();
	const courierPort = await freePort();
	return {
		idp,
		jwks: served.server,
		port,
		base: `http://127.0.0.1:${port}`,
		courierPort,
		env: {
			...childEnv(suffix),
			AUTH_JWKS_URL: served.url,
			AUTH_ISSUER: idp.issuer,
			AUTH_AUDIENCE: idp.audience,
			LABEL_LINK_SECRET: opts.labelLinkSecret,
			SANDBOX_WEBHOOK_SECRET: process.env.SANDBOX_WEBHOOK_SECRET,
			SANDBOX: "1",
			PORT: String(port),
			SANDBOX_COURIER_PORT: String(courierPort),
			LOGLEVEL: opts.logLevel,
		},
	};
}

/** Polls `${base}/ready` until 200; throws with the processes' output after `ms`. */
export async function waitReady(base: string, procs: StartedProcess[], ms = 60_000): Promise<void> {
	const end = Date.now() + ms;
	for (;;) {
		for (const p of procs) {
			if (p.child.exitCode !== null)
				throw new Error(`process exited early (${p.child.exitCode}):\n${p.output().slice(-4000)}`);
		}
		try {
			const r = await fetch(`${base}/ready`);
			if (r.status === 200) return;
		} catch {
			/* not listening yet */
		}
		if (Date.now() > end)
			throw new Error(
				`not ready within ${ms} ms:\n${procs.map((p) => p.output().slice(-3000)).join("\n---\n")}`,
			);
		await new Promise((r) => setTimeout(r, 250));
	}
}

let built: Promise<void> | undefined;

/**
 * Compiles the system as `npm run build` does (dist/ emptied, then `tsc -p
 * tsconfig.build.json` → dist/: a module moved since the last build, e.g.
 * lib/errors.ts → lib/errors/index.ts, must not leave a stale dist/lib/errors.js
 * that `require("../errors")` would load first), once per test process;
 * rejects with tsc's output when it fails.
 * Needed before `startProcess(env, {compiled:true})`.
 */
export function buildOnce(): Promise<void> {
	built ??= new Promise<void>((res, rej) => {
		rmSync(resolve(root, "dist"), { recursive: true, force: true });
		const tsc = spawn(
			process.execPath,
			[resolve(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"],
			{
				cwd: root,
				stdio: ["ignore", "pipe", "pipe"],
			},
		);
		let out = "";
		tsc.stdout?.on("data", (d: Buffer) => {
			out += d.toString();
		});
		tsc.stderr?.on("data", (d: Buffer) => {
			out += d.toString();
		});
		tsc.once("error", rej);
		tsc.once("exit", (code) => (code === 0 ? res() : rej(new Error(`build failed (${code}):\n${out}`))));
	});
	return built;
}

/**
 * Resident set size of process `pid` in MiB (`VmRSS` of /proc/<pid>/status,
 * Linux), or undefined when the process is gone.
 */
export function vmRssMiB(pid: number | undefined): number | undefined {
	if (pid === undefined) return undefined;
	try {
		const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
		return m ? Number(m[1]) / 1024 : undefined;
	} catch {
		return undefined;
	}
}
