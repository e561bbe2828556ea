/**
 * intake service: idempotent create (spec §4.1, docs/ARCHITECTURE.md §5): one order per customer_order_no, 409 reference_in_use between forward
 * and return. Broker, fake warehouses and body builders: ./setup.ts.
 */
import assert from "node:assert/strict";
import { newSender } from "../../helpers/broker";
import { create, failure, forwardBody, reverseBody, rowsFor, useIntake, warehouseOf } from "./setup";

describe("intake service", () => {
	useIntake();

	describe("idempotent create (customer_order_no)", () => {
		it("answers 201 {order_id}, then 200 {order_id, deduped:true} for the same customer_order_no", async () => {
			const s = newSender();
			const body = forwardBody(warehouseOf(s));
			const first = await create(s, body);
			assert.equal(first.statusCode, 201);
			assert.deepEqual(Object.keys(first.result), ["order_id"]);
			assert.ok(Number.isSafeInteger(first.result.order_id) && first.result.order_id > 0);
			const again = await create(s, { ...body, receiver: { ...body.receiver, name: "Someone Else" } });
			assert.equal(again.statusCode, 200);
			assert.deepEqual(again.result, { order_id: first.result.order_id, deduped: true });
			const rows = await rowsFor(s);
			assert.equal(rows.length, 1);
			assert.equal(rows[0].receiver_name, "Asha Verma");
		});

		it("ten concurrent identical creates make exactly one order and all answer its order_id", async () => {
			const s = newSender();
			const body = forwardBody(warehouseOf(s));
			const answers = await Promise.all(Array.from({ length: 10 }, () => create(s, body)));
			const ids = new Set(answers.map((a) => a.result.order_id));
			assert.equal(ids.size, 1);
			assert.equal(answers.filter((a) => a.statusCode === 201).length, 1);
			assert.equal(
				answers.filter((a) => "deduped" in a.result && a.result.deduped === true && a.statusCode === 200)
					.length,
				9,
			);
			const rows = await rowsFor(s);
			assert.equal(rows.length, 1);
			assert.equal(Number(rows[0].order_id), [...ids][0]);
		});

		it("409 reference_in_use when a forward order already holds the -R reference (and vice versa)", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			const fwd = await create(s, forwardBody(wh, "X-9-R"));
			const clash = await failure(() => create(s, reverseBody(wh, "X-9"), "intake.createReverse"));
			assert.equal(clash.status, 409);
			assert.equal(clash.body.error, "reference_in_use");
			await create(s, reverseBody(wh, "Y-9"), "intake.createReverse");
			const clash2 = await failure(() => create(s, forwardBody(wh, "Y-9-R")));
			assert.equal(clash2.status, 409);
			assert.equal(clash2.body.error, "reference_in_use");
			const rows = await rowsFor(s);
			assert.deepEqual(
				rows.map((r) => [Number(r.order_id) === fwd.result.order_id, r.customer_order_no, r.shipment_type]),
				[
					[true, "X-9-R", 0],
					[false, "Y-9-R", 1],
				],
			);
		});
	});
});
