/**
 * Pricing rules (DOMAIN.md "Weight and price", spec §2.7): slabs and chargeable weight, COD fee, 18 % GST, RTO estimate.
 */
import { strict as assert } from "node:assert";
import { assertPriced, byId, flatWins, seeded, useRates } from "./setup";

describe("rates.serviceable: weight, COD, GST, RTO", () => {
	const t = useRates();
	const serviceable = (params: Record<string, unknown>) => t.serviceable(params);

	const lane = { from_pin: "110001", to_pin: "682001" }; // zone D

	for (const [kg, vol, weight] of [
		["0.5", undefined, 0.5],
		["0.51", undefined, 1],
		["1", undefined, 1],
		["1.01", undefined, 1.5],
		["0.2", "0", 0.5],
		["0.5", "2.2", 2.5],
		["3", "1.2", 3],
	] as const) {
		it(`Express slabs: physical ${kg} kg, volumetric ${vol ?? "-"} kg → ${weight} kg`, async () => {
			const res = await serviceable({ ...lane, physical_weight: kg, volumetric_weight: vol });
			const q = byId(res, 1)!;
			assert.equal(q.weight, weight);
			assertPriced(q, 1, "D", { kg: Math.max(Number(kg), Number(vol ?? 0)) });
		});
	}

	it("Surface uses 0.5 kg then 1 kg slabs; Lite has a 1 kg minimum", async () => {
		const res = await serviceable({ ...lane, physical_weight: "0.51" });
		assert.equal(byId(res, 2)!.weight, 1.5);
		assertPriced(byId(res, 2), 2, "D", { kg: 0.51 });
		const light = await serviceable({ ...lane, physical_weight: "0.3" });
		assert.equal(byId(light, 1)!.weight, 0.5);
		assert.equal(byId(light, 4)!.weight, 1);
		assertPriced(byId(light, 4), 4, "D", { kg: 0.3 });
	});

	it("COD = max(flat, percent of the collectable amount), only when order_type is 1", async () => {
		const small = await serviceable({
			...lane,
			physical_weight: "0.5",
			order_type: "1",
			collectable_amount: "1000",
		});
		assert.ok(flatWins(1, 1000) && flatWins(2, 1000), "seed: the flat fees beat the percentages of ₹1000");
		assert.equal(
			byId(small, 1)!.cod_charge,
			seeded.cod.get(1)!.flat_paise / 100,
			"Express flat fee beats 2.5 % of ₹1000",
		);
		assert.equal(
			byId(small, 2)!.cod_charge,
			seeded.cod.get(2)!.flat_paise / 100,
			"Surface flat fee beats 2 % of ₹1000",
		);
		assertPriced(byId(small, 1), 1, "D", { kg: 0.5, codAmount: 1000 });
		const big = await serviceable({
			...lane,
			physical_weight: "0.5",
			order_type: "1",
			collectable_amount: "5000",
		});
		assert.ok(!flatWins(1, 5000) && !flatWins(2, 5000), "seed: the percentages of ₹5000 beat the flat fees");
		assert.equal(byId(big, 1)!.cod_charge, (5000 * seeded.cod.get(1)!.percent_bp) / 10000, "2.5 % of ₹5000");
		assert.equal(byId(big, 2)!.cod_charge, (5000 * seeded.cod.get(2)!.percent_bp) / 10000, "2 % of ₹5000");
		assertPriced(byId(big, 2), 2, "D", { kg: 0.5, codAmount: 5000 });
		const odd = await serviceable({
			...lane,
			physical_weight: "0.5",
			order_type: "1",
			collectable_amount: "2345.67",
		});
		assert.ok(!flatWins(1, 2345.67));
		assert.equal(
			byId(odd, 1)!.cod_charge,
			Math.round((234567 * seeded.cod.get(1)!.percent_bp) / 10000) / 100,
			"2.5 % of ₹2345.67 = 58.64175 → 58.64 (one rounding, to the paisa)",
		);
		assertPriced(byId(odd, 1), 1, "D", { kg: 0.5, codAmount: 2345.67 });
		const prepaid = await serviceable({
			...lane,
			physical_weight: "0.5",
			order_type: "0",
			collectable_amount: "5000",
		});
		assert.equal(byId(prepaid, 1)!.cod_charge, 0);
		assert.equal(byId(prepaid, 4)!.cod_charge, 0, "Lite prices prepaid orders");
		for (const order_type of ["2", "cod", "01.5"]) {
			const other = await serviceable({
				...lane,
				physical_weight: "0.5",
				order_type,
				collectable_amount: "5000",
			});
			assert.equal(
				byId(other, 1)!.cod_charge,
				0,
				`order_type ${order_type} is prepaid (§4.2: only 1 is COD)`,
			);
			assert.ok(byId(other, 4), "Lite (no COD) prices it");
		}
	});

	it("GST is 18 % of freight + COD and total = freight + COD + GST", async () => {
		const res = await serviceable({
			...lane,
			physical_weight: "2.3",
			order_type: "1",
			collectable_amount: "1999.99",
		});
		for (const q of res.data) {
			const base = Math.round((q.freight_charge + q.cod_charge) * 100);
			assert.equal(Math.round(q.shipping_charge_tax * 100), Math.round(base * 0.18));
			assert.equal(Math.round(q.total * 100), base + Math.round(q.shipping_charge_tax * 100));
		}
		assertPriced(byId(res, 2), 2, "D", { kg: 2.3, codAmount: 1999.99 });
	});

	it("RTO charge = the courier's RTO percent of the forward freight (0 allowed)", async () => {
		const res = await serviceable({ ...lane, physical_weight: "1.7" });
		assert.equal(byId(res, 1)!.rto_charge, byId(res, 1)!.freight_charge);
		assert.equal(byId(res, 2)!.rto_charge, byId(res, 2)!.freight_charge);
		assert.equal(byId(res, 4)!.rto_charge, 0);
	});
});
