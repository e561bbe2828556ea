/**
 * Sandbox seed of the rates schema (lib/rates/seed.ts, docs/ARCHITECTURE.md §4): the couriers, rate cards, COD and RTO rules of data/sandbox-rates.json, idempotent, only with
 * SANDBOX=1.
 */
import { strict as assert } from "node:assert";
import { getSequelize, select } from "../../../lib/platform/db";
import { SANDBOX_COURIERS, seedSandbox } from "../../../lib/rates/seed";
import { startBroker } from "../../helpers/broker";
import { seeded, useRates } from "./setup";

describe("rates: sandbox seed", () => {
	useRates();

	it("seeds the five sandbox couriers with their rate cards, COD and RTO rules", async () => {
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
				[5, "Sandbox Delhivery", "sbx-delhivery", 5, 5000],
			],
		);
		assert.equal(rows[0].mode, "air");
		assert.equal(
			seeded.cards.size,
			5 + 5 + 5 + 4 + 5 + 5,
			"Sandbox Delhivery: Surface's cards, forward and reverse",
		);
		const fileCards = SANDBOX_COURIERS.flatMap((c) =>
			(["forward", "reverse"] as const).flatMap((dir) =>
				Object.keys(c.rate_cards[dir] ?? {}).map((zone) => `${c.logistic_id}:${zone}:${dir}`),
			),
		);
		assert.deepEqual(
			[...seeded.cards.keys()].sort(),
			fileCards.sort(),
			"one row per card of data/sandbox-rates.json",
		);
		assert.equal(seeded.cards.has("4:E:forward"), false, "Lite has no zone E card");
		assert.equal(seeded.cod.has(4), false, "Lite has no COD configuration");
		assert.equal(seeded.rto.get(2), 10000, "Surface RTO = 100 % of freight");
		assert.equal(seeded.rto.get(4), 0);
		const [dl] = await select<{ adapter: string }>(
			getSequelize(),
			"SELECT adapter FROM rates.couriers WHERE code = 'sbx-delhivery'",
		);
		assert.equal(dl.adapter, "delhivery", "the real Delhivery adapter, pointed at the simulator");
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
		assert.equal(Number(n), seeded.cards.size - 1, "no seed without SANDBOX=1");
		process.env.SANDBOX = "1";
		const b3 = await startBroker(["rates"]);
		await b3.stop();
		[{ n }] = await select<{ n: string }>(db, "SELECT count(*) AS n FROM rates.rate_cards");
		assert.equal(Number(n), seeded.cards.size, "seed restores the missing card, inserts no duplicates");
		const [{ c }] = await select<{ c: string }>(db, "SELECT count(*) AS c FROM rates.couriers");
		assert.equal(Number(c), 5);
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
