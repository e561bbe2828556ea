/**
 * intake service: intake.applyBookingUpdate (booking outbox → order state, §3).
 * Broker, fake warehouses and body builders: ./setup.ts.
 */
import assert from "node:assert/strict";
import { newSender, rejects } from "../../helpers/broker";
import { book, create, forwardBody, rowsFor, useIntake, warehouseOf } from "./setup";

describe("intake service", () => {
	useIntake();

	describe("intake.applyBookingUpdate", () => {
		it("applies only newer (attempt_id, seq); re-delivery and stale updates answer {applied:false}", async () => {
			const s = newSender();
			const { result } = await create(s, forwardBody(warehouseOf(s)));
			const id = result.order_id;
			const queued = {
				seq: 1,
				state: "booking_in_progress",
				status: "booking_queued",
				awb_number: null,
				courier: null,
				logistic_id: null,
			} as const;
			assert.deepEqual(await book(s, id, queued), { applied: true });
			assert.deepEqual(await book(s, id, { seq: 2 }), { applied: true });
			assert.deepEqual(await book(s, id, { seq: 2 }), { applied: false }); // re-delivered
			assert.deepEqual(await book(s, id, queued), { applied: false }); // stale: arrives late
			let [row] = await rowsFor(s);
			assert.equal(row.state, "booked");
			assert.equal(row.awb_number, `AWB${id}`);
			assert.equal(row.logistic_id, 3);
			assert.ok(row.booked_at);
			const bookedAt = new Date(row.booked_at).getTime();

			// later status of the same attempt keeps the AWB when it is omitted
			assert.deepEqual(
				await book(s, id, {
					seq: 3,
					status: "manifested",
					awb_number: undefined,
					courier: undefined,
					logistic_id: undefined,
				}),
				{ applied: true },
			);
			[row] = await rowsFor(s);
			assert.equal(row.status, "manifested");
			assert.equal(row.awb_number, `AWB${id}`);
			assert.equal(new Date(row.booked_at).getTime(), bookedAt);

			// an older attempt never overwrites a newer one
			assert.deepEqual(
				await book(s, id, {
					attempt_id: 2,
					seq: 1,
					state: "booking_in_progress",
					status: "booking_queued",
					awb_number: undefined,
					courier: undefined,
					logistic_id: undefined,
				}),
				{ applied: true },
			);
			[row] = await rowsFor(s);
			assert.equal(row.state, "booking_in_progress");
			assert.equal(row.awb_number, null); // new attempt: AWB of the old one cleared
			assert.deepEqual(await book(s, id, { attempt_id: 1, seq: 9, state: "booked" }), { applied: false });
			[row] = await rowsFor(s);
			assert.equal(row.state, "booking_in_progress");
			assert.equal(Number(row.booking_attempt_id), 2);
			assert.equal(row.booking_seq, 1);
		});

		it("does not touch another sender's order; rejects malformed updates", async () => {
			const s = newSender();
			const { result } = await create(s, forwardBody(warehouseOf(s)));
			assert.deepEqual(await book(newSender(), result.order_id), { applied: false });
			assert.equal((await rowsFor(s))[0].state, "not_shipped");
			const err = await rejects(() => book(s, result.order_id, { state: "shipped" as any }));
			assert.equal(err.name, "ValidationError");
			assert.equal((await rowsFor(s))[0].state, "not_shipped");
		});
	});
});
