/**
 * Benchmarks (printed figures, not tests): the system started as in production
 * (bin/start.ts with real PostgreSQL, Redis and an external JWKS; all services
 * in one process by default, or split over NATS with BENCH_SPLIT=1), loaded
 * with autocannon (50 connections, 10 s):
 *
 *   GET  /v1/shipping/serviceable   req/s, p50, p99
 *   POST /v1/intake/order           req/s, p50, p99 (every request a new order)
 *   202 → booked                    p50, p99 over 200 bookings
 *
 * Usage: npm run bench   (env: BENCH_SPLIT=1, BENCH_DURATION=10, BENCH_CONNECTIONS=50, BENCH_BOOKINGS=200)
 * Creates and drops its own database and Redis prefix (bench/lib.ts).
 * Sustained booking throughput and sync booking: bench/booking.ts (npm run bench:booking).
 */
import autocannon from "autocannon";
import { Client } from "pg";
import { orderBody } from "../test/helpers/fixtures";
import { pct, startSystem } from "./lib";

const duration = Number(process.env.BENCH_DURATION || 10);
const connections = Number(process.env.BENCH_CONNECTIONS || 50);
const bookings = Number(process.env.BENCH_BOOKINGS || 200);

async function cannon(title: string, opts: autocannon.Options): Promise<void> {
	const r = await autocannon({ connections, duration, ...opts });
	const non2xx = r.non2xx + r.errors + r.timeouts;
	console.log(
		`${title.padEnd(34)} ${r.requests.average.toFixed(0).padStart(6)} req/s   p50 ${String(r.latency.p50).padStart(4)} ms   p99 ${String(r.latency.p99).padStart(4)} ms   (${r.requests.total} requests, ${non2xx} non-2xx/errors)`,
	);
}

async function main(): Promise<void> {
	const sys = await startSystem();
	const { base, api, run, token } = sys;
	try {
		const whId = sys.warehouseId;
		const auth = { authorization: `Bearer ${token}` };
		console.log(`\nmode: ${sys.mode}, ${connections} connections, ${duration} s, node ${process.version}`);

		// warm-up
		await autocannon({
			url: `${base}/v1/shipping/serviceable?from_pin=110001&to_pin=560001&physical_weight=0.8`,
			connections: 10,
			duration: 2,
			headers: auth,
		});

		await cannon("GET /v1/shipping/serviceable", {
			url: `${base}/v1/shipping/serviceable?from_pin=110001&to_pin=560001&physical_weight=0.8&order_type=1&collectable_amount=1499`,
			headers: auth,
		});

		let n = 0;
		await cannon("POST /v1/intake/order", {
			url: `${base}/v1/intake/order`,
			method: "POST",
			headers: { ...auth, "content-type": "application/json" },
			requests: [
				{
					setupRequest: (req) => {
						n += 1;
						return { ...req, body: JSON.stringify(orderBody(whId, `BENCH-${run}-${n}`)) };
					},
				},
			],
		});
		console.log(`  orders created: ${n}`);

		// 202 → booked over `bookings` orders
		const ids: Array<{ order_id: number; no: string }> = [];
		// orders to book, created up front
		for (let i = 0; i < bookings; i++) {
			const no = `BOOK-${run}-${i}`;
			const r = await api.post("/v1/intake/order", orderBody(whId, no));
			ids.push({ order_id: r.body.order_id, no });
		}
		// 202 time per order (client clock) vs booked_at written by intake (same machine clock).
		const accepted = new Map<number, number>();
		const t0 = Date.now();
		await Promise.all(
			ids.map(async ({ order_id }, i) => {
				await new Promise((r) => setTimeout(r, i * 10)); // arrivals at 100 bookings/s
				const r = await api.post("/v1/shipping/book", { order_id });
				if (r.status !== 202) throw new Error(`book: ${r.status} ${JSON.stringify(r.body)}`);
				accepted.set(order_id, Date.now());
			}),
		);
		const dbc = new Client({ connectionString: sys.databaseUrl });
		await dbc.connect();
		const latencies: number[] = [];
		let failed = 0;
		for (;;) {
			const { rows } = await dbc.query<{ order_id: string; state: string; booked_ms: string | null }>(
				"SELECT order_id, state, (extract(epoch FROM booked_at) * 1000)::bigint AS booked_ms FROM intake.orders WHERE order_id = ANY($1::bigint[])",
				[ids.map((x) => x.order_id)],
			);
			const done = rows.filter((r) => r.state === "booked" || r.state === "failed");
			if (done.length === ids.length || Date.now() - t0 > 120_000) {
				for (const r of rows) {
					if (r.state === "booked" && r.booked_ms)
						latencies.push(Number(r.booked_ms) - (accepted.get(Number(r.order_id)) ?? 0));
					else failed++;
				}
				break;
			}
			await new Promise((r) => setTimeout(r, 200));
		}
		await dbc.end();
		latencies.sort((a, b) => a - b);
		console.log(
			`202 -> booked (${bookings} bookings)    p50 ${pct(latencies, 50)} ms   p99 ${pct(latencies, 99)} ms   max ${latencies.at(-1)} ms   failed ${failed}   wall ${Date.now() - t0} ms   (booked_at from the orders table)`,
		);
	} finally {
		await sys.close();
	}
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
