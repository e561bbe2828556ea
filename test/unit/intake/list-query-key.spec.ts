/**
 * A parsed `GET /v1/orders` query is frozen and its JSON written once (lib/intake/list.ts `parseOrderListQuery`,
 * lib/intake/list-store.ts `queryKey`): the listed page's key and the coalesced read's key both come from it, so a
 * query must not change after it is parsed, and its key must be exactly `JSON.stringify` of it.
 */
import assert from "node:assert/strict";
import { parseOrderListQuery } from "../../../lib/intake/list";
import { queryKey } from "../../../lib/intake/list-store";

describe("GET /v1/orders: the parsed query as a key", () => {
	it("is frozen, filters included: a change after parsing throws", () => {
		const q = parseOrderListQuery({ limit: "20", bucket: "transit", city: "Pune" }, 7);
		assert.ok(Object.isFrozen(q));
		assert.ok(Object.isFrozen(q.filters));
		assert.throws(() => {
			(q as { limit: number }).limit = 50;
		}, TypeError);
		assert.throws(() => {
			(q.filters as { city: string | null }).city = "Mumbai";
		}, TypeError);
	});

	it("its key is JSON.stringify of it, the same text at every call, another text for another query", () => {
		const a = parseOrderListQuery(
			{ limit: "20", bucket: "transit", date_from: "2026-11-01", date_to: "2026-11-30" },
			7,
		);
		const b = parseOrderListQuery(
			{ limit: "20", bucket: "transit", date_from: "2026-11-01", date_to: "2026-11-29" },
			7,
		);
		assert.equal(queryKey(a), JSON.stringify(a));
		assert.equal(queryKey(a), queryKey(a));
		assert.equal(queryKey(b), JSON.stringify(b));
		assert.notEqual(queryKey(a), queryKey(b));
		// an equal query parsed again has the same key (a listed page is found again by it)
		const again = parseOrderListQuery(
			{ limit: "20", bucket: "transit", date_from: "2026-11-01", date_to: "2026-11-30" },
			7,
		);
		assert.notEqual(again, a);
		assert.equal(queryKey(again), queryKey(a));
	});
});
