/**
 * Unit tests of the `rates` service (spec §4.2 serviceable, §2.7, §7) on a
 * broker running ["pincode", "rates"] with the sandbox seed, against the real
 * PostgreSQL of the test run. Expected charges are computed here from the
 * seeded rows read back from the database.
 */
import { strict as assert } from "node:assert";
import type { ServiceBroker } from "moleculer";
import type { CourierInfo, QuoteResult } from "../../lib/contracts";
import { getSequelize, select } from "../../lib/db";
import { SANDBOX_COURIERS, seedSandbox } from "../../lib/rates/seed";
import { Reloader } from "../../lib/reloader";
import { loadServiceSchema } from "../../lib/system";
import { as, newSender, rejects, startBroker } from "../helpers/broker";

type Card = {
	first_slab_kg: number;
	first_slab_paise: number;
	additional_slab_kg: number;
	additional_slab_paise: number;
	min_chargeable_kg: number;
};

/** Polls `probe` until `ok` holds (events cross NATS asynchronously); fails with the last value after `ms`. */
async function eventually<T>(
	probe: () => Promise<T> | T,
	ok: (v: T) => boolean,
	what: string,
	ms = 10_000,
): Promise<T> {
	const deadline = Date.now() + ms;
	for (;;) {
		const v = await probe();
		if (ok(v)) return v;
		if (Date.now() > deadline) assert.fail(`${what}: still ${JSON.stringify(v)}`);
		await new Promise((r) => setTimeout(r, 50));
	}
}

const QUOTE_KEYS = [
	"cod_charge",
	"courier_name",
	"freight_charge",
	"logistic_id",
	"performance",
	"rto_charge",
	"shipping_charge_tax",
	"total",
	"weight",
	"zone",
];

