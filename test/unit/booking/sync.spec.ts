/**
 * booking service, POST /v1/shipping/book/sync (spec §4.2, §3, §7): the 200
 * answer, 422 booking_failed with the courier's words, transient failures and
 * the sync budget handed to the worker (202), input and order checks, the
 * charge and the credit check, sync racing async on one order.
 * Real simulator over HTTP, PostgreSQL and Redis; fakes in ./setup.ts.
 */
import assert from "node:assert/strict";
import type { ServiceBroker } from "moleculer";
import { exec, getSequelize, select } from "../../../lib/platform/db";
import { LABEL_LINK_PREFIX, verifyLabelToken } from "../../../lib/shared/label-link";
import { newSender, rejects } from "../../helpers/broker";
import { eventually } from "../../helpers/poll";
import {
	ACCEPTED,
	addOrder,
	attemptsOf,
	bodyOf,
	book,
	finalUpdate,
	readsForBooking,
	settled,
	simCalls,
	simPackages,
	updates,
	useBookingBroker,
} from "./setup";
import { bookSync, ledgerOf } from "./sync-setup";

/** The rejection of a bookSync call: HTTP status and body. */
async function refused(broker: ServiceBroker, sender: number, params: Record<string, unknown>) {
	return bodyOf(await rejects(() => bookSync(broker, sender, params)));
}

/** Overrides the booking service's sync budget for `fn`. */
async function withBudget<T>(broker: ServiceBroker, ms: number, fn: () => Promise<T>): Promise<T> {
	const svc = broker.getLocalService("booking") as unknown as { timings: { syncBudgetMs: number } };
	const saved = svc.timings.syncBudgetMs;
	svc.timings.syncBudgetMs = ms;
	try {
		return await fn();
	} finally {
		svc.timings.syncBudgetMs = saved;
	}
}

