/**
 * intake: `GET /v1/orders/unshipped/counts` (`intake.unshippedCounts`) and
 * `GET /v1/orders/unshipped/error-types` (`intake.unshippedErrorTypes`)
 * (spec §4.3, §7): the forward and reverse shapes, what each number counts,
 * the exact 400, and the error-type catalogue with the caller's live counts.
 * Real intake on real PostgreSQL; setup in ./unshipped-setup.ts.
 */
import assert from "node:assert/strict";
import { ERROR_TYPE_NAMES } from "../../../lib/contracts/http/intake-input";
import { newSender } from "../../helpers/broker";
import { failure } from "./setup";
import { intakeAs, move, newOrder, useUnshipped } from "./unshipped-setup";

const counts = (sender: number, query: Record<string, unknown> = {}) =>
	intakeAs("intake.unshippedCounts", query, sender);
const errorTypes = (sender: number) => intakeAs("intake.unshippedErrorTypes", {}, sender);

/**
 * An account with a known queue: forward 3 unshipped (one without pickup), 2
 * failed, 1 in queue; reverse 1 unshipped, 1 in queue, 1 failed; plus rows
 * that never count (booked, cancelled, hidden) and another account's order.
 */
async function seed(): Promise<{ sender: number; ids: Record<string, number> }> {
	const sender = newSender();
	const ids: Record<string, number> = {};
	ids.new1 = await newOrder(sender);
	ids.new2 = await newOrder(sender);
	ids.orphan = await newOrder(sender, { pickup: null });
	ids.failed1 = await newOrder(sender);
	await move(sender, ids.failed1, { to: "failed", code: "courier_unreachable" });
	ids.failed2 = await newOrder(sender);
	await move(sender, ids.failed2, { to: "failed", code: null });
	ids.queued = await newOrder(sender);
	await move(sender, ids.queued, { to: "in_queue" });
	ids.booked = await newOrder(sender);
	await move(sender, ids.booked, { to: "booked" });
	ids.cancelled = await newOrder(sender);
	await move(sender, ids.cancelled, { to: "in_queue" });
	await move(sender, ids.cancelled, { to: "cancelled" });
	ids.hidden = await newOrder(sender);
	await intakeAs("intake.hideOrder", { id: String(ids.hidden) }, sender);
	ids.rNew = await newOrder(sender, { reverse: true });
	ids.rQueued = await newOrder(sender, { reverse: true });
	await move(sender, ids.rQueued, { to: "in_queue" });
	ids.rFailed = await newOrder(sender, { reverse: true });
	await move(sender, ids.rFailed, { to: "failed", code: "order_changed" });
	await newOrder(newSender());
	return { sender, ids };
}

describe("intake: unshipped counts and error types (§4.3)", function () {
	this.timeout(60_000);
	useUnshipped();

	it("forward (default, and shipment_type=0): {total, unshipped, failed, in_queue}; total = unshipped + failed + in_queue", async () => {
		const { sender } = await seed();
		const want = { total: 6, unshipped: 3, failed: 2, in_queue: 1 };
		assert.deepEqual(await counts(sender), want);
		assert.deepEqual(await counts(sender, { shipment_type: "0" }), want);
		assert.deepEqual(await counts(sender, { shipment_type: 0 }), want);
		assert.deepEqual(await counts(sender, { shipment_type: "" }), want, "empty: the default");
		assert.deepEqual(await counts(newSender()), { total: 0, unshipped: 0, failed: 0, in_queue: 0 });
	});

	it("reverse (shipment_type=1): {unshipped, failed}, unshipped counting returns not yet booked and being booked", async () => {
		const { sender } = await seed();
		assert.deepEqual(await counts(sender, { shipment_type: "1" }), { unshipped: 2, failed: 1 });
		assert.deepEqual(await counts(newSender(), { shipment_type: "1" }), { unshipped: 0, failed: 0 });
	});

	it("counts follow the orders: a booking, a failure and a hide move them", async () => {
		const { sender, ids } = await seed();
		await move(sender, ids.new1, { to: "booked" });
		assert.deepEqual(await counts(sender), { total: 5, unshipped: 2, failed: 2, in_queue: 1 });
		await move(sender, ids.queued, { to: "failed", code: "courier_refused" });
		assert.deepEqual(await counts(sender), { total: 5, unshipped: 2, failed: 3, in_queue: 0 });
		await intakeAs("intake.hideOrder", { id: String(ids.failed1) }, sender);
		assert.deepEqual(await counts(sender), { total: 4, unshipped: 2, failed: 2, in_queue: 0 });
		await intakeAs("intake.hideOrder", { id: String(ids.rNew) }, sender);
		assert.deepEqual(await counts(sender, { shipment_type: "1" }), { unshipped: 1, failed: 1 });
	});

	it("400 shipment_type: must be 0 (forward) or 1 (reverse) for any other value, naming the key in `field`", async () => {
		const code = "shipment_type: must be 0 (forward) or 1 (reverse)";
		for (const v of ["2", "-1", "01", "forward", "1.0", ["0", "1"]]) {
			const f = await failure(() => counts(newSender(), { shipment_type: v }));
			assert.deepEqual(
				[f.status, f.body],
				[400, { error: code, message: code, field: "shipment_type" }],
				JSON.stringify(v),
			);
		}
	});

	it("error-types: every error_type of the closed list with label, description and the caller's live count", async () => {
		const { sender } = await seed();
		const r: any = await errorTypes(sender);
		assert.deepEqual(Object.keys(r), ["data"]);
		assert.deepEqual(
			r.data.map((e: any) => e.error_type),
			ERROR_TYPE_NAMES,
		);
		for (const e of r.data) {
			assert.deepEqual(Object.keys(e).sort(), ["count", "description", "error_type", "label"]);
			assert.ok(e.label.length > 0 && e.description.length > 20, e.error_type);
		}
		const byType = Object.fromEntries(r.data.map((e: any) => [e.error_type, e.count]));
		assert.deepEqual(byType, {
			pickup_address_missing: 1,
			not_booked: 3,
			in_queue: 2,
			courier_refused: 0,
			courier_unreachable: 1,
			pickup_unavailable: 0,
			order_changed: 1,
			booking_error: 1,
		});
		// each count is what the list answers for that filter
		for (const t of ERROR_TYPE_NAMES) {
			const page: any = await intakeAs("intake.listUnshipped", { error_type: t }, sender);
			assert.equal(page.data.length, byType[t], t);
		}
		const empty: any = await errorTypes(newSender());
		assert.ok(empty.data.every((e: any) => e.count === 0));
		assert.equal(empty.data.length, ERROR_TYPE_NAMES.length);
	});
});
