/**
 * intake: `POST /v1/orders/{id}/hide` (`intake.hideOrder`; spec §3, §4.3,
 * §7): the answer, `closed` / `refunded` from `booking.closeCancellation`
 * (called with the caller's account), hidden orders leaving every list and
 * count, idempotency, 404 without asking booking, 503 when booking cannot be
 * asked (nothing hidden), and the roles. Real intake on real PostgreSQL with
 * a fake booking (./unshipped-setup.ts).
 */
import assert from "node:assert/strict";
import { type Role, userFor } from "../../../lib/platform/auth";
import { getSequelize, select } from "../../../lib/platform/db";
import { newSender, rejects } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { broker, failure } from "./setup";
import {
	bookingDown,
	closeAnswers,
	closeCalls,
	intakeAs,
	move,
	newOrder,
	useUnshipped,
} from "./unshipped-setup";

const hide = (sender: number, id: number | string, role?: Role) =>
	intakeAs("intake.hideOrder", { id: String(id) }, sender, role);

async function hiddenAt(id: number): Promise<Date | null> {
	const [r] = await select<{ hidden_at: Date | null }>(
		getSequelize(),
		"SELECT hidden_at FROM intake.orders WHERE order_id = $1",
		[id],
	);
	return r.hidden_at;
}

/** The calls booking received for `order_id`. */
const callsFor = (order_id: number) => closeCalls.filter((c) => c.order_id === order_id);

