/**
 * Orders list benchmark (issue 7 "Benchmark"; printed figures, not a test):
 * the system started as in production (bench/lib.ts: one process, or split
 * over NATS with BENCH_SPLIT=1), then 1,000,000 orders across 1,000 accounts
 * copied into its own database with COPY (after start, so the migrations
 * ran): realistic statuses (so every bucket), Indian cities, AWBs for booked
 * ones, one order in 40 belonging to ONE large account (the benchmark
 * merchant: 25,000 orders, so a page 10,000 rows deep exists), interleaved
 * over a year of created_at as real traffic would be. Then, with autocannon
 * (BENCH_CONNECTIONS connections, BENCH_DURATION s each, after a warm-up):
 *
 *   page 1         GET /v1/orders?bucket=all&limit=50
 *   deep page      the same, with the cursor 10,000 rows deep (walked there first)
 *   awb_number     …&awb_number=<one of 2,000 AWBs of the account, random per request>
 *   city           …&city=<one of 20 cities, random per request>
 *   bucket         …&bucket=transit (extra figure)
 *   random pages   one of the walk's first 200 pages at random per request
 *
 * The list answers concurrent requests of one shape with one statement
 * (lib/intake/list-store.ts orderPageReader), and identical requests in
 * flight together with one read: "page 1" and "deep page" repeat one
 * request, so they measure that case (a dashboard polled by many clients);
 * "awb_number", "city" and "random pages" vary every request.
 *
 * req/s, p50, p99 each, and the plan PostgreSQL chose for each shape (index
 * names). Targets (issue 7, 2-core machine): ≥ 1,500 req/s and p99 < 50 ms
 * for page 1; the deep page's p99 within 1.2× page 1's.
 *
 * Usage: npm run bench:orders   (env: BENCH_SPLIT=1, BENCH_DURATION=10, BENCH_CONNECTIONS=20,
 *   BENCH_ORDERS=1000000, BENCH_ACCOUNTS=1000)
 * Creates and drops its own database and Redis prefix (bench/lib.ts).
 */
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import autocannon from "autocannon";
import { Client } from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { type OrderListQuery, parseOrderListQuery } from "../lib/intake/list";
import { listOrdersStatement } from "../lib/intake/list-store";
import { type BenchSystem, startSystem } from "./lib";

const duration = Number(process.env.BENCH_DURATION || 10);
const connections = Number(process.env.BENCH_CONNECTIONS || 20);
const total = Number(process.env.BENCH_ORDERS || 1_000_000);
const accounts = Number(process.env.BENCH_ACCOUNTS || 1_000);
/** The benchmark merchant (bench/lib.ts) owns one order in LARGE_EVERY. */
const LARGE_EVERY = 40;
const MERCHANT = 900_001;

/** Weighted picks: [value, weight][]. */
function weighted<T>(pairs: Array<[T, number]>): T[] {
	return pairs.flatMap(([v, w]) => Array.from({ length: w }, () => v));
}

/** Status mix per 1,000 orders (every bucket populated; most delivered or moving). */
const STATUS_MIX = weighted<string>([
	["new", 60],
	["booking_queued", 5],
	["booking_failed", 20],
	["booked", 100],
	["manifested", 50],
	["pickup_scheduled", 30],
	["picked_up", 30],
	["in_transit", 150],
	["out_for_delivery", 40],
	["delivered", 370],
	["undelivered", 30],
	["rto_initiated", 20],
	["rto_in_transit", 20],
	["rto_delivered", 40],
	["lost", 3],
	["damaged", 2],
	["cancelled", 30],
]);

