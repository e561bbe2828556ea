/**
 * Gateway authentication (§5.6): every 401 body and `WWW-Authenticate`, and
 * `ctx.meta.user` coming only from the verified bearer token.
 */
import assert from "node:assert/strict";
import { SignJWT } from "jose";
import { createDevIdp } from "../../../lib/platform/devidp";
import { newSender } from "../../helpers/broker";
import { BAD_SENDERS, NON_STRING_ROLES } from "../auth/claim-cases";
import { calls, http, useGateway } from "./setup";

describe("gateway: authentication (§5.6)", () => {
	const g = useGateway();

	it("401 Authentication required without an Authorization header", async () => {
		// `calls` is shared by every gateway spec file: compare with the count before this request
		const before = calls["intake.status"] ?? 0;
		const r = await http(g.base, "GET", "/v1/orders/status?order_no=A1");
		assert.equal(r.status, 401);
		assert.deepEqual(r.body, { error: "Authentication required" });
		assert.equal(r.headers.get("www-authenticate"), "Bearer");
		assert.equal(calls["intake.status"] ?? 0, before);
	});

	it("401 Authentication required for a malformed header (not Bearer, empty token)", async () => {
		for (const h of ["Basic dXNlcjpwYXNz", "Bearer", "Bearer ", "Token abc", "Bearer a b"]) {
			const r = await http(g.base, "GET", "/v1/orders/status?order_no=A1", { headers: { authorization: h } });
			assert.equal(r.status, 401, h);
			assert.deepEqual(r.body, { error: "Authentication required" }, h);
		}
	});

	it("401 Invalid or expired token for garbage", async () => {
		const r = await http(g.base, "GET", "/v1/orders/status?order_no=A1", { token: "garbage" });
		assert.equal(r.status, 401);
		assert.deepEqual(r.body, { error: "Invalid or expired token", code: "token_invalid" });
		assert.equal(r.headers.get("www-authenticate"), 'Bearer error="invalid_token"');
	});

	it("401 token_expired for an expired token", async () => {
		const t = await g.idp.sign(
			{ sub: "u1", app_metadata: { sender_id: 5, role: "merchant" } },
			{ expiresIn: Math.floor(Date.now() / 1000) - 60 },
		);
		const r = await http(g.base, "GET", "/v1/orders/status?order_no=A1", { token: t });
		assert.equal(r.status, 401);
		assert.deepEqual(r.body, { error: "Invalid or expired token", code: "token_expired" });
	});

	it("401 for a token signed by another key", async () => {
		const other = await createDevIdp();
		const r = await http(g.base, "GET", "/v1/orders/status?order_no=A1", { token: await other.tokenFor(5) });
		assert.equal(r.status, 401);
		assert.equal(r.body.error, "Invalid or expired token");
		assert.equal(r.body.code, "token_invalid");
	});

	it("401 for alg none and for HS256", async () => {
		const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
		const exp = Math.floor(Date.now() / 1000) + 3600;
		const claims = { sub: "u1", iss: g.idp.issuer, exp, app_metadata: { sender_id: 5, role: "merchant" } };
		const none = `${b64({ alg: "none", typ: "JWT" })}.${b64(claims)}.`;
		const hs = await new SignJWT(claims)
			.setProtectedHeader({ alg: "HS256", kid: g.idp.jwks.keys[0].kid })
			.sign(Buffer.from(JSON.stringify(g.idp.jwks.keys[0])));
		for (const t of [none, hs]) {
			const r = await http(g.base, "GET", "/v1/orders/status?order_no=A1", { token: t });
			assert.equal(r.status, 401);
			assert.equal(r.body.error, "Invalid or expired token");
			assert.equal(r.body.code, "token_invalid");
		}
	});

	it("401 token_claims for a token without exp", async () => {
		const t = await g.idp.sign(
			{ sub: "u1", app_metadata: { sender_id: 5, role: "merchant" } },
			{ noExp: true },
		);
		const r = await http(g.base, "GET", "/v1/orders/status?order_no=A1", { token: t });
		assert.equal(r.status, 401);
		assert.deepEqual(r.body, { error: "Invalid or expired token", code: "token_claims" });
	});

	it("401 account_missing without app_metadata.sender_id; role_unknown for a foreign role", async () => {
		const noSender = await g.idp.sign({ sub: "u1", app_metadata: { role: "merchant" } });
		let r = await http(g.base, "GET", "/v1/orders/status?order_no=A1", { token: noSender });
		assert.equal(r.status, 401);
		assert.deepEqual(r.body, { error: "Invalid or expired token", code: "account_missing" });
		const badRole = await g.idp.sign({ sub: "u1", app_metadata: { sender_id: 5, role: "superuser" } });
		r = await http(g.base, "GET", "/v1/orders/status?order_no=A1", { token: badRole });
		assert.equal(r.status, 401);
		assert.deepEqual(r.body, { error: "Invalid or expired token", code: "role_unknown" });
	});

	it("a valid token reaches the handler with ctx.meta.user from the token only", async () => {
		const sender = newSender();
		const t = await g.idp.tokenFor(sender, "merchant_ops");
		const r = await http(g.base, "POST", "/v1/intake/order?sender_id=4242", {
			token: t,
			// (a key in both the query and the body is refused since issue 12: sender_id only in the query)
			body: {
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

	describe("strict claims at the gateway (issue 12)", () => {
		const path = "/v1/orders/status?order_no=A1";
		const invalid = (code: string) => ({ error: "Invalid or expired token", code });

		it("accepts sender_id as a positive integer number or a decimal string", async () => {
			for (const sender_id of [1001, "1001"]) {
				const t = await g.idp.sign({ sub: "u1", app_metadata: { sender_id, role: "merchant" } });
				const r = await http(g.base, "GET", path, { token: t });
				assert.equal(r.status, 200, JSON.stringify(sender_id));
				assert.equal(r.body.user.sender_id, 1001);
			}
		});

		it("401 token_claims for hex, exponent, bool, array, object, zero, negative and unsafe sender_ids", async () => {
			const before = calls["intake.status"] ?? 0;
			for (const sender_id of BAD_SENDERS) {
				const t = await g.idp.sign({ sub: "u1", app_metadata: { sender_id, role: "merchant" } });
				const r = await http(g.base, "GET", path, { token: t });
				const what = JSON.stringify(sender_id) ?? String(sender_id);
				assert.equal(r.status, 401, what);
				assert.deepEqual(r.body, invalid("token_claims"), what);
				assert.equal(r.headers.get("www-authenticate"), 'Bearer error="invalid_token"');
			}
			assert.equal(calls["intake.status"] ?? 0, before, "no refused token reaches the service");
		});

		it("401 token_claims for a non-string role, role_unknown for an unknown one, account_missing without sender_id", async () => {
			for (const role of NON_STRING_ROLES) {
				const t = await g.idp.sign({ sub: "u1", app_metadata: { sender_id: 5, role } });
				const r = await http(g.base, "GET", path, { token: t });
				assert.equal(r.status, 401, JSON.stringify(role));
				assert.deepEqual(r.body, invalid("token_claims"), JSON.stringify(role));
			}
			for (const [app_metadata, code] of [
				[{ sender_id: 5 }, "role_unknown"],
				[{ sender_id: 5, role: "MERCHANT" }, "role_unknown"],
				[{ sender_id: null, role: "merchant" }, "account_missing"],
				[JSON.parse('{"__proto__":{"sender_id":5,"role":"merchant"}}'), "account_missing"],
				["merchant", "token_claims"],
				[[5, "merchant"], "token_claims"],
			] as const) {
				const r = await http(g.base, "GET", path, { token: await g.idp.sign({ sub: "u1", app_metadata }) });
				assert.equal(r.status, 401, JSON.stringify(app_metadata));
				assert.deepEqual(r.body, invalid(code), JSON.stringify(app_metadata));
			}
		});

		it("401 token_claims for a wrong or missing iss or aud", async () => {
			const claims = { sub: "u1", app_metadata: { sender_id: 5, role: "merchant" } };
			const tokens = {
				"wrong iss": await g.idp.sign({ ...claims, iss: "https://other-idp.example" }),
				"no iss": await g.idp.sign(claims, { noIss: true }),
				"wrong aud": await g.idp.sign({ ...claims, aud: "another-api" }),
				"no aud": await g.idp.sign(claims, { noAud: true }),
			};
			for (const [what, t] of Object.entries(tokens)) {
				const r = await http(g.base, "GET", path, { token: t });
				assert.equal(r.status, 401, what);
				assert.deepEqual(r.body, invalid("token_claims"), what);
			}
			const ok = await http(g.base, "GET", path, { token: await g.idp.sign(claims) });
			assert.equal(ok.status, 200);
		});
	});
});
