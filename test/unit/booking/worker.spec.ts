/**
 * booking service, the booking worker: courier refusals and failures in plain words, retries
 * with backoff, idempotent job redelivery, couriers without an integration,
 * the B2B refusal on stored orders.
 * Real simulator over HTTP, PostgreSQL and Redis; fakes of intake,
 * warehouses and rates in ./setup.ts.
 */
import assert from "node:assert/strict";
import { getSequelize, select } from "../../../lib/platform/db";
import { newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { eventually } from "../../helpers/poll";
import {
	ACCEPTED,
	addOrder,
	attemptsOf,
	book,
	finalUpdate,
	insertAttempt,
	settled,
	simCalls,
	simPackages,
	useBookingBroker,
} from "./setup";

describe("booking: worker", function () {
	this.timeout(40_000);
	const broker = useBookingBroker();

	it("courier refusal → failed with the courier's words; a failed order can be booked again", async () => {
		const s = newSender();
		const o = addOrder(s, {}, { pincode: "999999" });
		await book(broker(), s, { order_id: o.order_id, logistic_id: 1 });
		const done = await settled(o.order_id);
		assert.equal(done.state, "failed");
		assert.equal(done.status, "booking_failed");
		assert.equal(done.failure_reason, "Sandbox Express refused: Non serviceable pincode 999999");
		assert.equal(done.failure_code, "courier_refused");
		const [row] = await attemptsOf(o.order_id);
		assert.equal(row.state, "failed");
		assert.equal(row.awb_number, null);
		assert.equal(row.failure_reason, done.failure_reason);
		assert.equal(await callAs(broker(), "booking.getShipment", { sender_id: s, order_id: o.order_id }), null);

		o.consignee.pincode = "400069";
		const again = await book(broker(), s, { order_id: o.order_id });
		assert.equal(again.status, 202);
		assert.notEqual(again.res.idem_key, `bk_${row.attempt_id}`);
		await eventually(async () => finalUpdate(o.order_id)?.state === "booked", { what: "re-booking" });
		const rows = await attemptsOf(o.order_id);
		assert.deepEqual(
			rows.map((r) => r.state),
			["failed", "booked"],
		);
		assert.equal((await simPackages(o.customer_order_no)).length, 1);
	});

	it("SIMULATE_REFUSE → failed with the courier's words", async () => {
		const s = newSender();
		const o = addOrder(s, {}, { name: "Kiran SIMULATE_REFUSE" });
		await book(broker(), s, { order_id: o.order_id, logistic_id: 2 });
		const done = await settled(o.order_id);
		assert.equal(done.state, "failed");
		assert.equal(
			done.failure_reason,
			"Sandbox Surface refused: Shipment rejected by the courier (SIMULATE_REFUSE)",
		);
	});

	it("SIMULATE_5XX → released, retried with backoff, then booked", async () => {
		const s = newSender();
		const o = addOrder(s, {}, { name: "Dev SIMULATE_5XX" });
		await book(broker(), s, { order_id: o.order_id, logistic_id: 2 });
		const done = await settled(o.order_id);
		assert.equal(done.state, "booked");
		assert.match(done.awb_number!, /^\d{15}$/);
		const [row] = await attemptsOf(o.order_id);
		const calls = await select(
			getSequelize(),
			"SELECT endpoint, outcome FROM simulator.calls WHERE refnum = $1 ORDER BY id",
			[String(row.attempt_id)],
		);
		assert.equal(row.tries, 2, JSON.stringify({ row, calls }));
		assert.match(row.last_error, /HTTP 503/);
		assert.equal(await simCalls(String(row.attempt_id), "create", ["503"]), 1);
		assert.equal(await simCalls(String(row.attempt_id), "create", ["booked"]), 1);
		assert.equal((await simPackages(o.customer_order_no)).length, 1);
	});

	it("courier unreachable on every try → failed in plain words after the last try", async () => {
		const s = newSender();
		const o = addOrder(s);
		await book(broker(), s, { order_id: o.order_id, logistic_id: 5 });
		const done = await settled(o.order_id);
		assert.equal(done.state, "failed");
		assert.equal(done.failure_reason, "Broken Courier could not be reached after 6 tries; no AWB was issued");
		assert.equal(done.failure_code, "courier_unreachable");
		const [row] = await attemptsOf(o.order_id);
		assert.equal(row.tries, 6);
		assert.equal(row.ambiguous, true);
	});

	it("job redelivery is idempotent: processAttempt twice (and concurrently) → one AWB", async () => {
		const s = newSender();
		const o = addOrder(s);
		await book(broker(), s, { order_id: o.order_id, logistic_id: 1 });
		const done = await settled(o.order_id);
		const [row] = await attemptsOf(o.order_id);
		for (let i = 0; i < 2; i++) {
			const r: any = await callAs(broker(), "booking.processAttempt", { attempt_id: row.attempt_id });
			assert.deepEqual(r, {
				attempt_id: Number(row.attempt_id),
				state: "booked",
				awb_number: done.awb_number,
			});
		}
		assert.equal(await simCalls(String(row.attempt_id), "create", ACCEPTED), 1);

		// Two deliveries of the same job at once: one claims, the other backs off.
		const o2 = addOrder(s);
		const aid = await insertAttempt(o2, 2);
		const both = await Promise.allSettled([
			callAs(broker(), "booking.processAttempt", { attempt_id: aid }),
			callAs(broker(), "booking.processAttempt", { attempt_id: aid }),
		]);
		const ok = both.filter((r) => r.status === "fulfilled").map((r: any) => r.value);
		assert.ok(ok.length >= 1);
		for (const r of both.filter((x) => x.status === "rejected") as PromiseRejectedResult[]) {
			assert.match(r.reason.message, /being processed by another worker/);
		}
		const booked = await eventually(async () => (await attemptsOf(o2.order_id))[0].awb_number, {
			what: "concurrent booking",
		});
		assert.equal((await simPackages(o2.customer_order_no)).length, 1);
		assert.equal((await simPackages(o2.customer_order_no))[0].waybill, booked);
		assert.equal(await simCalls(String(aid), "create", ACCEPTED), 1);
	});

	it("a courier without an integration → failed in plain words, without a courier call", async () => {
		const s = newSender();
		const o = addOrder(s);
		const { status } = await book(broker(), s, { order_id: o.order_id, logistic_id: 7 });
		assert.equal(status, 202);
		const done = await settled(o.order_id);
		assert.equal(done.state, "failed");
		assert.equal(done.failure_reason, "Unwired Courier has no courier integration");
		assert.equal(done.failure_code, "booking_error");
		const [row] = await attemptsOf(o.order_id);
		assert.equal(row.tries, 1, "not retried");
		assert.equal(row.ambiguous, false);
	});

	it("unsupported_channel in the worker too", async () => {
		const s = newSender();
		const o = addOrder(s, { channel: "b2b" });
		const aid = await insertAttempt(o, 1);
		const r: any = await callAs(broker(), "booking.processAttempt", { attempt_id: aid });
		assert.equal(r.state, "failed");
		const [row] = await attemptsOf(o.order_id);
		assert.match(row.failure_reason, /^unsupported_channel: B2B \/ multi-box consignments are not supported/);
		assert.equal((await settled(o.order_id)).failure_code, "order_changed");
		assert.equal(await simCalls(String(aid), "create"), 0);
	});
});
