/**
 * Integration: exactly-once booking under `kill -9` (issue 6,
 * docs/ARCHITECTURE.md §5).
 *
 * The system split into two processes as `npm start` runs them over real NATS,
 * PostgreSQL and Redis: the core (gateway, documents, pincode, rates,
 * warehouses, intake and the sandbox courier simulator) and the booking
 * service alone. ~40 orders are booked through the gateway while the booking
 * process is killed with SIGKILL at least 20 times, each time in a chosen
 * phase, and restarted:
 *
 * - `before`: right after the 202s (attempt committed, courier not called);
 * - `during`: an attempt claimed by this process, no AWB at the courier yet
 *   (the simulator holds every create `SANDBOX_COURIER_DELAY_MS`);
 * - `after`: the courier has booked the reference, the attempt is not yet
 *   committed booked (orders named `SIMULATE_TIMEOUT` keep the answer in flight);
 * - `committed`: booked, the order update not yet delivered to intake.
 *
 * Then every attempt must settle and the invariants hold, read from the
 * database and from the simulator (`GET /references`): every order booked
 * once or failed (none left `booking_in_progress`), at most one live AWB per
 * order at the courier (exactly one for a booked order, none for a failed
 * one), intake's AWB = the booked attempt's, and the ledger balanced (one
 * charge = the quoted total per booked attempt, none for failed ones,
 * charges − refunds = booked totals).
 */
import { strict as assert } from "node:assert";
import type { Server } from "node:http";
import { Client } from "pg";
import type { SimulatorReference } from "../../lib/contracts";
import { newSender } from "../helpers/broker";
import { freshRef, orderBody, warehouseBody } from "../helpers/fixtures";
import { client } from "../helpers/flow";
import { eventually } from "../helpers/poll";
import { childSystem, type StartedProcess, startProcess, waitReady } from "../helpers/processes";

/** Kills of the booking process (the issue asks for at least 20). */
const KILLS = 20;
/** Orders booked, two per kill cycle. */
const ORDERS = 40;
const PHASES = ["before", "during", "after", "committed"] as const;
type Phase = (typeof PHASES)[number];

/** Courier timings of the run (ms): every create held 250 ms; a SIMULATE_TIMEOUT answer 1.5 s, the adapter gives up after 0.8 s. */
const COURIER_DELAY_MS = 250;
const COURIER_HANG_MS = 1500;
const COURIER_TIMEOUT_MS = 800;

