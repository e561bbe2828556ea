/**
 * Gateway access rules (§5 rules 1–2): 403 `Read-only role` and 403
 * `forbidden` with `cap`, answered before the handler runs.
 */
import assert from "node:assert/strict";
import { newSender } from "../../helpers/broker";
import { calls, http, useGateway } from "./setup";

describe("gateway: roles and capabilities (§5 rules 1–2)", () => {
	const g = useGateway();

	it("403 Read-only role before the handler runs", async () => {
		const before = calls["intake.createOrder"] ?? 0;
		for (const role of ["merchant_finance", "merchant_support", "merchant_staff"] as const) {
			const t = await g.idp.tokenFor(newSender(), role);
			const r = await http(g.base, "POST", "/v1/intake/order", {
				token: t,
				body: { customer_order_no: "R1" },
			});
			assert.equal(r.status, 403, role);
			assert.equal(r.body.error, "Read-only role", role);
		}
		assert.equal(calls["intake.createOrder"] ?? 0, before);
	});

	it("403 forbidden with cap when the role lacks the capability, before the handler runs", async () => {
		const t = await g.idp.tokenFor(newSender(), "merchant_finance");
		const r = await http(g.base, "PATCH", "/v1/warehouses/5", { token: t, body: { warehouse_name: "New" } });
		assert.equal(r.status, 403);
		assert.equal(r.body.error, "forbidden");
		assert.equal(r.body.cap, "warehouses.write");
		assert.equal(typeof r.body.message, "string");
		assert.equal(calls["warehouses.update"] ?? 0, 0);
		const ok = await http(g.base, "PATCH", "/v1/warehouses/5", {
			token: await g.idp.tokenFor(newSender(), "merchant_ops"),
			body: { warehouse_name: "New" },
		});
		assert.equal(ok.status, 200);
		assert.deepEqual(ok.body, { data: { id: 5 } });
		assert.equal(calls["warehouses.update"], 1);
	});

	it("read-only roles may read", async () => {
		const t = await g.idp.tokenFor(newSender(), "merchant_staff");
		const r = await http(g.base, "GET", "/v1/warehouses", { token: t });
		assert.equal(r.status, 200);
		assert.deepEqual(r.body.data, []);
	});
});
