/**
 * intake: `PATCH /v1/orders/unshipped/{id}` (`intake.editUnshipped`; spec §3,
 * §4.3, §7): the allow-list of §2.1 receiver names, validation exactly as on
 * create, `changed`, 409 `not_editable` (booked, being booked — also when only
 * booking knows it yet —, cancelled, hidden, past the 30-day window), 404, the
 * roles, and an edit racing a booking update. Real intake on real PostgreSQL;
 * setup in ./unshipped-setup.ts.
 */
import assert from "node:assert/strict";
import { EDIT_WINDOW_DAYS, EDITABLE_FIELDS } from "../../../lib/contracts/http/intake-input";
import type { Role } from "../../../lib/platform/auth";
import { userFor } from "../../../lib/platform/auth";
import { exec, getSequelize, select } from "../../../lib/platform/db";
import { newSender, rejects } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { book, broker, failure, forwardBody, warehouseOf, withField } from "./setup";
import {
	bookingDown,
	bookingStates,
	intakeAs,
	move,
	newOrder,
	stateCalls,
	useUnshipped,
} from "./unshipped-setup";

const edit = (sender: number, id: number | string, body: Record<string, unknown>, role?: Role) =>
	intakeAs("intake.editUnshipped", { ...body, id: String(id) }, sender, role);

const RECEIVER_COLUMNS = EDITABLE_FIELDS.map((k) => `receiver_${k}`);

/** The order's receiver columns, edited_at and updated_at. */
async function rowOf(id: number): Promise<Record<string, any>> {
	const [r] = await select<Record<string, any>>(
		getSequelize(),
		`SELECT ${RECEIVER_COLUMNS.join(", ")}, edited_at, updated_at, state, status FROM intake.orders WHERE order_id = $1`,
		[id],
	);
	return r;
}

/** Expects 409 not_editable with `reason`, the row unchanged. */
async function refused(sender: number, id: number, reason: string) {
	const before = await rowOf(id);
	const f = await failure(() => edit(sender, id, { city: "Mysuru" }));
	assert.equal(f.status, 409, reason);
	assert.equal(f.body.error, "not_editable");
	assert.equal(f.body.reason, reason);
	assert.equal(typeof f.body.message, "string");
	assert.deepEqual(await rowOf(id), before, "nothing written");
}

