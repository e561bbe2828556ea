/**
 * booking service, AUTO fall-over (issue 6): a definitive failure of the
 * ranked courier moves the booking to the next ranked courier that prices the
 * lane (worker and sync), every attempt recorded with the courier's words, the
 * chain in the order's failure_reason when all refuse; a forced courier never
 * falls over. Rankings are the account's `booking.rankings` rows.
 * Real simulator over HTTP, PostgreSQL and Redis; fakes in ./setup.ts.
 */
import assert from "node:assert/strict";
import { exec, getSequelize } from "../../../lib/platform/db";
import { newSender } from "../../helpers/broker";
import { eventually } from "../../helpers/poll";
import {
	addOrder,
	attemptsOf,
	book,
	COURIERS,
	finalUpdate,
	settled,
	simPackages,
	updates,
	useBookingBroker,
} from "./setup";
import { bookSync, ledgerOf } from "./sync-setup";

/** Ranks `ids` first (priority 1, 2, …) for `sender`'s forward shipments. */
async function rank(sender: number, ids: number[]): Promise<void> {
	for (const [i, id] of ids.entries()) {
		await exec(
			getSequelize(),
			"INSERT INTO booking.rankings (sender_id, direction, logistic_id, priority) VALUES ($1, 'forward', $2, $3)",
			[sender, id, i + 1],
		);
	}
}

const REFUSE = "Shipment rejected by the courier (SIMULATE_REFUSE)";

describe("booking: AUTO fall-over", function () {
	this.timeout(40_000);
	const broker = useBookingBroker();
	// the unreachable courier would end a walk with retries; these tests take it off the card
	const broken = COURIERS.find((c) => c.logistic_id === 5)!;
	before(() => {
		broken.active = false;
	});
	after(() => {
		broken.active = true;
	});

	it("worker: the first ranked courier fails definitively → the next one books; the chain is recorded", async () => {
		const s = newSender();
		await rank(s, [7, 2]); // Unwired Courier (no integration) first, then Sandbox Surface
		const o = addOrder(s);
		const { status } = await book(broker(), s, { order_id: o.order_id });
		assert.equal(status, 202);
		const done = await settled(o.order_id);
		assert.equal(done.state, "booked");
		assert.equal(done.courier, "Sandbox Surface");
		const rows = await attemptsOf(o.order_id);
		assert.deepEqual(
			rows.map((r) => [r.logistic_id, r.state, r.mode, r.failure_reason]),
			[
				[7, "failed", "auto", "Unwired Courier has no courier integration"],
				[2, "booked", "auto", null],
			],
		);
		assert.deepEqual(rows[1].chain, [
			{
				logistic_id: 7,
				courier_name: "Unwired Courier",
				reason: "Unwired Courier has no courier integration",
			},
		]);
		// intake never saw the refused attempt fail: booking_in_progress until booked
		assert.deepEqual(
			updates.filter((u) => u.order_id === o.order_id).map((u) => [u.attempt_id, u.seq, u.state]),
			[
				[Number(rows[0].attempt_id), 1, "booking_in_progress"],
				[Number(rows[1].attempt_id), 1, "booking_in_progress"],
				[Number(rows[1].attempt_id), 2, "booked"],
			],
		);
		assert.equal((await ledgerOf(Number(rows[0].attempt_id))).length, 0);
		assert.equal((await ledgerOf(Number(rows[1].attempt_id))).length, 1);
	});

	it("sync: falls over inline and answers 200 with the courier that booked", async () => {
		const s = newSender();
		await rank(s, [7, 1]);
		const o = addOrder(s);
		const { res, status } = await bookSync(broker(), s, { order_id: o.order_id });
		assert.equal(status, 200);
		const rows = await attemptsOf(o.order_id);
		assert.deepEqual(
			rows.map((r) => [r.logistic_id, r.state, r.via]),
			[
				[7, "failed", "sync"],
				[1, "booked", "sync"],
			],
		);
		assert.equal(res.forward_id, `bk_${rows[1].attempt_id}`);
		assert.equal(res.logistic_id, 1);
		assert.equal(res.courier_name, "Sandbox Express");
		assert.equal((await simPackages(o.customer_order_no)).length, 1);
	});

	it("every ranked courier refuses → failed, failure_reason names the chain in plain words (worker and sync)", async () => {
		const s = newSender();
		const chain = [
			`Sandbox Express refused: ${REFUSE}`,
			`Sandbox Surface refused: ${REFUSE}`,
			`Sandbox Lite refused: ${REFUSE}`,
			"Unwired Courier has no courier integration",
		].join("; ");
		const o = addOrder(s, {}, { name: "Asha SIMULATE_REFUSE" });
		await book(broker(), s, { order_id: o.order_id });
		const done = await eventually(async () => finalUpdate(o.order_id), { what: "the walk to end" });
		assert.equal(done.state, "failed");
		assert.equal(done.failure_reason, chain);
		const rows = await attemptsOf(o.order_id);
		assert.deepEqual(
			rows.map((r) => [r.logistic_id, r.state]),
			[
				[1, "failed"],
				[2, "failed"],
				[4, "failed"],
				[7, "failed"],
			],
		);
		assert.equal(rows[0].failure_reason, `Sandbox Express refused: ${REFUSE}`);
		assert.equal(rows[3].failure_reason, chain);
		assert.equal(rows[3].chain.length, 3);

		const o2 = addOrder(s, {}, { name: "Asha SIMULATE_REFUSE" });
		const err: any = await bookSync(broker(), s, { order_id: o2.order_id }).catch((e) => e);
		assert.equal(err.code, 422);
		assert.deepEqual(err.data.body, { error: "booking_failed", message: chain });
		assert.equal(finalUpdate(o2.order_id)?.failure_reason, chain);
	});

	it("skips couriers that do not price the lane (the quote's dropped couriers)", async () => {
		const s = newSender();
		await rank(s, [7, 1, 2]); // Sandbox Express does not price 78xxxx in the fake rates
		const o = addOrder(s, {}, { pincode: "781001" });
		await book(broker(), s, { order_id: o.order_id });
		const done = await settled(o.order_id);
		assert.equal(done.state, "booked");
		const rows = await attemptsOf(o.order_id);
		assert.deepEqual(
			rows.map((r) => r.logistic_id),
			[7, 2],
		);
	});

	it("a forced courier never falls over", async () => {
		const s = newSender();
		const o = addOrder(s, {}, { name: "Asha SIMULATE_REFUSE" });
		await book(broker(), s, { order_id: o.order_id, logistic_id: 2 });
		const done = await settled(o.order_id);
		assert.equal(done.failure_reason, `Sandbox Surface refused: ${REFUSE}`);
		const rows = await attemptsOf(o.order_id);
		assert.deepEqual(
			rows.map((r) => [r.logistic_id, r.state, r.mode]),
			[[2, "failed", "forced"]],
		);
	});
});
