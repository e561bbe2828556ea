/**
 * Benchmarks (printed figures, not tests; issue 32, docs/decisions/0098-benchmark-anchors.md): the system started as in
 * production (bin/start.ts with real PostgreSQL, Redis and an external JWKS;
 * all services in one process by default, or split over NATS with
 * BENCH_SPLIT=1), with the production defaults on (access log at LOGLEVEL
 * info, metrics on their port, the account rate limiter on Redis with a limit
 * no bench account reaches, request ids), loaded with wrk (bench/wrk.ts) or autocannon (BENCH_LOADGEN)
 * (BENCH_CONNECTIONS=50 connections, BENCH_DURATION=10 s each) with bearer
 * tokens of 20 accounts in turn. Each route's figure is printed beside the
 * anchors measured in the same run (bench/anchor.ts, each its own process):
 *
 *   b      a bare moleculer-web gateway calling one local action, RS256
 *          verification by jose per request (no cache, log or metrics)
 *   b-nats the same in two processes over NATS (BENCH_SPLIT=1)
 *   c      8 pg clients looping INSERT … ON CONFLICT DO NOTHING RETURNING id
 *   floor  b (or b-nats) without the token verification: what moleculer-web itself costs, printed as a share
 *          of b so a goal above it reads as one no route served through moleculer-web can reach here
 *
 * Routes: GET /v1/pincode/{pin}, GET /v1/shipping/edd (issue 28: as fast as the
 * pincode route), GET /v1/shipping/serviceable, GET
 * /v1/orders/status, GET /v1/orders/{id}, GET /v1/orders (a page of 50), GET /track/{token}
 * (issue 29: the buyer's tracking page, at least half the pincode route's rate),
 * POST /v1/intake/order (each request a new order; ratio to c, and to b /
 * b-nats); then 202 → booked p50/p99 over BENCH_BOOKINGS bookings.
 * BENCH_DEFAULTS=off runs the system with the access log, metrics and the
 * account limiter off (the column issue 32 compares). BENCH_SYSTEM_ENV (JSON)
 * adds to the system's environment, e.g. '{"GATEWAY_ACCESS_LOG":"1"}' to weigh
 * one setting against its default.
 *
 * Each route line is measured in BENCH_ROUNDS turns (default 3) with its anchor (b or b-nats; c for create),
 * and its ratio is to the anchor's rate alongside: a machine whose speed drifts during the run moves both sides.
 *
 * Usage: npm run bench   (env: BENCH_SPLIT=1, BENCH_DURATION, BENCH_CONNECTIONS, BENCH_BOOKINGS, BENCH_DEFAULTS,
 * BENCH_ROUNDS, BENCH_SYSTEM_ENV)
 * Creates and drops its own database and Redis prefix (bench/lib.ts).
 * Sustained booking throughput and sync booking: bench/booking.ts (npm run bench:booking).
 */
import { Client } from "pg";
import { orderBody, warehouseBody } from "../test/helpers/fixtures";
import { client } from "../test/helpers/flow";
import { measureInsertAnchor, startGatewayAnchor } from "./anchors";
import { cpuMeter, envFromJson, natsUrl, pct, productionDefaults, split, startSystem } from "./lib";
import { alongside, type Figure } from "./turns";
import { generateLoad, loadgen, type WrkRequest } from "./wrk";

const duration = Number(process.env.BENCH_DURATION || 10);
const connections = Number(process.env.BENCH_CONNECTIONS || 50);
const bookings = Number(process.env.BENCH_BOOKINGS || 200);
const defaultsOn = process.env.BENCH_DEFAULTS !== "off";
/** Accounts whose tokens the requests use in turn. */
const ACCOUNTS = 20;
/** Orders of each account made before the reads (a list page of 50 is full). */
const READ_ORDERS = 60;

/**
 * Loads `url` with the run's load generator for `seconds` over `conns` connections, the requests rotating over
 * `list` (a body's `{{n}}` made unique per request); answers its figure (non-2xx counted apart) with the CPU the
 * processes `pids` spent per request.
 */
async function cannon(
	title: string,
	url: string,
	list: WrkRequest[],
	pids: number[],
	conns = connections,
	seconds = duration,
): Promise<Figure> {
	const cpu = cpuMeter(pids);
	const { total, bad, p50, p99 } = await generateLoad({
		url,
		connections: conns,
		durationS: seconds,
		requests: list,
	});
	const used = cpu();
	return {
		title,
		rps: (total - bad) / seconds,
		p50,
		p99,
		bad,
		total,
		cpuUs: total ? (1e6 * used) / total : 0,
	};
}

/** How many orders hold a reference matching `pattern` (SQL LIKE). */
async function countOrders(databaseUrl: string, pattern: string): Promise<number> {
	const pg = new Client({ connectionString: databaseUrl });
	await pg.connect();
	try {
		const r = await pg.query("SELECT count(*)::int AS n FROM intake.orders WHERE customer_order_no LIKE $1", [
			pattern,
		]);
		return r.rows[0].n as number;
	} finally {
		await pg.end();
	}
}

