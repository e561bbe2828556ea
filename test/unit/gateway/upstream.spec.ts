/**
 * Guards the seven moleculer-web internals the gateway still overrides
 * (services/gateway.service.ts, file head): `createAlias`, `errorHandler`, `httpHandler`,
 * `parseQueryString`, `resolveAlias`, `routeHandler` and `sendResponse` (the look-up is compared with upstream's in
 * test/unit/gateway/alias-index.spec.ts). moleculer-web is pinned to an exact version; these tests
 * fail when the installed version differs from the pin, when the gateway
 * overrides another upstream method, or when an overridden method changes
 * its signature or the behaviour the override exists for.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import ApiGateway from "moleculer-web";
import { shareAnswer } from "../../../lib/platform/shared-answers";
import gatewaySchema from "../../../services/gateway.service";

type Method = (this: unknown, ...args: unknown[]) => unknown;
const upstream = (ApiGateway as unknown as { methods: Record<string, Method> }).methods;
const ours = gatewaySchema.methods as Record<string, Method>;

/**
 * moleculer-web's documented hooks, not overrides: `authenticate` / `authorize`, and `encodeResponse` (its
 * CHANGELOG: "You can overwrite it in order to use other response encoding instead of JSON").
 */
const DOCUMENTED_HOOKS = ["authenticate", "authorize", "encodeResponse"];

/** A ServerResponse stand-in recording what a method wrote. */
function fakeResponse() {
	const headers: Record<string, unknown> = {};
	return {
		statusCode: 200,
		headersSent: false,
		body: undefined as unknown,
		headers,
		setHeader(k: string, v: unknown) {
			headers[k.toLowerCase()] = v;
		},
		getHeader(k: string) {
			return headers[k.toLowerCase()];
		},
		removeHeader(k: string) {
			delete headers[k.toLowerCase()];
		},
		end(chunk?: unknown) {
			this.body = chunk;
		},
	};
}

