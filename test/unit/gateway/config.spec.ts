/**
 * Gateway configuration: refuses to start without an identity provider;
 * listens on the configured port; no dev IdP routes unless MSA_DEV_IDP=1.
 */
import assert from "node:assert/strict";
import { ServiceBroker } from "moleculer";
import { loadConfig } from "../../../lib/platform/config";
import { createDevIdp } from "../../../lib/platform/devidp";
import { loadServiceSchema } from "../../../lib/platform/system";
import brokerOptions from "../../../moleculer.config";
import { freePort } from "../../helpers/net";
import { FAKES, http, setEnv, startGateway } from "./setup";

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
			AUTH_ISSUER: "test-issuer",
			AUTH_AUDIENCE: "test-audience",
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
