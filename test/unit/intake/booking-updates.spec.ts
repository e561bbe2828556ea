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

		it("updates arriving together (one coalesced statement) end as if applied one by one, oldest first", async () => {
			const s = newSender();
			const a = (await create(s, forwardBody(warehouseOf(s)))).result.order_id;
			const b = (await create(s, forwardBody(warehouseOf(s)))).result.order_id;
			const queued = {
				seq: 1,
				state: "booking_in_progress",
				status: "booking_queued",
				awb_number: null,
			} as const;
			// all in flight at once: order a's seq 2 is listed before its seq 1 and omits the courier seq 1 gives
			const answers = await Promise.all([
				book(s, a, { seq: 2, courier: undefined, logistic_id: undefined }),
				book(s, a, { ...queued, courier: "Sandbox Express", logistic_id: 3 }),
				book(s, a, { seq: 2, courier: undefined, logistic_id: undefined }), // re-delivered within the batch
				book(s, b, { ...queued, courier: "Sandbox Express", logistic_id: 3 }),
				book(newSender(), b), // another sender's: never applied
			]);
			assert.deepEqual(
				answers.map((x) => (x as { applied: boolean }).applied),
				[true, true, true, true, false],
			);
			const [ra, rb] = await rowsFor(s);
			assert.equal(ra.state, "booked");
			assert.equal(ra.booking_seq, 2);
			assert.equal(ra.awb_number, `AWB${a}`);
			// seq 1 ran first: its courier survives seq 2, which omits it (same attempt)
			assert.equal(ra.courier, "Sandbox Express");
			assert.equal(ra.logistic_id, 3);
			assert.ok(ra.booked_at);
			assert.equal(rb.state, "booking_in_progress");
			assert.equal(rb.booking_seq, 1);
			assert.equal(rb.awb_number, null);
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