describe("integration: exactly-once booking under kill -9 of the booking process", function () {
	this.timeout(240_000);
	let jwks: Server;
	let core: StartedProcess;
	let booking: StartedProcess | undefined;
	let bookingEnv: Record<string, string | undefined> = {};
	let base = "";
	let simBase = "";
	let db: Client;
	let api: ReturnType<typeof client>;
	let bearer = "";
	let sender = 0;
	let warehouseId = 0;
	/** The forced courier: the top quote of the lane (forced, so a refusal never falls over to another courier). */
	let logisticId = 0;

	/** Starts a booking process and waits until it books (see {@link bookingAnswers}). */
	async function startBooking(): Promise<StartedProcess> {
		const p = startProcess(bookingEnv);
		await bookingAnswers(p);
		return p;
	}

	/**
	 * Polls until `booking.book` answers through the gateway and reaches intake:
	 * an order that is not the caller's answers 403.
	 */
	async function bookingAnswers(p: StartedProcess): Promise<void> {
		await eventually(
			async () => {
				if (p.child.exitCode !== null) assert.fail(`booking exited early:\n${p.output().slice(-3000)}`);
				const r = await fetch(`${base}/v1/shipping/book`, {
					method: "POST",
					headers: { authorization: bearer, "content-type": "application/json" },
					body: JSON.stringify({ order_id: 999_999_999 }),
					signal: AbortSignal.timeout(1500),
				}).catch(() => null);
				return r?.status === 403;
			},
			{ what: "the booking process to answer", ms: 60_000, every: 100 },
		);
	}

	/** Database clock now (attempt timestamps are the database's). */
	async function dbNow(): Promise<Date> {
		const { rows } = await db.query<{ now: Date }>("SELECT clock_timestamp() AS now");
		return rows[0].now;
	}

	/** Whether the booking process is, right now, in `phase` for an attempt it claimed (or created) since `since`. */
	async function inPhase(phase: Phase, since: Date, attempts: number[]): Promise<boolean> {
		const held = `EXISTS (SELECT 1 FROM simulator.packages p WHERE p.refnum = a.attempt_id::text)`;
		const sql: Record<Phase, string> = {
			before: `SELECT 1 FROM booking.attempts a WHERE a.attempt_id = ANY($2::bigint[]) AND a.state IN ('queued', 'claimed') AND NOT ${held} AND $1::timestamptz IS NOT NULL`,
			during: `SELECT 1 FROM booking.attempts a WHERE a.state = 'claimed' AND a.claimed_at >= $1 AND NOT ${held} AND $2::bigint[] IS NOT NULL`,
			after: `SELECT 1 FROM booking.attempts a WHERE a.state = 'claimed' AND a.claimed_at >= $1 AND ${held} AND $2::bigint[] IS NOT NULL`,
			committed: `SELECT 1 FROM booking.attempts a JOIN booking.outbox o ON o.kind = 'order_update'
				AND (o.payload->>'attempt_id')::bigint = a.attempt_id AND (o.payload->>'seq')::int = 2 AND o.delivered_at IS NULL
				WHERE a.state = 'booked' AND a.booked_at >= $1 AND $2::bigint[] IS NOT NULL`,
		};
		const { rowCount } = await db.query(`${sql[phase]} LIMIT 1`, [since, attempts]);
		return (rowCount ?? 0) > 0;
	}

	before(async () => {
		// warn: a failed assertion prints both processes' last lines (timeouts, disconnects)
		const sys = await childSystem("crash", { labelLinkSecret: "crash-secret", logLevel: "warn" });
		({ jwks, base } = sys);
		const { idp } = sys;
		simBase = `http://127.0.0.1:${sys.courierPort}`;
		const common = sys.env;
		bookingEnv = {
			...common,
			SERVICES: "booking",
			NODEID: "crash-booking",
			SANDBOX_COURIER_TIMEOUT_MS: String(COURIER_TIMEOUT_MS),
			BOOKING_CONCURRENCY: "8",
			BOOKING_RELAY_MS: "300",
			BOOKING_RELAY_BACKOFF_MS: "200",
			BOOKING_BACKOFF_MS: "200",
			BOOKING_JOB_ATTEMPTS: "8",
			BOOKING_SWEEP_MS: "500",
			BOOKING_SWEEP_AFTER_MS: "1000",
			BOOKING_CLAIM_STALE_MS: "3000",
			BOOKING_UNSETTLED_MS: "20000",
			BOOKING_LOCK_MS: "4000",
			BOOKING_CALL_TIMEOUT_MS: "3000",
		};
		core = startProcess({
			...common,
			SERVICES:
				"gateway,documents,pincode,rates,warehouses,intake,billing,ndr,webhooks,notifications,simulator",
			NODEID: "crash-core",
			SANDBOX_COURIER_DELAY_MS: String(COURIER_DELAY_MS),
			SANDBOX_COURIER_HANG_MS: String(COURIER_HANG_MS),
		});
		sender = newSender();
		const token = await idp.tokenFor(sender, "merchant_ops");
		api = client(base, token);
		bearer = `Bearer ${token}`;
		db = new Client({ connectionString: process.env.DATABASE_URL });
		await db.connect();
		booking = startProcess(bookingEnv);
		await waitReady(base, [core, booking], 90_000);
		await bookingAnswers(booking);
		const wh = await api.post("/v1/warehouses", warehouseBody());
		assert.equal(wh.status, 201, JSON.stringify(wh.body));
		warehouseId = wh.body.data.id;
		const q = await api.get(
			"/v1/shipping/serviceable?from_pin=110001&to_pin=560001&physical_weight=0.8&order_type=1&collectable_amount=1499",
		);
		assert.equal(q.status, 200, JSON.stringify(q.body));
		logisticId = q.body.data[0].logistic_id;
	});

	after(async () => {
		await Promise.all([booking?.stop(), core?.stop()]);
		jwks?.close();
		await db?.end();
	});

	it("books every order once or fails it, across 20+ kills in every phase, with the ledger balanced", async () => {
		const t0 = Date.now();
		// Orders: every fourth consignee makes the courier hold its answer past the adapter timeout.
		const orders: number[] = [];
		for (let i = 0; i < ORDERS; i++) {
			const body = orderBody(warehouseId, freshRef("CRASH"));
			if (i % 4 === 2) (body.receiver as { name: string }).name = "Ravi SIMULATE_TIMEOUT Kumar";
			const r = await api.post("/v1/intake/order", body);
			assert.equal(r.status, 201, `${JSON.stringify(r.body)}\n${core.output().slice(-2000)}`);
			orders.push(r.body.order_id);
		}

		/**
		 * `POST /v1/shipping/book` as a client following the contract: a 503 means "retry" (Retry-After 1 s), at
		 * most 5 times; after a retry, 409 booking_in_progress / already_booked means an earlier try went through.
		 * Answers the last answer and whether it was retried (503s are counted in `unavailable`).
		 */
		async function bookAsAClient(order_id: number) {
			for (let t = 0; ; t++) {
				const r = await api.post("/v1/shipping/book", { order_id, logistic_id: logisticId });
				if (r.status !== 503 || t === 4) return { ...r, retried: t > 0 };
				unavailable++;
				await new Promise((res) => setTimeout(res, 1000));
			}
		}
		let unavailable = 0;
		const hits: Record<Phase, number> = { before: 0, during: 0, after: 0, committed: 0 };
		let kills = 0;
		let next = 0;
		for (let cycle = 0; cycle < KILLS; cycle++) {
			if (!booking) booking = await startBooking();
			const since = await dbNow();
			const batch = orders.slice(next, next + 2);
			next += batch.length;
			const booked = await Promise.all(batch.map((order_id) => bookAsAClient(order_id)));
			for (const r of booked)
				assert.ok(
					r.status === 202 || (r.retried && r.status === 409),
					`${r.status} ${JSON.stringify(r.body)}\n${booking.output().slice(-3000)}\n${core.output().slice(-3000)}`,
				);
			const { rows } = await db.query<{ attempt_id: string }>(
				"SELECT attempt_id FROM booking.attempts WHERE order_id = ANY($1::bigint[])",
				[batch],
			);
			const phase = PHASES[cycle % PHASES.length];
			// Kill as soon as the process is in the phase (polled every 5 ms, for at most 3 s).
			const end = Date.now() + 3000;
			let hit = false;
			while (Date.now() < end) {
				hit = await inPhase(
					phase,
					since,
					rows.map((r) => Number(r.attempt_id)),
				);
				if (hit) break;
				await new Promise((r) => setTimeout(r, 5));
			}
			await booking.stop("SIGKILL");
			booking = undefined;
			kills++;
			if (hit) hits[phase]++;
		}
		booking = await startBooking();
		const killedAt = Date.now();

		// Every attempt settles and no order stays booking_in_progress.
		const settled = await eventually(
			async () => {
				const { rows } = await db.query<{ state: string; n: string }>(
					"SELECT state, count(*) AS n FROM intake.orders WHERE order_id = ANY($1::bigint[]) GROUP BY state",
					[orders],
				);
				const open = await db.query(
					"SELECT 1 FROM booking.attempts WHERE order_id = ANY($1::bigint[]) AND state IN ('queued', 'claimed')",
					[orders],
				);
				const by = Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
				return (open.rowCount ?? 0) === 0 && (by.booked ?? 0) + (by.failed ?? 0) === orders.length
					? by
					: null;
			},
			{ what: "every order booked or failed, no attempt queued or claimed", ms: 150_000, every: 500 },
		);
		const settleSeconds = (Date.now() - killedAt) / 1000;

		const { rows: attempts } = await db.query<{
			attempt_id: string;
			order_id: string;
			state: string;
			awb_number: string | null;
			total: string | null;
		}>(
			"SELECT attempt_id, order_id, state, awb_number, charges->>'total' AS total FROM booking.attempts WHERE order_id = ANY($1::bigint[]) ORDER BY attempt_id",
			[orders],
		);
		const { rows: intake } = await db.query<{ order_id: string; state: string; awb_number: string | null }>(
			"SELECT order_id, state, awb_number FROM intake.orders WHERE order_id = ANY($1::bigint[])",
			[orders],
		);
		const refs = await fetch(
			`${simBase}/references?reference=${attempts.map((a) => a.attempt_id).join(",")}`,
		);
		assert.equal(refs.status, 200);
		const held = new Map(
			((await refs.json()) as { references: SimulatorReference[] }).references.map((r) => [r.reference, r]),
		);
		const { rows: ledger } = await db.query<{ attempt_id: string; kind: string; amount_paise: string }>(
			"SELECT attempt_id, kind, amount_paise FROM booking.ledger WHERE sender_id = $1",
			[sender],
		);

		let booked = 0;
		let failed = 0;
		for (const o of intake) {
			const mine = attempts.filter((a) => a.order_id === o.order_id);
			const live = mine.flatMap((a) =>
				(held.get(a.attempt_id)?.packages ?? []).filter((p) => !p.cancelled_at),
			);
			const won = mine.filter((a) => a.state === "booked");
			const at = `order ${o.order_id}: ${JSON.stringify({ intake: o, attempts: mine, live })}`;
			assert.ok(live.length <= 1, `two live AWBs at the courier, ${at}`);
			if (o.state === "booked") {
				booked++;
				assert.equal(won.length, 1, `one booked attempt, ${at}`);
				assert.equal(o.awb_number, won[0].awb_number, `intake's AWB is the attempt's, ${at}`);
				assert.equal(live[0]?.awb_number, won[0].awb_number, `the courier holds the booked AWB, ${at}`);
			} else {
				failed++;
				assert.equal(o.state, "failed", at);
				assert.equal(won.length, 0, `a failed order has no booked attempt, ${at}`);
				assert.equal(live.length, 0, `a failed order holds no live AWB at the courier, ${at}`);
			}
		}
		const { rows: reasons } = await db.query<{ failure_reason: string; n: string }>(
			`SELECT regexp_replace(failure_reason, '[0-9]+', 'N', 'g') AS failure_reason, count(*) AS n
			 FROM intake.orders WHERE order_id = ANY($1::bigint[]) AND state = 'failed' GROUP BY 1 ORDER BY 2 DESC`,
			[orders],
		);
		for (const r of reasons) console.log(`      failed ${r.n}×: ${r.failure_reason}`);
		assert.equal(booked + failed, ORDERS);
		assert.equal(booked, settled.booked ?? 0);
		console.log(
			`      crash test: ${kills} kills (phase hits ${JSON.stringify(hits)}), ${booked} booked, ${failed} failed, ` +
				`settled ${settleSeconds.toFixed(1)} s after the last restart, ${((Date.now() - t0) / 1000).toFixed(1)} s in all, ` +
				`${unavailable} book answer(s) 503 retried`,
		);

		// The ledger: one charge = the quoted total per booked attempt, none for the others; balanced.
		const bookedTotal = attempts
			.filter((a) => a.state === "booked")
			.reduce((s, a) => s + Number(a.total ?? Number.NaN), 0);
		for (const a of attempts) {
			const charges = ledger.filter((l) => l.attempt_id === a.attempt_id && l.kind === "charge");
			if (a.state === "booked") {
				assert.equal(charges.length, 1, `one charge for booked attempt ${a.attempt_id}`);
				assert.equal(
					Number(charges[0].amount_paise),
					Number(a.total),
					`charge = quoted total of ${a.attempt_id}`,
				);
			} else assert.equal(charges.length, 0, `no charge for ${a.state} attempt ${a.attempt_id}`);
		}
		const sum = (kind: string) =>
			ledger.filter((l) => l.kind === kind).reduce((s, l) => s + Number(l.amount_paise), 0);
		assert.equal(sum("charge") - sum("refund"), bookedTotal, "charges − refunds = booked totals");

		// The wallet (billing, fed by booking's outbox across the kills): every movement exactly once, and the
		// stored balance equal to the balance recomputed from the entries.
		const wallet = await eventually(
			async () => {
				const { rows } = await db.query<{ attempt_id: string; kind: string; amount_paise: string }>(
					"SELECT attempt_id, kind, amount_paise FROM billing.ledger WHERE sender_id = $1",
					[sender],
				);
				return rows.length >= ledger.length ? rows : undefined;
			},
			{ what: "every movement in billing's ledger", ms: 30_000 },
		);
		const key = (l: { attempt_id: string; kind: string; amount_paise: string }) =>
			`${l.attempt_id}:${l.kind}:${l.amount_paise}`;
		assert.deepEqual(
			wallet.map(key).sort(),
			ledger.map(key).sort(),
			"billing holds booking's movements, each once",
		);
		const { rows: bal } = await db.query<{ stored: string; recomputed: string }>(
			`SELECT b.balance_paise AS stored,
				(SELECT SUM(CASE kind WHEN 'refund' THEN amount_paise ELSE -amount_paise END) FROM billing.ledger
				 WHERE sender_id = $1) AS recomputed
			 FROM billing.balances b WHERE b.sender_id = $1`,
			[sender],
		);
		assert.equal(Number(bal[0]?.stored), -bookedTotal, "the stored balance is −(booked totals)");
		assert.equal(bal[0]?.stored, bal[0]?.recomputed, "stored balance = balance recomputed from the entries");
		assert.ok(kills >= KILLS);
		// The courier-side phases were really hit (the commit window is too short to require).
		for (const p of ["before", "during", "after"] as const) assert.ok(hits[p] >= 1, `no kill in phase ${p}`);
	});
});
