/**
 * webhooks service, delivery (issue 11 "Webhooks"): events from the durable
 * channels reach subscribed endpoints signed per Standard Webhooks (verified
 * here with the `standardwebhooks` library), once per (event, endpoint) even
 * when the channel redelivers; retries with exponential backoff against a
 * receiver that fails then recovers, with the same `webhook-id`; an endpoint
 * failing for the whole schedule disabled with its reason; the previous
 * secret still verifying after a rotation until its 24 h end (the row's
 * expiry moved: the test's clock); order per shipment (`delivered` never
 * before `picked_up`, even published in the other order); a slow endpoint
 * never delaying another account; redirects not followed; answers capped;
 * redelivery with the same id; and, outside the sandbox, a delivery to a name
 * that resolves to loopback refused at delivery time; in and outside the
 * sandbox, a stored IPv6 literal embedding a refused IPv4 address.
 */
import assert from "node:assert/strict";
import { Webhook } from "standardwebhooks";
import type { MerchantEvent } from "../../../lib/contracts";
import { exec, getSequelize, select } from "../../../lib/platform/db";
import { sealSecret } from "../../../lib/webhooks/secrets";
import { newSender } from "../../helpers/broker";
import { eventually } from "../../helpers/poll";
import {
	callAs,
	deliveriesOf,
	deliveryStates,
	freshNumber,
	orderCouriers,
	orderCreated,
	orderNos,
	publishEvent,
	publishEvents,
	publishLoneEvent,
	publishStatus,
	Receiver,
	statusEvent,
	useWebhooksBroker,
} from "./setup";

const rx = new Receiver();

/** An endpoint of `sender` on receiver path `path` for `events`: its id and secret. */
async function endpoint(sender: number, path: string, events: string[]) {
	const { res } = await callAs("webhooks.create", { url: `${rx.base}${path}`, events }, sender);
	return { id: res.id as number, secret: res.secret as string };
}

/** Verifies a received request with the library; answers the parsed envelope. */
function verify(secret: string, r: { body: string; headers: Record<string, unknown> }): any {
	return new Webhook(secret).verify(r.body, {
		"webhook-id": String(r.headers["webhook-id"]),
		"webhook-timestamp": String(r.headers["webhook-timestamp"]),
		"webhook-signature": String(r.headers["webhook-signature"]),
	});
}

