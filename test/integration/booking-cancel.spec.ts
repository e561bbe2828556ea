/**
 * Integration: POST /v1/shipping/cancel, order number release and read-your-writes of
 * GET /v1/orders/status (issue 6), with the real services spread over four
 * brokers on real NATS, real PostgreSQL, Redis and the sandbox courier simulator.
 *
 * The intake broker carries a middleware that refuses `intake.applyBookingUpdate`
 * for chosen orders, as if intake could not be reached by booking's outbox.
 */
import { strict as assert } from "node:assert";
import { type Middleware, ServiceBroker } from "moleculer";
import { getSequelize, select } from "../../lib/platform/db";
import { loadServiceSchema } from "../../lib/platform/system";
import brokerOptions from "../../moleculer.config";
import { newSender, testBrokerOptions } from "../helpers/broker";
import { callAs } from "../helpers/call";
import { useCluster } from "../helpers/cluster";
import { freshRef, orderBody, warehouseBody } from "../helpers/fixtures";
import { client } from "../helpers/flow";
import { freePort } from "../helpers/net";
import { eventually } from "../helpers/poll";

/** Orders whose booking updates intake refuses (booking's outbox keeps retrying). */
const refused = new Set<number>();

/** Intake-side middleware: `intake.applyBookingUpdate` fails for the orders in {@link refused}. */
const RefuseUpdates: Middleware = {
	name: "RefuseUpdates",
	localAction(next: (ctx: any) => Promise<unknown>, action: { name: string }) {
		if (action.name !== "intake.applyBookingUpdate") return next;
		return (ctx: any) =>
			refused.has(Number(ctx.params.order_id))
				? Promise.reject(new Error("intake refuses this update (test)"))
				: next(ctx);
	},
} as unknown as Middleware;

type Api = ReturnType<typeof client>;

/** The order's booking attempts, oldest first. */
function attemptsOf(order_id: number): Promise<any[]> {
	return select(getSequelize(), "SELECT * FROM booking.attempts WHERE order_id = $1 ORDER BY attempt_id", [
		order_id,
	]);
}

/** The attempt's ledger rows (kind, paise), oldest first. */
async function ledgerOf(attempt_id: number): Promise<{ kind: string; amount_paise: number }[]> {
	const rows = await select<{ kind: string; amount_paise: string }>(
		getSequelize(),
		"SELECT kind, amount_paise FROM booking.ledger WHERE attempt_id = $1 ORDER BY id",
		[attempt_id],
	);
	return rows.map((r) => ({ kind: r.kind, amount_paise: Number(r.amount_paise) }));
}

/** The simulator's packages of a merchant order number. */
function simPackages(order_no: string): Promise<any[]> {
	return select(
		getSequelize(),
		"SELECT * FROM simulator.packages WHERE client_order_no = $1 ORDER BY waybill",
		[order_no],
	);
}

/** The stored intake row of an order. */
async function intakeRow(order_id: number): Promise<any> {
	const [row] = await select(getSequelize(), "SELECT * FROM intake.orders WHERE order_id = $1", [order_id]);
	return row;
}

