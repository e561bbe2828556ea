/**
 * Integration (issue 28; docs/decisions/0107-pickup-requests.md): pickup requests through the
 * gateway, in one process and split over NATS (gateway + documents; catalog, warehouses,
 * intake + simulator; booking; webhooks), with real PostgreSQL, Redis, the simulator's
 * couriers over HTTP and the durable channels:
 * - requested at the sandbox courier (scheduled, its reference; the courier's own row), the
 *   default day the courier's next pickup day; 409 for the same day; 403 for read-only roles;
 *   404 for another account; 400 for a past day, an unknown warehouse; 422 with the courier's
 *   words (nothing stored);
 * - rescheduled and cancelled through the courier (the simulator's row follows); a cancelled
 *   request cannot be changed; Delhivery (no reschedule or cancel call): a new request for a
 *   new day, the cancel recorded here, both said in `courier_note`;
 * - picked up from the first pickup scan of a shipment booked from that warehouse with that
 *   courier (booking.pickupScans), then not cancellable; missed when its day passed without
 *   one, with the webhook `pickup.missed` delivered, signed, to the merchant's endpoint;
 * - a manifest with `schedule_pickup: true` makes the pickup of its courier and warehouse
 *   (`x-pickup-ids`), and a second manifest finds the same one.
 */
import { strict as assert } from "node:assert";
import type { ServiceBroker } from "moleculer";
import { Webhook } from "standardwebhooks";
import type { CourierInfo } from "../../lib/contracts";
import type { ServiceName } from "../../lib/platform/config";
import { getSequelize, select } from "../../lib/platform/db";
import { nextPickupDay } from "../../lib/shared/calendar";
import { addDays, istDay } from "../../lib/shared/ist-date";
import { newSender } from "../helpers/broker";
import { type Cluster, useCluster } from "../helpers/cluster";
import { useEnv } from "../helpers/env";
import { orderBody, warehouseBody } from "../helpers/fixtures";
import { client } from "../helpers/flow";
import { eventually } from "../helpers/poll";
import { Receiver } from "../unit/webhooks/setup";

const ALL: ServiceName[] = [
	"gateway",
	"documents",
	"pincode",
	"rates",
	"warehouses",
	"intake",
	"booking",
	"simulator",
	"webhooks",
];

/** The simulator's row of a courier pickup id. */
async function simRow(id: string) {
	const [row] = await select<{ date: string; status: string; n: number }>(
		getSequelize(),
		`SELECT to_char(pickup_date, 'YYYY-MM-DD') AS date, status, expected_package_count AS n
		   FROM simulator.pickups WHERE pickup_id = $1::bigint`,
		[id],
	);
	return row;
}

/** Moves a stored pickup to another day (what the passing of days does). */
async function moveTo(id: number, day: string): Promise<void> {
	await select(
		getSequelize(),
		`UPDATE warehouses.pickups SET pickup_date = $2::date WHERE id = $1 RETURNING id`,
		[id, day],
	);
}

