/**
 * The unshipped queue over real HTTP (spec §4.3, §5, §7): the gateway's
 * aliases (lib/gateway/routes.ts) reach `intake.listUnshipped`,
 * `unshippedErrorTypes`, `unshippedCounts`, `editUnshipped` and `hideOrder`
 * — the literal `/v1/orders/unshipped…` paths are not taken by
 * `/v1/orders/:id`, and `/v1/orders/status` still reaches `intake.status` —
 * with bearer tokens of a real development IdP (JWKS over HTTP), the real
 * intake service on real PostgreSQL, and fakes of warehouses and booking.
 */
import assert from "node:assert/strict";
import type { ServiceBroker } from "moleculer";
import { newSender, startWithGateway } from "../../helpers/broker";
import { fakeService } from "../../helpers/call";
import { useDevIdp } from "../../helpers/devidp";
import { warehouse } from "../../helpers/fixtures";
import { http } from "../gateway/setup";
import { forwardBody, warehouseOf, warehouseOwner } from "./setup";
import { closeCalls, FAKE_BOOKING } from "./unshipped-setup";

describe("intake: unshipped queue over HTTP (§4.3 routes)", function () {
	this.timeout(60_000);
	let broker: ServiceBroker;
	let base: string;
	const idp = useDevIdp();

	before(async () => {
		({ broker, base } = await startWithGateway([
			"intake",
			fakeService("warehouses", {
				resolve(ctx) {
					const { sender_id, id } = ctx.params;
					return warehouseOwner.get(id) === sender_id ? warehouse(sender_id, { id }) : null;
				},
			}),
			FAKE_BOOKING,
		]));
	});
	after(async () => {
		await broker?.stop();
	});

	/** Creates an order over HTTP as the holder of `token`; answers its id. */
	async function createOrder(token: string, sender: number, ref: string): Promise<number> {
		const r = await http(base, "POST", "/v1/intake/order", {
			token,
			body: forwardBody(warehouseOf(sender), ref),
		});
		assert.equal(r.status, 201, r.text);
		return r.body.order_id;
	}

	it("lists, filters, pages, counts, edits and hides through the gateway", async () => {
		const sender = newSender();
		const token = await idp.tokenFor(sender);
		const a = await createOrder(token, sender, "HTTP-A");
		const b = await createOrder(token, sender, "HTTP-B");

		const list = await http(base, "GET", "/v1/orders/unshipped?limit=1", { token });
		assert.equal(list.status, 200, list.text);
		assert.deepEqual(
			list.body.data.map((x: any) => [x.order_id, x.error_type, x.order_value, x.confirmation]),
			[[b, "not_booked", 1299.5, "pending"]],
		);
		assert.equal(list.body.pagination.mode, "cursor");
		const next = await http(
			base,
			"GET",
			`/v1/orders/unshipped?limit=1&cursor=${encodeURIComponent(list.body.pagination.nextCursor)}`,
			{ token },
		);
		assert.deepEqual(
			[next.status, next.body.data.map((x: any) => x.order_id), next.body.pagination.nextCursor],
			[200, [a], null],
		);

		const ot = await http(base, "GET", "/v1/orders/unshipped?order_type=2", { token });
		const otCode = "order_type: must be 0 (prepaid) or 1 (COD)";
		assert.deepEqual([ot.status, ot.body], [400, { error: otCode, message: otCode, field: "order_type" }]);
		const amt = await http(base, "GET", "/v1/orders/unshipped?amount_max=1.999", { token });
		const amtCode = "amount_max: must be a rupee amount";
		assert.deepEqual(
			[amt.status, amt.body],
			[400, { error: amtCode, message: amtCode, field: "amount_max" }],
		);
		const cur = await http(base, "GET", "/v1/orders/unshipped?cursor=abc.def", { token });
		assert.deepEqual([cur.status, cur.body.error], [400, "cursor: unrecognised shape"]);

		const types = await http(base, "GET", "/v1/orders/unshipped/error-types", { token });
		assert.equal(types.status, 200, types.text);
		assert.equal(types.body.data.find((e: any) => e.error_type === "not_booked").count, 2);

		const counts = await http(base, "GET", "/v1/orders/unshipped/counts", { token });
		assert.deepEqual([counts.status, counts.body], [200, { total: 2, unshipped: 2, failed: 0, in_queue: 0 }]);
		const rev = await http(base, "GET", "/v1/orders/unshipped/counts?shipment_type=1", { token });
		assert.deepEqual([rev.status, rev.body], [200, { unshipped: 0, failed: 0 }]);
		const st = await http(base, "GET", "/v1/orders/unshipped/counts?shipment_type=2", { token });
		const stCode = "shipment_type: must be 0 (forward) or 1 (reverse)";
		assert.deepEqual([st.status, st.body], [400, { error: stCode, message: stCode, field: "shipment_type" }]);

		const patch = await http(base, "PATCH", `/v1/orders/unshipped/${a}`, {
			token,
			body: { city: "Mysuru", sender_id: sender + 1 },
		});
		assert.deepEqual([patch.status, patch.body], [200, { order_id: a, status: "new", changed: ["city"] }]);
		const unknown = await http(base, "PATCH", `/v1/orders/unshipped/${a}`, { token, body: { phone: "1" } });
		assert.deepEqual(
			[unknown.status, unknown.body.error, unknown.body.field],
			[400, "validation_failed", "phone"],
		);
		const pin = await http(base, "PATCH", `/v1/orders/unshipped/${a}`, { token, body: { pincode: "0" } });
		assert.deepEqual([pin.status, pin.body.field], [400, "pincode"]);

		const hide = await http(base, "POST", `/v1/orders/${b}/hide`, { token });
		assert.deepEqual(
			[hide.status, hide.body],
			[200, { order_id: b, order_no: "HTTP-B", hidden: true, closed: false, refunded: 0 }],
		);
		assert.deepEqual(
			closeCalls.filter((c) => c.order_id === b),
			[{ sender_id: sender, order_id: b }],
		);
		const after = await http(base, "GET", "/v1/orders/unshipped", { token });
		assert.deepEqual(
			after.body.data.map((x: any) => [x.order_id, x.address.city]),
			[[a, "Mysuru"]],
		);

		// the literal /v1/orders/status still reaches intake.status
		const status = await http(base, "GET", "/v1/orders/status?order_no=HTTP-A", { token });
		assert.deepEqual(
			[status.status, status.body.order_no, status.body.state],
			[200, "HTTP-A", "not_shipped"],
		);
	});

	it("403 for read-only roles on the edit and the hide (before the handler); 404 for another account's order", async () => {
		const sender = newSender();
		const token = await idp.tokenFor(sender);
		const id = await createOrder(token, sender, "HTTP-RO");
		for (const role of ["merchant_finance", "merchant_support", "merchant_staff"] as const) {
			const ro = await idp.tokenFor(sender, role);
			const p = await http(base, "PATCH", `/v1/orders/unshipped/${id}`, {
				token: ro,
				body: { city: "Pune" },
			});
			assert.deepEqual([p.status, p.body.error], [403, "Read-only role"], role);
			const h = await http(base, "POST", `/v1/orders/${id}/hide`, { token: ro });
			assert.deepEqual([h.status, h.body.error], [403, "Read-only role"], role);
			const l = await http(base, "GET", "/v1/orders/unshipped", { token: ro });
			assert.equal(l.status, 200, "reads are open to every role");
		}
		const other = await idp.tokenFor(newSender());
		const p = await http(base, "PATCH", `/v1/orders/unshipped/${id}`, {
			token: other,
			body: { city: "Pune" },
		});
		assert.deepEqual([p.status, p.body], [404, { error: "order not found", message: "order not found" }]);
		const h = await http(base, "POST", `/v1/orders/${id}/hide`, { token: other });
		assert.deepEqual([h.status, h.body], [404, { error: "order not found", message: "order not found" }]);
		const anon = await http(base, "GET", "/v1/orders/unshipped");
		assert.equal(anon.status, 401);
	});
});
