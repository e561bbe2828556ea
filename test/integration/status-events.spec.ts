/**
 * Integration: the durable `shipment.status_changed` over real NATS (issue 8;
 * spec §6; lib/platform/channels.ts, lib/booking/relay.ts): the services spread over
 * three brokers, and subscribers on OTHER brokers of the same cluster
 * namespace listening on the channel (JetStream): two brokers of one
 * consumer group (two pods of an internal system) and one of another group.
 * A manifest of N packages (`booking.markManifested`, as documents' outbox
 * calls it) and tracking status changes (sandbox events over HTTP) each reach
 * every group exactly once per package; a redelivered manifest sends nothing.
 * The run's JetStream streams are deleted afterwards.
 */
import { strict as assert } from "node:assert";
import { ServiceBroker } from "moleculer";
import { connect } from "nats";
import { SHIPMENT_STATUS_CHANNEL, type ShipmentStatusChanged } from "../../lib/contracts";
import { channelSubscriptions } from "../../lib/platform/channels";
import { newSender, testBrokerOptions } from "../helpers/broker";
import { callAs } from "../helpers/call";
import { useCluster } from "../helpers/cluster";
import { useEnv } from "../helpers/env";
import { freshRef, orderBody, warehouseBody } from "../helpers/fixtures";
import { client } from "../helpers/flow";
import { eventually } from "../helpers/poll";

/** A subscriber broker: service `name` on the channel in consumer group `group`, collecting what it gets. */
async function subscriber(
	nodeID: string,
	group: string,
	got: ShipmentStatusChanged[],
): Promise<ServiceBroker> {
	const b = new ServiceBroker(testBrokerOptions(true, { nodeID }));
	const schema = {
		name: `listener-${nodeID}`,
		channels: channelSubscriptions({
			[SHIPMENT_STATUS_CHANNEL]: {
				group,
				handler(payload) {
					got.push(payload);
				},
			},
		}),
	};
	b.createService(schema);
	await b.start();
	return b;
}

/** How many times each event_id was received. */
function counts(got: ShipmentStatusChanged[]): Map<string, number> {
	const m = new Map<string, number>();
	for (const e of got) m.set(e.event_id, (m.get(e.event_id) ?? 0) + 1);
	return m;
}

