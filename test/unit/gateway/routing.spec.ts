/**
 * Gateway routing: 404 for unknown routes, 405 with `Allow` and OPTIONS 204,
 * path and query params as flat strings, no prototype pollution from a body.
 */
import assert from "node:assert/strict";
import { newSender } from "../../helpers/broker";
import { http, useGateway } from "./setup";

describe("gateway: routing and params", () => {
	const g = useGateway();

	let token: string;
	before(async () => {
		token = await g.idp.tokenFor(newSender());
	});

	it("unknown routes answer the 404 envelope (with or without a token, any prefix)", async () => {
		for (const p of [
			"/v1/nope",
			"/nope",
			"/",
			"/v1",
			"/v1/intake/order/extra",
			"/v1/$node/list",
			"/gateway/health",
		]) {
			const r = await http(g.base, "GET", p, { token });
			assert.equal(r.status, 404, p);
			assert.deepEqual(r.body, { error: "not_found", message: "Route not found" }, p);
			assert.ok(r.headers.get("x-request-id"), p);
		}
		const r = await http(g.base, "POST", "/v1/nope", { body: "{not json" });
		assert.equal(r.status, 404);
	});

	it("a known path with another method answers 405 method_not_allowed with Allow (HEAD wherever GET); OPTIONS answers 204", async () => {
		const r = await http(g.base, "POST", "/v1/pincode/110001", { token, body: {} });
		assert.equal(r.status, 405);
		assert.equal(r.body.error, "method_not_allowed");
		assert.equal(r.headers.get("allow"), "GET, HEAD");
		const w = await http(g.base, "PUT", "/v1/warehouses/3", { token, body: {} });
		assert.equal(w.status, 405);
		assert.deepEqual(w.headers.get("allow")?.split(", ").sort(), ["DELETE", "PATCH"]);
		const o = await http(g.base, "OPTIONS", "/v1/warehouses", {
			headers: { "access-control-request-method": "GET" },
		});
		assert.equal(o.status, 204);
		assert.deepEqual(o.headers.get("allow")?.split(", ").sort(), ["GET", "HEAD", "POST"]);
		assert.equal(o.headers.get("access-control-allow-origin"), null);
	});

	it("path and query params reach the action as strings; repeated keys keep the last; no nesting", async () => {
		const r = await http(g.base, "GET", "/v1/orders/status?order_no=A&order_no=B&x[y]=1&n=5&__proto__=z", {
			token,
		});
		assert.equal(r.status, 200);
		assert.deepEqual(r.body.params, { order_no: "B", "x[y]": "1", n: "5" });
		const p = await http(g.base, "GET", "/v1/pincode/%20110001", { token });
		assert.deepEqual(p.body, { found: false, pincode: " 110001", city: "", state: "" });
	});

	it("a __proto__ key in the body does not change the params prototype", async () => {
		const r = await http(g.base, "POST", "/v1/intake/order", {
			token,
			body: '{"__proto__": {"polluted": "yes"}, "customer_order_no": "P1"}',
			headers: { "content-type": "application/json" },
		});
		assert.equal(r.status, 201);
		assert.equal(r.body.polluted, null);
		assert.equal(r.body.proto_is_object, true);
		assert.equal(({} as any).polluted, undefined);
	});
});