describe("intake: hide (POST /v1/orders/{id}/hide, §4.3)", function () {
	this.timeout(60_000);
	useUnshipped();

	it("answers {order_id, order_no, hidden:true, closed, refunded} and stamps hidden_at, asking booking.closeCancellation with the caller's account", async () => {
		const sender = newSender();
		const id = await newOrder(sender, { ref: "HIDE-1" });
		const r = await hide(sender, id);
		assert.deepEqual(r, { order_id: id, order_no: "HIDE-1", hidden: true, closed: false, refunded: 0 });
		assert.deepEqual(callsFor(id), [{ sender_id: sender, order_id: id }]);
		assert.ok((await hiddenAt(id)) instanceof Date);
	});

	it("reports the cancellation booking closed and its refund (rupees)", async () => {
		const sender = newSender();
		const id = await newOrder(sender, { ref: "HIDE-2" });
		await move(sender, id, { to: "booked" });
		await move(sender, id, { to: "cancelled" });
		closeAnswers.set(id, { closed: true, refunded: 121.5 });
		const r = await hide(sender, id);
		assert.deepEqual(r, { order_id: id, order_no: "HIDE-2", hidden: true, closed: true, refunded: 121.5 });
		assert.deepEqual(callsFor(id), [{ sender_id: sender, order_id: id }]);
	});

	it("is idempotent: hiding again answers the same order, keeps the first hidden_at and reads the refund from booking again", async () => {
		const sender = newSender();
		const id = await newOrder(sender, { ref: "HIDE-3" });
		closeAnswers.set(id, { closed: true, refunded: 50 });
		const first = await hide(sender, id);
		const at = await hiddenAt(id);
		closeAnswers.set(id, { closed: false, refunded: 50 });
		const second = await hide(sender, id);
		assert.deepEqual(first, { order_id: id, order_no: "HIDE-3", hidden: true, closed: true, refunded: 50 });
		assert.deepEqual(second, { order_id: id, order_no: "HIDE-3", hidden: true, closed: false, refunded: 50 });
		assert.deepEqual(await hiddenAt(id), at);
		assert.equal(callsFor(id).length, 2);
	});

	it("hidden orders leave the unshipped list, its counts and error-type counts, and the orders list", async () => {
		const sender = newSender();
		const keep = await newOrder(sender);
		const gone = await newOrder(sender);
		const failed = await newOrder(sender);
		await move(sender, failed, { to: "failed", code: "courier_refused" });
		const booked = await newOrder(sender);
		await move(sender, booked, { to: "booked" });
		const ids = async (action: "intake.listUnshipped" | "intake.listOrders") =>
			(await intakeAs(action, {}, sender)).data.map((x) => x.order_id);
		const typeCount = async (t: string) =>
			(await intakeAs("intake.unshippedErrorTypes", {}, sender)).data.find((e) => e.error_type === t)?.count;

		assert.deepEqual(await ids("intake.listUnshipped"), [failed, gone, keep]);
		assert.deepEqual(await intakeAs("intake.unshippedCounts", {}, sender), {
			total: 3,
			unshipped: 2,
			failed: 1,
			in_queue: 0,
		});
		assert.deepEqual(await ids("intake.listOrders"), [booked, failed, gone, keep]);

		for (const id of [gone, failed, booked]) await hide(sender, id);
		assert.deepEqual(await ids("intake.listUnshipped"), [keep]);
		assert.deepEqual(await intakeAs("intake.unshippedCounts", {}, sender), {
			total: 1,
			unshipped: 1,
			failed: 0,
			in_queue: 0,
		});
		assert.equal(await typeCount("courier_refused"), 0);
		assert.equal(await typeCount("not_booked"), 1);
		assert.deepEqual(await ids("intake.listOrders"), [keep]);
	});

	it("any of the caller's orders can be hidden, booked or being booked too (the courier is never asked; the booking goes on)", async () => {
		const sender = newSender();
		const queued = await newOrder(sender);
		await move(sender, queued, { to: "in_queue" });
		const r = await hide(sender, queued);
		assert.equal(r.hidden, true);
		const [row] = await select<{ state: string; status: string }>(
			getSequelize(),
			"SELECT state, status FROM intake.orders WHERE order_id = $1",
			[queued],
		);
		assert.deepEqual(row, { state: "booking_in_progress", status: "booking_queued" }, "state untouched");
		// the booking still reaches the hidden order
		await move(sender, queued, { to: "booked" });
		const [after] = await select<{ state: string }>(
			getSequelize(),
			"SELECT state FROM intake.orders WHERE order_id = $1",
			[queued],
		);
		assert.equal(after.state, "booked");
	});

	it("404 order not found for another account's or a missing order, without asking booking; 400 for a bad path id", async () => {
		const owner = newSender();
		const id = await newOrder(owner);
		for (const [sender, oid] of [
			[newSender(), id],
			[owner, 987654321],
		] as const) {
			const f = await failure(() => hide(sender, oid));
			assert.deepEqual([f.status, f.body], [404, { error: "order not found", message: "order not found" }]);
		}
		assert.equal(callsFor(id).length, 0);
		assert.equal(await hiddenAt(id), null);
		for (const bad of ["abc", "0", "-2", "3.0"]) {
			const f = await failure(() => hide(owner, bad));
			assert.deepEqual([f.status, f.body.error, f.body.field], [400, "validation_failed", "id"], bad);
		}
	});

	it("503 service_unavailable when booking cannot close the cancellation; nothing is hidden, a retry hides", async () => {
		const sender = newSender();
		const id = await newOrder(sender);
		bookingDown.add("closeCancellation");
		const f = await failure(() => hide(sender, id));
		assert.deepEqual([f.status, f.body.error], [503, "service_unavailable"]);
		assert.equal(await hiddenAt(id), null);
		const page: any = await intakeAs("intake.listUnshipped", {}, sender);
		assert.deepEqual(
			page.data.map((x: any) => x.order_id),
			[id],
		);
		bookingDown.clear();
		assert.equal((await hide(sender, id)).hidden, true);
		assert.ok((await hiddenAt(id)) instanceof Date);
	});

	it("read-only roles get 403 Read-only role, a role without orders.write 403 forbidden: nothing hidden, booking not asked", async () => {
		const sender = newSender();
		const id = await newOrder(sender);
		for (const role of ["merchant_finance", "merchant_support", "merchant_staff"] as Role[]) {
			const err = await rejects(() => hide(sender, id, role));
			assert.equal(err.code, 403);
			assert.equal(err.data.body.error, "Read-only role");
		}
		const user = { ...userFor(sender), role: "merchant_viewer" as Role, caps: [], read_only: false };
		const err = await rejects(() =>
			callAs(broker(), "intake.hideOrder", { id: String(id) }, { meta: { user } }),
		);
		assert.deepEqual([err.code, err.data.body.error, err.data.body.cap], [403, "forbidden", "orders.write"]);
		assert.equal(await hiddenAt(id), null);
		assert.equal(callsFor(id).length, 0);
		assert.equal((await hide(sender, id, "merchant_ops")).hidden, true);
	});
});
