/**
 * intake: `GET /v1/orders/unshipped` (`intake.listUnshipped`; spec §2.5,
 * §2.12, §4.3, §4.8, §7): which orders are in the queue, the row shape and
 * `error_type`, every filter with its exact 400, and cursor pagination (keyset,
 * bound to the account and the filters). Real intake on real PostgreSQL;
 * setup in ./unshipped-setup.ts.
 */
import assert from "node:assert/strict";
import { ERROR_TYPE_NAMES } from "../../../lib/contracts/http/intake-input";
import { encodeCursor } from "../../../lib/platform/cursor";
import { newSender, rejects } from "../../helpers/broker";
import { failure } from "./setup";
import { intakeAs, move, newOrder, useUnshipped } from "./unshipped-setup";

const list = (sender: number, query: Record<string, unknown> = {}) =>
	intakeAs("intake.listUnshipped", query, sender);

/** Every order id of the account's queue under `query`, walking `nextCursor` pages of `limit`. */
async function walk(sender: number, query: Record<string, unknown>, limit: number): Promise<number[]> {
	const ids: number[] = [];
	let cursor: string | null = null;
	for (let page = 0; page < 1000; page++) {
		const r: any = await list(sender, { ...query, limit: String(limit), ...(cursor ? { cursor } : {}) });
		assert.ok(r.data.length <= limit);
		ids.push(...r.data.map((x: any) => x.order_id));
		cursor = r.pagination.nextCursor;
		if (!cursor) return ids;
		assert.equal(r.data.length, limit, "a page before the last is full");
	}
	throw new Error("walk did not end");
}

/** Expects a 400 whose body is exactly `{error, message, field, details?}` as given. */
async function bad(sender: number, query: Record<string, unknown>, body: Record<string, unknown>) {
	const f = await failure(() => list(sender, query));
	assert.equal(f.status, 400, JSON.stringify(query));
	assert.deepEqual(f.body, body, JSON.stringify(query));
}

