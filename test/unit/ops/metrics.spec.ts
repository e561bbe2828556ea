/**
 * Prometheus metrics (issue 13; lib/platform/metrics.ts): `GET /metrics` on
 * `METRICS_PORT` answers Prometheus text with Moleculer's request metrics
 * after a call, and each of our metrics after its event: a booking settles
 * (bookings counter, courier call histogram, job outcome), a queue gets a job
 * (depth gauge), scans are pushed (scans counter), the outbox lag gauges.
 * The real booking service and simulator (../booking/setup.ts), real
 * PostgreSQL and Redis.
 */
import assert from "node:assert/strict";
import { BOOKING_QUEUE } from "../../../lib/booking/settings";
import { signedPushHeaders } from "../../../lib/couriers/sandbox";
import { sandboxWebhookSecret } from "../../../lib/couriers/sandbox/settings";
import { SCAN_KINDS } from "../../../lib/couriers/sandbox/wire";
import { loadConfig } from "../../../lib/platform/config";
import { DEFAULT_METRICS_PORT, metricsPort } from "../../../lib/platform/metrics";
import { getQueue } from "../../../lib/platform/queue";
import brokerOptions from "../../../moleculer.config";
import { newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { freePort } from "../../helpers/net";
import { eventually } from "../../helpers/poll";
import { addOrder, attemptsOf, book, settled, useBookingBroker } from "../booking/setup";

/** Samples of `name` in Prometheus text `text` whose labels contain every `labels` pair: the values. */
function samples(text: string, name: string, labels: Record<string, string> = {}): number[] {
	const out: number[] = [];
	for (const line of text.split("\n")) {
		const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line);
		if (!m || m[1] !== name) continue;
		const ls = m[2] ?? "";
		if (Object.entries(labels).every(([k, v]) => ls.includes(`${k}="${v}"`))) out.push(Number(m[3]));
	}
	return out;
}

