/**
 * booking service, internal `booking.closeCancellation` (intake's
 * POST /v1/orders/{id}/hide, spec §3, §4.3; lib/booking/store/close.ts):
 * closes an open cancellation without contacting the courier and reports the
 * order's refunds from the wallet ledger. Real simulator, PostgreSQL and
 * Redis; fakes of intake, warehouses and rates in ./setup.ts.
 */
import assert from "node:assert/strict";
import { exec, getSequelize, select } from "../../../lib/platform/db";
import { as, newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { addOrder, attemptsOf, book, insertAttempt, settled, simCalls, useBookingBroker } from "./setup";

describe("booking.closeCancellation", () => {
	const broker = useBookingBroker();
	const close = (sender_id: number, order_id: number) =>
		callAs(broker(), "booking.closeCancellation", { sender_id, order_id }) as Promise<{
			closed: boolean;
			refunded: number;
		}>;

	it("closes a cancel requested while the courier call is in flight, once; the attempt stays with its worker", async () => {
		const s = newSender();
		const o = addOrder(s);
		const a = await insertAttempt(o, 1, "claimed");
		await callAs(broker(), "booking.cancel", { order_id: o.order_id, logistic_id: 1 }, as(s));
		assert.deepEqual(
			await close(newSender(), o.order_id),
			{ closed: false, refunded: 0 },
			"not that sender's",
		);
		assert.equal((await attemptsOf(o.order_id))[0].cancel_closed_at, null);

		assert.deepEqual(await close(s, o.order_id), { closed: true, refunded: 0 });
		const [row] = await attemptsOf(o.order_id);
		assert.equal(Number(row.attempt_id), a);
		assert.equal(row.state, "claimed", "the worker still settles it");
		assert.ok(row.cancel_closed_at);
		assert.deepEqual(await close(s, o.order_id), { closed: false, refunded: 0 }, "a repeat closes nothing");
	});

	it("an order whose booking was cancelled reports the ledger's refund in rupees and never calls the courier", async () => {
		const s = newSender();
		const o = addOrder(s);
		await book(broker(), s, { order_id: o.order_id, logistic_id: 1 });
		assert.equal((await settled(o.order_id)).state, "booked");
		const [a] = await attemptsOf(o.order_id);
		const res = (await callAs(
			broker(),
			"booking.cancel",
			{ order_id: o.order_id, logistic_id: 1 },
			as(s),
		)) as {
			refunded: number;
		};
		const [refund] = await select<{ amount_paise: string }>(
			getSequelize(),
			"SELECT amount_paise FROM booking.ledger WHERE attempt_id = $1 AND kind = 'refund'",
			[a.attempt_id],
		);
		assert.ok(Number(refund.amount_paise) > 0);
		const calls = await simCalls(a.awb_number, "cancel");
		assert.deepEqual(await close(s, o.order_id), {
			closed: false,
			refunded: Number(refund.amount_paise) / 100,
		});
		assert.equal(res.refunded, Number(refund.amount_paise) / 100);
		assert.equal(await simCalls(a.awb_number, "cancel"), calls, "hide never contacts the courier");
	});

	it("an order without a booking, or a booked one never cancelled: nothing to close, nothing refunded", async () => {
		const s = newSender();
		const o = addOrder(s);
		assert.deepEqual(await close(s, o.order_id), { closed: false, refunded: 0 });
		const a = await insertAttempt(o, 1, "booked");
		await exec(getSequelize(), "UPDATE booking.attempts SET awb_number = 'X1' WHERE attempt_id = $1", [a]);
		assert.deepEqual(await close(s, o.order_id), { closed: false, refunded: 0 });
	});
});
