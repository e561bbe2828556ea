/**
 * booking service, the worker's retry policy and settlement (issue 6):
 * exponential backoff with jitter in the job options, attempts unsettled for
 * BOOKING_UNSETTLED_MS settled by asking the courier about our reference, a
 * cancel requested while the courier call is in flight (the late AWB
 * cancelled at the courier, nothing charged), the charge recorded exactly once.
 * Real simulator over HTTP, PostgreSQL and Redis; fakes in ./setup.ts.
 */
import assert from "node:assert/strict";
import { BOOKING_QUEUE, jobIdOf } from "../../../lib/booking/settings";
import { bookRequestOf } from "../../../lib/booking/shipment";
import type { OrderRecord } from "../../../lib/contracts";
import { adapterFor, PickupLocationUnknown, pickupLocationOf } from "../../../lib/couriers";
import { exec, getSequelize } from "../../../lib/platform/db";
import { getQueue } from "../../../lib/platform/queue";
import { newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { freePort } from "../../helpers/net";
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
	warehouses,
} from "./setup";
import { ledgerOf } from "./sync-setup";

/** A queued attempt of `o` at courier `logistic_id` created `ageMin` minutes ago (no outbox), total 150 rupees. */
async function oldAttempt(
	o: OrderRecord,
	logistic_id: number,
	extra: { cancel?: boolean } = {},
): Promise<number> {
	const c = COURIERS.find((x) => x.logistic_id === logistic_id)!;
	const charges = {
		freight_charge: 12000,
		cod_charge: 0,
		shipping_charge_tax: 3000,
		total: 15000,
		rto_charge: 0,
		zone: "D",
		weight: 0.5,
	};
	const { rows } = await exec<{ attempt_id: string }>(
		getSequelize(),
		`INSERT INTO booking.attempts (order_id, sender_id, logistic_id, courier_name, mode, state, charges, cancel_requested_at)
		 VALUES ($1, $2, $3, $4, 'forced', 'claimed', $5::jsonb, $6) RETURNING attempt_id`,
		[
			o.order_id,
			o.sender_id,
			logistic_id,
			c.logistic_name,
			JSON.stringify(charges),
			extra.cancel ? new Date() : null,
		],
	);
	return Number(rows[0].attempt_id);
}

/** Makes attempt `id` unsettled for an hour (the sweeper settles it on its next pass). */
async function age(id: number): Promise<void> {
	await exec(
		getSequelize(),
		"UPDATE booking.attempts SET created_at = now() - interval '1 hour', claimed_at = now() WHERE attempt_id = $1",
		[id],
	);
}

/** Books attempt `id` of `o` at courier `logistic_id` directly at the simulator (as a worker that died after the call). */
async function bookAtCourier(o: OrderRecord, logistic_id: number, id: number): Promise<string> {
	const adapter = adapterFor(COURIERS.find((x) => x.logistic_id === logistic_id)!);
	const wh = warehouses.get(o.pickup_address_id!)!;
	const req = bookRequestOf(id, o, wh);
	try {
		return (await adapter.book(req)).awb_number;
	} catch (err) {
		if (!(err instanceof PickupLocationUnknown)) throw err;
		await adapter.registerWarehouse(pickupLocationOf(wh));
		return (await adapter.book(req)).awb_number;
	}
}

async function attempt(id: number): Promise<any> {
	const rows = await exec<any>(getSequelize(), "SELECT * FROM booking.attempts WHERE attempt_id = $1", [id]);
	return rows.rows[0];
}