describe("gateway: moleculer-web overrides (pinned upstream)", () => {
	it("the installed moleculer-web is exactly the version package.json pins", () => {
		const pkg = JSON.parse(readFileSync(resolve(__dirname, "../../../package.json"), "utf8"));
		const pin = pkg.dependencies["moleculer-web"];
		assert.match(pin, /^\d+\.\d+\.\d+$/, "moleculer-web must be pinned to an exact version");
		const installed = JSON.parse(readFileSync(require.resolve("moleculer-web/package.json"), "utf8")).version;
		assert.equal(installed, pin);
		assert.equal(pin, "0.11.0");
	});

	it("the gateway overrides exactly createAlias, errorHandler, httpHandler, parseQueryString, resolveAlias, routeHandler and sendResponse of moleculer-web's methods", () => {
		const overridden = Object.keys(ours)
			.filter((m) => m in upstream && !DOCUMENTED_HOOKS.includes(m))
			.sort();
		assert.deepEqual(overridden, [
			"createAlias",
			"errorHandler",
			"httpHandler",
			"parseQueryString",
			"resolveAlias",
			"routeHandler",
			"sendResponse",
		]);
	});

	it("upstream httpHandler is the one ours follows: the same fields, request id, rest call, 404 and error path", () => {
		// ours (services/gateway.service.ts) does each of these, with the rest handler run in the request hooks only
		const src = String(upstream.httpHandler);
		for (const line of [
			"req.$startTime = process.hrtime();",
			"req.$service = this;",
			"req.$next = next;",
			"res.$service = this;",
			"res.locals = res.locals || {};",
			'let requestID = req.headers["x-request-id"];',
			'if (req.headers["x-correlation-id"]) requestID = req.headers["x-correlation-id"];',
			"const result = await this.actions.rest({ req, res }, options);",
			"const shouldBreak = this.corsHandler(this.settings, req, res);",
			"this.send404(req, res);",
			"this.errorHandler(req, res, err);",
		])
			assert.ok(src.includes(line), `upstream httpHandler no longer has: ${line}`);
	});

	it("encodeResponse: ours is upstream's JSON, made once for a shared answer", () => {
		for (const data of [{ a: 1, b: [1, "x", null] }, [1, 2], "text", 42, null, undefined])
			assert.equal(
				ours.encodeResponse.call({}, {}, {}, data),
				upstream.encodeResponse.call({}, {}, {}, data),
			);
		const kept = shareAnswer({ data: [{ logistic_id: 1, total: 99.5 }] });
		const first = ours.encodeResponse.call({}, {}, {}, kept);
		assert.equal(first, JSON.stringify(kept));
		assert.equal(ours.encodeResponse.call({}, {}, {}, kept), first);
		// a long shared answer (a list page) is its JSON's UTF-8 bytes, made once
		const page = shareAnswer({
			data: Array.from({ length: 150 }, (_, i) => ({ order_id: i, city: "Bengaluru ₹" })),
		});
		const body = ours.encodeResponse.call({}, {}, {}, page);
		assert.ok(Buffer.isBuffer(body));
		assert.equal(body.toString("utf8"), upstream.encodeResponse.call({}, {}, {}, page));
		assert.equal(ours.encodeResponse.call({}, {}, {}, page), body);
	});

	it("parseQueryString: ours splits the path as upstream does and returns the query beginRequest parsed", () => {
		for (const url of [
			"/v1/orders/status?order_no=A-1&x=2",
			"/v1/pincode/560001",
			"/?a=1",
			"/v1/orders?",
			"/a?b?c=1",
		]) {
			const up = upstream.parseQueryString.call({ settings: {} }, { url }) as { url: string; query: object };
			const preset = { order_no: "given" };
			const mine = ours.parseQueryString.call({}, { url, query: preset }) as { url: string; query: object };
			assert.equal(mine.url, up.url, url);
			assert.equal(mine.query, preset, url);
			// without a preset query it parses as beginRequest does: flat strings, the same keys as upstream here
			const bare = ours.parseQueryString.call({}, { url }) as { url: string; query: object };
			assert.deepEqual(bare.query, up.query, url);
		}
		// upstream's parse is a second one: its handler keeps a req.query already set (asserted below by source)
		assert.deepEqual(
			(upstream.parseQueryString.call({ settings: {} }, { url: "/x?a[b]=1" }) as { query: object }).query,
			{ a: { b: "1" } },
		);
	});

	it("upstream errorHandler(req, res, err) logs a 5xx with its stack, then calls sendError", () => {
		assert.equal(typeof upstream.errorHandler, "function");
		assert.equal(upstream.errorHandler.length, 3);
		const logged: unknown[][] = [];
		const sent: unknown[] = [];
		const self = {
			settings: { log4XXResponses: false },
			logger: { error: (...a: unknown[]) => logged.push(a) },
			sendError: (_req: unknown, _res: unknown, err: unknown) => sent.push(err),
		};
		const err = Object.assign(new Error("down"), { code: 503 });
		upstream.errorHandler.call(self, {}, {}, err);
		assert.equal(logged.length, 1, "upstream logs 5xx (the reason for our override)");
		assert.ok(logged[0].includes(err.stack));
		assert.deepEqual(sent, [err]);
	});

	it("our errorHandler only calls sendError (no stack logging)", () => {
		const sent: unknown[] = [];
		const self = {
			logger: { error: () => assert.fail("must not log") },
			sendError: (_req: unknown, _res: unknown, err: unknown) => sent.push(err),
		};
		const err = Object.assign(new Error("down"), { code: 503 });
		ours.errorHandler.call(self, {}, {}, err);
		assert.deepEqual(sent, [err]);
	});

	it("upstream sendResponse(req, res, data, action) warns on a 201 without $location; ours does not", () => {
		assert.equal(typeof upstream.sendResponse, "function");
		assert.equal(upstream.sendResponse.length, 4);
		const request = () => ({
			method: "POST",
			url: "/v1/intake/order",
			headers: {},
			$route: { etag: false },
			$ctx: { meta: { $statusCode: 201 } },
		});
		const warnings: unknown[][] = [];
		const logger = { warn: (...a: unknown[]) => warnings.push(a) };
		const self = { logger, encodeResponse: (_q: unknown, _s: unknown, d: unknown) => JSON.stringify(d) };

		const upstreamRes = fakeResponse();
		upstream.sendResponse.call(self, request(), upstreamRes, { order_id: 1 }, undefined);
		assert.equal(warnings.length, 1, "upstream warns (the reason for our override)");
		assert.match(String(warnings[0][0]), /\$location/);
		assert.equal(upstreamRes.statusCode, 201);
		assert.equal(upstreamRes.body, '{"order_id":1}');
		assert.equal(upstreamRes.headers.location, undefined);

		warnings.length = 0;
		const quietSelf = { ...self, logger: { warn: () => undefined } };
		const ourRes = fakeResponse();
		ours.sendResponse.call({ ...self, quietSelf }, request(), ourRes, { order_id: 1 }, undefined);
		assert.equal(warnings.length, 0);
		assert.equal(ourRes.statusCode, 201);
		assert.equal(ourRes.body, '{"order_id":1}');
		assert.equal(ourRes.headers["content-type"], "application/json; charset=utf-8");
		assert.equal(ourRes.headers.location, undefined);
	});

	it("upstream keeps a req.query set by rootCallOptions and routes OPTIONS by Access-Control-Request-Method", () => {
		// The hooks the gateway relies on instead of overriding parseQueryString/resolveAlias/httpHandler.
		const src = readFileSync(require.resolve("moleculer-web/src/index.js"), "utf8");
		assert.ok(src.includes("this.settings.rootCallOptions.call(this, options, req, res)"));
		assert.ok(src.includes("if (!req.query) req.query = parsed.query;"));
		assert.ok(src.includes('method = req.headers["access-control-request-method"];'));
		assert.ok(src.includes("this.send404(req, res);"));
		assert.ok(src.includes("this.sendError(req, res, new NotFoundError());"));
	});
});
