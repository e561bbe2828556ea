/**
 * booking service, POST /v1/shipping/cancel (spec §4.2, §3, §7; lib/booking/cancel.ts) and the
 * internal `booking.orderState` (read-your-writes of GET /v1/orders/status).
 * Real simulator over HTTP, PostgreSQL and Redis; fakes of intake, warehouses
 * and rates in ./setup.ts.
 */
import assert from "node:assert/strict";
import type { ServiceBroker } from "moleculer";
import type { OrderRecord, ShipmentCancelled } from "../../../lib/contracts";
import { SandboxAdapter } from "../../../lib/couriers";
import { exec, getSequelize, select } from "../../../lib/platform/db";
import { as, newSender, rejects } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { outboxEvents } from "../../helpers/outbox";
import { eventually } from "../../helpers/poll";
import {
	addOrder,
	attemptsOf,
	bodyOf,
	book,
	COURIERS,
	down,
	intakeFailures,
	settled,
	simCalls,
	updates,
	useBookingBroker,
} from "./setup";

/** Calls `booking.cancel` as `sender` (role `merchant` unless given). */
function cancel(
	broker: ServiceBroker,
	sender: number,
	params: Record<string, unknown>,
	role?: "merchant_finance",
) {
	return callAs(broker, "booking.cancel", params, as(sender, role)) as Promise<any>;
}

/** Inserts an attempt in `state` (updated now, so the sweeper leaves it alone); returns its id. */
async function insertAt(o: OrderRecord, logistic_id: number, state: string, awb: string | null = null) {
	const c = COURIERS.find((x) => x.logistic_id === logistic_id)!;
	const { rows } = await exec<{ attempt_id: string }>(
		getSequelize(),
		`INSERT INTO booking.attempts (order_id, sender_id, logistic_id, courier_name, mode, state, awb_number, failure_reason)
		 VALUES ($1, $2, $3, $4, 'forced', $5, $6, $7) RETURNING attempt_id`,
		[
			o.order_id,
			o.sender_id,
			logistic_id,
			c.logistic_name,
			state,
			awb,
			state === "failed" ? "refused" : null,
		],
	);
	return Number(rows[0].attempt_id);
}

/** The attempt's ledger rows (kind, paise). */
async function ledgerOf(attempt_id: number): Promise<{ kind: string; amount_paise: number }[]> {
	const rows = await select<{ kind: string; amount_paise: string }>(
		getSequelize(),
		"SELECT kind, amount_paise FROM booking.ledger WHERE attempt_id = $1 ORDER BY id",
		[attempt_id],
	);
	return rows.map((r) => ({ kind: r.kind, amount_paise: Number(r.amount_paise) }));
}

/**
 * Books `o` at courier 1 through the worker and waits for `booked`. Returns the
 * attempt and its charge in paise: the worker's ledger row, written when the
 * attempt was booked, equal to the quoted total.
 */
async function bookedOrder(broker: ServiceBroker, o: OrderRecord) {
	await book(broker, o.sender_id, { order_id: o.order_id, logistic_id: 1 });
	const done = await settled(o.order_id);
	assert.equal(done.state, "booked");
	const [a] = await attemptsOf(o.order_id);
	const [charge] = await ledgerOf(Number(a.attempt_id));
	assert.deepEqual(charge, { kind: "charge", amount_paise: Number(a.charges.total) });
	return { attempt_id: Number(a.attempt_id), awb: a.awb_number as string, charged: charge.amount_paise };
}

/** The expected 200 body of a cancel of order `o`'s attempt `attempt_id` (forced booking). */
function answer(o: OrderRecord, attempt_id: number, awb: string | null, refunded: number) {
	return {
		status: "cancelled",
		awb,
		forward_id: `bk_${attempt_id}`,
		refunded,
		order_id: o.order_id,
		mode: "forced",
	};
}

/** The `order.cancelled` merchant events booking's event outbox holds for an order (record 0160), oldest first. */
const orderCancelledEvents = (order_id: number) =>
	outboxEvents("booking", "order.cancelled", "order_id", order_id);

/** The cancelled order updates intake received for an order. */
const cancelUpdates = (order_id: number) =>
	updates.filter((u) => u.order_id === order_id && u.status === "cancelled");

