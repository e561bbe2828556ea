/**
 * intake service: read-your-writes of GET /v1/orders/status (issue 6; lib/intake/read-through.ts):
 * while intake's stored state is `not_shipped` or `failed` and booking has read
 * the order to book it (`intake.getOrder` with `for_booking`), booking's view of
 * a newer attempt (`booking.orderState`) is answered; when booking cannot be
 * asked (down, slow), intake's own record. An order booking never read is
 * answered without asking booking (docs/decisions/0129-status-without-booking.md).
 * A fake `booking` service answers `booking.orderState` in the contract's shape.
 */
import assert from "node:assert/strict";
import type { OrderBookingState } from "../../../lib/contracts";
import { INTAKE_MIGRATIONS } from "../../../lib/intake/migrations";
import { getSequelize, select } from "../../../lib/platform/db";
import { as, newSender } from "../../helpers/broker";
import { callAs, fakeService } from "../../helpers/call";
import { book, broker, create, forwardBody, rowsFor, useIntake, warehouseOf } from "./setup";

/** order_id → booking's answer. */
const known = new Map<number, OrderBookingState>();
/** How `booking.orderState` behaves: answers, fails, or answers after 3 s. */
let mode: "ok" | "down" | "slow" = "ok";
const asked: number[] = [];
/** Calls of the fake `booking.orderStates` (each may carry many orders). */
let statesCalls = 0;
/** How long the fake takes to answer (ms): calls made meanwhile wait for the next wave. */
let latencyMs = 0;

/** Booking's view of an attempt (contract shape). */
function state(attempt_id: number, over: Partial<OrderBookingState> = {}): OrderBookingState {
	return {
		attempt_id,
		state: "booking_in_progress",
		status: "booking_queued",
		awb_number: null,
		courier: null,
		logistic_id: 2,
		failure_reason: null,
		direction: "forward",
		...over,
	};
}

