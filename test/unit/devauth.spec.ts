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
import { createVerifier } from "../../lib/auth";
import { serveJwks } from "../../lib/devidp";
import { rejects, startBroker } from "../helpers/broker";

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
		const r: any = await broker.call(
			"devauth.token",
			{ grant_type: "password", email: "Merchant@Example.com", password: "merchant-pass" },
			{ meta },
		);
		assert.deepEqual(Object.keys(r).sort(), ["access_token", "expires_in", "refresh_token", "token_type"]);
		assert.equal(r.expires_in, 3600);
		assert.equal(r.token_type, "bearer");
		assert.equal(meta.$responseHeaders["Cache-Control"], "no-store");
		const jwks: any = await broker.call("devauth.jwks");
		const { payload, protectedHeader } = await jwtVerify(r.access_token, createLocalJWKSet(jwks), {
			algorithms: ["RS256"],
			requiredClaims: ["exp", "sub"],
		});
		assert.equal(protectedHeader.alg, "RS256");
		assert.deepEqual(payload.app_metadata, { sender_id: 1001, role: "merchant" });
		assert.equal(payload.email, "merchant@example.com");
		assert.equal(payload.iss, "msa-dev-idp");
	});

	it("the token verifies with the gateway's verifier against the served JWKS", async () => {
		const r: any = await broker.call("devauth.token", {
			grant_type: "password",
			username: "support@example.com",
			password: "support-pass",
		});
		const jwks: any = await broker.call("devauth.jwks");
		const served = await serveJwks({ jwks } as any);
		try {
			const user = await createVerifier({ jwksUrl: served.url, issuer: "msa-dev-idp" })(r.access_token);
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
				broker.call("devauth.token", {
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
			const err = await rejects(() => broker.call("devauth.token", { grant_type: "password", ...p }));
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
			const err = await rejects(() => broker.call("devauth.token", { grant_type: "password", ...p }));
			assert.equal(err.code, 400);
			assert.equal(err.data.body.error, "invalid_request");
		}
	});

	it("serves only the public key and keeps the private key in the data dir (0600) across restarts", async () => {
		const jwks: any = await broker.call("devauth.jwks");
		assert.equal(jwks.keys.length, 1);
		for (const k of ["d", "p", "q", "dp", "dq", "qi"]) assert.equal(jwks.keys[0][k], undefined);
		const keyFile = join(dir, "dev-idp-key.json");
		assert.equal(statSync(keyFile).mode & 0o777, 0o600);
		const before: any = await broker.call("devauth.token", {
			grant_type: "password",
			email: "other@example.com",
			password: "other-pass",
		});
		await broker.stop();
		broker = await startBroker(["devauth"]);
		const after: any = await broker.call("devauth.jwks");
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
			const r: any = await b.call("devauth.token", {
				grant_type: "password",
				email: "x@y.z",
				password: "pw",
			});
			assert.deepEqual(decodeJwt(r.access_token).app_metadata, { sender_id: 77, role: "merchant_staff" });
			// The default users are gone: their login is refused like any unknown user.
			const err = await rejects(() =>
				b.call("devauth.token", {
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
});
