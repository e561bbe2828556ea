/**
 * EDD accuracy benchmark (issue 28; docs/decisions/0106-working-days-and-edd.md; printed figures, not a test):
 * how often a shipment is delivered on or before the `edd` its quote promised, and by how many days the promise
 * misses, for the rate card's estimate and for the learned one (the lane's 80th percentile).
 *
 * The system runs as in production (bench/lib.ts: one process, in-process transport, sandbox couriers). A
 * Bengaluru warehouse (560001) ships to lanes of zones A–E with Sandbox Surface (forced); the actual transit of
 * each shipment is drawn from the stated distribution of lib/simulator/transit.ts (seeded, so runs repeat).
 *
 * Backdating (real time cannot pass): each shipment is booked now through `POST /v1/shipping/book`, but is
 * given a virtual booking instant in the past; its promise is what the quote would have answered then
 * (lib/shared/calendar.ts `estimateDelivery` with the catalog the rates service loads, lib/rates/catalog.ts
 * `loadCatalog`). The courier then pushes, signed, through `POST /v1/tracking/webhooks/sbx-surface`, a
 * picked_up scan on that instant's pickup day and a delivered scan after the drawn working days (lib/shared/calendar.ts
 * `afterTransit`), both with their own past times; the tracking fold turns them into the lane outcome rates learns from.
 *
 *   phase 1  first half, virtual instants 110–70 days before today (IST): promise = the rate card's estimate
 *   learn    rates reads `learned` (lanes with ≥ 20 delivered) only when it reloads its catalog: `rates.reload`
 *            is not reachable from outside an in-process system, so the bench waits for the next reload (the
 *            periodic one, every 5 min) until the live quote of every lane answers the learned estimate
 *   phase 2  second half, virtual instants 45–25 days before today: promise = the learned estimate (the rate card's
 *            promise for the same shipments is printed beside it)
 *
 * Usage: npm run bench:edd   (env: EDD_BENCH_N=2000 shipments, EDD_BENCH_SEED=28)
 */
import { Client } from "pg";
import type { QuoteResult, Zone } from "../lib/contracts";
import { signedPushHeaders } from "../lib/couriers/sandbox";
import { SCAN_KINDS, type WirePushScan } from "../lib/couriers/sandbox/wire";
import { closeAllPools, getSequelize } from "../lib/platform/db";
import { type CatalogSnapshot, type CourierRow, cardKey, laneKey, loadCatalog } from "../lib/rates/catalog";
import { afterTransit, estimateDelivery } from "../lib/shared/calendar";
import { IST_OFFSET_MS } from "../lib/shared/ist-date";
import { describeTransit, drawTransitDays, mulberry32, shareBeyond } from "../lib/simulator/transit";
import { orderBody, warehouseBody } from "../test/helpers/fixtures";
import { eventually } from "../test/helpers/poll";
import { type BenchSystem, benchSandboxWebhookSecret, startSystem } from "./lib";

const total = Number(process.env.EDD_BENCH_N || 2000);
const seed = Number(process.env.EDD_BENCH_SEED || 28);
const COURIER = "sbx-surface";
const ORIGIN = "560001";
const DESTINATIONS = ["560034", "570001", "400001", "110001", "302001", "226001", "781001", "190001"];
const ZONES: Zone[] = ["A", "B", "C", "D", "E"];
const DAY_MS = 86_400_000;
const secret = benchSandboxWebhookSecret();

/** A lane of the run: its destination, that pincode's directory facts and its zone (as the quote answers it). */
interface Lane {
	to: string;
	city: string;
	state: string;
	zone: Zone;
	transit: { min: number; max: number };
}

/** One delivered shipment: days are IST `YYYY-MM-DD`. */
interface Shipment {
	lane: Lane;
	awb: string;
	/** the promise of its phase (rate card in phase 1, learned in phase 2) */
	edd: string;
	/** the rate card's promise at the same instant */
	cardEdd: string;
	/** picked up on */
	pickup: string;
	delivered: string;
	scans: WirePushScan[];
}

/** A phase: its name, virtual booking window (days before today's IST midnight, from → to) and whether it promises the learned estimate. */
interface Phase {
	name: string;
	window: [number, number];
	learned: boolean;
}

