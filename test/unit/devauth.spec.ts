/**
 * `devauth` actions called on a broker (the HTTP path is covered in
 * gateway.spec.ts): password login, errors, JWKS, key persistence.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalJWKSet, decodeJwt, jwtVerify } from "jose";
import type { ServiceBroker } from "moleculer";
import { createVerifier } from "../../lib/platform/auth";
import {
	DEV_IDP_AUDIENCE,
	DEV_IDP_ISSUER,
	DEV_LOGIN_LIMITS,
	LoginThrottle,
	serveJwks,
} from "../../lib/platform/devidp";
import { rejects, startBroker } from "../helpers/broker";
import { callAs } from "../helpers/call";

describe("devauth service", () => {
	let dir: string;
	let broker: ServiceBroker;
	const old = { data: process.env.MSA_DATA_DIR, users: process.env.MSA_DEV_USERS_FILE };

	before(async () => {
		dir = mkdtempSync(join(tmpdir(), "msa-devauth-"));
		process.env.MSA_DATA_DIR = dir;
		delete process.env.MSA_DEV_USERS_FILE;
		broker = await startBroker(["devauth"]);
	});

	after(async () => {
		await broker?.stop();
		if (old.data === undefined) delete process.env.MSA_DATA_DIR;
		else process.env.MSA_DATA_DIR = old.data;
		if (old.users === undefined) delete process.env.MSA_DEV_USERS_FILE;
		else process.env.MSA_DEV_USERS_FILE = old.users;
		rmSync(dir, { recursive: true, force: true });
	});

	it("logs a listed user in and issues a token shaped like production's", async () => {
		const meta: any = {};
		const r: any = await callAs(
			broker,
			"devauth.token",
			{ grant_type: "password", email: "Merchant@Example.com", password: "merchant-pass" },
			{ meta },
		);
		assert.deepEqual(Object.keys(r).sort(), ["access_token", "expires_in", "refresh_token", "token_type"]);
		assert.equal(r.expires_in, 3600);
		assert.equal(r.token_type, "bearer");
		assert.equal(meta.$responseHeaders["Cache-Control"], "no-store");
		const jwks: any = await callAs(broker, "devauth.jwks");
		const { payload, protectedHeader } = await jwtVerify(r.access_token, createLocalJWKSet(jwks), {
			algorithms: ["RS256"],
			requiredClaims: ["exp", "sub"],
		});
		assert.equal(protectedHeader.alg, "RS256");
		assert.deepEqual(payload.app_metadata, { sender_id: 1001, role: "merchant" });
		assert.equal(payload.email, "merchant@example.com");
		assert.equal(payload.iss, DEV_IDP_ISSUER);
		assert.equal(payload.aud, DEV_IDP_AUDIENCE);
	});

	it("the token verifies with the gateway's verifier against the served JWKS", async () => {
		const r: any = await callAs(broker, "devauth.token", {
			grant_type: "password",
			username: "support@example.com",
			password: "support-pass",
		});
		const jwks: any = await callAs(broker, "devauth.jwks");
		const served = await serveJwks({ jwks } as any);
		try {
			const user = await createVerifier({
				jwksUrl: served.url,
				issuer: DEV_IDP_ISSUER,
				audience: DEV_IDP_AUDIENCE,
			})(r.access_token);
			assert.equal(user.sender_id, 1001);
			assert.equal(user.role, "merchant_support");
			assert.equal(user.read_only, true);
		} finally {
			served.server.close();
		}
	});

	it("400 unsupported_grant_type unless grant_type is password", async () => {
		for (const g of [undefined, "", "refresh_token", "PASSWORD"]) {
			const err = await rejects(() =>
				callAs(broker, "devauth.token", {
					grant_type: g,
					email: "merchant@example.com",
					password: "merchant-pass",
				}),
			);
			assert.equal(err.code, 400);
			assert.equal(err.data.body.error, "unsupported_grant_type", String(g));
			assert.equal(typeof err.data.body.message, "string");
		}
	});

	it("400 invalid_grant with the exact body for a wrong password or unknown user", async () => {
		for (const p of [
			{ email: "merchant@example.com", password: "nope" },
			{ email: "nobody@example.com", password: "merchant-pass" },
			{ email: "merchant@example.com", password: "merchant-pass " },
		]) {
			const err = await rejects(() => callAs(broker, "devauth.token", { grant_type: "password", ...p }));
			assert.equal(err.code, 400);
			assert.deepEqual(err.data.body, { error: "invalid_grant", message: "Invalid login credentials" });
		}
	});

	it("400 invalid_request when email or password is missing or not a string", async () => {
		for (const p of [
			{ email: "merchant@example.com" },
			{ password: "x" },
			{ email: ["a"], password: "x" },
			{},
		]) {
			const err = await rejects(() => callAs(broker, "devauth.token", { grant_type: "password", ...p }));
			assert.equal(err.code, 400);
			assert.equal(err.data.body.error, "invalid_request");
		}
	});

	it("serves only the public key and keeps the private key in the data dir (0600) across restarts", async () => {
		const jwks: any = await callAs(broker, "devauth.jwks");
		assert.equal(jwks.keys.length, 1);
		for (const k of ["d", "p", "q", "dp", "dq", "qi"]) assert.equal(jwks.keys[0][k], undefined);
		const keyFile = join(dir, "dev-idp-key.json");
		assert.equal(statSync(keyFile).mode & 0o777, 0o600);
		const before: any = await callAs(broker, "devauth.token", {
			grant_type: "password",
			email: "other@example.com",
			password: "other-pass",
		});
		await broker.stop();
		broker = await startBroker(["devauth"]);
		const after: any = await callAs(broker, "devauth.jwks");
		assert.equal(after.keys[0].kid, jwks.keys[0].kid);
		await jwtVerify(before.access_token, createLocalJWKSet(after));
		assert.equal(decodeJwt(before.access_token).sub, "dev-other@example.com");
	});

	it("MSA_DEV_USERS_FILE overrides the user list", async () => {
		const f = join(dir, "users.json");
		writeFileSync(
			f,
			JSON.stringify({ users: [{ email: "x@y.z", password: "pw", sender_id: 77, role: "merchant_staff" }] }),
		);
		process.env.MSA_DEV_USERS_FILE = f;
		const b = await startBroker(["devauth"]);
		try {
			const r: any = await callAs(b, "devauth.token", {
				grant_type: "password",
				email: "x@y.z",
				password: "pw",
			});
			assert.deepEqual(decodeJwt(r.access_token).app_metadata, { sender_id: 77, role: "merchant_staff" });
			// The default users are gone: their login is refused like any unknown user.
			const err = await rejects(() =>
				callAs(b, "devauth.token", {
					grant_type: "password",
					email: "merchant@example.com",
					password: "merchant-pass",
				}),
			);
			assert.equal(err.code, 400);
			assert.deepEqual(err.data.body, { error: "invalid_grant", message: "Invalid login credentials" });
		} finally {
			await b.stop();
			delete process.env.MSA_DEV_USERS_FILE;
		}
	});

	describe("login hardening (issue 12)", () => {
		const login = (email: string, password: string, client_address?: string) =>
			callAs(
				broker,
				"devauth.token",
				{ grant_type: "password", email, password },
				{ meta: client_address === undefined ? {} : { client_address } },
			);

		it("throttles per client address: the attempt after the limit is 429 with retry_after; other addresses go on", async () => {
			for (let i = 0; i < DEV_LOGIN_LIMITS.perAddress; i++) {
				const err = await rejects(() => login(`user-${i}@example.com`, "x", "203.0.113.7"));
				assert.equal(err.code, 400, `attempt ${i + 1}`);
				assert.equal(err.data.body.error, "invalid_grant");
			}
			const err = await rejects(() => login("merchant@example.com", "merchant-pass", "203.0.113.7"));
			assert.equal(err.code, 429);
			assert.deepEqual(Object.keys(err.data.body).sort(), ["error", "message"]);
			assert.equal(err.data.body.error, "rate_limited");
			assert.ok(err.data.retry_after >= 1 && err.data.retry_after <= DEV_LOGIN_LIMITS.windowS);
			const ok: any = await login("merchant@example.com", "merchant-pass", "203.0.113.8");
			assert.equal(typeof ok.access_token, "string");
		});

		it("throttles per username (case-insensitive, trimmed) across addresses", async () => {
			for (let i = 0; i < DEV_LOGIN_LIMITS.perUser; i++) {
				const err = await rejects(() =>
					login(i % 2 ? " Finance@Example.com" : "finance@example.com", "no", `198.51.100.${i}`),
				);
				assert.equal(err.code, 400, `attempt ${i + 1}`);
			}
			const err = await rejects(() => login("FINANCE@example.com", "finance-pass", "198.51.100.200"));
			assert.equal(err.code, 429);
			assert.equal(err.data.body.error, "rate_limited");
		});

		it("LoginThrottle counts every attempt against both keys", async () => {
			const t = new LoginThrottle({ perAddress: 2, perUser: 2, windowS: 60 });
			await t.attempt("a", "u1");
			await t.attempt("a", "U1 ");
			const byUser = await rejects(() => t.attempt("b", "u1"));
			assert.equal(byUser.code, 429);
			const byAddress = await rejects(() => t.attempt("a", "u2"));
			assert.equal(byAddress.code, 429);
			await t.attempt("c", "u3");
		});

		it("reads credentials only as own string properties (never from a replaced prototype)", async () => {
			const viaProto = Object.assign(
				{},
				JSON.parse('{"__proto__":{"email":"merchant@example.com","password":"merchant-pass"}}'),
			);
			viaProto.grant_type = "password";
			// what moleculer-web's Object.assign merge makes of such a body: the credentials became the prototype
			assert.equal(viaProto.email, "merchant@example.com");
			for (const params of [
				viaProto,
				Object.assign(Object.create({ password: "merchant-pass" }), {
					grant_type: "password",
					email: "merchant@example.com",
				}),
				{
					grant_type: "password",
					email: "merchant@example.com",
					password: { toString: () => "merchant-pass" },
				},
				{ grant_type: "password", email: ["merchant@example.com"], password: "merchant-pass" },
				{ grant_type: "password", username: 1001, password: "merchant-pass" },
			]) {
				const err = await rejects(() => callAs(broker, "devauth.token", params));
				assert.equal(err.code, 400);
				assert.equal(err.data.body.error, "invalid_request");
			}
		});
	});
});
