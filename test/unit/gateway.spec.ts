/**
 * Gateway over real HTTP (global fetch) on a broker with small fake services
 * (spec §2.11, §5, §7; ARCHITECTURE §3, §6). Tokens are signed by a real
 * development IdP whose JWKS is served over HTTP (lib/devidp.ts).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { SignJWT } from "jose";
import { type Context, ServiceBroker } from "moleculer";
import type { AuthUser } from "../../lib/auth";
import { loadConfig } from "../../lib/config";
import { createDevIdp, type DevIdp, serveJwks } from "../../lib/devidp";
import { apiError, documentsError } from "../../lib/errors";
import { API_ALIASES } from "../../lib/gateway/routes";
import { loadServiceSchema } from "../../lib/system";
import brokerOptions from "../../moleculer.config";
import { newSender } from "../helpers/broker";
import { freePort } from "../helpers/net";

const PDF = Buffer.concat([
	Buffer.from("%PDF-1.7\n"),
	Buffer.from([0, 1, 2, 250, 251, 252, 255]),
	Buffer.from("\n%%EOF"),
]);
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Counts handler calls of the fakes, to prove 403s are answered before the handler runs. */
const calls: Record<string, number> = {};
function hit(name: string): void {
	calls[name] = (calls[name] ?? 0) + 1;
}

/** What a fake answers about the context it ran in. */
function echo(ctx: Context<any, any>) {
	return {
		params: ctx.params,
		user: ctx.meta.user as AuthUser,
		meta_keys: Object.keys(ctx.meta),
		request_id: ctx.requestID,
		polluted: (ctx.params as any).polluted ?? null,
		proto_is_object: Object.getPrototypeOf(ctx.params) === Object.prototype,
	};
}

/** Fakes of the services behind the aliases, faithful to their `access` rules. */
const FAKES: any[] = [
	{
		name: "intake",
		actions: {
			createOrder: {
				access: { writes: true, capability: "orders.write" },
				handler(ctx: Context<any, any>) {
					hit("intake.createOrder");
					ctx.meta.$statusCode = 201;
					return { order_id: 7, ...echo(ctx) };
				},
			},
			createReverse: {
				access: { writes: true, capability: "orders.write" },
				handler() {
					hit("intake.createReverse");
					return { order_id: 8 };
				},
			},
			status: {
				access: { auth: true },
				handler(ctx: Context<any, any>) {
					hit("intake.status");
					if (ctx.params.order_no === "missing") {
						throw apiError(404, "order_not_found", "No order with that reference on this account");
					}
					if (ctx.params.order_no === "boom") throw new Error("database exploded at /secret/path");
					return echo(ctx);
				},
			},
		},
	},
	{
		name: "documents",
		actions: {
			label: {
				access: { auth: true },
				handler(ctx: Context<any, any>) {
					hit("documents.label");
					if (ctx.params.orderId === "404") throw documentsError(404, "not found");
					ctx.meta.$responseType = "application/pdf";
					ctx.meta.$responseHeaders = {
						"Content-Disposition": `inline; filename="label-${ctx.params.orderId}.pdf"`,
					};
					return PDF;
				},
			},
		},
	},
	{
		name: "warehouses",
		actions: {
			list: { access: { auth: true }, handler: (ctx: Context) => ({ data: [], ...echo(ctx) }) },
			create: {
				access: { writes: true, capability: "warehouses.write" },
				handler: () => ({ data: { id: 1, orders_repaired: 0 } }),
			},
			update: {
				access: { capability: "warehouses.write" },
				handler(ctx: Context<any, any>) {
					hit("warehouses.update");
					return { data: { id: Number(ctx.params.id) } };
				},
			},
			remove: {
				access: { capability: "warehouses.write" },
				async handler(ctx: Context<any, any>) {
					// A service bug: an internal call with params its validator rejects.
					if (ctx.params.id === "999") await ctx.call("warehouses.usage", { warehouse_id: "nine" });
					return { data: { id: Number(ctx.params.id), deleted: 1 } };
				},
			},
			/** Internal (not aliased), broker-validated. */
			usage: {
				params: { warehouse_id: { type: "number", integer: true, positive: true } },
				handler: () => ({ count: 0 }),
			},
		},
	},
	{
		name: "rates",
		actions: {
			serviceable: {
				// A broker-validated schema, to check the 422 → 400 validation_failed mapping.
				params: { from_pin: { type: "string", pattern: /^\d{6}$/ }, $$strict: false },
				handler: (ctx: Context) => ({ data: [], dropped_couriers: [], ...echo(ctx) }),
			},
		},
	},
	{
		name: "pincode",
		actions: {
			lookup: (ctx: Context<any>) => ({ found: false, pincode: ctx.params.pincode, city: "", state: "" }),
		},
	},
	{ name: "booking", actions: { book: () => ({ status: "queued", mode: "auto" }) } },
];

