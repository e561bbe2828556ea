/**
 * Gateway probes: `/health` and `/ready` (registry-based readiness).
 */
import assert from "node:assert/strict";
import { API_ALIASES } from "../../../lib/gateway/routes";
import { newSender } from "../../helpers/broker";
import { FAKES, http, useGateway } from "./setup";

describe("gateway: probes", () => {
	const g = useGateway();

	describe("probes", () => {
		it("/health answers without auth", async () => {
			const r = await http(g.base, "GET", "/health");
			assert.equal(r.status, 200);
			assert.deepEqual(r.body, { status: "ok" });
		});

		it("/ready answers 200 when every aliased service is available, 503 not_ready otherwise", async () => {
			const r = await http(g.base, "GET", "/ready");
			assert.equal(r.status, 200);
			assert.equal(r.body.status, "ready");
			const names = [...new Set(Object.values(API_ALIASES).map((a) => a.split(".")[0]))].sort();
			assert.deepEqual(Object.keys(r.body.services).sort(), names);
			assert.ok(Object.values(r.body.services).every((v) => v === true));

			await g.broker.destroyService(g.broker.getLocalService("booking")!);
			const nr = await http(g.base, "GET", "/ready");
			assert.equal(nr.status, 503);
			assert.equal(nr.body.error, "not_ready");
			assert.deepEqual(nr.body.missing, ["booking"]);
			assert.equal(typeof nr.body.message, "string");

			// A call to the missing service: 503 service_unavailable (after authentication succeeds or not).
			const token = await g.idp.tokenFor(newSender());
			const b = await http(g.base, "POST", "/v1/shipping/book", { token, body: { order_id: 1 } });
			assert.equal(b.status, 503);
			assert.equal(b.body.error, "service_unavailable");
			g.broker.createService(FAKES.find((f) => f.name === "booking"));
			await g.broker.waitForServices("booking");
			const again = await http(g.base, "POST", "/v1/shipping/book", { token, body: { order_id: 1 } });
			assert.equal(again.status, 200);
		});
	});
});
