/**
 * The internal quote (`rates.quote`, lib/contracts/rates.ts QuoteParams): one courier, no lane_not_priced, 400 on malformed input.
 */
import { strict as assert } from "node:assert";
import { rejects } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { assertPriced, useRates } from "./setup";

describe("rates.quote (internal)", () => {
	const t = useRates();

	it("prices one courier when logistic_id is given, with numbers as input", async () => {
		const res = await callAs(t.broker, "rates.quote", {
			from_pin: "110001",
			to_pin: "560001",
			physical_weight: 0.75,
			payment_mode: "cod",
			cod_amount: 1500,
			logistic_id: 2,
		});
		assert.deepEqual(
			res.data.map((q) => q.logistic_id),
			[2],
		);
		assert.deepEqual(res.dropped_couriers, []);
		assertPriced(res.data[0], 2, "C", { kg: 0.75, codAmount: 1500 });
	});

	it("never throws lane_not_priced: an unpriced lane answers data [] with reasons", async () => {
		const res = await callAs(t.broker, "rates.quote", {
			from_pin: "110001",
			to_pin: "999999",
			physical_weight: 1,
		});
		assert.deepEqual(res.data, []);
		assert.equal(res.dropped_couriers.length, 5);
		const one = await callAs(t.broker, "rates.quote", {
			from_pin: "110001",
			to_pin: "781001",
			physical_weight: 1,
			logistic_id: 4,
		});
		assert.deepEqual(one.data, []);
		assert.equal(one.dropped_couriers[0].reason, "no_rate_card");
		const unknown = await callAs(t.broker, "rates.quote", {
			from_pin: "110001",
			to_pin: "560001",
			physical_weight: 1,
			logistic_id: 99,
		});
		assert.deepEqual(unknown, {
			data: [],
			dropped_couriers: [
				{ logistic_id: 99, logistic_name: "", reason: "unknown_courier", detail: "no such courier" },
			],
		});
	});

	it("rejects malformed input with 400 validation_failed", async () => {
		const err = await rejects(() =>
			callAs(t.broker, "rates.quote", {
				from_pin: "110001",
				to_pin: "560001",
				physical_weight: 1,
				logistic_id: 1.5,
			}),
		);
		assert.equal(err.code, 400);
		assert.equal(err.data.body.error, "validation_failed");
	});
});
