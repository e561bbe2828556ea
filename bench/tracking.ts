/**
 * Tracking benchmark (issue 7; printed figures, not a test): scans folded into
 * shipment statuses per second, the system started as in production
 * (bench/lib.ts: one process, or split over NATS with BENCH_SPLIT=1).
 *
 * Setup: BENCH_SHIPMENTS orders created over HTTP, their shipments seeded as
 * booked in `booking.attempts` (booking them through the courier would only
 * measure booking); each shipment gets BENCH_SCANS scans of a realistic life
 * (the courier's Manifested scan, read as booked; pickup scheduled, picked up, in-transit hub scans, out for
 * delivery, an undelivered attempt, out for delivery again, delivered; every
 * fifth shipment returns to origin instead), 10 % of them re-sent, all
 * shuffled across shipments (late and out-of-order arrivals).
 *
 *   push, batched   POST /v1/tracking/webhooks/sbx-express, signed, bodies of
 *                   BENCH_PUSH_BATCH scans (Delhivery's push takes an array),
 *                   BENCH_CONNECTIONS concurrent clients
 *   push, single    the same with one scan per request (BENCH_SINGLE shipments)
 *   poll            the sandbox courier holds the scans (seeded into its own
 *                   tables); the shipments are made due and the poller tick
 *                   (BOOKING_TRACK_MS 250 here) asks 50 AWBs per track call
 *
 * Each phase prints scans/s (accepted scans over the phase's wall time),
 * status changes applied, request p50/p99 for the pushes, and checks the
 * result against the expected final statuses and distinct scan count; the
 * outbox drain (order updates acknowledged by intake, lane outcomes by rates)
 * is timed after the pushes. Target (issue 7): ≥ 5,000 scans/s folded.
 *
 * Usage: npm run bench:tracking   (env: BENCH_SPLIT=1, BENCH_SHIPMENTS=3000, BENCH_SCANS=12,
 *   BENCH_PUSH_BATCH=100, BENCH_CONNECTIONS=8, BENCH_SINGLE=300, BENCH_POLL=3000, BOOKING_* passed through)
 */
import { Client } from "pg";
import { signedPushHeaders } from "../lib/couriers/sandbox";
import { type SandboxScanStatus, SCAN_KINDS, type WirePushScan } from "../lib/couriers/sandbox/wire";
import { orderBody } from "../test/helpers/fixtures";
import { type BenchSystem, benchSandboxWebhookSecret, pct, startSystem } from "./lib";

const shipments = Number(process.env.BENCH_SHIPMENTS || 3000);
const scansPer = Math.max(8, Number(process.env.BENCH_SCANS || 12));
const pushBatch = Number(process.env.BENCH_PUSH_BATCH || 100);
const connections = Number(process.env.BENCH_CONNECTIONS || 8);
const single = Number(process.env.BENCH_SINGLE ?? 300);
const pollCount = Number(process.env.BENCH_POLL ?? 3000);
const secret = benchSandboxWebhookSecret();

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

/** One scan of a shipment's life. */
interface LifeScan {
	awb: string;
	status: SandboxScanStatus;
	/** ISO UTC */
	at: string;
	location: string;
	remarks: string;
}

/** The life of shipment `awb` booked at `t0`: `n` scans, oldest first; RTO when `rto`. */
function lifeOf(awb: string, t0: number, n: number, rto: boolean): LifeScan[] {
	const head: SandboxScanStatus[] = ["manifested", "pickup_scheduled", "picked_up"];
	const tail: SandboxScanStatus[] = rto
		? ["out_for_delivery", "undelivered", "rto_initiated", "rto_in_transit", "rto_delivered"]
		: ["out_for_delivery", "undelivered", "out_for_delivery", "delivered"];
	const hubs = Math.max(1, n - head.length - tail.length);
	const life: SandboxScanStatus[] = [...head, ...Array<SandboxScanStatus>(hubs).fill("in_transit"), ...tail];
	return life.map((status, i) => ({
		awb,
		status,
		at: new Date(t0 + (i + 1) * 47 * 60_000).toISOString(),
		location: status === "in_transit" ? `Hub ${i}` : "Mumbai",
		remarks: status === "undelivered" ? "Consignee not available" : "",
	}));
}

