/**
 * Signed label link benchmark (issue 8; printed figures, not a test): the
 * system started as in production (bench/lib.ts: one process, or split over
 * NATS with BENCH_SPLIT=1; edge rate limits off unless RATE_LIMIT_* are set),
 * BENCH_LINKS orders booked with `POST /v1/shipping/book/sync`, then their
 * `label_url`s (signed links, no Authorization header) downloaded with
 * autocannon for BENCH_DURATION s over BENCH_CONNECTIONS connections:
 *
 *   GET /v1/documents/label/t/{token}   downloads/s, p50/p99, bytes per label
 *   GET /v1/documents/label/t/{bad}     404s/s (a tampered token: verification cost alone)
 *
 * Usage: npm run bench:link   (env: BENCH_SPLIT=1, BENCH_LINKS=50, BENCH_DURATION=10, BENCH_CONNECTIONS=20)
 */
import autocannon from "autocannon";
import { orderBody } from "../test/helpers/fixtures";
import { startSystem } from "./lib";

const links = Number(process.env.BENCH_LINKS || 50);
const duration = Number(process.env.BENCH_DURATION || 10);
const connections = Number(process.env.BENCH_CONNECTIONS || 20);

async function main(): Promise<void> {
	const sys = await startSystem({ SANDBOX_COURIER_DELAY_MS: "5" });
	try {
		console.log(
			`\nmode: ${sys.mode}, ${links} labels, ${connections} connections, ${duration} s, node ${process.version}`,
		);
		const urls: string[] = [];
		for (let i = 0; i < links; i++) {
			const o = await sys.api.post("/v1/intake/order", orderBody(sys.warehouseId, `LINK-${sys.run}-${i}`));
			if (o.status !== 201) throw new Error(`order: ${o.status} ${JSON.stringify(o.body)}`);
			const b = await sys.api.post("/v1/shipping/book/sync", { order_id: o.body.order_id, logistic_id: 1 });
			if (b.status !== 200) throw new Error(`book/sync: ${b.status} ${JSON.stringify(b.body)}`);
			urls.push(b.body.label_url as string);
		}
		const first = await fetch(sys.base + urls[0]);
		const bytes = (await first.arrayBuffer()).byteLength;
		if (first.status !== 200) throw new Error(`label_url answered ${first.status}`);

		let n = 0;
		const requests = [
			{ setupRequest: (req: autocannon.Request) => ({ ...req, path: urls[n++ % urls.length] }) },
		];
		// warm-up (fonts, JIT, connection pools)
		await autocannon({ url: sys.base, connections, duration: 2, requests });
		const r = await autocannon({ url: sys.base, connections, duration, requests });
		console.log(
			`GET label/t/{token} (200)   ${r.requests.average.toFixed(0).padStart(6)} downloads/s   p50 ${r.latency.p50} ms   p99 ${r.latency.p99} ms   ${bytes} bytes/label   (${r.requests.total} requests, ${r.non2xx + r.errors + r.timeouts} non-2xx/errors)`,
		);

		const bad = `${urls[0].slice(0, -1)}${urls[0].endsWith("A") ? "B" : "A"}`;
		const t = await autocannon({ url: sys.base + bad, connections, duration: Math.min(duration, 5) });
		console.log(
			`GET label/t/{tampered} (404) ${t.requests.average.toFixed(0).padStart(6)} req/s         p50 ${t.latency.p50} ms   p99 ${t.latency.p99} ms   (${t["4xx"]} 4xx, ${t.non2xx - t["4xx"] + t.errors} other)`,
		);
	} finally {
		await sys.close();
	}
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
