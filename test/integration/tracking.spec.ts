/**
 * Integration: the tracking pipeline over HTTP (issue 7; spec §2.6, §4.3
 * tracking; lib/booking/tracking.ts) with the real services spread over three
 * brokers on real NATS, real PostgreSQL, Redis and the sandbox courier
 * simulator, which also pushes every emitted scan to our webhook
 * (`SANDBOX_SCAN_PUSH_URL`), so each scan reaches booking twice (push and
 * poll) and must be stored and applied once.
 *
 * - `POST /v1/sandbox/orders/{order_id}/events` → the folded status; intake's
 *   `GET /v1/orders/status` follows; the delivered outcome reaches rates'
 *   lane performance (`rates.lane_outcomes`).
 * - `GET /v1/orders/{id}/tracking`: shape, 404 / 400.
 * - `POST /v1/tracking/webhooks/{courier}`: no bearer token, the raw body's
 *   HMAC signature (401 `invalid_signature`), 404 unknown courier, 400
 *   unreadable body, 413 over 1 MB, 405 other methods.
 */
import { strict as assert } from "node:assert";
import { signedPushHeaders } from "../../lib/couriers/sandbox";
import { sandboxWebhookSecret } from "../../lib/couriers/sandbox/settings";
import { SCAN_KINDS } from "../../lib/couriers/sandbox/wire";
import { getSequelize, select } from "../../lib/platform/db";
import { newSender } from "../helpers/broker";
import { callAs } from "../helpers/call";
import { useCluster } from "../helpers/cluster";
import { useEnv } from "../helpers/env";
import { freshRef, orderBody, warehouseBody } from "../helpers/fixtures";
import { client } from "../helpers/flow";
import { eventually } from "../helpers/poll";

type Api = ReturnType<typeof client>;

