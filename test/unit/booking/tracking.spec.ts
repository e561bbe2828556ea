/**
 * booking service, the tracking pipeline (issue 7; spec §2.6, §3, §4.3
 * tracking; lib/booking/tracking.ts): courier scans pushed (`booking.courierPush`,
 * signed like the sandbox courier signs) and polled (`booking.pollTracking`)
 * are stored once and folded into one status per shipment; every status
 * change is one order update for intake (seq = the attempt's counter + 1) and
 * one `shipment.status_changed` event; delivered / RTO delivered feed the
 * lane outcome to rates; the sandbox event route and the tracking read.
 * Real booking service, real simulator over HTTP, PostgreSQL and Redis; fakes
 * of intake, warehouses and rates in ./setup.ts.
 */
import assert from "node:assert/strict";
import type { ServiceBroker } from "moleculer";
import type {
	BookingUpdate,
	OrderRecord,
	ShipmentStatusChanged,
	ShipmentUndelivered,
} from "../../../lib/contracts";
import { signedPushHeaders, signPush } from "../../../lib/couriers/sandbox";
import { sandboxWebhookSecret } from "../../../lib/couriers/sandbox/settings";
import { type SandboxScanStatus, SCAN_KINDS, type WirePushScan } from "../../../lib/couriers/sandbox/wire";
import { exec, getSequelize, select } from "../../../lib/platform/db";
import { as, newSender, rejects } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { eventually } from "../../helpers/poll";
import {
	addOrder,
	attemptsOf,
	bodyOf,
	book,
	COURIERS,
	laneOutcomes,
	settled,
	updates,
	useBookingBroker,
} from "./setup";

/** One scan to push: status, minutes after the booking, remarks. */
type Scan = [SandboxScanStatus, number, string?];

/** A booked shipment of a test. */
interface Booked {
	o: OrderRecord;
	sender: number;
	attempt_id: number;
	awb: string;
	/** booked_at, epoch ms */
	t0: number;
}

/** ISO time `min` minutes after `t0`. */
const at = (t0: number, min: number) => new Date(t0 + min * 60_000).toISOString();

/** The sandbox courier's push body (Delhivery shape) for `scans` of `awb`. */
function pushBody(awb: string, t0: number, scans: Scan[]): WirePushScan[] {
	return scans.map(([status, min, remarks]) => {
		const k = SCAN_KINDS[status];
		return {
			Shipment: {
				AWB: awb,
				Status: {
					Status: k.Scan,
					StatusCode: k.StatusCode,
					StatusType: k.ScanType,
					StatusLocation: "Mumbai Hub",
					StatusDateTime: at(t0, min),
					Instructions: remarks ?? "",
				},
			},
		};
	});
}

/** The (body, unix second) pairs signed so far: a body sent again is signed at another second, as a courier re-signs a resend. */
const signedAt = new Set<string>();

/** The push headers of `raw` signed under the run's key now (or a second earlier per earlier signing of the same body). */
function freshlySigned(raw: string): Record<string, string> {
	let ms = Date.now();
	while (signedAt.has(`${Math.floor(ms / 1000)}:${raw}`)) ms -= 1000;
	signedAt.add(`${Math.floor(ms / 1000)}:${raw}`);
	return signedPushHeaders(raw, sandboxWebhookSecret(), ms);
}

/**
 * Calls `booking.courierPush` as the gateway's webhook route does, signed
 * (timestamp now) unless `signature` is given; `headers` replace the signed ones.
 */
function push(
	broker: ServiceBroker,
	body: unknown,
	opts: {
		courier?: string;
		signature?: string | null;
		raw?: string;
		headers?: Record<string, string>;
	} = {},
): Promise<{ accepted: number; applied: number }> {
	const raw = opts.raw ?? JSON.stringify(body);
	const headers: Record<string, string> = {
		"content-type": "application/json",
		...(opts.headers ?? freshlySigned(raw)),
	};
	if (opts.signature === null) delete headers["x-sandbox-signature"];
	else if (opts.signature !== undefined) headers["x-sandbox-signature"] = opts.signature;
	return callAs(broker, "booking.courierPush", {
		courier: opts.courier ?? "sbx-express",
		body: Buffer.from(raw).toString("base64"),
		headers,
	});
}

/** Pushes `scans` of shipment `b` (one signed body). */
const pushScans = (broker: ServiceBroker, b: Booked, scans: Scan[]) =>
	push(broker, pushBody(b.awb, b.t0, scans));

/** Books a fresh order of a new sender at courier `logistic_id` through the worker and waits for booked. */
async function bookedOrder(broker: ServiceBroker, logistic_id = 1): Promise<Booked> {
	const sender = newSender();
	const o = addOrder(sender);
	await book(broker, sender, { order_id: o.order_id, logistic_id });
	const done = await settled(o.order_id);
	assert.equal(done.state, "booked", JSON.stringify(done));
	const [a] = await attemptsOf(o.order_id);
	// not due: only the tests that poll make shipments due
	await exec(
		getSequelize(),
		"UPDATE booking.attempts SET next_track_at = now() + interval '1 hour' WHERE attempt_id = $1",
		[a.attempt_id],
	);
	return {
		o,
		sender,
		attempt_id: Number(a.attempt_id),
		awb: a.awb_number,
		t0: new Date(a.booked_at).getTime(),
	};
}

/** The tracking updates (seq > 2) intake received for an order: [seq, state, status, status_at]. */
function trackingUpdates(order_id: number): [number, string, string, string | null | undefined][] {
	return updates
		.filter((u) => u.order_id === order_id && u.seq > 2)
		.sort((a, b) => a.seq - b.seq)
		.map((u) => [u.seq, u.state, u.status, u.status_at]);
}

