/**
 * booking service, manifests and the durable `shipment.status_changed` (issue
 * 8; spec §3 manifest row, §6; lib/booking/tracking.ts `markManifested`,
 * lib/platform/channels.ts): `booking.markManifested` moves the sender's booked
 * shipments to `manifested` through the tracking fold (intake gets the order
 * update; booking's status and time; the scan in the history), is idempotent,
 * ignores another sender's AWBs and a shipment already picked up; every status
 * change is one `status_event` outbox row published to the channel (here
 * Redis Streams: one process with `REDIS_URL`, the stream read back with
 * XRANGE), and a publish that fails stays undelivered until the relay's
 * retry is acknowledged.
 * Real booking service, simulator, PostgreSQL and Redis; fakes of intake,
 * warehouses and rates in ./setup.ts.
 */
import assert from "node:assert/strict";
import IORedis from "ioredis";
import type { ServiceBroker } from "moleculer";
import { type ParamsOf, SHIPMENT_STATUS_CHANNEL, type ShipmentStatusChanged } from "../../../lib/contracts";
import {
	CHANNEL_REDIS_MAXLEN,
	channelsKindOf,
	channelsOf,
	channelsPrefixOf,
} from "../../../lib/platform/channels";
import { getSequelize, select } from "../../../lib/platform/db";
import { as, newSender, rejects } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { eventually } from "../../helpers/poll";
import { addOrder, attemptsOf, book, settled, updates, useBookingBroker } from "./setup";

/** A booked shipment of a test. */
interface Booked {
	order_id: number;
	sender: number;
	attempt_id: number;
	awb: string;
}

/** Books `n` fresh orders of `sender` (a new one unless given) at courier 1 and waits until booked. */
async function booked(broker: ServiceBroker, n: number, sender = newSender()): Promise<Booked[]> {
	const out: Booked[] = [];
	for (let i = 0; i < n; i++) {
		const o = addOrder(sender);
		await book(broker, sender, { order_id: o.order_id, logistic_id: 1 });
		const done = await settled(o.order_id);
		assert.equal(done.state, "booked", JSON.stringify(done));
		const [a] = await attemptsOf(o.order_id);
		out.push({ order_id: o.order_id, sender, attempt_id: Number(a.attempt_id), awb: a.awb_number });
	}
	return out;
}

/** Calls `booking.markManifested`. */
function manifest(broker: ServiceBroker, p: ParamsOf<"booking.markManifested">): Promise<{ moved: number }> {
	return callAs(broker, "booking.markManifested", p);
}

/** The attempt's tracking columns. */
async function row(attempt_id: number) {
	const [r] = await select<any>(
		getSequelize(),
		"SELECT shipment_status, shipment_status_at, order_seq FROM booking.attempts WHERE attempt_id = $1",
		[attempt_id],
	);
	return r;
}

/** The status_event outbox rows of an attempt (payload, delivered, tries, last_error), oldest first. */
async function statusEvents(attempt_id: number) {
	return select<{
		payload: ShipmentStatusChanged;
		delivered_at: Date | null;
		tries: number;
		last_error: string | null;
	}>(
		getSequelize(),
		`SELECT payload, delivered_at, tries, last_error FROM booking.outbox
		 WHERE kind = 'status_event' AND (payload->>'order_id')::bigint IN (SELECT order_id FROM booking.attempts WHERE attempt_id = $1)
		 ORDER BY id`,
		[attempt_id],
	);
}

/** The manifest scans of an attempt. */
async function manifestScans(attempt_id: number) {
	return select<any>(
		getSequelize(),
		"SELECT status, courier_code, courier_status, location, at, source FROM booking.scans WHERE attempt_id = $1 AND source = 'manifest'",
		[attempt_id],
	);
}

/** The intake updates after booking (seq > 2) of an order: [seq, state, status, status_at]. */
function laterUpdates(order_id: number) {
	return updates
		.filter((u) => u.order_id === order_id && u.seq > 2)
		.sort((a, b) => a.seq - b.seq)
		.map((u) => [u.seq, u.state, u.status, u.status_at]);
}