/** `n` as a percentage of `of` (e.g. "85 %"). */
function ratio(n: number, of: number): string {
	return `${((100 * n) / of).toFixed(0)} %`;
}

/**
 * Prints one figure with its ratios to the anchors given, each `[name, rate, shown]`: with `shown`, the anchor's
 * rate follows its ratio (the rate measured alongside the route, see bench/turns.ts `alongside`).
 */
function print(f: Figure, anchors: [string, number, boolean?][]): void {
	const r = anchors
		.map(
			([name, v, shown]) => `${ratio(f.rps, v).padStart(6)} of ${name}${shown ? ` (${v.toFixed(0)}/s)` : ""}`,
		)
		.join("  ");
	console.log(
		`${f.title.padEnd(34)} ${f.rps.toFixed(0).padStart(6)} req/s   p50 ${String(f.p50).padStart(4)} ms   p99 ${String(f.p99).padStart(4)} ms   CPU ${f.cpuUs.toFixed(0).padStart(4)} µs/req   ${r}${f.bad ? `   (${f.bad} non-2xx/errors)` : ""}`,
	);
}

/**
 * Rounds of a route line (BENCH_ROUNDS, default 3; bench/turns.ts `alongside`): the route and its anchor are loaded
 * in turns of BENCH_DURATION / rounds seconds each, so a machine that speeds up or slows down during the run moves
 * both sides of the ratio.
 */
const rounds = Math.max(1, Math.round(Number(process.env.BENCH_ROUNDS || 3)));

