/**
 * Gateway with the development identity provider (zero-setup login, §5.5),
 * configured exactly as the zero-setup start does (lib/platform/system.ts
 * `zeroSetupAuth`: JWKS, `iss` and `aud` of the provider); login throttling
 * and prototype-safe credentials (issue 12).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { decodeJwt } from "jose";
import type { ServiceBroker } from "moleculer";
import {
	createDevIdp,
	DEV_IDP_AUDIENCE,
	DEV_IDP_ISSUER,
	DEV_LOGIN_LIMITS,
} from "../../../lib/platform/devidp";
import { zeroSetupAuth } from "../../../lib/platform/system";
import { skipContract } from "../../helpers/contract";
import { freePort } from "../../helpers/net";
import { FAKES, http, setEnv, startGateway } from "./setup";

describe("gateway with the development IdP (zero-setup login)", () => {
	// the fakes answer echo bodies, not the documented shapes: only the gateway's own answers are checked
	skipContract("gateway mechanics on fake services", "success");
	let broker: ServiceBroker;
	let base: string;
	let restoreEnv: () => void;
	let dir: string;

	before(async () => {
		dir = mkdtempSync(join(tmpdir(), "msa-devidp-"));
		const port = await freePort();
		restoreEnv = setEnv({
			PORT: String(port),
			AUTH_JWKS_URL: undefined,
			AUTH_ISSUER: undefined,
			AUTH_AUDIENCE: undefined,
			MSA_DEV_IDP: undefined,
			MSA_DATA_DIR: dir,
			MSA_DEV_USERS_FILE: resolve(__dirname, "../../../config/dev-users.json"),
		});
		// the zero-setup start's identity settings (JWKS on our PORT, MSA_DEV_IDP, iss, aud)
		assert.equal(zeroSetupAuth(process.env), true);
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

	it("zero-setup tokens carry the provider's iss and aud, which the gateway requires", async () => {
		const login = await http(base, "POST", "/auth/v1/token?grant_type=password", {
			body: { email: "merchant@example.com", password: "merchant-pass" },
		});
		assert.equal(login.status, 200);
		const claims = decodeJwt(login.body.access_token);
		assert.equal(claims.iss, DEV_IDP_ISSUER);
		assert.equal(claims.aud, DEV_IDP_AUDIENCE);
		const ok = await http(base, "GET", "/v1/orders/status?order_no=A", { token: login.body.access_token });
		assert.equal(ok.status, 200);
		// same signing key (the provider's key file), another audience or issuer: refused
		const keyFile = join(dir, "dev-idp-key.json");
		for (const other of [
			await createDevIdp({ keyFile, audience: "another-api" }),
			await createDevIdp({ keyFile, issuer: "another-idp" }),
		]) {
			const r = await http(base, "GET", "/v1/orders/status?order_no=A", {
				token: await other.tokenFor(1001),
			});
			assert.equal(r.status, 401);
			assert.deepEqual(r.body, { error: "Invalid or expired token", code: "token_claims" });
		}
	});

	it("400 invalid_request for prototype-nested or non-string credentials", async () => {
		for (const body of [
			'{"__proto__":{"email":"ops@example.com","password":"ops-pass"}}',
			'{"email":"ops@example.com","__proto__":{"password":"ops-pass"}}',
			'{"constructor":{"prototype":{"email":"ops@example.com","password":"ops-pass"}}}',
			'{"email":["ops@example.com"],"password":"ops-pass"}',
			'{"email":{"toString":"ops@example.com"},"password":"ops-pass"}',
			'{"email":"ops@example.com","password":{"length":8}}',
			'{"email":"ops@example.com","password":["ops-pass"]}',
		]) {
			const r = await http(base, "POST", "/auth/v1/token?grant_type=password", {
				body,
				headers: { "content-type": "application/json" },
			});
			assert.equal(r.status, 400, body);
			assert.equal(r.body.error, "invalid_request", body);
			assert.equal(r.body.access_token, undefined, body);
		}
	});

	it("throttles logins per username: the attempt after the limit is 429 with Retry-After, even with the right password", async () => {
		const attempt = (password: string) =>
			http(base, "POST", "/auth/v1/token?grant_type=password", {
				body: { email: "Other@Example.com", password },
			});
		for (let i = 0; i < DEV_LOGIN_LIMITS.perUser; i++) {
			const r = await attempt(`wrong-${i}`);
			assert.equal(r.status, 400, `attempt ${i + 1}`);
			assert.equal(r.body.error, "invalid_grant");
		}
		const r = await attempt("other-pass");
		assert.equal(r.status, 429);
		assert.equal(r.body.error, "rate_limited");
		assert.equal(typeof r.body.message, "string");
		assert.equal(r.body.access_token, undefined);
		const retry = Number(r.headers.get("retry-after"));
		assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= DEV_LOGIN_LIMITS.windowS, String(retry));
		// another user is not locked out by it
		const ops = await http(base, "POST", "/auth/v1/token?grant_type=password", {
			body: { email: "ops@example.com", password: "ops-pass" },
		});
		assert.equal(ops.status, 200);
	});
});
