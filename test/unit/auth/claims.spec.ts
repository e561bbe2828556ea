/**
 * Token claims read strictly (issue 12): `app_metadata.sender_id` only a
 * positive safe-integer number or a `^[1-9]\d*$` string, `role` only a known
 * string; `iss` and `aud` required by the verifier; a gateway process refuses
 * to start with `AUTH_JWKS_URL` but no `AUTH_ISSUER` / `AUTH_AUDIENCE`; the
 * zero-setup start sets both to its identity provider's values.
 */
import assert from "node:assert/strict";
import type { JWTPayload } from "jose";
import {
	type AuthUser,
	claimsUser,
	createVerifier,
	roleClaim,
	senderClaim,
} from "../../../lib/platform/auth";
import { checkAuthConfig, loadConfig } from "../../../lib/platform/config";
import {
	createDevIdp,
	DEV_IDP_AUDIENCE,
	DEV_IDP_ISSUER,
	type DevIdp,
	serveJwks,
} from "../../../lib/platform/devidp";
import { startSystem, zeroSetupAuth } from "../../../lib/platform/system";
import { setEnv } from "../gateway/setup";
import { BAD_SENDERS, NON_STRING_ROLES } from "./claim-cases";

/** The §5.6 `code` of the 401 thrown by `fn`; fails when `fn` does not throw a 401. */
async function codeOf(fn: () => unknown): Promise<string> {
	try {
		await fn();
	} catch (err) {
		const e = err as { code?: unknown; data?: { body?: { error?: unknown; code?: unknown } } };
		assert.equal(e.code, 401);
		assert.equal(e.data?.body?.error, "Invalid or expired token");
		return String(e.data?.body?.code);
	}
	assert.fail("expected a 401");
}

const MAX = Number.MAX_SAFE_INTEGER;

