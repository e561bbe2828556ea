/**
 * Integration: the NDR scenario over HTTP with `ndr` in its own broker over
 * real NATS (issue 9; spec §2.10, §4.2, §4.6, §7): the services spread over
 * four brokers (gateway + documents; catalog and intake; booking + the
 * sandbox simulator; ndr alone), status changes reaching ndr on the durable
 * `shipment.status_changed` channel (JetStream, consumer group `ndr`).
 *
 * book → picked_up → undelivered → case in `action_required` (with
 * order_value and the buyer notification) → comment → RE-ATTEMPT sent (the
 * simulator received it) → `action_requested` → delivered → the case closed,
 * counted in `delivered`; the same undelivered event delivered twice opens
 * one case; the automatic re-attempt after the deadline and RTO after the
 * third attempt (the policy run as of a given time with `ndr.tick`, no
 * sleeps); read-only roles refused; counts equal list totals per tab.
 */
import { strict as assert } from "node:assert";
import { NDR_TABS, SHIPMENT_STATUS_CHANNEL, type ShipmentStatusChanged } from "../../lib/contracts";
import { publishToChannel } from "../../lib/platform/channels";
import { getSequelize, select } from "../../lib/platform/db";
import { newSender } from "../helpers/broker";
import { callAs } from "../helpers/call";
import { useCluster } from "../helpers/cluster";
import { useEnv } from "../helpers/env";
import { freshRef, orderBody, warehouseBody } from "../helpers/fixtures";
import { client } from "../helpers/flow";
import { eventually } from "../helpers/poll";

