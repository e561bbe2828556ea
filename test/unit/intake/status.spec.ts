/**
 * intake service: GET /v1/orders/status (spec §2.4, §4.3).
 * Broker, fake warehouses and body builders: ./setup.ts.
 */
import assert from "node:assert/strict";
import { labelLinkUrl } from "../../../lib/shared/label-link";
import { as, newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { book, broker, create, failure, forwardBody, useIntake, warehouseOf } from "./setup";

describe("intake service", () => {
	useIntake();

	describe("intake.status (GET /v1/orders/status)", () => {
		it("400 order_no is required when absent or empty", async () => {
			const s = newSender();
			for (const params of [{}, { order_no: "" }, { order_no: "   " }]) {
				const { status, body } = await failure(() => callAs(broker(), "intake.status", params, as(s)));
				assert.equal(status, 400);
				assert.deepEqual(body, { error: "order_no is required", message: "order_no is required" });
			}
		});

		it("404 order_not_found for an unknown reference and for another merchant's", async () => {
			const s = newSender();
			const other = newSender();
			await create(other, forwardBody(warehouseOf(other), "SHARED-REF-1"));
			for (const order_no of ["NOPE-1", "SHARED-REF-1"]) {
				const { status, body } = await failure(() => callAs(broker(), "intake.status", { order_no }, as(s)));
				assert.equal(status, 404);
				assert.equal(body.error, "order_not_found");
				assert.equal(typeof body.message, "string");
			}
			// a sender_id param changes nothing (§1 rule 3)
			const spoof = await failure(() =>
				callAs(broker(), "intake.status", { order_no: "SHARED-REF-1", sender_id: String(other) }, as(s)),
			);
			assert.equal(spoof.status, 404);
		});

		it("answers the §2.4 record; read-only roles may read it", async () => {
			const s = newSender();
			await create(s, forwardBody(warehouseOf(s), "ST-1"));
			const st: any = await callAs(broker(), "intake.status", { order_no: "ST-1" }, as(s, "merchant_staff"));
			assert.deepEqual(Object.keys(st).sort(), [
				"awb_number",
				"courier",
				"created_at",
				"failure_reason",
				"label_url",
				"order_no",
				"state",
				"status",
			]);
			assert.equal(st.order_no, "ST-1");
			assert.equal(st.state, "not_shipped");
			assert.equal(st.status, "new");
			assert.equal(st.awb_number, null);
			assert.equal(st.courier, null);
			assert.equal(st.failure_reason, null);
			assert.equal(st.label_url, null);
			assert.ok(!Number.isNaN(Date.parse(st.created_at)));
			const anon = await failure(() => callAs(broker(), "intake.status", { order_no: "ST-1" }));
			assert.equal(anon.status, 401);
		});

		it("shows awb_number, courier and the signed label_url once booked, failure_reason once failed", async () => {
			const s = newSender();
			const { result } = await create(s, forwardBody(warehouseOf(s), "ST-2"));
			const id = result.order_id;
			await book(s, id, {
				seq: 1,
				state: "booking_in_progress",
				status: "booking_queued",
				awb_number: undefined,
				courier: undefined,
				logistic_id: undefined,
			});
			let st: any = await callAs(broker(), "intake.status", { order_no: "ST-2" }, as(s));
			assert.equal(st.state, "booking_in_progress");
			assert.equal(st.status, "booking_queued");
			assert.equal(st.awb_number, null);
			assert.equal(st.label_url, null);

			assert.deepEqual(await book(s, id, { seq: 2 }), { applied: true });
			st = await callAs(broker(), "intake.status", { order_no: "ST-2" }, as(s));
			assert.equal(st.state, "booked");
			assert.equal(st.status, "booked");
			assert.equal(st.awb_number, `AWB${id}`);
			assert.equal(st.courier, "Sandbox Express");
			assert.equal(st.failure_reason, null);
			assert.equal(st.label_url, labelLinkUrl(`AWB${id}`));

			const { result: r3 } = await create(s, forwardBody(warehouseOf(s), "ST-3"));
			await book(s, r3.order_id, {
				state: "failed",
				status: "booking_failed",
				awb_number: null,
				courier: null,
				failure_reason: "No courier serves pincode 560038 for COD",
			});
			st = await callAs(broker(), "intake.status", { order_no: "ST-3" }, as(s));
			assert.equal(st.state, "failed");
			assert.equal(st.awb_number, null);
			assert.equal(st.courier, null);
			assert.equal(st.failure_reason, "No courier serves pincode 560038 for COD");
			assert.equal(st.label_url, null);
		});
	});
});
