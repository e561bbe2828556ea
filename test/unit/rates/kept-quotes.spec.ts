/**
 * Kept quote answers (lib/rates/operations.ts `runQuote`, docs/decisions/0116-kept-quotes.md): the same query is
 * answered from memory while the catalog snapshot and the pincodes' facts are unchanged, until the next cut-off or
 * full hour; a reload (a new snapshot, or new pincode facts) or a lane outcome makes it priced again.
 */
import { strict as assert } from "node:assert";
import type { QuoteResult } from "../../../lib/contracts";
import { getSequelize } from "../../../lib/platform/db";
import type { CatalogSnapshot } from "../../../lib/rates/catalog";
import type { RatesDeps } from "../../../lib/rates/deps";
import { keptQuote, quoteValidUntil, reloadCatalog } from "../../../lib/rates/operations";
import { parseServiceableQuery } from "../../../lib/rates/params";
import { rejects } from "../../helpers/broker";
import { byId, useRates } from "./setup";

const lane = { from_pin: "110001", to_pin: "560001", physical_weight: "0.8" };

describe("rates: kept quote answers", () => {
	const t = useRates();

	it("the same query twice is one answer, frozen; another query is priced on its own", async () => {
		const a = await t.serviceable(lane);
		const b = await t.serviceable(lane);
		assert.ok(a.data.length > 0);
		assert.equal(b, a, "the kept answer");
		assert.ok(Object.isFrozen(a) && Object.isFrozen(a.data) && Object.isFrozen(a.data[0]));
		const heavier = await t.serviceable({ ...lane, physical_weight: "4.2" });
		assert.notEqual(heavier, a);
		assert.ok(heavier.data[0].weight > a.data[0].weight, "priced for its own weight");
	});

	it("a catalog reload prices the query again, with the new rate card", async () => {
		const before = await t.serviceable(lane);
		const id = before.data[0].logistic_id;
		const db = getSequelize();
		const shift = (paise: number) =>
			db.query(
				"UPDATE rates.rate_cards SET first_slab_paise = first_slab_paise + $2 WHERE logistic_id = $1",
				{
					bind: [id, paise],
				},
			);
		await shift(10_000);
		try {
			// unchanged snapshot: still the kept answer
			assert.equal(await t.serviceable(lane), before);
			await t.broker.call("rates.reload", {});
			const after = await t.serviceable(lane);
			assert.notEqual(after, before);
			const was = byId(before, id);
			const now = byId(after, id);
			assert.ok(
				was && now && now.freight_charge > was.freight_charge,
				`${was?.freight_charge} → ${now?.freight_charge}`,
			);
		} finally {
			await shift(-10_000);
			await t.broker.call("rates.reload", {});
		}
	});

	it("a new catalog snapshot alone (the pincode facts kept, as a periodic or sync reload keeps them) prices the query again", async () => {
		const before = await t.serviceable(lane);
		assert.equal(await t.serviceable(lane), before);
		const rates = t.broker.getLocalService("rates") as unknown as { deps(): RatesDeps };
		const deps = rates.deps();
		const facts = deps.pincodeCache.get(lane.to_pin);
		await reloadCatalog(deps);
		assert.equal(deps.pincodeCache.get(lane.to_pin), facts, "the pincode facts are the same objects");
		const after = await t.serviceable(lane);
		assert.notEqual(after, before);
		assert.deepEqual(after, before, "same catalog rows, same prices");
	});

	it("new facts of a pincode (an entry replaced, as after its time to live) price the query again; none cached, no kept answer", async () => {
		const rates = t.broker.getLocalService("rates") as unknown as { deps(): RatesDeps };
		const deps = rates.deps();
		const before = await t.serviceable(lane);
		const facts = deps.pincodeCache.get(lane.to_pin);
		assert.ok(facts);
		deps.pincodeCache.set(lane.to_pin, { ...facts });
		const after = await t.serviceable(lane);
		assert.notEqual(after, before, "priced again for the new facts");
		assert.deepEqual(after, before);
		assert.equal(await t.serviceable(lane), after, "and kept again");
		assert.equal(keptQuote(deps, parseServiceableQuery(lane)), after, "found without awaiting");
		deps.pincodeCache.clear();
		assert.equal(
			keptQuote(deps, parseServiceableQuery(lane)),
			undefined,
			"a pincode not cached: the whole way (its facts fetched again)",
		);
		const refetched = await t.serviceable(lane);
		assert.notEqual(refetched, after);
		assert.deepEqual(refetched, after);
	});

	it("a serviceable query is parsed once per set of values: the same frozen lane query, refused every time when bad", () => {
		const q = parseServiceableQuery(lane);
		assert.ok(Object.isFrozen(q));
		assert.equal(parseServiceableQuery({ ...lane, sender_id: 900_001 }), q, "other keys do not count");
		assert.deepEqual(parseServiceableQuery({ ...lane, physical_weight: "0.9" }), {
			...q,
			physical_weight: 0.9,
		});
		assert.notEqual(parseServiceableQuery({ ...lane, order_type: "1" }), q);
		const repeated = { ...lane, to_pin: ["560001", "560002"] } as never;
		for (let i = 0; i < 2; i++)
			assert.throws(
				() => parseServiceableQuery(repeated),
				(e: { code?: number }) => e.code === 400,
			);
		const bad = { ...lane, physical_weight: "0x10" };
		for (let i = 0; i < 2; i++)
			assert.throws(
				() => parseServiceableQuery(bad),
				(e: { code?: number }) => e.code === 400,
			);
	});

	it("an unpriced lane answers 422 lane_not_priced each time, its kept answer included", async () => {
		const unknown = { from_pin: "110001", to_pin: "999999", physical_weight: "1" };
		for (let i = 0; i < 2; i++) {
			const err = await rejects(() => t.serviceable(unknown));
			assert.equal(err.code, 422);
			assert.equal(err.data.body.error, "lane_not_priced");
			assert.match(err.data.body.message, /to_pin 999999 not in the pincode directory/);
		}
	});

	it("holds until the earliest next cut-off of the couriers it prices, at most the next full hour", () => {
		const pickup = (cutoff_minutes: number) => ({ pickup: { weekdays: [1, 2, 3, 4, 5, 6], cutoff_minutes } });
		const snap = {
			byId: new Map<number, unknown>([
				[1, pickup(14 * 60)],
				[2, pickup(16 * 60)],
			]),
		} as unknown as CatalogSnapshot;
		const result = (ids: number[]) =>
			({ data: ids.map((logistic_id) => ({ logistic_id })), dropped_couriers: [] }) as unknown as QuoteResult;
		// 08:10 UTC = 13:40 IST: courier 1's cut-off (14:00 IST = 08:30 UTC) comes before the full hour
		const at = Date.parse("2026-11-27T08:10:00Z");
		assert.equal(
			new Date(quoteValidUntil(snap, result([2, 1]), at)).toISOString(),
			"2026-11-27T08:30:00.000Z",
		);
		// courier 2 alone: its cut-off (10:30 UTC) is after the full hour (09:00 UTC)
		assert.equal(new Date(quoteValidUntil(snap, result([2]), at)).toISOString(), "2026-11-27T09:00:00.000Z");
		// nothing priced: the full hour
		assert.equal(new Date(quoteValidUntil(snap, result([]), at)).toISOString(), "2026-11-27T09:00:00.000Z");
	});
});
