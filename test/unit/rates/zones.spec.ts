/**
 * Zones A–E (DOMAIN.md "Zones") on real lanes of the India Post directory, and the §2.7 shape of a quote.
 */
import { strict as assert } from "node:assert";
import { SANDBOX_DELHIVERY } from "../../../lib/rates/seed";
import { assertPriced, byId, QUOTE_KEYS, useRates } from "./setup";

describe("rates.serviceable: zones on real lanes", () => {
	const t = useRates();
	const serviceable = (params: Record<string, unknown>) => t.serviceable(params);

	for (const [from, to, zone, why] of [
		["400001", "400002", "A", "Mumbai → Mumbai (same district and state)"],
		["781001", "781005", "A", "Guwahati → Guwahati: same city wins over special"],
		["411001", "431001", "B", "Pune → Aurangabad (same state, one end not metro)"],
		["560001", "570001", "B", "Bengaluru → Mysuru"],
		["110001", "560001", "C", "Delhi → Bengaluru (both metros)"],
		["122001", "400001", "C", "Gurgaon (Delhi NCR) → Mumbai"],
		["411001", "400001", "C", "Pune → Mumbai: both metros, same state"],
		["110001", "682001", "D", "Delhi → Kochi (Kerala not special)"],
		["682001", "380015", "D", "Kochi → Ahmedabad"],
		["110001", "781001", "E", "Delhi → Guwahati (north-east)"],
		["560001", "190001", "E", "Bengaluru → Srinagar (J&K)"],
		["781001", "110001", "E", "special pickup end"],
	]) {
		it(`zone ${zone}: ${why}`, async () => {
			const res = await serviceable({ from_pin: from, to_pin: to, physical_weight: "0.5" });
			assert.ok(res.data.length > 0);
			for (const q of res.data) assert.equal(q.zone, zone);
			assertPriced(byId(res, 1), 1, zone, { kg: 0.5 });
		});
	}

	it("answers every quote with exactly the §2.7 keys, sorted by courier priority", async () => {
		const res = await serviceable({ from_pin: "110001", to_pin: "560001", physical_weight: "1.2" });
		assert.deepEqual(Object.keys(res).sort(), ["data", "dropped_couriers"]);
		assert.deepEqual(
			res.data.map((q) => q.logistic_id),
			[1, 2, 4, SANDBOX_DELHIVERY.logistic_id],
		);
		for (const q of res.data) {
			assert.deepEqual(Object.keys(q).sort(), QUOTE_KEYS);
			assert.equal(q.performance, null, "no history → null, never invented");
		}
		assert.equal(res.data[0].courier_name, "Sandbox Express");
		assert.deepEqual(res.dropped_couriers, [
			{
				logistic_id: 3,
				logistic_name: "Sandbox Reverse",
				reason: "forward_not_supported",
				detail: "Sandbox Reverse does reverse pickups only",
			},
		]);
		assertPriced(byId(res, 2), 2, "C", { kg: 1.2 });
		assertPriced(byId(res, 4), 4, "C", { kg: 1.2 });
	});

	it("anchors one quote in rupees (Express, zone C, 0.5 kg, prepaid)", async () => {
		const res = await serviceable({ from_pin: "110001", to_pin: "560001", physical_weight: "0.5" });
		const q = byId(res, 1)!;
		// the estimate is the calendar's (test/unit/calendar.spec.ts, test/unit/rates/edd.spec.ts); here, its shape
		assert.match(String(q.edd), /^\d{4}-\d{2}-\d{2}$/);
		assert.ok(q.edd_range && q.edd_range.min_days <= q.edd_range.max_days);
		assert.deepEqual(
			{ ...q, performance: undefined, edd: undefined, edd_range: undefined },
			{
				logistic_id: 1,
				courier_name: "Sandbox Express",
				total: 63.72,
				cod_charge: 0,
				freight_charge: 54,
				shipping_charge_tax: 9.72,
				zone: "C",
				weight: 0.5,
				rto_charge: 54,
				performance: undefined,
				edd: undefined,
				edd_range: undefined,
			},
		);
	});
});