describe("booking: retry policy and settlement", function () {
	this.timeout(40_000);
	// metrics on, on a port of their own (off in test brokers): settlements are counted in msa_bookings_total
	const savedPort = process.env.METRICS_PORT;
	before(async () => {
		process.env.METRICS_PORT = String(await freePort());
	});
	after(() => {
		if (savedPort === undefined) delete process.env.METRICS_PORT;
		else process.env.METRICS_PORT = savedPort;
	});
	const broker = useBookingBroker();
	/** msa_bookings_total of `courier` (its name) and `outcome` on the booking broker. */
	const bookingsTotal = (courier: string, outcome: string): number =>
		Number(broker().metrics.getMetric("msa_bookings_total")?.get({ courier, outcome })?.value ?? 0);

	it("jobs retry with exponential backoff and jitter, bounded attempts", async () => {
		const s = newSender();
		const o = addOrder(s);
		await book(broker(), s, { order_id: o.order_id, logistic_id: 5 }); // unreachable courier: retried
		const [row] = await attemptsOf(o.order_id);
		const job = await eventually(() => getQueue(BOOKING_QUEUE).getJob(jobIdOf(row.attempt_id)), {
			what: "the attempt's job",
		});
		assert.deepEqual(job.opts.backoff, { type: "exponential", delay: 50, jitter: 0.5 });
		assert.equal(job.opts.attempts, 6);
		const done = await settled(o.order_id);
		assert.equal(done.failure_reason, "Broken Courier could not be reached after 6 tries; no AWB was issued");
	});

	it("unsettled, unknown to the courier → failed in plain words, never left in progress", async () => {
		const s = newSender();
		const o = addOrder(s);
		const id = await oldAttempt(o, 1);
		await age(id);
		await callAs(broker(), "booking.sweep", {});
		const a = await eventually(() => attempt(id), { what: "settled", ok: (r) => r.state !== "claimed" });
		assert.equal(a.state, "failed");
		const reason =
			"Sandbox Express: the booking could not be confirmed with the courier within 2 minutes; no AWB was issued";
		assert.equal(a.failure_reason, reason);
		assert.ok(a.settled_at);
		const upd = await settled(o.order_id);
		assert.deepEqual([upd.state, upd.status, upd.failure_reason], ["failed", "booking_failed", reason]);
		assert.deepEqual(await ledgerOf(id), []);
	});

	it("unsettled, booked at the courier → booked with that AWB and charged once", async () => {
		const s = newSender();
		const o = addOrder(s);
		const id = await oldAttempt(o, 2);
		const awb = await bookAtCourier(o, 2, id);
		await age(id);
		await callAs(broker(), "booking.sweep", {});
		const a = await eventually(() => attempt(id), { what: "settled", ok: (r) => r.state !== "claimed" });
		assert.equal(a.state, "booked");
		assert.equal(a.awb_number, awb);
		assert.equal((await settled(o.order_id)).awb_number, awb);
		const ledger = await ledgerOf(id);
		assert.deepEqual(
			ledger.map((l) => [l.kind, Number(l.amount_paise), l.awb_number]),
			[["charge", 15000, awb]],
		);
		await callAs(broker(), "booking.sweep", {});
		await callAs(broker(), "booking.processAttempt", { attempt_id: id });
		assert.equal((await ledgerOf(id)).length, 1);
	});

	it("unsettled with a cancel requested and an AWB at the courier → the AWB cancelled there, attempt cancelled, no charge", async () => {
		const s = newSender();
		const o = addOrder(s);
		const id = await oldAttempt(o, 1, { cancel: true });
		const awb = await bookAtCourier(o, 1, id);
		await age(id);
		await callAs(broker(), "booking.sweep", {});
		// settled: a look-up that timed out (a loaded machine) only releases it for the next pass
		const a = await eventually(() => attempt(id), {
			what: "settled",
			ok: (r) => ["booked", "failed", "cancelled"].includes(r.state),
		});
		assert.equal(a.state, "cancelled");
		assert.equal(a.awb_number, awb);
		const [pkg] = await simPackages(o.customer_order_no);
		assert.ok(pkg.cancelled_at, "cancelled at the simulator");
		assert.deepEqual(await ledgerOf(id), []);
		const upd = await settled(o.order_id);
		assert.deepEqual([upd.state, upd.status, upd.awb_number], ["not_shipped", "cancelled", null]);
	});

	it("unsettled with a cancel requested and the AWB already cancelled at the courier (another sweeper's) → cancelled with that AWB on record", async () => {
		const s = newSender();
		const o = addOrder(s);
		const id = await oldAttempt(o, 1, { cancel: true });
		const awb = await bookAtCourier(o, 1, id);
		// what a sweeper on another pod did before this one took the attempt over: the AWB cancelled there
		const courier = COURIERS.find((x) => x.logistic_id === 1)!;
		await adapterFor(courier).cancel(awb);
		const cancelledBefore = bookingsTotal(courier.logistic_name, "cancelled");
		await age(id);
		await callAs(broker(), "booking.sweep", {});
		const a = await eventually(() => attempt(id), {
			what: "settled",
			ok: (r) => ["booked", "failed", "cancelled"].includes(r.state),
		});
		assert.deepEqual([a.state, a.awb_number], ["cancelled", awb]);
		assert.match(a.last_error, /already cancelled at the courier/);
		assert.equal(
			bookingsTotal(a.courier_name, "cancelled"),
			cancelledBefore + 1,
			"counted once as cancelled",
		);
		assert.deepEqual(await ledgerOf(id), []);
		const upd = await settled(o.order_id);
		assert.deepEqual([upd.state, upd.status, upd.awb_number], ["not_shipped", "cancelled", null]);
	});

	it("unsettled with a cancel requested and the courier unreachable → never closed: released and asked again, not cancelled blind", async () => {
		const s = newSender();
		const o = addOrder(s);
		const id = await oldAttempt(o, 5, { cancel: true }); // Broken Courier: every call fails
		await age(id);
		await callAs(broker(), "booking.sweep", {});
		const a = await eventually(() => attempt(id), {
			what: "the look-up tried",
			ok: (r) => r.state !== "claimed" || r.last_error !== null,
		});
		assert.ok(["queued", "claimed"].includes(a.state), `still unsettled, not ${a.state}`);
		assert.equal(a.settled_at, null);
		assert.equal(a.awb_number, null);
		assert.equal(
			updates.filter((u) => u.order_id === o.order_id && u.status === "cancelled").length,
			0,
			"intake is not told the booking is cancelled while the courier may hold an AWB",
		);
	});

	it("cancel requested while the courier call is in flight → the late AWB is cancelled at the courier, never booked", async () => {
		const s = newSender();
		// the create hangs past the adapter timeout: the worker is mid-call long enough to request the cancel
		const o = addOrder(s, {}, { name: "Meera SIMULATE_TIMEOUT" });
		await book(broker(), s, { order_id: o.order_id, logistic_id: 1 });
		const [row] = await attemptsOf(o.order_id);
		await eventually(() => attempt(row.attempt_id), {
			what: "claimed",
			ok: (r) => r.state === "claimed",
			every: 5,
		});
		const { count } = await exec(
			getSequelize(),
			"UPDATE booking.attempts SET cancel_requested_at = now() WHERE attempt_id = $1 AND state = 'claimed'",
			[row.attempt_id],
		);
		assert.equal(count, 1);
		const upd = await settled(o.order_id);
		assert.deepEqual([upd.state, upd.status], ["not_shipped", "cancelled"]);
		const a = await attempt(row.attempt_id);
		assert.equal(a.state, "cancelled");
		assert.ok(a.cancelled_at);
		assert.equal(a.last_error, `cancelled while booking: late AWB ${a.awb_number} cancelled at the courier`);
		const pkgs = await simPackages(o.customer_order_no);
		assert.equal(pkgs.length, 1);
		assert.equal(pkgs[0].waybill, a.awb_number);
		assert.ok(pkgs[0].cancelled_at);
		assert.deepEqual(await ledgerOf(row.attempt_id), []);
		assert.equal(await callAs(broker(), "booking.getShipment", { sender_id: s, order_id: o.order_id }), null);
	});

	it("the charge is recorded exactly once even when processAttempt runs again (and concurrently)", async () => {
		const s = newSender();
		const o = addOrder(s);
		await book(broker(), s, { order_id: o.order_id, logistic_id: 4 });
		await settled(o.order_id);
		const [row] = await attemptsOf(o.order_id);
		const again = await Promise.all(
			[1, 2, 3].map(() => callAs(broker(), "booking.processAttempt", { attempt_id: row.attempt_id })),
		);
		for (const r of again as any[]) assert.equal(r.state, "booked");
		const ledger = await ledgerOf(row.attempt_id);
		assert.deepEqual(
			ledger.map((l) => [l.kind, Number(l.amount_paise), l.awb_number]),
			[["charge", 12200, row.awb_number]],
		);
		assert.equal(finalUpdate(o.order_id)?.state, "booked");
	});
});
