/**
 * booking service, courier choice: a forced `logistic_id` or AUTO (the top-ranked courier that
 * prices the lane), the 202 answer and the booking that follows.
 * Real simulator over HTTP, PostgreSQL and Redis; fakes of intake,
 * warehouses and rates in ./setup.ts.
 */
import assert from "node:assert/strict";
import { newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { freshRef } from "../../helpers/fixtures";
import { addOrder, attemptsOf, book, settled, simPackages, updates, useBookingBroker } from "./setup";

describe("booking: POST /v1/shipping/book courier choice (forced and AUTO)", function () {
	this.timeout(40_000);
	const broker = useBookingBroker();

	it("forced: answers 202 {status, idem_key} without an AWB, then books within seconds", async () => {
		const s = newSender();
		const o = addOrder(s);
		const { res, status } = await book(broker(), s, { order_id: o.order_id, logistic_id: 1 });
		assert.equal(status, 202);
		assert.deepEqual(Object.keys(res).sort(), ["idem_key", "status"]);
		assert.equal(res.status, "queued");
		assert.match(res.idem_key, /^bk_\d+$/);
		assert.ok(!JSON.stringify(res).match(/\d{12,}/), "no AWB in the answer");
		// durable before the answer
		const [row] = await attemptsOf(o.order_id);
		assert.equal(row.idem_key, res.idem_key);
		assert.equal(row.mode, "forced");
		assert.equal(Number(row.logistic_id), 1);
		assert.deepEqual(row.charges, {
			freight_charge: 7100,
			cod_charge: 0,
			shipping_charge_tax: 1800,
			total: 11900,
			rto_charge: 7000,
			zone: "D",
			weight: 0.5,
		});
		const first = updates.find((u) => u.order_id === o.order_id && u.seq === 1);
		assert.equal(first?.state, "booking_in_progress");
		assert.equal(first?.status, "booking_queued");

		const done = await settled(o.order_id);
		assert.equal(done.state, "booked");
		assert.equal(done.status, "booked");
		assert.match(done.awb_number!, /^\d{14}$/);
		assert.equal(done.courier, "Sandbox Express");
		assert.equal(done.logistic_id, 1);
		assert.equal(done.attempt_id, Number(row.attempt_id));
		const [after] = await attemptsOf(o.order_id);
		assert.equal(after.state, "booked");
		assert.equal(after.awb_number, done.awb_number);
		assert.equal(after.routing_code, "BOM/400");
		const pk = await simPackages(o.customer_order_no);
		assert.equal(pk.length, 1);
		assert.equal(pk[0].waybill, done.awb_number);
		assert.equal(pk[0].refnum, String(row.attempt_id));

		const ship: any = await callAs(broker(), "booking.getShipment", { sender_id: s, order_id: o.order_id });
		assert.equal(ship.awb_number, done.awb_number);
		assert.equal(ship.courier_name, "Sandbox Express");
		assert.equal(ship.routing_code, "BOM/400");
		assert.deepEqual(ship.charges, {
			freight_charge: 71,
			cod_charge: 0,
			shipping_charge_tax: 18,
			total: 119,
		});
		assert.equal(
			await callAs(broker(), "booking.getShipment", { sender_id: s + 1, order_id: o.order_id }),
			null,
		);
	});

	it("AUTO: answers {status, mode:'auto', idem_key} and takes the top-ranked courier that prices the lane", async () => {
		const s = newSender();
		const o = addOrder(s);
		const { res, status } = await book(broker(), s, { order_id: String(o.order_id) });
		assert.equal(status, 202);
		assert.equal(res.status, "queued");
		assert.equal(res.mode, "auto");
		assert.match(res.idem_key, /^bk_\d+$/);
		assert.equal((await settled(o.order_id)).courier, "Sandbox Express");
		assert.equal((await attemptsOf(o.order_id))[0].mode, "auto");

		// Express does not price 78xxxx: the next in the ranking does.
		const o2 = addOrder(s, {}, { pincode: "781001", city: "Guwahati", state: "Assam" });
		await book(broker(), s, { order_id: o2.order_id, logistic_id: null });
		const d2 = await settled(o2.order_id);
		assert.equal(d2.courier, "Sandbox Surface");
		assert.match(d2.awb_number!, /^\d{15}$/);

		// COD skips couriers without COD; a reverse order goes to the reverse courier.
		const o3 = addOrder(s, { direction: "reverse", customer_order_no: `${freshRef("RET")}-R` });
		await book(broker(), s, { order_id: o3.order_id });
		const d3 = await settled(o3.order_id);
		assert.equal(d3.courier, "Sandbox Reverse");
		assert.match(d3.awb_number!, /^\d{12}$/);
		const [pk] = await simPackages(o3.customer_order_no);
		assert.equal(pk.payment_mode, "Pickup");
	});
});