const CITIES: Array<[string, string, string]> = [
	["Mumbai", "Maharashtra", "400001"],
	["Delhi", "Delhi", "110001"],
	["Bengaluru", "Karnataka", "560001"],
	["Hyderabad", "Telangana", "500001"],
	["Ahmedabad", "Gujarat", "380001"],
	["Chennai", "Tamil Nadu", "600001"],
	["Kolkata", "West Bengal", "700001"],
	["Pune", "Maharashtra", "411001"],
	["Jaipur", "Rajasthan", "302001"],
	["Lucknow", "Uttar Pradesh", "226001"],
	["Kanpur", "Uttar Pradesh", "208001"],
	["Nagpur", "Maharashtra", "440001"],
	["Indore", "Madhya Pradesh", "452001"],
	["Bhopal", "Madhya Pradesh", "462001"],
	["Patna", "Bihar", "800001"],
	["Vadodara", "Gujarat", "390001"],
	["Ludhiana", "Punjab", "141001"],
	["Agra", "Uttar Pradesh", "282001"],
	["Kochi", "Kerala", "682001"],
	["Guwahati", "Assam", "781001"],
];
/** Big cities more often (index into CITIES). */
const CITY_MIX = weighted<number>(CITIES.map((_, i) => [i, i < 8 ? 8 : 2]));

const COLUMNS = [
	"sender_id",
	"customer_order_no",
	"shipment_type",
	"channel",
	"order_type",
	"pickup_address_id",
	"receiver_name",
	"receiver_address_1",
	"receiver_city",
	"receiver_state",
	"receiver_pincode",
	"receiver_mobile_no",
	"product_name",
	"physical_weight",
	"declared_order_total_paise",
	"cod_amount_paise",
	"state",
	"status",
	"awb_number",
	"courier",
	"logistic_id",
	"booked_at",
	"status_at",
	"created_at",
	"order_date",
];

