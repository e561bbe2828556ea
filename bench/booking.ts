/**
 * Booking benchmark (issue 6; printed figures, not a test): the system started
 * as in production (bench/lib.ts: one process, or split over NATS with
 * BENCH_SPLIT=1) against the sandbox courier answering every create after
 * SANDBOX_COURIER_DELAY_MS (default here 200 ms).
 *
 *   async   POST /v1/shipping/book offered at BENCH_RATE/s for BENCH_DURATION s
 *           (open loop): 202 p50/p99 (client), sustained bookings/s (booked
 *           attempts over the longer of first → last created_at and first → last booked_at)
 *           beside the rate the requests arrived at, and
 *           202 → booked p50/p99 from the database (booking.attempts created_at → booked_at)
 *           and the CPU per booking of the system's processes and of PostgreSQL's (same host)
 *   sync    POST /v1/shipping/book/sync, BENCH_SYNC orders over BENCH_SYNC_CONNECTIONS
 *           concurrent clients: p50/p99 (client); skipped with a note if it answers 501
 *
 * Target (issues 6 and 32): ≥ 150 bookings/s with 202 → booked p99 < 1.5 s in one process (≥ 120/s split), every
 * request answered 202 and booked; at an offered rate equal to the target, keeping up with it (within 1 %) counts.
 *
 * Usage: npm run bench:booking   (env: BENCH_SPLIT=1, BENCH_COURIER=process (the sandbox courier in its own process), BENCH_RATE=180, BENCH_DURATION=10,
 *   BENCH_SYNC=100, BENCH_SYNC_CONNECTIONS=10, SANDBOX_COURIER_DELAY_MS=200, BOOKING_* passed through,
 *   BENCH_NODE_OPTIONS as the system's NODE_OPTIONS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof")
 */
import { Client } from "pg";
import { orderBody } from "../test/helpers/fixtures";
import { type BenchSystem, cpuMeter, pct, postgresCpuMeter, split, startSystem } from "./lib";

// offered above the 150/s target: a sustained rate can only reach what is offered
const rate = Number(process.env.BENCH_RATE || 180);
const duration = Number(process.env.BENCH_DURATION || 10);
const syncCount = Number(process.env.BENCH_SYNC ?? 100);
const syncConnections = Number(process.env.BENCH_SYNC_CONNECTIONS || 10);
const courierDelay = process.env.SANDBOX_COURIER_DELAY_MS || "200";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `work(i)` for i in 0..n-1 over `width` concurrent lanes. */
async function lanes(n: number, width: number, work: (i: number) => Promise<void>): Promise<void> {
	let next = 0;
	await Promise.all(
		Array.from({ length: Math.min(width, n) }, async () => {
			for (let i = next++; i < n; i = next++) await work(i);
		}),
	);
}

/** Creates `n` orders (20 concurrent requests); answers their ids. */
async function createOrders(sys: BenchSystem, n: number, tag: string): Promise<number[]> {
	const ids: number[] = new Array(n);
	await lanes(n, 20, async (i) => {
		const r = await sys.api.post("/v1/intake/order", orderBody(sys.warehouseId, `${tag}-${sys.run}-${i}`));
		if (r.status !== 201) throw new Error(`order: ${r.status} ${JSON.stringify(r.body)}`);
		ids[i] = r.body.order_id;
	});
	return ids;
}

/** `ms` figures as `p50 … ms   p99 … ms`. */
function figures(ms: number[]): string {
	const s = [...ms].sort((a, b) => a - b);
	return `p50 ${String(pct(s, 50)).padStart(5)} ms   p99 ${String(pct(s, 99)).padStart(5)} ms   max ${s.at(-1)} ms`;
}