describe("booking: POST /v1/shipping/book/sync", function () {
	this.timeout(40_000);
	const broker = useBookingBroker();

	it("200 booked with the AWB inline; charged once; intake told before the answer; no job left", async () => {
		const s = newSender();
		const o = addOrder(s);
		const { res, status } = await bookSync(broker(), s, { order_id: o.order_id, logistic_id: 2 });
		assert.equal(status, 200);
		const [row] = await attemptsOf(o.order_id);
		assert.deepEqual(res, {
			status: "booked",
			awb: row.awb_number,
			forward_id: `bk_${row.attempt_id}`,
			logistic_id: 2,
			order_id: o.order_id,
			courier_name: "Sandbox Surface",
			label_url: res.label_url,
		});
		assert.match(res.awb, /^15\d{13}$/);
		// label_url: the AWB's signed link (lib/shared/label-link.ts), relative to the API base
		assert.ok(res.label_url.startsWith(LABEL_LINK_PREFIX), res.label_url);
		assert.match(res.label_url, /^\/v1\/documents\/label\/t\/15\d{13}\.[A-Za-z0-9_-]{43}$/);
		assert.equal(verifyLabelToken(res.label_url.slice(LABEL_LINK_PREFIX.length)), row.awb_number);
		assert.equal(row.state, "booked");
		assert.equal(row.via, "sync");
		assert.equal(row.direction, "forward");
		// both order updates were acknowledged before the answer (read-your-writes)
		const mine = updates.filter((u) => u.order_id === o.order_id).map((u) => [u.seq, u.state]);
		assert.deepEqual(mine, [
			[1, "booking_in_progress"],
			[2, "booked"],
		]);
		const charges = await ledgerOf(row.attempt_id);
		assert.equal(charges.length, 1);
		assert.equal(charges[0].kind, "charge");
		assert.equal(Number(charges[0].amount_paise), 120_00); // fake quote total 118 + logistic_id
		assert.equal(charges[0].awb_number, res.awb);
		// its job was never needed: the delayed enqueue row is closed, not due
		const jobs = await select<{ delivered_at: Date | null; last_error: string | null }>(
			getSequelize(),
			"SELECT delivered_at, last_error FROM booking.outbox WHERE kind = 'enqueue_booking' AND (payload->>'attempt_id')::bigint = $1",
			[row.attempt_id],
		);
		assert.equal(jobs.length, 1);
		assert.ok(jobs[0].delivered_at);
		assert.match(String(jobs[0].last_error), /not needed/);
		assert.equal((await simPackages(o.customer_order_no)).length, 1);

		// booked now: a second sync (or async) booking is 409 already_booked
		const again = await refused(broker(), s, { order_id: o.order_id, logistic_id: 2 });
		assert.equal(again.status, 409);
		assert.equal(again.body.error, "already_booked");
	});

	it("422 booking_failed with the courier's words when the forced courier refuses", async () => {
		const s = newSender();
		const o = addOrder(s, {}, { name: "Kiran SIMULATE_REFUSE" });
		const r = await refused(broker(), s, { order_id: o.order_id, logistic_id: 1 });
		assert.equal(r.status, 422);
		assert.deepEqual(r.body, {
			error: "booking_failed",
			message: "Sandbox Express refused: Shipment rejected by the courier (SIMULATE_REFUSE)",
		});
		const rows = await attemptsOf(o.order_id);
		assert.deepEqual(
			rows.map((x) => [x.state, x.logistic_id]),
			[["failed", 1]],
		);
		assert.equal(rows[0].failure_reason, r.body.message);
		assert.equal(finalUpdate(o.order_id)?.state, "failed");
		assert.deepEqual(await ledgerOf(rows[0].attempt_id), []);
	});

	it("a transient courier failure (5xx) → 202 with the async body, then the worker books it", async () => {
		const s = newSender();
		const o = addOrder(s, {}, { name: "Dev SIMULATE_5XX" });
		const { res, status } = await bookSync(broker(), s, { order_id: o.order_id, logistic_id: 2 });
		assert.equal(status, 202);
		const [row] = await attemptsOf(o.order_id);
		assert.deepEqual(res, { status: "queued", idem_key: `bk_${row.attempt_id}` });
		const booked = await eventually(async () => (await attemptsOf(o.order_id))[0], {
			what: "the worker to book it",
			ok: (a) => a.state === "booked",
		});
		assert.equal(booked.via, "sync");
		assert.equal((await settled(o.order_id)).state, "booked");
		assert.equal(await simCalls(String(row.attempt_id), "create", ["503"]), 1);
		assert.equal(await simCalls(String(row.attempt_id), "create", ACCEPTED), 1);
		assert.equal((await ledgerOf(row.attempt_id)).length, 1);
	});

	it("the sync budget running out → 202 (AUTO: mode auto); the booking completes, one AWB", async () => {
		const s = newSender();
		const o = addOrder(s);
		const { res, status } = await withBudget(broker(), 0, () =>
			bookSync(broker(), s, { order_id: o.order_id }),
		);
		assert.equal(status, 202);
		const [row] = await attemptsOf(o.order_id);
		assert.deepEqual(res, { status: "queued", mode: "auto", idem_key: `bk_${row.attempt_id}` });
		await eventually(async () => (await attemptsOf(o.order_id))[0]?.state === "booked", {
			what: "the booking to complete",
		});
		assert.equal((await simPackages(o.customer_order_no)).length, 1);
		assert.equal((await ledgerOf(row.attempt_id)).length, 1);
	});

	it("book, book/sync and reverse read the order for booking (intake.getOrder with for_booking)", async () => {
		// intake's status reads ask booking only about orders read so (docs/decisions/0129-status-without-booking.md)
		const s = newSender();
		const [a, b, r] = [addOrder(s), addOrder(s), addOrder(s, { direction: "reverse" })];
		const before = readsForBooking.length;
		await book(broker(), s, { order_id: a.order_id, logistic_id: 2 });
		await bookSync(broker(), s, { order_id: b.order_id, logistic_id: 2 });
		await bookSync(broker(), s, { order_id: r.order_id, logistic_id: 3, operation: "reverse" });
		assert.deepEqual(readsForBooking.slice(before), [a.order_id, b.order_id, r.order_id]);
		await settled(a.order_id);
	});

	it("reverse: operation reverse books a return order with its courier", async () => {
		const s = newSender();
		const o = addOrder(s, { direction: "reverse" });
		const { res, status } = await bookSync(broker(), s, {
			order_id: o.order_id,
			logistic_id: 3,
			operation: "reverse",
		});
		assert.equal(status, 200);
		assert.equal(res.courier_name, "Sandbox Reverse");
		const [row] = await attemptsOf(o.order_id);
		assert.equal(row.direction, "reverse");
		assert.equal(row.state, "booked");
	});

	it("400s: malformed ids, unknown operation, reverse without a courier, operation vs the order's direction", async () => {
		const s = newSender();
		const fwd = addOrder(s);
		const ret = addOrder(s, { direction: "reverse" });
		const ids = "order_id and logistic_id must be positive integers";
		for (const body of [
			{},
			{ order_id: "abc" },
			{ order_id: 0 },
			{ order_id: 1.5 },
			{ order_id: fwd.order_id, logistic_id: "x" },
			{ order_id: fwd.order_id, logistic_id: -2 },
		]) {
			const r = await refused(broker(), s, body);
			assert.equal(r.status, 400, JSON.stringify(body));
			assert.deepEqual(r.body, { error: ids, message: ids });
		}
		const cases: Array<[Record<string, unknown>, string]> = [
			[{ order_id: fwd.order_id, operation: "ship" }, "operation: must be book or reverse"],
			[
				{ order_id: ret.order_id, operation: "reverse" },
				"logistic_id: required for operation reverse (AUTO books forward shipments only)",
			],
			[
				{ order_id: fwd.order_id, logistic_id: 3, operation: "reverse" },
				`operation: reverse books return orders; order ${fwd.order_id} is a forward order (use book)`,
			],
			[
				{ order_id: ret.order_id, logistic_id: 3 },
				`operation: book books forward orders; order ${ret.order_id} is a return order (use reverse)`,
			],
		];
		for (const [body, detail] of cases) {
			const r = await refused(broker(), s, body);
			assert.equal(r.status, 400, JSON.stringify(body));
			assert.equal(r.body.error, "validation_failed");
			assert.deepEqual(r.body.details, [detail]);
		}
		assert.deepEqual(await attemptsOf(fwd.order_id), []);
		assert.deepEqual(await attemptsOf(ret.order_id), []);
	});

	it("the same checks as book: 403 another sender, 400 unknown_logistic, 422 lane_not_priced", async () => {
		const s = newSender();
		const o = addOrder(s);
		const foreign = await refused(broker(), newSender(), { order_id: o.order_id, logistic_id: 1 });
		assert.equal(foreign.status, 403);
		assert.equal(foreign.body.error, "cannot create booking for another sender");
		const unknown = await refused(broker(), s, { order_id: o.order_id, logistic_id: 99 });
		assert.equal(unknown.status, 400);
		assert.equal(unknown.body.error, "unknown_logistic");
		const far = addOrder(s, {}, { pincode: "799999" });
		const lane = await refused(broker(), s, { order_id: far.order_id });
		assert.equal(lane.status, 422);
		assert.equal(lane.body.error, "lane_not_priced");
	});

	it("409 credit_limit_exceeded when the quoted total is beyond the account's credit limit; nothing committed", async () => {
		const s = newSender();
		const o = addOrder(s);
		await exec(
			getSequelize(),
			"INSERT INTO booking.accounts (sender_id, credit_limit_paise) VALUES ($1, 100)",
			[s],
		);
		const r = await refused(broker(), s, { order_id: o.order_id, logistic_id: 1 });
		assert.equal(r.status, 409);
		assert.equal(r.body.error, "credit_limit_exceeded");
		const viaAsync = bodyOf(await rejects(() => book(broker(), s, { order_id: o.order_id, logistic_id: 1 })));
		assert.equal(viaAsync.status, 409);
		assert.equal(viaAsync.body.error, "credit_limit_exceeded");
		assert.deepEqual(await attemptsOf(o.order_id), []);
		await exec(
			getSequelize(),
			"UPDATE booking.accounts SET credit_limit_paise = 1000000 WHERE sender_id = $1",
			[s],
		);
		const ok = await bookSync(broker(), s, { order_id: o.order_id, logistic_id: 1 });
		assert.equal(ok.status, 200);
	});

	it("sync and async racing on one order: one wins, the other is 409; one AWB at the courier", async () => {
		const s = newSender();
		const o = addOrder(s);
		const results = await Promise.allSettled([
			bookSync(broker(), s, { order_id: o.order_id, logistic_id: 1 }),
			book(broker(), s, { order_id: o.order_id, logistic_id: 1 }),
			bookSync(broker(), s, { order_id: o.order_id, logistic_id: 1 }),
		]);
		const ok = results.filter((r) => r.status === "fulfilled");
		const no = results.filter((r) => r.status === "rejected").map((r) => bodyOf(r.reason));
		assert.equal(ok.length, 1, JSON.stringify(no));
		for (const r of no) {
			assert.equal(r.status, 409);
			assert.ok(["booking_in_progress", "already_booked"].includes(r.body.error));
		}
		await eventually(async () => (await attemptsOf(o.order_id))[0]?.state === "booked", { what: "booked" });
		assert.equal((await attemptsOf(o.order_id)).length, 1);
		assert.equal((await simPackages(o.customer_order_no)).length, 1);
	});
});