/** Delhivery-shaped push entries of `scans`. */
function wire(scans: LifeScan[]): WirePushScan[] {
	return scans.map((s) => {
		const k = SCAN_KINDS[s.status];
		return {
			Shipment: {
				AWB: s.awb,
				Status: {
					Status: k.Scan,
					StatusCode: k.StatusCode,
					StatusType: k.ScanType,
					StatusLocation: s.location,
					StatusDateTime: s.at,
					Instructions: s.remarks,
				},
			},
		};
	});
}

/** In-place Fisher–Yates shuffle. */
function shuffle<T>(a: T[]): T[] {
	for (let i = a.length - 1; i > 0; i--) {
		const j = Math.floor(Math.random() * (i + 1));
		[a[i], a[j]] = [a[j], a[i]];
	}
	return a;
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

/** Seeds booked shipments of `orderIds` at courier `logistic_id` (AWB `BT<order_id>`), not due for polling. */
async function seedShipments(
	db: Client,
	orderIds: number[],
	logistic_id: number,
): Promise<Map<string, number>> {
	const { rows } = await db.query<{ awb_number: string; t0: string }>(
		`INSERT INTO booking.attempts (order_id, sender_id, logistic_id, courier_name, mode, state, awb_number, booked_at,
		   settled_at, shipment_status, shipment_status_at, from_pin, to_pin, charges)
		 SELECT o, 900001, $2, 'Sandbox Express', 'forced', 'booked', 'BT' || o, now() - interval '3 days',
		   now() - interval '3 days', 'booked', now() - interval '3 days', '110001', '560001', NULL
		 FROM unnest($1::bigint[]) AS o
		 RETURNING awb_number, (extract(epoch FROM booked_at) * 1000)::bigint AS t0`,
		[orderIds, logistic_id],
	);
	return new Map(rows.map((r) => [r.awb_number, Number(r.t0)]));
}

/** The lives of `awbs` (booked at their t0), every fifth one an RTO. */
function livesOf(awbs: Map<string, number>): Map<string, LifeScan[]> {
	let i = 0;
	const out = new Map<string, LifeScan[]>();
	for (const [awb, t0] of awbs) out.set(awb, lifeOf(awb, t0, scansPer, i++ % 5 === 4));
	return out;
}

/** The shuffled arrivals of `lives` with 10 % of the scans re-sent. */
function arrivalsOf(lives: Map<string, LifeScan[]>): LifeScan[] {
	const all = [...lives.values()].flat();
	const resent = all.filter(() => Math.random() < 0.1);
	return shuffle([...all, ...resent]);
}

/** Checks the fold of `lives`: final statuses, distinct scans stored; prints the verdict. */
async function check(db: Client, lives: Map<string, LifeScan[]>): Promise<boolean> {
	const awbs = [...lives.keys()];
	const { rows } = await db.query<{ awb_number: string; shipment_status: string; n: string }>(
		`SELECT a.awb_number, a.shipment_status, (SELECT count(*) FROM booking.scans s WHERE s.attempt_id = a.attempt_id) AS n
		 FROM booking.attempts a WHERE a.awb_number = ANY($1::text[])`,
		[awbs],
	);
	let bad = 0;
	for (const r of rows) {
		const life = lives.get(r.awb_number) ?? [];
		if (r.shipment_status !== life.at(-1)?.status || Number(r.n) !== life.length) bad++;
	}
	console.log(
		`  check: ${rows.length - bad}/${awbs.length} shipments at their final status with every distinct scan stored once`,
	);
	return bad === 0 && rows.length === awbs.length;
}

/** `ms` figures as `p50 … ms   p99 … ms`. */
function figures(ms: number[]): string {
	const s = [...ms].sort((a, b) => a - b);
	return `p50 ${pct(s, 50)} ms   p99 ${pct(s, 99)} ms   max ${s.at(-1)} ms`;
}

/** Pushes `arrivals` in signed bodies of `batch` scans over `connections` clients; prints and answers scans/s. */
async function pushPhase(
	sys: BenchSystem,
	title: string,
	arrivals: LifeScan[],
	batch: number,
): Promise<number> {
	const bodies: string[] = [];
	for (let i = 0; i < arrivals.length; i += batch)
		bodies.push(JSON.stringify(wire(arrivals.slice(i, i + batch))));
	const ms: number[] = [];
	let accepted = 0;
	let applied = 0;
	const errors = new Map<string, number>();
	const t0 = Date.now();
	await lanes(bodies.length, connections, async (i) => {
		const raw = bodies[i];
		const sent = Date.now();
		const res = await fetch(`${sys.base}/v1/tracking/webhooks/sbx-express`, {
			method: "POST",
			headers: { "content-type": "application/json", ...signedPushHeaders(raw, secret) },
			body: raw,
		});
		const body = (await res.json()) as { accepted?: number; applied?: number; error?: string };
		ms.push(Date.now() - sent);
		if (res.status !== 200) {
			errors.set(`${res.status} ${body.error}`, (errors.get(`${res.status} ${body.error}`) ?? 0) + 1);
			return;
		}
		accepted += body.accepted ?? 0;
		applied += body.applied ?? 0;
	});
	const s = (Date.now() - t0) / 1000;
	const perS = accepted / s;
	console.log(
		`${title}: ${accepted} scans in ${bodies.length} requests (${batch}/request, ${connections} clients) in ${s.toFixed(2)} s` +
			` = ${perS.toFixed(0)} scans/s, ${(bodies.length / s).toFixed(0)} req/s; ${applied} status changes applied;` +
			` request ${figures(ms)}${errors.size ? `   errors ${JSON.stringify(Object.fromEntries(errors))}` : ""}`,
	);
	return perS;
}

/** Waits until the outbox holds no undelivered row; prints how long it took. */
async function drain(db: Client, since: number): Promise<void> {
	for (;;) {
		const { rows } = await db.query<{ n: string }>(
			"SELECT count(*) AS n FROM booking.outbox WHERE delivered_at IS NULL",
		);
		if (Number(rows[0].n) === 0) break;
		if (Date.now() - since > 180_000) {
			console.log(`  outbox: ${rows[0].n} rows still undelivered after 180 s`);
			return;
		}
		await sleep(100);
	}
	const { rows } = await db.query<{ kinds: string }>(
		"SELECT string_agg(kind || ' ' || n, ', ') AS kinds FROM (SELECT kind, count(*) AS n FROM booking.outbox GROUP BY kind) k",
	);
	console.log(
		`  outbox drained ${((Date.now() - since) / 1000).toFixed(2)} s after the phase started (${rows[0].kinds})`,
	);
}

/** Seeds the sandbox courier's own packages and scans for `lives` (what its track API answers). */
async function seedCourier(
	db: Client,
	lives: Map<string, LifeScan[]>,
	attempts: Map<string, number>,
): Promise<void> {
	const awbs = [...lives.keys()];
	await db.query(
		`INSERT INTO simulator.packages (courier_code, refnum, waybill, sort_code, client_order_no, pickup_location, payment_mode, shipment)
		 SELECT 'sbx-express', r, w, 'BOM/400', NULL, 'bench', 'Prepaid', '{}'::jsonb
		 FROM unnest($1::text[], $2::text[]) AS x(w, r)`,
		[awbs, awbs.map((a) => String(attempts.get(a)))],
	);
	const all = [...lives.values()].flat();
	await db.query(
		`INSERT INTO simulator.scans (waybill, code, location, instructions, at)
		 SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[])`,
		[
			all.map((s) => s.awb),
			all.map((s) => s.status),
			all.map((s) => s.location),
			all.map((s) => s.remarks),
			all.map((s) => s.at),
		],
	);
}

async function main(): Promise<void> {
	const booking = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("BOOKING_")));
	const sys = await startSystem({
		BOOKING_TRACK_MS: "250",
		...booking,
		NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS,
	});
	const db = new Client({ connectionString: sys.databaseUrl });
	try {
		await db.connect();
		const { rows: c } = await db.query<{ logistic_id: number }>(
			"SELECT logistic_id FROM rates.couriers WHERE code = 'sbx-express' ORDER BY logistic_id LIMIT 1",
		);
		const logistic = Number(c[0].logistic_id);
		console.log(
			`\nmode: ${sys.mode}, ${shipments} shipments × ${scansPer} scans (+10 % re-sent, shuffled), node ${process.version}`,
		);
		const total = shipments + single + pollCount;
		const ids = await createOrders(sys, total, "TRK");
		const pushIds = ids.slice(0, shipments);
		const singleIds = ids.slice(shipments, shipments + single);
		const pollIds = ids.slice(shipments + single);

		// warm-up: a few bodies through every hop
		const warmIds = await createOrders(sys, 20, "WARM");
		const warm = livesOf(await seedShipments(db, warmIds, logistic));
		await pushPhase(sys, "warm-up", arrivalsOf(warm), 20);

		const lives = livesOf(await seedShipments(db, pushIds, logistic));
		const t0 = Date.now();
		const rate = await pushPhase(sys, "push, batched", arrivalsOf(lives), pushBatch);
		const okPush = await check(db, lives);
		await drain(db, t0);

		if (single > 0) {
			const one = livesOf(await seedShipments(db, singleIds, logistic));
			const t1 = Date.now();
			await pushPhase(sys, "push, one scan per request", arrivalsOf(one), 1);
			await check(db, one);
			await drain(db, t1);
		}

		if (pollCount > 0) {
			const seeded = await seedShipments(db, pollIds, logistic);
			const polled = livesOf(seeded);
			const { rows: att } = await db.query<{ awb_number: string; attempt_id: string }>(
				"SELECT awb_number, attempt_id FROM booking.attempts WHERE awb_number = ANY($1::text[])",
				[[...seeded.keys()]],
			);
			await seedCourier(db, polled, new Map(att.map((r) => [r.awb_number, Number(r.attempt_id)])));
			const scans = [...polled.values()].reduce((n, l) => n + l.length, 0);
			const t2 = Date.now();
			await db.query("UPDATE booking.attempts SET next_track_at = now() WHERE awb_number = ANY($1::text[])", [
				[...seeded.keys()],
			]);
			for (;;) {
				const { rows } = await db.query<{ n: string }>(
					"SELECT count(*) AS n FROM booking.attempts WHERE awb_number = ANY($1::text[]) AND next_track_at <= now()",
					[[...seeded.keys()]],
				);
				const { rows: st } = await db.query<{ n: string }>(
					"SELECT count(*) AS n FROM booking.scans s JOIN booking.attempts a USING (attempt_id) WHERE a.awb_number = ANY($1::text[])",
					[[...seeded.keys()]],
				);
				if ((Number(rows[0].n) === 0 && Number(st[0].n) === scans) || Date.now() - t2 > 120_000) break;
				await sleep(50);
			}
			const s = (Date.now() - t2) / 1000;
			console.log(
				`poll: ${pollCount} due shipments, ${scans} scans (50 AWBs per track call) folded in ${s.toFixed(2)} s = ${(scans / s).toFixed(0)} scans/s (incl. the sandbox courier's own work, up to one 250 ms tick of wait)`,
			);
			await check(db, polled);
		}
		console.log(`  target >= 5000 scans/s (push, batched): ${rate >= 5000 && okPush ? "met" : "MISSED"}`);
	} finally {
		await db.end();
		await sys.close();
	}
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
