/**
 * booking service, a call sent again after the node running it died (issue 30;
 * lib/platform/dead-node.ts, docs/decisions/0113-dead-node-rescue.md): the
 * resend carries the same Moleculer context id, and the attempt records it as
 * `call_key`, so the second run answers the first run's attempt instead of a
 * 409 — while another call for the same order still gets the 409 of spec §7.
 * Each call below is made with a Context of its own whose id is set, as the
 * callee builds one from a request packet.
 */
import assert from "node:assert/strict";
import { Context, type ServiceBroker } from "moleculer";
import { as, newSender, rejects } from "../../helpers/broker";
import { addOrder, attemptsOf, bodyOf, settled, useBookingBroker } from "./setup";

/** Calls `action` as `sender` under context id `id`; answers the result and the status the action set. */
async function callWithId(
	broker: ServiceBroker,
	action: "booking.book" | "booking.bookSync",
	sender: number,
	id: string,
	params: Record<string, unknown>,
): Promise<{ res: any; status: number | undefined }> {
	const ctx = new Context(broker);
	ctx.id = id;
	ctx.setParams(params);
	ctx.meta = { ...as(sender).meta };
	const res = await broker.call(action, params, { ctx });
	return { res, status: (ctx.meta as { $statusCode?: number }).$statusCode };
}

describe("booking: the same call sent again (a dead node's call resent under its context id)", function () {
	this.timeout(40_000);
	const broker = useBookingBroker();

	it("book: the resent call is answered the attempt it created (202, same idem_key); another call still 409", async () => {
		const s = newSender();
		const o = addOrder(s);
		const key = `ctx-${o.order_id}-a`;
		const first = await callWithId(broker(), "booking.book", s, key, { order_id: o.order_id });
		assert.equal(first.status, 202);
		assert.equal(first.res.status, "queued");
		const again = await callWithId(broker(), "booking.book", s, key, { order_id: o.order_id });
		assert.equal(again.status, 202);
		assert.deepEqual(again.res, first.res);
		const other = bodyOf(
			await rejects(() =>
				callWithId(broker(), "booking.book", s, `ctx-${o.order_id}-b`, { order_id: o.order_id }),
			),
		);
		assert.equal(other.status, 409);
		assert.ok(
			["already_booked", "booking_in_progress"].includes(other.body.error),
			JSON.stringify(other.body),
		);
		const rows = await attemptsOf(o.order_id);
		assert.equal(rows.length, 1, "one attempt");
		assert.equal(rows[0].call_key, key);
		assert.equal((await settled(o.order_id)).state, "booked");
		// once booked, the same call is still answered its attempt (the 202 it first got)
		const late = await callWithId(broker(), "booking.book", s, key, { order_id: o.order_id });
		assert.equal(late.status, 202);
		assert.equal(late.res.idem_key, first.res.idem_key);
	});

	it("book/sync: the resent call of a booked attempt answers 200 with its AWB", async () => {
		const s = newSender();
		const o = addOrder(s);
		const key = `ctx-${o.order_id}-s`;
		const first = await callWithId(broker(), "booking.bookSync", s, key, { order_id: o.order_id });
		assert.equal(first.status, 200, JSON.stringify(first.res));
		assert.equal(first.res.status, "booked");
		const again = await callWithId(broker(), "booking.bookSync", s, key, { order_id: o.order_id });
		assert.equal(again.status, 200);
		assert.equal(again.res.awb, first.res.awb);
		assert.equal(again.res.forward_id, first.res.forward_id);
		assert.equal((await attemptsOf(o.order_id)).length, 1);
		const other = bodyOf(
			await rejects(() =>
				callWithId(broker(), "booking.bookSync", s, `ctx-${o.order_id}-t`, { order_id: o.order_id }),
			),
		);
		assert.equal(other.status, 409);
		assert.equal(other.body.error, "already_booked");
	});
});
