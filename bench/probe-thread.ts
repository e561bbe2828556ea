/**
 * The API probe of bench/bulk.ts, run in a worker thread of its own: its
 * event loop and heap are apart from the bench's (which builds and holds
 * 25 MB files), so a garbage collection of the bench does not delay a probe
 * and count as API latency. One thread probes the whole run, so the idle
 * and the import windows are measured by the same warm client (a thread
 * started per window counted its own start-up, 60–100 ms, in its first
 * second).
 *
 * workerData `{base, token, rate, callers, pins, cgroup?}`; the thread first
 * joins cgroup v1 directory `cgroup` when given (bench/pods.ts: the other
 * merchants' machine, apart from the uploading bench's), then sends GET
 * /v1/shipping/serviceable. `rate` > 0: that many requests/s, each timed
 * from when it was due (open loop, no coordinated omission); `rate` 0:
 * `callers` callers each sending the next request when the last one
 * answered (closed loop). Messages: "report" → `{samples}` ([epoch ms due
 * (sent, in a closed loop), latency ms] of every probe answered so far);
 * "stop" → stops sending, waits for the probes in flight, posts the final
 * `{samples}` and exits. A probe that fails (not 200, a reset) stops the
 * sending and posts `{error}` at once.
 */
import { readlinkSync, writeFileSync } from "node:fs";
import { Agent, get } from "node:http";
import { parentPort, workerData } from "node:worker_threads";

const { base, token, rate, callers, pins, cgroup } = workerData as {
	cgroup?: string;
	base: string;
	token: string;
	rate: number;
	callers: number;
	pins: string[];
};
// this thread alone (its id from /proc/thread-self → "<pid>/task/<tid>")
if (cgroup) writeFileSync(`${cgroup}/tasks`, readlinkSync("/proc/thread-self").split("/").pop() as string);
let stopped = false;
const slow: string[] = [];
/** [epoch ms the request was due, latency ms] of each probe answered */
const samples: [number, number][] = [];
/**
 * BENCH_PROBE_LAG=1: how late this thread's own 5 ms timer fired, the worst per
 * second (`<epoch s mod 1000>:<ms>`): time the probe itself waited for a core,
 * which its latencies include (the client shares the machine it measures).
 */
const lagLog: string[] = [];
if (process.env.BENCH_PROBE_LAG) {
	let last = performance.now();
	let worst = 0;
	let second = Math.floor(Date.now() / 1000);
	setInterval(() => {
		const now = performance.now();
		worst = Math.max(worst, now - last - 5);
		last = now;
		const s = Math.floor(Date.now() / 1000);
		if (s !== second) {
			lagLog.push(`${second % 1000}:${worst.toFixed(0)}`);
			second = s;
			worst = 0;
		}
	}, 5).unref();
}
parentPort?.on("message", (m: string) => {
	if (m === "stop") stopped = true;
	else parentPort?.postMessage({ samples });
});

/**
 * Keep-alive connections of the probe: node:http costs the probe far less CPU
 * per request than fetch (~0.3 ms), so it disturbs the machine it measures less
 * (idle p50 0.1–0.5 ms instead of 0.4–0.7 ms on the 2-core machine). Sockets are
 * taken in turn (`fifo`), so none sits idle long enough for the server's
 * keep-alive timeout (5 s) to close it as it is reused.
 */
const agent = new Agent({ keepAlive: true, maxSockets: 256, scheduling: "fifo" });

/**
 * One GET /v1/shipping/serviceable (to the `n`-th pincode of `pins`); throws
 * unless 200. A request on a reused keep-alive socket that the server closed
 * meanwhile is sent once more on a new one (Node's documented
 * `req.reusedSocket` case); its latency still counts from when it was due.
 */
function serviceable(n: number, again = true): Promise<void> {
	const url = `${base}/v1/shipping/serviceable?from_pin=110001&to_pin=${pins[n % pins.length]}&physical_weight=0.8&order_type=1&collectable_amount=1499`;
	return new Promise((resolve, reject) => {
		const req = get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
			res.resume();
			res.on("end", () =>
				res.statusCode === 200 ? resolve() : reject(new Error(`serviceable ${res.statusCode}`)),
			);
			res.on("error", reject);
		});
		req.on("error", (e: NodeJS.ErrnoException) =>
			again && req.reusedSocket && e.code === "ECONNRESET"
				? serviceable(n, false).then(resolve, reject)
				: reject(e),
		);
	});
}

/** Sends the probes until "stop"; throws the first probe's failure after the others answered. */
async function run(): Promise<void> {
	let n = 0;
	const record = (due: number) => {
		const ms = performance.now() - due;
		samples.push([performance.timeOrigin + due, ms]);
		// when it was due on CLOCK_MONOTONIC (seconds; perf's `-k CLOCK_MONOTONIC` stamps), and its latency
		if (process.env.BENCH_SLOW_TRACE && ms > Number(process.env.BENCH_SLOW_MS ?? 50))
			slow.push(
				`${((Number(process.hrtime.bigint() / 1000n) / 1000 - ms) / 1000).toFixed(4)}:${ms.toFixed(0)}`,
			);
	};
	// a failed probe stops the run and is thrown after the others answered
	let failure: Error | undefined;
	const fail = (e: Error) => {
		if (!failure) parentPort?.postMessage({ error: e.message });
		failure ??= e;
		stopped = true;
	};
	if (rate > 0) {
		const gap = 1000 / rate;
		const start = performance.now();
		const sent: Promise<void>[] = [];
		for (let k = 0; !stopped; k++) {
			const due = start + k * gap;
			const wait = due - performance.now();
			if (wait > 0) await new Promise((r) => setTimeout(r, wait));
			sent.push(serviceable(n++).then(() => record(due), fail));
		}
		await Promise.all(sent);
	} else {
		const caller = async () => {
			while (!stopped) {
				const t = performance.now();
				await serviceable(n++).then(() => record(t), fail);
			}
		};
		await Promise.all(Array.from({ length: callers }, caller));
	}
	if (failure) throw failure;
}

run().then(
	() => {
		if (lagLog.length)
			console.log(
				`probe thread: own timer lateness, worst per second (epoch s mod 1000:ms): ${lagLog.join(" ")}; its CPU ${(process.threadCpuUsage().user / 1e6).toFixed(2)} s`,
			);
		if (slow.length) console.log(`slow probes (due, CLOCK_MONOTONIC s:latency ms): ${slow.join(" ")}`);
		parentPort?.postMessage({ samples });
		parentPort?.close();
	},
	(e: Error) => {
		parentPort?.postMessage({ error: e.message });
		parentPort?.close();
	},
);