describe("booking: POST /v1/shipping/cancel and booking.orderState", function () {
	this.timeout(40_000);
	const broker = useBookingBroker();
	// every shipment.cancelled booking broadcasts (record 0159)
	const cancelledEvents: ShipmentCancelled[] = [];
	const announced = (order_id: number) => cancelledEvents.filter((e) => e.order_id === order_id);
	before(async () => {
		broker().createService({
			name: "cancel-listener",
			events: {
				"shipment.cancelled"(ctx: { params: ShipmentCancelled }) {
					cancelledEvents.push(ctx.params);
				},
			},
		});
		await broker().waitForServices(["cancel-listener"]);
	});

	describe("input and access", () => {
		it("400 validation_failed naming each missing or malformed field", async () => {
			const s = newSender();
			const o = addOrder(s);
			const cases: Array<[Record<string, unknown>, string[]]> = [
				[{}, ["order_id: must be a positive integer", "logistic_id: must be a positive integer"]],
				[{ order_id: o.order_id }, ["logistic_id: must be a positive integer"]],
				[{ logistic_id: 1 }, ["order_id: must be a positive integer"]],
			];
			for (const bad of [null, "", "abc", "12a", " 12", 1.5, 0, -3, true, [1], 2 ** 60]) {
				cases.push([{ order_id: bad, logistic_id: 1 }, ["order_id: must be a positive integer"]]);
				cases.push([{ order_id: o.order_id, logistic_id: bad }, ["logistic_id: must be a positive integer"]]);
			}
			for (const [params, details] of cases) {
				const { status, body } = bodyOf(await rejects(() => cancel(broker(), s, params)));
				assert.equal(status, 400, JSON.stringify(params));
				assert.equal(body.error, "validation_failed");
				assert.deepEqual(body.details, details, JSON.stringify(params));
				assert.equal(typeof body.message, "string");
			}
			// digit strings are integers
			const ok = bodyOf(
				await rejects(() => cancel(broker(), s, { order_id: String(o.order_id), logistic_id: "1" })),
			);
			assert.equal(ok.body.error, "not_cancellable");
		});

		it("403 for another sender's order and for a missing order (same answer); read-only roles 403", async () => {
			const owner = newSender();
			const o = addOrder(owner);
			const a = await insertAt(o, 1, "queued");
			const expected = {
				status: 403,
				body: { error: "cannot cancel for another sender", message: "cannot cancel for another sender" },
			};
			const other = newSender();
			assert.deepEqual(
				bodyOf(await rejects(() => cancel(broker(), other, { order_id: o.order_id, logistic_id: 1 }))),
				expected,
			);
			assert.deepEqual(
				bodyOf(
					await rejects(() =>
						cancel(broker(), other, { order_id: o.order_id, logistic_id: 1, sender_id: owner }),
					),
				),
				expected,
			);
			assert.deepEqual(
				bodyOf(await rejects(() => cancel(broker(), owner, { order_id: 987654321, logistic_id: 1 }))),
				expected,
			);
			const ro = bodyOf(
				await rejects(() =>
					cancel(broker(), owner, { order_id: o.order_id, logistic_id: 1 }, "merchant_finance"),
				),
			);
			assert.equal(ro.status, 403);
			assert.equal(ro.body.error, "Read-only role");
			const [row] = await attemptsOf(o.order_id);
			assert.equal(Number(row.attempt_id), a);
			assert.equal(row.state, "queued", "nothing changed");
		});

		it("503 service_unavailable when intake cannot be asked", async () => {
			const s = newSender();
			const o = addOrder(s);
			down.add("intake.getOrder");
			try {
				const { status, body } = bodyOf(
					await rejects(() => cancel(broker(), s, { order_id: o.order_id, logistic_id: 1 })),
				);
				assert.equal(status, 503);
				assert.equal(body.error, "service_unavailable");
			} finally {
				down.delete("intake.getOrder");
			}
		});
	});

	describe("409 not_cancellable", () => {
		it("no booking, a failed booking, a booking at another courier", async () => {
			const s = newSender();
			const o = addOrder(s);
			const none = bodyOf(await rejects(() => cancel(broker(), s, { order_id: o.order_id, logistic_id: 1 })));
			assert.deepEqual(none, {
				status: 409,
				body: {
					error: "not_cancellable",
					message: `order ${o.order_id} cannot be cancelled: it has no booking`,
				},
			});
			await insertAt(o, 1, "failed");
			const failed = bodyOf(
				await rejects(() => cancel(broker(), s, { order_id: o.order_id, logistic_id: 1 })),
			);
			assert.equal(failed.status, 409);
			assert.equal(failed.body.error, "not_cancellable");
			assert.match(failed.body.message, /latest booking failed/);
			await insertAt(o, 2, "queued");
			const other = bodyOf(
				await rejects(() => cancel(broker(), s, { order_id: o.order_id, logistic_id: 1 })),
			);
			assert.equal(other.status, 409);
			assert.equal(
				other.body.message,
				`order ${o.order_id} cannot be cancelled: its booking is queued at Sandbox Surface (logistic_id 2), not at logistic_id 1`,
			);
			assert.deepEqual(
				(await attemptsOf(o.order_id)).map((r) => r.state),
				["failed", "queued"],
			);
		});
	});

	describe("a booked order", () => {
		it("cancels at the courier, refunds the charge once, reports it to intake; a repeat answers the same", async () => {
			const s = newSender();
			const o = addOrder(s);
			const { attempt_id, awb, charged } = await bookedOrder(broker(), o);
			const res = await cancel(broker(), s, { order_id: o.order_id, logistic_id: 1 });
			assert.deepEqual(res, answer(o, attempt_id, awb, charged / 100));
			assert.ok(res.refunded > 0);
			// the refund is in billing's wallet when the cancel answers (record 0161)
			const w: any = await callAs(broker(), "billing.wallet", { limit: 100 }, as(s));
			assert.deepEqual(
				w.data.filter((m: any) => m.kind === "refund").map((m: any) => [m.attempt_id, m.amount]),
				[[attempt_id, res.refunded]],
			);
			const [row] = await attemptsOf(o.order_id);
			assert.equal(row.state, "cancelled");
			assert.ok(row.cancelled_at);
			assert.deepEqual(await ledgerOf(attempt_id), [
				{ kind: "charge", amount_paise: charged },
				{ kind: "refund", amount_paise: charged },
			]);
			const [pkg] = await select<{ cancelled_at: Date | null }>(
				getSequelize(),
				"SELECT cancelled_at FROM simulator.packages WHERE waybill = $1",
				[awb],
			);
			assert.ok(pkg.cancelled_at, "the simulator shows the AWB cancelled");
			// delivered to intake before the answer
			// seq 3 (after queued 1 and booked 2); AWB, courier and logistic cleared
			assert.deepEqual(
				cancelUpdates(o.order_id).map((u) => [
					u.sender_id,
					u.attempt_id,
					u.seq,
					u.state,
					u.awb_number,
					u.courier,
					u.logistic_id,
				]),
				[[s, attempt_id, 3, "not_shipped", null, null, null]],
			);
			// announced before the answer, once
			assert.deepEqual(announced(o.order_id), [
				{ order_id: o.order_id, sender_id: s, awb_number: awb, logistic_id: 1 },
			]);

			// the merchant event, written with the cancel (record 0160)
			const [ev] = await orderCancelledEvents(o.order_id);
			assert.equal(ev.event_id, `order.cancelled:${attempt_id}`);
			assert.equal(ev.sender_id, s);
			assert.deepEqual(ev.data, {
				order_id: o.order_id,
				status: "cancelled",
				awb_number: awb,
				courier: COURIERS.find((c) => c.logistic_id === 1)?.logistic_name,
				logistic_id: 1,
				refunded: charged / 100,
			});

			const again = await cancel(broker(), s, { order_id: o.order_id, logistic_id: "1" });
			assert.deepEqual(again, res);
			assert.equal(announced(o.order_id).length, 1, "a repeat announces nothing");
			assert.equal((await orderCancelledEvents(o.order_id)).length, 1, "nor writes a second event");
			assert.equal((await ledgerOf(attempt_id)).length, 2, "never refunded twice");
			assert.equal(await simCalls(awb, "cancel"), 1, "a repeat does not call the courier");
			assert.equal(
				await callAs(broker(), "booking.getShipment", { sender_id: s, order_id: o.order_id }),
				null,
			);
			// the order may be booked again
			const re = await book(broker(), s, { order_id: o.order_id, logistic_id: 2 });
			assert.equal(re.status, 202);
		});

		it("two cancels at once: one courier outcome, one refund, the same answer", async () => {
			const s = newSender();
			const o = addOrder(s);
			const { attempt_id, charged } = await bookedOrder(broker(), o);
			const [a, b] = await Promise.all([
				cancel(broker(), s, { order_id: o.order_id, logistic_id: 1 }),
				cancel(broker(), s, { order_id: o.order_id, logistic_id: 1 }),
			]);
			assert.deepEqual(a, b);
			assert.equal(a.refunded, charged / 100);
			assert.deepEqual(
				(await ledgerOf(attempt_id)).map((r) => r.kind),
				["charge", "refund"],
			);
			assert.equal(cancelUpdates(o.order_id).length, 1);
			assert.equal(announced(o.order_id).length, 1, "only the cancel that committed announces it");
			assert.equal((await orderCancelledEvents(o.order_id)).length, 1);
		});

		it("an AWB already cancelled at the courier (crash before our commit) is a success on retry", async () => {
			const s = newSender();
			const o = addOrder(s);
			const { awb, charged } = await bookedOrder(broker(), o);
			await new SandboxAdapter("sbx-express").cancel(awb);
			const res = await cancel(broker(), s, { order_id: o.order_id, logistic_id: 1 });
			assert.equal(res.status, "cancelled");
			assert.equal(res.refunded, charged / 100);
		});

		it("422 cancel_failed with the courier's words once the parcel is picked up; nothing changes", async () => {
			const s = newSender();
			const o = addOrder(s);
			const { attempt_id, awb } = await bookedOrder(broker(), o);
			await callAs(broker(), "simulator.emitScan", { awb_number: awb, event: "picked_up" });
			const { status, body } = bodyOf(
				await rejects(() => cancel(broker(), s, { order_id: o.order_id, logistic_id: 1 })),
			);
			assert.equal(status, 422);
			assert.equal(body.error, "cancel_failed");
			assert.equal(body.message, "Shipment is Picked Up; it can no longer be cancelled");
			const [row] = await attemptsOf(o.order_id);
			assert.equal(row.state, "booked");
			assert.deepEqual(
				(await ledgerOf(attempt_id)).map((r) => r.kind),
				["charge"],
			);
			assert.equal(cancelUpdates(o.order_id).length, 0);
		});

		it("503 cancel_unavailable when the courier or rates cannot be reached; a retry then succeeds", async () => {
			const s = newSender();
			const o = addOrder(s);
			// courier 5's code is unknown to the simulator (404): the courier cannot be reached
			const broken = await insertAt(o, 5, "booked", `9${Date.now()}`);
			const unreachable = bodyOf(
				await rejects(() => cancel(broker(), s, { order_id: o.order_id, logistic_id: 5 })),
			);
			assert.equal(unreachable.status, 503);
			assert.equal(unreachable.body.error, "cancel_unavailable");
			assert.match(unreachable.body.message, /Broken Courier could not be reached .* retry/);
			assert.equal((await attemptsOf(o.order_id))[0].state, "booked");
			assert.deepEqual(await ledgerOf(broken), []);

			const o2 = addOrder(s);
			await bookedOrder(broker(), o2);
			down.add("rates.getCourier");
			try {
				const r = bodyOf(await rejects(() => cancel(broker(), s, { order_id: o2.order_id, logistic_id: 1 })));
				assert.equal(r.status, 503);
				assert.equal(r.body.error, "cancel_unavailable");
			} finally {
				down.delete("rates.getCourier");
			}
			assert.equal((await attemptsOf(o2.order_id))[0].state, "booked");
			const retried = await cancel(broker(), s, { order_id: o2.order_id, logistic_id: 1 });
			assert.equal(retried.status, "cancelled");
		});

		it("422 cancel_failed for a courier this build has no integration for", async () => {
			const s = newSender();
			const o = addOrder(s);
			await insertAt(o, 7, "booked", `8${Date.now()}`);
			const { status, body } = bodyOf(
				await rejects(() => cancel(broker(), s, { order_id: o.order_id, logistic_id: 7 })),
			);
			assert.equal(status, 422);
			assert.equal(body.error, "cancel_failed");
			assert.match(body.message, /Unwired Courier has no courier integration/);
		});

		it("the cancelled update reaches intake later when intake is down (relay retries)", async () => {
			const s = newSender();
			const o = addOrder(s);
			await bookedOrder(broker(), o);
			intakeFailures.set(o.order_id, 1);
			const res = await cancel(broker(), s, { order_id: o.order_id, logistic_id: 1 });
			assert.equal(res.status, "cancelled");
			await eventually(async () => cancelUpdates(o.order_id).length === 1, {
				what: "cancelled update relayed",
			});
		});
	});

	describe("a booking not yet at the courier", () => {
		it("queued → cancelled at once, no courier call, refunded 0; a repeat answers the same", async () => {
			const s = newSender();
			const o = addOrder(s);
			const a = await insertAt(o, 2, "queued");
			const res = await cancel(broker(), s, { order_id: o.order_id, logistic_id: 2 });
			assert.deepEqual(res, answer(o, a, null, 0));
			const [row] = await attemptsOf(o.order_id);
			assert.equal(row.state, "cancelled");
			assert.ok(row.cancelled_at);
			assert.equal(await simCalls(String(a), "create"), 0);
			assert.deepEqual(await ledgerOf(a), []);
			assert.equal(cancelUpdates(o.order_id).length, 1);
			assert.deepEqual(announced(o.order_id), [], "no AWB, no page: nothing announced");
			assert.deepEqual(
				(await orderCancelledEvents(o.order_id)).map((e) => e.data),
				[
					{
						order_id: o.order_id,
						status: "cancelled",
						awb_number: null,
						courier: COURIERS.find((c) => c.logistic_id === 2)?.logistic_name,
						logistic_id: 2,
						refunded: 0,
					},
				],
			);
			assert.deepEqual(await cancel(broker(), s, { order_id: o.order_id, logistic_id: 2 }), res);
			// the worker leaves a cancelled attempt alone
			const p: any = await callAs(broker(), "booking.processAttempt", { attempt_id: a });
			assert.equal(p.state, "cancelled");
			assert.equal(await simCalls(String(a), "create"), 0);
		});

		it("queued again after a try (the courier may hold an AWB) → cancel requested; the worker settles it cancelled", async () => {
			const s = newSender();
			const o = addOrder(s);
			const a = await insertAt(o, 1, "queued");
			await exec(getSequelize(), "UPDATE booking.attempts SET tries = 1 WHERE attempt_id = $1", [a]);
			const body = { order_id: o.order_id, logistic_id: 1 };
			assert.deepEqual(await cancel(broker(), s, body), answer(o, a, null, 0));
			const [row] = await attemptsOf(o.order_id);
			assert.equal(row.state, "queued", "not cancelled blind: the worker looks the reference up first");
			assert.ok(row.cancel_requested_at);
			const p: any = await callAs(broker(), "booking.processAttempt", { attempt_id: a });
			assert.equal(p.state, "cancelled");
			const [after] = await attemptsOf(o.order_id);
			assert.equal(after.state, "cancelled");
			assert.equal(await simCalls(String(a), "create"), 0, "never booked at the courier");
			assert.deepEqual(await ledgerOf(a), []);
			await eventually(() => cancelUpdates(o.order_id).length === 1, { what: "the cancelled update" });
			// the worker's settling is the merchant's cancel too: one event, nothing refunded
			assert.deepEqual(
				(await orderCancelledEvents(o.order_id)).map((e) => [
					e.event_id,
					e.data.refunded,
					e.data.logistic_id,
				]),
				[[`order.cancelled:${a}`, 0, 1]],
			);
		});

		it("claimed → cancel requested (awb null, refunded 0), the attempt stays with its worker", async () => {
			const s = newSender();
			const o = addOrder(s);
			const a = await insertAt(o, 1, "claimed");
			const body = { order_id: o.order_id, logistic_id: 1 };
			const res = await cancel(broker(), s, body);
			assert.deepEqual(res, answer(o, a, null, 0));
			const [row] = await attemptsOf(o.order_id);
			assert.equal(row.state, "claimed");
			assert.ok(row.cancel_requested_at);
			const first = new Date(row.cancel_requested_at).getTime();
			assert.deepEqual(await cancel(broker(), s, body), res);
			const [again] = await attemptsOf(o.order_id);
			assert.equal(new Date(again.cancel_requested_at).getTime(), first, "the first request's time is kept");
			assert.equal(cancelUpdates(o.order_id).length, 0, "the worker reports the outcome");
			assert.deepEqual(await orderCancelledEvents(o.order_id), [], "no event before the worker settles it");
		});

		it("a booking that ended failed after a cancel request answers the cancel again", async () => {
			const s = newSender();
			const o = addOrder(s);
			const a = await insertAt(o, 1, "failed");
			await exec(
				getSequelize(),
				"UPDATE booking.attempts SET cancel_requested_at = now() WHERE attempt_id = $1",
				[a],
			);
			const res = await cancel(broker(), s, { order_id: o.order_id, logistic_id: 1 });
			assert.equal(res.forward_id, `bk_${a}`);
			assert.equal(res.awb, null);
			assert.equal(res.refunded, 0);
		});
	});

	describe("booking.orderState", () => {
		it("maps the latest attempt: queued/claimed → booking_in_progress, booked, failed, cancelled → not_shipped", async () => {
			const s = newSender();
			const cases: Array<[string, string, string]> = [
				["queued", "booking_in_progress", "booking_queued"],
				["claimed", "booking_in_progress", "booking_queued"],
				["booked", "booked", "booked"],
				["failed", "failed", "booking_failed"],
				["cancelled", "not_shipped", "cancelled"],
			];
			for (const [attemptState, state, status] of cases) {
				const o = addOrder(s);
				await insertAt(o, 4, "failed"); // an older attempt: only the latest counts
				const awb =
					attemptState === "booked" || attemptState === "cancelled"
						? `7${Date.now()}${attemptState.length}`
						: null;
				const a = await insertAt(o, 2, attemptState, awb);
				const got = await callAs(broker(), "booking.orderState", { sender_id: s, order_id: o.order_id });
				assert.deepEqual(
					got,
					{
						attempt_id: a,
						state,
						status,
						awb_number: state === "booked" ? awb : null,
						courier: state === "booked" ? "Sandbox Surface" : null,
						logistic_id: 2,
						failure_reason: state === "failed" ? "refused" : null,
						direction: "forward",
					},
					attemptState,
				);
			}
		});

		it("null when the order has no attempt or is another sender's", async () => {
			const s = newSender();
			const o = addOrder(s);
			assert.equal(
				await callAs(broker(), "booking.orderState", { sender_id: s, order_id: o.order_id }),
				null,
			);
			await insertAt(o, 1, "queued");
			assert.equal(
				await callAs(broker(), "booking.orderState", { sender_id: newSender(), order_id: o.order_id }),
				null,
			);
			const mine: any = await callAs(broker(), "booking.orderState", { sender_id: s, order_id: o.order_id });
			assert.equal(mine.state, "booking_in_progress");
		});

		it("booking.orderStates answers many orders in the order asked, as orderState answers each (issue 32)", async () => {
			const s = newSender();
			const a = addOrder(s);
			const b = addOrder(s);
			const none = addOrder(s);
			await insertAt(a, 4, "failed");
			await insertAt(a, 2, "booked", `7${Date.now()}9`);
			await insertAt(b, 1, "queued");
			const asked = [
				{ sender_id: s, order_id: b.order_id },
				{ sender_id: s, order_id: none.order_id },
				{ sender_id: newSender(), order_id: a.order_id },
				{ sender_id: s, order_id: a.order_id },
			];
			const got = await callAs(broker(), "booking.orderStates", { orders: asked });
			const each = await Promise.all(asked.map((o) => callAs(broker(), "booking.orderState", o)));
			assert.deepEqual(got, each);
			assert.deepEqual(
				got.map((x) => x?.state ?? null),
				["booking_in_progress", null, null, "booked"],
			);
		});
	});
});

describe("booking: a cancel's money is in billing's wallet when the cancel answers (record 0161)", function () {
	this.timeout(40_000);
	// the periodic relay never runs here: only what a request or the worker relays at once is delivered
	const broker = useBookingBroker({ BOOKING_RELAY_MS: "3600000" });

	it("the charge the relay had not carried yet and the refund, each once: the balance is back to zero", async () => {
		const s = newSender();
		const o = addOrder(s);
		const { attempt_id, charged } = await bookedOrder(broker(), o);
		const wallet = async (): Promise<any> => callAs(broker(), "billing.wallet", { limit: 100 }, as(s));
		assert.deepEqual((await wallet()).data, [], "the charge waits in booking's outbox");
		const res = await cancel(broker(), s, { order_id: o.order_id, logistic_id: 1 });
		assert.equal(res.refunded, charged / 100);
		const w = await wallet();
		assert.deepEqual(w.data.map((m: any) => [m.kind, m.attempt_id, m.amount]).sort(), [
			["charge", attempt_id, charged / 100],
			["refund", attempt_id, charged / 100],
		]);
		assert.equal(w.balance, 0);
	});
});
