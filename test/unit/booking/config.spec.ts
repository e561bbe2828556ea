/**
 * booking (and the simulator): configuration they refuse to run without
 * (docs/ARCHITECTURE.md §2: fail loudly at start): with SANDBOX=1 the
 * sandbox couriers' push key `SANDBOX_WEBHOOK_SECRET` (no default, issue 31).
 * The wallet's cursor secret is billing's (test/unit/billing/config.spec.ts).
 */
import assert from "node:assert/strict";
import { ServiceBroker } from "moleculer";
import { loadServiceSchema } from "../../../lib/platform/system";
import { testBrokerOptions } from "../../helpers/broker";

describe("booking: start-up configuration", () => {
	/** Starts a broker with `service` under `env` (restored after); answers the start's error, or undefined. */
	async function startError(service: "booking" | "simulator", env: Record<string, string | undefined>) {
		const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
		for (const [k, v] of Object.entries(env)) {
			if (v === undefined) delete process.env[k];
			else process.env[k] = v;
		}
		const broker = new ServiceBroker(testBrokerOptions(false));
		try {
			broker.createService(loadServiceSchema(service));
			return await broker.start().then(
				() => undefined,
				(err: Error) => err,
			);
		} finally {
			await broker.stop().catch(() => undefined);
			for (const [k, v] of Object.entries(saved)) {
				if (v === undefined) delete process.env[k];
				else process.env[k] = v;
			}
		}
	}

	it("refuses to start with SANDBOX=1 and no SANDBOX_WEBHOOK_SECRET (blank counts as unset); starts without one when the sandbox is off", async () => {
		for (const key of [undefined, "  "]) {
			const err = await startError("booking", { SANDBOX: "1", SANDBOX_WEBHOOK_SECRET: key });
			assert.match(String(err?.message), /booking: SANDBOX_WEBHOOK_SECRET is required with SANDBOX=1/);
		}
		assert.equal(await startError("booking", { SANDBOX: "0", SANDBOX_WEBHOOK_SECRET: undefined }), undefined);
	});

	it("the simulator refuses to start pushing scans (SANDBOX_SCAN_PUSH_URL) without SANDBOX_WEBHOOK_SECRET", async () => {
		const err = await startError("simulator", {
			SANDBOX: "1",
			SANDBOX_WEBHOOK_SECRET: undefined,
			SANDBOX_SCAN_PUSH_URL: "http://127.0.0.1:9/v1/tracking/webhooks/{courier}",
			SANDBOX_COURIER_PORT: "0",
		});
		assert.match(String(err?.message), /simulator: SANDBOX_WEBHOOK_SECRET is required with SANDBOX=1/);
	});
});