describe("integration: cancel, order number release, read-your-writes over NATS", function () {
	this.timeout(90_000);
	/** Timings of this file (restored after it). */
	const ENV: Record<string, string> = {
		SANDBOX_COURIER_DELAY_MS: "20",
		// a SIMULATE_TIMEOUT booking keeps its attempt claimed ~1.5 s, then the AWB arrives late
		SANDBOX_COURIER_TIMEOUT_MS: "1500",
		SANDBOX_COURIER_HANG_MS: "2500",
		BOOKING_RELAY_MS: "200",
		BOOKING_RELAY_BACKOFF_MS: "50",
		BOOKING_BACKOFF_MS: "100",
	};
	const saved = { ...process.env };
	before(() => Object.assign(process.env, ENV));
	// intake runs on its own broker (below), with the middleware that refuses updates
	const cluster = useCluster(
		"it-cancel",
		[["gateway"], ["pincode", "rates", "warehouses"], ["booking", "simulator"]],
		["pincode", "rates", "warehouses", "booking"],
	);
	after(() => {
		for (const k of Object.keys(ENV)) {
			if (saved[k] === undefined) delete process.env[k];
			else process.env[k] = saved[k];
		}
	});

	describe("with intake on its own broker, refusing the updates of chosen orders", () => {
		let intakeBroker: ServiceBroker | undefined;
		let base = "";
		const brokers = cluster.brokers;
		before(async () => {
			base = cluster.base;
			intakeBroker = new ServiceBroker(
				testBrokerOptions(true, {
					nodeID: "it-cancel-intake",
					middlewares: [...(brokerOptions().middlewares ?? []), RefuseUpdates],
				}),
			);
			intakeBroker.createService(loadServiceSchema("intake"));
			await intakeBroker.start();
			await Promise.all(
				[...brokers, intakeBroker].map((b) => b.waitForServices(["intake", "booking", "warehouses"], 30_000)),
			);
		});
		after(async () => {
			await intakeBroker?.stop();
		});

		/** A merchant with a warehouse: its client and a function creating orders (`name` = consignee name). */
		async function merchant() {
			const sender = newSender();
			const api = client(base, await cluster.idp.tokenFor(sender));
			const wh = await api.post("/v1/warehouses", warehouseBody());
			assert.equal(wh.status, 201, JSON.stringify(wh.body));
			const warehouse_id = wh.body.data.id as number;
			const order = async (ref = freshRef("CXL"), name?: string) => {
				const body: any = orderBody(warehouse_id, ref);
				if (name) body.receiver.name = name;
				const r = await api.post("/v1/intake/order", body);
				assert.ok(r.status === 201 || r.status === 200, JSON.stringify(r.body));
				return { order_id: r.body.order_id as number, ref, status: r.status };
			};
			return { sender, api, order };
		}

		const statusOf = async (api: Api, ref: string) => {
			const s = await api.get(`/v1/orders/status?order_no=${encodeURIComponent(ref)}`);
			assert.equal(s.status, 200, JSON.stringify(s.body));
			return s.body;
		};

		/** Books at Sandbox Express and waits until intake shows it booked; answers the booked attempt. */
		async function bookAndWait(api: Api, order_id: number, ref: string) {
			const b = await api.post("/v1/shipping/book", { order_id, logistic_id: 1 });
			assert.equal(b.status, 202, JSON.stringify(b.body));
			await eventually(async () => (await statusOf(api, ref)).state === "booked", {
				what: `order ${ref} booked`,
				ms: 20_000,
				every: 100,
			});
			const [a] = await attemptsOf(order_id);
			assert.equal(a.state, "booked");
			return a;
		}

		it("book → booked → cancel: 200 with the charged total refunded, AWB cancelled at the courier, number reused", async () => {
			const { api, order } = await merchant();
			const o = await order();
			const a = await bookAndWait(api, o.order_id, o.ref);
			const charge = await ledgerOf(Number(a.attempt_id));
			assert.deepEqual(
				charge,
				[{ kind: "charge", amount_paise: a.charges.total }],
				"the booking charged the quoted total",
			);

			const res = await api.post("/v1/shipping/cancel", { order_id: o.order_id, logistic_id: 1 });
			assert.equal(res.status, 200, JSON.stringify(res.body));
			assert.deepEqual(res.body, {
				status: "cancelled",
				awb: a.awb_number,
				forward_id: `bk_${a.attempt_id}`,
				refunded: a.charges.total / 100,
				order_id: o.order_id,
				mode: "forced",
			});
			const [pkg] = await simPackages(o.ref);
			assert.equal(pkg.waybill, a.awb_number);
			assert.ok(pkg.cancelled_at, "the simulator shows the AWB cancelled");
			assert.deepEqual(
				(await ledgerOf(Number(a.attempt_id))).map((r) => [r.kind, r.amount_paise]),
				[
					["charge", a.charges.total],
					["refund", a.charges.total],
				],
			);
			const st = await statusOf(api, o.ref);
			assert.deepEqual(
				[st.state, st.status, st.awb_number, st.courier],
				["not_shipped", "cancelled", null, null],
			);

			// a repeat answers the same and refunds nothing more
			const again = await api.post("/v1/shipping/cancel", { order_id: o.order_id, logistic_id: 1 });
			assert.equal(again.status, 200);
			assert.deepEqual(again.body, res.body);
			assert.equal((await ledgerOf(Number(a.attempt_id))).length, 2);

			// the order number is released: the same customer_order_no makes a new order
			const fresh = await order(o.ref);
			assert.equal(fresh.status, 201);
			assert.notEqual(fresh.order_id, o.order_id);
			const now = await statusOf(api, o.ref);
			assert.deepEqual([now.state, now.status], ["not_shipped", "new"]);
			const dup = await order(o.ref);
			assert.deepEqual([dup.status, dup.order_id], [200, fresh.order_id]);
			// and it books like any order
			await bookAndWait(api, fresh.order_id, o.ref);
		});

		it("cancel racing with a late AWB: cancelled while claimed, the late AWB is cancelled at the courier, no charge", async () => {
			const { api, order } = await merchant();
			const o = await order(freshRef("LATE"), "Kiran SIMULATE_TIMEOUT");
			const b = await api.post("/v1/shipping/book", { order_id: o.order_id, logistic_id: 1 });
			assert.equal(b.status, 202, JSON.stringify(b.body));
			const claimed = await eventually(
				async () => (await attemptsOf(o.order_id)).find((r) => r.state === "claimed"),
				{
					what: "the attempt claimed by the worker",
					every: 20,
				},
			);
			const res = await api.post("/v1/shipping/cancel", { order_id: o.order_id, logistic_id: 1 });
			assert.equal(res.status, 200, JSON.stringify(res.body));
			assert.deepEqual(res.body, {
				status: "cancelled",
				awb: null,
				forward_id: `bk_${claimed.attempt_id}`,
				refunded: 0,
				order_id: o.order_id,
				mode: "forced",
			});
			const done = await eventually(
				async () => (await attemptsOf(o.order_id)).find((r) => r.state !== "claimed" && r.state !== "queued"),
				{ what: "the worker to settle the attempt", ms: 20_000 },
			);
			assert.equal(done.state, "cancelled");
			const pkgs = await simPackages(o.ref);
			assert.equal(pkgs.length, 1, "the courier issued one AWB");
			assert.ok(pkgs[0].cancelled_at, "the late AWB is cancelled at the courier");
			assert.deepEqual(await ledgerOf(Number(claimed.attempt_id)), [], "nothing charged");
			const st = await eventually(
				async () => {
					const s = await statusOf(api, o.ref);
					return s.status === "cancelled" ? s : undefined;
				},
				{ what: "intake to show the order cancelled" },
			);
			assert.equal(st.state, "not_shipped");
			assert.equal((await order(o.ref)).status, 201, "the number is released");
		});

		it("a cancel right after the 202 (queued, claimed or booked, whichever it meets) ends cancelled, nothing owed", async () => {
			const { api, order } = await merchant();
			const o = await order();
			// the cancel races the worker: conditional UPDATEs decide, every outcome must settle the same way
			const b = await api.post("/v1/shipping/book", { order_id: o.order_id, logistic_id: 2 });
			assert.equal(b.status, 202);
			const res = await api.post("/v1/shipping/cancel", { order_id: o.order_id, logistic_id: 2 });
			assert.equal(res.status, 200, JSON.stringify(res.body));
			assert.equal(res.body.status, "cancelled");
			// whichever state the cancel met, the order ends cancelled with nothing charged net
			await eventually(async () => (await attemptsOf(o.order_id))[0].state === "cancelled", {
				what: "attempt cancelled",
				ms: 20_000,
			});
			const rows = await ledgerOf(Number((await attemptsOf(o.order_id))[0].attempt_id));
			const net = rows.reduce((n, r) => n + (r.kind === "charge" ? r.amount_paise : -r.amount_paise), 0);
			assert.equal(net, 0);
			assert.equal(res.body.refunded * 100, rows.find((r) => r.kind === "refund")?.amount_paise ?? 0);
			for (const p of await simPackages(o.ref)) assert.ok(p.cancelled_at, "no live AWB left at the courier");
			await eventually(async () => (await statusOf(api, o.ref)).status === "cancelled", {
				what: "status cancelled",
			});
		});

		it("403 / 409 / 422 / 503 and 400 answers through the gateway", async () => {
			const { sender, api, order } = await merchant();
			const stranger = client(base, await cluster.idp.tokenFor(newSender()));
			const readOnly = client(base, await cluster.idp.tokenFor(sender, "merchant_finance"));
			const o = await order();

			const bad = await api.post("/v1/shipping/cancel", { order_id: "x" });
			assert.equal(bad.status, 400);
			assert.equal(bad.body.error, "validation_failed");
			assert.deepEqual(bad.body.details, [
				"order_id: must be a positive integer",
				"logistic_id: must be a positive integer",
			]);

			const none = await api.post("/v1/shipping/cancel", { order_id: o.order_id, logistic_id: 1 });
			assert.equal(none.status, 409);
			assert.deepEqual(none.body, {
				error: "not_cancellable",
				message: `order ${o.order_id} cannot be cancelled: it has no booking`,
			});

			const a = await bookAndWait(api, o.order_id, o.ref);
			const foreign = await stranger.post("/v1/shipping/cancel", { order_id: o.order_id, logistic_id: 1 });
			assert.equal(foreign.status, 403);
			assert.deepEqual(foreign.body, {
				error: "cannot cancel for another sender",
				message: "cannot cancel for another sender",
			});
			const missing = await api.post("/v1/shipping/cancel", { order_id: 999_999_999, logistic_id: 1 });
			assert.deepEqual([missing.status, missing.body.error], [403, "cannot cancel for another sender"]);
			const ro = await readOnly.post("/v1/shipping/cancel", { order_id: o.order_id, logistic_id: 1 });
			assert.deepEqual([ro.status, ro.body.error], [403, "Read-only role"]);
			const wrong = await api.post("/v1/shipping/cancel", { order_id: o.order_id, logistic_id: 2 });
			assert.equal(wrong.status, 409);
			assert.match(wrong.body.message, /booked at Sandbox Express \(logistic_id 1\), not at logistic_id 2/);

			// the courier unreachable (its URL points at a closed port): 503, nothing changed
			const closed = `http://127.0.0.1:${await freePort()}`;
			process.env.SANDBOX_COURIER_URL = closed;
			const down = await api
				.post("/v1/shipping/cancel", { order_id: o.order_id, logistic_id: 1 })
				.finally(() => delete process.env.SANDBOX_COURIER_URL);
			assert.equal(down.status, 503, JSON.stringify(down.body));
			assert.equal(down.body.error, "cancel_unavailable");
			assert.equal((await attemptsOf(o.order_id))[0].state, "booked");
			assert.equal((await statusOf(api, o.ref)).state, "booked");

			// picked up: the courier refuses with its words
			await callAs(brokers[2], "simulator.emitScan", { awb_number: a.awb_number, event: "picked_up" });
			const refusedCancel = await api.post("/v1/shipping/cancel", { order_id: o.order_id, logistic_id: 1 });
			assert.equal(refusedCancel.status, 422);
			assert.deepEqual(refusedCancel.body, {
				error: "cancel_failed",
				message: "Shipment is Picked Up; it can no longer be cancelled",
			});
			assert.equal((await attemptsOf(o.order_id))[0].state, "booked");
			assert.deepEqual(
				(await ledgerOf(Number(a.attempt_id))).map((r) => r.kind),
				["charge"],
			);
		});

		it("read-your-writes: after the 202, status never reads not_shipped while intake refuses the updates", async () => {
			const { api, order } = await merchant();
			const o = await order();
			refused.add(o.order_id);
			try {
				const b = await api.post("/v1/shipping/book", { order_id: o.order_id, logistic_id: 1 });
				assert.equal(b.status, 202, JSON.stringify(b.body));
				const first = await statusOf(api, o.ref);
				assert.ok(["booking_in_progress", "booked"].includes(first.state), JSON.stringify(first));
				const booked = await eventually(
					async () => {
						const s = await statusOf(api, o.ref);
						assert.notEqual(s.state, "not_shipped");
						return s.state === "booked" ? s : undefined;
					},
					{ what: "booking's booked state read through", ms: 20_000, every: 50 },
				);
				const [a] = await attemptsOf(o.order_id);
				assert.equal(booked.awb_number, a.awb_number);
				assert.equal(booked.courier, "Sandbox Express");
				const row = await intakeRow(o.order_id);
				assert.equal(row.state, "not_shipped", "intake itself has not applied any update");
				const pending = await select<{ n: string }>(
					getSequelize(),
					`SELECT count(*) AS n FROM booking.outbox WHERE kind = 'order_update' AND delivered_at IS NULL
				 AND (payload->>'order_id')::bigint = $1`,
					[o.order_id],
				);
				assert.ok(Number(pending[0].n) >= 1, "the updates wait in booking's outbox");
			} finally {
				refused.delete(o.order_id);
			}
			// intake accepts again: the relay delivers and intake's own row converges
			await eventually(async () => (await intakeRow(o.order_id)).state === "booked", {
				what: "the outbox to deliver",
				ms: 30_000,
				every: 100,
			});
		});
	});
});
