/**
 * The detail of an order without an AWB is kept under its row version (lib/intake/list.ts `unbookedOrderDetail`,
 * lib/intake/list-store.ts `orderRowsOf`, docs/decisions/0131-kept-order-details.md): read again unchanged it is the
 * kept answer and the statement reads no column of the row but its version; any write of the row is seen at the next
 * read; another account never gets it; an order with an AWB is shaped per read. Against the real intake and
 * PostgreSQL (./list-helpers.ts).
 */
import assert from "node:assert/strict";
import { intakeWriters } from "../../../lib/intake/deps";
import { keptOrderDetail } from "../../../lib/intake/list";
import { UNCHANGED } from "../../../lib/intake/list-store";
import { getSequelize } from "../../../lib/platform/db";
import { answerJson } from "../../../lib/platform/shared-answers";
import { as, newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { createOrder, get, moveTo, sql, useReadSide } from "./list-helpers";

describe("GET /v1/orders/{id} kept under the row version", () => {
	const sys = useReadSide();

	const detailOf = (sender: number, id: number) =>
		callAs(sys.broker, "intake.orderDetail", { id: String(id) }, as(sender));

	it("an unchanged order without an AWB is the kept answer, read as its version only", async () => {
		const s = newSender();
		const id = await createOrder(sys, s);
		const first = await detailOf(s, id);
		const kept = keptOrderDetail(s, id);
		assert.ok(kept, "kept after the first read");
		assert.equal(kept.answer, first);
		assert.ok(Object.isFrozen(first) && Object.isFrozen(first.receiver), "the kept answer is frozen");
		const version = (await sql(`SELECT xmin::text AS v FROM intake.orders WHERE order_id = $1`, [id]))[0].v;
		assert.equal(kept.version, version);

		const again = await detailOf(s, id);
		assert.equal(again, first, "the same answer object");
		const w = intakeWriters(getSequelize(), sys.broker);
		assert.equal(await w.orderRow(s, id, version), UNCHANGED);
		const stale = await w.orderRow(s, id, String(Number(version) - 1));
		assert.ok(stale !== null && stale !== UNCHANGED);
		assert.equal(stale.row_version, version);
		assert.equal(stale.receiver_city, "Bengaluru");
		// the body written is the answer's JSON
		const token = await sys.idp.tokenFor(s);
		const r = await get(sys, token, `/v1/orders/${id}`);
		assert.equal(r.status, 200);
		assert.equal(r.text, answerJson(first));
		assert.equal(r.body.order_id, id);
	});

	it("any write of the row is seen at the next read (a new version), and the new answer is kept", async () => {
		const s = newSender();
		const id = await createOrder(sys, s);
		const before = await detailOf(s, id);
		assert.equal(before.receiver.city, "Bengaluru");
		await sql(`UPDATE intake.orders SET receiver_city = 'Mysuru' WHERE order_id = $1`, [id]);
		const after = await detailOf(s, id);
		assert.equal(after.receiver.city, "Mysuru");
		assert.equal(keptOrderDetail(s, id)?.answer, after);
		await moveTo(sys, s, id, "booking_failed");
		const failed = await detailOf(s, id);
		assert.equal(failed.state, "failed");
		assert.equal(failed.failure_code, "courier_refused");
	});

	it("another account's read of a kept order is 404, and does not disturb the owner's kept answer", async () => {
		const s = newSender();
		const other = newSender();
		const id = await createOrder(sys, s);
		const mine = await detailOf(s, id);
		await assert.rejects(detailOf(other, id), (err: { code?: number }) => err.code === 404);
		assert.equal(keptOrderDetail(other, id), undefined);
		const w = intakeWriters(getSequelize(), sys.broker);
		const version = keptOrderDetail(s, id)?.version;
		assert.ok(version);
		assert.equal(
			await w.orderRow(other, id, version),
			null,
			"the owner's version does not answer another sender",
		);
		assert.equal(await detailOf(s, id), mine);
	});

	it("an order with an AWB is shaped per read and not kept", async () => {
		const s = newSender();
		const id = await createOrder(sys, s);
		await detailOf(s, id);
		assert.ok(keptOrderDetail(s, id));
		await moveTo(sys, s, id, "booked");
		const calls = sys.calls.length;
		const a = await detailOf(s, id);
		const b = await detailOf(s, id);
		assert.equal(a.awb_number, `AWB${id}X`);
		assert.notEqual(a, b, "made per read");
		assert.deepEqual(a, b);
		assert.ok(sys.calls.length > calls, "booking and documents asked");
		assert.equal(keptOrderDetail(s, id), undefined, "the answer kept before the AWB is let go");
	});
});
