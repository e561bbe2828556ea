/**
 * `order.created` rows of the intake event outbox (issue 11; written by the
 * statement-level trigger of migration webhooks-0002, issue 10): one row per
 * order actually inserted — a multi-row bulk INSERT gives one per order in
 * order_id order, a single create gives one, a deduped create (the live
 * reference exists: ON CONFLICT DO NOTHING) gives none — with the event's
 * JSON as the relay publishes it.
 */
import assert from "node:assert/strict";
import { insertOrdersBatch } from "../../../lib/intake/bulk/store";
import { insertOrder } from "../../../lib/intake/store";
import { parseOrderInput } from "../../../lib/intake/validation";
import { getSequelize } from "../../../lib/platform/db";
import { newSender } from "../../helpers/broker";
import { outboxEvents } from "../../helpers/outbox";
import { forwardBody, useIntake, warehouseOf } from "./setup";

describe("intake: order.created outbox rows (one statement-level trigger per INSERT)", () => {
	useIntake();

	/** The order.created events of `sender`, oldest outbox row first. */
	const eventsOf = (sender: number) => outboxEvents("intake", "order.created", "sender_id", sender);

	it("a bulk INSERT of three orders writes three events in order; the same rows again write none", async () => {
		const db = getSequelize();
		const sender = newSender();
		const pickup = warehouseOf(sender);
		const inputs = ["A", "B", "C"].map((x) =>
			parseOrderInput(forwardBody(pickup, `OUT-${sender}-${x}`), "forward"),
		);
		const ids = await db.transaction((tx) => insertOrdersBatch(db, sender, inputs, tx));
		assert.equal(ids.size, 3);
		const events = await eventsOf(sender);
		assert.deepEqual(
			events.map((e) => e.data.order_no),
			[`OUT-${sender}-A`, `OUT-${sender}-B`, `OUT-${sender}-C`],
		);
		const a = events[0];
		assert.equal(a.event_id, `order.created:${ids.get(`OUT-${sender}-A`)}`);
		assert.equal(a.sender_id, sender);
		assert.equal(a.order_id, ids.get(`OUT-${sender}-A`));
		assert.deepEqual(Object.keys(a.data).sort(), [
			"direction",
			"order_id",
			"order_no",
			"payment_mode",
			"pickup_address_id",
			"status",
		]);
		assert.equal(a.data.direction, "forward");
		assert.equal(a.data.pickup_address_id, pickup);
		assert.ok(Date.parse(a.occurred_at) > 0);

		const again = await db.transaction((tx) => insertOrdersBatch(db, sender, inputs, tx));
		assert.equal(again.size, 0, "the live references exist: nothing inserted");
		assert.equal((await eventsOf(sender)).length, 3, "no event for rows not inserted");
	});

	it("a single create writes one event; its deduped repeat none", async () => {
		const db = getSequelize();
		const sender = newSender();
		const pickup = warehouseOf(sender);
		const input = parseOrderInput(forwardBody(pickup, `OUT-${sender}-1`), "forward");
		const first = await insertOrder(db, sender, input);
		assert.equal(first.created, true);
		const repeat = await insertOrder(db, sender, input);
		assert.equal(repeat.created, false);
		const events = await eventsOf(sender);
		assert.equal(events.length, 1);
		assert.equal(events[0].order_id, first.order_id);
	});
});