describe("booking: manifests (booking.markManifested) and the durable shipment.status_changed", function () {
	this.timeout(60_000);
	let savedTrackMs: string | undefined;
	before(() => {
		savedTrackMs = process.env.BOOKING_TRACK_MS;
		process.env.BOOKING_TRACK_MS = "3600000";
	});
	after(() => {
		if (savedTrackMs === undefined) delete process.env.BOOKING_TRACK_MS;
		else process.env.BOOKING_TRACK_MS = savedTrackMs;
	});

	it("the channel adapter follows the configuration: NATS with a transporter, Redis with REDIS_URL, else in process", () => {
		const cfg = { namespace: "ns1", queuePrefix: "qp" };
		assert.equal(channelsKindOf({ transporter: "nats://x:4222", redisUrl: "redis://y" }), "NATS");
		assert.equal(channelsKindOf({ transporter: undefined, redisUrl: "redis://y" }), "Redis");
		assert.equal(channelsKindOf({ transporter: undefined, redisUrl: undefined }), "Fake");
		assert.equal(channelsPrefixOf({ ...cfg, transporter: "nats://x:4222", redisUrl: undefined }), "ns1");
		assert.equal(channelsPrefixOf({ ...cfg, transporter: undefined, redisUrl: "redis://y" }), "qp:channels");
		assert.equal(channelsPrefixOf({ ...cfg, transporter: undefined, redisUrl: undefined }), "");
	});

	describe("on a booking broker (channels on Redis Streams)", () => {
		const broker = useBookingBroker();
		const redis = new IORedis(process.env.TEST_REDIS_URL || "redis://127.0.0.1:6379", { lazyConnect: true });
		// read in the hooks: QUEUE_PREFIX is set by the global setup after spec files load
		const streamKey = () => `${process.env.QUEUE_PREFIX}:channels.${SHIPMENT_STATUS_CHANNEL}`;
		before(() => redis.connect());
		after(() => redis.quit());

		/** The events of the channel's Redis stream for `order_ids`. */
		/**
		 * The stream's events of `order_ids`, each `event_id` once: the outbox may publish a row twice by
		 * design (a request's own relay meeting a relay round), Redis Streams keep both, and every
		 * subscriber keeps an event_id once.
		 */
		async function published(order_ids: number[]): Promise<ShipmentStatusChanged[]> {
			const type = await redis.type(streamKey());
			if (type !== "stream") return [];
			const entries = await redis.xrange(streamKey(), "-", "+");
			const byId = new Map<string, ShipmentStatusChanged>();
			for (const [, fields] of entries) {
				const e = JSON.parse(fields[fields.indexOf("payload") + 1]) as ShipmentStatusChanged;
				if (order_ids.includes(e.order_id) && !byId.has(e.event_id)) byId.set(e.event_id, e);
			}
			return [...byId.values()];
		}

		it("the booking broker publishes on Redis Streams", () => {
			assert.equal(channelsOf(broker()), "Redis");
			assert.ok(CHANNEL_REDIS_MAXLEN > 0);
		});

		it("moves the sender's booked shipments to manifested: booking's status and time, the scan, intake's update, one event each", async () => {
			const list = await booked(broker(), 3);
			const at = new Date(Date.now() + 1000).toISOString();
			const manifest_no = `MF-T-${list[0].order_id}`;
			const res = await manifest(broker(), {
				sender_id: list[0].sender,
				manifest_no,
				at,
				awb_numbers: list.map((b) => b.awb),
			});
			assert.deepEqual(res, { moved: 3 });
			for (const b of list) {
				const r = await row(b.attempt_id);
				assert.equal(r.shipment_status, "manifested");
				assert.equal(new Date(r.shipment_status_at).toISOString(), at);
				assert.equal(r.order_seq, 3);
				assert.deepEqual(
					(await manifestScans(b.attempt_id)).map((s) => [
						s.status,
						s.courier_code,
						s.courier_status,
						s.location,
						new Date(s.at).toISOString(),
					]),
					[["manifested", "MANIFEST", `Manifested (${manifest_no})`, "", at]],
				);
			}
			// intake gets the order update (seq 3, booked / manifested at the manifest's time)
			for (const b of list) {
				await eventually(() => laterUpdates(b.order_id).length === 1, { what: "the manifested update" });
				assert.deepEqual(laterUpdates(b.order_id), [[3, "booked", "manifested", at]]);
			}
			// the tracking read names it
			const t: any = await callAs(
				broker(),
				"booking.tracking",
				{ id: String(list[0].order_id) },
				as(list[0].sender),
			);
			assert.equal(t.status_name, "Ready for pickup");
			assert.equal(t.order_status_id, 4);
			// one status_event row per shipment, delivered: the channel holds one event per package
			for (const b of list) {
				await eventually(async () => (await statusEvents(b.attempt_id)).every((e) => e.delivered_at), {
					what: "the status events delivered",
				});
			}
			const ids = list.map((b) => b.order_id);
			const events = await eventually(
				async () => {
					const got = await published(ids);
					return got.length >= 3 ? got : null;
				},
				{ what: "the events on the channel" },
			);
			assert.equal(events.length, 3);
			assert.deepEqual(events.map((e) => e.order_id).sort(), [...ids].sort(), "one event per package");
			for (const e of events) {
				const b = list.find((x) => x.order_id === e.order_id) as Booked;
				assert.deepEqual(e, {
					event_id: `${b.attempt_id}-3`,
					order_id: b.order_id,
					sender_id: b.sender,
					awb_number: b.awb,
					logistic_id: 1,
					status: "manifested",
					status_name: "Ready for pickup",
					status_at: at,
					seq: 3,
					manifest_no,
				});
			}

			// a redelivery (documents' outbox again) moves nothing and sends nothing
			const again = await manifest(broker(), {
				sender_id: list[0].sender,
				manifest_no,
				at,
				awb_numbers: list.map((b) => b.awb),
			});
			assert.deepEqual(again, { moved: 0 });
			for (const b of list) {
				assert.equal((await statusEvents(b.attempt_id)).length, 1);
				assert.equal((await manifestScans(b.attempt_id)).length, 1);
				assert.equal((await row(b.attempt_id)).order_seq, 3);
			}
			// relayed at once if there were anything: give it the time of a few relay rounds
			await new Promise((r) => setTimeout(r, 400));
			assert.equal((await published(ids)).length, 3);
			for (const b of list) assert.equal(laterUpdates(b.order_id).length, 1);
		});

		it("ignores another sender's AWBs, unknown ones and a shipment already picked up (stays picked up)", async () => {
			const [mine, picked] = await booked(broker(), 2);
			const [theirs] = await booked(broker(), 1);
			// picked up first (the sandbox event polls the scan back and folds it)
			const ev: any = await callAs(
				broker(),
				"booking.sandboxEvent",
				{ order_id: String(picked.order_id), event: "picked_up" },
				as(picked.sender),
			);
			assert.equal(ev.status, "picked_up");
			const res = await manifest(broker(), {
				sender_id: mine.sender,
				manifest_no: "MF-T-OTHERS",
				at: new Date().toISOString(),
				awb_numbers: [mine.awb, picked.awb, theirs.awb, "NO-SUCH-AWB"],
			});
			assert.deepEqual(res, { moved: 1 }, "only the sender's booked shipment moves");
			assert.equal((await row(mine.attempt_id)).shipment_status, "manifested");
			assert.equal((await row(picked.attempt_id)).shipment_status, "picked_up", "never backwards");
			assert.equal((await row(theirs.attempt_id)).shipment_status, "booked");
			assert.equal((await manifestScans(theirs.attempt_id)).length, 0, "nothing stored for another sender");
			assert.equal((await statusEvents(theirs.attempt_id)).length, 0);
			// the picked-up shipment: its picked_up event only, no manifested one
			assert.deepEqual(
				(await statusEvents(picked.attempt_id)).map((e) => e.payload.status),
				["picked_up"],
			);
			await eventually(() => laterUpdates(mine.order_id).length === 1);
			await new Promise((r) => setTimeout(r, 300));
			assert.deepEqual(
				laterUpdates(picked.order_id).map((u) => u[2]),
				["picked_up"],
			);
			assert.equal(laterUpdates(theirs.order_id).length, 0);
		});

		it("422 for malformed params; 400 validation_failed for a time that is not one", async () => {
			const sender_id = newSender();
			for (const bad of [
				{ sender_id, manifest_no: "M", at: new Date().toISOString(), awb_numbers: [] },
				{ sender_id, manifest_no: "", at: new Date().toISOString(), awb_numbers: ["A"] },
				{ sender_id: -1, manifest_no: "M", at: new Date().toISOString(), awb_numbers: ["A"] },
			]) {
				const err = await rejects(() => manifest(broker(), bad));
				assert.equal(err.code, 422, JSON.stringify(bad));
			}
			const err = await rejects(() =>
				manifest(broker(), { sender_id, manifest_no: "M", at: "yesterday", awb_numbers: ["A"] }),
			);
			assert.equal(err.code, 400);
			assert.equal(err.data?.body?.error, "validation_failed");
		});

		it("a publish that fails stays undelivered (tries, last_error) and the relay retries it until acknowledged", async () => {
			const [b] = await booked(broker(), 1);
			// the channel's stream key holds a plain string: every XADD fails (WRONGTYPE) until it is gone
			const key = streamKey();
			const kept = (await redis.type(key)) === "stream" ? await redis.xrange(key, "-", "+") : [];
			await redis.del(key);
			await redis.set(key, "not a stream");
			try {
				const res = await manifest(broker(), {
					sender_id: b.sender,
					manifest_no: "MF-T-RETRY",
					at: new Date().toISOString(),
					awb_numbers: [b.awb],
				});
				assert.deepEqual(res, { moved: 1 });
				// intake's update goes through; the event does not
				await eventually(() => laterUpdates(b.order_id).length === 1, { what: "the order update" });
				const failed = await eventually(
					async () => {
						const [e] = await statusEvents(b.attempt_id);
						return e && e.tries >= 2 ? e : null;
					},
					{ what: "the event retried" },
				);
				assert.equal(failed.delivered_at, null);
				assert.match(String(failed.last_error), /WRONGTYPE/);
			} finally {
				await redis.del(key);
				for (const [, fields] of kept) await redis.xadd(key, "*", ...fields);
			}
			// the next relay round publishes it: delivered, on the channel once
			await eventually(async () => (await statusEvents(b.attempt_id))[0]?.delivered_at, {
				what: "the event delivered after the retry",
			});
			const events = await published([b.order_id]);
			assert.deepEqual(
				events.map((e) => [e.event_id, e.status, e.manifest_no]),
				[[`${b.attempt_id}-3`, "manifested", "MF-T-RETRY"]],
			);
		});
	});
});
