/**
 * Integration: the services spread over four brokers talking over real NATS
 * (as in Kubernetes, one service group per pod), real PostgreSQL and Redis.
 * Exercises serialization of params, errors and `meta` across the wire, and the
 * permission middleware inside services for internal callers.
 */
import { strict as assert } from "node:assert";
import { heldAnswersServed } from "../../lib/gateway/held-answers";
import { as, newSender, rejects } from "../helpers/broker";
import { callAs } from "../helpers/call";
import { useCluster } from "../helpers/cluster";
import { orderBody, warehouseBody } from "../helpers/fixtures";
import { client, typicalFlow } from "../helpers/flow";

describe("integration: services split over NATS", function () {
	this.timeout(90_000);
	const c = useCluster(
		"split",
		[
			["gateway"],
			["pincode", "rates", "warehouses"],
			["intake", "booking", "billing", "simulator"],
			["documents"],
		],
		["pincode", "rates", "warehouses", "intake", "booking", "billing", "documents"],
	);
	const brokers = c.brokers;

	it("runs the typical flow through the gateway with every hop over NATS", async () => {
		const sender = newSender();
		const r = await typicalFlow(c.base, await c.idp.tokenFor(sender));
		assert.ok(r.awb_number.length >= 10);
	});

	it("serves pincode look-ups and warehouse PATCH / list through the gateway", async () => {
		const api = client(c.base, await c.idp.tokenFor(newSender()));
		const known = await api.get("/v1/pincode/%20560%20001%20");
		assert.equal(known.status, 200);
		assert.deepEqual(Object.keys(known.body).sort(), ["city", "found", "pincode", "state"]);
		assert.equal(known.body.found, true);
		assert.equal(known.body.pincode, "560001");
		assert.equal(known.body.state, "Karnataka");
		const unknown = await api.get("/v1/pincode/999999");
		assert.deepEqual(unknown.body, { found: false, pincode: "999999", city: "", state: "" });

		const wh = await api.post("/v1/warehouses", warehouseBody());
		const id = wh.body.data.id as number;
		const patched = await api.patch(`/v1/warehouses/${id}`, { contact_no: "9000000001" });
		assert.equal(patched.status, 200, JSON.stringify(patched.body));
		assert.equal(patched.body.data.contact_no, "9000000001");
		const bad = await api.patch(`/v1/warehouses/${id}`, { contact_no: "12345" });
		assert.equal(bad.status, 400);
		assert.equal(bad.body.error, "validation_failed");
		assert.ok(bad.body.details.some((d: string) => d.startsWith("contact_no")));
		const list = await api.get("/v1/warehouses");
		assert.equal(list.status, 200);
		assert.deepEqual(
			list.body.data.map((w: { id: number; contact_no: string }) => [w.id, w.contact_no]),
			[[id, "9000000001"]],
		);
	});

	it("a list page read again over NATS is written from the bytes the gateway holds while unchanged; a change and another account's page are their own", async () => {
		const owner = newSender();
		const mine = client(c.base, await c.idp.tokenFor(owner));
		const theirs = client(c.base, await c.idp.tokenFor(newSender()));
		const made: number[] = [];
		const theirsMade: number[] = [];
		const warehouses: number[] = [];
		for (const [who, ids] of [
			[mine, made],
			[theirs, theirsMade],
		] as const) {
			const wh = await who.post("/v1/warehouses", warehouseBody());
			warehouses.push(wh.body.data.id as number);
			for (let i = 0; i < 12; i++) {
				const r = await who.post("/v1/intake/order", orderBody(wh.body.data.id));
				assert.equal(r.status, 201);
				ids.unshift(r.body.order_id as number);
			}
		}
		const served = heldAnswersServed();
		const text: string[] = [];
		for (let i = 0; i < 3; i++) {
			const page = await mine.get("/v1/orders");
			assert.equal(page.status, 200);
			assert.deepEqual(
				page.body.data.map((o: { order_id: number }) => o.order_id),
				made,
			);
			assert.ok(JSON.stringify(page.body).length > 4096, "a long page");
			assert.deepEqual(page.body.pagination, { mode: "cursor", limit: 50, nextCursor: null });
			text.push(JSON.stringify(page.body));
		}
		assert.equal(text[1], text[0]);
		assert.equal(text[2], text[0]);
		assert.equal(heldAnswersServed() - served, 2, "the 2nd and 3rd reads were written from held bytes");
		// the other account, same path, after the first account's bytes are held: its own orders
		for (let i = 0; i < 2; i++) {
			const other = await theirs.get("/v1/orders");
			assert.deepEqual(
				other.body.data.map((o: { order_id: number }) => o.order_id),
				theirsMade,
			);
		}
		assert.equal(heldAnswersServed() - served, 3);
		// a change: the next read carries the new page, not the held one
		const hidden = await mine.post(`/v1/orders/${made[0]}/hide`, {});
		assert.equal(hidden.status, 200);
		const after = await mine.get("/v1/orders");
		assert.deepEqual(
			after.body.data.map((o: { order_id: number }) => o.order_id),
			made.slice(1),
		);
		const created = await mine.post("/v1/intake/order", orderBody(warehouses[0]));
		assert.equal(created.status, 201);
		const newest = await mine.get("/v1/orders");
		assert.equal(newest.body.data[0].order_id, created.body.order_id, "the new order heads the page");
		assert.equal(heldAnswersServed() - served, 3, "changed pages were carried, not held ones");
	});

	it("keeps merchants apart across nodes: another account sees 404s", async () => {
		const owner = newSender();
		const stranger = newSender();
		const mine = client(c.base, await c.idp.tokenFor(owner));
		const theirs = client(c.base, await c.idp.tokenFor(stranger));
		const wh = await mine.post("/v1/warehouses", warehouseBody());
		assert.equal(wh.status, 201);
		const ob = orderBody(wh.body.data.id);
		const created = await mine.post("/v1/intake/order", ob);
		assert.equal(created.status, 201);

		const st = await theirs.get(`/v1/orders/status?order_no=${ob.customer_order_no}`);
		assert.equal(st.status, 404);
		assert.equal(st.body.error, "order_not_found");

		const label = await theirs.get(`/v1/documents/label/${created.body.order_id}`);
		assert.equal(label.status, 404);
		assert.deepEqual(label.body, { message: "not found" });

		// the stranger cannot use the owner's warehouse as pickup address
		const foreign = await theirs.post("/v1/intake/order", orderBody(wh.body.data.id));
		assert.equal(foreign.status, 400);
		assert.equal(foreign.body.error, "invalid_pickup_address");

		// a sender_id in the body never switches accounts
		const spoof = await theirs.post("/v1/intake/order", { ...orderBody(wh.body.data.id), sender_id: owner });
		assert.equal(spoof.status, 403);
		assert.equal(spoof.body.error, "cannot create order for another sender");

		const del = await theirs.del(`/v1/warehouses/${wh.body.data.id}`);
		assert.equal(del.status, 404);
		assert.equal(del.body.error, "not_found");
	});

	it("refuses orders from a warehouse deleted on another node (cached resolution evicted)", async () => {
		const sender = newSender();
		const api = client(c.base, await c.idp.tokenFor(sender));
		const wh = await api.post("/v1/warehouses", warehouseBody());
		assert.equal(wh.status, 201);
		const first = await api.post("/v1/intake/order", orderBody(wh.body.data.id));
		assert.equal(first.status, 201); // intake on the orders node now caches this warehouse
		const busy = await api.del(`/v1/warehouses/${wh.body.data.id}`);
		assert.equal(busy.status, 409, JSON.stringify(busy.body));
		assert.equal(busy.body.error, "warehouse_in_use");
		assert.deepEqual(busy.body.order_ids, [first.body.order_id]);
		// the order closes (delivered), so the warehouse may go
		const upd = await callAs(brokers[3], "intake.applyBookingUpdate", {
			order_id: first.body.order_id,
			sender_id: sender,
			attempt_id: 1,
			seq: 9,
			state: "booked",
			status: "delivered",
			awb_number: "14000000009999",
			courier: "Sandbox Express",
			logistic_id: 1,
		});
		assert.equal(upd.applied, true);
		const del = await api.del(`/v1/warehouses/${wh.body.data.id}`);
		assert.equal(del.status, 200, JSON.stringify(del.body));
		const after = await api.post("/v1/intake/order", orderBody(wh.body.data.id));
		assert.equal(after.status, 400, JSON.stringify(after.body));
		assert.equal(after.body.error, "invalid_pickup_address");
	});

	it("enforces roles inside the service for internal callers on another node", async () => {
		const sender = newSender();
		// documents' node calls intake on the orders node: meta.user crosses the wire
		const ro = await rejects(() =>
			callAs(brokers[3], "intake.createOrder", orderBody(1), as(sender, "merchant_finance")),
		);
		assert.equal(ro.code, 403);
		assert.deepEqual(ro.data.body, { error: "Read-only role", message: ro.data.body.message });
		const anon = await rejects(() => callAs(brokers[3], "intake.createOrder", orderBody(1)));
		assert.equal(anon.code, 401);
		const rows = await callAs(brokers[3], "warehouses.list", { include: "inactive" }, as(sender));
		assert.deepEqual((rows as any).data, []);
	});

	it("answers 400/404 envelopes, never 500, for bad input across services", async () => {
		const api = client(c.base, await c.idp.tokenFor(newSender()));
		const cases: Array<[string, string, unknown, number, string | undefined]> = [
			["GET", "/v1/pincode/12345", undefined, 400, "pincode must be 6 digits"],
			[
				"GET",
				"/v1/shipping/serviceable?from_pin=110001",
				undefined,
				400,
				"from_pin, to_pin and physical_weight are required",
			],
			[
				"GET",
				"/v1/shipping/serviceable?from_pin=110001&to_pin=56000x&physical_weight=1",
				undefined,
				400,
				"validation_failed",
			],
			["POST", "/v1/intake/order", { customer_order_no: "" }, 400, "validation_failed"],
			["POST", "/v1/shipping/book", { order_id: "abc" }, 400, "order_id must be a positive integer"],
			["GET", "/v1/orders/status", undefined, 400, "order_no is required"],
			["POST", "/v1/warehouses", { warehouse_name: "ab" }, 400, "validation_failed"],
			["DELETE", "/v1/warehouses/999999999", undefined, 404, "not_found"],
			["GET", "/v1/nope", undefined, 404, "not_found"],
		];
		for (const [method, path, body, status, code] of cases) {
			const r = await api.req(method, path, body);
			assert.equal(r.status, status, `${method} ${path}: ${JSON.stringify(r.body)}`);
			assert.equal(r.body.error, code, `${method} ${path}`);
			assert.ok(r.headers.get("x-request-id"));
		}
		const lbl = await api.get("/v1/documents/label/abc");
		assert.equal(lbl.status, 400);
		assert.equal(lbl.body.error, undefined);
		assert.ok(lbl.body.message);
	});
});
