/**
 * Smoke test of the zero-setup start as `npm start` runs it (the compiled build, start:prod's command line; docs/decisions/0136-npm-start-compiled.md) with no DATABASE_URL,
 * REDIS_URL, TRANSPORTER or AUTH_JWKS_URL (embedded PostgreSQL under a
 * temporary data dir, BullMQ on PostgreSQL, in-process transport, development
 * identity provider, sandbox). Logs in as a listed user, books one order and
 * downloads its label; then (its own order again) kills the process with
 * SIGKILL (leaving a stale postmaster) and checks the next start recovers with
 * the data intact; the sandbox push key is generated once into the data dir
 * (a push signed with the old public default is refused, one signed with the
 * generated key accepted). Each test starts the system when it is not running.
 * Only ports and the data directory are set, so the test cannot collide with
 * anything else on the machine.
 */
import { strict as assert } from "node:assert";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { signedPushHeaders } from "../../lib/couriers/sandbox";
import { embeddedPgData, stopStalePostmaster } from "../../lib/platform/system";
import { client, typicalFlow } from "../helpers/flow";
import { freePort } from "../helpers/net";
import { buildOnce, type StartedProcess, startProcess, waitReady } from "../helpers/processes";

describe("e2e: zero-setup start (no environment)", function () {
	this.timeout(180_000);
	const dir = mkdtempSync(join(tmpdir(), "msa-zero-"));
	let env: Record<string, string> = {};
	let proc: StartedProcess | undefined;
	let base = "";
	/** the sandbox push key the first start generated */
	let installationKey = "";

	before(async () => {
		const port = await freePort();
		base = `http://127.0.0.1:${port}`;
		env = {
			PORT: String(port),
			MSA_DATA_DIR: dir,
			EMBEDDED_PG_PORT: String(await freePort()),
			SANDBOX_COURIER_PORT: String(await freePort()),
			LOGLEVEL: "warn",
		};
	});

	after(async () => {
		await proc?.stop();
		const pgdata = embeddedPgData(dir);
		await stopStalePostmaster(pgdata);
		if (!pgdata.startsWith(dir)) rmSync(dirname(pgdata), { recursive: true, force: true });
		rmSync(dir, { recursive: true, force: true });
	});

	async function login(): Promise<string> {
		const res = await fetch(`${base}/auth/v1/token?grant_type=password`, {
			method: "POST",
			headers: { "content-type": "application/json" },
			body: JSON.stringify({ email: "merchant@example.com", password: "merchant-pass" }),
		});
		const body = (await res.json()) as { access_token: string; refresh_token: string; expires_in: number };
		assert.equal(res.status, 200, JSON.stringify(body));
		assert.ok(body.access_token && body.refresh_token && body.expires_in > 0);
		return body.access_token;
	}

	/** Starts the system unless a previous test left it running (each test works on its own). */
	async function running(): Promise<StartedProcess> {
		if (!proc) {
			await buildOnce();
			proc = startProcess(env, { compiled: true });
			await waitReady(base, [proc], 120_000);
		}
		return proc;
	}

	it("starts with nothing configured, books an order and serves its label", async () => {
		await running();
		const r = await typicalFlow(base, await login());
		assert.equal(r.label.subarray(0, 5).toString(), "%PDF-");
	});

	it("generates the sandbox push key once per installation (0600 in the data dir); pushes signed with the old default are refused", async () => {
		await running();
		const file = join(dir, "sandbox-webhook-secret");
		const key = readFileSync(file, "utf8").trim();
		assert.match(key, /^[0-9a-f]{64}$/);
		assert.equal(statSync(file).mode & 0o777, 0o600);
		const raw = JSON.stringify({
			Shipment: {
				AWB: "00000000000000",
				Status: {
					Status: "Delivered",
					StatusCode: "DLVD",
					StatusType: "DL",
					StatusDateTime: new Date().toISOString(),
				},
			},
		});
		const post = (headers: Record<string, string>) =>
			fetch(`${base}/v1/tracking/webhooks/sbx-express`, {
				method: "POST",
				headers: { "content-type": "application/json", ...headers },
				body: raw,
			});
		const forged = await post(signedPushHeaders(raw, "sandbox-webhook-secret"));
		assert.equal(forged.status, 401);
		assert.equal(((await forged.json()) as { error: string }).error, "invalid_signature");
		const signed = await post(signedPushHeaders(raw, key));
		assert.equal(signed.status, 200, await signed.clone().text());
		assert.deepEqual(await signed.json(), { accepted: 0, applied: 0 });
		installationKey = key;
	});

	it("recovers from a killed run (stale postmaster) with the data intact", async () => {
		// Its own booked order, made before the kill.
		const killed = await running();
		const booked = await typicalFlow(base, await login());
		await killed.stop("SIGKILL");
		proc = undefined;
		const restarted = await running();
		const api = client(base, await login());
		const st = await api.get(`/v1/orders/status?order_no=${booked.customer_order_no}`);
		assert.equal(st.status, 200, JSON.stringify(st.body));
		assert.equal(st.body.state, "booked");
		if (installationKey)
			assert.equal(
				readFileSync(join(dir, "sandbox-webhook-secret"), "utf8").trim(),
				installationKey,
				"the same key after a restart",
			);
		const code = await restarted.stop("SIGTERM");
		assert.equal(code, 0, restarted.output().slice(-3000));
		proc = undefined;
	});
});
