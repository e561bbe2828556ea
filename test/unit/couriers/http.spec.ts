/**
 * The courier transport step (lib/couriers/http.ts `courierFetch`) against a real local HTTP server: a courier that
 * limits its callers (HTTP 429) or fails (5xx) is a transient `CourierUnavailable` (the booking job retries with
 * backoff), any other answer is handed to the courier's own mapper with its status.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { courierFetch } from "../../../lib/couriers/http";
import { CourierUnavailable } from "../../../lib/couriers/types";

describe("couriers: courierFetch outcomes by HTTP status", () => {
	let server: Server;
	let base: string;

	before(async () => {
		server = createServer((req, res) => {
			const status = Number(new URL(req.url ?? "/", "http://x").searchParams.get("status"));
			res.writeHead(status, { "content-type": "application/json" });
			res.end(JSON.stringify({ status }));
		});
		server.listen(0, "127.0.0.1");
		await once(server, "listening");
		base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	});
	after(() => {
		server.close();
	});

	const get = (status: number) =>
		courierFetch(`${base}/?status=${status}`, { method: "GET", headers: {} }, `test GET ${status}`, {
			timeoutMs: 5000,
		});

	for (const status of [429, 500, 503]) {
		it(`HTTP ${status} is a transient CourierUnavailable`, async () => {
			await assert.rejects(get(status), (err: unknown) => {
				assert.ok(err instanceof CourierUnavailable, String(err));
				assert.match((err as Error).message, new RegExp(`HTTP ${status}`));
				return true;
			});
		});
	}

	for (const status of [200, 400, 404, 422]) {
		it(`HTTP ${status} is answered to the courier's mapper with its status and body`, async () => {
			const ans = await get(status);
			assert.equal(ans.status, status);
			assert.equal(ans.content_type, "application/json");
			assert.deepEqual(JSON.parse(ans.bytes.toString()), { status });
		});
	}
});
