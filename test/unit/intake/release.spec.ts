/**
 * intake service: order number release (spec §3 row "booked → cancel", §4.1, §4.2 cancel):
 * a booking update with status `cancelled` releases the order's
 * `customer_order_no`; a later create with it makes a new order, and
 * GET /v1/orders/status answers the live order for a reused reference (the
 * newest otherwise). Unreleased orders dedupe as before.
 * Broker, fake warehouses and body builders: ./setup.ts.
 */
import assert from "node:assert/strict";
import { cancelledUpdate } from "../../../lib/booking/store/cancel";
import { as, newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import {
	book,
	broker,
	create,
	failure,
	forwardBody,
	reverseBody,
	rowsFor,
	useIntake,
	warehouseOf,
} from "./setup";

/** The update booking's outbox sends when attempt `attempt_id` of the order is cancelled (lib/booking/store/cancel.ts). */
function cancelled(sender_id: number, order_id: number, attempt_id = 1) {
	return cancelledUpdate({ sender_id, order_id, attempt_id });
}

describe("intake service", () => {
	useIntake();

	describe("order number release after a cancelled booking", () => {
		it("releases the number: the same customer_order_no creates a new order, which then dedupes", async () => {
			const s = newSender();
			const body = forwardBody(warehouseOf(s), `REL-${s}`);
			const first = await create(s, body);
			assert.deepEqual(await book(s, first.result.order_id), { applied: true });
			const [booked] = await rowsFor(s);
			assert.equal(booked.released_at, null, "booking does not release");
			assert.equal((await create(s, body)).statusCode, 200, "still deduped while booked");

			assert.deepEqual(await book(s, first.result.order_id, cancelled(s, first.result.order_id)), {
				applied: true,
			});
			const [old] = await rowsFor(s);
			assert.ok(old.released_at);
			assert.equal(old.state, "not_shipped");
			assert.equal(old.status, "cancelled");
			assert.equal(old.awb_number, null);

			const second = await create(s, body);
			assert.equal(second.statusCode, 201);
			assert.notEqual(second.result.order_id, first.result.order_id);
			const again = await create(s, body);
			assert.deepEqual(again, {
				result: { order_id: second.result.order_id, deduped: true },
				statusCode: 200,
			});
			const rows = await rowsFor(s);
			assert.deepEqual(
				rows.map((r) => [Number(r.order_id), r.customer_order_no, r.released_at !== null]),
				[
					[first.result.order_id, body.customer_order_no, true],
					[second.result.order_id, body.customer_order_no, false],
				],
			);
			// a re-delivered cancel changes nothing; a released order stays released
			assert.deepEqual(await book(s, first.result.order_id, cancelled(s, first.result.order_id)), {
				applied: false,
			});
			assert.equal((await rowsFor(s))[0].released_at.getTime(), old.released_at.getTime());
		});

		it("status answers the live order for a reused reference, the newest released one otherwise", async () => {
			const s = newSender();
			const body = forwardBody(warehouseOf(s), `REL-ST-${s}`);
			const ref = body.customer_order_no;
			const status = () => callAs(broker(), "intake.status", { order_no: ref }, as(s)) as Promise<any>;
			const first = await create(s, body);
			await book(s, first.result.order_id, cancelled(s, first.result.order_id));
			assert.equal((await status()).status, "cancelled");
			const second = await create(s, body);
			await book(s, second.result.order_id, { attempt_id: 7 });
			const live = await status();
			assert.equal(live.state, "booked");
			assert.equal(live.awb_number, `AWB${second.result.order_id}`);
			// the newer order is cancelled too: the newest released one answers
			await book(s, second.result.order_id, cancelled(s, second.result.order_id, 7));
			const third = await status();
			assert.equal(third.status, "cancelled");
			assert.equal(third.state, "not_shipped");
			// a third order with the number is the live one again
			await create(s, body);
			const fresh = await status();
			assert.equal(fresh.status, "new");
			assert.equal((await rowsFor(s)).length, 3);
		});

		it("ten concurrent creates after a release make exactly one new order", async () => {
			const s = newSender();
			const body = forwardBody(warehouseOf(s), `REL-C-${s}`);
			const first = await create(s, body);
			await book(s, first.result.order_id, cancelled(s, first.result.order_id));
			const answers = await Promise.all(Array.from({ length: 10 }, () => create(s, body)));
			const ids = new Set(answers.map((a) => a.result.order_id));
			assert.equal(ids.size, 1);
			assert.ok(!ids.has(first.result.order_id));
			assert.equal(answers.filter((a) => a.statusCode === 201).length, 1);
			assert.equal((await rowsFor(s)).length, 2);
		});

		it("only the cancelled status releases; other senders and returns keep their numbers apart", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			const body = forwardBody(wh, `REL-F-${s}`);
			const first = await create(s, body);
			await book(s, first.result.order_id, {
				seq: 2,
				state: "failed",
				status: "booking_failed",
				failure_reason: "refused",
			});
			assert.equal((await create(s, body)).statusCode, 200, "a failed booking keeps the number");
			// a return's number (…-R) is released on its own
			const ret = await create(s, reverseBody(wh, `REL-F-${s}`), "intake.createReverse");
			await book(s, ret.result.order_id, cancelled(s, ret.result.order_id));
			const ret2 = await create(s, reverseBody(wh, `REL-F-${s}`), "intake.createReverse");
			assert.equal(ret2.statusCode, 201);
			assert.equal((await create(s, body)).statusCode, 200, "the forward order still holds its number");
			// a forward order may not take a released return's reference while the live return holds it
			const clash = await failure(() => create(s, forwardBody(wh, `REL-F-${s}-R`)));
			assert.equal(clash.status, 409);
			assert.equal(clash.body.error, "reference_in_use");
			// another account's cancelled order releases nothing of this one
			const other = newSender();
			const theirs = await create(other, forwardBody(warehouseOf(other), body.customer_order_no));
			await book(other, theirs.result.order_id, cancelled(other, theirs.result.order_id));
			assert.equal((await create(s, body)).statusCode, 200);
		});
	});
});