describe("webhooks service: signed, durable, ordered delivery", function () {
	this.timeout(60_000);
	useWebhooksBroker();
	before(() => rx.start());
	after(() => rx.stop());

	it("delivers a subscribed event once, signed (standardwebhooks verifies), in the {type, timestamp, data} envelope", async () => {
		const s = newSender();
		const ep = await endpoint(s, "/sig", ["order.created"]);
		await endpoint(s, "/sig-other", ["order.booked"]);
		const order_id = freshNumber();
		const e = orderCreated(s, order_id);
		await publishEvent(e);
		await publishEvent(e); // the channel redelivers: no second delivery
		const [r] = await eventually(() => rx.on("/sig"), { what: "the delivery", ok: (x) => x.length === 1 });
		const body = verify(ep.secret, r as never);
		assert.equal(body.type, "order.created");
		assert.equal(body.data.order_id, order_id);
		assert.equal(body.data.order_no, `ORD-${order_id}`);
		assert.ok(!Number.isNaN(Date.parse(body.timestamp)));
		assert.match(String(r.headers["webhook-id"]), /^msg_/);
		assert.equal(r.headers["content-type"], "application/json");
		assert.throws(() => verify("whsec_" + Buffer.alloc(32, 1).toString("base64"), r as never));
		// a later event proves the duplicate was not queued behind
		await publishEvent(orderCreated(s, freshNumber()));
		await eventually(() => rx.on("/sig"), { ok: (x) => x.length === 2, what: "the second event" });
		assert.equal((await deliveriesOf(ep.id)).length, 2);
		assert.equal(rx.on("/sig-other").length, 0);
	});

	it("delivers an account-level event (remittance.paid: no order) without order_id and without asking intake", async () => {
		const s = newSender();
		const ep = await endpoint(s, "/account", ["remittance.paid"]);
		const e: MerchantEvent = {
			event_id: `remittance.paid:${freshNumber()}`,
			type: "remittance.paid",
			sender_id: s,
			order_id: null,
			occurred_at: new Date().toISOString(),
			data: { remittance_id: 7, net: 1999.5, utr: "UTR-1" },
		};
		await publishEvent(e);
		const [r] = await eventually(() => rx.on("/account"), {
			what: "the delivery",
			ok: (x) => x.length === 1,
		});
		const body = verify(ep.secret, r as never);
		assert.equal(body.type, "remittance.paid");
		assert.deepEqual(body.data, { remittance_id: 7, net: 1999.5, utr: "UTR-1" });
		const [stored] = await select<{ order_id: string | null }>(
			getSequelize(),
			"SELECT order_id FROM webhooks.events WHERE key = $1",
			[e.event_id],
		);
		assert.equal(stored.order_id, null);
	});

	it("takes a relay's batch (each event once, in order, a redelivered batch adds nothing) and a lone event", async () => {
		const s = newSender();
		const other = newSender();
		const ep = await endpoint(s, "/batch", ["order.created", "order.booked"]);
		const otherEp = await endpoint(other, "/batch-other", ["order.created"]);
		const [a, b, c] = [freshNumber(), freshNumber(), freshNumber()];
		const booked: MerchantEvent = {
			event_id: `order.booked:${a}`,
			type: "order.booked",
			sender_id: s,
			order_id: a,
			occurred_at: new Date().toISOString(),
			data: { order_id: a, awb_number: "AWB1", logistic_id: 1, courier: "Sandbox Surface" },
		};
		const batch = [orderCreated(s, a), orderCreated(other, b), booked, orderCreated(s, c)];
		await publishEvents(batch);
		await publishEvents(batch); // the channel redelivers the whole message
		const got = await eventually(() => rx.on("/batch"), {
			what: "three deliveries",
			ok: (x) => x.length === 3,
			diagnose: () => deliveryStates(ep.id),
		});
		const bodies = got.map((r) => verify(ep.secret, r as never));
		assert.deepEqual(
			bodies.map((x) => [x.type, x.data.order_id]).sort(),
			[
				["order.booked", a],
				["order.created", a],
				["order.created", c],
			].sort(),
		);
		// the booked event came after its order's created event in the batch: it carries the order number
		assert.equal(bodies.find((x) => x.type === "order.booked").data.order_no, `ORD-${a}`);
		await eventually(() => rx.on("/batch-other"), { ok: (x) => x.length === 1, what: "the other account's" });
		assert.equal((await deliveriesOf(ep.id)).length, 3);
		assert.equal((await deliveriesOf(otherEp.id)).length, 1);
		// a lone event (before publishers batched) is still taken
		const d = freshNumber();
		await publishLoneEvent(orderCreated(s, d));
		const four = await eventually(() => rx.on("/batch"), {
			what: "the lone event",
			ok: (x) => x.length === 4,
		});
		assert.equal(verify(ep.secret, four[3] as never).data.order_id, d);
	});

	it("keeps nothing of an account without an enabled endpoint; after one is created its events carry the order number and courier, asked of intake", async () => {
		const s = newSender();
		const marker = newSender();
		await endpoint(marker, "/none-marker", ["order.created"]);
		const order_id = freshNumber();
		const attempt = freshNumber();
		orderNos.set(order_id, "LATE-1");
		orderCouriers.set(order_id, "Sandbox Surface");
		const booked: MerchantEvent = {
			event_id: `order.booked:${attempt}`,
			type: "order.booked",
			sender_id: s,
			order_id,
			occurred_at: new Date().toISOString(),
			data: { order_id, awb_number: `AWB${attempt}`, logistic_id: 1, courier: "Sandbox Surface" },
		};
		// one relay round: once the marker account's delivery arrives, the whole round was taken
		await publishEvents([orderCreated(s, order_id, "LATE-1"), booked, orderCreated(marker, freshNumber())]);
		await eventually(() => rx.on("/none-marker"), {
			what: "the marker's delivery",
			ok: (x) => x.length === 1,
		});
		const [kept] = await select<{ events: number; refs: number }>(
			getSequelize(),
			`SELECT (SELECT count(*) FROM webhooks.events WHERE sender_id = $1)::int AS events,
			        (SELECT count(*) FROM webhooks.order_refs WHERE sender_id = $1)::int AS refs`,
			[s],
		);
		assert.deepEqual(kept, { events: 0, refs: 0 });
		const ep = await endpoint(s, "/late", ["shipment.status_changed"]);
		await publishStatus(statusEvent(s, order_id, attempt, 1, "picked_up"));
		const [r] = await eventually(() => rx.on("/late"), {
			what: "the status delivery",
			ok: (x) => x.length === 1,
		});
		const body = verify(ep.secret, r as never);
		assert.equal(body.data.order_no, "LATE-1");
		assert.equal(body.data.courier, "Sandbox Surface");
		assert.equal(body.data.awb_number, `AWB${attempt}`);
		// learnt once: stored with the event (a retry or redelivery sends the same body)
		const [stored] = await select<{ data: Record<string, unknown> }>(
			getSequelize(),
			"SELECT data FROM webhooks.events WHERE sender_id = $1",
			[s],
		);
		assert.equal(stored.data.order_no, "LATE-1");
		assert.equal(stored.data.courier, "Sandbox Surface");
	});

	it("retries with exponential backoff until the receiver recovers, with the same webhook-id", async () => {
		const s = newSender();
		rx.answer("/flaky", (n) => (n < 3 ? 500 : 204));
		const ep = await endpoint(s, "/flaky", ["order.created"]);
		await publishEvent(orderCreated(s, freshNumber()));
		const got = await eventually(() => rx.on("/flaky"), { what: "3 attempts", ok: (x) => x.length === 3 });
		assert.equal(new Set(got.map((r) => r.headers["webhook-id"])).size, 1);
		for (const r of got) verify(ep.secret, r as never);
		const gap1 = got[1].at - got[0].at;
		const gap2 = got[2].at - got[1].at;
		assert.ok(gap1 >= 75, `first retry after ${gap1} ms (base 100, jitter 0.2)`);
		assert.ok(gap2 >= 155, `second retry after ${gap2} ms (2 × base)`);
		const [d] = await eventually(() => deliveriesOf(ep.id), { ok: (x) => x[0]?.status === "delivered" });
		assert.equal(d.attempts, 3);
		assert.equal(d.status_code, 204);
		assert.equal(d.next_retry_at, null);
		const log = (await callAs("webhooks.deliveries", { id: String(ep.id) }, s)).res.data[0];
		assert.equal(log.attempt, 3);
		assert.equal(log.status, "delivered");
	});

	it("disables an endpoint that failed for the whole schedule, with the reason; caps the stored answer", async () => {
		const s = newSender();
		rx.answer("/down", 500);
		const ep = await endpoint(s, "/down", ["order.created"]);
		await publishEvent(orderCreated(s, freshNumber()));
		const view = await eventually(async () => (await callAs("webhooks.get", { id: String(ep.id) }, s)).res, {
			what: "the endpoint disabled",
			ok: (v) => v.enabled === false,
		});
		assert.match(view.disabled_reason ?? "", /every delivery failed since .*; last error: HTTP 500/);
		const [d] = await deliveriesOf(ep.id);
		assert.equal(d.status, "failed");
		assert.equal(d.attempts, 4);
		assert.ok(d.response.length <= 4096);
		assert.equal(rx.on("/down").length, 4);
		// disabled: new events make no delivery. The sentinel exists before the event, so once it has received
		// the event the fan-out is done (an event published before the sentinel's creation could still be
		// fanned out after it, and reach it too: a CI run saw that)
		const sentinel = await endpoint(s, "/down-sentinel", ["order.created"]);
		const after = freshNumber();
		await publishEvent(orderCreated(s, after));
		const seen = await eventually(() => rx.on("/down-sentinel"), { ok: (x) => x.length >= 1 });
		assert.deepEqual(
			seen.map((r) => JSON.parse(r.body).data.order_id),
			[after],
		);
		assert.equal((await deliveriesOf(ep.id)).length, 1);
		assert.equal(rx.on("/down").length, 4);
		assert.ok(sentinel.id > ep.id);
	});

	it("keeps the previous secret verifying after a rotation until its 24 h end", async () => {
		const s = newSender();
		const ep = await endpoint(s, "/rot", ["order.created"]);
		const rotated = (await callAs("webhooks.rotateSecret", { id: String(ep.id) }, s)).res.secret as string;
		const row = (
			await exec(
				getSequelize(),
				"SELECT previous_secret_until - now() AS left FROM webhooks.endpoints WHERE id = $1",
				[ep.id],
			)
		).rows[0] as any;
		assert.ok(row.left.hours >= 23, JSON.stringify(row.left));
		await publishEvent(orderCreated(s, freshNumber()));
		const [r1] = await eventually(() => rx.on("/rot"), { ok: (x) => x.length === 1 });
		assert.equal(String(r1.headers["webhook-signature"]).split(" ").length, 2);
		verify(ep.secret, r1 as never); // the old secret, within 24 h
		verify(rotated, r1 as never);
		// the clock moves past the 24 h: the old secret no longer signs
		await exec(
			getSequelize(),
			"UPDATE webhooks.endpoints SET previous_secret_until = now() - interval '1 second' WHERE id = $1",
			[ep.id],
		);
		await publishEvent(orderCreated(s, freshNumber()));
		const got = await eventually(() => rx.on("/rot"), { ok: (x) => x.length === 2 });
		verify(rotated, got[1] as never);
		assert.throws(() => verify(ep.secret, got[1] as never));
	});

	it("keeps the order of a shipment's status events: delivered never before picked_up", async () => {
		const s = newSender();
		rx.answer("/order", (n) => (n === 1 ? 500 : 204));
		await endpoint(s, "/order", ["shipment.status_changed"]);
		const order_id = freshNumber();
		const attempt = freshNumber();
		orderNos.set(order_id, "SHIP-1");
		// published out of order: delivered (seq 4) first; picked_up (seq 3) a moment later, and its first try fails
		await publishStatus(statusEvent(s, order_id, attempt, 4, "delivered"));
		await new Promise((r) => setTimeout(r, 300));
		await publishStatus(statusEvent(s, order_id, attempt, 3, "picked_up"));
		const got = await eventually(() => rx.on("/order"), { what: "3 requests", ok: (x) => x.length === 3 });
		const statuses = got.map((r) => JSON.parse(r.body).data.status);
		assert.deepEqual(statuses, ["picked_up", "picked_up", "delivered"]);
		const data = JSON.parse(got[2].body).data;
		assert.equal(data.order_no, "SHIP-1"); // asked of intake
		assert.equal(data.awb_number, `AWB${attempt}`);
	});

	it("never lets a slow endpoint delay another account's deliveries", async () => {
		const slow = newSender();
		const fast = newSender();
		rx.answer("/slow", () => "hang");
		await endpoint(slow, "/slow", ["order.created"]);
		await endpoint(fast, "/fast", ["order.created"]);
		for (let i = 0; i < 20; i++) await publishEvent(orderCreated(slow, freshNumber()));
		await eventually(() => rx.on("/slow"), { ok: (x) => x.length >= 2, what: "the slow endpoint busy" });
		const t0 = Date.now();
		await publishEvent(orderCreated(fast, freshNumber()));
		await eventually(() => rx.on("/fast"), {
			ok: (x) => x.length === 1,
			what: "the other account's delivery",
		});
		assert.ok(Date.now() - t0 < 1000, `took ${Date.now() - t0} ms`);
		// at most WEBHOOK_ENDPOINT_INFLIGHT (2) requests in flight to the slow endpoint at a time
		assert.ok(rx.on("/slow").filter((r) => r.at <= t0).length <= 2);
	});

	it("does not follow redirects (a 3xx to the metadata address is a failed attempt)", async () => {
		const s = newSender();
		rx.answer("/redirect", 302);
		const ep = await endpoint(s, "/redirect", ["order.created"]);
		await publishEvent(orderCreated(s, freshNumber()));
		const [d] = await eventually(() => deliveriesOf(ep.id), { ok: (x) => x[0]?.attempts >= 1 });
		assert.equal(d.status_code, 302);
		assert.equal(d.error, "redirect not followed (302)");
	});

	it("redelivers a delivery on request with the same webhook-id", async () => {
		const s = newSender();
		const ep = await endpoint(s, "/again", ["order.created"]);
		await publishEvent(orderCreated(s, freshNumber()));
		const [d] = await eventually(() => deliveriesOf(ep.id), { ok: (x) => x[0]?.status === "delivered" });
		const { res, status } = await callAs(
			"webhooks.redeliver",
			{ id: String(ep.id), delivery_id: String(d.id) },
			s,
		);
		assert.equal(status, 202);
		assert.equal(res.status, "pending");
		const got = await eventually(() => rx.on("/again"), { ok: (x) => x.length === 2 });
		assert.equal(got[0].headers["webhook-id"], got[1].headers["webhook-id"]);
		verify(ep.secret, got[1] as never);
	});

	it("refuses to connect to an IPv6 literal embedding a private address in the sandbox too", async () => {
		const s = newSender();
		const id = await storedEndpoint(s, "http://[::a00:1]/hook");
		await publishEvent(orderCreated(s, freshNumber()));
		const [d] = await eventually(() => deliveriesOf(id), { ok: (x) => x[0]?.attempts >= 1 });
		assert.equal(
			d.error,
			"address not allowed: ::a00:1 is a private address (IPv4-compatible, embeds 10.0.0.1)",
		);
	});
});

