/**
 * The in-memory catalog and pincode-fact cache: lane performance after a reload, no query on the hot path, 503 rate_unavailable when the database or the pincode service fails.
 */
import { strict as assert } from "node:assert";
import { getSequelize, select } from "../../../lib/platform/db";
import { loadServiceSchema } from "../../../lib/platform/system";
import { as, rejects, startBroker } from "../../helpers/broker";
import { callAs, callRaw } from "../../helpers/call";
import { byId, seeded, useRates } from "./setup";

describe("rates: catalog and pincode facts in memory", () => {
	const t = useRates();
	const serviceable = (params: Record<string, unknown>) => t.serviceable(params);

	it("answers lane performance only from ≥ 20 shipments of history, after rates.reload", async () => {
		const db = getSequelize();
		await db.query(
			`INSERT INTO rates.lane_performance (logistic_id, from_pin, to_pin, shipments, delivered, rto, tat_days_sum)
			 VALUES (1, '110001', '560001', 25, 20, 3, 62), (2, '110001', '560001', 19, 19, 0, 40)`,
		);
		try {
			const before = await serviceable({ from_pin: "110001", to_pin: "560001", physical_weight: "1" });
			assert.equal(byId(before, 1)!.performance, null, "cached catalog: no DB read per quote");
			assert.deepEqual(await callAs(t.broker, "rates.reload"), {
				couriers: 5,
				rate_cards: seeded.cards.size,
				lanes: 1,
			});
			const res = await serviceable({ from_pin: "110001", to_pin: "560001", physical_weight: "1" });
			assert.deepEqual(byId(res, 1)!.performance, { delivered_pct: 80, rto_pct: 12, avg_tat_days: 3.1 });
			assert.equal(byId(res, 2)!.performance, null, "19 shipments are not enough");
			const other = await serviceable({ from_pin: "560001", to_pin: "110001", physical_weight: "1" });
			assert.equal(byId(other, 1)!.performance, null, "per lane and direction");
		} finally {
			await db.query("DELETE FROM rates.lane_performance");
			await callAs(t.broker, "rates.reload");
		}
	});

	it("runs no database query on the quote hot path", async () => {
		const db = getSequelize();
		await serviceable({ from_pin: "110001", to_pin: "411001", physical_weight: "1" }); // warm
		let queries = 0;
		const hook = () => {
			queries += 1;
		};
		db.addHook("beforeQuery", "count-queries", hook);
		try {
			await serviceable({ from_pin: "110001", to_pin: "411001", physical_weight: "1" });
			await serviceable({ from_pin: "400001", to_pin: "700001", physical_weight: "2", order_type: "1" });
		} finally {
			db.removeHook("beforeQuery", "count-queries");
		}
		assert.equal(queries, 0);
	});

	it("answers 503 rate_unavailable when the catalog cannot be read", async () => {
		const svc: any = t.broker.getLocalService("rates");
		const db = getSequelize();
		await db.query("ALTER TABLE rates.couriers RENAME TO couriers_offline");
		try {
			const err = await rejects(() => callAs(t.broker, "rates.reload"));
			assert.equal(err.code, 503);
			assert.ok(svc.deps().catalog, "the previous catalog stays in use");
			svc.deps().catalog = undefined; // as if the start-up load had failed
			const err2 = await rejects(() =>
				serviceable({ from_pin: "110001", to_pin: "560001", physical_weight: "1" }),
			);
			assert.equal(err2.code, 503);
			assert.deepEqual(err2.data.body, {
				error: "rate_unavailable",
				message: "Pricing is temporarily unavailable; retry",
			});
		} finally {
			await db.query("ALTER TABLE rates.couriers_offline RENAME TO couriers");
		}
		const ok = await serviceable({ from_pin: "110001", to_pin: "560001", physical_weight: "1" });
		assert.equal(ok.data.length, 4, "Express, Surface, Lite and Sandbox Delhivery");
	});

	it("serves cached pincode facts without the pincode service; 503 rate_unavailable for new ones", async () => {
		await serviceable({ from_pin: "110001", to_pin: "600001", physical_weight: "1" });
		const pincodeSvc = t.broker.getLocalService("pincode");
		await t.broker.destroyService(pincodeSvc);
		try {
			const cached = await serviceable({ from_pin: "110001", to_pin: "600001", physical_weight: "1" });
			assert.equal(cached.data[0].zone, "C");
			const err = await rejects(() =>
				serviceable({ from_pin: "110001", to_pin: "380001", physical_weight: "1" }),
			);
			assert.equal(err.code, 503);
			assert.equal(err.data.body.error, "rate_unavailable");
			const err2 = await rejects(() =>
				callAs(t.broker, "rates.quote", { from_pin: "110001", to_pin: "380001", physical_weight: 1 }),
			);
			assert.equal(err2.code, 503);
		} finally {
			const svc: any = t.broker.createService(loadServiceSchema("pincode"));
			await t.broker.waitForServices(["pincode"], 10_000, 20);
			const [{ n }] = await select<{ n: string }>(
				getSequelize(),
				"SELECT count(*) AS n FROM pincode.pincodes",
			);
			assert.equal(
				svc.directory?.size,
				Number(n),
				"the restarted pincode service loaded the whole directory",
			);
		}
		const again = await serviceable({ from_pin: "110001", to_pin: "380001", physical_weight: "1" });
		assert.equal(again.data[0].zone, "C");
	});

	it("answers 503 rate_unavailable when the pincode service fails", async () => {
		process.env.SANDBOX = "1";
		const b = await startBroker(["rates"]);
		try {
			b.createService({
				name: "pincode",
				actions: {
					lookupMany() {
						throw new Error("directory down");
					},
				},
			});
			await b.waitForServices(["pincode"], 10_000, 20);
			const err = await rejects(() =>
				// query strings as the gateway passes them (the contract types the validated query)
				callRaw(
					b,
					"rates.serviceable",
					{ from_pin: "110001", to_pin: "560001", physical_weight: "1" },
					as(t.sender),
				),
			);
			assert.equal(err.code, 503);
			assert.deepEqual(err.data.body, {
				error: "rate_unavailable",
				message: "Pricing is temporarily unavailable; retry",
			});
		} finally {
			await b.stop();
		}
	});
});