describe("integration: NDR over HTTP, the ndr service in its own broker over NATS", function () {
	this.timeout(120_000);
	const ENV: Record<string, string> = {
		SANDBOX_COURIER_DELAY_MS: "20",
		BOOKING_RELAY_MS: "200",
		BOOKING_RELAY_BACKOFF_MS: "50",
		BOOKING_TRACK_MS: "3600000",
		NDR_POLICY_MS: "3600000",
		NDR_ACTION_BACKOFF_MS: "10",
	};
	useEnv(ENV);

	const cluster = useCluster(
		"it-ndr",
		[
			["gateway", "documents"],
			["pincode", "rates", "warehouses", "intake"],
			["booking", "billing", "simulator"],
			["ndr", "notifications"],
		],
		[
			"pincode",
			"rates",
			"warehouses",
			"intake",
			"booking",
			"billing",
			"simulator",
			"documents",
			"ndr",
			"notifications",
		],
	);

	/** A merchant (token of `role`) with a warehouse. */
	async function merchant(role: "merchant" | "merchant_ops" = "merchant") {
		const sender = newSender();
		const api = client(cluster.base, await cluster.idp.tokenFor(sender, role));
		const wh = await api.post("/v1/warehouses", warehouseBody());
		assert.equal(wh.status, 201, JSON.stringify(wh.body));
		return { sender, api, wh: wh.body.data.id as number };
	}

	/** An order of the merchant booked at sandbox courier 1 and picked up. */
	async function pickedUp(m: Awaited<ReturnType<typeof merchant>>) {
		const created = await m.api.post("/v1/intake/order", orderBody(m.wh, freshRef("NDR")));
		assert.equal(created.status, 201, JSON.stringify(created.body));
		const order_id = created.body.order_id as number;
		const b = await m.api.post("/v1/shipping/book/sync", { order_id, logistic_id: 1 });
		assert.equal(b.status, 200, JSON.stringify(b.body));
		await event(m, order_id, "picked_up");
		return { order_id, awb: b.body.awb as string, forward_id: b.body.forward_id as string };
	}

	async function event(m: { api: ReturnType<typeof client> }, order_id: number, e: string, reason?: string) {
		const r = await m.api.post(`/v1/sandbox/orders/${order_id}/events`, {
			event: e,
			...(reason ? { reason } : {}),
		});
		assert.equal(r.status, 200, JSON.stringify(r.body));
		return r.body;
	}

	/** The merchant's row of `order_id` in `tab`, once it is there. */
	async function rowIn(
		m: { api: ReturnType<typeof client> },
		tab: string,
		order_id: number,
		ok = (_r: any) => true,
	) {
		return eventually(
			async () => {
				const r = await m.api.get(`/v1/ndr?tab=${tab}&limit=1000`);
				assert.equal(r.status, 200, JSON.stringify(r.body));
				return (r.body.data as any[]).find((x) => x.order_id === order_id && ok(x));
			},
			{ what: `order ${order_id} in tab ${tab}`, ms: 20_000 },
		);
	}

	/** The simulator's recorded NDR acts of an AWB. */
	const simActs = (awb: string) =>
		select<any>(getSequelize(), "SELECT act FROM simulator.ndr_actions WHERE waybill = $1 ORDER BY 1", [awb]);

	it("book → undelivered → case → comment → RE-ATTEMPT at the courier → delivered: closed and counted in delivered", async () => {
		const m = await merchant();
		const { order_id, awb, forward_id } = await pickedUp(m);
		await event(m, order_id, "undelivered", "Consignee not available");
		const row = await rowIn(m, "action_required", order_id, (r) => r.notification?.status === "simulated");
		assert.equal(row.awb_number, awb);
		assert.equal(row.forward_id, forward_id);
		assert.equal(row.reason, "consignee_unavailable");
		assert.equal(row.courier_reason, "Consignee not available");
		assert.equal(typeof row.order_value, "number");
		assert.ok(row.order_value > 0);
		assert.equal(row.attempts, 1);
		assert.ok(row.notification, "the buyer notification is on the row");
		assert.equal(row.notification.channel, "sms");
		// the notifications service's message; the sandbox provider sends nothing: `simulated`, never a delivery
		assert.equal(row.notification.template, "failed_delivery");
		assert.equal(row.notification.status, "simulated");
		assert.equal(row.notification.delivered_at, null);

		const c = await m.api.post(`/v1/ndr/${order_id}/comment`, {
			comment: " Buyer asked to come after 6 pm ",
		});
		assert.equal(c.status, 201, JSON.stringify(c.body));
		assert.equal(c.body.comment, "Buyer asked to come after 6 pm");
		assert.equal(c.body.order_id, order_id);

		const act = await m.api.post("/v1/shipping/ndr", { order_id, logistic_id: 1 });
		assert.equal(act.status, 200, JSON.stringify(act.body));
		assert.deepEqual(
			{ ...act.body, request_id: undefined },
			{ status: "requested", awb, forward_id, order_id, ndr_act: "RE-ATTEMPT", request_id: undefined },
		);
		assert.deepEqual(
			(await simActs(awb)).map((a) => a.act),
			["RE-ATTEMPT"],
			"the simulator received the act",
		);
		const requested = await rowIn(m, "action_requested", order_id);
		assert.equal(requested.last_action.by, "merchant");
		assert.equal(requested.comments, 1);

		await event(m, order_id, "out_for_delivery");
		await event(m, order_id, "delivered");
		const done = await rowIn(m, "delivered", order_id);
		assert.equal(done.closed_status, "delivered");
		const counts = await m.api.get("/v1/ndr/counts");
		assert.equal(counts.status, 200);
		assert.deepEqual(counts.body, { action_required: 0, action_requested: 0, delivered: 1, rto: 0 });
		// once closed, no action
		const late = await m.api.post("/v1/shipping/ndr", { order_id, logistic_id: 1 });
		assert.equal(late.status, 409);
		assert.equal(late.body.error, "no_open_ndr");
	});

	it("the same undelivered event delivered twice opens one case", async () => {
		const m = await merchant();
		const { order_id, awb } = await pickedUp(m);
		const e: ShipmentStatusChanged = {
			event_id: `${Date.now()}-90`,
			order_id,
			sender_id: m.sender,
			awb_number: awb,
			logistic_id: 1,
			status: "undelivered",
			status_name: "Undelivered",
			status_at: new Date().toISOString(),
			seq: 90,
			courier_status: "Undelivered",
			remarks: "Address incomplete",
		};
		// published from the gateway's broker: another node than ndr's
		await publishToChannel(cluster.brokers[0], SHIPMENT_STATUS_CHANNEL, e);
		await publishToChannel(cluster.brokers[0], SHIPMENT_STATUS_CHANNEL, e);
		await rowIn(m, "action_required", order_id);
		// a later event proves both were consumed
		await publishToChannel(cluster.brokers[0], SHIPMENT_STATUS_CHANNEL, {
			...e,
			event_id: `${e.event_id}1`,
			status: "delivered",
			status_name: "Delivered",
			seq: 91,
		});
		const done = await rowIn(m, "delivered", order_id);
		assert.equal(done.attempts, 1);
		const cases = await select(getSequelize(), "SELECT id FROM ndr.cases WHERE order_id = $1", [order_id]);
		assert.equal(cases.length, 1);
	});

	it("no action by the deadline: re-attempts requested by the policy; after the 3rd failed attempt RTO", async () => {
		const m = await merchant();
		const { order_id, awb } = await pickedUp(m);
		const tick = (at: number) =>
			callAs(cluster.brokers[0], "ndr.tick", { now: new Date(at).toISOString() }) as any;
		for (const [n, words] of [
			[1, "Door locked"],
			[2, "Consignee not reachable"],
		] as const) {
			if (n > 1) await event(m, order_id, "out_for_delivery");
			await event(m, order_id, "undelivered", words);
			const row = await rowIn(m, "action_required", order_id, (r) => r.attempts === n);
			const deadline = Date.parse(row.action_deadline_at);
			// not before the deadline (the pass may act on other tests' older cases: only this one is asserted)
			await tick(deadline - 1000);
			assert.equal((await simActs(awb)).length, n - 1, "not before the deadline");
			await rowIn(m, "action_required", order_id, (r) => r.attempts === n);
			assert.ok((await tick(deadline + 1000)).reattempted >= 1);
			const req = await rowIn(m, "action_requested", order_id);
			assert.equal(req.last_action.by, "system");
			assert.equal(req.last_action.act, "RE-ATTEMPT");
			assert.equal((await simActs(awb)).length, n);
		}
		await event(m, order_id, "out_for_delivery");
		await event(m, order_id, "undelivered", "Refused by consignee");
		await rowIn(m, "action_required", order_id, (r) => r.attempts === 3);
		const blocked = await m.api.post("/v1/shipping/ndr", { order_id, logistic_id: 1 });
		assert.equal(blocked.status, 409);
		assert.equal(blocked.body.error, "ndr_attempts_exhausted");
		assert.ok((await tick(Date.now())).rto >= 1);
		const rto = await rowIn(m, "rto", order_id);
		assert.equal(rto.closed_status, "rto_requested");
		assert.equal(rto.last_action.act, "RTO");
		// the sandbox courier emitted rto_initiated; booking folds it and the case takes it
		await callAs(cluster.brokers[0], "booking.pollTracking", {});
		await rowIn(m, "rto", order_id, (r) => r.closed_status === "rto_initiated");
		const counts = (await m.api.get("/v1/ndr/counts")).body;
		assert.deepEqual(counts, { action_required: 0, action_requested: 0, delivered: 0, rto: 1 });
	});

	it("read-only roles are refused (comment and action); counts equal the list totals per tab", async () => {
		const m = await merchant("merchant_ops");
		const { order_id } = await pickedUp(m);
		await event(m, order_id, "undelivered", "Premises closed");
		await rowIn(m, "action_required", order_id);
		for (const role of ["merchant_finance", "merchant_support", "merchant_staff"] as const) {
			const ro = client(cluster.base, await cluster.idp.tokenFor(m.sender, role));
			const c = await ro.post(`/v1/ndr/${order_id}/comment`, { comment: "hi" });
			assert.equal(c.status, 403, role);
			const a = await ro.post("/v1/shipping/ndr", { order_id, logistic_id: 1 });
			assert.equal(a.status, 403, role);
			assert.equal((await ro.get("/v1/ndr?tab=action_required")).status, 200, "reading is allowed");
		}
		const bad = await m.api.get("/v1/ndr?tab=nope");
		assert.equal(bad.status, 400);
		assert.equal(bad.body.error, "bad_tab");
		const badDate = await m.api.get("/v1/ndr?tab=rto&date_from=2026-02-30");
		assert.equal(badDate.body.error, "bad_date");
		const counts = (await m.api.get("/v1/ndr/counts")).body;
		assert.deepEqual(Object.keys(counts).sort(), [...NDR_TABS].sort());
		for (const tab of NDR_TABS) {
			const list = await m.api.get(`/v1/ndr?tab=${tab}&limit=1000`);
			assert.equal(list.body.data.length, counts[tab], tab);
		}
		assert.equal(counts.action_required, 1);
	});
});
