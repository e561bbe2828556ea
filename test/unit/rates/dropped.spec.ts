/**
 * Why a courier is left out of a quote (`dropped_couriers`, spec §2.7): COD, rate card, serviceability, weight limit.
 */
import { strict as assert } from "node:assert";
import { SANDBOX_DELHIVERY } from "../../../lib/rates/seed";
import { assertPriced, byId, droppedOf, seeded, useRates } from "./setup";

describe("rates.serviceable: dropped couriers", () => {
	const t = useRates();
	const serviceable = (params: Record<string, unknown>) => t.serviceable(params);

	it("COD drops Lite with cod_config_missing and Reverse with forward_not_supported", async () => {
		const res = await serviceable({
			from_pin: "400001",
			to_pin: "110001",
			physical_weight: "1",
			order_type: "1",
			collectable_amount: "800",
		});
		assert.deepEqual(
			res.data.map((q) => q.logistic_id),
			[1, 2, SANDBOX_DELHIVERY.logistic_id],
		);
		assert.deepEqual(res.dropped_couriers, [
			{
				logistic_id: 3,
				logistic_name: "Sandbox Reverse",
				reason: "forward_not_supported",
				detail: "Sandbox Reverse does reverse pickups only",
			},
			{
				logistic_id: 4,
				logistic_name: "Sandbox Lite",
				reason: "cod_config_missing",
				detail: "Sandbox Lite has no COD configuration",
			},
		]);
	});

	it("zone E drops Lite with no_rate_card", async () => {
		const res = await serviceable({ from_pin: "110001", to_pin: "781001", physical_weight: "1" });
		assert.deepEqual(droppedOf(res, 4), {
			logistic_id: 4,
			logistic_name: "Sandbox Lite",
			reason: "no_rate_card",
			detail: "no forward rate card for zone E",
		});
		assertPriced(byId(res, 2), 2, "E", { kg: 1 });
	});

	it("pincodes a courier does not serve drop it with not_serviceable (pickup, delivery or both)", async () => {
		const andaman = await serviceable({ from_pin: "110001", to_pin: "744101", physical_weight: "1" });
		assert.equal(andaman.data[0].zone, "E");
		assert.deepEqual(droppedOf(andaman, 2), {
			logistic_id: 2,
			logistic_name: "Sandbox Surface",
			reason: "not_serviceable",
			detail: "Sandbox Surface does not serve delivery pincode 744101",
		});
		assert.ok(byId(andaman, 1), "Express serves Port Blair");
		const fromLeh = await serviceable({ from_pin: "194101", to_pin: "110001", physical_weight: "1" });
		assert.equal(droppedOf(fromLeh, 2)?.detail, "Sandbox Surface does not serve pickup pincode 194101");
		// Gangtok: Surface picks up there but does not deliver there.
		const toGangtok = await serviceable({ from_pin: "110001", to_pin: "737101", physical_weight: "1" });
		assert.equal(droppedOf(toGangtok, 2)?.reason, "not_serviceable");
		const fromGangtok = await serviceable({ from_pin: "737101", to_pin: "110001", physical_weight: "1" });
		assert.ok(byId(fromGangtok, 2));
	});

	it("drops couriers whose weight limit the parcel exceeds with over_weight_limit", async () => {
		const res = await serviceable({
			from_pin: "110001",
			to_pin: "560001",
			physical_weight: "12",
			volumetric_weight: "25",
		});
		assert.deepEqual(
			res.data.map((q) => q.logistic_id),
			[2, SANDBOX_DELHIVERY.logistic_id],
		);
		assert.deepEqual(droppedOf(res, 1), {
			logistic_id: 1,
			logistic_name: "Sandbox Express",
			reason: "over_weight_limit",
			detail: `billable weight 25 kg exceeds the ${seeded.maxKg.get(1)} kg limit`,
		});
		assert.ok(
			(seeded.maxKg.get(1) ?? Infinity) < 25 && (seeded.maxKg.get(2) ?? Infinity) >= 25,
			"seed limits bracket 25 kg",
		);
		assert.equal(droppedOf(res, 4)?.reason, "over_weight_limit");
		assertPriced(byId(res, 2), 2, "C", { kg: 25 });
	});
});