describe("webhooks service outside the sandbox: addresses checked at delivery time", function () {
	this.timeout(30_000);
	useWebhooksBroker({ SANDBOX: "0" });
	const local = new Receiver();
	before(() => local.start());
	after(() => local.stop());

	it("refuses to connect when the endpoint's name resolves to loopback (DNS rebinding)", async () => {
		const s = newSender();
		// as if the name had resolved to a public address at subscribe time and to loopback now
		const port = new URL(local.base).port;
		const r = await exec<{ id: string }>(
			getSequelize(),
			`INSERT INTO webhooks.endpoints (sender_id, url, events, secret) VALUES ($1, $2, '{order.created}', $3) RETURNING id`,
			[s, `https://localhost:${port}/rebound`, sealSecret("whsec_" + Buffer.alloc(32, 7).toString("base64"))],
		);
		const id = Number(r.rows[0].id);
		await publishEvent(orderCreated(s, freshNumber()));
		const [d] = await eventually(() => deliveriesOf(id), { ok: (x) => x[0]?.attempts >= 1 });
		assert.match(d.error, /address not allowed: localhost resolves to .* loopback address/);
		assert.equal(d.status_code, null);
		assert.equal(local.got.length, 0);
	});

	it("refuses to connect to an IPv6 literal embedding a refused IPv4 address (a row stored before the check)", async () => {
		const s = newSender();
		const id = await storedEndpoint(s, "https://[::a9fe:a9fe]/latest/meta-data/");
		await publishEvent(orderCreated(s, freshNumber()));
		const [d] = await eventually(() => deliveriesOf(id), { ok: (x) => x[0]?.attempts >= 1 });
		assert.equal(
			d.error,
			"address not allowed: ::a9fe:a9fe is a linkLocal address (IPv4-compatible, embeds 169.254.169.254)",
		);
		assert.equal(d.status_code, null);
	});
});

/** Inserts an endpoint of `sender` on `url` for order.created straight into the table (as if stored before a check existed). */
async function storedEndpoint(sender: number, url: string): Promise<number> {
	const r = await exec<{ id: string }>(
		getSequelize(),
		`INSERT INTO webhooks.endpoints (sender_id, url, events, secret) VALUES ($1, $2, '{order.created}', $3) RETURNING id`,
		[sender, url, sealSecret(`whsec_${Buffer.alloc(32, 7).toString("base64")}`)],
	);
	return Number(r.rows[0].id);
}