/** The attempt's tracking columns. */
async function trackingRow(attempt_id: number) {
	const [r] = await select<any>(
		getSequelize(),
		`SELECT state, shipment_status, shipment_status_at, order_seq, next_track_at, picked_up_at, from_pin, to_pin
		 FROM booking.attempts WHERE attempt_id = $1`,
		[attempt_id],
	);
	return r;
}

/** How many scans are stored for an attempt. */
async function scanCount(attempt_id: number): Promise<number> {
	const [r] = await select<{ n: string }>(
		getSequelize(),
		"SELECT count(*) AS n FROM booking.scans WHERE attempt_id = $1",
		[attempt_id],
	);
	return Number(r.n);
}

/** Makes exactly `ids` due for the poller (every other open shipment later). */
async function onlyDue(ids: number[]): Promise<void> {
	await exec(
		getSequelize(),
		`UPDATE booking.attempts SET next_track_at = CASE WHEN attempt_id = ANY($1::bigint[]) THEN now() - interval '1 second'
		   ELSE now() + interval '1 hour' END
		 WHERE state = 'booked' AND next_track_at IS NOT NULL`,
		[ids],
	);
}

/** The sandbox event route as `sender`. */
function sandboxEvent(
	broker: ServiceBroker,
	sender: number,
	params: Record<string, unknown>,
	role?: "merchant_finance",
) {
	// path values of any type on purpose (the parser's checks); the gateway sends strings
	return callAs(
		broker,
		"booking.sandboxEvent",
		params as { order_id: string },
		as(sender, role),
	) as Promise<any>;
}

/** The tracking read as `sender`. */
function tracking(
	broker: ServiceBroker,
	sender: number,
	params: Record<string, unknown>,
	role?: "merchant_finance",
) {
	// path values of any type on purpose (the parser's checks); the gateway sends strings
	return callAs(broker, "booking.tracking", params as { id: string }, as(sender, role)) as Promise<any>;
}

