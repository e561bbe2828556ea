/**
 * Gateway helpers without HTTP: bearer parsing, the verified-token cache,
 * request ids, query parsing, the error mapping table and the route table.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { Errors } from "moleculer";
import { answerFor, GatewayError, isUnavailable } from "../../lib/gateway/errors";
import {
	accessLogLine,
	accessLogPolicy,
	accessLogWeight,
	EVERY_REQUEST,
	parseQuery,
	pathOf,
	requestIdOf,
} from "../../lib/gateway/http";
import { API_ALIASES, actionsByService, DEV_IDP_ALIASES } from "../../lib/gateway/routes";
import { bearerToken, cachedVerifier } from "../../lib/gateway/tokens";
import { type AuthUser, createVerifier, invalidToken, userFor } from "../../lib/platform/auth";
import { setting } from "../../lib/platform/config";
import { createDevIdp } from "../../lib/platform/devidp";
import { apiError, documentsConflict, documentsError } from "../../lib/platform/errors";
import { compile, describe as describeFailure } from "../../lib/platform/validate";
import { rejects } from "../helpers/broker";

describe("gateway helpers", () => {
	describe("bearerToken", () => {
		it("extracts the token of a well-formed Bearer header (scheme case-insensitive)", () => {
			assert.equal(bearerToken("Bearer abc.def.ghi"), "abc.def.ghi");
			assert.equal(bearerToken("bearer abc"), "abc");
			assert.equal(bearerToken("Bearer abc== "), "abc==");
		});

		it("throws 401 Authentication required when absent or malformed", () => {
			for (const h of [
				undefined,
				"",
				"Bearer",
				"Bearer ",
				"Basic abc",
				"Bearer a b",
				"Bearer a,b",
				["Bearer a"],
			]) {
				assert.throws(
					() => bearerToken(h as any),
					(e: any) => e.code === 401 && e.data.body.error === "Authentication required",
					String(h),
				);
			}
		});
	});

	describe("cachedVerifier", () => {
		it("verifies a token once while it is fresh and returns a frozen user", async () => {
			const idp = await createDevIdp();
			const token = await idp.tokenFor(12);
			let calls = 0;
			let now = Date.now();
			const verify = cachedVerifier(
				async () => {
					calls++;
					return userFor(12);
				},
				{ now: () => now, maxAgeMs: 60_000 },
			);
			const a = await verify(token);
			const b = await verify(token);
			assert.equal(calls, 1);
			assert.equal(a, b);
			assert.ok(Object.isFrozen(a) && Object.isFrozen(a.caps));
			now += 60_001;
			await verify(token);
			assert.equal(calls, 2, "re-verified after maxAgeMs");
		});

		it("never trusts a cached token past its exp", async () => {
			const idp = await createDevIdp();
			const exp = Math.floor(Date.now() / 1000) + 5;
			const token = await idp.sign(
				{ sub: "s", app_metadata: { sender_id: 3, role: "merchant" } },
				{ expiresIn: exp },
			);
			let now = Date.now();
			let calls = 0;
			const verify = cachedVerifier(
				async () => {
					calls++;
					if (now >= exp * 1000) throw invalidToken("token_expired");
					return userFor(3);
				},
				{ now: () => now },
			);
			await verify(token);
			await verify(token);
			assert.equal(calls, 1);
			now = exp * 1000 + 1;
			const err = await rejects(() => verify(token));
			assert.deepEqual(err.data.body, { error: "Invalid or expired token", code: "token_expired" });
			assert.equal(calls, 2);
		});

		it("does not cache failures and evicts the oldest entry when full", async () => {
			let calls = 0;
			const verify = cachedVerifier(
				async (t: string): Promise<AuthUser> => {
					calls++;
					if (t === "bad") throw invalidToken("token_invalid");
					return userFor(1);
				},
				{ maxEntries: 2 },
			);
			const tok = (n: number) =>
				`e30.${Buffer.from(JSON.stringify({ exp: Math.floor(Date.now() / 1000) + 600, n })).toString("base64url")}.sig`;
			await rejects(() => verify("bad"));
			await rejects(() => verify("bad"));
			assert.equal(calls, 2);
			await verify(tok(1));
			await verify(tok(2));
			await verify(tok(3)); // evicts tok(1)
			calls = 0;
			await verify(tok(2));
			await verify(tok(3));
			assert.equal(calls, 0);
			await verify(tok(1));
			assert.equal(calls, 1);
		});

		it("keys entries by the full token: another signature on the same payload is verified afresh", async () => {
			const idp = await createDevIdp();
			const token = await idp.tokenFor(21);
			const forged = `${token.slice(0, token.lastIndexOf(".") + 1)}AAAA`;
			const seen: string[] = [];
			const verify = cachedVerifier(async (t: string) => {
				seen.push(t);
				if (t !== token) throw invalidToken("token_invalid");
				return userFor(21);
			});
			assert.equal((await verify(token)).sender_id, 21);
			const err = await rejects(() => verify(forged));
			assert.deepEqual(err.data.body, { error: "Invalid or expired token", code: "token_invalid" });
			assert.deepEqual(seen, [token, forged]);
			await verify(token);
			assert.equal(seen.length, 2, "the genuine token is still cached");
		});

		it("forHeader: a header seen before answers its user without parsing; a malformed one is 401 before any verification", async () => {
			const idp = await createDevIdp();
			const token = await idp.tokenFor(31);
			const seen: string[] = [];
			const verify = cachedVerifier(async (t: string) => {
				seen.push(t);
				if (t !== token) throw invalidToken("token_invalid");
				return userFor(31);
			});
			const a = await verify.forHeader(`Bearer ${token}`);
			const b = await verify.forHeader(`Bearer ${token}`);
			assert.equal(a, b);
			assert.equal(a.sender_id, 31);
			assert.deepEqual(seen, [token]);
			// another spelling of the same credential is its own entry, verified once
			await verify.forHeader(`bearer  ${token}`);
			await verify.forHeader(`bearer  ${token}`);
			assert.deepEqual(seen, [token, token]);
			for (const bad of [undefined, "", "Basic abc", `Bearer ${token} extra`, ["Bearer x", "Bearer y"]]) {
				const err = await rejects(() => verify.forHeader(bad as string));
				assert.equal(err.code, 401, String(bad));
				assert.deepEqual(err.data.body, { error: "Authentication required" });
			}
			assert.equal(seen.length, 2, "nothing verified for a malformed header");
			// a different token ending in the same characters as a cached one is verified, never taken for it
			const forged = `eyJhbGciOiJub25lIn0.${token.slice(-60)}`;
			assert.equal(forged.slice(-32), token.slice(-32));
			const err = await rejects(() => verify.forHeader(`Bearer ${forged}`));
			assert.deepEqual(err.data.body, { error: "Invalid or expired token", code: "token_invalid" });
			assert.deepEqual(seen, [token, token, forged]);
		});

		it("never caches a token without a readable exp", async () => {
			let calls = 0;
			const verify = cachedVerifier(async () => {
				calls++;
				return userFor(4);
			});
			const noExp = `e30.${Buffer.from(JSON.stringify({ sub: "s" })).toString("base64url")}.sig`;
			for (const t of [noExp, "not-a-jwt", "a.%%%.c"]) {
				calls = 0;
				await verify(t);
				await verify(t);
				assert.equal(calls, 2, t);
			}
		});
	});

	describe("createVerifier: an unusable key set is jwks_unavailable, not the token's fault", () => {
		let server: Server;
		let base: string;
		before(async () => {
			server = createServer((req, res) => {
				if (req.url === "/down") {
					res.statusCode = 503;
					res.end("maintenance");
				} else if (req.url === "/html") {
					res.setHeader("content-type", "text/html");
					res.end("<html></html>");
				} else {
					res.setHeader("content-type", "application/json");
					res.end(JSON.stringify({ not: "a key set" }));
				}
			});
			await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
			base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
		});
		after(() => {
			server.close();
		});

		it("answers 401 jwks_unavailable for a JWKS that is down, not JSON, malformed or unreachable", async () => {
			const token = await (await createDevIdp()).tokenFor(8);
			for (const url of [`${base}/down`, `${base}/html`, `${base}/junk`, "http://127.0.0.1:9/jwks.json"]) {
				const err = await rejects(() => createVerifier({ jwksUrl: url })(token));
				assert.equal(err.code, 401, url);
				assert.deepEqual(err.data.body, { error: "Invalid or expired token", code: "jwks_unavailable" }, url);
			}
		});
	});

	describe("request ids, paths, queries, log lines", () => {
		it("keeps a sane x-request-id, replaces anything else with a UUID", () => {
			assert.equal(requestIdOf("abc-1.2_3"), "abc-1.2_3");
			assert.equal(requestIdOf("x".repeat(64)), "x".repeat(64));
			for (const bad of [undefined, "", "x".repeat(65), "a b", "a/b", "a,b", ["a"]]) {
				assert.match(requestIdOf(bad as any), /^[0-9a-f-]{36}$/, String(bad));
			}
		});

		it("pathOf strips the query", () => {
			assert.equal(pathOf("/v1/x?a=1"), "/v1/x");
			assert.equal(pathOf("/v1/x"), "/v1/x");
			assert.equal(pathOf(undefined), "/");
		});

		it("parseQuery gives flat strings, last value wins, no prototype keys", () => {
			const q = parseQuery("a=1&a=2&b[c]=3&d=%20x&__proto__=1&constructor=2&e");
			assert.deepEqual({ ...q }, { a: "2", "b[c]": "3", d: " x", e: "" });
			assert.equal(Object.getPrototypeOf(q), Object.prototype);
			assert.deepEqual(parseQuery(""), {});
		});

		it("accessLogLine is one JSON line", () => {
			const l = accessLogLine({
				nodeID: "n",
				ns: "",
				method: "GET",
				path: "/health",
				status: 200,
				ms: 1.2,
				request_id: "r",
				sender_id: undefined,
			});
			assert.ok(l.endsWith("\n") && !l.slice(0, -1).includes("\n"));
			const o = JSON.parse(l);
			assert.equal(o.level, "info");
			assert.equal(o.sender_id, null);
			assert.equal(o.status, 200);
			assert.equal("sampled" in o, false);
			assert.equal(JSON.parse(accessLogLine({ ...o, sampled: 100 })).sampled, 100);
		});

		describe("accessLogWeight (record 0127)", () => {
			const sampled = { sampleEvery: 100, slowMs: 500 };
			const never = () => 0.999;
			const always = () => 0;

			const req = (
				method: string,
				status: number,
				ms: number,
				finished = true,
				path = "/v1/orders/status",
			) => ({
				method,
				path,
				status,
				ms,
				finished,
			});

			it("always writes a write, an error, a slow, an unfinished or an ops request, whatever the draw", () => {
				for (const r of [
					req("POST", 201, 1),
					req("PATCH", 200, 1),
					req("DELETE", 204, 1),
					req("OPTIONS", 204, 1),
					req("GET", 400, 1),
					req("GET", 404, 1),
					req("GET", 429, 1),
					req("HEAD", 503, 1),
					req("GET", 200, 500),
					req("GET", 200, 1200.5),
					req("GET", 200, 1, false),
					req("GET", 200, 1, true, "/v1/ops/weight-discrepancies/7/images/1"),
				]) {
					assert.equal(accessLogWeight(sampled, r, never), 1, JSON.stringify(r));
				}
			});

			it("a fast successful GET or HEAD is written when the draw is under 1 / sampleEvery, and says it stands for sampleEvery", () => {
				for (const [method, status] of [
					["GET", 200],
					["HEAD", 200],
					["GET", 304],
				] as const) {
					assert.equal(accessLogWeight(sampled, req(method, status, 499.9), never), 0);
					assert.equal(accessLogWeight(sampled, req(method, status, 499.9), always), 100);
					assert.equal(
						accessLogWeight(sampled, req(method, status, 1), () => 0.0099),
						100,
					);
					assert.equal(
						accessLogWeight(sampled, req(method, status, 1), () => 0.01),
						0,
					);
				}
				// an ops-like path elsewhere is sampled like any read
				assert.equal(accessLogWeight(sampled, req("GET", 200, 1, true, "/v1/orders/ops/x"), never), 0);
			});

			it("EVERY_REQUEST (GATEWAY_ACCESS_LOG=1) writes every request with weight 1", () => {
				assert.equal(accessLogWeight(EVERY_REQUEST, req("GET", 200, 0.1), never), 1);
				assert.equal(accessLogWeight({ sampleEvery: 1, slowMs: 500 }, req("GET", 200, 0.1), never), 1);
			});

			it("the policy of the settings: sampled by default (1 in 100, slow from 500 ms), 1 every request, 0 none", () => {
				const of = (env: Record<string, string>) =>
					accessLogPolicy(
						setting("GATEWAY_ACCESS_LOG", env),
						setting("GATEWAY_ACCESS_LOG_SAMPLE", env),
						setting("GATEWAY_ACCESS_LOG_SLOW_MS", env),
					);
				assert.deepEqual(of({}), { sampleEvery: 100, slowMs: 500 });
				assert.deepEqual(of({ GATEWAY_ACCESS_LOG_SAMPLE: "10", GATEWAY_ACCESS_LOG_SLOW_MS: "250" }), {
					sampleEvery: 10,
					slowMs: 250,
				});
				assert.equal(of({ GATEWAY_ACCESS_LOG: "1" }), EVERY_REQUEST);
				assert.equal(of({ GATEWAY_ACCESS_LOG: "0" }), undefined);
			});

			it("with Math.random, about 1 in sampleEvery fast reads is written", () => {
				let written = 0;
				for (let i = 0; i < 100_000; i++) written += accessLogWeight(sampled, req("GET", 200, 1)) > 0 ? 1 : 0;
				// binomial(100000, 0.01): mean 1000, sd ≈ 31.5; ±200 is > 6 sd
				assert.ok(written > 800 && written < 1200, String(written));
			});
		});
	});

	describe("answerFor (error mapping)", () => {
		it("contract bodies verbatim, including documents exceptions", () => {
			assert.deepEqual(
				answerFor(apiError(422, "lane_not_priced", "No courier"), "/v1/shipping/serviceable", "r"),
				{
					status: 422,
					body: { error: "lane_not_priced", message: "No courier" },
					log: false,
				},
			);
			assert.deepEqual(answerFor(documentsError(404, "not found"), "/v1/documents/label/1", "r").body, {
				message: "not found",
			});
			const c = answerFor(documentsConflict("carrier_label_missing", "m"), "/v1/documents/label/1", "r");
			assert.equal(c.status, 409);
			assert.deepEqual(c.body, { code: "carrier_label_missing", message: "m" });
		});

		it("a contract body that crossed the wire (plain object) is still verbatim", () => {
			const wire = {
				name: "ApiError",
				message: "x",
				code: 403,
				type: "forbidden",
				data: { body: { error: "forbidden", cap: "ndr.act", message: "x" } },
			};
			assert.deepEqual(answerFor(wire, "/v1/x", "r"), { status: 403, body: wire.data.body, log: false });
		});

		it("gateway errors: envelope, or {message} for 400/404 under /v1/documents/", () => {
			const e = new GatewayError(404, "not_found", "Route not found");
			assert.deepEqual(answerFor(e, "/v1/x", "r").body, { error: "not_found", message: "Route not found" });
			assert.deepEqual(answerFor(e, "/v1/documents/x", "r").body, { message: "Route not found" });
			const m = new GatewayError(405, "method_not_allowed", "no");
			assert.deepEqual(answerFor(m, "/v1/documents/x", "r").body, {
				error: "method_not_allowed",
				message: "no",
			});
		});

		it("ValidationError → 400 validation_failed with details", () => {
			const v = new Errors.ValidationError("Parameters validation error!", "VALIDATION_ERROR", [
				{ type: "required", field: "a", message: "The 'a' field is required." },
				{ type: "string", field: "b", message: "The 'b' field must be a string." },
			]);
			const a = answerFor(v, "/v1/warehouses", "r");
			assert.equal(a.status, 400);
			assert.equal(a.body.error, "validation_failed");
			assert.deepEqual(a.body.details, ["a: is required.", "b: must be a string."]);
		});

		it("a ValidationError of a nested internal call → 500 internal_error (a server bug, not the request)", () => {
			const failures = (action: string) => [
				{ type: "required", field: "sender_id", message: "The 'sender_id' field is required.", action },
			];
			const own = new Errors.ValidationError("x", "VALIDATION_ERROR", failures("rates.serviceable"));
			const own400 = answerFor(own, "/v1/shipping/serviceable", "r", "rates.serviceable");
			assert.equal(own400.status, 400);
			assert.deepEqual(own400.body.details, ["sender_id: is required."]);
			const nested = new Errors.ValidationError("x", "VALIDATION_ERROR", failures("intake.getOrder"));
			assert.deepEqual(answerFor(nested, "/v1/shipping/book", "r-2", "booking.book"), {
				status: 500,
				body: { error: "internal_error", message: "Internal error", request_id: "r-2" },
				log: true,
			});
		});

		it("body-parser errors: 400 invalid_json, 413 payload_too_large, 415", () => {
			const mk = (code: number, type: string) => new Errors.MoleculerError("x", code, type);
			assert.equal(answerFor(mk(400, "entity.parse.failed"), "/v1/a", "r").body.error, "invalid_json");
			const big = answerFor(mk(413, "entity.too.large"), "/v1/a", "r");
			assert.equal(big.status, 413);
			assert.equal(big.body.error, "payload_too_large");
			assert.equal(answerFor(mk(415, "charset.unsupported"), "/v1/a", "r").status, 415);
			assert.equal(answerFor(mk(400, "request.aborted"), "/v1/a", "r").body.error, "invalid_body");
		});

		it("unreachable services → 503 service_unavailable", () => {
			const cases = [
				new Errors.ServiceNotFoundError({ action: "x.y" }),
				new Errors.ServiceNotAvailableError({ action: "x.y" }),
				new Errors.RequestTimeoutError({ action: "x.y", nodeID: "n" }),
				new Errors.RequestRejectedError({ action: "x.y", nodeID: "n" }),
				new Errors.QueueIsFullError({ action: "x.y", nodeID: "n", size: 1, limit: 1 }),
				new (Errors.BrokerDisconnectedError as any)(),
				Object.assign(new Error("CONNECTION_CLOSED"), { name: "NatsError", code: "CONNECTION_CLOSED" }),
			];
			for (const c of cases) {
				assert.ok(isUnavailable(c as any), c.name);
				const a = answerFor(c, "/v1/a", "r");
				assert.equal(a.status, 503, c.name);
				assert.deepEqual(Object.keys(a.body).sort(), ["error", "message"]);
				assert.equal(a.body.error, "service_unavailable");
			}
		});

		it("anything else → 500 internal_error with request_id, flagged for logging", () => {
			for (const e of [
				new Error("secret"),
				new TypeError("x"),
				"string",
				undefined,
				{ code: "ECONNRESET" },
			]) {
				const a = answerFor(e, "/v1/a", "req-9");
				assert.deepEqual(a, {
					status: 500,
					body: { error: "internal_error", message: "Internal error", request_id: "req-9" },
					log: true,
				});
			}
		});
	});

	describe("lib/platform/validate describe()", () => {
		it("renders `field: message`, dropping only the leading field name", () => {
			const check = compile({
				a: { type: "string" },
				b: { type: "string", pattern: /^x$/ },
				c: { type: "string", contains: "abc" },
				$$strict: "remove",
			});
			const res = check({ b: "y", c: "zzz" });
			assert.notEqual(res, true);
			assert.deepEqual((res as any[]).map(describeFailure), [
				"a: is required.",
				"b: is malformed",
				"c: must contain the 'abc' text.",
			]);
		});
	});

	describe("route table", () => {
		it("lists exactly the documented aliases and groups them by service", () => {
			assert.equal(API_ALIASES["GET /v1/shipping/serviceable"], "rates.serviceable");
			assert.equal(API_ALIASES["GET /v1/documents/label/:orderId"], "documents.label");
			const m = actionsByService(API_ALIASES, DEV_IDP_ALIASES);
			assert.deepEqual([...m.keys()].sort(), [
				"billing",
				"booking",
				"devauth",
				"documents",
				"intake",
				"ndr",
				"notifications",
				"pincode",
				"rates",
				"warehouses",
				"webhooks",
			]);
			// literal paths before parameters (lib/gateway/routes.ts bySpecificity), then definition order
			assert.deepEqual(m.get("warehouses"), [
				"warehouses.list",
				"warehouses.create",
				"warehouses.createPickup",
				"warehouses.pickups",
				"warehouses.update",
				"warehouses.remove",
				"warehouses.pickup",
				"warehouses.changePickup",
				"warehouses.cancelPickup",
			]);
		});
	});
});
