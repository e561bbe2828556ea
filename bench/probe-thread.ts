/**
 * The API probe of bench/bulk.ts, run in a worker thread of its own: its
 * event loop and heap are apart from the bench's (which builds and holds
 * 25 MB files), so a garbage collection of the bench does not delay a probe
 * and count as API latency.
 *
 * workerData `{base, token, rate, callers, pins}`; the thread sends GET
 * /v1/shipping/serviceable until it receives "stop", then posts the
 * latencies (ms, ascending) and, in rate mode, `samples` ([epoch ms due,
 * latency ms] per probe) and exits. `rate` > 0: that many requests/s,
 * each timed from when it was due (open loop, no coordinated omission);
 * `rate` 0: `callers` callers each sending the next request when the last
 * one answered (closed loop).
 */
import { parentPort, workerData } from "node:worker_threads";

const { base, token, rate, callers, pins } = workerData as {
	base: string;
	token: string;
	rate: number;
	callers: number;
	pins: string[];
};
let stopped = false;
const slow: string[] = [];
/** [epoch ms the request was due, latency ms] of each probe (rate mode), for BENCH_TIMELINE */
const samples: [number, number][] = [];
parentPort?.on("message", () => {
	stopped = true;
});

/** One GET /v1/shipping/serviceable (to the `n`-th pincode of `pins`); throws unless 200. */
async function serviceable(n: number): Promise<void> {
	const r = await fetch(
		`${base}/v1/shipping/serviceable?from_pin=110001&to_pin=${pins[n % pins.length]}&physical_weight=0.8&order_type=1&collectable_amount=1499`,
		{ headers: { authorization: `Bearer ${token}` } },
	);
	await r.arrayBuffer();
	if (r.status !== 200) throw new Error(`serviceable ${r.status}`);
}

async function run(): Promise<number[]> {
	const lat: number[] = [];
	let n = 0;
	if (rate > 0) {
		const gap = 1000 / rate;
		const start = performance.now();
		const sent: Promise<void>[] = [];
		for (let k = 0; !stopped; k++) {
			const due = start + k * gap;
			const wait = due - performance.now();
			if (wait > 0) await new Promise((r) => setTimeout(r, wait));
			sent.push(
				serviceable(n++).then(() => {
					const ms = performance.now() - due;
					lat.push(ms);
					samples.push([performance.timeOrigin + due, ms]);
					if (process.env.BENCH_SLOW_TRACE && ms > 50)
						slow.push(`${((Date.now() - (performance.now() - due)) % 100000).toFixed(0)}:${ms.toFixed(0)}`);
				}),
			);
		}
		await Promise.all(sent);
	} else {
		const caller = async () => {
			while (!stopped) {
				const t = performance.now();
				await serviceable(n++);
				lat.push(performance.now() - t);
			}
		};
		await Promise.all(Array.from({ length: callers }, caller));
	}
	return lat.sort((a, b) => a - b);
}

run().then(
	(lat) => {
		if (slow.length) console.log(`slow probes (due epoch ms mod 100000:latency): ${slow.join(" ")}`);
		parentPort?.postMessage({ lat, samples });
		parentPort?.close();
	},
	(e: Error) => {
		parentPort?.postMessage({ error: e.message });
		parentPort?.close();
	},
);