/** Day number of an IST day `YYYY-MM-DD`. */
const dayNo = (day: string): number => Date.parse(`${day}T00:00:00Z`) / DAY_MS;

/** The instant `minutes` after midnight IST of `day`. */
const istAt = (day: string, minutes: number): Date =>
	new Date(dayNo(day) * DAY_MS - IST_OFFSET_MS + minutes * 60_000);

/** Runs `work(i)` for i in 0..n-1 over `width` concurrent lanes. */
async function inLanes(n: number, width: number, work: (i: number) => Promise<void>): Promise<void> {
	let next = 0;
	await Promise.all(
		Array.from({ length: Math.min(width, n) }, async () => {
			for (let i = next++; i < n; i = next++) await work(i);
		}),
	);
}

/** The live quote of Sandbox Surface on lane `ORIGIN → to` (`GET /v1/shipping/serviceable`, 0.8 kg prepaid). */
async function liveQuote(
	sys: BenchSystem,
	to: string,
	courier: CourierRow,
): Promise<QuoteResult["data"][number]> {
	const r = await sys.api.get<QuoteResult>(
		`/v1/shipping/serviceable?from_pin=${ORIGIN}&to_pin=${to}&physical_weight=0.8`,
	);
	const row = r.body?.data?.find((q) => q.logistic_id === courier.logistic_id);
	if (r.status !== 200 || !row) throw new Error(`serviceable ${to}: ${r.status} ${JSON.stringify(r.body)}`);
	return row;
}

/** The state of `pin` in the pincode directory (`GET /v1/pincode/{pin}`), and its city. */
async function pincode(sys: BenchSystem, pin: string): Promise<{ city: string; state: string }> {
	const r = await sys.api.get<{ found: boolean; city: string; state: string }>(`/v1/pincode/${pin}`);
	if (r.status !== 200 || !r.body.found)
		throw new Error(`pincode ${pin}: ${r.status} ${JSON.stringify(r.body)}`);
	return r.body;
}

/** A signed push of `scans` as the sandbox courier sends it. */
async function push(sys: BenchSystem, scans: WirePushScan[]): Promise<void> {
	const raw = JSON.stringify(scans);
	const res = await fetch(`${sys.base}/v1/tracking/webhooks/${COURIER}`, {
		method: "POST",
		headers: { "content-type": "application/json", ...signedPushHeaders(raw, secret) },
		body: raw,
	});
	const body = (await res.json()) as { accepted?: number; error?: string };
	if (res.status !== 200 || body.accepted !== scans.length)
		throw new Error(`push: ${res.status} ${JSON.stringify(body)}`);
}

/** One Delhivery-shaped pushed scan of `awb` at `at`. */
function scan(awb: string, status: "picked_up" | "delivered", at: Date, location: string): WirePushScan {
	const k = SCAN_KINDS[status];
	return {
		Shipment: {
			AWB: awb,
			Status: {
				Status: k.Scan,
				StatusCode: k.StatusCode,
				StatusType: k.ScanType,
				StatusLocation: location,
				StatusDateTime: at.toISOString(),
				Instructions: "",
			},
		},
	};
}

/** The run's fixed context. */
interface Run {
	sys: BenchSystem;
	db: Client;
	warehouseId: number;
	courier: CourierRow;
	fromState: string;
	lanes: Lane[];
	rng: () => number;
}

/**
 * One phase of `n` shipments (`offset` numbers their orders): orders created and booked (forced courier) over
 * HTTP, each given a virtual booking instant in `phase.window` and its promise as of then (`snap.learned`
 * when `phase.learned`), its scans pushed, and its lane outcome awaited in rates. Answers the delivered shipments.
 */
