/**
 * booking service, reconciliation: a courier that timed out is asked by reference before a
 * retry, and an earlier attempt left ambiguous is settled (its late AWB
 * cancelled) before the order is booked again, so one order never holds two live AWBs.
 * Real simulator over HTTP, PostgreSQL and Redis; fakes of intake,
 * warehouses and rates in ./setup.ts.
 */
import assert from "node:assert/strict";
import { adapterFor, pickupLocationOf } from "../../../lib/couriers";
import { newSender } from "../../helpers/broker";
import {
	ACCEPTED,
	addOrder,
	attemptsOf,
	book,
	COURIERS,
	insertAttempt,
	settled,
	simCalls,
	simPackages,
	useBookingBroker,
	warehouses,
} from "./setup";

describe("booking: reconciliation of ambiguous outcomes", function () {
	this.timeout(40_000);
	const broker = useBookingBroker();

	it("SIMULATE_TIMEOUT → look-up by reference reconciles → booked, exactly one AWB at the simulator", async () => {
		const s = newSender();
		const o = addOrder(s, {}, { name: "Meera SIMULATE_TIMEOUT" });
		await book(broker(), s, { order_id: o.order_id, logistic_id: 1 });
		const done = await settled(o.order_id);
		assert.equal(done.state, "booked");
		const [row] = await attemptsOf(o.order_id);
		const pk = await simPackages(o.customer_order_no);
		assert.equal(pk.length, 1);
		assert.equal(pk[0].waybill, done.awb_number);
		assert.equal(
			await simCalls(String(row.attempt_id), "create", ACCEPTED),
			1,
			"reconciled without a second create",
		);
		assert.ok((await simCalls(String(row.attempt_id), "lookup")) >= 1);
		assert.equal(row.tries, 1);
	});

	it("an earlier ambiguous attempt at a courier without an integration is settled, not retried", async () => {
		const s = newSender();
		const o = addOrder(s);
		await insertAttempt(o, 7, "failed", "ambiguous");
		await book(broker(), s, { order_id: o.order_id, logistic_id: 1 });
		const done = await settled(o.order_id);
		assert.equal(done.state, "booked");
		const [old, cur] = await attemptsOf(o.order_id);
		assert.equal(old.ambiguous, false);
		assert.equal(old.last_error, "courier has no integration");
		assert.equal(cur.tries, 1);
	});

	it("an earlier attempt left ambiguous is looked up and its late AWB cancelled before re-booking", async () => {
		const s = newSender();
		const o = addOrder(s);
		const wh = warehouses.get(o.pickup_address_id!)!;
		const ghost = await insertAttempt(o, 1, "failed", "ambiguous");
		// The courier booked the earlier attempt after all (its answer was lost).
		const express = adapterFor(COURIERS[0]);
		await express.registerWarehouse(pickupLocationOf(wh));
		const late = await express.book({
			reference: String(ghost),
			order_no: o.customer_order_no,
			direction: "forward",
			payment: "prepaid",
			cod_amount: 0,
			declared_value: 799,
			weight_kg: 0.5,
			product_description: "Cotton kurta",
			pickup_location_code: wh.warehouse_code,
			pickup: wh.pickup,
			consignee: o.consignee,
			return_address: wh.return_to,
		});
		await book(broker(), s, { order_id: o.order_id, logistic_id: 2 });
		const done = await settled(o.order_id);
		assert.equal(done.state, "booked");
		assert.notEqual(done.awb_number, late.awb_number);
		const pk = await simPackages(o.customer_order_no);
		assert.equal(pk.length, 2);
		const live = pk.filter((p) => p.cancelled_at === null);
		assert.equal(live.length, 1, "one live AWB");
		assert.equal(live[0].waybill, done.awb_number);
		const [old] = await attemptsOf(o.order_id);
		assert.equal(old.ambiguous, false);
		assert.match(old.last_error, new RegExp(`late AWB ${late.awb_number} cancelled`));
	});
});