describe("intake service", () => {
	useIntake();
	before(async () => {
		broker().createService(
			fakeService("booking", {
				// the status read asks for many orders at once (intake's coalesced read-through)
				async orderStates(ctx) {
					statesCalls++;
					for (const o of ctx.params.orders) asked.push(o.order_id);
					if (latencyMs) await new Promise((r) => setTimeout(r, latencyMs));
					if (mode === "down") throw new Error("booking is unreachable");
					if (mode === "slow") await new Promise((r) => setTimeout(r, 3_000));
					return ctx.params.orders.map((o) => known.get(o.order_id) ?? null);
				},
			}),
		);
		await broker().waitForServices(["booking"], 10_000, 10);
	});
	afterEach(() => {
		mode = "ok";
	});

	describe("intake.status reads booking's state through while its update is on the way", () => {
		/** Booking's first step before it opens an attempt (lib/booking/request.ts prepareBooking). */
		const readForBooking = (s: number, id: number) =>
			callAs(broker(), "intake.getOrder", { sender_id: s, order_id: id, for_booking: true }) as Promise<any>;

		/** A new order of a new sender; `requested` (default): booking has read it to book it. */
		async function order(requested = true) {
			const s = newSender();
			const body = forwardBody(warehouseOf(s));
			const { result } = await create(s, body);
			const id = result.order_id as number;
			if (requested) await readForBooking(s, id);
			const status = () =>
				callAs(broker(), "intake.status", { order_no: body.customer_order_no }, as(s)) as Promise<any>;
			return { s, id, status };
		}

		/** Whether `intake.booking_requests` holds order `id`. */
		const requested = async (id: number) =>
			(await select(getSequelize(), "SELECT 1 FROM intake.booking_requests WHERE order_id = $1", [id]))
				.length === 1;

		it("an order booking never read to book it: booking is not asked; once read, it is", async () => {
			const { s, id, status } = await order(false);
			assert.equal(await requested(id), false, "a new order: booking has not read it");
			const [fresh] = await rowsFor(s);
			// booking cannot hold an attempt for it; were it to claim one, intake would not ask
			known.set(id, state(40));
			const before = asked.length;
			assert.equal((await status()).state, "not_shipped");
			assert.equal(asked.length, before, "booking asked about an order it never read to book");
			// the read for booking answers the order as the plain read does, and enters it as requested
			const plain = await callAs(broker(), "intake.getOrder", { sender_id: s, order_id: id });
			assert.deepEqual(await readForBooking(s, id), plain);
			assert.equal(await requested(id), true);
			assert.deepEqual(await readForBooking(s, id), plain, "read for booking again: the same answer");
			assert.deepEqual(await rowsFor(s), [fresh], "the order's row is not written");
			assert.equal((await status()).state, "booking_in_progress");
			assert.deepEqual(asked.slice(before), [id]);
			// a plain read does not enter it; another sender's order is neither answered nor entered
			const other = await order(false);
			assert.equal(await readForBooking(s, other.id), null);
			assert.equal(await requested(other.id), false);
			await callAs(broker(), "intake.getOrder", { sender_id: other.s, order_id: other.id });
			assert.equal(await requested(other.id), false);
		});

		it("migration 0011: orders not shipped or failed before it count as requested (booking may hold attempts)", async () => {
			const db = getSequelize();
			const old = await order(false);
			const booked = await order(false);
			await book(booked.s, booked.id);
			await db.query("DROP TABLE intake.booking_requests");
			const m = INTAKE_MIGRATIONS.find((x) => x.name === "0011-booking-requests");
			assert.ok(m);
			await db.transaction((transaction) => m.up({ sequelize: db, schema: "intake", transaction }));
			assert.equal(await requested(old.id), true, "a not-shipped order from before the table");
			assert.equal(
				await requested(booked.id),
				false,
				"a booked one: any later attempt is read for booking first",
			);
			known.set(old.id, state(41));
			assert.equal((await old.status()).state, "booking_in_progress", "so its status asks booking");
			const fresh = await order(false);
			assert.equal(await requested(fresh.id), false, "an order created after it");
		});

		it("concurrent status reads share booking calls: 20 reads, each its own answer, far fewer calls", async () => {
			const orders = await Promise.all(Array.from({ length: 20 }, () => order()));
			orders.forEach((o, i) => {
				known.set(o.id, state(100 + i));
			});
			const before = statesCalls;
			latencyMs = 100; // booking answers in 100 ms: the reads made meanwhile form the next call
			const answers = await Promise.all(orders.map((o) => o.status())).finally(() => {
				latencyMs = 0;
			});
			assert.deepEqual(
				answers.map((a) => a.state),
				orders.map(() => "booking_in_progress"),
			);
			assert.ok(statesCalls - before <= 3, `${statesCalls - before} calls for 20 reads`);
		});

		it("not_shipped but booking has a queued attempt → booking_in_progress", async () => {
			const { id, status } = await order();
			assert.equal((await status()).state, "not_shipped", "no attempt yet: intake's record");
			known.set(id, state(11));
			const st = await status();
			assert.equal(st.state, "booking_in_progress");
			assert.equal(st.status, "booking_queued");
			assert.equal(st.awb_number, null);
			assert.equal(st.failure_reason, null);
		});

		it("booking's booked and failed states carry the AWB / the reason", async () => {
			const a = await order();
			known.set(
				a.id,
				state(12, {
					state: "booked",
					status: "booked",
					awb_number: "140000000012",
					courier: "Sandbox Surface",
				}),
			);
			const booked = await a.status();
			assert.deepEqual(
				[booked.state, booked.status, booked.awb_number, booked.courier, booked.failure_reason],
				["booked", "booked", "140000000012", "Sandbox Surface", null],
			);
			const b = await order();
			known.set(b.id, state(13, { state: "failed", status: "booking_failed", failure_reason: "refused" }));
			const failed = await b.status();
			assert.deepEqual([failed.state, failed.failure_reason, failed.awb_number], ["failed", "refused", null]);
		});

		it("a failed order re-booked: booking's newer attempt wins; the same attempt does not", async () => {
			const { s, id, status } = await order();
			await book(s, id, {
				attempt_id: 20,
				seq: 2,
				state: "failed",
				status: "booking_failed",
				failure_reason: "no",
			});
			known.set(id, state(20, { state: "failed", status: "booking_failed", failure_reason: "no" }));
			assert.equal((await status()).state, "failed");
			known.set(id, state(21));
			assert.equal((await status()).state, "booking_in_progress");
			// the update arrives: intake's own record, booking no longer asked
			await book(s, id, { attempt_id: 21, seq: 1, state: "booking_in_progress", status: "booking_queued" });
			const before = asked.length;
			assert.equal((await status()).state, "booking_in_progress");
			assert.equal(asked.length, before, "booking is not asked for a booking_in_progress order");
		});

		it("booked orders never ask booking", async () => {
			const { s, id, status } = await order();
			await book(s, id);
			const before = asked.length;
			assert.equal((await status()).state, "booked");
			assert.equal(asked.length, before);
		});

		it("booking down or slow: intake's record, within the short timeout", async () => {
			const { id, status } = await order();
			known.set(id, state(30));
			mode = "down";
			assert.equal((await status()).state, "not_shipped");
			mode = "slow";
			const t0 = Date.now();
			assert.equal((await status()).state, "not_shipped");
			assert.ok(Date.now() - t0 < 2_500, `answered after ${Date.now() - t0} ms`);
		});
	});
});
