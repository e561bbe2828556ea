/**
 * Integration: merchant webhooks over real NATS (issue 11 "Webhooks"): the
 * services on several brokers, the webhooks service on its own, a local
 * receiver verifying every delivery with the `standardwebhooks` library.
 *
 * 1. Events really produced by the flow, through the publishers' outboxes:
 *    create an order (HTTP) → `order.created`; book → `order.booked` with
 *    AWB and courier; sandbox scans → `shipment.status_changed` in order;
 *    an undelivered scan → `ndr.opened`, then delivered → `ndr.closed`.
 * 2. A killed delivery worker (a child process running only the webhooks
 *    service, SIGKILLed while its receiver holds a delivery open) loses no
 *    event — not the one in flight, not the ones published while no
 *    webhooks process ran — and duplicates only with the same `webhook-id`.
 */
import { strict as assert } from "node:assert";
import type { ServiceBroker } from "moleculer";
import { connect } from "nats";
import { Webhook } from "standardwebhooks";
import { signTrackingToken } from "../../lib/shared/label-link";
import { newSender, startBroker } from "../helpers/broker";
import { useCluster } from "../helpers/cluster";
import { useEnv } from "../helpers/env";
import { freshRef, orderBody, warehouseBody } from "../helpers/fixtures";
import { client } from "../helpers/flow";
import { freePort } from "../helpers/net";
import { outboxEvents } from "../helpers/outbox";
import { eventually } from "../helpers/poll";
import { childEnv, type StartedProcess, startProcess } from "../helpers/processes";
import { type Received, Receiver } from "../unit/webhooks/setup";

const ALL_EVENTS = [
	"order.created",
	"order.booked",
	"order.booking_failed",
	"order.cancelled",
	"shipment.status_changed",
	"ndr.opened",
	"ndr.closed",
];

/** The verified envelopes of the requests (throws when one does not verify). */
function verified(secret: string, got: Received[]): any[] {
	const wh = new Webhook(secret);
	return got.map((r) => ({
		...(wh.verify(r.body, {
			"webhook-id": String(r.headers["webhook-id"]),
			"webhook-timestamp": String(r.headers["webhook-timestamp"]),
			"webhook-signature": String(r.headers["webhook-signature"]),
		}) as object),
		id: String(r.headers["webhook-id"]),
	}));
}