/** A small deterministic PRNG (mulberry32), so every run seeds the same data. */
function prng(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

/** The booking state that goes with a lifecycle status. */
function stateOf(status: string): string {
	if (status === "new" || status === "cancelled") return "not_shipped";
	if (status === "booking_queued") return "booking_in_progress";
	if (status === "booking_failed") return "failed";
	return "booked";
}

/** COPY text lines of `total` orders, in created_at (= order_id) order. */
function* orderLines(warehouseId: number, run: string): Generator<string> {
	const rnd = prng(7);
	const start = Date.parse("2025-01-01T00:00:00Z");
	const step = (365 * 86_400_000) / total;
	let other = 0;
	let batch = "";
	for (let i = 0; i < total; i++) {
		const large = i % LARGE_EVERY === 0;
		const sender = large ? MERCHANT : MERCHANT + 1 + (other++ % (accounts - 1));
		const status = STATUS_MIX[Math.floor(rnd() * STATUS_MIX.length)];
		const [city, state, pin] = CITIES[CITY_MIX[Math.floor(rnd() * CITY_MIX.length)]];
		const reverse = rnd() < 0.08;
		const cod = !reverse && rnd() < 0.55;
		const paise = 19_900 + Math.floor(rnd() * 500_000);
		const created = new Date(start + i * step);
		const hasAwb = !["new", "booking_queued", "booking_failed"].includes(status);
		const booked = hasAwb ? new Date(created.getTime() + 600_000).toISOString() : "\\N";
		const statusAt = hasAwb ? new Date(created.getTime() + 86_400_000).toISOString() : "\\N";
		const row = [
			sender,
			`B-${run}-${i}${reverse ? "-R" : ""}`,
			reverse ? 1 : 0,
			i % 3 === 0 ? "shopify" : i % 3 === 1 ? "woocommerce" : "api",
			cod ? 1 : 0,
			large ? warehouseId : 1,
			`Buyer ${i % 997}`,
			`${1 + (i % 300)}, Main Road`,
			city,
			state,
			pin,
			`9${String(800_000_000 + (i % 199_999_999)).padStart(9, "0")}`,
			"Cotton kurta",
			(0.2 + rnd() * 4).toFixed(3),
			paise,
			cod ? paise : 0,
			stateOf(status),
			status,
			hasAwb ? `SBX${String(1_000_000_000 + i)}` : "\\N",
			hasAwb ? "Sandbox Express" : "\\N",
			hasAwb ? 1 : "\\N",
			booked,
			statusAt,
			created.toISOString(),
			created.toISOString(),
		];
		batch += `${row.join("\t")}\n`;
		if (batch.length > 1 << 20) {
			yield batch;
			batch = "";
		}
	}
	if (batch) yield batch;
}

/**
 * COPYs the orders into the database `db` is connected to (the system's, its
 * migrations applied), the benchmark account's with pickup warehouse
 * `warehouseId`; answers the seconds it took (COPY, then VACUUM ANALYZE).
 */
export async function seedOrders(
	db: Client,
	warehouseId: number,
	run: string,
): Promise<{ copyS: number; analyzeS: number }> {
	const t0 = Date.now();
	await pipeline(
		Readable.from(orderLines(warehouseId, run)),
		db.query(copyFrom(`COPY intake.orders (${COLUMNS.join(", ")}) FROM STDIN`)),
	);
	const t1 = Date.now();
	await db.query("VACUUM (ANALYZE) intake.orders");
	return { copyS: (t1 - t0) / 1000, analyzeS: (Date.now() - t1) / 1000 };
}

/** Index names of the plan PostgreSQL picks for the list statement of `params`, as a prepared statement would run it. */
async function planOf(
	db: Client,
	params: Record<string, string>,
	before_id: number | null = null,
): Promise<string> {
	const q: OrderListQuery = { ...parseOrderListQuery(params, MERCHANT), before_id };
	const st = listOrdersStatement(MERCHANT, q);
	const { rows } = await db.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(
		`EXPLAIN (FORMAT JSON) ${st.text}`,
		st.values,
	);
	const out: string[] = [];
	const walk = (n: PlanNode) => {
		out.push(n["Index Name"] ? `${n["Node Type"]} ${n["Index Name"]}` : n["Node Type"]);
		for (const c of n.Plans ?? []) walk(c);
	};
	walk(rows[0]["QUERY PLAN"][0].Plan);
	return out.join(" > ");
}

interface PlanNode {
	"Node Type": string;
	"Index Name"?: string;
	Plans?: PlanNode[];
}

interface Figures {
	title: string;
	rps: number;
	p50: number;
	p99: number;
	bad: number;
}

/** One autocannon run over `paths` (one picked at random per request). */
async function load(sys: BenchSystem, title: string, paths: string[]): Promise<Figures> {
	const auth = { authorization: `Bearer ${sys.token}` };
	const opts: autocannon.Options = {
		url: sys.base,
		connections,
		headers: auth,
		requests: [
			{ setupRequest: (req) => ({ ...req, path: paths[Math.floor(Math.random() * paths.length)] }) },
		],
	};
	await autocannon({ ...opts, duration: 2 }); // warm-up
	const r = await autocannon({ ...opts, duration });
	const f = {
		title,
		rps: r.requests.average,
		p50: r.latency.p50,
		p99: r.latency.p99,
		bad: r.non2xx + r.errors + r.timeouts,
	};
	console.log(
		`${title.padEnd(28)} ${f.rps.toFixed(0).padStart(6)} req/s   p50 ${String(f.p50).padStart(4)} ms   p99 ${String(f.p99).padStart(4)} ms   (${r.requests.total} requests, ${f.bad} non-2xx/errors)`,
	);
	return f;
}

async function main(): Promise<void> {
	const sys = await startSystem();
	const db = new Client({ connectionString: sys.databaseUrl });
	await db.connect();
	try {
		console.log(`\nmode: ${sys.mode}, node ${process.version}`);
		const { copyS, analyzeS } = await seedOrders(db, sys.warehouseId, sys.run);
		const { rows } = await db.query<{ n: string; a: string; mine: string }>(
			`SELECT count(*) AS n, count(DISTINCT sender_id) AS a, count(*) FILTER (WHERE sender_id = $1) AS mine FROM intake.orders`,
			[MERCHANT],
		);
		console.log(
			`seeded ${rows[0].n} orders across ${rows[0].a} accounts (the benchmark account: ${rows[0].mine}) with COPY in ${copyS.toFixed(1)} s, VACUUM ANALYZE ${analyzeS.toFixed(1)} s`,
		);

		// the cursor 10,000 rows deep, walked page by page as a client would (every page's path kept)
		const base = "/v1/orders?bucket=all&limit=50";
		const pagePaths = [base];
		const tw = Date.now();
		for (let page = 0; page < 200; page++) {
			const r = await sys.api.get(pagePaths[page]);
			if (r.status !== 200 || !r.body.pagination.nextCursor)
				throw new Error(`walk: ${r.status} ${JSON.stringify(r.body)}`);
			pagePaths.push(`${base}&cursor=${encodeURIComponent(r.body.pagination.nextCursor)}`);
		}
		const deepPath = pagePaths[200];
		const deepFirst = await sys.api.get(deepPath);
		console.log(
			`walked 200 pages (10,000 rows) in ${Date.now() - tw} ms; the deep page starts at order ${deepFirst.body.data[0].order_id}`,
		);
		const { rows: awbs } = await db.query<{ awb_number: string }>(
			`SELECT awb_number FROM intake.orders WHERE sender_id = $1 AND awb_number IS NOT NULL ORDER BY random() LIMIT 2000`,
			[MERCHANT],
		);
		const check = await sys.api.get(`${base}&awb_number=${awbs[0].awb_number}`);
		if (check.status !== 200 || check.body.data.length !== 1)
			throw new Error(`awb: ${JSON.stringify(check.body)}`);

		const deepId = Number(deepFirst.body.data[0].order_id) + 1;
		console.log("\nplans (custom, for the benchmark account):");
		console.log(`  page 1      ${await planOf(db, {})}`);
		console.log(`  deep page   ${await planOf(db, {}, deepId)}`);
		console.log(`  awb_number  ${await planOf(db, { awb_number: awbs[0].awb_number })}`);
		console.log(`  city        ${await planOf(db, { city: "Pune" })}`);
		console.log(`  bucket      ${await planOf(db, { bucket: "transit" })}`);

		console.log(`\n${connections} connections, ${duration} s per run (after a 2 s warm-up):`);
		const p1 = await load(sys, "page 1 (bucket=all)", [base]);
		const deep = await load(sys, "page 10,000 rows deep", [deepPath]);
		await load(
			sys,
			"awb_number (2,000 AWBs)",
			awbs.map((a) => `${base}&awb_number=${a.awb_number}`),
		);
		await load(
			sys,
			"city (20 cities)",
			CITIES.map(([c]) => `${base}&city=${encodeURIComponent(c.toLowerCase())}`),
		);
		await load(sys, "bucket=transit", ["/v1/orders?bucket=transit&limit=50"]);
		// no two requests in flight alike: nothing is answered twice from one read, only batched
		await load(sys, "pages 1-200 at random", pagePaths.slice(0, 200));

		console.log(
			`\npage 1: ${p1.rps.toFixed(0)} req/s (target ≥ 1500) ${p1.rps >= 1500 ? "ok" : "MISSED"}, p99 ${p1.p99} ms (target < 50) ${p1.p99 < 50 ? "ok" : "MISSED"}; deep page p99 ${deep.p99} ms = ${(deep.p99 / Math.max(1, p1.p99)).toFixed(2)}× page 1's (target ≤ 1.2×) ${deep.p99 <= 1.2 * Math.max(1, p1.p99) ? "ok" : "MISSED"}`,
		);
	} finally {
		await db.end();
		await sys.close();
	}
}

if (require.main === module) {
	main().catch((err) => {
		console.error(err);
		process.exit(1);
	});
}
