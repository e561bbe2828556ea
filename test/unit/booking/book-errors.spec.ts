/**
 * booking service, errors of the book route (spec §4.2, §7): input, access, ownership,
 * channel, pickup warehouse, courier and lane, unavailable collaborators,
 * concurrent bookings; nothing is committed when the request is refused.
 * Real simulator over HTTP, PostgreSQL and Redis; fakes of intake,
 * warehouses and rates in ./setup.ts.
 */
import assert from "node:assert/strict";
import { exec, getSequelize } from "../../../lib/platform/db";
import { as, newSender, rejects } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { addOrder, attemptsOf, bodyOf, book, down, settled, useBookingBroker, warehouses } from "./setup";

describe("booking: POST /v1/shipping/book errors", function () {
	this.timeout(40_000);
	const broker = useBookingBroker();

	it("400 when order_id is missing or not a positive integer", async () => {
		const s = newSender();
		for (const bad of [undefined, null, "", "abc", "12a", " 12", 1.5, 0, -3, true, [1], { id: 1 }, 2 ** 60]) {
			const err = await rejects(() => book(broker(), s, bad === undefined ? {} : { order_id: bad }));
			assert.deepEqual(
				bodyOf(err),
				{
					status: 400,
					body: {
						error: "order_id must be a positive integer",
						message: "order_id must be a positive integer",
					},
				},
				`order_id ${JSON.stringify(bad)}`,
			);
		}
	});

	it("400 validation_failed when logistic_id is present but not a positive integer", async () => {
		const s = newSender();
		const o = addOrder(s);
		for (const bad of [0, -1, 1.5, "x", "", true]) {
			const err = await rejects(() => book(broker(), s, { order_id: o.order_id, logistic_id: bad }));
			assert.equal(err.code, 400);
			assert.equal(err.data.body.error, "validation_failed");
			assert.deepEqual(err.data.body.details, ["logistic_id: must be a positive integer"]);
		}
		assert.equal((await attemptsOf(o.order_id)).length, 0);
	});

	it("403 for another sender's order and for an order that does not exist (same answer)", async () => {
		const owner = newSender();
		const o = addOrder(owner);
		const other = newSender();
		const expected = {
			status: 403,
			body: {
				error: "cannot create booking for another sender",
				message: "cannot create booking for another sender",
			},
		};
		assert.deepEqual(bodyOf(await rejects(() => book(broker(), other, { order_id: o.order_id }))), expected);
		// naming the owner as sender_id in the body changes nothing (spec §1 rule 3)
		assert.deepEqual(
			bodyOf(await rejects(() => book(broker(), other, { order_id: o.order_id, sender_id: owner }))),
			expected,
		);
		assert.deepEqual(bodyOf(await rejects(() => book(broker(), other, { order_id: 987654321 }))), expected);
		assert.equal((await attemptsOf(o.order_id)).length, 0);
	});

	it("403 Read-only role for read-only roles (refused on purpose, spec §5 rule 3)", async () => {
		const s = newSender();
		const o = addOrder(s);
		for (const role of ["merchant_finance", "merchant_support", "merchant_staff"] as const) {
			const err = await rejects(() =>
				callAs(broker(), "booking.book", { order_id: o.order_id }, as(s, role)),
			);
			assert.equal(err.code, 403);
			assert.equal(err.data.body.error, "Read-only role");
		}
		const ok = await book(broker(), s, { order_id: o.order_id });
		assert.equal(ok.status, 202);
		const ops = addOrder(s);
		assert.equal((await book(broker(), s, { order_id: ops.order_id, logistic_id: 2 })).status, 202);
		await settled(o.order_id);
		await settled(ops.order_id);
	});

	it("401 without an account", async () => {
		const err = await rejects(() => callAs(broker(), "booking.book", { order_id: 1 }));
		assert.equal(err.code, 401);
	});

	it("400 unknown_logistic, 422 lane_not_priced (forced and AUTO)", async () => {
		const s = newSender();
		const o = addOrder(s);
		for (const lid of [99, 6]) {
			const err = await rejects(() => book(broker(), s, { order_id: o.order_id, logistic_id: lid }));
			assert.equal(err.code, 400);
			assert.equal(err.data.body.error, "unknown_logistic");
		}
		const ne = addOrder(s, {}, { pincode: "781001" });
		const e1 = await rejects(() => book(broker(), s, { order_id: ne.order_id, logistic_id: 1 }));
		assert.equal(e1.code, 422);
		assert.equal(e1.data.body.error, "lane_not_priced");
		assert.match(e1.data.body.message, /Sandbox Express does not price this lane.*no rate for 781001/);
		const cod = addOrder(s, {
			payment_mode: "cod",
			product: {
				product_name: "Saree",
				product_sku: null,
				physical_weight: 1,
				declared_order_total: 1500,
				cod_amount: 1500,
				length: null,
				width: null,
				height: null,
			},
		});
		const e2 = await rejects(() => book(broker(), s, { order_id: cod.order_id, logistic_id: 4 }));
		assert.equal(e2.data.body.error, "lane_not_priced");
		assert.match(e2.data.body.message, /no COD/);
		const none = addOrder(s, {}, { pincode: "799999" });
		const e3 = await rejects(() => book(broker(), s, { order_id: none.order_id }));
		assert.equal(e3.code, 422);
		assert.equal(e3.data.body.error, "lane_not_priced");
		for (const x of [o, ne, cod, none]) assert.equal((await attemptsOf(x.order_id)).length, 0);
	});

	it("400 unsupported_channel for B2B / multi-box orders", async () => {
		const s = newSender();
		const o = addOrder(s, { channel: "B2B" });
		const err = await rejects(() => book(broker(), s, { order_id: o.order_id }));
		assert.equal(err.code, 400);
		assert.equal(err.data.body.error, "unsupported_channel");
		const boxes = addOrder(s, { no_of_boxes: 3 } as any);
		assert.equal(
			(await rejects(() => book(broker(), s, { order_id: boxes.order_id }))).data.body.error,
			"unsupported_channel",
		);
	});

	it("400 invalid_pickup_address when the order's warehouse is no longer active", async () => {
		const s = newSender();
		const o = addOrder(s);
		warehouses.get(o.pickup_address_id!)!.active = false;
		const err = await rejects(() => book(broker(), s, { order_id: o.order_id }));
		assert.equal(err.code, 400);
		assert.equal(err.data.body.error, "invalid_pickup_address");
	});

	it("503 rate_unavailable / service_unavailable when a collaborator is unreachable; nothing committed", async () => {
		const s = newSender();
		const o = addOrder(s);
		const cases: [string, Record<string, unknown>, string, string][] = [
			["rates.getCourier", { logistic_id: 1 }, "rate_unavailable", "rates"],
			["rates.quote", { logistic_id: 1 }, "rate_unavailable", "rates"],
			["rates.listCouriers", {}, "rate_unavailable", "rates"],
			["rates.quote", {}, "rate_unavailable", "rates"],
			["intake.getOrder", {}, "service_unavailable", "intake"],
			["warehouses.resolve", { logistic_id: 2 }, "service_unavailable", "warehouses"],
		];
		for (const [action, extra, error, service] of cases) {
			down.add(action);
			try {
				const err = await rejects(() => book(broker(), s, { order_id: o.order_id, ...extra }));
				assert.deepEqual(
					bodyOf(err),
					{ status: 503, body: { error, message: `${service} is unavailable; retry` } },
					action,
				);
			} finally {
				down.delete(action);
			}
		}
		assert.equal((await attemptsOf(o.order_id)).length, 0);
		assert.equal((await book(broker(), s, { order_id: o.order_id })).status, 202, "retry succeeds");
		await settled(o.order_id);
	});

	it("409 booking_in_progress for concurrent requests, 409 already_booked once booked", async () => {
		const s = newSender();
		// SIMULATE_TIMEOUT keeps the booking in progress for a while.
		const o = addOrder(s, {}, { name: "Meera SIMULATE_TIMEOUT" });
		const results = await Promise.allSettled([
			book(broker(), s, { order_id: o.order_id }),
			book(broker(), s, { order_id: o.order_id, logistic_id: 2 }),
			book(broker(), s, { order_id: o.order_id }),
		]);
		const ok = results.filter((r) => r.status === "fulfilled");
		const no = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
		assert.equal(ok.length, 1);
		assert.equal(no.length, 2);
		for (const r of no) {
			assert.equal(r.reason.code, 409);
			assert.equal(r.reason.data.body.error, "booking_in_progress");
			assert.equal(r.reason.data.body.state, "booking_in_progress");
			assert.ok(r.reason.data.body.message);
		}
		await settled(o.order_id);
		const err = await rejects(() => book(broker(), s, { order_id: o.order_id }));
		assert.deepEqual(
			{ code: err.code, error: err.data.body.error, state: err.data.body.state },
			{ code: 409, error: "already_booked", state: "booked" },
		);
		assert.equal((await attemptsOf(o.order_id)).length, 1);
	});

	it("409 of a live attempt comes before every check after it (warehouse, courier, lane, collaborators, credit)", async () => {
		const s = newSender();
		// SIMULATE_TIMEOUT keeps the booking in progress while the first checks run
		const o = addOrder(s, {}, { name: "Meera SIMULATE_TIMEOUT" });
		assert.equal((await book(broker(), s, { order_id: o.order_id })).status, 202);
		const queued = await rejects(() => book(broker(), s, { order_id: o.order_id, logistic_id: 99 }));
		assert.deepEqual(
			{ code: queued.code, error: queued.data.body.error },
			{ code: 409, error: "booking_in_progress" },
			"an attempt in progress before unknown_logistic",
		);
		await settled(o.order_id);
		const expectBooked = async (params: Record<string, unknown>, why: string) => {
			const err = await rejects(() => book(broker(), s, { order_id: o.order_id, ...params }));
			assert.deepEqual(
				{ code: err.code, error: err.data.body.error, state: err.data.body.state },
				{ code: 409, error: "already_booked", state: "booked" },
				why,
			);
		};
		await expectBooked({ logistic_id: 99 }, "before unknown_logistic");
		for (const action of ["warehouses.resolve", "rates.quote", "rates.listCouriers"]) {
			down.add(action);
			try {
				await expectBooked({}, `before ${action}'s 503`);
			} finally {
				down.delete(action);
			}
		}
		await exec(
			getSequelize(),
			"INSERT INTO booking.accounts (sender_id, credit_limit_paise) VALUES ($1, 100)",
			[s],
		);
		await expectBooked({ logistic_id: 1 }, "before credit_limit_exceeded");
		warehouses.get(o.pickup_address_id!)!.active = false;
		await expectBooked({}, "before invalid_pickup_address");
		assert.equal((await attemptsOf(o.order_id)).length, 1);
		// the same checks still answer for themselves on an order without a live attempt
		const other = addOrder(s);
		warehouses.get(other.pickup_address_id!)!.active = false;
		const noWarehouse = await rejects(() => book(broker(), s, { order_id: other.order_id }));
		assert.equal(noWarehouse.data.body.error, "invalid_pickup_address");
	});
});
