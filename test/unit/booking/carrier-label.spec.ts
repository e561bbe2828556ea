/**
 * Courier-issued labels, booking side (spec §4.4, §7 `carrier_label_missing`): a booking with a
 * courier that issues its own label (sandbox `sbx-lite`, logistic_id 4: `SANDBOX_OWN_LABEL_COURIERS`
 * default) settles booked with a `courier_label` outbox row written by the same statement; the relay
 * delivers it to the real documents service, which captures the courier's file (no download needed);
 * a failed capture is redelivered with backoff; other couriers write no such row.
 * Real simulator over HTTP, booking and documents, PostgreSQL and Redis; fakes in ./setup.ts.
 */
import assert from "node:assert/strict";
import { getSequelize, select } from "../../../lib/platform/db";
import { loadServiceSchema } from "../../../lib/platform/system";
import { newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { eventually } from "../../helpers/poll";
import { addOrder, attemptsOf, book, settled, useBookingBroker } from "./setup";
import { bookSync } from "./sync-setup";

/** The booking outbox rows of `kind` whose payload names `order_id`. */
async function outboxOf(kind: string, order_id: number) {
	return select<{
		id: string;
		payload: Record<string, unknown>;
		created_at: Date;
		delivered_at: Date | null;
		tries: number;
		last_error: string | null;
	}>(
		getSequelize(),
		"SELECT * FROM booking.outbox WHERE kind = $1 AND (payload->>'order_id')::bigint = $2 ORDER BY id",
		[kind, order_id],
	);
}

/** The documents.labels row of an order (null when none). */
async function labelRow(order_id: number) {
	const rows = await select<{
		source: string;
		awb_number: string;
		courier_file: Buffer | null;
		courier_content_type: string | null;
		download_count: number;
	}>(getSequelize(), "SELECT * FROM documents.labels WHERE order_id = $1", [order_id]);
	return rows[0] ?? null;
}

/** How many packing slips of `awb` the simulator was asked for. */
async function slipCalls(awb: string): Promise<number> {
	const [r] = await select<{ n: string }>(
		getSequelize(),
		"SELECT count(*) AS n FROM simulator.calls WHERE endpoint = 'label' AND refnum = $1",
		[awb],
	);
	return Number(r.n);
}

describe("booking: courier-issued labels are captured at booking", () => {
	const broker = useBookingBroker();
	const saved = process.env.SANDBOX_OWN_LABEL_COURIERS;

	before(async () => {
		delete process.env.SANDBOX_OWN_LABEL_COURIERS; // the default: sbx-lite issues its own label
		broker().createService(loadServiceSchema("documents"));
		await broker().waitForServices(["documents"], 10_000, 10);
	});
	after(() => {
		if (saved !== undefined) process.env.SANDBOX_OWN_LABEL_COURIERS = saved;
	});

	it("booked with sbx-lite: a courier_label outbox row in the settle statement, delivered; the file is captured without any download", async () => {
		const s = newSender();
		const o = addOrder(s);
		await book(broker(), s, { order_id: o.order_id, logistic_id: 4 });
		const done = await settled(o.order_id);
		assert.equal(done.state, "booked");
		const [a] = await attemptsOf(o.order_id);
		assert.equal(a.courier_label, true);

		const [row, ...more] = await outboxOf("courier_label", o.order_id);
		assert.equal(more.length, 0);
		assert.deepEqual(row.payload, {
			sender_id: s,
			order_id: o.order_id,
			awb_number: a.awb_number,
			logistic_id: 4,
		});
		// the same statement as the booked settlement (one transaction time)
		assert.equal(row.created_at.getTime(), new Date(a.settled_at).getTime());

		const label = await eventually(
			async () => {
				const r = await labelRow(o.order_id);
				return r?.courier_file ? r : null;
			},
			{ what: "the courier label captured" },
		);
		assert.equal(label.source, "courier");
		assert.equal(label.awb_number, a.awb_number);
		assert.equal(label.courier_content_type, "application/pdf");
		assert.equal(label.courier_file?.subarray(0, 5).toString("latin1"), "%PDF-");
		assert.equal(label.download_count, 0, "captured without a download");
		assert.equal(await slipCalls(a.awb_number), 1);
		await eventually(async () => (await outboxOf("courier_label", o.order_id))[0].delivered_at, {
			what: "the courier_label row acknowledged",
		});

		const ship: any = await callAs(broker(), "booking.getShipment", { sender_id: s, order_id: o.order_id });
		assert.equal(ship.courier_label, true);
	});

	it("book/sync with sbx-lite: the label is captured before the 200 answer", async () => {
		const s = newSender();
		const o = addOrder(s);
		const { res, status } = await bookSync(broker(), s, { order_id: o.order_id, logistic_id: 4 });
		assert.equal(status, 200);
		const label = await labelRow(o.order_id);
		assert.equal(label?.awb_number, res.awb);
		assert.equal(label?.courier_file?.subarray(0, 5).toString("latin1"), "%PDF-");
	});

	it("a failed capture (the courier answers 503) is redelivered by the relay with backoff until captured", async () => {
		const s = newSender();
		const o = addOrder(s, {}, { name: "Kavya SIMULATE_LABEL_5XX" });
		await book(broker(), s, { order_id: o.order_id, logistic_id: 4 });
		await settled(o.order_id);
		const [a] = await attemptsOf(o.order_id);
		const label = await eventually(
			async () => {
				const r = await labelRow(o.order_id);
				return r?.courier_file ? r : null;
			},
			{ what: "the courier label captured after a retry" },
		);
		assert.equal(label.courier_content_type, "application/pdf");
		assert.equal(await slipCalls(a.awb_number), 2);
		const row = await eventually(async () => (await outboxOf("courier_label", o.order_id))[0], {
			what: "the row delivered",
			ok: (r) => Boolean(r?.delivered_at),
		});
		// the first delivery failed (the courier's 503), a redelivery captured it
		assert.ok(row.tries >= 2, `delivered at try ${row.tries}`);
		const [first] = await select<{ status: number }>(
			getSequelize(),
			"SELECT status FROM simulator.calls WHERE endpoint = 'label' AND refnum = $1 ORDER BY id LIMIT 1",
			[a.awb_number],
		);
		assert.equal(first.status, 503);
	});

	it("a courier that issues no label of its own (sbx-express): no courier_label row, the shipment is not marked", async () => {
		const s = newSender();
		const o = addOrder(s);
		await book(broker(), s, { order_id: o.order_id, logistic_id: 1 });
		assert.equal((await settled(o.order_id)).state, "booked");
		const [a] = await attemptsOf(o.order_id);
		assert.equal(a.courier_label, false);
		assert.deepEqual(await outboxOf("courier_label", o.order_id), []);
		const ship: any = await callAs(broker(), "booking.getShipment", { sender_id: s, order_id: o.order_id });
		assert.equal(ship.awb_number, a.awb_number);
		assert.equal("courier_label" in ship, false);
		assert.equal(await labelRow(o.order_id), null);
	});
});