describe("integration: durable shipment.status_changed to subscribers on other brokers over NATS", function () {
	this.timeout(120_000);
	const ENV: Record<string, string> = {
		SANDBOX_COURIER_DELAY_MS: "20",
		BOOKING_RELAY_MS: "200",
		BOOKING_RELAY_BACKOFF_MS: "50",
		BOOKING_BACKOFF_MS: "100",
		BOOKING_TRACK_MS: "3600000",
	};
	useEnv(ENV);

	describe("on a cluster", () => {
		const cluster = useCluster(
			"it-events",
			[
				["gateway", "documents"],
				["pincode", "rates", "warehouses", "intake"],
				["booking", "billing", "simulator"],
			],
			["pincode", "rates", "warehouses", "intake", "booking", "billing", "simulator", "documents"],
		);
		const audit: ShipmentStatusChanged[] = [];
		const crm: ShipmentStatusChanged[] = [];
		const subs: ServiceBroker[] = [];
		let namespace = "";
		before(async () => {
			namespace = String(process.env.NAMESPACE);
			subs.push(
				await subscriber("it-events-audit-1", "audit", audit),
				await subscriber("it-events-audit-2", "audit", audit),
				await subscriber("it-events-crm", "crm", crm),
			);
		});
		after(async () => {
			await Promise.all(subs.map((b) => b.stop()));
			// the run's streams (their consumers go with them)
			const nc = await connect({ servers: process.env.TEST_NATS_URL });
			try {
				const jsm = await nc.jetstreamManager();
				for await (const s of jsm.streams.list()) {
					if (s.config.name.startsWith(namespace)) await jsm.streams.delete(s.config.name);
				}
			} finally {
				await nc.close();
			}
		});

		/** A merchant with a warehouse and `n` orders booked through book/sync: [order_id, awb]. */
		async function bookedOrders(n: number) {
			const sender = newSender();
			const api = client(cluster.base, await cluster.idp.tokenFor(sender));
			const wh = await api.post("/v1/warehouses", warehouseBody());
			assert.equal(wh.status, 201, JSON.stringify(wh.body));
			const list: { order_id: number; awb: string }[] = [];
			for (let i = 0; i < n; i++) {
				const created = await api.post("/v1/intake/order", orderBody(wh.body.data.id, freshRef("EVT")));
				assert.equal(created.status, 201, JSON.stringify(created.body));
				const order_id = created.body.order_id as number;
				const b = await api.post("/v1/shipping/book/sync", { order_id, logistic_id: 1 });
				assert.equal(b.status, 200, JSON.stringify(b.body));
				list.push({ order_id, awb: b.body.awb });
			}
			return { sender, api, list };
		}

		/** Waits until both groups got `n` events of `orders`, then a little longer, and checks each came once per group. */
		async function onceEach(orders: number[], n: number, status: string) {
			const mine = (got: ShipmentStatusChanged[]) =>
				got.filter((e) => orders.includes(e.order_id) && e.status === status);
			await eventually(() => mine(audit).length >= n && mine(crm).length >= n, {
				what: `${n} ${status} events in both groups`,
				ms: 20_000,
			});
			// a duplicate would come within the relay's rounds
			await new Promise((r) => setTimeout(r, 1000));
			for (const got of [audit, crm]) {
				const c = counts(mine(got));
				assert.equal(c.size, n, "one event per package");
				assert.deepEqual([...c.values()], Array(n).fill(1), "each received exactly once by the group");
			}
			return mine(crm);
		}

		it("a manifest of N packages: each group receives one event per package; a redelivery sends nothing", async () => {
			const N = 5;
			const { sender, list } = await bookedOrders(N);
			const at = new Date().toISOString();
			const res: any = await callAs(cluster.brokers[0], "booking.markManifested", {
				sender_id: sender,
				manifest_no: "MF-IT-1",
				at,
				awb_numbers: list.map((x) => x.awb),
			});
			assert.deepEqual(res, { moved: N });
			const ids = list.map((x) => x.order_id);
			const events = await onceEach(ids, N, "manifested");
			for (const e of events) {
				const x = list.find((o) => o.order_id === e.order_id);
				assert.ok(x, "an event of one of the manifest's orders");
				assert.equal(e.awb_number, x.awb);
				assert.equal(e.sender_id, sender);
				assert.equal(e.status_name, "Ready for pickup");
				assert.equal(e.status_at, at);
				assert.equal(e.manifest_no, "MF-IT-1");
				assert.match(e.event_id, /^\d+-3$/);
			}
			// both pods of the audit group shared the work or not, but never both got one event
			assert.equal(audit.filter((e) => ids.includes(e.order_id)).length, N);

			const again: any = await callAs(cluster.brokers[0], "booking.markManifested", {
				sender_id: sender,
				manifest_no: "MF-IT-1",
				at,
				awb_numbers: list.map((x) => x.awb),
			});
			assert.deepEqual(again, { moved: 0 });
			await new Promise((r) => setTimeout(r, 1000));
			assert.equal(crm.filter((e) => ids.includes(e.order_id)).length, N);
			assert.equal(audit.filter((e) => ids.includes(e.order_id)).length, N);
		});

		it("POST /v1/documents/manifest end to end: documents' outbox → booking → one event per package per group, Ready-for-pickup in lists", async () => {
			const { api, list } = await bookedOrders(3);
			const ids = list.map((x) => x.order_id);
			const m = await api.post("/v1/documents/manifest", { order_ids: ids });
			assert.equal(m.status, 200, JSON.stringify(m.body));
			assert.equal(m.headers.get("content-type"), "application/pdf");
			assert.equal(m.headers.get("x-manifest-count"), "3");
			const manifestNo = String(m.headers.get("x-manifest-no"));
			assert.match(manifestNo, /^MF-\d{8}-\d+$/);
			const events = await onceEach(ids, 3, "manifested");
			for (const e of events) assert.equal(e.manifest_no, manifestNo);
			// the lifecycle status reached intake: the orders moved to the manifest bucket
			await eventually(
				async () => {
					const r = await api.get("/v1/orders?bucket=manifest&limit=1000");
					const listed = (r.body.data as { order_id: number }[]).map((o) => o.order_id);
					return ids.every((id) => listed.includes(id));
				},
				{ what: "the manifested orders in the manifest bucket", ms: 20_000 },
			);
			const again = await api.post("/v1/documents/manifest", { order_ids: ids });
			assert.equal(again.status, 409);
			assert.equal(again.body.code, "already_manifested");
		});

		it("tracking status changes (sandbox events over HTTP) reach each group once per package, in seq order per shipment", async () => {
			const { api, list } = await bookedOrders(3);
			for (const x of list) {
				const r = await api.post(`/v1/sandbox/orders/${x.order_id}/events`, { event: "picked_up" });
				assert.equal(r.status, 200, JSON.stringify(r.body));
				assert.equal(r.body.status, "picked_up");
			}
			const ids = list.map((x) => x.order_id);
			await onceEach(ids, 3, "picked_up");
			const first = list[0];
			const r = await api.post(`/v1/sandbox/orders/${first.order_id}/events`, { event: "in_transit" });
			assert.equal(r.status, 200, JSON.stringify(r.body));
			const events = await onceEach([first.order_id], 1, "in_transit");
			assert.equal(events[0].status_name, "In transit");
			const seqs = crm.filter((e) => e.order_id === first.order_id).map((e) => e.seq);
			assert.deepEqual(seqs, [3, 4]);
		});
	});
});