describe("intake: unshipped list (GET /v1/orders/unshipped, §4.3)", function () {
	this.timeout(60_000);
	useUnshipped();

	it("lists the queue only (not_shipped, booking_in_progress, failed; not booked, cancelled, hidden or another account's), newest first", async () => {
		const sender = newSender();
		const notBooked = await newOrder(sender);
		const queued = await newOrder(sender);
		await move(sender, queued, { to: "in_queue" });
		const failed = await newOrder(sender);
		await move(sender, failed, { to: "failed", code: "courier_refused" });
		const booked = await newOrder(sender);
		await move(sender, booked, { to: "booked" });
		const cancelled = await newOrder(sender);
		await move(sender, cancelled, { to: "booked" });
		await move(sender, cancelled, { to: "cancelled" });
		const hidden = await newOrder(sender);
		await intakeAs("intake.hideOrder", { id: String(hidden) }, sender);
		const ret = await newOrder(sender, { reverse: true });
		const orphan = await newOrder(sender, { pickup: null });
		await newOrder(newSender());

		const r: any = await list(sender);
		assert.deepEqual(
			r.data.map((x: any) => x.order_id),
			[orphan, ret, failed, queued, notBooked],
		);
		assert.deepEqual(r.pagination, { mode: "cursor", limit: 50, nextCursor: null });
		assert.deepEqual(Object.fromEntries(r.data.map((x: any) => [x.order_id, x.error_type])), {
			[orphan]: "pickup_address_missing",
			[ret]: "not_booked",
			[failed]: "courier_refused",
			[queued]: "in_queue",
			[notBooked]: "not_booked",
		});
		assert.ok(![booked, cancelled, hidden].some((id) => r.data.some((x: any) => x.order_id === id)));
	});

	it("rows carry order_value, channel, confirmation, address (§2.1 receiver names) and why the order is stuck", async () => {
		const sender = newSender();
		const cod = await newOrder(sender, { ref: "ROW-COD", total: 1299.5, channel: "shopify" });
		const prepaid = await newOrder(sender, { ref: "ROW-PRE", order_type: 0, total: 450 });
		const ret = await newOrder(sender, { reverse: true, ref: "ROW-RET", total: 99.99 });
		const failed = await newOrder(sender, { ref: "ROW-FAIL" });
		await move(sender, failed, { to: "failed", code: "pickup_unavailable", reason: "Warehouse is retired" });
		const queued = await newOrder(sender, { ref: "ROW-Q" });
		await move(sender, queued, { to: "in_queue" });
		const r: any = await list(sender);
		const row = (id: number) => r.data.find((x: any) => x.order_id === id);

		const c = row(cod);
		const { created_at, order_date, ...rest } = c;
		assert.match(created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
		assert.equal(order_date, "2025-01-14T18:30:00.000Z");
		assert.deepEqual(rest, {
			order_id: cod,
			customer_order_no: "ROW-COD",
			shipment_type: 0,
			order_type: 1,
			channel: "shopify",
			order_value: 1299.5,
			cod_amount: 1299.5,
			confirmation: "pending",
			address: {
				name: "Asha Verma",
				address_1: "14, 2nd Cross, Indiranagar",
				address_2: "Near metro",
				landmark: null,
				city: "Bengaluru",
				state: "Karnataka",
				pincode: "560038",
				mobile_no: "9876543210",
			},
			product_name: "Cotton kurta",
			physical_weight: 0.45,
			pickup_address_id: c.pickup_address_id,
			state: "not_shipped",
			status: "new",
			error_type: "not_booked",
			reason: "The order has not been booked yet.",
			edited_at: null,
		});
		assert.ok(Number.isInteger(c.pickup_address_id) && c.pickup_address_id > 0);

		assert.deepEqual(
			[row(prepaid).order_value, row(prepaid).cod_amount, row(prepaid).confirmation, row(prepaid).order_type],
			[450, null, "not_required", 0],
		);
		assert.deepEqual(
			[row(ret).customer_order_no, row(ret).shipment_type, row(ret).confirmation, row(ret).order_value],
			["ROW-RET-R", 1, "not_required", 99.99],
		);
		assert.deepEqual(
			[row(failed).state, row(failed).status, row(failed).error_type, row(failed).reason],
			["failed", "booking_failed", "pickup_unavailable", "Warehouse is retired"],
		);
		assert.deepEqual(
			[row(queued).state, row(queued).error_type, row(queued).reason],
			["booking_in_progress", "in_queue", "Booking is in progress."],
		);
	});

	it("error_type of a failed order is its failure code; a failed order without a code is booking_error; each filters exactly", async () => {
		const sender = newSender();
		const byType = new Map<string, number>();
		for (const code of [
			"courier_refused",
			"courier_unreachable",
			"pickup_unavailable",
			"order_changed",
		] as const) {
			const id = await newOrder(sender);
			await move(sender, id, { to: "failed", code });
			byType.set(code, id);
		}
		const noCode = await newOrder(sender);
		await move(sender, noCode, { to: "failed", code: null, reason: "   " });
		byType.set("booking_error", noCode);
		const orphan = await newOrder(sender, { pickup: null });
		byType.set("pickup_address_missing", orphan);
		const queued = await newOrder(sender);
		await move(sender, queued, { to: "in_queue" });
		byType.set("in_queue", queued);
		byType.set("not_booked", await newOrder(sender));

		assert.deepEqual([...byType.keys()].sort(), [...ERROR_TYPE_NAMES].sort());
		for (const [t, id] of byType) {
			const r: any = await list(sender, { error_type: t });
			assert.deepEqual(
				r.data.map((x: any) => [x.order_id, x.error_type]),
				[[id, t]],
				t,
			);
		}
		const r: any = await list(sender, { error_type: "booking_error" });
		assert.equal(r.data[0].reason, "The booking failed.", "blank courier words: the type's sentence");
	});

	it("filters customer_order_no (stored reference, exact), pickup_address_id, order_type", async () => {
		const sender = newSender();
		const a = await newOrder(sender, { ref: "F-A1" });
		const b = await newOrder(sender, { ref: "F-B1", order_type: 0 });
		const ret = await newOrder(sender, { ref: "F-A1", reverse: true });
		const ids = async (q: Record<string, unknown>) =>
			(await list(sender, q)).data.map((x: any) => x.order_id);

		assert.deepEqual(await ids({ customer_order_no: "F-A1" }), [a]);
		assert.deepEqual(
			await ids({ customer_order_no: " F-A1-R " }),
			[ret],
			"trimmed; returns by their -R reference",
		);
		assert.deepEqual(await ids({ customer_order_no: "f-a1" }), [], "exact, case-sensitive");
		assert.deepEqual(await ids({ customer_order_no: "F-A" }), [], "no prefix match");

		const [rowA] = (await list(sender, { customer_order_no: "F-A1" })).data;
		assert.deepEqual(await ids({ pickup_address_id: String(rowA.pickup_address_id) }), [a]);
		assert.deepEqual(await ids({ pickup_address_id: "987654321" }), []);

		assert.deepEqual(await ids({ order_type: "1" }), [a]);
		assert.deepEqual(await ids({ order_type: "0" }), [ret, b], "returns are prepaid");
		assert.deepEqual(await ids({ order_type: "0", customer_order_no: "F-B1" }), [b], "filters combine");
		assert.deepEqual(
			await ids({ order_type: "", customer_order_no: "" }),
			[ret, b, a],
			"empty values: no filter",
		);
		assert.deepEqual(await ids({ sender_id: "1" }), [ret, b, a], "sender_id changes nothing");
	});

	it("amount_min / amount_max are inclusive rupee bounds of the declared order total", async () => {
		const sender = newSender();
		const t100 = await newOrder(sender, { total: 100 });
		const t250 = await newOrder(sender, { total: 250.5 });
		const t999 = await newOrder(sender, { total: 999.99 });
		const ids = async (q: Record<string, unknown>) =>
			(await list(sender, q)).data.map((x: any) => x.order_id);
		assert.deepEqual(await ids({ amount_min: "250.5" }), [t999, t250]);
		assert.deepEqual(await ids({ amount_min: "250.51" }), [t999]);
		assert.deepEqual(await ids({ amount_max: "250.50" }), [t250, t100]);
		assert.deepEqual(await ids({ amount_max: "250.49" }), [t100]);
		assert.deepEqual(await ids({ amount_min: "100.01", amount_max: "999.98" }), [t250]);
		assert.deepEqual(await ids({ amount_min: "999.99", amount_max: "999.99" }), [t999]);
		assert.deepEqual(await ids({ amount_min: "0", amount_max: "999999999.99" }), [t999, t250, t100]);
		assert.deepEqual(await ids({ amount_min: "1000" }), []);
	});

	it("answers each bad filter with its exact 400 naming the key in `field`", async () => {
		const sender = newSender();
		const ot = "order_type: must be 0 (prepaid) or 1 (COD)";
		for (const v of ["2", "-1", "01", "cod", "0.0"])
			await bad(sender, { order_type: v }, { error: ot, message: ot, field: "order_type" });
		for (const key of ["amount_min", "amount_max"]) {
			const m = `${key}: must be a rupee amount`;
			for (const v of ["1.234", "-1", "1e3", "1234567890", "12.", ".5", "1,000", "₹100", "abc"])
				await bad(sender, { [key]: v }, { error: m, message: m, field: key });
		}
		const minMax = "amount_min: must not exceed amount_max";
		await bad(
			sender,
			{ amount_min: "10.01", amount_max: "10" },
			{ error: "validation_failed", message: minMax, details: [minMax], field: "amount_min" },
		);
		const lim = "limit: must be an integer from 1 to 1000";
		for (const v of ["0", "1001", "abc", "-5", "2.5"])
			await bad(
				sender,
				{ limit: v },
				{ error: "validation_failed", message: lim, details: [lim], field: "limit" },
			);
		const et = `error_type: must be one of ${ERROR_TYPE_NAMES.join(", ")}`;
		for (const v of ["nope", "IN_QUEUE", "booking_in_progress"])
			await bad(
				sender,
				{ error_type: v },
				{ error: "validation_failed", message: et, details: [et], field: "error_type" },
			);
		const pk = "pickup_address_id: must be a positive integer";
		for (const v of ["0", "01", "abc", "-3", "1.5", "99999999999999999999"])
			await bad(
				sender,
				{ pickup_address_id: v },
				{ error: "validation_failed", message: pk, details: [pk], field: "pickup_address_id" },
			);
		const ref = "customer_order_no: must be at most 100 characters";
		await bad(
			sender,
			{ customer_order_no: "x".repeat(101) },
			{ error: "validation_failed", message: ref, details: [ref], field: "customer_order_no" },
		);
		// a repeated query key arrives as an array
		await bad(sender, { order_type: ["0", "1"] }, { error: ot, message: ot, field: "order_type" });
		await bad(
			sender,
			{ pickup_address_id: ["1", "2"] },
			{ error: "validation_failed", message: pk, details: [pk], field: "pickup_address_id" },
		);
	});

	it("pages newest first with limit and nextCursor, every row exactly once; the limit may change between pages", async () => {
		const sender = newSender();
		const made: number[] = [];
		for (let i = 0; i < 7; i++) made.push(await newOrder(sender, { order_type: i % 2 ? 1 : 0 }));
		const newest = [...made].reverse();
		assert.deepEqual(await walk(sender, {}, 2), newest);
		assert.deepEqual(await walk(sender, {}, 7), newest);
		assert.deepEqual(await walk(sender, {}, 1000), newest);
		const cod = made.filter((_, i) => i % 2 === 1).reverse();
		assert.equal(cod.length, 3);
		assert.deepEqual(await walk(sender, { order_type: "1" }, 2), cod);

		const p1: any = await list(sender, { limit: "3" });
		assert.deepEqual(p1.pagination.limit, 3);
		assert.equal(typeof p1.pagination.nextCursor, "string");
		const p2: any = await list(sender, { limit: "10", cursor: p1.pagination.nextCursor });
		assert.deepEqual(
			p2.data.map((x: any) => x.order_id),
			newest.slice(3),
		);
		assert.equal(p2.pagination.nextCursor, null);
	});

	it("default limit is 50", async () => {
		const sender = newSender();
		for (let i = 0; i < 51; i++) await newOrder(sender);
		const r: any = await list(sender);
		assert.equal(r.data.length, 50);
		assert.equal(r.pagination.limit, 50);
		const rest: any = await list(sender, { cursor: r.pagination.nextCursor });
		assert.equal(rest.data.length, 1);
		assert.equal(rest.pagination.nextCursor, null);
	});

	it("a walk never repeats or skips a row while new orders arrive and earlier ones leave the queue", async () => {
		const sender = newSender();
		const made: number[] = [];
		for (let i = 0; i < 9; i++) made.push(await newOrder(sender));
		const seen: number[] = [];
		let cursor: string | null = null;
		const added: number[] = [];
		do {
			const r: any = await list(sender, { limit: "2", ...(cursor ? { cursor } : {}) });
			const ids: number[] = r.data.map((x: any) => x.order_id);
			seen.push(...ids);
			cursor = r.pagination.nextCursor;
			added.push(await newOrder(sender));
			// a row already seen leaves the queue (booked): the next page does not shift
			await move(sender, ids[0], { to: "booked" });
		} while (cursor);
		assert.deepEqual(seen, [...made].reverse(), "every row that existed when the walk started, once");
		assert.ok(!added.some((id) => seen.includes(id)), "orders created during the walk are not seen");
	});

	it("refuses a cursor that is garbage, tampered, another list's, another account's or issued for other filters with 400 cursor: unrecognised shape", async () => {
		const sender = newSender();
		for (let i = 0; i < 3; i++) await newOrder(sender, { order_type: 1 });
		const p1: any = await list(sender, { limit: "1", order_type: "1" });
		const cursor: string = p1.pagination.nextCursor;
		assert.ok(cursor);
		const code = "cursor: unrecognised shape";
		const refused = { error: code, message: code };
		const [payload, sig] = cursor.split(".");
		const payloadJson = JSON.parse(Buffer.from(payload, "base64url").toString());
		const forged = Buffer.from(
			JSON.stringify({ ...payloadJson, p: { ...payloadJson.p, id: 999999 } }),
		).toString("base64url");
		for (const c of [
			"garbage",
			`${payload}.${sig.slice(0, -2)}${sig.endsWith("AA") ? "BB" : "AA"}`,
			`${forged}.${sig}`,
			encodeCursor("orders", payloadJson.p),
			encodeCursor("wallet", { s: sender, id: 5 }),
		]) {
			const f = await failure(() => list(sender, { limit: "1", order_type: "1", cursor: c }));
			assert.deepEqual([f.status, f.body], [400, refused], c);
		}
		// another account presenting it
		const other = newSender();
		const f1 = await failure(() => list(other, { limit: "1", order_type: "1", cursor }));
		assert.deepEqual([f1.status, f1.body], [400, refused]);
		// the same account with other filters (or none)
		for (const q of [
			{},
			{ order_type: "0" },
			{ order_type: "1", amount_min: "1" },
			{ order_type: "1", error_type: "not_booked" },
		]) {
			const f = await failure(() => list(sender, { ...q, limit: "1", cursor }));
			assert.deepEqual([f.status, f.body], [400, refused], JSON.stringify(q));
		}
		// the same filters, written differently (trimmed, empty extras), are the same filters
		const ok: any = await list(sender, { limit: "1", order_type: " 1 ", customer_order_no: "", cursor });
		assert.equal(ok.data.length, 1);
	});

	it("answers 401 without a caller", async () => {
		const err = await rejects(() => intakeAs("intake.listUnshipped", {}, 0));
		assert.equal(err.code, 401);
	});
});
