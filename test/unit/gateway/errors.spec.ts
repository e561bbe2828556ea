/**
 * Gateway error mapping (§2.11, §7): body errors (400 invalid_json, 413),
 * broker validation (400 validation_failed vs nested 500), contract bodies
 * verbatim, 500 envelopes without leaks, the documents `{message}` shape.
 */
import assert from "node:assert/strict";
import { newSender } from "../../helpers/broker";
import { http, PDF, useGateway } from "./setup";

describe("gateway: error mapping and envelopes", () => {
	const g = useGateway();
	let token: string;
	before(async () => {
		token = await g.idp.tokenFor(newSender());
	});

	describe("request bodies and validation", () => {
		it("400 invalid_json for malformed JSON, a non-object body, or a form body", async () => {
			let r = await http(g.base, "POST", "/v1/intake/order", {
				token,
				body: '{"customer_order_no": ',
				headers: { "content-type": "application/json" },
			});
			assert.equal(r.status, 400);
			assert.equal(r.body.error, "invalid_json");
			assert.equal(typeof r.body.message, "string");
			r = await http(g.base, "POST", "/v1/intake/order", { token, body: [{ a: 1 }] });
			assert.equal(r.status, 400);
			assert.equal(r.body.error, "invalid_json");
			r = await http(g.base, "POST", "/v1/intake/order", {
				token,
				body: "a=1&b=2",
				headers: { "content-type": "application/x-www-form-urlencoded" },
			});
			assert.equal(r.status, 400);
			assert.equal(r.body.error, "invalid_json");
		});

		it("413 payload_too_large over 1 MB", async () => {
			const big = JSON.stringify({ customer_order_no: "B", pad: "x".repeat(1_100_000) });
			const r = await http(g.base, "POST", "/v1/intake/order", {
				token,
				body: big,
				headers: { "content-type": "application/json" },
			});
			assert.equal(r.status, 413);
			assert.deepEqual(Object.keys(r.body).sort(), ["error", "message"]);
			assert.equal(r.body.error, "payload_too_large");
		});

		it("broker ValidationError → 400 validation_failed with details", async () => {
			const r = await http(g.base, "GET", "/v1/shipping/serviceable?from_pin=12&to_pin=110001", { token });
			assert.equal(r.status, 400);
			assert.equal(r.body.error, "validation_failed");
			assert.ok(Array.isArray(r.body.details) && r.body.details.length === 1);
			assert.match(r.body.details[0], /^from_pin: /);
			const ok = await http(g.base, "GET", "/v1/shipping/serviceable?from_pin=560001&to_pin=110001", {
				token,
			});
			assert.equal(ok.status, 200);
		});

		it("a ValidationError of an internal call made by the handler → 500 internal_error, not 400", async () => {
			const r = await http(g.base, "DELETE", "/v1/warehouses/999", {
				token,
				headers: { "x-request-id": "nested-422" },
			});
			assert.equal(r.status, 500);
			assert.deepEqual(r.body, {
				error: "internal_error",
				message: "Internal error",
				request_id: "nested-422",
			});
			const ok = await http(g.base, "DELETE", "/v1/warehouses/5", { token });
			assert.equal(ok.status, 200);
			assert.deepEqual(ok.body, { data: { id: 5, deleted: 1 } });
		});
	});

	describe("errors", () => {
		it("an ApiError body is answered verbatim with its status", async () => {
			const r = await http(g.base, "GET", "/v1/orders/status?order_no=missing", { token });
			assert.equal(r.status, 404);
			assert.deepEqual(r.body, {
				error: "order_not_found",
				message: "No order with that reference on this account",
			});
		});

		it("a plain Error → 500 internal_error with the request id, no stack or message leak", async () => {
			const r = await http(g.base, "GET", "/v1/orders/status?order_no=boom", {
				token,
				headers: { "x-request-id": "req-500.a_b" },
			});
			assert.equal(r.status, 500);
			assert.deepEqual(r.body, {
				error: "internal_error",
				message: "Internal error",
				request_id: "req-500.a_b",
			});
			assert.ok(!r.text.includes("exploded") && !r.text.includes("at ") && !r.text.includes("stack"));
		});

		it("documents: PDF bytes round-trip; documents errors verbatim; gateway 400/404 as {message}", async () => {
			const r = await http(g.base, "GET", "/v1/documents/label/42", { token });
			assert.equal(r.status, 200);
			assert.equal(r.headers.get("content-type"), "application/pdf");
			assert.equal(r.headers.get("content-disposition"), 'inline; filename="label-42.pdf"');
			assert.equal(r.headers.get("x-content-type-options"), "nosniff");
			assert.ok(r.bytes.equals(PDF));
			const nf = await http(g.base, "GET", "/v1/documents/label/404", { token });
			assert.equal(nf.status, 404);
			assert.deepEqual(nf.body, { message: "not found" });
			const bad = await http(g.base, "GET", "/v1/documents/label/%ZZ", { token });
			assert.equal(bad.status, 400);
			assert.deepEqual(Object.keys(bad.body), ["message"]);
			const unknown = await http(g.base, "GET", "/v1/documents/nothing", { token });
			assert.equal(unknown.status, 404);
			assert.deepEqual(unknown.body, { message: "Route not found" });
			const anon = await http(g.base, "GET", "/v1/documents/label/42");
			assert.equal(anon.status, 401);
			assert.deepEqual(anon.body, { error: "Authentication required" });
		});
	});
});
