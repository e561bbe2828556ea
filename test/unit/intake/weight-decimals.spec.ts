/**
 * Weights and amounts are decimals with a bounded number of places (spec §2.1; lib/intake/validation.ts
 * `decimal`): a value too small to have that many places (5e-324 kg, found by the hardening fuzz: it passed as
 * "0 decimals", was stored as 0 g and answered 500) is a 400, never an order.
 */
import assert from "node:assert/strict";
import { parseOrderInput } from "../../../lib/intake/validation";
import { errorBodyOf } from "../../../lib/platform/errors";
import { orderBody } from "../../helpers/fixtures";

describe("intake validation: decimal places of weights", () => {
	for (const weight of [5e-324, 1e-9, 0.0004]) {
		it(`refuses physical_weight ${weight} kg (more than 3 decimals) with 400 validation_failed`, () => {
			const body = orderBody(1) as { product: Record<string, unknown> };
			body.product.physical_weight = weight;
			let err: unknown;
			try {
				parseOrderInput(body, "forward");
			} catch (e) {
				err = e;
			}
			const eb = errorBodyOf(err);
			assert.equal(eb?.status, 400);
			assert.equal(eb?.body.error, "validation_failed");
			assert.match(String(eb?.body.message), /physical_weight/);
		});
	}

	it("still accepts 0.001, 0.1, 1.005 and 50 kg", () => {
		for (const weight of [0.001, 0.1, 1.005, 50]) {
			const body = orderBody(1) as { product: Record<string, unknown> };
			body.product.physical_weight = weight;
			assert.equal(parseOrderInput(body, "forward").product.physical_weight, weight);
		}
	});
});
