/**
 * Body of `POST /v1/shipping/ndr` (lib/ndr/act-input.ts `parseNdrActBody`,
 * spec §4.2, §7): the default act, 400 `invalid_ndr_act` for anything but the
 * three values, and every 400 `validation_failed` with its exact `details`.
 * Pure: no broker, no database.
 */
import assert from "node:assert/strict";
import { INVALID_NDR_ACT_MESSAGE } from "../../../lib/contracts";
import { isCalendarDate, parseNdrActBody } from "../../../lib/ndr/act-input";
import { errorBodyOf } from "../../../lib/platform/errors";

/** The status and body `fn` throws (fails when it does not throw a contract error). */
function failure(fn: () => unknown): { status: number; body: Record<string, unknown> } {
	try {
		fn();
	} catch (err) {
		const b = errorBodyOf(err);
		assert.ok(b, `not a contract error: ${String(err)}`);
		return b;
	}
	assert.fail("expected a 400");
}

/** The `details` of the 400 `validation_failed` that `body` gets. */
function details(body: unknown): string[] {
	const f = failure(() => parseNdrActBody(body));
	assert.equal(f.status, 400);
	assert.equal(f.body.error, "validation_failed");
	return f.body.details as string[];
}

describe("ndr: POST /v1/shipping/ndr body", () => {
	it("defaults ndr_act to RE-ATTEMPT; ids as JSON integers or digit strings", () => {
		assert.deepEqual(parseNdrActBody({ order_id: 12, logistic_id: "3" }), {
			order_id: 12,
			logistic_id: 3,
			ndr_act: "RE-ATTEMPT",
		});
		assert.deepEqual(parseNdrActBody({ order_id: "12", logistic_id: 3, ndr_act: null }), {
			order_id: 12,
			logistic_id: 3,
			ndr_act: "RE-ATTEMPT",
		});
		assert.deepEqual(parseNdrActBody({ order_id: 1, logistic_id: 1, ndr_act: "RE-ATTEMPT", extra: true }), {
			order_id: 1,
			logistic_id: 1,
			ndr_act: "RE-ATTEMPT",
		});
	});

	for (const bad of ["re-attempt", "REATTEMPT", "", " RE-ATTEMPT", "RTO", 1, true, ["RE-ATTEMPT"], {}]) {
		it(`400 invalid_ndr_act for ndr_act ${JSON.stringify(bad)}, before any other failure`, () => {
			for (const body of [
				{ order_id: 1, logistic_id: 2, ndr_act: bad },
				{ order_id: "x", ndr_act: bad, deferred_date: "nope" },
			]) {
				const f = failure(() => parseNdrActBody(body));
				assert.equal(f.status, 400);
				assert.deepEqual(f.body, { error: "invalid_ndr_act", message: INVALID_NDR_ACT_MESSAGE });
			}
		});
	}

	it("the invalid_ndr_act message names the three values", () => {
		assert.equal(INVALID_NDR_ACT_MESSAGE, "ndr_act must be one of RE-ATTEMPT, DEFER_DLV, EDIT_DETAILS");
	});

	it("order_id and logistic_id: required positive integers", () => {
		assert.deepEqual(details({}), [
			"order_id: must be a positive integer",
			"logistic_id: must be a positive integer",
		]);
		assert.deepEqual(details(null), [
			"order_id: must be a positive integer",
			"logistic_id: must be a positive integer",
		]);
		assert.deepEqual(details([1, 2]), [
			"order_id: must be a positive integer",
			"logistic_id: must be a positive integer",
		]);
		for (const bad of [0, -1, 1.5, "1e3", "007", " 7", "abc", null, true]) {
			assert.deepEqual(details({ order_id: bad, logistic_id: 1 }), ["order_id: must be a positive integer"]);
			assert.deepEqual(details({ order_id: 1, logistic_id: bad }), [
				"logistic_id: must be a positive integer",
			]);
		}
		const one = failure(() => parseNdrActBody({ order_id: 0, logistic_id: 1 }));
		assert.deepEqual(one.body, {
			error: "validation_failed",
			message: "order_id: must be a positive integer",
			details: ["order_id: must be a positive integer"],
		});
	});

	describe("DEFER_DLV", () => {
		const base = { order_id: 5, logistic_id: 2, ndr_act: "DEFER_DLV" };

		it("takes a real calendar date", () => {
			assert.deepEqual(parseNdrActBody({ ...base, deferred_date: "2028-02-29" }), {
				...base,
				deferred_date: "2028-02-29",
			});
		});

		it("needs deferred_date", () => {
			assert.deepEqual(details(base), ["deferred_date: is required with DEFER_DLV"]);
			assert.deepEqual(details({ ...base, deferred_date: null }), [
				"deferred_date: is required with DEFER_DLV",
			]);
		});

		for (const bad of [
			"2026-02-30",
			"2026-2-3",
			"2027-02-29",
			"2026-13-01",
			"2026-00-10",
			"20260301",
			"",
			" 2026-03-01",
			20260301,
		]) {
			it(`refuses deferred_date ${JSON.stringify(bad)}`, () => {
				assert.deepEqual(details({ ...base, deferred_date: bad }), [
					"deferred_date: must be a real calendar date (YYYY-MM-DD)",
				]);
			});
		}

		it("phone and address are refused with it, each named", () => {
			assert.deepEqual(details({ ...base, deferred_date: "2026-03-01", phone: "9876543210", address: {} }), [
				"phone: is only accepted with EDIT_DETAILS",
				"address: is only accepted with EDIT_DETAILS",
			]);
		});
	});

	it("RE-ATTEMPT refuses deferred_date, phone and address", () => {
		assert.deepEqual(
			details({ order_id: 1, logistic_id: 1, deferred_date: "2026-03-01", phone: "9876543210" }),
			["deferred_date: is only accepted with DEFER_DLV", "phone: is only accepted with EDIT_DETAILS"],
		);
	});

	describe("EDIT_DETAILS", () => {
		const base = { order_id: 5, logistic_id: 2, ndr_act: "EDIT_DETAILS" };

		it("needs a phone or an address", () => {
			assert.deepEqual(details(base), ["phone: phone or address is required with EDIT_DETAILS"]);
			assert.deepEqual(details({ ...base, phone: null, address: null }), [
				"phone: phone or address is required with EDIT_DETAILS",
			]);
		});

		it("phone: the order-create mobile rule, stored as 10 digits", () => {
			for (const [given, stored] of [
				["9876543210", "9876543210"],
				["+91 98765-43210", "9876543210"],
				["098765 43210", "9876543210"],
				[9876543210, "9876543210"],
			] as const) {
				assert.deepEqual(parseNdrActBody({ ...base, phone: given }), { ...base, phone: stored });
			}
			for (const bad of ["12345", "5876543210", "98765432100", "phone", {}, 1.5]) {
				assert.deepEqual(details({ ...base, phone: bad }), [
					"phone: must be a 10-digit Indian mobile number starting with 6-9",
				]);
			}
		});

		it("address: trimmed, optional parts dropped when empty", () => {
			assert.deepEqual(
				parseNdrActBody({
					...base,
					address: {
						address_1: "  Flat 4, Andheri East ",
						address_2: "",
						landmark: " Opp. Metro ",
						city: "Mumbai",
						state: null,
						pincode: 400069,
						unknown: "x",
					},
				}),
				{
					...base,
					address: {
						address_1: "Flat 4, Andheri East",
						landmark: "Opp. Metro",
						city: "Mumbai",
						pincode: "400069",
					},
				},
			);
			assert.deepEqual(
				parseNdrActBody({ ...base, phone: "9876543210", address: { address_1: "12 MG Road" } }),
				{
					...base,
					phone: "9876543210",
					address: { address_1: "12 MG Road" },
				},
			);
		});

		it("address: each bad part named", () => {
			assert.deepEqual(details({ ...base, address: "12 MG Road" }), ["address: must be an object"]);
			assert.deepEqual(details({ ...base, address: {} }), ["address.address_1: is required"]);
			assert.deepEqual(
				details({
					...base,
					address: {
						address_1: "ab",
						address_2: "x".repeat(256),
						landmark: 5,
						city: "c".repeat(101),
						state: "Kar\u0007nataka",
						pincode: "012345",
					},
				}),
				[
					"address.address_1: must be 3 to 255 characters",
					"address.address_2: must be at most 255 characters",
					"address.landmark: must be a string",
					"address.city: must be at most 100 characters",
					"address.state: must not contain control characters",
					"address.pincode: must be 6 digits (first digit 1-9)",
				],
			);
			assert.deepEqual(
				details({ ...base, phone: "1", address: { address_1: "12 MG Road", pincode: "56001" } }),
				[
					"phone: must be a 10-digit Indian mobile number starting with 6-9",
					"address.pincode: must be 6 digits (first digit 1-9)",
				],
			);
		});

		it("deferred_date is refused with it", () => {
			assert.deepEqual(details({ ...base, phone: "9876543210", deferred_date: "2026-03-01" }), [
				"deferred_date: is only accepted with DEFER_DLV",
			]);
		});
	});

	it("isCalendarDate: YYYY-MM-DD real days only", () => {
		assert.equal(isCalendarDate("2024-02-29"), true);
		assert.equal(isCalendarDate("2023-02-29"), false);
		assert.equal(isCalendarDate("2026-2-3"), false);
		assert.equal(isCalendarDate("2026-04-31"), false);
	});
});
