/**
 * A parsed `GET /v1/orders` query is frozen (lib/intake/list.ts `parseOrderListQuery`) and compared by its JSON
 * (lib/intake/list-store.ts `queryKey`, exactly `JSON.stringify` of it), from which its short id is made once per
 * query object (`queryId`): the listed page's key and the coalesced read's key hold that id, so a query must not
 * change after it is parsed.
 */
import assert from "node:assert/strict";
import { nextCursorOf, parseOrderListQuery } from "../../../lib/intake/list";
import { queryId, queryKey } from "../../../lib/intake/list-store";

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
			{ limit: " 20", bucket: "transit", date_from: "2026-11-01", date_to: "2026-11-30" },
			7,
		);
		assert.notEqual(again, a, "other values (a space), parsed anew");
		assert.deepEqual(again, a);
		assert.equal(queryKey(again), queryKey(a));
	});

	it("a query without a cursor parsed again from the same values is the same frozen query, for any account; a cursor's is parsed anew", () => {
		const params = { limit: "7", bucket: "delivered", city: "Pune" };
		const a = parseOrderListQuery(params, 7);
		assert.equal(parseOrderListQuery({ ...params }, 7), a);
		assert.equal(
			parseOrderListQuery({ ...params, sender_id: "9" }, 9),
			a,
			"another account, other keys ignored",
		);
		assert.notEqual(parseOrderListQuery({ ...params, city: "Agra" }, 7), a);
		assert.equal(parseOrderListQuery({ ...params, city: "Agra" }, 7).filters.city, "Agra");
		// a value holding the memo's separator (NUL) is not a key of its own: it is refused, as any control character
		const nul = { ...params, city: "Pu\u0000ne" };
		assert.throws(() => parseOrderListQuery(nul, 7), /city/);
		// a bad value throws every time (nothing kept for it)
		for (let i = 0; i < 2; i++)
			assert.throws(
				() => parseOrderListQuery({ limit: "0" }, 7),
				(e: { type?: string }) => e.type === "validation_failed",
			);
		// with a cursor the query is the account's own page bound, made afresh every time
		const cursor = nextCursorOf(7, a, 100, true) as string;
		const next = parseOrderListQuery({ ...params, cursor }, 7);
		assert.equal(next.before_id, 100);
		assert.notEqual(parseOrderListQuery({ ...params, cursor }, 7), next);
		assert.deepEqual(parseOrderListQuery({ ...params, cursor }, 7), next);
		assert.throws(() => parseOrderListQuery({ ...params, cursor }, 9), /cursor/, "not another account's");
	});

	it("its id (the keys' part) is short, the same for equal queries parsed apart, another for another query", () => {
		const params = { limit: "9", bucket: "rto" };
		const first = parseOrderListQuery(params, 7);
		const cursor = nextCursorOf(7, first, 500, true) as string;
		const a = parseOrderListQuery({ ...params, cursor }, 7);
		const b = parseOrderListQuery({ ...params, cursor }, 7);
		assert.notEqual(a, b, "a cursor's query is parsed anew");
		assert.equal(queryId(a), queryId(b), "equal queries, one id");
		assert.ok(queryId(a).length <= 8, queryId(a));
		assert.notEqual(queryId(a), queryId(first));
		assert.notEqual(
			queryId(parseOrderListQuery({ ...params, cursor: nextCursorOf(7, first, 499, true) as string }, 7)),
			queryId(a),
		);
		assert.equal(queryId(first), queryId(parseOrderListQuery({ limit: "9", bucket: "rto" }, 7)));
	});
});
