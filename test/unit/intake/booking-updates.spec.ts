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

		it("stores failure_code like failure_reason: given (even null) written, omitted kept in the attempt, cleared by a new one", async () => {
			const s = newSender();
			const id = (await create(s, forwardBody(warehouseOf(s)))).result.order_id;
			const failed = {
				seq: 2,
				state: "failed",
				status: "booking_failed",
				awb_number: null,
				courier: null,
				logistic_id: null,
				failure_reason: "Pincode not serviceable",
				failure_code: "courier_refused",
			} as const;
			assert.deepEqual(await book(s, id, failed), { applied: true });
			let [row] = await rowsFor(s);
			assert.equal(row.failure_code, "courier_refused");
			assert.equal(row.failure_reason, "Pincode not serviceable");
			// same attempt, omitted: kept
			await book(s, id, { ...failed, seq: 3, failure_code: undefined, failure_reason: undefined });
			[row] = await rowsFor(s);
			assert.equal(row.failure_code, "courier_refused");
			// same attempt, given null: cleared
			await book(s, id, { ...failed, seq: 4, failure_code: null });
			[row] = await rowsFor(s);
			assert.equal(row.failure_code, null);
			assert.equal(row.failure_reason, "Pincode not serviceable");
			await book(s, id, { ...failed, seq: 5, failure_code: "pickup_unavailable" });
			// a new attempt that omits it: cleared
			await book(s, id, {
				attempt_id: 2,
				seq: 1,
				state: "booking_in_progress",
				status: "booking_queued",
				awb_number: undefined,
				courier: undefined,
				logistic_id: undefined,
			});
			[row] = await rowsFor(s);
			assert.equal(row.failure_code, null);
			assert.equal(row.failure_reason, null);
			// only the documented codes
			const err = await rejects(() => book(s, id, { attempt_id: 2, seq: 2, failure_code: "oops" as never }));
			assert.equal(err.name, "ValidationError");
		});

		it("status_at: the update's time, else now (kept when the same attempt repeats its status); malformed refused", async () => {
			const s = newSender();
			const id = (await create(s, forwardBody(warehouseOf(s)))).result.order_id;
			assert.equal((await rowsFor(s))[0].status_at, null); // never updated: none stored (answered as created_at)
			const t0 = Date.now();
			await book(s, id, { seq: 2 });
			let [row] = await rowsFor(s);
			const bookedAt = new Date(row.status_at).getTime();
			assert.ok(bookedAt >= t0 - 5_000 && bookedAt <= Date.now() + 5_000, "defaults to now");
			// the same status again within the attempt (e.g. an AWB correction): its time is kept
			await book(s, id, { seq: 3, awb_number: undefined, courier: undefined, logistic_id: undefined });
			[row] = await rowsFor(s);
			assert.equal(new Date(row.status_at).getTime(), bookedAt);
			await book(s, id, { seq: 4, status: "in_transit", status_at: "2025-05-02T10:00:00+05:30" });
			[row] = await rowsFor(s);
			assert.equal(new Date(row.status_at).toISOString(), "2025-05-02T04:30:00.000Z");
			const err = await rejects(() => book(s, id, { seq: 5, status_at: "not a time" }));
			assert.equal(err.name, "ValidationError");
		});

		it("stamps lifecycle timestamps from the statuses applied, each keeping the first, cleared by a new attempt", async () => {
			const s = newSender();
			const id = (await create(s, forwardBody(warehouseOf(s)))).result.order_id;
			const at = (h: number) => new Date(Date.UTC(2025, 4, 1, h)).toISOString();
			const step = (seq: number, status: string, h: number, extra: Record<string, unknown> = {}) =>
				book(s, id, {
					seq,
					status,
					status_at: at(h),
					awb_number: undefined,
					courier: undefined,
					logistic_id: undefined,
					...extra,
				});
			const stamps = async () => {
				const [r] = await rowsFor(s);
				const f = (d: Date | null) => (d === null ? null : new Date(d).toISOString());
				return {
					status_at: f(r.status_at),
					manifested_at: f(r.manifested_at),
					picked_up_at: f(r.picked_up_at),
					delivered_at: f(r.delivered_at),
					rto_at: f(r.rto_at),
					closed_at: f(r.closed_at),
				};
			};
			await step(2, "booked", 1, { awb_number: `AWB${id}` });
			await step(3, "manifested", 2);
			await step(4, "pickup_scheduled", 3);
			await step(5, "in_transit", 5); // the picked_up scan was missed: in transit stamps picked_up_at
			await step(6, "out_for_delivery", 6);
			await step(7, "undelivered", 7);
			assert.deepEqual(await stamps(), {
				status_at: at(7),
				manifested_at: at(2),
				picked_up_at: at(5),
				delivered_at: null,
				rto_at: null,
				closed_at: null,
			});
			await step(8, "rto_in_transit", 9); // rto_initiated missed
			await step(9, "rto_initiated", 8); // late: does not move rto_at (first kept)
			await step(10, "rto_delivered", 12);
			assert.deepEqual(await stamps(), {
				status_at: at(12),
				manifested_at: at(2),
				picked_up_at: at(5),
				delivered_at: null,
				rto_at: at(9),
				closed_at: at(12),
			});
			// a new attempt (the order booked again) starts a new shipment: stamps cleared, then stamped anew
			await book(s, id, { attempt_id: 2, seq: 1, state: "booking_in_progress", status: "booking_queued" });
			const cleared = await stamps();
			assert.deepEqual(
				{ ...cleared, status_at: null },
				{
					status_at: null,
					manifested_at: null,
					picked_up_at: null,
					delivered_at: null,
					rto_at: null,
					closed_at: null,
				},
			);
			await book(s, id, { attempt_id: 2, seq: 2, status: "delivered", status_at: at(20) });
			assert.deepEqual(await stamps(), {
				status_at: at(20),
				manifested_at: null,
				picked_up_at: at(20),
				delivered_at: at(20),
				rto_at: null,
				closed_at: at(20),
			});
			// a cancelled booking closes the shipment too
			await book(s, id, {
				attempt_id: 3,
				seq: 3,
				state: "not_shipped",
				status: "cancelled",
				status_at: at(21),
			});
			const c = await stamps();
			assert.equal(c.closed_at, at(21));
			assert.equal(c.delivered_at, null);
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
