/**
 * intake service: POST /v1/intake/reverse (spec §2.2, §4.1): the -R reference, reverse fields, warehouse ownership.
 * Broker, fake warehouses and body builders: ./setup.ts.
 */
import assert from "node:assert/strict";
import { as, newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import {
	broker,
	create,
	failure,
	forwardBody,
	reverseBody,
	rowsFor,
	useIntake,
	warehouseOf,
	withField,
} from "./setup";

describe("intake service", () => {
	useIntake();

	describe("intake.createReverse (POST /v1/intake/reverse)", () => {
		it("stores the return under customer_order_no + -R, next to the forward order of the same number", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			const fwd = await create(s, forwardBody(wh, "SO-1001"));
			const rev = await create(s, reverseBody(wh, "SO-1001"), "intake.createReverse");
			assert.equal(rev.statusCode, 201);
			// the answer names the stored reference, the one the status route knows the return by
			assert.deepEqual(rev.result, { order_id: rev.result.order_id, order_no: "SO-1001-R" });
			assert.ok(Number.isInteger(rev.result.order_id));
			assert.notEqual(rev.result.order_id, fwd.result.order_id);
			const rows = await rowsFor(s);
			assert.deepEqual(
				rows.map((r) => [r.customer_order_no, r.shipment_type, r.order_type]),
				[
					["SO-1001", 0, 1],
					["SO-1001-R", 1, 0],
				],
			);
			assert.equal(rows[1].forward_source, "tekipost");
			assert.equal(rows[1].old_fwd_awb_no, "1490841234567");
			assert.deepEqual(rows[1].return_address, { name: "Main WH", city: "Pune", pincode: "411001" });
			assert.equal(Number(rows[1].cod_amount_paise), 0);

			const again = await create(s, reverseBody(wh, "SO-1001"), "intake.createReverse");
			assert.equal(again.statusCode, 200);
			assert.deepEqual(again.result, { order_id: rev.result.order_id, deduped: true, order_no: "SO-1001-R" });

			// GET /v1/orders/status finds the return by the order_no its create answered; the forward order
			// keeps its own number
			const st: any = await callAs(broker(), "intake.status", { order_no: rev.result.order_no }, as(s));
			assert.equal(st.order_no, "SO-1001-R");
			assert.equal(st.state, "not_shipped");
			const fst: any = await callAs(broker(), "intake.status", { order_no: "SO-1001" }, as(s));
			assert.equal(fst.order_no, "SO-1001");
			// a forward order's create answer is unchanged: {order_id} only
			assert.deepEqual(Object.keys(fwd.result), ["order_id"]);
			const rec: any = await callAs(broker(), "intake.getOrder", {
				sender_id: s,
				order_id: rev.result.order_id,
			});
			assert.equal(rec.direction, "reverse");
			assert.equal(rec.payment_mode, "prepaid");
			assert.equal(rec.customer_order_no, "SO-1001-R");
			assert.equal(rec.reverse.forward_source, "tekipost");
		});

		it("reverse_pickup_address_id is the order's warehouse and must be the caller's", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			const back = warehouseOf(s);
			const body = withField(reverseBody(wh, "RV-1"), "order.reverse_pickup_address_id", back);
			await create(s, body, "intake.createReverse");
			const [row] = await rowsFor(s);
			assert.equal(Number(row.pickup_address_id), back);
			assert.equal(Number(row.reverse_pickup_address_id), back);
			// only reverse_pickup_address_id given
			const only = withField(
				withField(reverseBody(wh, "RV-2"), "order.pickup_address_id", undefined),
				"order.reverse_pickup_address_id",
				back,
			);
			assert.equal((await create(s, only, "intake.createReverse")).statusCode, 201);
			const foreign = withField(
				reverseBody(wh, "RV-3"),
				"order.reverse_pickup_address_id",
				warehouseOf(newSender()),
			);
			const f = await failure(() => create(s, foreign, "intake.createReverse"));
			assert.equal(f.status, 400);
			assert.equal(f.body.error, "invalid_pickup_address");
			const neither = withField(reverseBody(wh, "RV-4"), "order.pickup_address_id", undefined);
			const n = await failure(() => create(s, neither, "intake.createReverse"));
			assert.equal(n.body.error, "validation_failed");
			assert.ok(n.body.details.some((d: string) => d.startsWith("order.pickup_address_id: ")));
		});

		const badReverse: Array<[string, unknown, string]> = [
			["order.forward_source", undefined, "order.forward_source"],
			["order.forward_source", "shiprocket", "order.forward_source"],
			["order.forward_source", "TEKIPOST", "order.forward_source"],
			["order.old_fwd_awb_no", undefined, "order.old_fwd_awb_no"],
			["order.old_fwd_awb_no", "", "order.old_fwd_awb_no"],
			["order.old_fwd_awb_no", "9".repeat(51), "order.old_fwd_awb_no"],
			["order.old_fwd_awb_no", "AWB 123", "order.old_fwd_awb_no"],
			["order.order_type", 1, "order.order_type"],
			["product.cod_amount", 100, "product.cod_amount"],
			["order.return_address", "Pune", "order.return_address"],
			["order.return_address.pincode", "4110", "order.return_address.pincode"],
			["order.reverse_pickup_address_id", "zero", "order.reverse_pickup_address_id"],
			["receiver.pincode", "4110", "receiver.pincode"],
		];
		for (const [path, value, field] of badReverse) {
			it(`400 validation_failed naming ${field} for ${path} = ${JSON.stringify(value)?.slice(0, 30)}`, async () => {
				const s = newSender();
				const body = withField(reverseBody(warehouseOf(s), "RV-BAD"), path, value);
				const { status, body: err } = await failure(() => create(s, body, "intake.createReverse"));
				assert.equal(status, 400);
				assert.equal(err.error, "validation_failed");
				assert.ok(
					err.details.some((d: string) => d.startsWith(`${field}: `)),
					`details ${JSON.stringify(err.details)} should name ${field}`,
				);
				assert.equal((await rowsFor(s)).length, 0);
			});
		}

		it("old_fwd_awb_no of exactly 50 characters is accepted", async () => {
			const s = newSender();
			const body = withField(reverseBody(warehouseOf(s), "RV-50"), "order.old_fwd_awb_no", "7".repeat(50));
			assert.equal((await create(s, body, "intake.createReverse")).statusCode, 201);
		});

		it("403 another sender and B2B refusal apply to returns too", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			const other = await failure(() =>
				create(s, { ...reverseBody(wh, "RV-S"), sender_id: s + 1 }, "intake.createReverse"),
			);
			assert.equal(other.status, 403);
			assert.equal(other.body.error, "cannot create order for another sender");
			const b2b = await failure(() =>
				create(s, { ...reverseBody(wh, "RV-B"), boxes: [{}, {}] }, "intake.createReverse"),
			);
			assert.equal(b2b.body.error, "unsupported_channel");
		});
	});
});