describe("ops: Prometheus metrics on METRICS_PORT", function () {
	this.timeout(40_000);
	let port = 0;
	const saved = { port: process.env.METRICS_PORT, sample: process.env.METRICS_SAMPLE_MS };
	before(async () => {
		port = await freePort();
		process.env.METRICS_PORT = String(port);
		process.env.METRICS_SAMPLE_MS = "100";
	});
	const broker = useBookingBroker();
	after(() => {
		for (const [k, v] of [
			["METRICS_PORT", saved.port],
			["METRICS_SAMPLE_MS", saved.sample],
		] as const) {
			if (v === undefined) delete process.env[k];
			else process.env[k] = v;
		}
	});

	/** GET /metrics of the broker under test: status, content type, body. */
	async function scrape(): Promise<{ status: number; type: string; text: string }> {
		const res = await fetch(`http://127.0.0.1:${port}/metrics`);
		return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() };
	}

	it("METRICS_PORT: default 9100, 0 / off disable (no metrics at all), anything else is refused", () => {
		assert.equal(metricsPort({}), DEFAULT_METRICS_PORT);
		assert.equal(DEFAULT_METRICS_PORT, 9100);
		assert.equal(metricsPort({ METRICS_PORT: "9300" }), 9300);
		assert.equal(metricsPort({ METRICS_PORT: "0" }), null);
		assert.equal(metricsPort({ METRICS_PORT: "off" }), null);
		assert.throws(() => metricsPort({ METRICS_PORT: "http" }), /METRICS_PORT/);
		const before = process.env.METRICS_PORT;
		process.env.METRICS_PORT = "off";
		try {
			assert.deepEqual(brokerOptions(loadConfig()).metrics, { enabled: false });
		} finally {
			process.env.METRICS_PORT = before;
		}
	});

	it("a booking settles: request metrics per action, bookings by courier, courier call latency, job outcome", async () => {
		const s = newSender();
		const o = addOrder(s);
		await book(broker(), s, { order_id: o.order_id, logistic_id: 1 });
		assert.equal((await settled(o.order_id)).state, "booked");
		const [row] = await attemptsOf(o.order_id);
		const { status, type, text } = await scrape();
		assert.equal(status, 200);
		assert.match(type, /^text\/plain; version=0\.0\.4/);
		// Moleculer's own: rate, latency and errors per action, labelled with the node
		assert.ok(samples(text, "moleculer_request_total", { action: "booking.book" })[0] >= 1, text);
		assert.ok(samples(text, "moleculer_request_time_count", { action: "booking.book" })[0] >= 1);
		assert.ok(samples(text, "moleculer_request_total", { nodeID: broker().nodeID }).length > 0);
		// ours
		const courier = row.courier_name;
		assert.ok(samples(text, "msa_bookings_total", { courier, outcome: "booked" })[0] >= 1, text);
		const calls = samples(text, "msa_courier_call_duration_seconds_count", {
			courier: "sbx-express",
			operation: "book",
			outcome: "ok",
		});
		assert.ok(calls[0] >= 1, text);
		assert.match(text, /^# TYPE msa_courier_call_duration_seconds histogram$/m);
		assert.ok(
			samples(text, "msa_courier_call_duration_seconds_bucket", { operation: "book", le: "30" })[0] >= 1,
		);
		await eventually(
			async () =>
				samples((await scrape()).text, "msa_queue_jobs_total", {
					queue: BOOKING_QUEUE,
					outcome: "completed",
				})[0],
			{ what: "a completed booking job", ok: (v) => v >= 1 },
		);
	});

	it("a queue gets a job: its depth gauge moves (sampled by the process running its workers)", async () => {
		const delayedNow = async () =>
			samples((await scrape()).text, "msa_queue_jobs", { queue: BOOKING_QUEUE, state: "delayed" })[0] ?? -1;
		await eventually(delayedNow, { what: "no delayed job", ok: (v) => v === 0 });
		const job = await getQueue(BOOKING_QUEUE).add("metrics-probe", { attempt_id: 0 }, { delay: 600_000 });
		try {
			await eventually(delayedNow, { what: "one delayed job", ok: (v) => v === 1 });
		} finally {
			await job.remove();
		}
		await eventually(delayedNow, { what: "no delayed job", ok: (v) => v === 0 });
	});

	it("scans pushed by a courier count per source; the outbox lag gauges are sampled", async () => {
		const count = async () =>
			samples((await scrape()).text, "msa_tracking_scans_total", { source: "push" })[0] ?? 0;
		const before = await count();
		const s = newSender();
		const o = addOrder(s);
		await book(broker(), s, { order_id: o.order_id, logistic_id: 1 });
		const done = await settled(o.order_id);
		assert.equal(done.state, "booked");
		const k = SCAN_KINDS.picked_up;
		const scan = (min: number) => ({
			Shipment: {
				AWB: String(done.awb_number),
				Status: {
					Status: k.Scan,
					StatusCode: k.StatusCode,
					StatusType: k.ScanType,
					StatusLocation: "Mumbai Hub",
					StatusDateTime: new Date(Date.now() - min * 60_000).toISOString(),
					Instructions: "",
				},
			},
		});
		const raw = JSON.stringify([scan(2), scan(1)]);
		await callAs(broker(), "booking.courierPush", {
			courier: "sbx-express",
			body: Buffer.from(raw).toString("base64"),
			headers: {
				"content-type": "application/json",
				...signedPushHeaders(raw, sandboxWebhookSecret()),
			},
		});
		assert.equal(await count(), before + 2);
		const text = (await scrape()).text;
		for (const outbox of ["booking.outbox", "booking.event_outbox"]) {
			const [age] = samples(text, "msa_outbox_oldest_age_seconds", { outbox });
			const [pending] = samples(text, "msa_outbox_pending", { outbox });
			assert.ok(age >= 0 && pending >= 0, `${outbox}: ${text}`);
		}
	});
});