describe("integration: merchant webhooks from the real flow, and a killed delivery worker", function () {
	this.timeout(180_000);
	const ENV: Record<string, string> = {
		SANDBOX_COURIER_DELAY_MS: "20",
		BOOKING_RELAY_MS: "200",
		BOOKING_RELAY_BACKOFF_MS: "50",
		BOOKING_TRACK_MS: "3600000",
		NDR_POLICY_MS: "3600000",
		EVENT_OUTBOX_POLL_MS: "200",
		WEBHOOK_BACKOFF_MS: "200",
		WEBHOOK_TIMEOUT_MS: "20000",
		WEBHOOK_LOCK_MS: "2000",
		WEBHOOK_SWEEP_MS: "3600000",
	};
	useEnv(ENV);

	describe("on a cluster", () => {
		const cluster = useCluster(
			"it-webhooks",
			[
				["gateway", "documents"],
				["pincode", "rates", "warehouses", "intake"],
				["booking", "billing", "simulator", "ndr"],
			],
			["pincode", "rates", "warehouses", "intake", "booking", "billing", "simulator", "ndr", "documents"],
		);
		const rx = new Receiver();
		let hooks: ServiceBroker | undefined;
		let child: StartedProcess | undefined;
		let namespace = "";
		before(async () => {
			namespace = String(process.env.NAMESPACE);
			await rx.start();
			hooks = await startBroker(["webhooks"], { nats: true, nodeID: "it-webhooks-hooks" });
			await cluster.brokers[0].waitForServices(["webhooks"], 30_000);
		});
		after(async () => {
			await hooks?.stop();
			await child?.stop("SIGKILL");
			await rx.stop();
			const nc = await connect({ servers: process.env.TEST_NATS_URL });
			try {
				const jsm = await nc.jetstreamManager();
				for await (const s of jsm.streams.list())
					if (s.config.name.startsWith(namespace)) await jsm.streams.delete(s.config.name);
			} finally {
				await nc.close();
			}
		});

		/** A merchant with a warehouse and an endpoint (through the gateway) on `path` for every event type. */
		async function merchant(path: string) {
			const sender = newSender();
			const api = client(cluster.base, await cluster.idp.tokenFor(sender));
			const wh = await api.post("/v1/warehouses", warehouseBody());
			assert.equal(wh.status, 201, JSON.stringify(wh.body));
			const ep = await api.post("/v1/webhooks", { url: `${rx.base}${path}`, events: ALL_EVENTS });
			assert.equal(ep.status, 201, JSON.stringify(ep.body));
			return {
				sender,
				api,
				warehouse: wh.body.data.id as number,
				secret: ep.body.secret as string,
				endpoint: ep.body.id,
			};
		}

		/** A new order of merchant `m` (reference prefixed `prefix`) booked at logistic_id 1 through book/sync. */
		async function bookedOrder(m: Awaited<ReturnType<typeof merchant>>, prefix: string) {
			const ref = freshRef(prefix);
			const created = await m.api.post("/v1/intake/order", orderBody(m.warehouse, ref));
			assert.equal(created.status, 201, JSON.stringify(created.body));
			const order_id = created.body.order_id as number;
			const booked = await m.api.post("/v1/shipping/book/sync", { order_id, logistic_id: 1 });
			assert.equal(booked.status, 200, JSON.stringify(booked.body));
			return { ref, order_id, booked };
		}

		it("delivers order.created, order.booked, shipment.status_changed (in order), ndr.opened and ndr.closed", async () => {
			const m = await merchant("/flow");
			const { ref, order_id, booked } = await bookedOrder(m, "WH");
			for (const event of ["picked_up", "in_transit", "out_for_delivery", "undelivered", "delivered"]) {
				const r = await m.api.post(`/v1/sandbox/orders/${order_id}/events`, {
					event,
					...(event === "undelivered" ? { reason: "Consignee not available" } : {}),
				});
				assert.ok(r.status < 300, `${event}: ${r.status} ${JSON.stringify(r.body)}`);
			}
			const types = (got: any[]) => got.map((e) => e.type);
			const all = await eventually(() => verified(m.secret, rx.on("/flow")), {
				what: "the flow's events",
				ms: 30_000,
				ok: (got) =>
					["order.created", "order.booked", "ndr.opened", "ndr.closed"].every((t) =>
						types(got).includes(t),
					) && got.filter((e) => e.type === "shipment.status_changed").length >= 5,
			});
			const one = (t: string) => all.find((e) => e.type === t);
			assert.equal(one("order.created").data.order_id, order_id);
			assert.equal(one("order.created").data.order_no, ref);
			assert.equal(one("order.booked").data.awb_number, booked.body.awb);
			assert.ok(one("order.booked").data.courier);
			assert.equal(one("order.booked").data.order_no, ref);
			// the buyer's tracking page (issue 29), signed for this AWB
			assert.equal(
				one("order.booked").data.tracking_page_url,
				`/track/${signTrackingToken(booked.body.awb as string)}`,
			);
			const statuses = all.filter((e) => e.type === "shipment.status_changed").map((e) => e.data.status);
			assert.ok(statuses.indexOf("picked_up") < statuses.indexOf("delivered"), statuses.join());
			const st = one("shipment.status_changed").data;
			assert.equal(st.awb_number, booked.body.awb);
			assert.equal(st.order_no, ref);
			assert.equal(one("ndr.opened").data.awb_number, booked.body.awb);
			assert.equal(one("ndr.opened").data.order_no, ref);
			assert.equal(one("ndr.closed").data.status, "delivered");
			// each event once (webhook-ids distinct), all listed in the deliveries log
			assert.equal(new Set(all.map((e) => e.id)).size, all.length);
			const log = await m.api.get(`/v1/webhooks/${m.endpoint}/deliveries?limit=100`);
			assert.equal(log.status, 200);
			assert.equal(log.body.data.length, all.length);
		});

		it("delivers order.cancelled with the cancelled AWB, its courier and the refund, once (record 0160)", async () => {
			const m = await merchant("/cancel");
			const { ref, order_id, booked } = await bookedOrder(m, "WC");
			const cancelled = await m.api.post("/v1/shipping/cancel", { order_id, logistic_id: 1 });
			assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
			assert.ok(cancelled.body.refunded > 0);
			// a repeat answers the same and sends nothing more
			assert.equal((await m.api.post("/v1/shipping/cancel", { order_id, logistic_id: 1 })).status, 200);
			const all = await eventually(() => verified(m.secret, rx.on("/cancel")), {
				what: "order.booked and order.cancelled",
				ms: 30_000,
				ok: (got) => ["order.booked", "order.cancelled"].every((t) => got.some((e) => e.type === t)),
			});
			const booking = all.find((e) => e.type === "order.booked").data;
			// the event is written in the cancel's transaction: booking's outbox holds the only one there will be
			assert.equal((await outboxEvents("booking", "order.cancelled", "order_id", order_id)).length, 1);
			const events = all.filter((e) => e.type === "order.cancelled");
			assert.equal(events.length, 1, JSON.stringify(events));
			assert.deepEqual(events[0].data, {
				order_id,
				order_no: ref,
				status: "cancelled",
				awb_number: booked.body.awb,
				courier: booking.courier,
				logistic_id: 1,
				refunded: cancelled.body.refunded,
			});
		});

		it("loses no event and duplicates only with the same webhook-id when the delivery worker is killed", async () => {
			const m = await merchant("/kill");
			// stop the in-process webhooks node: a child process runs the service alone
			await hooks?.stop();
			hooks = undefined;
			rx.answer("/kill", (n) => (n === 1 ? "hang" : 204));
			child = startProcess({
				...childEnv(),
				LABEL_LINK_SECRET: process.env.LABEL_LINK_SECRET,
				SANDBOX: "1",
				SERVICES: "webhooks",
				NODEID: "it-webhooks-child",
				PORT: String(await freePort()),
				LOGLEVEL: "warn",
				...ENV,
			});
			await cluster.brokers[0].waitForServices(["webhooks"], 60_000);
			const create = async () => {
				const r = await m.api.post("/v1/intake/order", orderBody(m.warehouse, freshRef("KILL")));
				assert.equal(r.status, 201, JSON.stringify(r.body));
				return r.body.order_id as number;
			};
			const first = await create();
			// the child holds the first delivery open: kill it there
			await eventually(() => rx.on("/kill").length, {
				what: "the first attempt",
				ms: 30_000,
				ok: (n) => n >= 1,
			});
			await child.stop("SIGKILL");
			// events published while no webhooks process runs wait in the channel
			const later = [await create(), await create()];
			hooks = await startBroker(["webhooks"], { nats: true, nodeID: "it-webhooks-hooks-2" });
			const want = [first, ...later];
			const got = await eventually(() => verified(m.secret, rx.on("/kill")), {
				what: "every order.created after the restart, the killed attempt's again",
				ms: 60_000,
				ok: (g) =>
					want.every((id) => g.some((e) => e.type === "order.created" && e.data.order_id === id)) &&
					g.filter((e) => e.data.order_id === first).length >= 2,
			});
			const byOrder = new Map<number, Set<string>>();
			for (const e of got.filter((x) => x.type === "order.created")) {
				const ids = byOrder.get(e.data.order_id) ?? new Set();
				ids.add(e.id);
				byOrder.set(e.data.order_id, ids);
			}
			for (const id of want) assert.equal(byOrder.get(id)?.size, 1, `order ${id}: one webhook-id`);
		});
	});
});