describe("rates service", () => {
	let broker: ServiceBroker;
	let sender: number;
	const cards = new Map<string, Card>();
	const cod = new Map<number, { flat_paise: number; percent_bp: number }>();
	const rto = new Map<number, number>();
	const maxKg = new Map<number, number | null>();

	before(async () => {
		process.env.SANDBOX = "1";
		broker = await startBroker(["pincode", "rates"]);
		sender = newSender();
		const db = getSequelize();
		for (const r of await select<any>(db, "SELECT * FROM rates.rate_cards"))
			cards.set(`${r.logistic_id}:${r.zone}:${r.direction}`, {
				first_slab_kg: Number(r.first_slab_kg),
				first_slab_paise: Number(r.first_slab_paise),
				additional_slab_kg: Number(r.additional_slab_kg),
				additional_slab_paise: Number(r.additional_slab_paise),
				min_chargeable_kg: Number(r.min_chargeable_kg),
			});
		for (const r of await select<any>(db, "SELECT * FROM rates.cod_config"))
			cod.set(r.logistic_id, { flat_paise: Number(r.flat_paise), percent_bp: r.percent_bp });
		for (const r of await select<any>(db, "SELECT * FROM rates.rto_rules"))
			rto.set(r.logistic_id, r.percent_bp);
		for (const r of await select<any>(db, "SELECT logistic_id, max_weight_kg FROM rates.couriers"))
			maxKg.set(r.logistic_id, r.max_weight_kg === null ? null : Number(r.max_weight_kg));
	});
	after(async () => {
		await broker?.stop();
	});

	const serviceable = (params: Record<string, unknown>) =>
		broker.call<QuoteResult, any>("rates.serviceable", params, as(sender));

	/** Expected charges, computed independently from the seeded rows (paise → rupees). */
	function expected(
		id: number,
		zone: string,
		opts: { kg: number; codAmount?: number; reverse?: boolean },
	): { weight: number; freight: number; cod: number; tax: number; total: number; rto: number } {
		const card = cards.get(`${id}:${zone}:${opts.reverse ? "reverse" : "forward"}`);
		assert.ok(card, `seeded card ${id}:${zone}`);
		const w = Math.max(opts.kg, card.min_chargeable_kg);
		let slabs = 0;
		if (w > card.first_slab_kg + 1e-9)
			slabs = Math.ceil((w - card.first_slab_kg) / card.additional_slab_kg - 1e-9);
		const weight = Math.round((card.first_slab_kg + slabs * card.additional_slab_kg) * 1000) / 1000;
		const freight = card.first_slab_paise + slabs * card.additional_slab_paise;
		let codP = 0;
		if (opts.codAmount !== undefined && !opts.reverse) {
			const c = cod.get(id)!;
			codP = Math.max(c.flat_paise, Math.round((opts.codAmount * 100 * c.percent_bp) / 10000));
		}
		const tax = Math.round((freight + codP) * 0.18);
		const rtoP = opts.reverse ? 0 : Math.round((freight * (rto.get(id) ?? 10000)) / 10000);
		return {
			weight,
			freight: freight / 100,
			cod: codP / 100,
			tax: tax / 100,
			total: (freight + codP + tax) / 100,
			rto: rtoP / 100,
		};
	}

	/** True when the seeded flat COD fee of courier `id` beats its percentage of `amount` rupees. */
	const flatWins = (id: number, amount: number) => {
		const c = cod.get(id)!;
		return c.flat_paise > (amount * 100 * c.percent_bp) / 10000;
	};

	function assertPriced(
		q: any,
		id: number,
		zone: string,
		opts: { kg: number; codAmount?: number; reverse?: boolean },
	) {
		const e = expected(id, zone, opts);
		assert.equal(q.logistic_id, id);
		assert.equal(q.zone, zone);
		assert.equal(q.weight, e.weight, "chargeable weight");
		assert.equal(q.freight_charge, e.freight, "freight");
		assert.equal(q.cod_charge, e.cod, "cod");
		assert.equal(q.shipping_charge_tax, e.tax, "gst");
		assert.equal(q.total, e.total, "total");
		assert.equal(q.rto_charge, e.rto, "rto");
	}

	const byId = (res: QuoteResult, id: number) => res.data.find((q) => q.logistic_id === id);
	const droppedOf = (res: QuoteResult, id: number) => res.dropped_couriers.find((d) => d.logistic_id === id);

	describe("sandbox seed", () => {
		it("seeds the four sandbox couriers with their rate cards, COD and RTO rules", async () => {
			const rows = await select<any>(
				getSequelize(),
				"SELECT logistic_id, logistic_name, adapter, code, forward, reverse, cod, mode, volumetric_divisor, default_priority FROM rates.couriers ORDER BY logistic_id",
			);
			assert.deepEqual(
				rows.map((r) => [r.logistic_id, r.logistic_name, r.code, r.default_priority, r.volumetric_divisor]),
				[
					[1, "Sandbox Express", "sbx-express", 1, 5000],
					[2, "Sandbox Surface", "sbx-surface", 2, 4000],
					[3, "Sandbox Reverse", "sbx-reverse", 3, 5000],
					[4, "Sandbox Lite", "sbx-lite", 4, 5000],
				],
			);
			assert.equal(rows[0].mode, "air");
			assert.equal(cards.size, 5 + 5 + 5 + 4);
			const fileCards = SANDBOX_COURIERS.flatMap((c) =>
				(["forward", "reverse"] as const).flatMap((dir) =>
					Object.keys(c.rate_cards[dir] ?? {}).map((zone) => `${c.logistic_id}:${zone}:${dir}`),
				),
			);
			assert.deepEqual(
				[...cards.keys()].sort(),
				fileCards.sort(),
				"one row per card of data/sandbox-rates.json",
			);
			assert.equal(cards.has("4:E:forward"), false, "Lite has no zone E card");
			assert.equal(cod.has(4), false, "Lite has no COD configuration");
			assert.equal(rto.get(2), 10000, "Surface RTO = 100 % of freight");
			assert.equal(rto.get(4), 0);
			const [{ n }] = await select<{ n: string }>(
				getSequelize(),
				"SELECT count(*) AS n FROM rates.lane_performance",
			);
			assert.equal(Number(n), 0, "lane_performance starts empty");
		});

		it("is idempotent and only runs when SANDBOX=1", async () => {
			const db = getSequelize();
			await db.query("DELETE FROM rates.rate_cards WHERE logistic_id = 4 AND zone = 'A'");
			process.env.SANDBOX = "0";
			const b2 = await startBroker(["rates"]);
			await b2.stop();
			let [{ n }] = await select<{ n: string }>(db, "SELECT count(*) AS n FROM rates.rate_cards");
			assert.equal(Number(n), cards.size - 1, "no seed without SANDBOX=1");
			process.env.SANDBOX = "1";
			const b3 = await startBroker(["rates"]);
			await b3.stop();
			[{ n }] = await select<{ n: string }>(db, "SELECT count(*) AS n FROM rates.rate_cards");
			assert.equal(Number(n), cards.size, "seed restores the missing card, inserts no duplicates");
			const [{ c }] = await select<{ c: string }>(db, "SELECT count(*) AS c FROM rates.couriers");
			assert.equal(Number(c), 4);
		});

		it("seedSandbox answers the number of rows it inserted (0 when everything is there)", async () => {
			const db = getSequelize();
			assert.equal(await seedSandbox(db), 0);
			await db.query("DELETE FROM rates.serviceability WHERE logistic_id = 2");
			await db.query("DELETE FROM rates.rate_cards WHERE logistic_id = 1 AND zone = 'E'");
			const rules = SANDBOX_COURIERS.find((x) => x.logistic_id === 2)!.serviceability.length;
			assert.ok(rules > 0);
			assert.equal(await seedSandbox(db), rules + 1);
			assert.equal(await seedSandbox(db), 0);
		});
	});

	describe("rates.listCouriers / rates.getCourier", () => {
		it("lists active couriers by default priority with exactly the CourierInfo keys", async () => {
			const all = await broker.call<CourierInfo[], any>("rates.listCouriers", {});
			assert.deepEqual(
				all.map((c) => c.logistic_id),
				[1, 2, 3, 4],
			);
			assert.deepEqual(all[0], {
				logistic_id: 1,
				logistic_name: "Sandbox Express",
				adapter: "sandbox",
				code: "sbx-express",
				forward: true,
				reverse: false,
				cod: true,
				default_priority: 1,
				active: true,
			});
		});

		it("filters by shipment_type (0 forward, 1 and 2 reverse)", async () => {
			const ids = async (shipment_type: number | string) =>
				(await broker.call<CourierInfo[], any>("rates.listCouriers", { shipment_type })).map(
					(c) => c.logistic_id,
				);
			assert.deepEqual(await ids(0), [1, 2, 4]);
			assert.deepEqual(await ids(1), [3]);
			assert.deepEqual(await ids("2"), [3]);
			const err = await rejects(() => ids(3));
			assert.equal(err.name, "ValidationError");
		});

		it("gets one courier or null", async () => {
			const c = await broker.call<CourierInfo | null, any>("rates.getCourier", { logistic_id: 3 });
			assert.equal(c?.code, "sbx-reverse");
			assert.equal(c?.reverse, true);
			assert.equal(await broker.call("rates.getCourier", { logistic_id: 99 }), null);
		});
	});

	describe("rates.serviceable: zones on real lanes", () => {
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
				[1, 2, 4],
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
			assert.deepEqual(
				{ ...q, performance: undefined },
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
				},
			);
		});
	});

	describe("rates.serviceable: weight, COD, GST, RTO", () => {
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
				cod.get(1)!.flat_paise / 100,
				"Express flat fee beats 2.5 % of ₹1000",
			);
			assert.equal(
				byId(small, 2)!.cod_charge,
				cod.get(2)!.flat_paise / 100,
				"Surface flat fee beats 2 % of ₹1000",
			);
			assertPriced(byId(small, 1), 1, "D", { kg: 0.5, codAmount: 1000 });
			const big = await serviceable({
				...lane,
				physical_weight: "0.5",
				order_type: "1",
				collectable_amount: "5000",
			});
			assert.ok(
				!flatWins(1, 5000) && !flatWins(2, 5000),
				"seed: the percentages of ₹5000 beat the flat fees",
			);
			assert.equal(byId(big, 1)!.cod_charge, (5000 * cod.get(1)!.percent_bp) / 10000, "2.5 % of ₹5000");
			assert.equal(byId(big, 2)!.cod_charge, (5000 * cod.get(2)!.percent_bp) / 10000, "2 % of ₹5000");
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
				Math.round((234567 * cod.get(1)!.percent_bp) / 10000) / 100,
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

	describe("rates.serviceable: dropped couriers", () => {
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
				[1, 2],
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
				[2],
			);
			assert.deepEqual(droppedOf(res, 1), {
				logistic_id: 1,
				logistic_name: "Sandbox Express",
				reason: "over_weight_limit",
				detail: `billable weight 25 kg exceeds the ${maxKg.get(1)} kg limit`,
			});
			assert.ok(
				(maxKg.get(1) ?? Infinity) < 25 && (maxKg.get(2) ?? Infinity) >= 25,
				"seed limits bracket 25 kg",
			);
			assert.equal(droppedOf(res, 4)?.reason, "over_weight_limit");
			assertPriced(byId(res, 2), 2, "C", { kg: 25 });
		});
	});

	describe("rates.serviceable: reverse", () => {
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
				[3],
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

	describe("rates.serviceable: errors", () => {
		const REQUIRED = {
			error: "from_pin, to_pin and physical_weight are required",
			message: "from_pin, to_pin and physical_weight are required",
		};
		for (const params of [
			{},
			{ to_pin: "110001", physical_weight: "1" },
			{ from_pin: "110001", physical_weight: "1" },
			{ from_pin: "110001", to_pin: "560001" },
			{ from_pin: "", to_pin: "560001", physical_weight: "1" },
			{ from_pin: "110001", to_pin: "560001", physical_weight: "" },
			{ from_pin: "110001", to_pin: "  ", physical_weight: "1" },
		]) {
			it(`400 required: ${JSON.stringify(params)}`, async () => {
				const err = await rejects(() => serviceable(params));
				assert.equal(err.code, 400);
				assert.deepEqual(err.data.body, REQUIRED);
			});
		}

		for (const [params, detail] of [
			[{ from_pin: "11001", to_pin: "560001", physical_weight: "1" }, "from_pin: must be 6 digits"],
			[{ from_pin: "110001", to_pin: "56000a", physical_weight: "1" }, "to_pin: must be 6 digits"],
			[{ from_pin: " 110001", to_pin: "560001", physical_weight: "1" }, "from_pin: must be 6 digits"],
			[
				{ from_pin: "110001", to_pin: "560001", physical_weight: "abc" },
				"physical_weight: must be a number.",
			],
			[
				{ from_pin: "110001", to_pin: "560001", physical_weight: "0" },
				"physical_weight: must be a positive number.",
			],
			[
				{ from_pin: "110001", to_pin: "560001", physical_weight: "-2" },
				"physical_weight: must be a positive number.",
			],
			[
				{ from_pin: "110001", to_pin: "560001", physical_weight: "Infinity" },
				"physical_weight: must be a number.",
			],
			[
				{ from_pin: "110001", to_pin: "560001", physical_weight: "1", volumetric_weight: "-0.1" },
				"volumetric_weight: must be greater than or equal to 0.",
			],
			[
				{ from_pin: "110001", to_pin: "560001", physical_weight: "1", volumetric_weight: "x" },
				"volumetric_weight: must be a number.",
			],
			[
				{ from_pin: "110001", to_pin: "560001", physical_weight: "1", collectable_amount: "-5" },
				"collectable_amount: must be greater than or equal to 0.",
			],
			[
				{ from_pin: "110001", to_pin: "560001", physical_weight: "1", collectable_amount: "lots" },
				"collectable_amount: must be a number.",
			],
			[
				{ from_pin: "110001", to_pin: "560001", physical_weight: "1", operation: "return" },
				"operation: must be forward or reverse",
			],
		] as const) {
			it(`400 validation_failed: ${detail} (${JSON.stringify(params)})`, async () => {
				const err = await rejects(() => serviceable(params));
				assert.equal(err.code, 400);
				assert.equal(err.data.body.error, "validation_failed");
				assert.deepEqual(err.data.body.details, [detail]);
				assert.equal(typeof err.data.body.message, "string");
			});
		}

		it("400 validation_failed lists every bad field in details", async () => {
			const err = await rejects(() =>
				serviceable({ from_pin: "1", to_pin: "2", physical_weight: "-1", operation: "sideways" }),
			);
			assert.equal(err.code, 400);
			assert.deepEqual(err.data.body, {
				error: "validation_failed",
				message: "Validation failed",
				details: [
					"from_pin: must be 6 digits",
					"to_pin: must be 6 digits",
					"physical_weight: must be a positive number.",
					"operation: must be forward or reverse",
				],
			});
		});

		it("ignores sender_id and unknown parameters", async () => {
			const a = await serviceable({
				from_pin: "110001",
				to_pin: "560001",
				physical_weight: "1",
				sender_id: "7",
				foo: 1,
			});
			const b = await serviceable({ from_pin: "110001", to_pin: "560001", physical_weight: "1" });
			assert.deepEqual(a, b);
		});

		it("422 lane_not_priced for an unknown pincode", async () => {
			const err = await rejects(() =>
				serviceable({ from_pin: "110001", to_pin: "999999", physical_weight: "1" }),
			);
			assert.equal(err.code, 422);
			const detail = "to_pin 999999 not in the pincode directory";
			assert.deepEqual(err.data.body, {
				error: "lane_not_priced",
				message: `No courier prices this lane: ${detail}`,
				dropped_couriers: [1, 2, 3, 4].map((id) => ({
					logistic_id: id,
					logistic_name: ["Sandbox Express", "Sandbox Surface", "Sandbox Reverse", "Sandbox Lite"][id - 1],
					reason: "unknown_pincode",
					detail,
				})),
			});
		});

		it("422 lane_not_priced when every courier is dropped, with the reasons", async () => {
			const err = await rejects(() =>
				serviceable({
					from_pin: "110001",
					to_pin: "744101",
					physical_weight: "22",
					order_type: "1",
					collectable_amount: "100",
				}),
			);
			assert.equal(err.code, 422);
			assert.deepEqual(Object.keys(err.data.body).sort(), ["dropped_couriers", "error", "message"]);
			assert.equal(err.data.body.error, "lane_not_priced");
			assert.deepEqual(
				err.data.body.dropped_couriers.map((d: any) => [d.logistic_id, d.reason]),
				[
					[1, "over_weight_limit"],
					[2, "not_serviceable"],
					[3, "forward_not_supported"],
					[4, "cod_config_missing"],
				],
			);
		});

		it("needs an authenticated caller", async () => {
			const err = await rejects(() =>
				broker.call("rates.serviceable", { from_pin: "110001", to_pin: "560001", physical_weight: "1" }),
			);
			assert.equal(err.code, 401);
		});
	});

	describe("rates.quote (internal)", () => {
		it("prices one courier when logistic_id is given, with numbers as input", async () => {
			const res = await broker.call<QuoteResult, any>("rates.quote", {
				from_pin: "110001",
				to_pin: "560001",
				physical_weight: 0.75,
				order_type: 1,
				collectable_amount: 1500,
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
			const res = await broker.call<QuoteResult, any>("rates.quote", {
				from_pin: "110001",
				to_pin: "999999",
				physical_weight: 1,
			});
			assert.deepEqual(res.data, []);
			assert.equal(res.dropped_couriers.length, 4);
			const one = await broker.call<QuoteResult, any>("rates.quote", {
				from_pin: "110001",
				to_pin: "781001",
				physical_weight: 1,
				logistic_id: 4,
			});
			assert.deepEqual(one.data, []);
			assert.equal(one.dropped_couriers[0].reason, "no_rate_card");
			const unknown = await broker.call<QuoteResult, any>("rates.quote", {
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
				broker.call("rates.quote", {
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

	describe("catalog in memory", () => {
		it("answers lane performance only from ≥ 20 shipments of history, after rates.reload", async () => {
			const db = getSequelize();
			await db.query(
				`INSERT INTO rates.lane_performance (logistic_id, from_pin, to_pin, shipments, delivered, rto, tat_days_sum)
				 VALUES (1, '110001', '560001', 25, 20, 3, 62), (2, '110001', '560001', 19, 19, 0, 40)`,
			);
			try {
				const before = await serviceable({ from_pin: "110001", to_pin: "560001", physical_weight: "1" });
				assert.equal(byId(before, 1)!.performance, null, "cached catalog: no DB read per quote");
				assert.deepEqual(await broker.call("rates.reload"), {
					couriers: 4,
					rate_cards: cards.size,
					lanes: 1,
				});
				const res = await serviceable({ from_pin: "110001", to_pin: "560001", physical_weight: "1" });
				assert.deepEqual(byId(res, 1)!.performance, { delivered_pct: 80, rto_pct: 12, avg_tat_days: 3.1 });
				assert.equal(byId(res, 2)!.performance, null, "19 shipments are not enough");
				const other = await serviceable({ from_pin: "560001", to_pin: "110001", physical_weight: "1" });
				assert.equal(byId(other, 1)!.performance, null, "per lane and direction");
			} finally {
				await db.query("DELETE FROM rates.lane_performance");
				await broker.call("rates.reload");
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
			const svc: any = broker.getLocalService("rates");
			const db = getSequelize();
			await db.query("ALTER TABLE rates.couriers RENAME TO couriers_offline");
			try {
				const err = await rejects(() => broker.call("rates.reload"));
				assert.equal(err.code, 503);
				assert.ok(svc.catalog, "the previous catalog stays in use");
				svc.catalog = undefined; // as if the start-up load had failed
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
			assert.equal(ok.data.length, 3);
		});

		it("serves cached pincode facts without the pincode service; 503 rate_unavailable for new ones", async () => {
			await serviceable({ from_pin: "110001", to_pin: "600001", physical_weight: "1" });
			const pincodeSvc = broker.getLocalService("pincode");
			await broker.destroyService(pincodeSvc);
			try {
				const cached = await serviceable({ from_pin: "110001", to_pin: "600001", physical_weight: "1" });
				assert.equal(cached.data[0].zone, "C");
				const err = await rejects(() =>
					serviceable({ from_pin: "110001", to_pin: "380001", physical_weight: "1" }),
				);
				assert.equal(err.code, 503);
				assert.equal(err.data.body.error, "rate_unavailable");
				const err2 = await rejects(() =>
					broker.call("rates.quote", { from_pin: "110001", to_pin: "380001", physical_weight: 1 }),
				);
				assert.equal(err2.code, 503);
			} finally {
				const svc = broker.createService(loadServiceSchema("pincode"));
				await broker.waitForServices(["pincode"], 10_000, 20);
				assert.ok(svc);
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
					b.call(
						"rates.serviceable",
						{ from_pin: "110001", to_pin: "560001", physical_weight: "1" },
						as(sender),
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

	describe("reload path", () => {
		/** A read whose result the test releases by hand. */
		function deferredReads() {
			const pending: Array<{ resolve: (v: number) => void; reject: (e: Error) => void }> = [];
			const reloader = new Reloader<number>(
				() =>
					new Promise<number>((resolve, reject) => {
						pending.push({ resolve, reject });
					}),
			);
			return { reloader, pending };
		}

		it("Reloader: concurrent callers share a read; a call during a read gets a read started after it", async () => {
			const { reloader, pending } = deferredReads();
			const first = reloader.load();
			assert.equal(pending.length, 1);
			// asked while read 1 runs (e.g. an operator reload during the periodic one): must not get read 1
			const second = reloader.load();
			const third = reloader.load();
			assert.equal(pending.length, 1, "at most one read at a time");
			pending[0].resolve(1);
			assert.equal(await first, 1);
			await new Promise((r) => setImmediate(r));
			assert.equal(pending.length, 2, "the waiting callers started ONE new read");
			pending[1].resolve(2);
			assert.equal(await second, 2);
			assert.equal(await third, 2);
			// idle again: the next call reads anew
			const fourth = reloader.load();
			assert.equal(pending.length, 3);
			pending[2].resolve(3);
			assert.equal(await fourth, 3);
		});

		it("Reloader: a failed read rejects its callers only; waiting callers still get a fresh read", async () => {
			const { reloader, pending } = deferredReads();
			const first = reloader.load();
			const second = reloader.load();
			pending[0].reject(new Error("db down"));
			await assert.rejects(first, /db down/);
			await new Promise((r) => setImmediate(r));
			assert.equal(pending.length, 2);
			pending[1].resolve(7);
			assert.equal(await second, 7);
		});

		it("rates.reload and pincode.reload on one node reach every other node (broadcast over NATS)", async function () {
			this.timeout(60_000);
			process.env.SANDBOX = "1";
			const tag = `${process.pid}-${Date.now().toString(36)}`;
			const a = await startBroker(["pincode", "rates"], { nats: true, nodeID: `rates-a-${tag}` });
			const b = await startBroker(["pincode", "rates"], { nats: true, nodeID: `rates-b-${tag}` });
			const db = getSequelize();
			const card = cards.get("1:C:forward")!;
			try {
				await eventually(
					() =>
						a.registry.getServiceList({ onlyAvailable: true }).filter((x) => x.nodeID === b.nodeID).length,
					(n) => n >= 2,
					"node a sees node b's services",
				);
				await eventually(
					() =>
						b.registry.getServiceList({ onlyAvailable: true }).filter((x) => x.nodeID === a.nodeID).length,
					(n) => n >= 2,
					"node b sees node a's services",
				);
				const onB = (params: Record<string, unknown>) =>
					b.call<QuoteResult, any>("rates.serviceable", params, { ...as(sender), nodeID: b.nodeID });
				const delhiBlr = { from_pin: "110001", to_pin: "560001", physical_weight: "0.5" };
				const delhiKochi = { from_pin: "110001", to_pin: "682001", physical_weight: "0.5" };
				assert.equal(byId(await onB(delhiBlr), 1)!.freight_charge, card.first_slab_paise / 100);
				assert.equal((await onB(delhiKochi)).data[0].zone, "D", "node b caches Kochi as not special");

				// a rate-card edit, reloaded through node a: node b prices with it too
				await db.query(
					"UPDATE rates.rate_cards SET first_slab_paise = first_slab_paise + 100 WHERE logistic_id = 1 AND zone = 'C' AND direction = 'forward'",
				);
				await a.call("rates.reload", {}, { nodeID: a.nodeID });
				await eventually(
					async () => byId(await onB(delhiBlr), 1)!.freight_charge,
					(f) => f === (card.first_slab_paise + 100) / 100,
					"node b's freight after the reload on node a",
				);

				// a zone-fact edit, reloaded through node a: node b's directory AND its rates cache follow
				await db.query(
					"INSERT INTO pincode.special_states (state, region) VALUES ('Kerala', 'test') ON CONFLICT DO NOTHING",
				);
				await a.call("pincode.reload", {}, { nodeID: a.nodeID });
				await eventually(
					async () => (await onB(delhiKochi)).data[0].zone,
					(z) => z === "E",
					"node b's zone for Kochi after pincode.reload on node a",
				);
				const bPincode: any = b.getLocalService("pincode");
				assert.equal(bPincode.directory.get("682001").special, true);
			} finally {
				await db.query(
					"UPDATE rates.rate_cards SET first_slab_paise = $1 WHERE logistic_id = 1 AND zone = 'C' AND direction = 'forward'",
					{ bind: [card.first_slab_paise] },
				);
				await db.query("DELETE FROM pincode.special_states WHERE state = 'Kerala'");
				await Promise.all([a.stop(), b.stop()]);
			}
			// the in-process broker of this file never saw the edits
			assert.equal(
				byId(await serviceable({ from_pin: "110001", to_pin: "560001", physical_weight: "0.5" }), 1)!
					.freight_charge,
				card.first_slab_paise / 100,
			);
		});
	});
});