describe("auth: strict claims (issue 12)", () => {
	describe("senderClaim", () => {
		it("accepts a positive safe-integer number or a canonical decimal string", () => {
			assert.equal(senderClaim(1001), 1001);
			assert.equal(senderClaim("1001"), 1001);
			assert.equal(senderClaim(1), 1);
			assert.equal(senderClaim(MAX), MAX);
			assert.equal(senderClaim(String(MAX)), MAX);
		});

		it("is undefined when absent or null", () => {
			assert.equal(senderClaim(undefined), undefined);
			assert.equal(senderClaim(null), undefined);
		});

		it("refuses hex, exponent, padded, signed, zero, negative, fractional, unsafe, bool, array and object values", async () => {
			for (const v of BAD_SENDERS) {
				assert.equal(await codeOf(() => senderClaim(v)), "token_claims", JSON.stringify(v) ?? String(v));
			}
		});
	});

	describe("roleClaim", () => {
		it("accepts a known role string only; unknown strings are undefined", () => {
			assert.equal(roleClaim("merchant_ops"), "merchant_ops");
			for (const v of ["superuser", "", "Merchant", " merchant", "merchant ", undefined, null])
				assert.equal(roleClaim(v), undefined, String(v));
		});

		it("refuses a non-string role (no String() coercion)", async () => {
			for (const v of NON_STRING_ROLES)
				assert.equal(await codeOf(() => roleClaim(v)), "token_claims", JSON.stringify(v));
		});
	});

	describe("claimsUser", () => {
		const base = (app_metadata: unknown, extra: Partial<JWTPayload> = {}): JWTPayload => ({
			sub: "u1",
			app_metadata,
			...extra,
		});

		it("builds the user from app_metadata only", () => {
			const u: AuthUser = claimsUser(
				base({ sender_id: "1001", role: "merchant_finance" }, { email: "a@b.c", sender_id: 5 }),
			);
			assert.equal(u.sender_id, 1001);
			assert.equal(u.role, "merchant_finance");
			assert.equal(u.read_only, true);
			assert.equal(u.email, "a@b.c");
			assert.equal(claimsUser(base({ sender_id: 7, role: "merchant" }, { email: 5 })).email, undefined);
		});

		it("account_missing without sender_id; role_unknown without a known role", async () => {
			assert.equal(await codeOf(() => claimsUser(base({ role: "merchant" }))), "account_missing");
			assert.equal(await codeOf(() => claimsUser(base(undefined))), "account_missing");
			assert.equal(
				await codeOf(() => claimsUser(base({ sender_id: null, role: "merchant" }))),
				"account_missing",
			);
			assert.equal(await codeOf(() => claimsUser(base({ sender_id: 5 }))), "role_unknown");
			assert.equal(await codeOf(() => claimsUser(base({ sender_id: 5, role: "root" }))), "role_unknown");
		});

		it("token_claims for a malformed app_metadata, sender_id, role or sub", async () => {
			for (const m of ["x", 5, [1001], null])
				assert.equal(await codeOf(() => claimsUser(base(m))), "token_claims", JSON.stringify(m));
			for (const s of BAD_SENDERS)
				assert.equal(
					await codeOf(() => claimsUser(base({ sender_id: s, role: "merchant" }))),
					"token_claims",
					JSON.stringify(s) ?? String(s),
				);
			for (const r of NON_STRING_ROLES)
				assert.equal(
					await codeOf(() => claimsUser(base({ sender_id: 5, role: r }))),
					"token_claims",
					JSON.stringify(r),
				);
			for (const sub of [5, "", ["u1"]])
				assert.equal(
					await codeOf(() => claimsUser(base({ sender_id: 5, role: "merchant" }, { sub: sub as string }))),
					"token_claims",
					JSON.stringify(sub),
				);
		});

		it("never reads claims through the prototype chain", async () => {
			// JSON.parse (as jose decodes a payload) makes "__proto__" an own key, not the prototype
			const meta: unknown = JSON.parse('{"__proto__":{"sender_id":5,"role":"merchant"}}');
			assert.equal(await codeOf(() => claimsUser(base(meta))), "account_missing");
			const inherited = Object.create({ sender_id: 5, role: "merchant" });
			assert.equal(await codeOf(() => claimsUser(base(inherited))), "account_missing");
		});
	});

	describe("createVerifier: iss and aud required", () => {
		let idp: DevIdp;
		let served: Awaited<ReturnType<typeof serveJwks>>;
		let verify: ReturnType<typeof createVerifier>;
		const claims = { sub: "u1", app_metadata: { sender_id: 42, role: "merchant" } };

		before(async () => {
			idp = await createDevIdp();
			served = await serveJwks(idp);
			verify = createVerifier({ jwksUrl: served.url, issuer: idp.issuer, audience: idp.audience });
		});
		after(() => served?.server.close());

		it("the development IdP's tokens carry its iss and aud and verify", async () => {
			assert.equal(idp.issuer, DEV_IDP_ISSUER);
			assert.equal(idp.audience, DEV_IDP_AUDIENCE);
			const u = await verify(await idp.tokenFor(42, "merchant_ops"));
			assert.equal(u.sender_id, 42);
			assert.equal(u.role, "merchant_ops");
			// an aud array naming this API is accepted (RFC 7519 §4.1.3)
			assert.equal((await verify(await idp.sign({ ...claims, aud: ["other", idp.audience] }))).sender_id, 42);
		});

		it("token_claims for a wrong or missing iss or aud", async () => {
			const bad = [
				await idp.sign({ ...claims, iss: "https://evil.example" }),
				await idp.sign(claims, { noIss: true }),
				await idp.sign({ ...claims, aud: "another-api" }),
				await idp.sign({ ...claims, aud: [] }),
				await idp.sign(claims, { noAud: true }),
				await idp.sign(claims, { noIss: true, noAud: true }),
			];
			for (const [i, t] of bad.entries())
				assert.equal(await codeOf(() => verify(t)), "token_claims", `#${i}`);
		});

		it("tolerates 30 s of clock skew on exp, not more", async () => {
			const now = Math.floor(Date.now() / 1000);
			assert.equal((await verify(await idp.sign(claims, { expiresIn: now - 10 }))).sender_id, 42);
			assert.equal(
				await codeOf(async () => verify(await idp.sign(claims, { expiresIn: now - 60 }))),
				"token_expired",
			);
		});
	});

	describe("configuration", () => {
		const env = (e: Record<string, string>): NodeJS.ProcessEnv => ({ SERVICES: "", ...e });

		it("a gateway process refuses AUTH_JWKS_URL without AUTH_ISSUER and AUTH_AUDIENCE", () => {
			const url = "https://idp.example/.well-known/jwks.json";
			assert.throws(
				() => loadConfig(env({ AUTH_JWKS_URL: url })),
				/AUTH_ISSUER and AUTH_AUDIENCE are required with AUTH_JWKS_URL/,
			);
			assert.throws(
				() => loadConfig(env({ AUTH_JWKS_URL: url, AUTH_ISSUER: "https://idp.example" })),
				/^Error: AUTH_AUDIENCE is required/,
			);
			assert.throws(
				() => loadConfig(env({ AUTH_JWKS_URL: url, AUTH_AUDIENCE: "api", AUTH_ISSUER: "  " })),
				/^Error: AUTH_ISSUER is required/,
			);
			assert.throws(
				() => loadConfig(env({ AUTH_JWKS_URL: url, SERVICES: "booking,gateway" })),
				/AUTH_ISSUER/,
			);
			const ok = loadConfig(
				env({ AUTH_JWKS_URL: url, AUTH_ISSUER: " https://idp.example ", AUTH_AUDIENCE: "api" }),
			);
			assert.equal(ok.authIssuer, "https://idp.example");
			assert.equal(ok.authAudience, "api");
		});

		it("processes without the gateway (they verify no token) are not refused", () => {
			const url = "https://idp.example/.well-known/jwks.json";
			assert.equal(loadConfig(env({ AUTH_JWKS_URL: url, SERVICES: "booking" })).authIssuer, undefined);
			assert.doesNotThrow(() =>
				checkAuthConfig({ services: ["gateway"], authJwksUrl: undefined, authIssuer: undefined }),
			);
		});

		it("startSystem refuses to start a gateway with AUTH_JWKS_URL but no AUTH_AUDIENCE", async () => {
			// DATABASE_URL is set by the global test setup: no zero-setup defaults apply
			const restore = setEnv({
				AUTH_JWKS_URL: "http://127.0.0.1:9/jwks.json",
				AUTH_ISSUER: "https://idp.example",
				AUTH_AUDIENCE: undefined,
				SERVICES: undefined,
				MSA_DEV_IDP: undefined,
			});
			try {
				await assert.rejects(() => startSystem(), /AUTH_AUDIENCE is required with AUTH_JWKS_URL/);
			} finally {
				restore();
			}
		});

		it("the zero-setup start sets the development IdP's issuer and audience itself", () => {
			const e: NodeJS.ProcessEnv = { PORT: "3456", SERVICES: "" };
			assert.equal(zeroSetupAuth(e), true);
			assert.equal(e.AUTH_JWKS_URL, "http://127.0.0.1:3456/auth/v1/.well-known/jwks.json");
			assert.equal(e.MSA_DEV_IDP, "1");
			assert.equal(e.AUTH_ISSUER, DEV_IDP_ISSUER);
			assert.equal(e.AUTH_AUDIENCE, DEV_IDP_AUDIENCE);
			const cfg = loadConfig(e);
			assert.equal(cfg.authIssuer, DEV_IDP_ISSUER);
			assert.equal(cfg.authAudience, DEV_IDP_AUDIENCE);
			// an external identity provider is left alone (and then needs both settings)
			const ext: NodeJS.ProcessEnv = { AUTH_JWKS_URL: "https://idp.example/jwks" };
			assert.equal(zeroSetupAuth(ext), false);
			assert.deepEqual(ext, { AUTH_JWKS_URL: "https://idp.example/jwks" });
		});
	});
});