/** Runs the scenario against a started cluster whose broker `core` runs warehouses and rates. */
function scenario(cluster: Cluster, core: () => ServiceBroker, rx: Receiver, path: string) {
	it("requests, refuses, reschedules and cancels through the courier; picked up from a scan; missed with its webhook; a manifest's pickup", async () => {
		const sender = newSender();
		const token = await cluster.idp.tokenFor(sender, "merchant_ops");
		const api = client(cluster.base, token);
		const readOnly = client(cluster.base, await cluster.idp.tokenFor(sender, "merchant_finance"));
		const stranger = client(cluster.base, await cluster.idp.tokenFor(newSender()));
		const wh = await api.post("/v1/warehouses", warehouseBody());
		assert.equal(wh.status, 201, JSON.stringify(wh.body));
		const warehouse_id = wh.body.data.id as number;
		await eventually(
			async () =>
				((await api.get("/v1/warehouses")).body.data as { id: number; courier_registered: boolean }[]).find(
					(w) => w.id === warehouse_id && w.courier_registered,
				),
			{ what: "the warehouse registered with every courier", ms: 30_000 },
		);
		const ep = await api.post("/v1/webhooks", { url: `${rx.base}${path}`, events: ["pickup.missed"] });
		assert.equal(ep.status, 201, JSON.stringify(ep.body));
		const express = (await core().call("rates.getCourier", { logistic_id: 1 })) as CourierInfo;
		const first = nextPickupDay(express.pickup, "Delhi", new Date());

		// 1. requested: the next pickup day by default, scheduled at the courier
		const made = await api.post("/v1/pickups", { warehouse_id, logistic_id: 1, expected_package_count: 3 });
		assert.equal(made.status, 201, JSON.stringify(made.body));
		const p = made.body;
		assert.equal(p.status, "scheduled");
		assert.equal(p.pickup_date, first);
		assert.equal(p.source, "api");
		assert.match(p.courier_pickup_id, /^\d+$/);
		assert.deepEqual(await simRow(p.courier_pickup_id), { date: first, status: "open", n: 3 });

		// the same warehouse, courier and day: 409 with the live one
		const dup = await api.post("/v1/pickups", { warehouse_id, logistic_id: 1, expected_package_count: 1 });
		assert.equal(dup.status, 409, JSON.stringify(dup.body));
		assert.equal(dup.body.error, "pickup_exists");
		assert.equal(dup.body.pickup.id, p.id);

		// roles and accounts
		const ro = await readOnly.post("/v1/pickups", {
			warehouse_id,
			logistic_id: 2,
			expected_package_count: 1,
		});
		assert.equal(ro.status, 403);
		assert.equal(ro.body.error, "Read-only role");
		assert.equal((await readOnly.post(`/v1/pickups/${p.id}/cancel`)).status, 403);
		assert.equal((await readOnly.get(`/v1/pickups/${p.id}`)).status, 200);
		assert.equal((await stranger.get(`/v1/pickups/${p.id}`)).status, 404);
		assert.equal((await stranger.post(`/v1/pickups/${p.id}/cancel`)).status, 404);
		const foreign = await stranger.post("/v1/pickups", {
			warehouse_id,
			logistic_id: 1,
			expected_package_count: 1,
		});
		assert.equal(foreign.status, 400, JSON.stringify(foreign.body));
		assert.equal(foreign.body.error, "invalid_pickup_address");

		// refusals: a past day (ours), too many parcels (the courier's words; nothing stored)
		const past = await api.post("/v1/pickups", {
			warehouse_id,
			logistic_id: 2,
			expected_package_count: 1,
			pickup_date: addDays(istDay(), -1),
		});
		assert.equal(past.status, 400, JSON.stringify(past.body));
		assert.equal(past.body.error, "invalid_pickup_date");
		// the refused courier's own next pickup day: Sandbox Surface's cut-off (14:00 IST) is not Express's (15:00)
		const surfaceCourier = (await core().call("rates.getCourier", { logistic_id: 2 })) as CourierInfo;
		assert.equal(past.body.next_pickup_date, nextPickupDay(surfaceCourier.pickup, "Delhi", new Date()));
		const big = await api.post("/v1/pickups", { warehouse_id, logistic_id: 2, expected_package_count: 600 });
		assert.equal(big.status, 422, JSON.stringify(big.body));
		assert.equal(big.body.error, "pickup_failed");
		assert.match(big.body.message, /^expected_package_count exceeds 500 for one pickup/);
		const [{ n: stored }] = await select<{ n: string }>(
			getSequelize(),
			"SELECT count(*) AS n FROM warehouses.pickups WHERE sender_id = $1",
			[sender],
		);
		assert.equal(Number(stored), 1, "the refused request is not stored");

		// 2. rescheduled through the courier: the same courier id, its row moved
		// the courier's pickup day after `first`
		const later = nextPickupDay(express.pickup, "Delhi", new Date(`${addDays(first, 1)}T09:00:00+05:30`));
		const moved = await api.patch(`/v1/pickups/${p.id}`, {
			pickup_date: later,
			slot: "13:00-16:00",
			expected_package_count: 5,
		});
		assert.equal(moved.status, 200, JSON.stringify(moved.body));
		assert.equal(moved.body.pickup_date, later);
		assert.equal(moved.body.slot, "13:00-16:00");
		assert.equal(moved.body.courier_pickup_id, p.courier_pickup_id);
		assert.deepEqual(await simRow(p.courier_pickup_id), { date: later, status: "open", n: 5 });
		// moving onto a day another live request of this warehouse and courier holds: 409 with that one
		const other = await api.post("/v1/pickups", { warehouse_id, logistic_id: 1, expected_package_count: 1 });
		assert.equal(other.status, 201, JSON.stringify(other.body));
		const onto = await api.patch(`/v1/pickups/${other.body.id}`, { pickup_date: later });
		assert.equal(onto.status, 409, JSON.stringify(onto.body));
		assert.equal(onto.body.error, "pickup_exists");
		assert.equal(onto.body.pickup.id, p.id);
		assert.equal((await api.post(`/v1/pickups/${other.body.id}/cancel`)).body.status, "cancelled");
		const noField = await api.patch(`/v1/pickups/${p.id}`, {});
		assert.equal(noField.status, 400);
		assert.deepEqual(noField.body.details, ["body: no updatable field"]);

		// 3. cancelled through the courier; again: unchanged; then it cannot be changed
		const cancelled = await api.post(`/v1/pickups/${p.id}/cancel`);
		assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
		assert.equal(cancelled.body.status, "cancelled");
		assert.equal((await simRow(p.courier_pickup_id)).status, "cancelled");
		assert.equal(
			(await api.post(`/v1/pickups/${p.id}/cancel`)).body.cancelled_at,
			cancelled.body.cancelled_at,
		);
		const frozen = await api.patch(`/v1/pickups/${p.id}`, { expected_package_count: 2 });
		assert.equal(frozen.status, 409);
		assert.equal(frozen.body.error, "pickup_not_changeable");
		assert.equal(frozen.body.status, "cancelled");

		// 4. Delhivery (logistic 5): no call to move or cancel — a new request for a new day, a cancel recorded here
		const dl = await api.post("/v1/pickups", { warehouse_id, logistic_id: 5, expected_package_count: 2 });
		assert.equal(dl.status, 201, JSON.stringify(dl.body));
		assert.equal(dl.body.status, "scheduled");
		// its own next pickup day after the one it got (Delhivery's cut-off is not Express's, so `later` can be that day)
		const delhivery = (await core().call("rates.getCourier", { logistic_id: 5 })) as CourierInfo;
		const dlLater = nextPickupDay(
			delhivery.pickup,
			"Delhi",
			new Date(`${addDays(dl.body.pickup_date, 1)}T09:00:00+05:30`),
		);
		const dlMoved = await api.patch(`/v1/pickups/${dl.body.id}`, { pickup_date: dlLater });
		assert.equal(dlMoved.status, 200, JSON.stringify(dlMoved.body));
		assert.notEqual(dlMoved.body.courier_pickup_id, dl.body.courier_pickup_id);
		assert.match(dlMoved.body.courier_note, /has no call to move a pickup request: a new one/);
		const dlCancelled = await api.post(`/v1/pickups/${dl.body.id}/cancel`);
		assert.equal(dlCancelled.body.status, "cancelled");
		assert.match(dlCancelled.body.courier_note, /has no call to cancel a pickup request/);

		// 5. picked up: a shipment booked from this warehouse with Sandbox Surface, scanned as picked up today
		const surface = await api.post("/v1/pickups", {
			warehouse_id,
			logistic_id: 2,
			expected_package_count: 1,
		});
		assert.equal(surface.status, 201, JSON.stringify(surface.body));
		const order = await api.post("/v1/intake/order", orderBody(warehouse_id));
		assert.equal(order.status, 201, JSON.stringify(order.body));
		const booked = await api.post("/v1/shipping/book/sync", {
			order_id: order.body.order_id,
			logistic_id: 2,
		});
		assert.equal(booked.status, 200, JSON.stringify(booked.body));
		await moveTo(surface.body.id, istDay());
		const scan = await api.post(`/v1/sandbox/orders/${order.body.order_id}/events`, { event: "picked_up" });
		assert.equal(scan.status, 200, JSON.stringify(scan.body));
		const picked = await eventually(
			async () => {
				await core().call("warehouses.sweepPickups", {});
				const g = await api.get(`/v1/pickups/${surface.body.id}`);
				return g.body.status === "picked_up" ? g.body : undefined;
			},
			{ what: "the pickup picked up", ms: 30_000 },
		);
		assert.equal(picked.shipments_picked_up, 1);
		assert.ok(picked.picked_up_at);
		const lateCancel = await api.post(`/v1/pickups/${surface.body.id}/cancel`);
		assert.equal(lateCancel.status, 409);
		assert.equal(lateCancel.body.status, "picked_up");

		// 6. missed: a scheduled pickup whose day ended without a scan → missed, webhook pickup.missed
		// (on `later`: the courier still holds its request for that day, only our clock moves on)
		const lapsed = await api.post("/v1/pickups", {
			warehouse_id,
			logistic_id: 1,
			expected_package_count: 4,
			pickup_date: later,
		});
		assert.equal(lapsed.status, 201, JSON.stringify(lapsed.body));
		await moveTo(lapsed.body.id, addDays(istDay(), -2));
		assert.ok(((await core().call("warehouses.sweepPickups", {})) as { missed: number }).missed >= 1);
		const missed = await api.get(`/v1/pickups/${lapsed.body.id}`);
		assert.equal(missed.body.status, "missed");
		assert.ok(missed.body.missed_at);
		const got = await eventually(() => rx.on(path), {
			what: "pickup.missed",
			ms: 30_000,
			ok: (g) => g.length >= 1,
		});
		const msg = new Webhook(ep.body.secret).verify(got[0].body, {
			"webhook-id": String(got[0].headers["webhook-id"]),
			"webhook-timestamp": String(got[0].headers["webhook-timestamp"]),
			"webhook-signature": String(got[0].headers["webhook-signature"]),
		}) as { type: string; data: Record<string, unknown> };
		assert.equal(msg.type, "pickup.missed");
		assert.equal(msg.data.pickup_id, lapsed.body.id);
		assert.equal(msg.data.warehouse_id, warehouse_id);
		assert.equal(msg.data.expected_package_count, 4);

		// 7. a manifest with schedule_pickup: the pickup of its courier and warehouse, found again by a second one
		const ids: number[] = [];
		for (let i = 0; i < 2; i++) {
			const o = await api.post("/v1/intake/order", orderBody(warehouse_id));
			const b = await api.post("/v1/shipping/book/sync", { order_id: o.body.order_id, logistic_id: 1 });
			assert.equal(b.status, 200, JSON.stringify(b.body));
			ids.push(o.body.order_id);
		}
		const bad = await api.post("/v1/documents/manifest", { order_ids: [ids[0]], schedule_pickup: "yes" });
		assert.equal(bad.status, 400);
		assert.deepEqual(bad.body, { message: "schedule_pickup must be a boolean" });
		const m1 = await api.post("/v1/documents/manifest", { order_ids: [ids[0]], schedule_pickup: true });
		assert.equal(m1.status, 200);
		const pickupId = m1.headers.get("x-pickup-ids");
		assert.match(pickupId ?? "", /^\d+$/, String(m1.headers.get("x-pickup-errors")));
		const viaManifest = await api.get(`/v1/pickups/${pickupId}`);
		assert.equal(viaManifest.body.source, "manifest");
		assert.equal(viaManifest.body.logistic_id, 1);
		assert.equal(viaManifest.body.warehouse_id, warehouse_id);
		assert.equal(viaManifest.body.pickup_date, nextPickupDay(express.pickup, "Delhi", new Date()));
		assert.equal(viaManifest.body.expected_package_count, 1);
		const m2 = await api.post("/v1/documents/manifest", { order_ids: [ids[1]], schedule_pickup: true });
		assert.equal(m2.headers.get("x-pickup-ids"), pickupId);
		const plain = (await api.get("/v1/pickups?status=scheduled&logistic_id=1")).body.data as { id: number }[];
		assert.deepEqual(
			plain.map((x) => x.id),
			[Number(pickupId)],
		);
		const list = await api.get("/v1/pickups?limit=2");
		assert.equal(list.body.data.length, 2);
		const next = await api.get(
			`/v1/pickups?limit=2&cursor=${encodeURIComponent(list.body.pagination.nextCursor)}`,
		);
		assert.ok(next.body.data.every((x: { id: number }) => x.id < list.body.data[1].id));
		// the list's limits: at most 100 a page, a status of the closed list
		const tooMany = await api.get("/v1/pickups?limit=101");
		assert.equal(tooMany.status, 400, JSON.stringify(tooMany.body));
		assert.deepEqual(tooMany.body.details, ["limit: must be at most 100"]);
		const badStatus = await api.get("/v1/pickups?status=lost");
		assert.equal(badStatus.status, 400);
		assert.match(
			badStatus.body.details[0],
			/^status: must be one of requested, scheduled, picked_up, missed, cancelled/,
		);
	});
}

describe("integration: pickup requests", function () {
	this.timeout(180_000);
	useEnv({ EVENT_OUTBOX_POLL_MS: "200", WEBHOOK_BACKOFF_MS: "200", PICKUP_SWEEP_MS: "600000" });
	const rx = new Receiver();
	before(() => rx.start());
	after(() => rx.stop());

	describe("in one process", () => {
		const cluster = useCluster(
			"pickups1",
			[ALL],
			ALL.filter((s) => s !== "gateway"),
		);
		scenario(cluster, () => cluster.brokers[0], rx, "/one");
	});

	describe("split over NATS", () => {
		const cluster = useCluster(
			"pickups2",
			[
				["gateway", "documents"],
				["pincode", "rates", "warehouses", "intake", "simulator"],
				["booking"],
				["webhooks"],
			],
			ALL.filter((s) => s !== "gateway"),
		);
		scenario(cluster, () => cluster.brokers[1], rx, "/split");
	});
});
