/**
 * Reverse quotes (`operation=reverse`, spec §4.2): the return leg with reverse cards and couriers, no COD, no RTO.
 */
import { strict as assert } from "node:assert";
import { SANDBOX_DELHIVERY } from "../../../lib/rates/seed";
import { assertPriced, useRates } from "./setup";

describe("rates.serviceable: reverse", () => {
	const t = useRates();
	const serviceable = (params: Record<string, unknown>) => t.serviceable(params);

	it("prices the return leg with reverse cards, reverse couriers only, no COD and no RTO", async () => {
		const res = await serviceable({
			from_pin: "560001",
			to_pin: "110001",
			physical_weight: "0.8",
			operation: "reverse",
			order_type: "1",
			collectable_amount: "5000",
		});
		assert.deepEqual(
			res.data.map((q) => q.logistic_id),
			[3, SANDBOX_DELHIVERY.logistic_id],
		);
		const q = res.data[0];
		assert.equal(q.cod_charge, 0);
		assert.equal(q.rto_charge, 0);
		assertPriced(q, 3, "C", { kg: 0.8, reverse: true });
		assert.deepEqual(
			res.dropped_couriers.map((d) => [d.logistic_id, d.reason]),
			[
				[1, "reverse_not_supported"],
				[2, "reverse_not_supported"],
				[4, "reverse_not_supported"],
			],
		);
		assert.equal(res.dropped_couriers[0].detail, "Sandbox Express does not do reverse pickups");
	});

	it("operation=forward is the default", async () => {
		const a = await serviceable({
			from_pin: "560001",
			to_pin: "110001",
			physical_weight: "1",
			operation: "forward",
		});
		const b = await serviceable({ from_pin: "560001", to_pin: "110001", physical_weight: "1" });
		assert.deepEqual(a, b);
	});
});
