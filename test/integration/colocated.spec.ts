/**
 * Integration: several services in one broker that also has a NATS
 * transporter (the one-process mode with `TRANSPORTER`, a pod with a
 * `SERVICES` list), beside a second broker. A call to a co-located action
 * runs in the process (moleculer.config.ts `QueueGroupCalls`), a call to an
 * action hosted only elsewhere crosses NATS; either way the answer, its status
 * and its `meta` are those of the action called, never a previous call's.
 */
import { strict as assert } from "node:assert";
import type { ServiceBroker } from "moleculer";
import { newSender } from "../helpers/broker";
import { useCluster } from "../helpers/cluster";
import { warehouseBody } from "../helpers/fixtures";
import { client, typicalFlow } from "../helpers/flow";

/** Names of the actions `broker` sends as NATS requests while `fn` runs. */
async function natsRequests(broker: ServiceBroker, fn: () => Promise<void>): Promise<string[]> {
	type Packet = { type: string; payload: { action?: string } };
	const transit = broker.transit as unknown as { publish(p: Packet): Promise<unknown> };
	const publish = transit.publish;
	const sent: string[] = [];
	transit.publish = function (this: unknown, p: Packet) {
		if (p.type === "REQ" && p.payload.action) sent.push(p.payload.action);
		return publish.call(this, p);
	};
	try {
		await fn();
	} finally {
		transit.publish = publish;
	}
	return sent;
}

describe("integration: co-located services with a transporter", function () {
	this.timeout(90_000);
	const c = useCluster(
		"coloc",
		[
			["gateway", "pincode", "rates", "warehouses", "intake", "booking", "simulator"],
			["documents", "ndr"],
		],
		["pincode", "rates", "warehouses", "intake", "booking", "documents", "ndr"],
	);

	it("answers each route with its own status: 201, 200, 202 never leak into the next call", async () => {
		const api = client(c.base, await c.idp.tokenFor(newSender()));
		const wh = await api.post("/v1/warehouses", warehouseBody());
		assert.equal(wh.status, 201, JSON.stringify(wh.body));
		assert.equal(typeof wh.body.data.id, "number");
		const q = "/v1/shipping/serviceable?from_pin=110001&to_pin=560001&physical_weight=0.8&order_type=1";
		for (let i = 0; i < 3; i++) {
			const s = await api.get(q);
			assert.equal(s.status, 200, JSON.stringify(s.body));
			const again = await api.post("/v1/warehouses", warehouseBody());
			assert.equal(again.status, 201, JSON.stringify(again.body));
		}
	});

	it("runs the typical flow, label from the other broker included", async () => {
		const r = await typicalFlow(c.base, await c.idp.tokenFor(newSender()));
		assert.ok(r.awb_number.length >= 10);
	});

	it("serves a co-located action without a NATS request, a remote one over NATS", async () => {
		const [core] = c.brokers;
		const api = client(c.base, await c.idp.tokenFor(newSender()));
		const local = await natsRequests(core, async () => {
			const r = await api.get("/v1/pincode/560001");
			assert.equal(r.status, 200);
			assert.equal(r.body.state, "Karnataka");
		});
		assert.deepEqual(local, [], "pincode lives in the gateway's broker: no request sent");
		const remote = await natsRequests(core, async () => {
			const r = await api.get("/v1/documents/label/999999999");
			assert.equal(r.status, 404);
		});
		assert.ok(
			remote.some((a) => a.startsWith("documents.")),
			`documents lives on the other broker: ${remote.join(", ")}`,
		);
	});
});
