/**
 * The load generator `wrk` (C, epoll) driven from a benchmark (issue 32, docs/decisions/0098-benchmark-anchors.md):
 * on a 2-core machine the load generator shares the cores with the server, and autocannon (JavaScript, one
 * setupRequest call per request) spends about as much CPU per request as a light route's server does, so every
 * light route and anchor b end near the same figure: the client's ceiling. wrk spends a fraction of that, so the
 * figures and their ratios are the server's.
 *
 * Requests rotate over a list (method, path, headers), one per request, as bench/run.ts's `rotating` does; a body
 * may carry `{{n}}`, replaced by a value unique to the request in this process (the load's own prefix, thread id and
 * counter), so each create is a new order, also when a line is loaded in several turns (bench/turns.ts). Latency
 * percentiles are wrk's (µs → ms); non-2xx/3xx answers, socket errors and timeouts are counted as
 * `bad`. Needs the `wrk` binary (Debian package `wrk`); {@link wrkAvailable} tells.
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";

/** One request of the rotation. */
export interface WrkRequest {
	method: string;
	path: string;
	headers: Record<string, string>;
	/** The body; `{{n}}` is replaced by a number unique to the request. */
	body?: string;
}

/** What a run measured: total answers, answers that were not 2xx/3xx or failed, latency percentiles in ms. */
export interface WrkResult {
	total: number;
	bad: number;
	p50: number;
	p99: number;
}

/** Whether the `wrk` binary is on PATH. */
export function wrkAvailable(): boolean {
	try {
		execFileSync("wrk", ["--version"], { stdio: "ignore" });
		return true;
	} catch (err) {
		// wrk --version prints its usage and exits 1; only a missing binary is ENOENT
		return (err as NodeJS.ErrnoException).code !== "ENOENT";
	}
}

/** A Lua string literal of `s`. */
function lua(s: string): string {
	return JSON.stringify(s);
}

/** Loads started by this process: with the time, the prefix of a load's `{{n}}` values ({@link loadPrefix}). */
let loads = 0;

/**
 * A prefix no other load of this process has: `{{n}}` values of two loads never meet, so a route loaded in turns
 * creates new orders in every turn instead of answering the first turn's as duplicates.
 */
function loadPrefix(): string {
	loads += 1;
	return `${Date.now().toString(36)}${loads.toString(36)}`;
}

/**
 * The Lua script of a rotation over `requests`: per thread an id, per request the next entry; `{{n}}` becomes
 * `<prefix>-<thread>-<counter>`.
 */
function script(requests: WrkRequest[], prefix: string): string {
	const entries = requests
		.map((r) => {
			const headers = Object.entries(r.headers)
				.map(([k, v]) => `[${lua(k)}] = ${lua(v)}`)
				.join(", ");
			return `{ method = ${lua(r.method)}, path = ${lua(r.path)}, headers = { ${headers} }, body = ${r.body === undefined ? "nil" : lua(r.body)} }`;
		})
		.join(",\n");
	return `
local entries = {
${entries}
}
local counter = 1
function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
end
local i = 0
function request()
  i = i + 1
  local e = entries[(i % #entries) + 1]
  local body = e.body
  if body ~= nil then body = string.gsub(body, "{{n}}", ${lua(prefix)} .. "-" .. tid .. "-" .. i) end
  return wrk.format(e.method, e.path, e.headers, body)
end
function done(summary, latency, requests)
  io.write(string.format("WRK_RESULT %d %d %d %d %d %d\\n", summary.requests,
    summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write, summary.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;
}

/**
 * Runs wrk against `url` (scheme, host and port; the paths come from `requests`) with `connections` connections
 * on `threads` threads for `durationS` seconds.
 * @throws Error when wrk exits with an error or prints no result
 */
export async function wrk(opts: {
	url: string;
	connections: number;
	durationS: number;
	requests: WrkRequest[];
	threads?: number;
}): Promise<WrkResult> {
	const dir = mkdtempSync(join(tmpdir(), "msa-wrk-"));
	try {
		const file = join(dir, "rotation.lua");
		writeFileSync(file, script(opts.requests, loadPrefix()));
		const threads = String(opts.threads ?? 1);
		const out = await new Promise<string>((ok, fail) =>
			execFile(
				"wrk",
				[
					"-t",
					threads,
					"-c",
					String(opts.connections),
					"-d",
					`${opts.durationS}s`,
					"--timeout",
					"10s",
					"-s",
					file,
					opts.url,
				],
				{ maxBuffer: 1 << 20 },
				(err, stdout, stderr) => (err ? fail(new Error(`wrk: ${err.message} ${stderr}`)) : ok(stdout)),
			),
		);
		const m = /WRK_RESULT (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(out);
		if (!m) throw new Error(`wrk printed no result: ${out}`);
		const [total, status, socket, timeout, p50, p99] = m.slice(1).map(Number);
		return {
			total,
			bad: status + socket + timeout,
			p50: Math.round(p50 / 1000),
			p99: Math.round(p99 / 1000),
		};
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

/**
 * The load generator of a run: `BENCH_LOADGEN=wrk|autocannon`, default wrk when its binary is on PATH (see the file
 * head), else autocannon.
 */
export const loadgen = process.env.BENCH_LOADGEN || (wrkAvailable() ? "wrk" : "autocannon");

/**
 * Loads `url` with {@link loadgen} for `durationS` seconds over `connections` connections, the requests rotating
 * over `requests` (a body's `{{n}}` made unique per request); answers what wrk answers (autocannon's figures in the
 * same shape: non-2xx, errors and timeouts counted as `bad`).
 */
export async function generateLoad(opts: {
	url: string;
	connections: number;
	durationS: number;
	requests: WrkRequest[];
}): Promise<WrkResult> {
	if (loadgen === "wrk") return wrk(opts);
	let i = 0;
	const prefix = loadPrefix();
	const list = opts.requests;
	const r = await autocannon({
		url: opts.url,
		connections: opts.connections,
		duration: opts.durationS,
		requests: [
			{
				setupRequest: (req) => {
					const e = list[i++ % list.length];
					const body = e.body?.replace("{{n}}", `${prefix}-${i}`);
					return { ...req, method: e.method as "GET", path: e.path, headers: e.headers, body };
				},
			},
		],
	});
	return {
		total: r.requests.total,
		bad: r.non2xx + r.errors + r.timeouts,
		p50: r.latency.p50,
		p99: r.latency.p99,
	};
}