async function asyncBookings(sys: BenchSystem, db: Client): Promise<void> {
	const n = rate * duration;
	const ids = await createOrders(sys, n, "ASYNC");
	const answered: number[] = [];
	const errors = new Map<string, number>();
	// what the bookings cost until they settle: the system's processes and PostgreSQL's (same host)
	const systemCpu = cpuMeter(sys.pids);
	const pgCpu = await postgresCpuMeter(db);
	const t0 = Date.now();
	// Open loop: request i leaves at t0 + i/rate whatever the previous answers.
	await Promise.all(
		ids.map(async (order_id, i) => {
			await sleep(Math.max(0, t0 + (i * 1000) / rate - Date.now()));
			const sent = Date.now();
			const r = await sys.api.post("/v1/shipping/book", { order_id });
			if (r.status === 202) answered.push(Date.now() - sent);
			else errors.set(`${r.status} ${r.body?.error}`, (errors.get(`${r.status} ${r.body?.error}`) ?? 0) + 1);
		}),
	);
	const offeredS = (Date.now() - t0) / 1000;
	const done = await (async () => {
		for (;;) {
			const { rows } = await db.query<{ open: string }>(
				"SELECT count(*) AS open FROM booking.attempts WHERE order_id = ANY($1::bigint[]) AND state IN ('queued', 'claimed')",
				[ids],
			);
			if (Number(rows[0].open) === 0 || Date.now() - t0 > 180_000) return Number(rows[0].open) === 0;
			await sleep(250);
		}
	})();
	const cpu = { system: systemCpu(), postgres: pgCpu() };
	const { rows } = await db.query<{
		state: string;
		ms: string | null;
		created: string;
		booked: string | null;
	}>(
		`SELECT state, (extract(epoch FROM booked_at - created_at) * 1000)::bigint AS ms,
		        (extract(epoch FROM created_at) * 1000)::bigint AS created, (extract(epoch FROM booked_at) * 1000)::bigint AS booked
		 FROM booking.attempts WHERE order_id = ANY($1::bigint[])`,
		[ids],
	);
	const booked = rows.filter((r) => r.state === "booked" && r.ms !== null);
	// sustained: the bookings over the longer of the span they were offered in (first to last created) and the span
	// they were booked in (first to last booked). A system that keeps up books them over the span they came in,
	// each one courier delay later; one that falls behind stretches the second span; a burst after a stall is held
	// to the offered span. (Counting from the first created to the last booked would charge the courier's delay once
	// to the rate: 1,500 bookings offered over 10 s could never show 150/s.)
	const created = rows.map((r) => Number(r.created));
	const bookedAt = booked.map((r) => Number(r.booked));
	const offeredSpan = Math.max(...created) - Math.min(...created);
	const bookedSpan = Math.max(...bookedAt) - Math.min(...bookedAt);
	const perS = booked.length / (Math.max(offeredSpan, bookedSpan, 1) / 1000);
	// the rate the requests reached the database at (n − 1 gaps between the first and the last created)
	const arrived = (rows.length - 1) / (Math.max(offeredSpan, 1) / 1000);
	console.log(
		`async book: offered ${rate}/s for ${offeredS.toFixed(1)} s (${n} bookings), 202 ${figures(answered)}` +
			(errors.size ? `   errors ${JSON.stringify(Object.fromEntries(errors))}` : ""),
	);
	console.log(
		`  sustained ${perS.toFixed(1)} bookings/s of ${arrived.toFixed(1)}/s arrived (${booked.length} booked, ${rows.length - booked.length} not booked${done ? "" : ", NOT all settled within 180 s"})`,
	);
	console.log(
		`  202 -> booked ${figures(booked.map((r) => Number(r.ms)))}   (booking.attempts created_at -> booked_at)`,
	);
	// a guard steadier than the rate on a shared machine: CPU per booking, from the first request until all settled
	console.log(
		`  CPU per booking: system ${((1000 * cpu.system) / n).toFixed(2)} ms, PostgreSQL ${((1000 * cpu.postgres) / n).toFixed(2)} ms (its processes at the start of the phase)`,
	);
	// issue 32: one process >= 150 bookings/s with 202 -> booked p99 < 1.5 s; split over NATS >= 120 bookings/s
	const p99 = pct(
		booked.map((r) => Number(r.ms)).sort((a, b) => a - b),
		99,
	);
	const [minRate, target] = split
		? [120, "target (split) >= 120 bookings/s"]
		: [150, "target >= 150 bookings/s with p99 < 1500 ms"];
	// Met: every request answered 202 and booked (p99 under 1.5 s in one process), at a rate of at least the target, or
	// keeping up (within 1 %) with requests that arrived at the target (within 1 %). The second holds a system that
	// books as fast as it is asked at an offered 150/s, where the rate cannot pass the offer and a generator sharing
	// the machine lands 1,500 requests over a hair more than 10 s (149.9/s); one that falls behind still misses.
	const clean = errors.size === 0 && booked.length === rows.length && done;
	const keptUp = arrived >= 0.99 * minRate && perS >= 0.99 * arrived;
	const ok = clean && (perS >= minRate || keptUp) && (split || p99 < 1500);
	console.log(`  ${target}: ${ok ? "met" : "MISSED"}`);
}

async function syncBookings(sys: BenchSystem): Promise<void> {
	if (syncCount <= 0) return console.log("sync book: skipped (BENCH_SYNC=0)");
	const ids = await createOrders(sys, syncCount, "SYNC");
	const probe = await sys.api.post("/v1/shipping/book/sync", { order_id: ids[0] });
	if (probe.status === 501) {
		console.log("sync book: skipped, POST /v1/shipping/book/sync answers 501 (not implemented yet)");
		return;
	}
	const ms: number[] = [];
	const statuses = new Map<number, number>([[probe.status, 1]]);
	await lanes(ids.length - 1, syncConnections, async (i) => {
		const sent = Date.now();
		const r = await sys.api.post("/v1/shipping/book/sync", { order_id: ids[i + 1] });
		statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
		if (r.status === 200) ms.push(Date.now() - sent);
	});
	console.log(
		`sync book: ${syncCount} orders over ${syncConnections} clients, 200 ${figures(ms)}   statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
	);
}

async function main(): Promise<void> {
	const booking = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("BOOKING_")));
	const sys = await startSystem({
		...booking,
		SANDBOX_COURIER_DELAY_MS: courierDelay,
		// e.g. BENCH_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the system's process(es)
		NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS,
	});
	const db = new Client({ connectionString: sys.databaseUrl });
	try {
		await db.connect();
		console.log(
			`\nmode: ${sys.mode}, courier delay ${courierDelay} ms, BOOKING_CONCURRENCY ${process.env.BOOKING_CONCURRENCY || "default"}, node ${process.version}`,
		);
		// warm-up: a few bookings through every hop
		const warm = await createOrders(sys, 20, "WARM");
		await Promise.all(warm.map((order_id) => sys.api.post("/v1/shipping/book", { order_id })));
		await asyncBookings(sys, db);
		await syncBookings(sys);
	} finally {
		await db.end();
		await sys.close();
	}
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
