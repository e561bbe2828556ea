/**
 * Idempotency-Key on a route whose spec already dedupes (issue 25): order
 * create (§4.1, one order per `customer_order_no`) through the real gateway
 * and the real intake on another broker over NATS. The key replays the first
 * 201 byte for byte; a new key with the same order number still gets the
 * spec's `200 {order_id, deduped:true}`; the key with another body is 422.
 */
import assert from "node:assert/strict";
import { getSequelize, select } from "../../lib/platform/db";
import { useCluster } from "../helpers/cluster";
import { freshRef, orderBody } from "../helpers/fixtures";
import { merchantWithWarehouse } from "../helpers/flow";

describe("integration: Idempotency-Key on order create (issue 25)", function () {
	this.timeout(60_000);
	const cluster = useCluster(
		"it-idem",
		[["gateway"], ["pincode", "rates", "warehouses", "intake"]],
		["gateway", "intake", "warehouses"],
	);

	it("replays the first 201; a new key keeps the customer_order_no rule (200 deduped); another body is 422", async () => {
		const { sender, api, warehouse_id } = await merchantWithWarehouse(cluster);
		const body = orderBody(warehouse_id, freshRef());
		const key = { "idempotency-key": `order-${freshRef()}` };
		const first = await api.req("POST", "/v1/intake/order", body, key);
		assert.equal(first.status, 201, JSON.stringify(first.body));
		const again = await api.req("POST", "/v1/intake/order", body, key);
		assert.equal(again.status, 201, "the stored first answer, not the dedupe's 200");
		assert.equal(again.headers.get("idempotent-replayed"), "true");
		assert.deepEqual(again.body, first.body);
		const fresh = await api.req("POST", "/v1/intake/order", body, {
			"idempotency-key": `other-${freshRef()}`,
		});
		assert.equal(fresh.status, 200);
		assert.deepEqual(fresh.body, { order_id: first.body.order_id, deduped: true });
		const changed = await api.req(
			"POST",
			"/v1/intake/order",
			{ ...body, receiver: { ...(body.receiver as object), name: "Someone Else" } },
			key,
		);
		assert.equal(changed.status, 422);
		assert.equal(changed.body.error, "idempotency_key_reused");
		const rows = await select(getSequelize(), "SELECT status FROM idempotency.keys WHERE sender_id = $1", [
			sender,
		]);
		assert.deepEqual(rows.map((r) => (r as { status: number }).status).sort(), [200, 201]);
	});
});