describe("booking: tracking pipeline (scans, fold, poller, webhook, sandbox events, tracking read)", function () {
	this.timeout(60_000);
	// no periodic poll during these tests: each test makes shipments due when it polls
	let savedTrackMs: string | undefined;
	before(() => {
		savedTrackMs = process.env.BOOKING_TRACK_MS;
		process.env.BOOKING_TRACK_MS = "3600000";
	});
	after(() => {
		if (savedTrackMs === undefined) delete process.env.BOOKING_TRACK_MS;
		else process.env.BOOKING_TRACK_MS = savedTrackMs;
	});
	// the booking broker (started after the hook above has set BOOKING_TRACK_MS)
	describe("on a booking broker", () => {
		const broker = useBookingBroker();
		const changed: ShipmentStatusChanged[] = [];
		const undelivered: ShipmentUndelivered[] = [];
		before(async () => {
			broker().createService({
				name: "tracking-listener",
				events: {
					// once per event_id, as every subscriber keeps it: the relay may publish a row twice
					"shipment.status_changed"(ctx: { params: ShipmentStatusChanged }) {
						if (!changed.some((e) => e.event_id === ctx.params.event_id)) changed.push(ctx.params);
					},
					"shipment.undelivered"(ctx: { params: ShipmentUndelivered }) {
						undelivered.push(ctx.params);
					},
				},
			});
			await broker().waitForServices(["tracking-listener"]);
		});

		describe("the fold", () => {
			it("scans delivered late, twice and out of order: exact status, one update and one event per real change", async () => {
				const b = await bookedOrder(broker());
				// the lane was recorded when the attempt was created (pickup warehouse → consignee)
				const row0 = await trackingRow(b.attempt_id);
				assert.deepEqual(
					[row0.shipment_status, row0.order_seq, row0.from_pin, row0.to_pin],
					["booked", 2, "560001", "400001"],
				);
				assert.equal(new Date(row0.shipment_status_at).getTime(), b.t0);

				assert.deepEqual(await pushScans(broker(), b, [["in_transit", 120]]), { accepted: 1, applied: 1 });
				// late: picked up before the in-transit scan → stored, changes nothing but picked_up_at
				assert.deepEqual(await pushScans(broker(), b, [["picked_up", 60]]), { accepted: 1, applied: 0 });
				// twice: re-sent scan → accepted, stored once, nothing applied
				assert.deepEqual(await pushScans(broker(), b, [["in_transit", 120]]), { accepted: 1, applied: 0 });
				assert.deepEqual(await pushScans(broker(), b, [["out_for_delivery", 180]]), {
					accepted: 1,
					applied: 1,
				});
				assert.deepEqual(await pushScans(broker(), b, [["undelivered", 240, "Consignee not available"]]), {
					accepted: 1,
					applied: 1,
				});
				// out of order: an older out-for-delivery scan (same rank as undelivered) loses to the newer undelivered
				assert.deepEqual(await pushScans(broker(), b, [["out_for_delivery", 200]]), {
					accepted: 1,
					applied: 0,
				});
				// the re-attempt: a newer out-for-delivery moves it on (NDR loop), then delivered
				assert.deepEqual(
					await pushScans(broker(), b, [
						["delivered", 360],
						["out_for_delivery", 300],
					]),
					{ accepted: 2, applied: 1 },
				);
				// terminal never reopens: anything later changes nothing
				assert.deepEqual(
					await pushScans(broker(), b, [
						["rto_initiated", 400],
						["in_transit", 500],
					]),
					{ accepted: 2, applied: 0 },
				);

				const row = await trackingRow(b.attempt_id);
				assert.equal(row.shipment_status, "delivered");
				assert.equal(new Date(row.shipment_status_at).toISOString(), at(b.t0, 360));
				assert.equal(new Date(row.picked_up_at).toISOString(), at(b.t0, 60));
				assert.equal(row.next_track_at, null, "a terminal shipment is no longer polled");
				assert.equal(row.order_seq, 6);
				assert.equal(await scanCount(b.attempt_id), 9, "10 scans pushed, the re-sent one stored once");

				const expected: [number, string, string, string][] = [
					[3, "booked", "in_transit", at(b.t0, 120)],
					[4, "booked", "out_for_delivery", at(b.t0, 180)],
					[5, "booked", "undelivered", at(b.t0, 240)],
					// the batch [delivered, out_for_delivery@300] folds to delivered: one update
					[6, "booked", "delivered", at(b.t0, 360)],
				];
				await eventually(() => trackingUpdates(b.o.order_id).length === expected.length, {
					what: "the tracking updates relayed to intake",
				});
				assert.deepEqual(trackingUpdates(b.o.order_id), expected);
				// AWB and courier are omitted: intake keeps them
				const u = updates.find((x) => x.order_id === b.o.order_id && x.seq === 3) as BookingUpdate;
				assert.equal("awb_number" in u, false);
				assert.equal("courier" in u, false);
				assert.equal(u.attempt_id, b.attempt_id);

				await eventually(() => changed.filter((e) => e.order_id === b.o.order_id).length === 4, {
					what: "the status_changed events",
				});
				assert.deepEqual(
					changed
						.filter((e) => e.order_id === b.o.order_id)
						.map((e) => [e.sender_id, e.awb_number, e.logistic_id, e.status, e.status_at]),
					expected.map(([, , status, when]) => [b.sender, b.awb, 1, status, when]),
				);
				await eventually(() => undelivered.some((e) => e.order_id === b.o.order_id));
				assert.deepEqual(
					undelivered.filter((e) => e.order_id === b.o.order_id),
					[
						{
							order_id: b.o.order_id,
							sender_id: b.sender,
							awb_number: b.awb,
							logistic_id: 1,
							reason: "Consignee not available",
							at: at(b.t0, 240),
						},
					],
				);

				// the delivered outcome reached rates once: tat from the pick-up scan (60 min) to delivery (360 min)
				await eventually(() => laneOutcomes.find((l) => l.attempt_id === b.attempt_id), {
					what: "the lane outcome at rates",
				});
				assert.deepEqual(
					laneOutcomes.filter((l) => l.attempt_id === b.attempt_id),
					[
						{
							attempt_id: b.attempt_id,
							logistic_id: 1,
							from_pin: "560001",
							to_pin: "400001",
							outcome: "delivered",
							tat_days: 0.21,
						},
					],
				);
			});

			it("the courier's Manifested scan is our booked: stored, no status change, no update, no event", async () => {
				const b = await bookedOrder(broker());
				assert.deepEqual(await pushScans(broker(), b, [["manifested", 5]]), { accepted: 1, applied: 0 });
				const row = await trackingRow(b.attempt_id);
				assert.deepEqual([row.shipment_status, row.order_seq], ["booked", 2]);
				assert.equal(await scanCount(b.attempt_id), 1);
				// the next real change is the first tracking update and the first event
				assert.deepEqual(await pushScans(broker(), b, [["pickup_scheduled", 10]]), {
					accepted: 1,
					applied: 1,
				});
				await eventually(
					() => trackingUpdates(b.o.order_id).length > 0 && changed.some((e) => e.order_id === b.o.order_id),
					{ what: "the pickup_scheduled update and event" },
				);
				assert.deepEqual(trackingUpdates(b.o.order_id), [[3, "booked", "pickup_scheduled", at(b.t0, 10)]]);
				assert.deepEqual(
					changed.filter((e) => e.order_id === b.o.order_id).map((e) => e.status),
					["pickup_scheduled"],
				);
				const read = await tracking(broker(), b.sender, { id: String(b.o.order_id) });
				assert.deepEqual(
					read.scans.map((x: any) => [x.status, x.status_name, x.courier_code, x.courier_status]),
					[
						["booked", "Booked", "X-UCI", "Manifested"],
						["pickup_scheduled", "Pickup scheduled", "X-ASP", "Pickup Scheduled"],
					],
				);
			});

			it("the same scans in any arrival order fold to the same status", async () => {
				const scans: Scan[] = [
					["pickup_scheduled", 5],
					["picked_up", 30],
					["in_transit", 90],
					["out_for_delivery", 150],
					["undelivered", 200, "Address incomplete"],
					["rto_initiated", 260],
					["rto_in_transit", 300],
				];
				const one = await bookedOrder(broker());
				for (const s of scans) await pushScans(broker(), one, [s]);
				const two = await bookedOrder(broker());
				for (const s of [...scans].reverse()) await pushScans(broker(), two, [s]);
				const three = await bookedOrder(broker());
				await pushScans(
					broker(),
					three,
					[...scans].sort(() => Math.random() - 0.5),
				);
				for (const b of [one, two, three]) {
					const r = await trackingRow(b.attempt_id);
					assert.equal(r.shipment_status, "rto_in_transit");
					assert.equal(new Date(r.shipment_status_at).toISOString(), at(b.t0, 300));
					assert.equal(new Date(r.picked_up_at).toISOString(), at(b.t0, 30));
				}
				// in order: one update per scan; reversed: the newest came first, nothing after it changed anything
				// the relay retries a failed delivery with backoff (1 s doubling): under the full suite's load one
				// retry or two can pass 15 s; the counts are in the failure message
				await eventually(
					() => [trackingUpdates(one.o.order_id).length, trackingUpdates(two.o.order_id).length],
					{
						what: "7 updates of the in-order shipment and 1 of the reversed one [in order, reversed]",
						ms: 40_000,
						ok: ([a, b]) => a === 7 && b === 1,
					},
				);
				assert.deepEqual(
					trackingUpdates(one.o.order_id).map(([seq, , status]) => [seq, status]),
					scans.map(([status], i) => [3 + i, status]),
				);
				assert.deepEqual(trackingUpdates(two.o.order_id), [[3, "booked", "rto_in_transit", at(two.t0, 300)]]);
				await eventually(() => trackingUpdates(three.o.order_id).length === 1);
				assert.deepEqual(trackingUpdates(three.o.order_id), [
					[3, "booked", "rto_in_transit", at(three.t0, 300)],
				]);
			});

			it("a terminal status never reopens (lost, then delivered and in-transit scans); RTO delivered feeds the lane as rto", async () => {
				const b = await bookedOrder(broker());
				await pushScans(broker(), b, [["picked_up", 10]]);
				assert.deepEqual(await pushScans(broker(), b, [["lost", 50]]), { accepted: 1, applied: 1 });
				assert.deepEqual(
					await pushScans(broker(), b, [
						["delivered", 60],
						["in_transit", 70],
					]),
					{ accepted: 2, applied: 0 },
				);
				assert.equal((await trackingRow(b.attempt_id)).shipment_status, "lost");
				await eventually(() => trackingUpdates(b.o.order_id).length === 2);
				assert.deepEqual(
					trackingUpdates(b.o.order_id).map(([, , s]) => s),
					["picked_up", "lost"],
				);
				assert.equal(
					laneOutcomes.some((l) => l.attempt_id === b.attempt_id),
					false,
					"lost is no lane outcome",
				);

				const r = await bookedOrder(broker());
				await pushScans(broker(), r, [
					["rto_delivered", 24 * 60 * 3],
					["rto_initiated", 24 * 60],
				]);
				assert.equal((await trackingRow(r.attempt_id)).shipment_status, "rto_delivered");
				// no pick-up scan: turnaround counted from the booking
				await eventually(() => laneOutcomes.find((l) => l.attempt_id === r.attempt_id));
				const lane = laneOutcomes.find((l) => l.attempt_id === r.attempt_id)!;
				assert.deepEqual([lane.outcome, lane.tat_days], ["rto", 3]);
			});

			it("cancel after tracking scans still cancels (seq after the last update); scans after the cancel change nothing", async () => {
				const b = await bookedOrder(broker());
				await pushScans(broker(), b, [["pickup_scheduled", 5]]);
				await pushScans(broker(), b, [["picked_up", 20]]);
				await eventually(() => trackingUpdates(b.o.order_id).length === 2);
				const res: any = await callAs(
					broker(),
					"booking.cancel",
					{ order_id: b.o.order_id, logistic_id: 1 },
					as(b.sender),
				);
				assert.equal(res.status, "cancelled");
				const row = await trackingRow(b.attempt_id);
				assert.deepEqual([row.state, row.order_seq], ["cancelled", 5]);
				// relayed before the answer: seq 5, after the tracking updates 3 and 4
				assert.deepEqual(trackingUpdates(b.o.order_id), [
					[3, "booked", "pickup_scheduled", at(b.t0, 5)],
					[4, "booked", "picked_up", at(b.t0, 20)],
					[5, "not_shipped", "cancelled", undefined],
				]);
				// the courier's late scans are stored, never reopen the cancelled booking
				assert.deepEqual(await pushScans(broker(), b, [["in_transit", 30]]), { accepted: 1, applied: 0 });
				assert.equal((await trackingRow(b.attempt_id)).order_seq, 5);
				assert.equal(await scanCount(b.attempt_id), 3);
				const read = await tracking(broker(), b.sender, { id: String(b.o.order_id) });
				assert.equal(read.status_name, "Cancelled");
				assert.equal(read.order_status_id, 16);
				assert.equal(read.scans.length, 3);
			});
		});

		describe("the webhook (booking.courierPush)", () => {
			const SIGNATURE_REFUSED = {
				error: "invalid_signature",
				message:
					"the webhook signature is missing, does not match the body, or its timestamp is outside the accepted window",
			};

			it("401 invalid_signature for a missing, malformed or wrong signature; nothing stored", async () => {
				const b = await bookedOrder(broker());
				const body = pushBody(b.awb, b.t0, [["picked_up", 10]]);
				const raw = JSON.stringify(body);
				const now = Math.floor(Date.now() / 1000);
				for (const signature of [
					null,
					"",
					"sha256=",
					"md5=abc",
					signPush(raw, "another-secret", now),
					signPush(`${raw} `, sandboxWebhookSecret(), now),
					// the published default of earlier versions is nobody's key
					signPush(raw, "sandbox-webhook-secret", now),
				]) {
					const { status, body: err } = bodyOf(await rejects(() => push(broker(), body, { signature })));
					assert.equal(status, 401, String(signature));
					assert.deepEqual(err, SIGNATURE_REFUSED);
				}
				assert.equal(await scanCount(b.attempt_id), 0);
				assert.deepEqual(await push(broker(), body), { accepted: 1, applied: 1 });
				assert.equal((await trackingRow(b.attempt_id)).shipment_status, "picked_up");
			});

			it("401 invalid_signature for a missing, stale (over 5 min) or future (over 1 min) timestamp, and for a replay; the first push applies", async () => {
				const b = await bookedOrder(broker());
				const body = pushBody(b.awb, b.t0, [["picked_up", 10]]);
				const raw = JSON.stringify(body);
				const secret = sandboxWebhookSecret();
				const signed = signedPushHeaders(raw, secret);
				const { "x-sandbox-timestamp": _ts, ...noTimestamp } = signed;
				for (const headers of [
					noTimestamp,
					signedPushHeaders(raw, secret, Date.now() - 301_000),
					signedPushHeaders(raw, secret, Date.now() - 3_600_000),
					signedPushHeaders(raw, secret, Date.now() + 61_000),
					// a fresh timestamp on an old signature: the signature covers the timestamp
					{
						...signedPushHeaders(raw, secret, Date.now() - 400_000),
						"x-sandbox-timestamp": signed["x-sandbox-timestamp"],
					},
				]) {
					const { status, body: err } = bodyOf(await rejects(() => push(broker(), body, { headers })));
					assert.equal(status, 401, JSON.stringify(headers));
					assert.deepEqual(err, SIGNATURE_REFUSED);
				}
				assert.equal(await scanCount(b.attempt_id), 0);
				assert.deepEqual(await push(broker(), body, { headers: signed }), { accepted: 1, applied: 1 });
				// the same signed request again (or with the signature's digits in upper case): a replay
				const upper = {
					...signed,
					"x-sandbox-signature": signed["x-sandbox-signature"].toUpperCase().replace("SHA256=", "sha256="),
				};
				for (const headers of [signed, upper]) {
					const { status, body: err } = bodyOf(await rejects(() => push(broker(), body, { headers })));
					assert.equal(status, 401);
					assert.deepEqual(err, {
						error: "invalid_signature",
						message: "this push was already received (a replayed signature)",
					});
				}
				// re-signed at another second, the same scans are a resend: accepted and deduplicated
				assert.deepEqual(
					await push(broker(), body, { headers: signedPushHeaders(raw, secret, Date.now() - 5_000) }),
					{ accepted: 1, applied: 0 },
				);
				assert.equal(await scanCount(b.attempt_id), 1);
				const seen = await select<{ n: string }>(
					getSequelize(),
					"SELECT count(*) AS n FROM booking.push_seen WHERE courier_code = 'sbx-express' AND push_key = $1",
					[signed["x-sandbox-signature"].slice(7)],
				);
				assert.equal(Number(seen[0].n), 1, "the push's key is remembered");
			});

			it("400 validation_failed (no 5xx) for NUL (U+0000) in a pushed field; nothing stored; the clean push applies", async () => {
				const b = await bookedOrder(broker());
				const clean = pushBody(b.awb, b.t0, [["picked_up", 10]]);
				const cases: Array<[string, (s: WirePushScan["Shipment"]) => void]> = [
					[
						"Shipment.AWB",
						(s) => {
							s.AWB = `${b.awb}\u0000`;
						},
					],
					[
						"Shipment.Status.Status",
						(s) => {
							s.Status.Status = "Pick\u0000ed";
						},
					],
					[
						"Shipment.Status.StatusLocation",
						(s) => {
							s.Status.StatusLocation = "Mum\u0000bai";
						},
					],
					[
						"Shipment.Status.Instructions",
						(s) => {
							s.Status.Instructions = "ring\u0000";
						},
					],
					[
						"Shipment.Status.StatusCode",
						(s) => {
							s.Status.StatusCode = "X-PPOM\u0000";
						},
					],
				];
				for (const [field, spoil] of cases) {
					const body = structuredClone(clean);
					spoil(body[0].Shipment);
					const { status, body: err } = bodyOf(await rejects(() => push(broker(), body)));
					assert.equal(status, 400, field);
					assert.equal(err.error, "validation_failed", field);
					assert.deepEqual(err.details, [`body: ${field} must not contain control characters`]);
				}
				assert.equal(await scanCount(b.attempt_id), 0);
				assert.deepEqual(await push(broker(), clean), { accepted: 1, applied: 1 });
			});

			it("404 not_found for a courier code nobody has (or an inactive or unwired one); 400 for an unreadable body", async () => {
				for (const courier of ["nosuch", "unwired", ""]) {
					const { status, body } = bodyOf(await rejects(() => push(broker(), [], { courier })));
					assert.equal(status, 404, courier);
					assert.equal(body.error, "not_found");
				}
				for (const raw of [
					"not json",
					JSON.stringify({ Shipment: { AWB: "" } }),
					JSON.stringify([{ nope: 1 }]),
				]) {
					const { status, body } = bodyOf(await rejects(() => push(broker(), null, { raw })));
					assert.equal(status, 400, raw);
					assert.equal(body.error, "validation_failed");
					assert.match(body.details[0], /^body: /);
				}
			});

			it("concurrent pushes are folded together and each answers its own scans", async () => {
				const list = await Promise.all(Array.from({ length: 6 }, () => bookedOrder(broker())));
				const answers = await Promise.all(
					list.flatMap((b) => [
						pushScans(broker(), b, [["picked_up", 10]]),
						pushScans(broker(), b, [
							["in_transit", 20],
							["in_transit", 30],
						]),
					]),
				);
				assert.deepEqual(
					answers.map((a) => a.accepted),
					list.flatMap(() => [1, 2]),
				);
				for (const b of list) {
					const r = await trackingRow(b.attempt_id);
					assert.equal(r.shipment_status, "in_transit");
					assert.equal(new Date(r.shipment_status_at).toISOString(), at(b.t0, 30));
					assert.equal(await scanCount(b.attempt_id), 3);
					// one update per change, whether the two pushes were folded together or not
					// (the relay delivers the updates after the answers: wait for the last one)
					await eventually(() => trackingUpdates(b.o.order_id).at(-1)?.[2] === "in_transit");
					const seen = trackingUpdates(b.o.order_id).map(([, , s]) => s);
					assert.ok(
						JSON.stringify(seen) === '["in_transit"]' ||
							JSON.stringify(seen) === '["picked_up","in_transit"]',
						JSON.stringify(seen),
					);
				}
			});

			it("scans of unknown AWBs are ignored (accepted 0); one body may carry several shipments", async () => {
				const a = await bookedOrder(broker());
				const b = await bookedOrder(broker(), 2);
				const body = [
					...pushBody("99999999999999", a.t0, [["picked_up", 10]]),
					...pushBody(a.awb, a.t0, [["picked_up", 10]]),
					...pushBody(b.awb, b.t0, [
						["picked_up", 10],
						["in_transit", 20],
					]),
				];
				// any sandbox courier's account may push (the AWB is unique across couriers)
				assert.deepEqual(await push(broker(), body), { accepted: 3, applied: 2 });
				assert.equal((await trackingRow(a.attempt_id)).shipment_status, "picked_up");
				assert.equal((await trackingRow(b.attempt_id)).shipment_status, "in_transit");
				assert.deepEqual(await push(broker(), pushBody("99999999999999", a.t0, [["delivered", 10]])), {
					accepted: 0,
					applied: 0,
				});
			});
		});

		describe("the poller (booking.pollTracking)", () => {
			it("leases the due open shipments, asks each courier once per batch of AWBs, folds what it answers", async () => {
				const ones = [
					await bookedOrder(broker(), 1),
					await bookedOrder(broker(), 1),
					await bookedOrder(broker(), 1),
				];
				const two = await bookedOrder(broker(), 2);
				for (const b of [...ones, two]) {
					await callAs(broker(), "simulator.emitScan", { awb_number: b.awb, event: "picked_up" });
				}
				await callAs(broker(), "simulator.emitScan", { awb_number: two.awb, event: "in_transit" });
				const mine = [...ones, two].map((b) => b.attempt_id);
				await onlyDue(mine);
				const before = await trackCalls();
				const res: any = await callAs(broker(), "booking.pollTracking", {});
				assert.deepEqual(res, { leased: 4, calls: 2, accepted: 9, applied: 4, failed: 0 });
				// the simulator saw one track call for the three AWBs of courier 1
				const calls = (await trackCalls()).slice(before.length);
				assert.equal(calls.length, 2);
				const express = calls.find((c) => c.courier_code === "sbx-express")!;
				assert.deepEqual(express.refnum.split(",").sort(), ones.map((b) => b.awb).sort());
				for (const b of ones) assert.equal((await trackingRow(b.attempt_id)).shipment_status, "picked_up");
				const row = await trackingRow(two.attempt_id);
				assert.equal(row.shipment_status, "in_transit");
				// leased: asked again only after BOOKING_TRACK_INTERVAL_MS (default 15 min)
				const ahead = new Date(row.next_track_at).getTime() - Date.now();
				assert.ok(ahead > 14 * 60_000 && ahead <= 15 * 60_000, String(ahead));
				assert.deepEqual(await callAs(broker(), "booking.pollTracking", {}), {
					leased: 0,
					calls: 0,
					accepted: 0,
					applied: 0,
					failed: 0,
				});
				// the simulator's create scan (the courier's Manifested: booked, no change) + picked_up + in_transit,
				// folded in one pass: one update
				await eventually(() => trackingUpdates(two.o.order_id).length === 1);
				assert.deepEqual(
					trackingUpdates(two.o.order_id).map(([seq, , s]) => [seq, s]),
					[[3, "in_transit"]],
				);
			});

			it("two passes at once (two pods) share the due shipments: each asked once", async () => {
				const list = [
					await bookedOrder(broker(), 1),
					await bookedOrder(broker(), 1),
					await bookedOrder(broker(), 2),
				];
				await onlyDue(list.map((b) => b.attempt_id));
				const before = await trackCalls();
				const [x, y]: any[] = await Promise.all([
					callAs(broker(), "booking.pollTracking", {}),
					callAs(broker(), "booking.pollTracking", {}),
				]);
				assert.equal(x.leased + y.leased, 3);
				const asked = (await trackCalls())
					.slice(before.length)
					.flatMap((c) => c.refnum.split(","))
					.sort();
				assert.deepEqual(asked, list.map((b) => b.awb).sort());
				// each answered the simulator's create scan (the courier's Manifested): our booked, so stored, no change
				for (const b of list) {
					assert.equal((await trackingRow(b.attempt_id)).shipment_status, "booked");
					assert.equal(await scanCount(b.attempt_id), 1);
					assert.equal((await trackingRow(b.attempt_id)).order_seq, 2, "no order update");
				}
			});

			it("batches of the adapter's trackBatchSize (50): 60 due shipments of one courier → 2 calls; unwired couriers counted failed", async () => {
				const s = newSender();
				const ids: number[] = [];
				for (let i = 0; i < 60; i++) {
					const o = addOrder(s);
					const [r] = await select<{ attempt_id: string }>(
						getSequelize(),
						`INSERT INTO booking.attempts (order_id, sender_id, logistic_id, courier_name, mode, state, awb_number, booked_at,
						   shipment_status, shipment_status_at, next_track_at)
						 VALUES ($1, $2, 2, 'Sandbox Surface', 'forced', 'booked', $3, now(), 'booked', now(), now())
						 RETURNING attempt_id`,
						[o.order_id, s, `TRK${o.order_id}`],
					);
					ids.push(Number(r.attempt_id));
				}
				const o = addOrder(s);
				const [unwired] = await select<{ attempt_id: string }>(
					getSequelize(),
					`INSERT INTO booking.attempts (order_id, sender_id, logistic_id, courier_name, mode, state, awb_number, booked_at,
					   shipment_status, shipment_status_at, next_track_at)
					 VALUES ($1, $2, 7, 'Unwired Courier', 'forced', 'booked', $3, now(), 'booked', now(), now())
					 RETURNING attempt_id`,
					[o.order_id, s, `TRK${o.order_id}`],
				);
				await onlyDue([...ids, Number(unwired.attempt_id)]);
				const before = await trackCalls();
				const res: any = await callAs(broker(), "booking.pollTracking", {});
				assert.deepEqual(res, { leased: 61, calls: 2, accepted: 0, applied: 0, failed: 1 });
				const calls = (await trackCalls()).slice(before.length);
				assert.deepEqual(calls.map((c) => [c.courier_code, c.refnum.split(",").length]).sort(), [
					["sbx-surface", 10],
					["sbx-surface", 50],
				]);
				assert.ok(COURIERS.some((c) => c.logistic_id === 7 && c.adapter === "nosuch"));
				// clean up: these AWBs exist nowhere
				await exec(getSequelize(), "UPDATE booking.attempts SET next_track_at = NULL WHERE sender_id = $1", [
					s,
				]);
			});
		});

		describe("POST /v1/sandbox/orders/{order_id}/events (booking.sandboxEvent)", () => {
			it("emits the scan at the simulator, polls it back and answers the folded status; intake has it before the answer", async () => {
				const b = await bookedOrder(broker());
				const res = await sandboxEvent(broker(), b.sender, {
					order_id: String(b.o.order_id),
					event: "picked_up",
				});
				assert.deepEqual(res, {
					order_id: b.o.order_id,
					awb_number: b.awb,
					event: "picked_up",
					status: "picked_up",
					status_name: "Picked up",
				});
				// the simulator's create scan (the courier's Manifested: booked) came with it: no change, one update
				assert.deepEqual(
					trackingUpdates(b.o.order_id).map(([seq, state, s]) => [seq, state, s]),
					[[3, "booked", "picked_up"]],
				);
				const und = await sandboxEvent(broker(), b.sender, {
					order_id: b.o.order_id,
					event: "undelivered",
					reason: "Customer refused",
				});
				assert.equal(und.status, "undelivered");
				assert.equal(und.status_name, "Undelivered");
				await eventually(() => undelivered.find((e) => e.order_id === b.o.order_id));
				assert.equal(undelivered.find((e) => e.order_id === b.o.order_id)?.reason, "Customer refused");
				const done = await sandboxEvent(broker(), b.sender, { order_id: b.o.order_id, event: "delivered" });
				assert.deepEqual([done.status, done.status_name], ["delivered", "Delivered"]);
				await eventually(() => laneOutcomes.find((l) => l.attempt_id === b.attempt_id));
				assert.equal(laneOutcomes.find((l) => l.attempt_id === b.attempt_id)?.outcome, "delivered");
				// a terminal shipment stays so
				const late = await sandboxEvent(broker(), b.sender, {
					order_id: b.o.order_id,
					event: "rto_initiated",
				});
				assert.equal(late.status, "delivered");
			});

			it("400 validation_failed: bad order_id, unknown event, undelivered without reason", async () => {
				const s = newSender();
				const cases: [Record<string, unknown>, string[]][] = [
					[{ order_id: "abc", event: "picked_up" }, ["order_id: must be a positive integer"]],
					[{ order_id: "0", event: "picked_up" }, ["order_id: must be a positive integer"]],
					[
						{ order_id: "12", event: "booked" },
						[
							"event: must be one of picked_up, in_transit, out_for_delivery, delivered, undelivered, rto_initiated, rto_delivered",
						],
					],
					[
						{ order_id: "12" },
						[
							"event: must be one of picked_up, in_transit, out_for_delivery, delivered, undelivered, rto_initiated, rto_delivered",
						],
					],
					[
						{ order_id: "12", event: "undelivered" },
						["reason: required for undelivered (the failed-delivery reason)"],
					],
					[
						{ order_id: "12", event: "undelivered", reason: "  " },
						["reason: required for undelivered (the failed-delivery reason)"],
					],
					[
						{ order_id: "12", event: "delivered", reason: 5 },
						["reason: must be a string of at most 255 characters"],
					],
					[
						{ order_id: "12", event: "delivered", reason: "x".repeat(256) },
						["reason: must be a string of at most 255 characters"],
					],
				];
				for (const [params, details] of cases) {
					const { status, body } = bodyOf(await rejects(() => sandboxEvent(broker(), s, params)));
					assert.equal(status, 400, JSON.stringify(params));
					assert.equal(body.error, "validation_failed");
					assert.deepEqual(body.details, details, JSON.stringify(params));
				}
			});

			it("404 order not found for another account's or a missing order; 409 not_booked; 403 for read-only roles", async () => {
				const b = await bookedOrder(broker());
				const notFound = { status: 404, body: { error: "order not found", message: "order not found" } };
				const other = newSender();
				assert.deepEqual(
					bodyOf(
						await rejects(() =>
							sandboxEvent(broker(), other, { order_id: b.o.order_id, event: "picked_up" }),
						),
					),
					notFound,
				);
				assert.deepEqual(
					bodyOf(
						await rejects(() =>
							sandboxEvent(broker(), b.sender, { order_id: 987654321, event: "picked_up" }),
						),
					),
					notFound,
				);
				const fresh = addOrder(b.sender);
				const nb = bodyOf(
					await rejects(() =>
						sandboxEvent(broker(), b.sender, { order_id: fresh.order_id, event: "picked_up" }),
					),
				);
				assert.deepEqual(nb, {
					status: 409,
					body: {
						error: "not_booked",
						message: `order ${fresh.order_id} has no booked shipment: book it first`,
					},
				});
				const ro = bodyOf(
					await rejects(() =>
						sandboxEvent(
							broker(),
							b.sender,
							{ order_id: b.o.order_id, event: "picked_up" },
							"merchant_finance",
						),
					),
				);
				assert.equal(ro.status, 403);
				// a cancelled booking is not booked
				await callAs(broker(), "booking.cancel", { order_id: b.o.order_id, logistic_id: 1 }, as(b.sender));
				const cancelled = bodyOf(
					await rejects(() =>
						sandboxEvent(broker(), b.sender, { order_id: b.o.order_id, event: "picked_up" }),
					),
				);
				assert.equal(cancelled.body.error, "not_booked");
			});

			it("404 not_found when SANDBOX is off (the route does not exist)", async () => {
				const b = await bookedOrder(broker());
				process.env.SANDBOX = "0";
				try {
					const { status, body } = bodyOf(
						await rejects(() =>
							sandboxEvent(broker(), b.sender, { order_id: b.o.order_id, event: "picked_up" }),
						),
					);
					assert.equal(status, 404);
					assert.equal(body.error, "not_found");
				} finally {
					process.env.SANDBOX = "1";
				}
				assert.equal(await scanCount(b.attempt_id), 0);
			});
		});

		describe("GET /v1/orders/{id}/tracking (booking.tracking)", () => {
			it("scans oldest first with every field; status of the folded shipment; read-only roles may read", async () => {
				const b = await bookedOrder(broker());
				await pushScans(broker(), b, [
					["in_transit", 90],
					["picked_up", 30],
					["undelivered", 200, "Door locked"],
				]);
				const res = await tracking(broker(), b.sender, { id: String(b.o.order_id) }, "merchant_finance");
				assert.deepEqual(res, {
					scans: [
						{
							at: at(b.t0, 30),
							location: "Mumbai Hub",
							status: "picked_up",
							status_name: "Picked up",
							courier_code: "X-PPOM",
							courier_status: "Picked Up",
							remarks: null,
						},
						{
							at: at(b.t0, 90),
							location: "Mumbai Hub",
							status: "in_transit",
							status_name: "In transit",
							courier_code: "X-DLL2F",
							courier_status: "In Transit",
							remarks: null,
						},
						{
							at: at(b.t0, 200),
							location: "Mumbai Hub",
							status: "undelivered",
							status_name: "Undelivered",
							courier_code: "EOD-74",
							courier_status: "Pending",
							remarks: "Door locked",
						},
					],
					truncated: false,
					scan_limit: 100,
					status_name: "Undelivered",
					order_status_id: 9,
				});
			});

			it("scan_limit caps the list keeping the newest scans (truncated true); 1–500 accepted", async () => {
				const b = await bookedOrder(broker());
				await pushScans(broker(), b, [
					["manifested", 1],
					["picked_up", 2],
					["in_transit", 3],
					["in_transit", 4],
					["out_for_delivery", 5],
				]);
				const two = await tracking(broker(), b.sender, { id: String(b.o.order_id), scan_limit: "2" });
				assert.equal(two.truncated, true);
				assert.equal(two.scan_limit, 2);
				assert.deepEqual(
					two.scans.map((s: any) => [s.status, s.at]),
					[
						["in_transit", at(b.t0, 4)],
						["out_for_delivery", at(b.t0, 5)],
					],
				);
				const five = await tracking(broker(), b.sender, { id: String(b.o.order_id), scan_limit: "5" });
				assert.equal(five.truncated, false);
				assert.equal(five.scans.length, 5);
				assert.equal(
					(await tracking(broker(), b.sender, { id: String(b.o.order_id), scan_limit: "500" })).scan_limit,
					500,
				);
				for (const bad of ["0", "501", "abc", "1.5", "-1", " 2"]) {
					const { status, body } = bodyOf(
						await rejects(() => tracking(broker(), b.sender, { id: String(b.o.order_id), scan_limit: bad })),
					);
					assert.equal(status, 400, bad);
					assert.deepEqual(body.details, ["scan_limit: must be an integer from 1 to 500"]);
				}
			});

			it("an order never booked: no scans, its status from intake; 404 for another account's or a missing order; 400 for a bad id", async () => {
				const s = newSender();
				const o = addOrder(s);
				assert.deepEqual(await tracking(broker(), s, { id: String(o.order_id) }), {
					scans: [],
					truncated: false,
					scan_limit: 100,
					status_name: "New",
					order_status_id: 1,
				});
				const notFound = { status: 404, body: { error: "order not found", message: "order not found" } };
				assert.deepEqual(
					bodyOf(await rejects(() => tracking(broker(), newSender(), { id: String(o.order_id) }))),
					notFound,
				);
				assert.deepEqual(bodyOf(await rejects(() => tracking(broker(), s, { id: "987654321" }))), notFound);
				for (const id of ["abc", "0", "-4", "1e3"]) {
					const { status, body } = bodyOf(await rejects(() => tracking(broker(), s, { id })));
					assert.equal(status, 400, id);
					assert.deepEqual(body.details, ["id: must be a positive integer"]);
				}
			});
		});

		describe("the lane of an attempt", () => {
			it("AUTO fall-over keeps the lane's pincodes on the next attempt", async () => {
				const s = newSender();
				await exec(
					getSequelize(),
					"INSERT INTO booking.rankings (sender_id, direction, logistic_id, priority) VALUES ($1, 'forward', 7, 1), ($1, 'forward', 2, 2)",
					[s],
				);
				const o = addOrder(s);
				await book(broker(), s, { order_id: o.order_id });
				const done = await settled(o.order_id);
				assert.equal(done.state, "booked");
				const rows = await attemptsOf(o.order_id);
				assert.deepEqual(
					rows.map((r) => [r.logistic_id, r.state, r.from_pin, r.to_pin]),
					[
						[7, "failed", "560001", "400001"],
						[2, "booked", "560001", "400001"],
					],
				);
			});
		});
	});
});

/** The simulator's track calls so far (oldest first): courier and the waybills asked (AWB lists, not references). */
async function trackCalls(): Promise<{ courier_code: string; refnum: string }[]> {
	const rows = await select<{ courier_code: string; refnum: string }>(
		getSequelize(),
		"SELECT courier_code, refnum FROM simulator.calls WHERE endpoint = 'lookup' ORDER BY id",
	);
	return rows.filter((r) => r.refnum.split(",").every((x) => /^(TRK\d+|\d{12,15})$/.test(x)));
}