/** Runs `fn` with env vars set, restoring them afterwards (config is read when services are created). */
function setEnv(vars: Record<string, string | undefined>): () => void {
	const old: Record<string, string | undefined> = {};
	for (const [k, v] of Object.entries(vars)) {
		old[k] = process.env[k];
		if (v === undefined) delete process.env[k];
		else process.env[k] = v;
	}
	return () => {
		for (const [k, v] of Object.entries(old)) {
			if (v === undefined) delete process.env[k];
			else process.env[k] = v;
		}
	};
}

/** Starts a broker with the gateway (and extra services / fakes). */
async function startGateway(
	extra: any[],
	opts: { nats?: boolean; nodeID?: string; services?: ("gateway" | "devauth")[] } = {},
): Promise<{ broker: ServiceBroker; base: string }> {
	const broker = new ServiceBroker(
		brokerOptions(
			{ ...loadConfig(), transporter: opts.nats ? process.env.TEST_NATS_URL : undefined },
			// No PermissionsMiddleware: the gateway alone must enforce `access` in these tests.
			{ logger: process.env.TEST_LOGS ? undefined : false, nodeID: opts.nodeID, middlewares: [] },
		),
	);
	for (const s of opts.services ?? ["gateway"]) broker.createService(loadServiceSchema(s));
	for (const f of extra) broker.createService(f);
	await broker.start();
	const gw = broker.getLocalService("gateway") as any;
	const { port } = gw.server.address();
	return { broker, base: `http://127.0.0.1:${port}` };
}

interface Answer {
	status: number;
	headers: Headers;
	text: string;
	body: any;
	bytes: Buffer;
}

/** One HTTP request; `body` objects are sent as JSON, strings/Buffers raw. */
async function http(
	base: string,
	method: string,
	path: string,
	o: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
	const headers: Record<string, string> = { ...(o.headers ?? {}) };
	if (o.token) headers.authorization = `Bearer ${o.token}`;
	let body: string | Buffer | undefined;
	if (typeof o.body === "string" || Buffer.isBuffer(o.body)) body = o.body;
	else if (o.body !== undefined) {
		body = JSON.stringify(o.body);
		headers["content-type"] ??= "application/json";
	}
	const r = await fetch(base + path, { method, headers, body });
	const bytes = Buffer.from(await r.arrayBuffer());
	const text = bytes.toString("utf8");
	let parsed: unknown;
	try {
		parsed = text ? JSON.parse(text) : undefined;
	} catch {
		parsed = undefined;
	}
	return { status: r.status, headers: r.headers, text, body: parsed, bytes };
}

