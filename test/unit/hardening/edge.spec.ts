/**
 * The edge text rule and undecodable bodies through the real gateway and the
 * real services over real NATS (issue 31): the inputs that reached PostgreSQL
 * (500 `invalid byte sequence for encoding "UTF8": 0x00`) or the sandbox
 * courier (503) are 400 `validation_failed` at the gateway, in a query value,
 * a path parameter, a body value and a body key; a mismatched
 * `Content-Encoding` is 400 `invalid_body`, a non-UTF-8 charset 415; the
 * gateway logs no error. The same rules on fake services (one process) are in
 * test/unit/gateway/edge.spec.ts.
 */
import { strict as assert } from "node:assert";
import { gzipSync } from "node:zlib";
import { typicalFlow } from "../../helpers/flow";
import { type Answer, assertEnvelope, send, useWorld } from "./setup";

const CONTROL = "must not contain control characters";

describe("hardening: the edge text rule and undecodable bodies on the real services", function () {
	this.timeout(90_000);
	const w = useWorld("hardening-edge");
	/** error-level entries of the gateway's logger (the 500 log line) */
	const errors: unknown[][] = [];
	let booked: number;
	let webhookId: number;

	before(async () => {
		const gw = w.cluster.brokers[0].getLocalService("gateway") as unknown as {
			logger: { error: (...a: unknown[]) => void };
		};
		gw.logger.error = (...a: unknown[]) => {
			errors.push(a);
		};
		booked = (await typicalFlow(w.base, w.token)).order_id;
		// the sandbox (SANDBOX=1 in the cluster) accepts a loopback receiver; nothing is delivered in this file
		const hook = await send(w, "POST", "/v1/webhooks", {
			url: "http://127.0.0.1:9/hooks",
			events: ["order.created"],
			description: "ops",
		});
		assert.equal(hook.status, 201, hook.text);
		webhookId = hook.body.data?.id ?? hook.body.id;
		assert.ok(webhookId, hook.text);
	});

	beforeEach(() => {
		errors.length = 0;
	});
	afterEach(function () {
		if (this.currentTest?.state === "passed") assert.deepEqual(errors, [], "the gateway logged an error");
	});

	function refused(a: Answer, field: string): void {
		assertEnvelope(a, "/v1/");
		assert.equal(a.status, 400, a.text);
		assert.equal(a.body.error, "validation_failed", a.text);
		assert.deepEqual(a.body.details, [`${field}: ${CONTROL}`], a.text);
	}

	it("POST /v1/ndr/{id}/comment: a NUL in the comment", async () => {
		refused(await send(w, "POST", "/v1/ndr/1/comment", { comment: "a\u0000b" }), "comment");
	});

	it("GET /v1/orders/status: a NUL in order_no; the clean value still answers", async () => {
		refused(await send(w, "GET", "/v1/orders/status?order_no=A%00B"), "order_no");
		assert.equal((await send(w, "GET", "/v1/orders/status?order_no=AB")).status, 404);
	});

	it("GET /v1/orders/unshipped: a NUL in customer_order_no; a query key", async () => {
		refused(await send(w, "GET", "/v1/orders/unshipped?customer_order_no=x%00"), "customer_order_no");
		refused(await send(w, "GET", "/v1/orders/unshipped?x%00=1"), "parameter names");
		assert.equal((await send(w, "GET", "/v1/orders/unshipped?customer_order_no=x")).status, 200);
	});

	it("webhooks: a NUL in description on create and on update, and in a path id", async () => {
		const body = { url: "http://127.0.0.1:9/hooks", events: ["order.created"], description: "a\u0000b" };
		refused(await send(w, "POST", "/v1/webhooks", body), "description");
		refused(await send(w, "PATCH", `/v1/webhooks/${webhookId}`, { description: "\u0000" }), "description");
		refused(await send(w, "GET", `/v1/webhooks/${webhookId}%00`), "id");
		const ok = await send(w, "PATCH", `/v1/webhooks/${webhookId}`, { description: "line 1\nline 2" });
		assert.equal(ok.status, 200, ok.text);
	});

	it("POST /v1/sandbox/orders/{order_id}/events: a NUL in reason (was 503 from the simulator)", async () => {
		refused(
			await send(w, "POST", `/v1/sandbox/orders/${booked}/events`, {
				event: "undelivered",
				reason: "a\u0000b",
			}),
			"reason",
		);
		refused(
			await send(w, "POST", `/v1/sandbox/orders/${booked}%00/events`, { event: "undelivered" }),
			"order_id",
		);
	});

	it("a body key with a NUL, nested or not, on order intake and a warehouse", async () => {
		const a = await send(w, "POST", "/v1/intake/order", '{"order":{"a\\u0000":1}}');
		assert.equal(a.status, 400, a.text);
		assert.deepEqual(a.body.details, [`order: keys ${CONTROL}`]);
		refused(await send(w, "POST", "/v1/warehouses", '{"\\u0000":1}'), "parameter names");
	});

	it("a key naming a built-in property of objects (record 0128): 400 naming its object, never 500", async () => {
		const BUILT_IN =
			"keys must not name a built-in property of objects (toString, constructor, __proto__, …)";
		// the fuzzer's counterexample: an enum's failure message could not render the value (500)
		const t = await send(
			w,
			"POST",
			"/v1/settings/notifications/test",
			'{"channel":[{"toString":""}],"to":"9876543210"}',
		);
		assertEnvelope(t, "/v1/");
		assert.equal(t.status, 400, t.text);
		assert.deepEqual(t.body.details, [`channel[0]: ${BUILT_IN}`], t.text);
		const o = await send(w, "POST", "/v1/intake/order", '{"receiver":{"name":{"valueOf":1,"toString":""}}}');
		assert.equal(o.status, 400, o.text);
		assert.deepEqual(o.body.details, [`receiver.name: ${BUILT_IN}`], o.text);
		const q = await send(w, "GET", "/v1/orders/status?toString=1&order_no=A");
		assert.equal(q.status, 400, q.text);
		assert.deepEqual(q.body.details, [`parameter names: ${BUILT_IN.slice("keys ".length)}`], q.text);
	});

	it("a gzip body that is not gzip is 400 invalid_body; a real one is read; utf-16 is 415", async () => {
		const body = Buffer.from(JSON.stringify({ comment: "Buyer asked for an evening delivery" }));
		const post = (b: Buffer, headers: Record<string, string>) =>
			fetch(`${w.base}/v1/ndr/1/comment`, {
				method: "POST",
				headers: { authorization: `Bearer ${w.token}`, "content-type": "application/json", ...headers },
				body: b,
			}).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: string } }));
		const bad = await post(body, { "content-encoding": "gzip" });
		assert.deepEqual([bad.status, bad.body.error], [400, "invalid_body"]);
		const good = await post(gzipSync(body), { "content-encoding": "gzip" });
		assert.equal(good.status, 404, JSON.stringify(good.body));
		const u16 = await post(Buffer.from(body.toString(), "utf16le"), {
			"content-type": "application/json; charset=utf-16le",
		});
		assert.deepEqual([u16.status, u16.body.error], [415, "unsupported_media_type"]);
	});
});
