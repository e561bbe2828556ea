/**
 * documents.label (spec §4.4 `GET /v1/documents/label/{orderId}`): §7 documents exception bodies: 400, 404, 409 not_ready_to_ship, 401.
 * Fakes and tools: ./setup.ts.
 */
import assert from "node:assert/strict";
import { errorBodyOf } from "../../../lib/platform/errors";
import { newSender, rejects } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { freshId } from "../../helpers/fixtures";
import {
	book,
	bookedOrder,
	broker,
	failure,
	labelRows,
	orderRecord,
	useDocuments,
	warehouseRow,
} from "./setup";

describe("documents.label (GET /v1/documents/label/{orderId})", () => {
	useDocuments();

	describe("errors (§7 documents exception)", () => {
		for (const bad of ["abc", "0", "-1", "1.5", "", " 7", "+7", "1e3", "99999999999999999999"]) {
			it(`400 {message} with no error key for orderId ${JSON.stringify(bad)}`, async () => {
				const { status, body } = await failure(newSender(), bad);
				assert.equal(status, 400);
				assert.deepEqual(body, { message: "orderId must be a positive integer" });
				assert.ok(!("error" in body));
			});
		}

		it("404 {message:'not found'} with no error key for another account's order", async () => {
			const owner = newSender();
			const { order } = bookedOrder(owner);
			const { status, body } = await failure(newSender(), String(order.order_id));
			assert.equal(status, 404);
			assert.deepEqual(body, { message: "not found" });
			assert.ok(!("error" in body));
			assert.equal((await labelRows(order.order_id)).length, 0);
		});

		it("404 {message:'not found'} for an order that does not exist (same answer)", async () => {
			const { status, body } = await failure(newSender(), String(freshId()));
			assert.equal(status, 404);
			assert.deepEqual(body, { message: "not found" });
		});

		it("409 {code:'not_ready_to_ship', message} for an order not booked yet, and no stamp", async () => {
			const sender = newSender();
			const w = warehouseRow(sender);
			const order = orderRecord(sender, { pickup_address_id: w.id });
			const { status, body } = await failure(sender, String(order.order_id));
			assert.equal(status, 409);
			assert.deepEqual(body, { code: "not_ready_to_ship", message: "order is not booked yet" });
			assert.equal((await labelRows(order.order_id)).length, 0);
		});

		it("409 not_ready_to_ship while booking is still in progress", async () => {
			const sender = newSender();
			const w = warehouseRow(sender);
			const order = orderRecord(sender, { pickup_address_id: w.id });
			book(order, { state: "booking_in_progress" });
			const { status, body } = await failure(sender, String(order.order_id));
			assert.equal(status, 409);
			assert.deepEqual(body, { code: "not_ready_to_ship", message: "order is not booked yet" });
		});

		it("401 without an authenticated caller", async () => {
			const err = await rejects(() => callAs(broker(), "documents.label", { orderId: "1" }));
			assert.equal(errorBodyOf(err)?.status, 401);
		});
	});
});