describe("gateway (HTTP, fake services)", () => {
	let idp: DevIdp;
	let jwks: Awaited<ReturnType<typeof serveJwks>>;
	let broker: ServiceBroker;
	let base: string;
	let restoreEnv: () => void;

	before(async () => {
		idp = await createDevIdp();
		jwks = await serveJwks(idp);
		restoreEnv = setEnv({
			AUTH_JWKS_URL: jwks.url,
			AUTH_ISSUER: idp.issuer,
			AUTH_AUDIENCE: undefined,
			PORT: "0",
			MSA_DEV_IDP: undefined,
		});
		({ broker, base } = await startGateway(FAKES));
	});

	after(async () => {
		await broker?.stop();
		jwks?.server.close();
		restoreEnv?.();
	});

	describe("authentication (§5.6)", () => {
		it("401 Authentication required without an Authorization header", async () => {
			const r = await http(base, "GET", "/v1/orders/status?order_no=A1");
			assert.equal(r.status, 401);
			assert.deepEqual(r.body, { error: "Authentication required" });
			assert.equal(r.headers.get("www-authenticate"), "Bearer");
			assert.equal(calls["intake.status"] ?? 0, 0);
		});

		it("401 Authentication required for a malformed header (not Bearer, empty token)", async () => {
			for (const h of ["Basic dXNlcjpwYXNz", "Bearer", "Bearer ", "Token abc", "Bearer a b"]) {
				const r = await http(base, "GET", "/v1/orders/status?order_no=A1", { headers: { authorization: h } });
				assert.equal(r.status, 401, h);
				assert.deepEqual(r.body, { error: "Authentication required" }, h);
			}
		});

		it("401 Invalid or expired token for garbage", async () => {
			const r = await http(base, "GET", "/v1/orders/status?order_no=A1", { token: "garbage" });
			assert.equal(r.status, 401);
			assert.deepEqual(r.body, { error: "Invalid or expired token", code: "token_invalid" });
			assert.equal(r.headers.get("www-authenticate"), 'Bearer error="invalid_token"');
		});

		it("401 token_expired for an expired token", async () => {
			const t = await idp.sign(
				{ sub: "u1", app_metadata: { sender_id: 5, role: "merchant" } },
				{ expiresIn: Math.floor(Date.now() / 1000) - 60 },
			);
			const r = await http(base, "GET", "/v1/orders/status?order_no=A1", { token: t });
			assert.equal(r.status, 401);
			assert.deepEqual(r.body, { error: "Invalid or expired token", code: "token_expired" });
		});

		it("401 for a token signed by another key", async () => {
			const other = await createDevIdp();
			const r = await http(base, "GET", "/v1/orders/status?order_no=A1", { token: await other.tokenFor(5) });
			assert.equal(r.status, 401);
			assert.equal(r.body.error, "Invalid or expired token");
			assert.equal(r.body.code, "token_invalid");
		});

		it("401 for alg none and for HS256", async () => {
			const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
			const exp = Math.floor(Date.now() / 1000) + 3600;
			const claims = { sub: "u1", iss: idp.issuer, exp, app_metadata: { sender_id: 5, role: "merchant" } };
			const none = `${b64({ alg: "none", typ: "JWT" })}.${b64(claims)}.`;
			const hs = await new SignJWT(claims)
				.setProtectedHeader({ alg: "HS256", kid: idp.jwks.keys[0].kid })
				.sign(Buffer.from(JSON.stringify(idp.jwks.keys[0])));
			for (const t of [none, hs]) {
				const r = await http(base, "GET", "/v1/orders/status?order_no=A1", { token: t });
				assert.equal(r.status, 401);
				assert.equal(r.body.error, "Invalid or expired token");
				assert.equal(r.body.code, "token_invalid");
			}
		});

		it("401 token_claims for a token without exp", async () => {
			const t = await idp.sign(
				{ sub: "u1", app_metadata: { sender_id: 5, role: "merchant" } },
				{ noExp: true },
			);
			const r = await http(base, "GET", "/v1/orders/status?order_no=A1", { token: t });
			assert.equal(r.status, 401);
			assert.deepEqual(r.body, { error: "Invalid or expired token", code: "token_claims" });
		});

		it("401 account_missing without app_metadata.sender_id; role_unknown for a foreign role", async () => {
			const noSender = await idp.sign({ sub: "u1", app_metadata: { role: "merchant" } });
			let r = await http(base, "GET", "/v1/orders/status?order_no=A1", { token: noSender });
			assert.equal(r.status, 401);
			assert.deepEqual(r.body, { error: "Invalid or expired token", code: "account_missing" });
			const badRole = await idp.sign({ sub: "u1", app_metadata: { sender_id: 5, role: "superuser" } });
			r = await http(base, "GET", "/v1/orders/status?order_no=A1", { token: badRole });
			assert.equal(r.status, 401);
			assert.deepEqual(r.body, { error: "Invalid or expired token", code: "role_unknown" });
		});

		it("a valid token reaches the handler with ctx.meta.user from the token only", async () => {
			const sender = newSender();
			const t = await idp.tokenFor(sender, "merchant_ops");
			const r = await http(base, "POST", "/v1/intake/order?sender_id=4242", {
				token: t,
				body: {
					sender_id: 999,
					user: { sender_id: 999, role: "merchant" },
					meta: { user: { sender_id: 999 } },
					customer_order_no: "X1",
				},
			});
			assert.equal(r.status, 201);
			assert.equal(r.body.order_id, 7);
			assert.equal(r.body.user.sender_id, sender);
			assert.equal(r.body.user.role, "merchant_ops");
			assert.deepEqual(
				r.body.meta_keys.filter((k: string) => !k.startsWith("$")),
				["user"],
			);
			// sender_id is passed through to the service (which decides), never into meta.
			assert.equal(r.body.params.customer_order_no, "X1");
			assert.equal(r.body.params.sender_id, "4242");
		});
	});

	describe("roles and capabilities (§5 rules 1–2)", () => {
		it("403 Read-only role before the handler runs", async () => {
			const before = calls["intake.createOrder"] ?? 0;
			for (const role of ["merchant_finance", "merchant_support", "merchant_staff"] as const) {
				const t = await idp.tokenFor(newSender(), role);
				const r = await http(base, "POST", "/v1/intake/order", {
					token: t,
					body: { customer_order_no: "R1" },
				});
				assert.equal(r.status, 403, role);
				assert.equal(r.body.error, "Read-only role", role);
			}
			assert.equal(calls["intake.createOrder"] ?? 0, before);
		});

		it("403 forbidden with cap when the role lacks the capability, before the handler runs", async () => {
			const t = await idp.tokenFor(newSender(), "merchant_finance");
			const r = await http(base, "PATCH", "/v1/warehouses/5", { token: t, body: { warehouse_name: "New" } });
			assert.equal(r.status, 403);
			assert.equal(r.body.error, "forbidden");
			assert.equal(r.body.cap, "warehouses.write");
			assert.equal(typeof r.body.message, "string");
			assert.equal(calls["warehouses.update"] ?? 0, 0);
			const ok = await http(base, "PATCH", "/v1/warehouses/5", {
				token: await idp.tokenFor(newSender(), "merchant_ops"),
				body: { warehouse_name: "New" },
			});
			assert.equal(ok.status, 200);
			assert.deepEqual(ok.body, { data: { id: 5 } });
			assert.equal(calls["warehouses.update"], 1);
		});

		it("read-only roles may read", async () => {
			const t = await idp.tokenFor(newSender(), "merchant_staff");
			const r = await http(base, "GET", "/v1/warehouses", { token: t });
			assert.equal(r.status, 200);
			assert.deepEqual(r.body.data, []);
		});
	});

	describe("routing and params", () => {
		let token: string;
		before(async () => {
			token = await idp.tokenFor(newSender());
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
				const r = await http(base, "GET", p, { token });
				assert.equal(r.status, 404, p);
				assert.deepEqual(r.body, { error: "not_found", message: "Route not found" }, p);
				assert.ok(r.headers.get("x-request-id"), p);
			}
			const r = await http(base, "POST", "/v1/nope", { body: "{not json" });
			assert.equal(r.status, 404);
		});

		it("a known path with another method answers 405 method_not_allowed with Allow; OPTIONS answers 204", async () => {
			const r = await http(base, "POST", "/v1/pincode/110001", { token, body: {} });
			assert.equal(r.status, 405);
			assert.equal(r.body.error, "method_not_allowed");
			assert.equal(r.headers.get("allow"), "GET");
			const w = await http(base, "PUT", "/v1/warehouses/3", { token, body: {} });
			assert.equal(w.status, 405);
			assert.deepEqual(w.headers.get("allow")?.split(", ").sort(), ["DELETE", "PATCH"]);
			const o = await http(base, "OPTIONS", "/v1/warehouses", {
				headers: { "access-control-request-method": "GET" },
			});
			assert.equal(o.status, 204);
			assert.deepEqual(o.headers.get("allow")?.split(", ").sort(), ["GET", "POST"]);
			assert.equal(o.headers.get("access-control-allow-origin"), null);
		});

		it("path and query params reach the action as strings; repeated keys keep the last; no nesting", async () => {
			const r = await http(base, "GET", "/v1/orders/status?order_no=A&order_no=B&x[y]=1&n=5&__proto__=z", {
				token,
			});
			assert.equal(r.status, 200);
			assert.deepEqual(r.body.params, { order_no: "B", "x[y]": "1", n: "5" });
			const p = await http(base, "GET", "/v1/pincode/%20110001", { token });
			assert.deepEqual(p.body, { found: false, pincode: " 110001", city: "", state: "" });
		});

		it("a __proto__ key in the body does not change the params prototype", async () => {
			const r = await http(base, "POST", "/v1/intake/order", {
				token,
				body: '{"__proto__": {"polluted": "yes"}, "customer_order_no": "P1"}',
				headers: { "content-type": "application/json" },
			});
			assert.equal(r.status, 201);
			assert.equal(r.body.polluted, null);
			assert.equal(r.body.proto_is_object, true);
			assert.equal(({} as any).polluted, undefined);
		});

		it("400 invalid_json for malformed JSON, a non-object body, or a form body", async () => {
			let r = await http(base, "POST", "/v1/intake/order", {
				token,
				body: '{"customer_order_no": ',
				headers: { "content-type": "application/json" },
			});
			assert.equal(r.status, 400);
			assert.equal(r.body.error, "invalid_json");
			assert.equal(typeof r.body.message, "string");
			r = await http(base, "POST", "/v1/intake/order", { token, body: [{ a: 1 }] });
			assert.equal(r.status, 400);
			assert.equal(r.body.error, "invalid_json");
			r = await http(base, "POST", "/v1/intake/order", {
				token,
				body: "a=1&b=2",
				headers: { "content-type": "application/x-www-form-urlencoded" },
			});
			assert.equal(r.status, 400);
			assert.equal(r.body.error, "invalid_json");
		});

		it("413 payload_too_large over 1 MB", async () => {
			const big = JSON.stringify({ customer_order_no: "B", pad: "x".repeat(1_100_000) });
			const r = await http(base, "POST", "/v1/intake/order", {
				token,
				body: big,
				headers: { "content-type": "application/json" },
			});
			assert.equal(r.status, 413);
			assert.deepEqual(Object.keys(r.body).sort(), ["error", "message"]);
			assert.equal(r.body.error, "payload_too_large");
		});

		it("broker ValidationError → 400 validation_failed with details", async () => {
			const r = await http(base, "GET", "/v1/shipping/serviceable?from_pin=12&to_pin=110001", { token });
			assert.equal(r.status, 400);
			assert.equal(r.body.error, "validation_failed");
			assert.ok(Array.isArray(r.body.details) && r.body.details.length === 1);
			assert.match(r.body.details[0], /^from_pin: /);
			const ok = await http(base, "GET", "/v1/shipping/serviceable?from_pin=560001&to_pin=110001", { token });
			assert.equal(ok.status, 200);
		});

		it("a ValidationError of an internal call made by the handler → 500 internal_error, not 400", async () => {
			const r = await http(base, "DELETE", "/v1/warehouses/999", {
				token,
				headers: { "x-request-id": "nested-422" },
			});
			assert.equal(r.status, 500);
			assert.deepEqual(r.body, {
				error: "internal_error",
				message: "Internal error",
				request_id: "nested-422",
			});
			const ok = await http(base, "DELETE", "/v1/warehouses/5", { token });
			assert.equal(ok.status, 200);
			assert.deepEqual(ok.body, { data: { id: 5, deleted: 1 } });
		});
	});

	describe("errors", () => {
		let token: string;
		before(async () => {
			token = await idp.tokenFor(newSender());
		});

		it("an ApiError body is answered verbatim with its status", async () => {
			const r = await http(base, "GET", "/v1/orders/status?order_no=missing", { token });
			assert.equal(r.status, 404);
			assert.deepEqual(r.body, {
				error: "order_not_found",
				message: "No order with that reference on this account",
			});
		});

		it("a plain Error → 500 internal_error with the request id, no stack or message leak", async () => {
			const r = await http(base, "GET", "/v1/orders/status?order_no=boom", {
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
			const r = await http(base, "GET", "/v1/documents/label/42", { token });
			assert.equal(r.status, 200);
			assert.equal(r.headers.get("content-type"), "application/pdf");
			assert.equal(r.headers.get("content-disposition"), 'inline; filename="label-42.pdf"');
			assert.equal(r.headers.get("x-content-type-options"), "nosniff");
			assert.ok(r.bytes.equals(PDF));
			const nf = await http(base, "GET", "/v1/documents/label/404", { token });
			assert.equal(nf.status, 404);
			assert.deepEqual(nf.body, { message: "not found" });
			const bad = await http(base, "GET", "/v1/documents/label/%ZZ", { token });
			assert.equal(bad.status, 400);
			assert.deepEqual(Object.keys(bad.body), ["message"]);
			const unknown = await http(base, "GET", "/v1/documents/nothing", { token });
			assert.equal(unknown.status, 404);
			assert.deepEqual(unknown.body, { message: "Route not found" });
			const anon = await http(base, "GET", "/v1/documents/label/42");
			assert.equal(anon.status, 401);
			assert.deepEqual(anon.body, { error: "Authentication required" });
		});
	});

	describe("request ids and headers", () => {
		it("every response carries x-request-id and nosniff; a sane incoming id is echoed and used as ctx.requestID", async () => {
			const token = await idp.tokenFor(newSender());
			const answers = [
				await http(base, "GET", "/health"),
				await http(base, "GET", "/nope"),
				await http(base, "GET", "/v1/orders/status?order_no=A"),
				await http(base, "GET", "/v1/orders/status?order_no=boom", { token }),
				await http(base, "GET", "/v1/documents/label/1", { token }),
			];
			for (const a of answers) {
				assert.match(a.headers.get("x-request-id") ?? "", UUID_RE);
				assert.equal(a.headers.get("x-content-type-options"), "nosniff");
			}
			const echoed = await http(base, "GET", "/v1/orders/status?order_no=A", {
				token,
				headers: { "x-request-id": "client-123_ABC.x" },
			});
			assert.equal(echoed.headers.get("x-request-id"), "client-123_ABC.x");
			assert.equal(echoed.body.request_id, "client-123_ABC.x");
			for (const insane of ["has space", "x".repeat(65), "semi;colon", "ü"]) {
				const r = await http(base, "GET", "/v1/orders/status?order_no=A", {
					token,
					headers: { "x-request-id": encodeURI(insane) === insane ? insane : "a/b" },
				});
				const id = r.headers.get("x-request-id") ?? "";
				assert.match(id, UUID_RE, insane);
				assert.equal(r.body.request_id, id);
			}
			const e = await http(base, "GET", "/nope", { headers: { "x-request-id": "probe-1" } });
			assert.equal(e.headers.get("x-request-id"), "probe-1");
		});
	});

	describe("access log", () => {
		it("writes one JSON line per request with method, path (no query), status, ms, request_id, sender_id; never the token", async () => {
			const gw = broker.getLocalService("gateway") as any;
			const sender = newSender();
			const token = await idp.tokenFor(sender);
			const lines: string[] = [];
			const write = process.stdout.write;
			gw.accessLog = true;
			(process.stdout as any).write = (chunk: any, ...rest: any[]) => {
				const s = String(chunk);
				if (s.includes('"msg":"request"')) {
					lines.push(s);
					return true;
				}
				return (write as any).call(process.stdout, chunk, ...rest);
			};
			try {
				await http(base, "GET", "/v1/orders/status?order_no=SECRET-REF", {
					token,
					headers: { "x-request-id": "log-1" },
				});
				await http(base, "GET", "/nope?x=1", { headers: { "x-request-id": "log-2" } });
			} finally {
				process.stdout.write = write;
				gw.accessLog = false;
			}
			assert.equal(lines.length, 2);
			const [a, b] = lines.map((l) => JSON.parse(l));
			assert.equal(a.method, "GET");
			assert.equal(a.path, "/v1/orders/status");
			assert.equal(a.status, 200);
			assert.equal(a.request_id, "log-1");
			assert.equal(a.sender_id, sender);
			assert.equal(typeof a.ms, "number");
			assert.equal(b.path, "/nope");
			assert.equal(b.status, 404);
			assert.equal(b.sender_id, null);
			assert.ok(!lines.join("").includes(token) && !lines.join("").includes("SECRET-REF"));
		});
	});

	describe("probes", () => {
		it("/health answers without auth", async () => {
			const r = await http(base, "GET", "/health");
			assert.equal(r.status, 200);
			assert.deepEqual(r.body, { status: "ok" });
		});

		it("/ready answers 200 when every aliased service is available, 503 not_ready otherwise", async () => {
			const r = await http(base, "GET", "/ready");
			assert.equal(r.status, 200);
			assert.equal(r.body.status, "ready");
			const names = [...new Set(Object.values(API_ALIASES).map((a) => a.split(".")[0]))].sort();
			assert.deepEqual(Object.keys(r.body.services).sort(), names);
			assert.ok(Object.values(r.body.services).every((v) => v === true));

			await broker.destroyService(broker.getLocalService("booking")!);
			const nr = await http(base, "GET", "/ready");
			assert.equal(nr.status, 503);
			assert.equal(nr.body.error, "not_ready");
			assert.deepEqual(nr.body.missing, ["booking"]);
			assert.equal(typeof nr.body.message, "string");

			// A call to the missing service: 503 service_unavailable (after authentication succeeds or not).
			const token = await idp.tokenFor(newSender());
			const b = await http(base, "POST", "/v1/shipping/book", { token, body: { order_id: 1 } });
			assert.equal(b.status, 503);
			assert.equal(b.body.error, "service_unavailable");
			broker.createService(FAKES.find((f) => f.name === "booking"));
			await broker.waitForServices("booking");
			const again = await http(base, "POST", "/v1/shipping/book", { token, body: { order_id: 1 } });
			assert.equal(again.status, 200);
		});
	});
});

describe("gateway configuration", () => {
	it("refuses to start without AUTH_JWKS_URL (never falls back to development keys)", async () => {
		const restore = setEnv({ AUTH_JWKS_URL: undefined, PORT: "0", MSA_DEV_IDP: undefined });
		const broker = new ServiceBroker(
			brokerOptions({ ...loadConfig(), transporter: undefined }, { logger: false }),
		);
		try {
			broker.createService(loadServiceSchema("gateway"));
			await assert.rejects(() => broker.start(), /AUTH_JWKS_URL is required/);
		} finally {
			await broker.stop().catch(() => undefined);
			restore();
		}
	});

	it("listens on loadConfig().port, read when the service is created", async () => {
		const port = await freePort();
		const restore = setEnv({
			AUTH_JWKS_URL: "http://127.0.0.1:9/jwks.json",
			PORT: String(port),
			MSA_DEV_IDP: undefined,
		});
		try {
			const { broker, base } = await startGateway(FAKES.filter((f) => f.name === "warehouses"));
			try {
				assert.equal(base, `http://127.0.0.1:${port}`);
				const r = await http(base, "GET", "/health");
				assert.equal(r.status, 200);
				// No dev IdP routes unless MSA_DEV_IDP=1.
				const t = await http(base, "POST", "/auth/v1/token?grant_type=password", { body: {} });
				assert.equal(t.status, 404);
				// An unreachable JWKS fails closed with 401.
				const u = await http(base, "GET", "/v1/warehouses", { token: "a.b.c" });
				assert.equal(u.status, 401);
				assert.equal(u.body.error, "Invalid or expired token");
				// A well-formed signed token reaches the key fetch, which fails: jwks_unavailable.
				const signed = await (await createDevIdp()).tokenFor(5);
				const j = await http(base, "GET", "/v1/warehouses", { token: signed });
				assert.equal(j.status, 401);
				assert.deepEqual(j.body, { error: "Invalid or expired token", code: "jwks_unavailable" });
			} finally {
				await broker.stop();
			}
		} finally {
			restore();
		}
	});
});

describe("gateway over NATS (access rules read from the registry)", () => {
	let idp: DevIdp;
	let jwks: Awaited<ReturnType<typeof serveJwks>>;
	let gw: ServiceBroker;
	let svc: ServiceBroker;
	let base: string;
	let restoreEnv: () => void;
	let called = 0;

	before(async () => {
		idp = await createDevIdp();
		jwks = await serveJwks(idp);
		restoreEnv = setEnv({
			AUTH_JWKS_URL: jwks.url,
			AUTH_ISSUER: undefined,
			PORT: "0",
			MSA_DEV_IDP: undefined,
		});
		const run = process.env.MSA_TEST_RUN_ID ?? "x";
		svc = new ServiceBroker(
			brokerOptions(
				{ ...loadConfig(), transporter: process.env.TEST_NATS_URL },
				// No PermissionsMiddleware on the service node: a 403 can only come from the gateway.
				{ logger: false, nodeID: `gw-svc-${run}`, middlewares: [] },
			),
		);
		svc.createService({
			name: "intake",
			actions: {
				createOrder: {
					access: { writes: true, capability: "orders.write" },
					handler(ctx: Context<any, any>) {
						called++;
						ctx.meta.$statusCode = 201;
						return { order_id: 1, sender: ctx.meta.user.sender_id, request_id: ctx.requestID };
					},
				},
				status: () => {
					throw apiError(404, "order_not_found", "No such order");
				},
				createReverse: () => {
					throw new Error("remote failure");
				},
			},
		} as any);
		await svc.start();
		({ broker: gw, base } = await startGateway([], { nats: true, nodeID: `gw-gw-${run}` }));
		await gw.waitForServices(["intake"], 10_000);
	});

	after(async () => {
		await gw?.stop();
		await svc?.stop();
		jwks?.server.close();
		restoreEnv?.();
	});

	it("403 Read-only role for a remote action, before its handler runs", async () => {
		const r = await http(base, "POST", "/v1/intake/order", {
			token: await idp.tokenFor(newSender(), "merchant_finance"),
			body: { customer_order_no: "N1" },
		});
		assert.equal(r.status, 403);
		assert.equal(r.body.error, "Read-only role");
		assert.equal(called, 0);
	});

	it("a merchant reaches the remote handler with its sender and the request id", async () => {
		const sender = newSender();
		const r = await http(base, "POST", "/v1/intake/order", {
			token: await idp.tokenFor(sender),
			body: { customer_order_no: "N2", sender_id: 1 },
			headers: { "x-request-id": "nats-req-1" },
		});
		assert.equal(r.status, 201);
		assert.deepEqual(r.body, { order_id: 1, sender, request_id: "nats-req-1" });
		assert.equal(called, 1);
	});

	it("remote ApiError bodies cross NATS verbatim; remote plain errors are 500 internal_error", async () => {
		const token = await idp.tokenFor(newSender());
		const nf = await http(base, "GET", "/v1/orders/status?order_no=x", { token });
		assert.equal(nf.status, 404);
		assert.deepEqual(nf.body, { error: "order_not_found", message: "No such order" });
		const boom = await http(base, "POST", "/v1/intake/reverse", { token, body: { order: {} } });
		assert.equal(boom.status, 500);
		assert.equal(boom.body.error, "internal_error");
		assert.equal(boom.body.request_id, boom.headers.get("x-request-id"));
	});
});

describe("gateway with the development IdP (zero-setup login)", () => {
	let broker: ServiceBroker;
	let base: string;
	let restoreEnv: () => void;
	let dir: string;

	before(async () => {
		dir = mkdtempSync(join(tmpdir(), "msa-devidp-"));
		const port = await freePort();
		restoreEnv = setEnv({
			PORT: String(port),
			AUTH_JWKS_URL: `http://127.0.0.1:${port}/auth/v1/.well-known/jwks.json`,
			AUTH_ISSUER: undefined,
			MSA_DEV_IDP: "1",
			MSA_DATA_DIR: dir,
			MSA_DEV_USERS_FILE: resolve(__dirname, "../../config/dev-users.json"),
		});
		({ broker, base } = await startGateway(FAKES, { services: ["devauth", "gateway"] }));
	});

	after(async () => {
		await broker?.stop();
		restoreEnv?.();
		rmSync(dir, { recursive: true, force: true });
	});

	it("logs in over HTTP (JSON) and the token is accepted by the gateway", async () => {
		const login = await http(base, "POST", "/auth/v1/token?grant_type=password", {
			body: { email: "ops@example.com", password: "ops-pass" },
		});
		assert.equal(login.status, 200);
		assert.equal(login.headers.get("cache-control"), "no-store");
		assert.deepEqual(Object.keys(login.body).sort(), [
			"access_token",
			"expires_in",
			"refresh_token",
			"token_type",
		]);
		assert.equal(login.body.expires_in, 3600);
		const r = await http(base, "GET", "/v1/orders/status?order_no=A", { token: login.body.access_token });
		assert.equal(r.status, 200);
		assert.equal(r.body.user.sender_id, 1001);
		assert.equal(r.body.user.role, "merchant_ops");
		assert.equal(r.body.user.email, "ops@example.com");
	});

	it("accepts a form-encoded login with username", async () => {
		const login = await http(base, "POST", "/auth/v1/token?grant_type=password", {
			body: "username=finance%40example.com&password=finance-pass",
			headers: { "content-type": "application/x-www-form-urlencoded" },
		});
		assert.equal(login.status, 200);
		const r = await http(base, "POST", "/v1/intake/order", { token: login.body.access_token, body: {} });
		assert.equal(r.status, 403);
		assert.equal(r.body.error, "Read-only role");
	});

	it("400 invalid_grant for bad credentials; 400 unsupported_grant_type otherwise", async () => {
		const bad = await http(base, "POST", "/auth/v1/token?grant_type=password", {
			body: { email: "ops@example.com", password: "wrong" },
		});
		assert.equal(bad.status, 400);
		assert.deepEqual(bad.body, { error: "invalid_grant", message: "Invalid login credentials" });
		for (const q of ["", "?grant_type=refresh_token"]) {
			const r = await http(base, "POST", `/auth/v1/token${q}`, {
				body: { email: "ops@example.com", password: "ops-pass" },
			});
			assert.equal(r.status, 400);
			assert.equal(r.body.error, "unsupported_grant_type");
		}
	});

	it("serves the public JWKS and counts devauth in /ready", async () => {
		const r = await http(base, "GET", "/auth/v1/.well-known/jwks.json");
		assert.equal(r.status, 200);
		assert.equal(r.body.keys.length, 1);
		assert.equal(r.body.keys[0].kty, "RSA");
		assert.equal(r.body.keys[0].d, undefined);
		const ready = await http(base, "GET", "/ready");
		assert.equal(ready.status, 200);
		assert.equal(ready.body.services.devauth, true);
	});
});
