/**
 * ndr service: cases from the durable `shipment.status_changed` channel and
 * the deadline policy (issue 9; lib/ndr/cases.ts, lib/ndr/policy.ts): a real
 * booked sandbox shipment's undelivered scan opens one case (reason mapped,
 * courier's words kept, order value, buyer notification); redeliveries count
 * once; delivered / RTO close it; after the deadline (controllable clock:
 * `ndr.tick {now}`) a re-attempt is requested at the sandbox courier on the
 * merchant's behalf; after the 3rd failed attempt the shipment goes RTO.
 */
import assert from "node:assert/strict";
import { NDR_MIGRATIONS } from "../../../lib/ndr/migrations";
import { ndrReasonOf } from "../../../lib/ndr/reasons";
import { getSequelize, select } from "../../../lib/platform/db";
import { newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { freshId } from "../../helpers/fixtures";
import { eventually } from "../../helpers/poll";
import {
	addOrder,
	bookedOrder,
	broker,
	casesOf,
	caseWhen,
	publish,
	scan,
	statusEvent,
	useNdrBroker,
} from "./setup";

const HOUR = 3_600_000;

/** The simulator's recorded NDR actions of an AWB. */
async function simNdrActions(awb: string): Promise<any[]> {
	return select(getSequelize(), "SELECT * FROM simulator.ndr_actions WHERE waybill = $1 ORDER BY 1", [awb]);
}

/** The case's actions, oldest first. */
async function actionsOf(case_id: number): Promise<any[]> {
	return select(getSequelize(), "SELECT * FROM ndr.actions WHERE case_id = $1 ORDER BY id", [case_id]);
}

async function tick(at: number) {
	return (await callAs(broker(), "ndr.tick", { now: new Date(at).toISOString() })) as any;
}

describe("ndr service: cases and the deadline policy", function () {
	this.timeout(60_000);
	useNdrBroker();

	describe("reasons", () => {
		it("maps the courier's words to the closed list", () => {
			assert.equal(ndrReasonOf("Consignee not available"), "consignee_unavailable");
			assert.equal(ndrReasonOf("Customer refused to accept"), "refused");
			assert.equal(ndrReasonOf("Address incomplete"), "address_issue");
			assert.equal(ndrReasonOf("COD amount not ready"), "cod_not_ready");
			assert.equal(ndrReasonOf("Customer asked for future delivery"), "future_delivery");
			assert.equal(ndrReasonOf("Office closed"), "premises_closed");
			assert.equal(ndrReasonOf("ODA location"), "out_of_delivery_area");
			assert.equal(ndrReasonOf("Bad weather"), "other");
			assert.equal(ndrReasonOf(""), "other");
		});
	});

	it("an undelivered scan opens one case in action_required, with reason, words and order value; no buyer record of its own", async () => {
		const s = newSender();
		const { order, awb, forward_id } = await bookedOrder(s);
		await scan(s, order.order_id, "picked_up");
		const st = await scan(s, order.order_id, "undelivered", "Consignee not available");
		assert.equal(st.status, "undelivered");
		const c = await caseWhen(order.order_id, (x) => x.status === "action_required", "the case");
		assert.equal(c.awb_number, awb);
		assert.equal(`bk_${c.attempt_id}`, forward_id);
		assert.equal(c.reason, "consignee_unavailable");
		assert.equal(c.courier_words, "Consignee not available");
		assert.equal(c.attempts, 1);
		assert.equal(Number(c.order_value_paise), 149_900);
		assert.equal(c.customer_order_no, order.customer_order_no);
		assert.equal(c.courier_name, "Sandbox Express");
		assert.equal(new Date(c.deadline_at).getTime() - new Date(c.first_pending_at).getTime(), 24 * HOUR);
		// the buyer's message is the notifications service's (issue 29): ndr writes no record of its own
		const n = await select<any>(getSequelize(), "SELECT * FROM ndr.notifications WHERE case_id = $1", [c.id]);
		assert.equal(n.length, 0);
	});

	it("migration 006 rewrites the sandbox's old `delivered` records to `simulated` and leaves a provider's as they are", async () => {
		const s = newSender();
		const { order } = await bookedOrder(s);
		await scan(s, order.order_id, "picked_up");
		await scan(s, order.order_id, "undelivered", "Consignee not available");
		const c = await caseWhen(order.order_id, (x) => x.status === "action_required", "the case");
		const db = getSequelize();
		const at = "2026-01-02T03:04:05.000Z";
		// two records as the old sandbox notifier and a real provider would have left them
		const insert = (template: string, provider: string) =>
			select<{ id: string }>(
				db,
				`INSERT INTO ndr.notifications (case_id, channel, template, recipient, status, provider, sent_at, delivered_at)
				 VALUES ($1, 'sms', $2, '9123456780', 'delivered', $3, $4, $4) RETURNING id`,
				[c.id, template, provider, at],
			);
		const [old] = await insert("legacy_sandbox", "sandbox");
		const [real] = await insert("legacy_provider", "msg91");
		const migration = NDR_MIGRATIONS.find((m) => m.name === "006-notification-simulated");
		assert.ok(migration);
		// idempotent: runs again over the migrated schema
		await db.transaction((transaction) => migration.up({ sequelize: db, schema: "ndr", transaction }));
		const rows = await select<any>(db, "SELECT * FROM ndr.notifications WHERE id IN ($1, $2) ORDER BY id", [
			old.id,
			real.id,
		]);
		assert.deepEqual(
			rows.map((r) => [r.provider, r.status, r.sent_at, r.delivered_at?.toISOString() ?? null]),
			[
				["sandbox", "simulated", null, null],
				["msg91", "delivered", rows[1].sent_at, at],
			],
		);
		// the CHECK constraint takes `simulated` and still refuses a word outside the list
		await assert.rejects(
			select(db, "UPDATE ndr.notifications SET status = 'read' WHERE id = $1", [real.id]),
			/notifications_status_check/,
		);
	});

	it("the same undelivered event delivered twice (and the same scan as another event) opens one case with one attempt", async () => {
		const s = newSender();
		const o = addOrder(s);
		const e = statusEvent(o);
		await publish(e);
		await publish(e);
		await publish({ ...e, event_id: `${e.event_id}9` }); // same AWB and scan time
		await caseWhen(o.order_id, (c) => c.attempts === 1, "the case");
		// a later, different event proves the earlier ones were all consumed
		await publish(
			statusEvent(o, { event_id: `${e.event_id}8`, status: "delivered", status_name: "Delivered", seq: 6 }),
		);
		await caseWhen(o.order_id, (c) => c.status === "delivered", "closed");
		const all = await casesOf(o.order_id);
		assert.equal(all.length, 1);
		assert.equal(all[0].attempts, 1);
		const n = await select(getSequelize(), "SELECT * FROM ndr.attempts WHERE case_id = $1", [all[0].id]);
		assert.equal(n.length, 1);
	});

	it("a delivered event consumed before the earlier undelivered one: the case opens already closed (delivered after NDR), no notification", async () => {
		const s = newSender();
		const o = addOrder(s);
		const e = statusEvent(o, { seq: 5 });
		const deliveredAt = new Date(Date.parse(e.status_at) + 60_000).toISOString();
		await publish(
			statusEvent(o, {
				event_id: `${e.event_id}7`,
				status: "delivered",
				status_name: "Delivered",
				seq: 6,
				status_at: deliveredAt,
			}),
		);
		await eventually(
			async () =>
				(
					await select(getSequelize(), "SELECT 1 FROM ndr.shipment_closings WHERE awb_number = $1", [
						e.awb_number,
					])
				).length === 1,
			{ what: "the closing remembered" },
		);
		await publish(e);
		const c = await caseWhen(o.order_id, () => true, "the late case");
		assert.equal(c.status, "delivered");
		assert.equal(c.closed_status, "delivered");
		assert.equal(new Date(c.closed_at).toISOString(), deliveredAt);
		assert.equal(c.deadline_at, null, "nothing for the merchant or the policy to do");
		const n = await select(getSequelize(), "SELECT * FROM ndr.notifications WHERE case_id = $1", [c.id]);
		assert.equal(n.length, 0, "no buyer notification for a parcel already delivered");
		// an undelivered event NEWER than the closing (a real new failure) still opens a live case
		const o2 = addOrder(s);
		await publish(
			statusEvent(o2, { event_id: `${freshId()}-3`, status: "delivered", status_name: "Delivered", seq: 3 }),
		);
		await eventually(
			async () =>
				(
					await select(getSequelize(), "SELECT 1 FROM ndr.shipment_closings WHERE awb_number = $1", [
						`SYN${o2.order_id}`,
					])
				).length === 1,
			{ what: "o2's closing remembered" },
		);
		await publish(statusEvent(o2, { seq: 5 }));
		const c2 = await caseWhen(o2.order_id, () => true, "o2's case");
		assert.equal(c2.status, "action_required");
	});

	it("RTO statuses close the case in tab rto; lost closes it in no tab", async () => {
		const s = newSender();
		const a = addOrder(s);
		await publish(statusEvent(a));
		await caseWhen(a.order_id, () => true, "a's case");
		await publish(
			statusEvent(a, { event_id: "1-rto", status: "rto_initiated", status_name: "RTO initiated", seq: 7 }),
		);
		const c = await caseWhen(a.order_id, (x) => x.status === "rto", "rto");
		assert.equal(c.closed_status, "rto_initiated");
		const b = addOrder(s);
		await publish(statusEvent(b));
		await caseWhen(b.order_id, () => true, "b's case");
		await publish(statusEvent(b, { event_id: "2-lost", status: "lost", status_name: "Lost", seq: 7 }));
		await caseWhen(b.order_id, (x) => x.status === "closed", "closed");
	});

	it("the deadline: a re-attempt is requested at the courier by system; after the 3rd failed attempt the shipment goes RTO", async () => {
		const s = newSender();
		const { order, awb } = await bookedOrder(s);
		const id = order.order_id;
		await scan(s, id, "picked_up");
		await scan(s, id, "undelivered", "Door locked");
		const c1 = await caseWhen(id, (x) => x.status === "action_required", "the case");
		const deadline = new Date(c1.deadline_at).getTime();

		// before the deadline: nothing for this case (the pass may act on other tests' older cases of the
		// run's database: only this case's rows and courier calls are asserted)
		await tick(deadline - 1000);
		assert.equal((await casesOf(id))[0].status, "action_required");
		assert.equal((await simNdrActions(awb)).length, 0);

		// after it: RE-ATTEMPT sent to the sandbox courier on the merchant's behalf
		const r1 = await tick(deadline + 1000);
		assert.ok(r1.reattempted >= 1);
		const after1 = (await casesOf(id))[0];
		assert.equal(after1.status, "action_requested");
		assert.equal(after1.deadline_at, null);
		const acts = await actionsOf(c1.id);
		assert.equal(acts.length, 1);
		assert.equal(acts[0].act, "RE-ATTEMPT");
		assert.equal(acts[0].by, "system");
		assert.equal(acts[0].status, "sent");
		assert.match(acts[0].request_id, /^UPL/);
		const sim = await simNdrActions(awb);
		assert.equal(sim.length, 1);
		assert.equal(sim[0].act, "RE-ATTEMPT");
		// a second pass does nothing more for this case
		await tick(deadline + 2000);
		assert.equal((await simNdrActions(awb)).length, 1);
		assert.equal((await actionsOf(c1.id)).length, 1);
		assert.equal((await casesOf(id))[0].status, "action_requested");

		// 2nd failed attempt: back to action_required with a new deadline; the policy re-attempts again
		await scan(s, id, "out_for_delivery");
		await scan(s, id, "undelivered", "Consignee not reachable");
		const c2 = await caseWhen(id, (x) => x.attempts === 2 && x.status === "action_required", "2nd attempt");
		assert.equal((await casesOf(id)).length, 1, "one case per shipment");
		assert.equal(c2.reason, "consignee_unavailable");
		const r2 = await tick(new Date(c2.deadline_at).getTime() + 1000);
		assert.ok(r2.reattempted >= 1);
		assert.equal((await simNdrActions(awb)).length, 2);

		// 3rd failed attempt: due at once, RTO (the sandbox courier emits rto_initiated)
		await scan(s, id, "out_for_delivery");
		await scan(s, id, "undelivered", "Refused by consignee");
		await caseWhen(id, (x) => x.attempts === 3 && x.status === "action_required", "3rd attempt");
		const r3 = await tick(Date.now());
		assert.ok(r3.rto >= 1);
		const rto = (await casesOf(id))[0];
		assert.equal(rto.status, "rto");
		assert.equal(rto.closed_status, "rto_requested");
		const last = (await actionsOf(c1.id)).at(-1);
		assert.equal(last.act, "RTO");
		assert.equal(last.by, "system");
		assert.equal((await simNdrActions(awb)).length, 2, "no third re-attempt");
		// booking folds the courier's rto_initiated scan; the case takes it
		await callAs(broker(), "booking.pollTracking", {});
		await caseWhen(id, (x) => x.closed_status === "rto_initiated", "the RTO scan on the case");
	});
});