async function runPhase(
	run: Run,
	phase: Phase,
	n: number,
	offset: number,
	snap: CatalogSnapshot,
): Promise<Shipment[]> {
	const { sys, db, courier, lanes } = run;
	const t0 = Date.now();
	const orderIds: number[] = new Array(n);
	await inLanes(n, 20, async (i) => {
		const lane = lanes[(offset + i) % lanes.length];
		const body = orderBody(run.warehouseId, `EDD-${sys.run}-${offset + i}`) as { receiver: object };
		body.receiver = { ...body.receiver, city: lane.city, state: lane.state, pincode: lane.to };
		const o = await sys.api.post<{ order_id: number }>("/v1/intake/order", body);
		if (o.status !== 201) throw new Error(`order: ${o.status} ${JSON.stringify(o.body)}`);
		orderIds[i] = o.body.order_id;
		const b = await sys.api.post("/v1/shipping/book", {
			order_id: o.body.order_id,
			logistic_id: courier.logistic_id,
		});
		if (b.status !== 202) throw new Error(`book: ${b.status} ${JSON.stringify(b.body)}`);
	});
	await eventually(
		async () => {
			const { rows } = await db.query<{ n: string }>(
				"SELECT count(*) AS n FROM booking.attempts WHERE order_id = ANY($1::bigint[]) AND state IN ('queued', 'claimed')",
				[orderIds],
			);
			return Number(rows[0].n) === 0;
		},
		{ what: "every booking settled", ms: 300_000, every: 500 },
	);
	const { rows } = await db.query<{ order_id: string; awb_number: string }>(
		"SELECT order_id, awb_number FROM booking.attempts WHERE order_id = ANY($1::bigint[]) AND state = 'booked'",
		[orderIds],
	);
	const awbOf = new Map(rows.map((r) => [Number(r.order_id), r.awb_number]));
	const now = Date.now();
	// the windows count back from today's IST midnight: runs on the same day draw the same dates
	const anchor = Math.floor((now + IST_OFFSET_MS) / DAY_MS) * DAY_MS - IST_OFFSET_MS;
	const ships: Shipment[] = [];
	for (let i = 0; i < n; i++) {
		const lane = lanes[(offset + i) % lanes.length];
		// every draw is made whether or not the booking succeeded: the same seed draws the same shipments
		const [from, to] = phase.window;
		const bookedAt = new Date(anchor - (from - run.rng() * (from - to)) * DAY_MS);
		const days = drawTransitDays(lane.zone, run.rng);
		const pickupMin = courier.pickup.cutoff_minutes + 60 + Math.floor(run.rng() * 240);
		const deliveryMin = 600 + Math.floor(run.rng() * 600);
		const awb = awbOf.get(orderIds[i]);
		if (!awb) continue;
		const learned = phase.learned
			? snap.learned.get(laneKey(courier.logistic_id, ORIGIN, lane.to))
			: undefined;
		const card = estimateDelivery(courier.pickup, lane.transit, run.fromState, lane.state, bookedAt);
		const est = estimateDelivery(courier.pickup, lane.transit, run.fromState, lane.state, bookedAt, learned);
		const delivered = afterTransit(card.pickup_date, days, lane.state);
		const deliveredAt = istAt(delivered, deliveryMin);
		if (deliveredAt.getTime() >= now)
			throw new Error(`a delivery in the future (${delivered}): widen the window`);
		ships.push({
			lane,
			awb,
			edd: est.edd,
			cardEdd: card.edd,
			pickup: card.pickup_date,
			delivered,
			scans: [
				scan(awb, "picked_up", istAt(card.pickup_date, pickupMin), "Bengaluru"),
				scan(awb, "delivered", deliveredAt, lane.city),
			],
		});
	}
	const scans = ships.flatMap((s) => s.scans);
	await inLanes(Math.ceil(scans.length / 100), 4, (i) => push(sys, scans.slice(i * 100, i * 100 + 100)));
	await eventually(
		async () => {
			const { rows: o } = await db.query<{ n: string }>(
				`SELECT count(*) AS n FROM rates.lane_outcomes lo JOIN booking.attempts a USING (attempt_id)
				 WHERE a.order_id = ANY($1::bigint[]) AND lo.outcome = 'delivered'`,
				[orderIds],
			);
			return Number(o[0].n) === ships.length;
		},
		{ what: "every lane outcome recorded in rates", ms: 180_000, every: 250 },
	);
	console.log(
		`${phase.name}: ${n} orders created and booked, ${ships.length} booked and delivered through the tracking` +
			` pipeline (${scans.length} scans pushed), outcomes recorded in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
	);
	return ships;
}

/**
 * The 80th percentile (PostgreSQL `percentile_cont(0.8)`: linear between ranks) of the IST calendar days from
 * pickup day to delivery day of `ships`, rounded up; NaN when none.
 */
function p80Days(ships: Shipment[]): number {
	const d = ships.map((s) => dayNo(s.delivered) - dayNo(s.pickup)).sort((a, b) => a - b);
	const pos = 0.8 * (d.length - 1);
	const lo = Math.floor(pos);
	return Math.ceil(d[lo] + (pos - lo) * ((d[lo + 1] ?? d[lo]) - d[lo]));
}

/** Counts of an estimate over some shipments: on or before the EDD, and the sum of |delivery − EDD| days. */
interface Tally {
	n: number;
	onTime: number;
	absErr: number;
}

/** Per zone and over all (`all`), the tally of promise `eddOf` over `ships`. */
function tally(ships: Shipment[], eddOf: (s: Shipment) => string): Map<string, Tally> {
	const out = new Map<string, Tally>();
	for (const s of ships) {
		const err = dayNo(s.delivered) - dayNo(eddOf(s));
		for (const key of [s.lane.zone, "all"]) {
			const t = out.get(key) ?? { n: 0, onTime: 0, absErr: 0 };
			t.n++;
			t.onTime += err <= 0 ? 1 : 0;
			t.absErr += Math.abs(err);
			out.set(key, t);
		}
	}
	return out;
}

/** `n  on/before %  MAE` of a tally, fixed width. */
const cells = (t: Tally | undefined): string =>
	t
		? `${String(t.n).padStart(5)} ${((t.onTime * 100) / t.n).toFixed(1).padStart(8)} % ${(t.absErr / t.n).toFixed(2).padStart(6)}`
		: `${"-".padStart(5)} ${"-".padStart(10)} ${"-".padStart(6)}`;

/** Prints the results table: per zone and overall, per estimate. */
function report(phase1: Shipment[], phase2: Shipment[], lanes: Lane[]): void {
	const cols = [tally(phase1, (s) => s.edd), tally(phase2, (s) => s.edd), tally(phase2, (s) => s.cardEdd)];
	const head = (t: string) => t.padEnd(28);
	console.log(
		`\n${"".padEnd(11)}${head("rate card (phase 1)")}${head("learned p80 (phase 2)")}rate card, phase-2 shipments`,
	);
	console.log(`zone card   ${"    n  on/before  MAE d   ".repeat(3)}`);
	for (const key of [...ZONES, "all"]) {
		const lane = lanes.find((l) => l.zone === key);
		if (key !== "all" && !lane) continue;
		const card = lane ? `${lane.transit.min}-${lane.transit.max}` : "";
		console.log(`${key.padEnd(5)}${card.padEnd(6)}${cols.map((c) => cells(c.get(key)).padEnd(28)).join("")}`);
	}
	console.log(
		"on/before = share delivered on or before the promised EDD; MAE d = mean |delivery day − EDD| in calendar days",
	);
}

async function main(): Promise<void> {
	const half = Math.floor(total / 2);
	const sys = await startSystem({ NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS });
	const db = new Client({ connectionString: sys.databaseUrl });
	const seq = getSequelize(sys.databaseUrl);
	const started = Date.now();
	try {
		await db.connect();
		const origin = await pincode(sys, ORIGIN);
		const wh = await sys.api.post<{ data: { id: number } }>(
			"/v1/warehouses",
			warehouseBody({ warehouse_name: "EDD bench", city: "Bengaluru", state: origin.state, pincode: ORIGIN }),
		);
		if (wh.status !== 201) throw new Error(`warehouse: ${JSON.stringify(wh.body)}`);
		const snap = await loadCatalog(seq);
		const courier = snap.couriers.find((c) => c.code === COURIER);
		if (!courier) throw new Error(`no courier ${COURIER} in the catalog`);
		const lanes: Lane[] = [];
		let agree = 0;
		for (const to of DESTINATIONS) {
			const [pin, q] = await Promise.all([pincode(sys, to), liveQuote(sys, to, courier)]);
			const transit = snap.transit.get(cardKey(courier.logistic_id, q.zone, "forward"));
			if (!transit) throw new Error(`no transit days for zone ${q.zone}`);
			lanes.push({ to, city: pin.city, state: pin.state, zone: q.zone, transit });
			if (q.edd === estimateDelivery(courier.pickup, transit, origin.state, pin.state, new Date()).edd)
				agree++;
		}
		const run: Run = {
			sys,
			db,
			warehouseId: wh.body.data.id,
			courier,
			fromState: origin.state,
			lanes,
			rng: mulberry32(seed),
		};
		console.log(
			`\nEDD accuracy: N ${total} (${half} + ${total - half}), seed ${seed}, ${courier.logistic_name} (forced), ${sys.mode}, node ${process.version}`,
		);
		console.log(
			`lanes from ${ORIGIN} (${origin.state}): ${lanes.map((l) => `${l.to} ${l.city} (${l.zone})`).join(", ")}; shipments round-robin`,
		);
		console.log("actual transit drawn (lib/simulator/transit.ts; working days from pickup to delivery):");
		for (const z of ZONES) {
			const l = lanes.find((x) => x.zone === z);
			if (!l) continue;
			const late = (shareBeyond(z, l.transit.max) * 100).toFixed(0);
			console.log(
				`  ${z} (card ${l.transit.min}-${l.transit.max}, ${late} % beyond its max): ${describeTransit(z)}`,
			);
		}
		console.log(
			"backdated: booked now, but each shipment gets a virtual booking instant (phase 1: 110-70 days before today, phase 2:\n" +
				"  45-25 days before); its EDD is estimateDelivery as of that instant with the catalog rates loads; picked_up and\n" +
				"  delivered scans carry past times (pickup day from cut-off +1 h to +5 h, delivery 10:00-20:00 IST)",
		);
		console.log(
			`check: live quote edd = the bench's estimate as of now on ${agree}/${lanes.length} lanes (rate card)`,
		);

		const phase1 = await runPhase(
			run,
			{ name: "phase 1 (rate card)", window: [110, 70], learned: false },
			half,
			0,
			snap,
		);
		const waitFrom = Date.now();
		const learnedSnap = await loadCatalog(seq);
		const expectNow = (l: Lane) =>
			estimateDelivery(
				courier.pickup,
				l.transit,
				origin.state,
				l.state,
				new Date(),
				learnedSnap.learned.get(laneKey(courier.logistic_id, ORIGIN, l.to)),
			).edd;
		const live = await eventually(
			async () => {
				const quotes = await Promise.all(lanes.map((l) => liveQuote(sys, l.to, courier)));
				return lanes.every((l, i) => quotes[i].edd === expectNow(l)) ? quotes : null;
			},
			{ what: "the learned estimate in every lane's live quote", ms: 11 * 60_000, every: 5_000 },
		);
		console.log(
			`learned: the live quotes answered the learned estimate ${((Date.now() - waitFrom) / 1000).toFixed(0)} s after phase 1` +
				" (at rates' next catalog reload). Per lane: learned = rates' p80 of fractional pickup->delivery scan days," +
				" rounded up; beside it the p80 of whole IST calendar days; edds as of now:",
		);
		for (const [i, l] of lanes.entries()) {
			const p80 = learnedSnap.learned.get(laneKey(courier.logistic_id, ORIGIN, l.to));
			const card = estimateDelivery(courier.pickup, l.transit, origin.state, l.state, new Date()).edd;
			console.log(
				`  ${ORIGIN}->${l.to} (${l.zone}): learned ${p80 ?? "-"} d (IST day differences: p80 ${p80Days(phase1.filter((s) => s.lane === l))} d);` +
					` card edd ${card}, live quote edd ${live[i].edd}${live[i].edd === card ? " (same day)" : ""}`,
			);
		}
		const phase2 = await runPhase(
			run,
			{ name: "phase 2 (learned)", window: [45, 25], learned: true },
			total - half,
			half,
			learnedSnap,
		);
		report(phase1, phase2, lanes);
		console.log(`run time ${((Date.now() - started) / 1000).toFixed(0)} s`);
	} finally {
		await closeAllPools();
		await db.end();
		await sys.close();
	}
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
