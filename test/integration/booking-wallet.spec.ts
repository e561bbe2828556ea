/**
 * Integration: the wallet over real NATS (gateway, catalog, intake + simulator,
 * booking and billing each on its own broker), real PostgreSQL and Redis:
 * booking's movements reach billing through booking's outbox.
 * `GET /v1/wallet` after real bookings (the charge is the quoted total,
 * written when the attempt is booked), cursor paging and its 400s, limit
 * validation, read-only roles, isolation between accounts, and the credit
 * limit set over NATS refusing a booking with 409 `credit_limit_exceeded`.
 */
import { strict as assert } from "node:assert";
import { getSequelize, select } from "../../lib/platform/db";
import { newSender } from "../helpers/broker";
import { callAs } from "../helpers/call";
import { useCluster } from "../helpers/cluster";
import { orderBody, warehouseBody } from "../helpers/fixtures";
import { client } from "../helpers/flow";
import { eventually } from "../helpers/poll";

type Api = ReturnType<typeof client>;

describe("integration: wallet over NATS", function () {
	this.timeout(90_000);
	const cluster = useCluster(
		"wallet",
		[["gateway"], ["pincode", "rates", "warehouses"], ["intake", "simulator"], ["booking"], ["billing"]],
		["pincode", "rates", "warehouses", "intake", "booking", "billing"],
	);

	/** A merchant with a warehouse: its API client and the warehouse id. */
	async function merchant(sender = newSender()): Promise<{ sender: number; api: Api; warehouse_id: number }> {
		const api = client(cluster.base, await cluster.idp.tokenFor(sender));
		const wh = await api.post("/v1/warehouses", warehouseBody());
		assert.equal(wh.status, 201, JSON.stringify(wh.body));
		return { sender, api, warehouse_id: wh.body.data.id };
	}

	/** Creates an order and books it (AUTO); answers the order id, its number and the 202 status. */
	async function bookOrder(api: Api, warehouse_id: number) {
		const ob = orderBody(warehouse_id);
		const created = await api.post("/v1/intake/order", ob);
		assert.equal(created.status, 201, JSON.stringify(created.body));
		const order_id = created.body.order_id as number;
		const res = await api.post("/v1/shipping/book", { order_id });
		return { order_id, order_no: ob.customer_order_no as string, res };
	}

	/** Waits until the order reads booked; answers its status record. */
	async function booked(api: Api, order_no: string) {
		return eventually(
			async () => {
				const s = await api.get(`/v1/orders/status?order_no=${encodeURIComponent(order_no)}`);
				assert.equal(s.status, 200, JSON.stringify(s.body));
				assert.notEqual(s.body.state, "failed", JSON.stringify(s.body));
				return s.body.state === "booked" ? s.body : undefined;
			},
			{ what: `order ${order_no} booked`, ms: 20_000, every: 100 },
		);
	}

	/** The order's booked attempt as stored (quoted charges in paise). */
	async function bookedAttempt(order_id: number) {
		const [a] = await select<{ attempt_id: string; logistic_id: number; charges: { total: number } }>(
			getSequelize(),
			"SELECT attempt_id, logistic_id, charges FROM booking.attempts WHERE order_id = $1 AND state = 'booked'",
			[order_id],
		);
		assert.ok(a, `order ${order_id} has a booked attempt`);
		return a;
	}

	it("a booked order's charge appears in GET /v1/wallet with the quoted total", async () => {
		const { sender, api, warehouse_id } = await merchant();
		const empty = await api.get("/v1/wallet");
		assert.equal(empty.status, 200, JSON.stringify(empty.body));
		assert.deepEqual(empty.body, {
			balance: 0,
			credit_limit: null,
			data: [],
			pagination: { mode: "cursor", limit: 20, nextCursor: null },
		});

		const { order_id, order_no, res } = await bookOrder(api, warehouse_id);
		assert.equal(res.status, 202, JSON.stringify(res.body));
		const status = await booked(api, order_no);
		const attempt = await bookedAttempt(order_id);
		// the quote the merchant sees for this lane and courier (order: 0.8 kg, 30×25×5 cm, COD ₹1,499)
		const quote = await api.get(
			"/v1/shipping/serviceable?from_pin=110001&to_pin=560001&physical_weight=0.8&volumetric_weight=0.75&order_type=1&collectable_amount=1499",
		);
		assert.equal(quote.status, 200, JSON.stringify(quote.body));
		const q = quote.body.data.find((x: { logistic_id: number }) => x.logistic_id === attempt.logistic_id);
		assert.ok(q, "the booked courier prices the lane");
		assert.equal(
			attempt.charges.total,
			Math.round(q.total * 100),
			"the attempt holds the quoted total (paise)",
		);

		const w = await eventually(
			async () => {
				const r = await api.get("/v1/wallet");
				assert.equal(r.status, 200, JSON.stringify(r.body));
				return r.body.data.length ? r.body : undefined;
			},
			{ what: "the charge in the wallet" },
		);
		assert.equal(w.data.length, 1);
		const [m] = w.data;
		assert.equal(m.kind, "charge");
		assert.equal(m.amount, q.total);
		assert.equal(m.order_id, order_id);
		assert.equal(m.attempt_id, Number(attempt.attempt_id));
		assert.equal(m.awb_number, status.awb_number);
		assert.ok(Number.isInteger(m.id));
		assert.ok(Math.abs(Date.parse(m.created_at) - Date.now()) < 60_000);
		assert.equal(w.balance, -q.total);
		assert.equal(w.credit_limit, null);

		// a read-only role reads the same wallet; another account sees none of it
		const finance = client(cluster.base, await cluster.idp.tokenFor(sender, "merchant_finance"));
		const ro = await finance.get("/v1/wallet");
		assert.equal(ro.status, 200, JSON.stringify(ro.body));
		assert.deepEqual(ro.body, w);
		const stranger = client(cluster.base, await cluster.idp.tokenFor(newSender()));
		const theirs = await stranger.get("/v1/wallet");
		assert.equal(theirs.status, 200);
		assert.equal(theirs.body.balance, 0);
		assert.deepEqual(theirs.body.data, []);
	});

	it("pages the movements with signed cursors; a foreign, tampered or made-up cursor is 400", async () => {
		const { api, warehouse_id } = await merchant();
		const orders = await Promise.all([1, 2, 3].map(() => bookOrder(api, warehouse_id)));
		for (const o of orders) assert.equal(o.res.status, 202, JSON.stringify(o.res.body));
		await Promise.all(orders.map((o) => booked(api, o.order_no)));
		const all = await eventually(
			async () => {
				const r = await api.get("/v1/wallet?limit=1000");
				return r.body.data?.length === 3 ? r.body : undefined;
			},
			{ what: "three charges" },
		);
		assert.deepEqual(
			all.data.map((m: { order_id: number }) => m.order_id).sort(),
			orders.map((o) => o.order_id).sort(),
		);

		const p1 = await api.get("/v1/wallet?limit=2");
		assert.equal(p1.status, 200);
		assert.equal(p1.body.data.length, 2);
		assert.equal(p1.body.pagination.limit, 2);
		const next = p1.body.pagination.nextCursor as string;
		assert.match(next, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
		const p2 = await api.get(`/v1/wallet?limit=2&cursor=${next}`);
		assert.equal(p2.status, 200, JSON.stringify(p2.body));
		assert.equal(p2.body.data.length, 1);
		assert.equal(p2.body.pagination.nextCursor, null);
		assert.deepEqual(
			[...p1.body.data, ...p2.body.data].map((m: { id: number }) => m.id),
			all.data.map((m: { id: number }) => m.id),
			"the pages are the whole ledger, newest first",
		);

		const unrecognised = { error: "cursor: unrecognised shape", message: "cursor: unrecognised shape" };
		const [payload, sig] = next.split(".");
		const tampered = `${payload.slice(0, -1)}${payload.endsWith("A") ? "B" : "A"}.${sig}`;
		for (const c of [tampered, "not-a-cursor", `${payload}.`, encodeURIComponent("{}")]) {
			const r = await api.get(`/v1/wallet?cursor=${c}`);
			assert.equal(r.status, 400, c);
			assert.deepEqual(r.body, unrecognised, c);
		}
		const stranger = client(cluster.base, await cluster.idp.tokenFor(newSender()));
		const foreign = await stranger.get(`/v1/wallet?cursor=${next}`);
		assert.equal(foreign.status, 400);
		assert.deepEqual(foreign.body, unrecognised);
	});

	it("validates limit (1–1000) and needs a bearer token", async () => {
		const { api } = await merchant();
		for (const limit of ["0", "1001", "abc", "2.5", "-3"]) {
			const r = await api.get(`/v1/wallet?limit=${limit}`);
			assert.equal(r.status, 400, limit);
			assert.deepEqual(r.body, {
				error: "validation_failed",
				message: "limit: must be an integer from 1 to 1000",
				details: ["limit: must be an integer from 1 to 1000"],
			});
		}
		assert.equal((await api.get("/v1/wallet?limit=1000")).status, 200);
		const anon = await client(cluster.base).get("/v1/wallet");
		assert.equal(anon.status, 401);
		assert.equal(anon.body.error, "Authentication required");
	});

	it("a credit limit set over NATS refuses a booking beyond it with 409 credit_limit_exceeded", async () => {
		const { sender, api, warehouse_id } = await merchant();
		const first = await bookOrder(api, warehouse_id);
		assert.equal(first.res.status, 202, JSON.stringify(first.res.body));
		await booked(api, first.order_no);
		const charge = (await bookedAttempt(first.order_id)).charges.total / 100;

		// a limit that leaves less than one more booking
		const set = await callAs(cluster.brokers[0], "booking.setCreditLimit", {
			sender_id: sender,
			credit_limit: charge + 1,
		});
		assert.deepEqual(set, { sender_id: sender, credit_limit: charge + 1 });
		// mirrored to billing through booking's outbox
		await eventually(
			async () => ((await api.get("/v1/wallet")).body.credit_limit === charge + 1 ? true : undefined),
			{ what: "the credit limit in the wallet" },
		);

		const second = await bookOrder(api, warehouse_id);
		assert.equal(second.res.status, 409, JSON.stringify(second.res.body));
		assert.equal(second.res.body.error, "credit_limit_exceeded");
		assert.equal(second.res.body.credit_limit, charge + 1);
		assert.equal(second.res.body.outstanding, charge);
		assert.ok(second.res.body.needed > 1, JSON.stringify(second.res.body));
		assert.match(second.res.body.message, /credit limit/);
		const st = await api.get(`/v1/orders/status?order_no=${second.order_no}`);
		assert.equal(st.status, 200);
		assert.equal(st.body.state, "not_shipped", "a refused booking leaves the order unshipped");

		// removing the limit (post-paid without limit) lets the same order book
		const removed = await callAs(cluster.brokers[0], "booking.setCreditLimit", {
			sender_id: sender,
			credit_limit: null,
		});
		assert.deepEqual(removed, { sender_id: sender, credit_limit: null });
		const again = await api.post("/v1/shipping/book", { order_id: second.order_id });
		assert.equal(again.status, 202, JSON.stringify(again.body));
		await booked(api, second.order_no);
	});
});