describe("intake: unshipped edit (PATCH /v1/orders/unshipped/{id}, §4.3)", function () {
	this.timeout(60_000);
	useUnshipped();

	it("writes the sent buyer fields, answers {order_id, status, changed} with only the fields whose value changed, stamps edited_at", async () => {
		const sender = newSender();
		const id = await newOrder(sender);
		const before = await rowOf(id);
		assert.equal(before.edited_at, null);
		const r = await edit(sender, id, {
			name: "Asha Verma", // unchanged
			city: "  Mysuru ",
			mobile_no: "+91 91234-56789",
			landmark: "Opp. park",
			address_2: null,
		});
		assert.deepEqual(r, {
			order_id: id,
			status: "new",
			changed: ["address_2", "landmark", "city", "mobile_no"],
		});
		const after = await rowOf(id);
		assert.deepEqual(
			RECEIVER_COLUMNS.map((c) => after[c]),
			[
				"Asha Verma",
				"14, 2nd Cross, Indiranagar",
				null,
				"Opp. park",
				"Mysuru",
				"Karnataka",
				"560038",
				"9123456789",
			],
		);
		assert.ok(after.edited_at instanceof Date && after.edited_at >= before.updated_at);
		assert.ok(after.updated_at > before.updated_at);

		// the same values again: nothing changed, edited_at kept
		const again = await edit(sender, id, { city: "Mysuru", mobile_no: "09123456789", address_2: "" });
		assert.deepEqual(again, { order_id: id, status: "new", changed: [] });
		assert.deepEqual(await rowOf(id), after);

		// the list row shows the edit
		const page: any = await intakeAs("intake.listUnshipped", {}, sender);
		assert.equal(page.data[0].address.city, "Mysuru");
		assert.equal(page.data[0].edited_at, after.edited_at.toISOString());
	});

	it("edits every allow-listed field, answering them in allow-list order", async () => {
		const sender = newSender();
		const id = await newOrder(sender);
		const body = {
			mobile_no: "7000000001",
			pincode: 110001,
			state: "Delhi",
			city: "New Delhi",
			landmark: "Near gate 2",
			address_2: "Block C",
			address_1: "221B, Janpath",
			name: "Ravi Kumar",
		};
		const r = await edit(sender, id, body);
		assert.deepEqual(r.changed, EDITABLE_FIELDS);
		const after = await rowOf(id);
		assert.deepEqual(
			RECEIVER_COLUMNS.map((c) => after[c]),
			["Ravi Kumar", "221B, Janpath", "Block C", "Near gate 2", "New Delhi", "Delhi", "110001", "7000000001"],
		);
	});

	it("an empty body is a no-op 200; sender_id is stripped (another account's id changes nothing)", async () => {
		const sender = newSender();
		const id = await newOrder(sender);
		const before = await rowOf(id);
		assert.deepEqual(await edit(sender, id, {}), { order_id: id, status: "new", changed: [] });
		const r = await edit(sender, id, { sender_id: sender + 1, city: "Hubli" });
		assert.deepEqual(r.changed, ["city"]);
		const [owner] = await select<{ sender_id: string }>(
			getSequelize(),
			"SELECT sender_id FROM intake.orders WHERE order_id = $1",
			[id],
		);
		assert.equal(Number(owner.sender_id), sender);
		assert.notDeepEqual(await rowOf(id), before);
	});

	it("400 validation_failed naming any key outside the allow-list in `field`; nothing written", async () => {
		const sender = newSender();
		const id = await newOrder(sender);
		const before = await rowOf(id);
		const editable = EDITABLE_FIELDS.join(", ");
		for (const key of [
			"receiver",
			"product_name",
			"email",
			"pickup_address_id",
			"order_type",
			"state_code",
			"Name",
		]) {
			const f = await failure(() => edit(sender, id, { city: "Pune", [key]: "x" }));
			const d = `${key}: is not an editable field (editable: ${editable})`;
			assert.deepEqual(
				[f.status, f.body],
				[400, { error: "validation_failed", message: d, details: [d], field: key }],
			);
		}
		const two = await failure(() => edit(sender, id, { zip: "1", phone: "2" }));
		assert.equal(two.body.field, "zip");
		assert.equal(two.body.details.length, 2);
		assert.deepEqual(await rowOf(id), before);
	});

	it("validates each field exactly as on create (same rule, same words, `field` the key); nothing written", async () => {
		const sender = newSender();
		const id = await newOrder(sender);
		const before = await rowOf(id);
		const cases: Array<[string, unknown]> = [
			["name", ""],
			["name", "x".repeat(101)],
			["name", null],
			["name", 42],
			["name", "bad\u0007name"],
			["address_1", "ab"],
			["address_1", "x".repeat(256)],
			["address_2", "x".repeat(256)],
			["landmark", { a: 1 }],
			["city", "x".repeat(101)],
			["state", "x".repeat(101)],
			["pincode", "012345"],
			["pincode", "56003"],
			["pincode", null],
			["pincode", true],
			["mobile_no", "12345"],
			["mobile_no", "5876543210"],
			["mobile_no", ""],
		];
		const wh = warehouseOf(sender);
		for (const [key, value] of cases) {
			// what create answers for the same receiver value
			const c = await failure(() =>
				callAs(broker(), "intake.createOrder", withField(forwardBody(wh), `receiver.${key}`, value), {
					meta: { user: userFor(sender) },
				}),
			);
			const createDetail = c.body.details.find((d: string) => d.startsWith(`receiver.${key}:`));
			assert.ok(createDetail, `create refuses receiver.${key}=${JSON.stringify(value)}`);
			const f = await failure(() => edit(sender, id, { [key]: value }));
			const want = createDetail.replace(/^receiver\./, "");
			assert.deepEqual(
				[f.status, f.body],
				[400, { error: "validation_failed", message: want, details: [want], field: key }],
				`${key}=${JSON.stringify(value)}`,
			);
		}
		const many = await failure(() => edit(sender, id, { pincode: "1", mobile_no: "2" }));
		assert.deepEqual(many.body, {
			error: "validation_failed",
			message: "Validation failed",
			details: [
				"pincode: must be 6 digits (first digit 1-9)",
				"mobile_no: must be a 10-digit Indian mobile number starting with 6-9",
			],
			field: "pincode",
		});
		assert.deepEqual(await rowOf(id), before);
	});

	it("a failed order is editable (fix the address, book again)", async () => {
		const sender = newSender();
		const id = await newOrder(sender);
		await move(sender, id, { to: "failed", code: "courier_refused" });
		const r = await edit(sender, id, { pincode: "110002" });
		assert.deepEqual(r, { order_id: id, status: "booking_failed", changed: ["pincode"] });
		assert.equal((await rowOf(id)).receiver_pincode, "110002");
	});

	it("409 not_editable once booked, while being booked, after a cancel, when hidden, or past the 30-day window", async () => {
		const sender = newSender();
		const booked = await newOrder(sender);
		await move(sender, booked, { to: "booked" });
		await refused(sender, booked, "booked");

		const queued = await newOrder(sender);
		await move(sender, queued, { to: "in_queue" });
		await refused(sender, queued, "booking_in_progress");

		const cancelled = await newOrder(sender);
		await move(sender, cancelled, { to: "booked" });
		await move(sender, cancelled, { to: "cancelled" });
		await refused(sender, cancelled, "cancelled");

		const hidden = await newOrder(sender);
		await intakeAs("intake.hideOrder", { id: String(hidden) }, sender);
		await refused(sender, hidden, "hidden");

		assert.equal(EDIT_WINDOW_DAYS, 30);
		const old = await newOrder(sender);
		const inWindow = await newOrder(sender);
		await exec(
			getSequelize(),
			"UPDATE intake.orders SET created_at = now() - interval '30 days 1 minute' WHERE order_id = $1",
			[old],
		);
		await exec(
			getSequelize(),
			"UPDATE intake.orders SET created_at = now() - interval '29 days 23 hours' WHERE order_id = $1",
			[inWindow],
		);
		await refused(sender, old, "expired");
		assert.deepEqual((await edit(sender, inWindow, { city: "Mysuru" })).changed, ["city"]);
	});

	it("409 when booking already holds a queued or booked attempt intake has not heard of yet (read through booking.orderState)", async () => {
		const sender = newSender();
		const id = await newOrder(sender);
		for (const state of ["booking_in_progress", "booked"] as const) {
			bookingStates.set(id, {
				attempt_id: 1,
				state,
				status: state === "booked" ? "booked" : "booking_queued",
				awb_number: state === "booked" ? "AWB1" : null,
				courier: null,
				logistic_id: 1,
				failure_reason: null,
				direction: "forward",
			});
			stateCalls.length = 0;
			await refused(sender, id, state);
			assert.deepEqual(stateCalls, [{ sender_id: sender, order_id: id }]);
		}
		// booking's attempt failed: editable
		bookingStates.set(id, { ...bookingStates.get(id)!, state: "failed", status: "booking_failed" });
		assert.deepEqual((await edit(sender, id, { city: "Mysuru" })).changed, ["city"]);
		// booking cannot be asked: intake's own state decides
		bookingStates.set(id, { ...bookingStates.get(id)!, state: "booking_in_progress" });
		bookingDown.add("orderState");
		assert.deepEqual((await edit(sender, id, { city: "Hubli" })).changed, ["city"]);
	});

	it("404 order not found for another account's or a missing order; 400 for a path id that is not a positive integer", async () => {
		const owner = newSender();
		const id = await newOrder(owner);
		const before = await rowOf(id);
		for (const [sender, oid] of [
			[newSender(), id],
			[owner, 987654321],
		] as const) {
			const f = await failure(() => edit(sender, oid, { city: "Pune" }));
			assert.deepEqual([f.status, f.body], [404, { error: "order not found", message: "order not found" }]);
		}
		assert.deepEqual(await rowOf(id), before);
		for (const bad of ["abc", "0", "-1", "1.5", " 7"]) {
			const f = await failure(() => edit(owner, bad, { city: "Pune" }));
			assert.equal(f.status, 400, bad);
			assert.equal(f.body.error, "validation_failed");
			assert.equal(f.body.field, "id");
		}
	});

	it("read-only roles get 403 Read-only role, a role without orders.write 403 forbidden; merchant_ops and merchant_admin may edit", async () => {
		const sender = newSender();
		const id = await newOrder(sender);
		const before = await rowOf(id);
		for (const role of ["merchant_finance", "merchant_support", "merchant_staff"] as Role[]) {
			const err = await rejects(() => edit(sender, id, { city: "Pune" }, role));
			assert.equal(err.code, 403);
			assert.equal(err.data.body.error, "Read-only role");
		}
		const user = { ...userFor(sender), role: "merchant_viewer" as Role, caps: [], read_only: false };
		const err = await rejects(() =>
			callAs(broker(), "intake.editUnshipped", { id: String(id), city: "Pune" }, { meta: { user } }),
		);
		assert.equal(err.code, 403);
		assert.deepEqual([err.data.body.error, err.data.body.cap], ["forbidden", "orders.write"]);
		assert.deepEqual(await rowOf(id), before);
		assert.deepEqual((await edit(sender, id, { city: "Pune" }, "merchant_ops")).changed, ["city"]);
		assert.deepEqual((await edit(sender, id, { city: "Agra" }, "merchant_admin")).changed, ["city"]);
	});

	it("an edit waiting on a booking update that commits first answers 409 and writes nothing (one conditional UPDATE)", async () => {
		const sender = newSender();
		const id = await newOrder(sender);
		const db = getSequelize();
		const t = await db.transaction();
		let pending: Promise<unknown> | undefined;
		try {
			// booking's update to booking_in_progress, not yet committed, holds the row
			await exec(
				db,
				`UPDATE intake.orders SET state = 'booking_in_progress', status = 'booking_queued',
					booking_attempt_id = 1, booking_seq = 1 WHERE order_id = $1`,
				[id],
				t,
			);
			pending = failure(() => edit(sender, id, { city: "Mysuru" }));
			// the edit is blocked on the row lock
			await new Promise((r) => setTimeout(r, 300));
			const [w] = await select<{ n: number }>(
				db,
				`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE intake.orders o SET%'`,
			);
			assert.equal(w.n, 1, "the edit waits for the booking update");
			await t.commit();
		} catch (err) {
			await t.rollback();
			throw err;
		}
		const f = (await pending) as { status: number; body: Record<string, any> };
		assert.deepEqual([f.status, f.body.error, f.body.reason], [409, "not_editable", "booking_in_progress"]);
		const row = await rowOf(id);
		assert.equal(row.receiver_city, "Bengaluru");
		assert.equal(row.edited_at, null);
	});

	it("an edit that commits first is followed by the booking update (no lost update either way)", async () => {
		const sender = newSender();
		const id = await newOrder(sender);
		assert.deepEqual((await edit(sender, id, { city: "Mysuru" })).changed, ["city"]);
		await book(sender, id, {
			attempt_id: 1,
			seq: 1,
			state: "booking_in_progress",
			status: "booking_queued",
			awb_number: null,
		});
		const row = await rowOf(id);
		assert.deepEqual([row.receiver_city, row.state], ["Mysuru", "booking_in_progress"]);
	});
});
