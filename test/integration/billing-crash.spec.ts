/**
 * Integration (issue 27; docs/decisions/0101-billing-service.md, 0104):
 * the billing process killed with SIGKILL again and again while booking
 * charges and refunds (bookings and cancels through the gateway) and payout
 * cycles run. Afterwards: every movement of booking's ledger is in billing's
 * ledger exactly once, every stored balance equals the balance recomputed
 * from the entries, and no shipment is in two payouts or lost from one.
 * Real processes (`npm start` split over NATS), PostgreSQL, Redis, NATS.
 */
import { strict as assert } from "node:assert";
import type { Server } from "node:http";
import { Client } from "pg";
import { BALANCE_DELTA } from "../../lib/billing/store";
import { newSender } from "../helpers/broker";
import { orderBody, warehouseBody } from "../helpers/fixtures";
import { client } from "../helpers/flow";
import { eventually } from "../helpers/poll";
import {
	type ChildSystem,
	childSystem,
	type StartedProcess,
	startProcess,
	waitReady,
} from "../helpers/processes";

/** Kills of the billing process. */
const KILLS = 6;
/** Orders booked while billing is killed; every third is cancelled (a refund). */
const ORDERS = 24;
const OPS = "billing-crash-ops-token-0123456789abcdef";

describe("integration: billing under kill -9 while booking charges and payouts run", function () {
	this.timeout(240_000);
	let jwks: Server;
	let core: StartedProcess;
	let billing: StartedProcess | undefined;
	let billingEnv: Record<string, string | undefined> = {};
	let base = "";
	let db: Client;
	let idp: ChildSystem["idp"];

	before(async () => {
		const sys = await childSystem("bcrash", { labelLinkSecret: "bcrash-secret", logLevel: "warn" });
		({ jwks, base } = sys);
		const common = {
			...sys.env,
			OPS_API_TOKEN: OPS,
			BOOKING_RELAY_MS: "200",
			BOOKING_RELAY_BACKOFF_MS: "200",
		};
		billingEnv = { ...common, SERVICES: "billing", NODEID: "bcrash-billing" };
		core = startProcess({
			...common,
			SERVICES:
				"gateway,documents,pincode,rates,warehouses,intake,booking,ndr,webhooks,notifications,simulator",
			NODEID: "bcrash-core",
		});
		billing = startProcess(billingEnv);
		await waitReady(base, [core, billing], 90_000);
		db = new Client({ connectionString: process.env.DATABASE_URL });
		await db.connect();
		// the billing schema is migrated once billing answers
		await eventually(
			async () =>
				(await db.query("SELECT to_regclass('billing.payouts') AS t")).rows[0].t !== null || undefined,
			{ what: "billing migrated", ms: 60_000 },
		);
		idp = sys.idp;
	});

	after(async () => {
		await Promise.all([billing?.stop(), core?.stop()]);
		jwks?.close();
		await db?.end();
	});

	it("loses and doubles no movement and no payout shipment across kills", async () => {
		const sender = newSender();
		const api = client(base, await idp.tokenFor(sender, "merchant_ops"));
		const wh = await api.post("/v1/warehouses", warehouseBody());
		assert.equal(wh.status, 201, JSON.stringify(wh.body));
		// remitted COD shipments of other accounts for the payout cycles to take while billing dies
		const payees = Array.from({ length: 5 }, () => newSender());
		await db.query(
			`INSERT INTO billing.shipments (awb_number, sender_id, order_id, logistic_id, payment_mode, cod_amount_paise,
				cod_status, status_seq, collected_at, remitted_paise, remittance_reference, remitted_on)
			 SELECT 'BC' || $1::bigint || '-' || g, ($2::bigint[])[1 + g % 5], g, 1, 'cod', 10000 + g, 'remitted', 6,
				now() - interval '30 days' + g * interval '1 hour', 10000 + g, 'REM-BC', current_date
			 FROM generate_series(1, 200) g`,
			[sender, payees],
		);

		let kills = 0;
		let stopping = false;
		const killer = (async () => {
			while (!stopping && kills < KILLS) {
				await new Promise((r) => setTimeout(r, 600 + Math.random() * 600));
				await billing?.stop("SIGKILL");
				kills++;
				await new Promise((r) => setTimeout(r, 300));
				billing = startProcess(billingEnv);
			}
		})();
		const cycles = (async () => {
			const days = ["2026-11-03", "2026-11-06", "2026-11-10", "2026-11-13", "2026-11-17", "2026-11-20"];
			for (const cycle_date of days) {
				for (;;) {
					const r = await fetch(`${base}/v1/ops/payout-cycles`, {
						method: "POST",
						headers: { authorization: `Bearer ${OPS}`, "content-type": "application/json" },
						body: JSON.stringify({ cycle_date }),
					}).catch(() => null);
					if (r?.status === 200) break;
					await new Promise((res) => setTimeout(res, 200));
				}
			}
		})();
		const orders: number[] = [];
		for (let i = 0; i < ORDERS; i++) {
			const o = await api.post("/v1/intake/order", orderBody(wh.body.data.id));
			assert.equal(o.status, 201, JSON.stringify(o.body));
			orders.push(o.body.order_id);
			const b = await api.post("/v1/shipping/book", { order_id: o.body.order_id });
			assert.equal(b.status, 202, JSON.stringify(b.body));
		}
		await eventually(
			async () => {
				const { rows } = await db.query(
					"SELECT count(*) AS n FROM booking.attempts WHERE order_id = ANY($1::bigint[]) AND state = 'booked'",
					[orders],
				);
				return Number(rows[0].n) === ORDERS || undefined;
			},
			{ what: "every order booked", ms: 60_000 },
		);
		for (const [i, order_id] of orders.entries()) {
			if (i % 3 !== 0) continue;
			const { rows } = await db.query(
				"SELECT logistic_id FROM booking.attempts WHERE order_id = $1 AND state = 'booked'",
				[order_id],
			);
			const c = await api.post("/v1/shipping/cancel", { order_id, logistic_id: rows[0].logistic_id });
			assert.equal(c.status, 200, JSON.stringify(c.body));
		}
		await Promise.all([killer, cycles]);
		stopping = true;
		assert.ok(kills >= KILLS, `${kills} kills`);
		if (billing) await waitReady(base, [core, billing], 90_000);

		// every movement of booking's ledger in billing's, once
		const { rows: ledger } = await db.query<{ k: string }>(
			"SELECT attempt_id || ':' || kind || ':' || amount_paise AS k FROM booking.ledger WHERE sender_id = $1",
			[sender],
		);
		assert.equal(ledger.length, ORDERS + ORDERS / 3, "a charge per booking, a refund per cancel");
		const wallet = await eventually(
			async () => {
				const { rows } = await db.query<{ k: string }>(
					"SELECT attempt_id || ':' || kind || ':' || amount_paise AS k FROM billing.ledger WHERE sender_id = $1",
					[sender],
				);
				return rows.length >= ledger.length ? rows : undefined;
			},
			{ what: "billing holding every movement", ms: 60_000 },
		);
		assert.deepEqual(wallet.map((r) => r.k).sort(), ledger.map((r) => r.k).sort());
		const { rows: drift } = await db.query(
			`SELECT b.sender_id FROM billing.balances b
			 LEFT JOIN (SELECT sender_id, SUM(${BALANCE_DELTA}) AS s
				FROM billing.ledger GROUP BY sender_id) l ON l.sender_id = b.sender_id
			 WHERE b.balance_paise IS DISTINCT FROM l.s`,
		);
		assert.deepEqual(drift, [], "every stored balance equals the sum of its entries");

		// payouts: each covers exactly its shipments; every eligible shipment is in one
		const { rows: payouts } = await db.query(
			`SELECT p.id, p.shipments, p.net_paise, count(s.awb_number) AS n, COALESCE(sum(s.remitted_paise), 0) AS sum
			 FROM billing.payouts p LEFT JOIN billing.shipments s ON s.payout_id = p.id
			 WHERE p.sender_id = ANY($1::bigint[]) GROUP BY p.id`,
			[payees],
		);
		for (const p of payouts) {
			assert.equal(Number(p.n), p.shipments, `payout ${p.id}: its shipment count`);
			assert.equal(Number(p.sum), Number(p.net_paise), `payout ${p.id}: its amount`);
		}
		const { rows: unpaid } = await db.query(
			"SELECT count(*) AS n FROM billing.shipments WHERE awb_number LIKE $1 AND payout_id IS NULL",
			[`BC${sender}-%`],
		);
		assert.equal(Number(unpaid[0].n), 0, "every remitted shipment delivered weeks ago is in a payout");
	});
});