/** POSTs `raw` to the webhook of `courier` with `headers` (no bearer token). */
async function webhook(
	base: string,
	courier: string,
	raw: string | Buffer,
	headers: Record<string, string> = {},
) {
	const res = await fetch(`${base}/v1/tracking/webhooks/${courier}`, { method: "POST", headers, body: raw });
	const text = await res.text();
	return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

describe("integration: tracking over HTTP and NATS (sandbox events, webhook, tracking read)", function () {
	this.timeout(90_000);
	const ENV: Record<string, string> = {
		SANDBOX_COURIER_DELAY_MS: "20",
		BOOKING_RELAY_MS: "200",
		BOOKING_RELAY_BACKOFF_MS: "50",
		BOOKING_BACKOFF_MS: "100",
		// no periodic poll: the sandbox route polls its AWB itself
		BOOKING_TRACK_MS: "3600000",
	};
	useEnv(ENV, ["SANDBOX_SCAN_PUSH_URL"]);
	// the cluster (started after the hook above has set the timings)
	describe("on a cluster", () => {
		const cluster = useCluster(
			"it-track",
			[["gateway"], ["pincode", "rates", "warehouses", "intake"], ["booking", "billing", "simulator"]],
			["pincode", "rates", "warehouses", "intake", "booking", "billing", "simulator"],
		);
		before(() => {
			// the simulator pushes every emitted scan to our webhook (read when a scan is emitted)
			process.env.SANDBOX_SCAN_PUSH_URL = `${cluster.base}/v1/tracking/webhooks/{courier}`;
		});

		/** A merchant with a warehouse: its client and a function creating an order. */
		async function merchant() {
			const sender = newSender();
			const api = client(cluster.base, await cluster.idp.tokenFor(sender));
			const wh = await api.post("/v1/warehouses", warehouseBody());
			assert.equal(wh.status, 201, JSON.stringify(wh.body));
			const warehouse_id = wh.body.data.id as number;
			const order = async () => {
				const ref = freshRef("TRK");
				const r = await api.post("/v1/intake/order", orderBody(warehouse_id, ref));
				assert.equal(r.status, 201, JSON.stringify(r.body));
				return { order_id: r.body.order_id as number, ref };
			};
			return { sender, api, order };
		}

		/** Books at Sandbox Express and waits until intake shows it booked; answers the AWB and attempt id. */
		async function bookAndWait(api: Api, order_id: number, ref: string) {
			const b = await api.post("/v1/shipping/book", { order_id, logistic_id: 1 });
			assert.equal(b.status, 202, JSON.stringify(b.body));
			const st = await eventually(
				async () => {
					const s = await api.get(`/v1/orders/status?order_no=${encodeURIComponent(ref)}`);
					return s.body.state === "booked" ? s.body : undefined;
				},
				{ what: `order ${ref} booked`, ms: 20_000, every: 100 },
			);
			const [a] = await select<{ attempt_id: string }>(
				getSequelize(),
				"SELECT attempt_id FROM booking.attempts WHERE order_id = $1 AND state = 'booked'",
				[order_id],
			);
			return { awb: st.awb_number as string, attempt_id: Number(a.attempt_id) };
		}

		it("sandbox events fold into the status (pushed and polled, stored once); intake and rates follow; tracking reads them", async () => {
			const { api, order } = await merchant();
			const o = await order();
			const { awb, attempt_id } = await bookAndWait(api, o.order_id, o.ref);

			const before = await api.get(`/v1/orders/${o.order_id}/tracking`);
			assert.equal(before.status, 200, JSON.stringify(before.body));
			assert.deepEqual(before.body, {
				scans: [],
				truncated: false,
				scan_limit: 100,
				status_name: "Booked",
				order_status_id: 3,
			});

			const events: [string, string?][] = [
				["picked_up"],
				["in_transit"],
				["out_for_delivery"],
				["undelivered", "Consignee not available"],
				["out_for_delivery"],
				["delivered"],
			];
			const answered: string[] = [];
			for (const [event, reason] of events) {
				const r = await api.post(`/v1/sandbox/orders/${o.order_id}/events`, {
					event,
					...(reason ? { reason } : {}),
				});
				assert.equal(r.status, 200, JSON.stringify(r.body));
				assert.equal(r.body.order_id, o.order_id);
				assert.equal(r.body.awb_number, awb);
				assert.equal(r.body.event, event);
				answered.push(r.body.status);
			}
			assert.deepEqual(
				answered,
				events.map(([e]) => e),
			);

			// every scan once, although the simulator also pushed each to the webhook
			await eventually(
				async () => {
					const [r] = await select<{ n: string }>(
						getSequelize(),
						"SELECT count(*) AS n FROM simulator.calls WHERE endpoint = 'lookup' AND refnum = $1",
						[awb],
					);
					return Number(r.n) === events.length;
				},
				{ what: "one track call per event" },
			);
			const t = await api.get(`/v1/orders/${o.order_id}/tracking`);
			assert.equal(t.status, 200, JSON.stringify(t.body));
			assert.deepEqual(
				t.body.scans.map((s: any) => s.status),
				["booked", ...events.map(([e]) => e)],
				"the simulator's create scan (the courier's Manifested is our booked), then one per event",
			);
			assert.deepEqual(
				[t.body.scans[0].courier_code, t.body.scans[0].status_name],
				[SCAN_KINDS.manifested.StatusCode, "Booked"],
			);
			assert.equal(t.body.status_name, "Delivered");
			assert.equal(t.body.order_status_id, 10);
			assert.equal(t.body.truncated, false);
			const und = t.body.scans.find((s: any) => s.status === "undelivered");
			assert.deepEqual(
				{ ...und, at: typeof und.at },
				{
					at: "string",
					location: und.location,
					status: "undelivered",
					status_name: "Undelivered",
					courier_code: SCAN_KINDS.undelivered.StatusCode,
					courier_status: SCAN_KINDS.undelivered.Scan,
					remarks: "Consignee not available",
				},
			);
			assert.ok(und.location.length > 0);
			const times = t.body.scans.map((s: any) => s.at);
			assert.deepEqual([...times].sort(), times, "oldest first");
			for (const x of times) assert.match(x, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

			// the pushes arrived too (deduplicated: the stored count is the scans')
			const [stored] = await select<{ n: string }>(
				getSequelize(),
				"SELECT count(*) AS n FROM booking.scans WHERE attempt_id = $1",
				[attempt_id],
			);
			assert.equal(Number(stored.n), events.length + 1);

			// intake applied the updates (outbox relay over NATS)
			const st = await eventually(
				async () => {
					const s = await api.get(`/v1/orders/status?order_no=${encodeURIComponent(o.ref)}`);
					return s.body.status === "delivered" ? s.body : undefined;
				},
				{ what: "intake shows delivered" },
			);
			assert.equal(st.state, "booked");
			assert.equal(st.awb_number, awb, "tracking updates keep the AWB");

			// the delivered outcome reached rates' lane performance, once
			const lane = await eventually(async () => {
				const rows = await select<any>(
					getSequelize(),
					"SELECT * FROM rates.lane_outcomes WHERE attempt_id = $1",
					[attempt_id],
				);
				return rows[0];
			});
			assert.deepEqual(
				[Number(lane.logistic_id), lane.from_pin, lane.to_pin, lane.outcome],
				[1, "110001", "560001", "delivered"],
			);
		});

		it("sandbox and tracking routes: 404 for another account's order, 409 not_booked, 400 for bad input", async () => {
			const a = await merchant();
			const b = await merchant();
			const o = await a.order();
			const nb = await a.api.post(`/v1/sandbox/orders/${o.order_id}/events`, { event: "picked_up" });
			assert.equal(nb.status, 409, JSON.stringify(nb.body));
			assert.equal(nb.body.error, "not_booked");
			const other = await b.api.post(`/v1/sandbox/orders/${o.order_id}/events`, { event: "picked_up" });
			assert.deepEqual(
				[other.status, other.body],
				[404, { error: "order not found", message: "order not found" }],
			);
			const bad = await a.api.post(`/v1/sandbox/orders/${o.order_id}/events`, { event: "teleported" });
			assert.equal(bad.status, 400);
			assert.equal(bad.body.error, "validation_failed");

			const tb = await b.api.get(`/v1/orders/${o.order_id}/tracking`);
			assert.deepEqual([tb.status, tb.body], [404, { error: "order not found", message: "order not found" }]);
			const ta = await a.api.get(`/v1/orders/${o.order_id}/tracking?scan_limit=0`);
			assert.equal(ta.status, 400);
			assert.deepEqual(ta.body.details, ["scan_limit: must be an integer from 1 to 500"]);
			const tn = await a.api.get("/v1/orders/abc/tracking");
			assert.equal(tn.status, 400);
			assert.deepEqual(tn.body.details, ["id: must be a positive integer"]);
			const ok = await a.api.get(`/v1/orders/${o.order_id}/tracking`);
			assert.deepEqual(ok.body, {
				scans: [],
				truncated: false,
				scan_limit: 100,
				status_name: "New",
				order_status_id: 1,
			});
			const noToken = await client(cluster.base).get(`/v1/orders/${o.order_id}/tracking`);
			assert.equal(noToken.status, 401);
		});

		it("webhook: no bearer token, the raw body's signature; 401 / 404 / 400 / 413 / 405 in the error envelope", async () => {
			const { api, order } = await merchant();
			const o = await order();
			const { awb, attempt_id } = await bookAndWait(api, o.order_id, o.ref);
			const k = SCAN_KINDS.picked_up;
			// a body as the courier formats it (spacing kept: the signature covers the exact bytes)
			const raw = `{ "Shipment": { "AWB": "${awb}", "Status": { "Status": "${k.Scan}", "StatusCode": "${k.StatusCode}", "StatusType": "${k.ScanType}", "StatusLocation": "Delhi Hub", "StatusDateTime": "${new Date(Date.now() + 60_000).toISOString()}", "Instructions": "" } } }`;
			const secret = sandboxWebhookSecret();
			const sig = signedPushHeaders(raw, secret);

			const missing = await webhook(cluster.base, "sbx-express", raw, { "content-type": "application/json" });
			assert.equal(missing.status, 401);
			assert.equal(missing.body.error, "invalid_signature");
			const wrong = await webhook(cluster.base, "sbx-express", raw, {
				"content-type": "application/json",
				...signedPushHeaders(raw, "not-the-secret"),
			});
			assert.deepEqual([wrong.status, wrong.body.error], [401, "invalid_signature"]);
			const reformatted = await webhook(cluster.base, "sbx-express", JSON.stringify(JSON.parse(raw)), {
				"content-type": "application/json",
				...sig,
			});
			assert.equal(reformatted.status, 401, "the same JSON with other bytes is not what was signed");
			const stale = await webhook(cluster.base, "sbx-express", raw, {
				"content-type": "application/json",
				...signedPushHeaders(raw, secret, Date.now() - 6 * 60_000),
			});
			assert.deepEqual([stale.status, stale.body.error], [401, "invalid_signature"], "older than 5 minutes");
			// the published default of earlier versions is nobody's key (the forged "delivered")
			const forged = await webhook(cluster.base, "sbx-express", raw, {
				"content-type": "application/json",
				...signedPushHeaders(raw, "sandbox-webhook-secret"),
			});
			assert.deepEqual([forged.status, forged.body.error], [401, "invalid_signature"], "the old default key");
			// U+0000 in a field of a signed push: 400, never a 500 from PostgreSQL
			const nul = raw.replace('"Delhi Hub"', '"Delhi\\u0000Hub"');
			assert.notEqual(nul, raw);
			const nulAnswer = await webhook(cluster.base, "sbx-express", nul, {
				"content-type": "application/json",
				...signedPushHeaders(nul, secret),
			});
			assert.equal(nulAnswer.status, 400, JSON.stringify(nulAnswer.body));
			assert.deepEqual(nulAnswer.body.details, [
				"body: Shipment.Status.StatusLocation must not contain control characters",
			]);
			const unknown = await webhook(cluster.base, "sbx-nowhere", raw, sig);
			assert.deepEqual([unknown.status, unknown.body.error], [404, "not_found"]);
			const [none] = await select<{ n: string }>(
				getSequelize(),
				"SELECT count(*) AS n FROM booking.scans WHERE attempt_id = $1",
				[attempt_id],
			);
			assert.equal(Number(none.n), 0, "nothing stored from a refused push");

			// any content type: the body is read raw
			const ok = await webhook(cluster.base, "sbx-express", raw, { "content-type": "text/plain", ...sig });
			assert.equal(ok.status, 200, JSON.stringify(ok.body));
			assert.deepEqual(ok.body, { accepted: 1, applied: 1 });
			assert.ok(ok.headers.get("x-request-id"));
			const replayed = await webhook(cluster.base, "sbx-express", raw, {
				"content-type": "text/plain",
				...sig,
			});
			assert.deepEqual([replayed.status, replayed.body.error], [401, "invalid_signature"], "a replay");
			const again = await webhook(cluster.base, "sbx-express", raw, {
				"content-type": "text/plain",
				...signedPushHeaders(raw, secret, Date.now() - 10_000),
			});
			assert.deepEqual(
				again.body,
				{ accepted: 1, applied: 0 },
				"a re-sent (re-signed) scan is accepted, applied once",
			);
			const t = await api.get(`/v1/orders/${o.order_id}/tracking`);
			assert.deepEqual(
				t.body.scans.map((s: any) => [s.status, s.location]),
				[["picked_up", "Delhi Hub"]],
			);

			const junk = "{not json";
			const unreadable = await webhook(cluster.base, "sbx-express", junk, {
				...signedPushHeaders(junk, secret),
			});
			assert.equal(unreadable.status, 400);
			assert.equal(unreadable.body.error, "validation_failed");
			assert.deepEqual(unreadable.body.details, ["body: Malformed JSON body"]);

			// just under the limit: crosses NATS base64-encoded (gateway and booking on other brokers) and is read
			const near = Buffer.alloc(512 * 1024 - 10, 32);
			const nearAnswer = await webhook(cluster.base, "sbx-express", near, {
				...signedPushHeaders(near, secret),
			});
			assert.deepEqual([nearAnswer.status, nearAnswer.body.error], [400, "validation_failed"]);
			const big = Buffer.alloc(512 * 1024 + 10, 32);
			const tooBig = await webhook(cluster.base, "sbx-express", big, {
				...signedPushHeaders(big, secret),
			});
			assert.equal(tooBig.status, 413);
			assert.equal(tooBig.body.error, "payload_too_large");

			const get = await fetch(`${cluster.base}/v1/tracking/webhooks/sbx-express`);
			assert.equal(get.status, 405);
			assert.equal(get.headers.get("allow"), "POST");

			// a scan the courier emits on its own reaches us by its push alone (nothing polls it here)
			await callAs(cluster.brokers[2], "simulator.emitScan", { awb_number: awb, event: "in_transit" });
			const pushed = await eventually(async () => {
				const rows = await select<{ source: string }>(
					getSequelize(),
					"SELECT source FROM booking.scans WHERE attempt_id = $1 AND status = 'in_transit'",
					[attempt_id],
				);
				return rows[0];
			});
			assert.equal(pushed.source, "push");
			const [row] = await select<{ shipment_status: string }>(
				getSequelize(),
				"SELECT shipment_status FROM booking.attempts WHERE attempt_id = $1",
				[attempt_id],
			);
			assert.equal(row.shipment_status, "in_transit");
		});
	});
});
