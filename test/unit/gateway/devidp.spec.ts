/**
 * Gateway with the development identity provider (zero-setup login, §5.5).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ServiceBroker } from "moleculer";
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
			AUTH_JWKS_URL: `http://127.0.0.1:${port}/auth/v1/.well-known/jwks.json`,
			AUTH_ISSUER: undefined,
			MSA_DEV_IDP: "1",
			MSA_DATA_DIR: dir,
			MSA_DEV_USERS_FILE: resolve(__dirname, "../../../config/dev-users.json"),
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
