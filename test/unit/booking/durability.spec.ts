/**
 * booking service, durability (docs/ARCHITECTURE.md §5): the outbox is relayed until
 * acknowledged with backoff, the sweeper re-enqueues attempts whose job was
 * lost, and the ops actions answer counts.
 * Real simulator over HTTP, PostgreSQL and Redis; fakes of intake,
 * warehouses and rates in ./setup.ts.
 */
import assert from "node:assert/strict";
import { outboxRetryLater } from "../../../lib/booking/store";
import { exec, getSequelize, select } from "../../../lib/platform/db";
import { newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { eventually } from "../../helpers/poll";
import {
	addOrder,
	attemptsOf,
	book,
	insertAttempt,
	intakeFailures,
	settled,
	simPackages,
	updates,
	useBookingBroker,
} from "./setup";

describe("booking: durability (outbox, sweeper)", function () {
	this.timeout(40_000);
	const broker = useBookingBroker();

	it("outbox: an intake that fails is retried until it acknowledges", async () => {
		const s = newSender();
		const o = addOrder(s);
		intakeFailures.set(o.order_id, 3);
		const { status } = await book(broker(), s, { order_id: o.order_id, logistic_id: 1 });
		assert.equal(status, 202);
		const done = await settled(o.order_id);
		assert.equal(done.state, "booked");
		assert.equal(intakeFailures.get(o.order_id), 0);
		const [row] = await attemptsOf(o.order_id);
		const box = await eventually(
			async () => {
				const rows = await select<any>(
					getSequelize(),
					"SELECT * FROM booking.outbox WHERE kind = 'order_update' AND (payload->>'attempt_id')::bigint = $1 ORDER BY id",
					[row.attempt_id],
				);
				return rows.length === 2 && rows.every((r) => r.delivered_at) ? rows : undefined;
			},
			{ what: "outbox delivered" },
		);
		assert.ok(updates.some((u) => u.order_id === o.order_id && u.seq === 1));
		assert.ok(box.reduce((n, r) => n + Number(r.tries), 0) >= 5, "3 failed deliveries + 2 successful ones");
		const enq = await select<any>(
			getSequelize(),
			"SELECT * FROM booking.outbox WHERE kind = 'enqueue_booking' AND (payload->>'attempt_id')::bigint = $1",
			[row.attempt_id],
		);
		assert.ok(enq[0].delivered_at);
	});

	it("sweeper: a queued attempt whose job was lost is re-enqueued and booked", async () => {
		const s = newSender();
		const o = addOrder(s);
		const aid = await insertAttempt(o, 1);
		const done = await settled(o.order_id);
		assert.equal(done.state, "booked");
		assert.equal(done.attempt_id, aid);
		assert.equal((await simPackages(o.customer_order_no)).length, 1);
	});

	it("outbox backoff: a failed delivery is due again after base · 2^(tries-1), at most 60 s", async () => {
		const db = getSequelize();
		// Not due for an hour, so the running relay never takes it.
		const { rows } = await exec<{ id: string }>(
			db,
			`INSERT INTO booking.outbox (kind, payload, next_attempt_at)
				 VALUES ('order_update', '{}'::jsonb, now() + interval '1 hour') RETURNING id`,
		);
		const id = Number(rows[0].id);
		try {
			for (const [tries, want] of [
				[1, 10_000],
				[2, 20_000],
				[3, 40_000],
				[20, 60_000],
			]) {
				await outboxRetryLater(db, { id, tries }, "intake down", 10_000);
				const [r] = await select<{ ms: string; last_error: string }>(
					db,
					"SELECT EXTRACT(EPOCH FROM next_attempt_at - now()) * 1000 AS ms, last_error FROM booking.outbox WHERE id = $1",
					[id],
				);
				assert.ok(Number(r.ms) > want - 2000 && Number(r.ms) <= want, `tries ${tries}: ${r.ms} ms`);
				assert.equal(r.last_error, "intake down");
			}
		} finally {
			await exec(db, "UPDATE booking.outbox SET delivered_at = now() WHERE id = $1", [id]);
		}
	});

	it("ops actions: relayOutbox and sweep answer counts", async () => {
		const r: any = await callAs(broker(), "booking.relayOutbox");
		assert.equal(typeof r.delivered, "number");
		assert.deepEqual(Object.keys(r).sort(), ["delivered", "failed"]);
		assert.ok(Number.isInteger(r.delivered) && Number.isInteger(r.failed) && r.failed >= 0);
		const w: any = await callAs(broker(), "booking.sweep");
		assert.equal(typeof w.enqueued, "number");
		assert.deepEqual(Object.keys(w), ["enqueued"]);
		assert.ok(Number.isInteger(w.enqueued) && w.enqueued >= 0);
	});
});
