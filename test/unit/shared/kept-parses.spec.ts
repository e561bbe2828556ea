/**
 * lib/shared/kept-parses.ts `KeptParses` (issue 32): a parse kept by the values of the keys it reads, given again
 * for the same values, never for others; values that make no key are parsed every time; a throwing parse keeps
 * nothing; the store starts over at its size.
 */
import assert from "node:assert/strict";
import { KeptParses } from "../../../lib/shared/kept-parses";

describe("KeptParses: parses kept by their values", () => {
	/** A store over keys a, b and a parse that counts its calls and freezes what it returns. */
	function store(max = 10) {
		const calls = { n: 0 };
		const kept = new KeptParses<Readonly<{ a: unknown; b: unknown; n: number }>>(["a", "b"], max);
		const parse = (p: Readonly<Record<string, unknown>>) => {
			calls.n++;
			if (p.a === "bad") throw new Error("bad a");
			return Object.freeze({ a: p.a, b: p.b, n: calls.n });
		};
		return { kept, parse, calls };
	}

	it("gives the same parse for the same values of its keys, whatever other keys say", () => {
		const { kept, parse, calls } = store();
		const first = kept.get({ a: "1", b: "2" }, parse);
		assert.equal(kept.get({ a: "1", b: "2", sender_id: 7 }, parse), first);
		assert.equal(calls.n, 1);
		assert.notEqual(kept.get({ a: "1", b: "3" }, parse), first);
		assert.notEqual(
			kept.get({ a: "12", b: "" }, parse),
			kept.get({ a: "1", b: "2" }, parse),
			"values do not run together",
		);
		assert.equal(calls.n, 3);
		assert.equal(kept.size, 3);
	});

	it("parses every time a value that is not a string or holds a NUL, and keeps nothing of it", () => {
		const { kept, parse, calls } = store();
		for (const a of [["1", "2"], 5, "x\0y", null]) {
			const one = kept.get({ a, b: "2" }, parse);
			assert.notEqual(kept.get({ a, b: "2" }, parse), one);
			assert.equal(kept.keyOf({ a, b: "2" }), undefined);
		}
		assert.equal(calls.n, 8);
		assert.equal(kept.size, 0);
	});

	it("a parse that throws keeps nothing: it throws again for the same values", () => {
		const { kept, parse, calls } = store();
		assert.throws(() => kept.get({ a: "bad" }, parse), /bad a/);
		assert.throws(() => kept.get({ a: "bad" }, parse), /bad a/);
		assert.equal(calls.n, 2);
		assert.equal(kept.size, 0);
	});

	it("an absent value and an empty one share a key; at its size the store starts over", () => {
		const { kept, parse, calls } = store(2);
		assert.equal(kept.keyOf({ a: "1" }), kept.keyOf({ a: "1", b: "" }));
		kept.get({ a: "1" }, parse);
		kept.get({ a: "2" }, parse);
		assert.equal(kept.size, 2);
		kept.get({ a: "3" }, parse);
		assert.equal(kept.size, 1, "cleared, then the new one kept");
		kept.get({ a: "1" }, parse);
		assert.equal(calls.n, 4, "the first was parsed again");
	});
});
