/**
 * The courier's later decision on a sent NDR act (lib/ndr/act-status.ts):
 * an act on a sandbox Delhivery shipment (the real Delhivery adapter against
 * the simulator) is polled through BullMQ queue `ndr-act-status` and its
 * action row becomes `accepted`; with a consignee named
 * `… SIMULATE_NDR_REFUSE …` the simulator refuses it after the fact: the row
 * becomes `refused` with the courier's remarks and the case is back in tab
 * `action_required` (the list shows the last action `refused`).
 */
import assert from "node:assert/strict";
import { adapterFor } from "../../../lib/couriers";
import { pollDelay } from "../../../lib/ndr/act-status";
import { getSequelize, select } from "../../../lib/platform/db";
import { addScan } from "../../../lib/simulator/api";
import { bookRequestFor, address as fixtureAddress, freshId } from "../../helpers/fixtures";
import { eventually } from "../../helpers/poll";
import { addOrder, callAs, caseWhen, publish, SANDBOX_DELHIVERY, statusEvent, useNdrBroker } from "./setup";

const run = Math.random().toString(36).slice(2, 8);
const WH = `WH-NDRS-${run}`;
const pickup = fixtureAddress({ name: "Asha Traders" });

describe("ndr: the courier's later decision on a sent act (Delhivery upload status)", function () {
	this.timeout(40_000);
	useNdrBroker();

	before(async () => {
		await adapterFor(SANDBOX_DELHIVERY).registerWarehouse({
			warehouse_code: WH,
			warehouse_name: "Main Warehouse",
			address: pickup,
			return_address: pickup,
		});
	});

	/** An order whose Delhivery shipment failed a delivery (consignee `name`), with its open NDR case. */
	async function openCase(sender: number, name: string) {
		const o = addOrder(sender);
		const awb = (
			await adapterFor(SANDBOX_DELHIVERY).book(bookRequestFor(`ndrs-${run}-${o.order_id}`, WH, pickup, name))
		).awb_number;
		await addScan(getSequelize(), awb, "picked_up");
		await addScan(getSequelize(), awb, "undelivered", { reason: "Consignee unavailable" });
		await publish(statusEvent(o, { awb_number: awb, logistic_id: SANDBOX_DELHIVERY.logistic_id }));
		await caseWhen(o.order_id, (c) => c.status === "action_required", "case opened");
		return { o, awb };
	}

	const actionsOf = (order_id: number) =>
		select<any>(getSequelize(), "SELECT * FROM ndr.actions WHERE order_id = $1 ORDER BY id", [order_id]);

	async function act(sender: number, order_id: number) {
		const { res } = await callAs(
			"ndr.act",
			{ order_id, logistic_id: SANDBOX_DELHIVERY.logistic_id, ndr_act: "RE-ATTEMPT" },
			sender,
		);
		assert.equal(res.status, "requested");
		return res.request_id as string;
	}

	it("pollDelay doubles from NDR_ACT_POLL_MS, at most an hour apart", () => {
		assert.equal(pollDelay(60_000, 0), 60_000);
		assert.equal(pollDelay(60_000, 3), 480_000);
		assert.equal(pollDelay(60_000, 10), 3_600_000);
	});

	it("an accepted act: the action row becomes accepted; the case stays action_requested", async () => {
		const s = freshId();
		const { o } = await openCase(s, "Ravi Kumar");
		const request_id = await act(s, o.order_id);
		const [row] = await eventually(() => actionsOf(o.order_id), {
			what: "action accepted",
			ok: (r) => r.length === 1 && r[0].status === "accepted",
		});
		assert.equal(row.request_id, request_id);
		assert.equal(row.courier_remarks, "Request accepted");
		assert.ok(row.checked_at);
		const c = await caseWhen(o.order_id, () => true, "case");
		assert.equal(c.status, "action_requested");
	});

	it("a refused act: the action row becomes refused with the remarks; the case needs action again", async () => {
		const s = freshId();
		const { o, awb } = await openCase(s, `Meera SIMULATE_NDR_REFUSE ${run}`);
		await act(s, o.order_id);
		const [row] = await eventually(() => actionsOf(o.order_id), {
			what: "action refused",
			ok: (r) => r.length === 1 && r[0].status === "refused",
		});
		assert.equal(row.courier_remarks, "Consignee details not verified");
		const c = await caseWhen(
			o.order_id,
			(x) => x.status === "action_required",
			"case back to action_required",
		);
		assert.ok(c.deadline_at, "a new deadline");
		const { res } = await callAs("ndr.list", { tab: "action_required", awb_number: awb }, s);
		assert.equal(res.data.length, 1);
		const last = res.data[0].last_action;
		assert.ok(last, "the case's last action");
		assert.equal(last.status, "refused");
		assert.equal(last.courier_remarks, "Consignee details not verified");
		assert.ok(last.checked_at);
		assert.ok(res.data[0].action_deadline_at);
		// the merchant can act again
		await act(s, o.order_id);
	});
});