async function main(): Promise<void> {
	const production = await productionDefaults();
	const off = { LOGLEVEL: "warn", METRICS_PORT: "off", RATE_LIMIT_ACCOUNT_PER_MIN: "0" };
	const sys = await startSystem({
		...(defaultsOn ? production : off),
		...envFromJson("BENCH_SYSTEM_ENV"),
	});
	const { base, api, run } = sys;
	try {
		const whId = sys.warehouseId;
		console.log(
			`\nmode: ${sys.mode}, ${connections} connections, ${duration} s per line, ${ACCOUNTS} accounts, production defaults ${defaultsOn ? "on" : "off (access log, metrics, account limiter)"}, load ${loadgen}, node ${process.version}`,
		);
		// every account: a token, a warehouse and a few orders to read
		const accounts: {
			auth: string;
			warehouseId: number;
			orderIds: number[];
			orderNos: string[];
			/** the tracking page path of the account's booked order */
			page: string;
		}[] = [];
		for (let a = 0; a < ACCOUNTS; a++) {
			const token = await sys.tokenFor(900_001 + a);
			const c = client(base, token);
			const wh =
				a === 0
					? { status: 201, body: { data: { id: whId } } }
					: await c.post("/v1/warehouses", warehouseBody());
			if (wh.status !== 201) throw new Error(`warehouse: ${JSON.stringify(wh.body)}`);
			// a full list page (50) and more: 60 orders each, 10 at a time
			const orderIds: number[] = [];
			const orderNos: string[] = [];
			for (let k = 0; k < READ_ORDERS; k += 10) {
				const made = await Promise.all(
					Array.from({ length: 10 }, async (_, j) => {
						const no = `READ-${run}-${a}-${k + j}`;
						const r = await c.post("/v1/intake/order", orderBody(wh.body.data.id as number, no));
						if (r.status !== 201) throw new Error(`order: ${JSON.stringify(r.body)}`);
						return { id: r.body.order_id as number, no };
					}),
				);
				for (const m of made) {
					orderIds.push(m.id);
					orderNos.push(m.no);
				}
			}
			// the buyer's tracking page (issue 29): one booked order per account, its signed page link
			const booked = await c.post("/v1/shipping/book/sync", { order_id: orderIds[0], logistic_id: 1 });
			if (booked.status !== 200) throw new Error(`book/sync: ${JSON.stringify(booked.body)}`);
			const detail = await c.get(`/v1/orders/${orderIds[0]}`);
			const page = detail.body.tracking_page_url as string;
			accounts.push({
				auth: `Bearer ${token}`,
				warehouseId: wh.body.data.id as number,
				orderIds,
				orderNos,
				page,
			});
		}
		/** One GET per account and index (the path may depend on both), the accounts in turn. */
		const byToken = (
			path: (acc: (typeof accounts)[number], i: number) => string,
			n = ACCOUNTS * READ_ORDERS,
		) =>
			Array.from({ length: n }, (_, i): WrkRequest => {
				const acc = accounts[i % accounts.length];
				return {
					method: "GET",
					path: path(acc, Math.floor(i / accounts.length)),
					headers: { authorization: acc.auth },
				};
			});

		// anchors, each its own process, measured in this run
		const anchorName = split ? "b-nats" : "b";
		/** Starts a gateway anchor and warms it up; `load(seconds)` loads it as the routes are loaded. */
		const gatewayAnchor = async (title: string, verify: boolean) => {
			const anchor = await startGatewayAnchor(sys.auth, {
				...(split ? { nats: natsUrl, namespace: `${verify ? "anchor" : "floor"}-${run}` } : {}),
				verify,
			});
			const u = new URL(anchor.url);
			const list = byToken(() => u.pathname, ACCOUNTS);
			try {
				await cannon("warm-up", u.origin, list, [], 10, 2);
			} catch (err) {
				await anchor.close();
				throw err;
			}
			return {
				load: (seconds = duration) => cannon(title, u.origin, list, anchor.pids, connections, seconds),
				close: () => anchor.close(),
			};
		};
		// anchor b stays up for the whole run: every route line is measured in turns with it (see `alongside`)
		const anchorB = await gatewayAnchor(`anchor ${anchorName}`, true);
		try {
			const b = await anchorB.load();
			// the floor: the same gateway anchor without verifying the token (what moleculer-web itself costs here)
			const floorAnchor = await gatewayAnchor(`floor (${anchorName} without verifying)`, false);
			let floor: Figure;
			try {
				floor = await floorAnchor.load();
			} finally {
				await floorAnchor.close();
			}
			const c = await measureInsertAnchor(sys.databaseUrl, duration);
			print(b, []);
			print(floor, [[anchorName, b.rps]]);
			console.log(`anchor c (8 pg clients, INSERT)    ${c.toFixed(0).padStart(6)} inserts/s`);
			console.log(
				`routes: ${rounds} rounds each, in turns with ${anchorName} (or c), ratios to the anchor's rate alongside`,
			);

			// warm-up
			await cannon(
				"warm-up",
				base,
				byToken(() => "/v1/shipping/serviceable?from_pin=110001&to_pin=560001&physical_weight=0.8", ACCOUNTS),
				[],
				10,
				2,
			);
			const anchorRate = async (seconds: number) => (await anchorB.load(seconds)).rps;
			/** b's rates of the run: alone at the start, then alongside each read line. */
			const bRates = [b.rps];
			for (const [title, path] of [
				["GET /v1/pincode/{pin}", () => "/v1/pincode/560001"],
				["GET /v1/shipping/edd", () => "/v1/shipping/edd?from_pin=110001&to_pin=560001&payment_mode=cod"],
				[
					"GET /v1/shipping/serviceable",
					() =>
						"/v1/shipping/serviceable?from_pin=110001&to_pin=560001&physical_weight=0.8&order_type=1&collectable_amount=1499",
				],
				[
					"GET /v1/orders/status",
					(acc: (typeof accounts)[number], i: number) =>
						`/v1/orders/status?order_no=${acc.orderNos[i % READ_ORDERS]}`,
				],
				[
					"GET /v1/orders/{id}",
					(acc: (typeof accounts)[number], i: number) => `/v1/orders/${acc.orderIds[i % READ_ORDERS]}`,
				],
				["GET /v1/orders (page of 50)", () => "/v1/orders?limit=50"],
				// no bearer needed (the token in the path is the credential; the header is ignored); 20 pages, each
				// rendered at most every 10 s per pod (lib/notifications/track.ts), so mostly the kept HTML
				["GET /track/{token} (page)", (acc: (typeof accounts)[number]) => acc.page],
			] as const) {
				const list = byToken(path);
				const { figure, anchorRate: rate } = await alongside(
					(seconds) => cannon(title, base, list, sys.pids, connections, seconds),
					anchorRate,
					{ rounds, seconds: duration },
				);
				print(figure, [[anchorName, rate, true]]);
				bRates.push(rate);
			}

			// order create in turns with anchor c (its ratio goal), then its ratio to b's rate over the whole run: the
			// mean of b alone at the start and of b alongside each read line, so one disturbed measurement of b does
			// not make the figure
			const createList = accounts.map(
				(acc): WrkRequest => ({
					method: "POST",
					path: "/v1/intake/order",
					headers: { authorization: acc.auth, "content-type": "application/json" },
					body: JSON.stringify(orderBody(acc.warehouseId, `BENCH-${run}-{{n}}`)),
				}),
			);
			const { figure: create, anchorRate: cRate } = await alongside(
				(seconds) => cannon("POST /v1/intake/order", base, createList, sys.pids, connections, seconds),
				(seconds) => measureInsertAnchor(sys.databaseUrl, seconds),
				{ rounds, seconds: duration },
			);
			print(create, [
				["c", cRate, true],
				[anchorName, bRates.reduce((sum, r) => sum + r, 0) / bRates.length, true],
			]);
			// every answer of the line must be a new order (201), not a duplicate of an earlier turn's (200 deduped)
			const made = await countOrders(sys.databaseUrl, `BENCH-${run}-%`);
			console.log(
				`  create requests: ${create.total}, orders created: ${made}${made < create.total - create.bad ? "   (FEWER: some answers were duplicates)" : ""}`,
			);
		} finally {
			await anchorB.close();
		}

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
