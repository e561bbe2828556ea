/**
 * ChurnMap (lib/platform/churn-map.ts, docs/decisions/0148-pending-calls-table.md) answers as a `Map<string, V>`
 * does: the same operations on both, in the same order, give the same results, sizes and contents (compared as
 * sorted entries: a ChurnMap keeps an object's key order, not insertion order); deleting while iterating and the
 * keys an object treats specially (`__proto__`, integer-like, `constructor`) included.
 */
import assert from "node:assert/strict";
import { ChurnMap } from "../../../lib/platform/churn-map";

/** `m`'s entries, sorted by key. */
const sorted = <V>(m: Iterable<[string, V]>): [string, V][] =>
	[...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

describe("ChurnMap: a Map<string, V> on a prototype-less object", () => {
	it("gives a Map's answers to the same random set / get / has / delete / clear sequence", () => {
		const m = new Map<string, { n: number }>();
		const c = new ChurnMap<{ n: number }>();
		const keys = ["a", "b", "__proto__", "constructor", "toString", "0", "17", "-1", "1e3", "x y", ""];
		let seed = 7;
		const rnd = (n: number) => {
			seed = (seed * 1103515245 + 12345) % 2 ** 31;
			return seed % n;
		};
		for (let i = 0; i < 5_000; i++) {
			const k = keys[rnd(keys.length)] as string;
			const op = rnd(10);
			if (op < 4) {
				const v = { n: i };
				assert.equal(c.set(k, v), c);
				m.set(k, v);
			} else if (op < 7) assert.equal(c.delete(k), m.delete(k), `delete ${k}`);
			else if (op < 9) {
				assert.equal(c.get(k), m.get(k), `get ${k}`);
				assert.equal(c.has(k), m.has(k), `has ${k}`);
			} else if (rnd(20) === 0) {
				c.clear();
				m.clear();
			}
			assert.equal(c.size, m.size);
		}
		assert.deepEqual(sorted(c), sorted(m));
		assert.deepEqual(sorted(c.entries()), sorted(m.entries()));
		assert.deepEqual([...c.keys()].sort(), [...m.keys()].sort());
		assert.deepEqual(
			[...c.values()].map((v) => v.n).sort((a, b) => a - b),
			[...m.values()].map((v) => v.n).sort((a, b) => a - b),
		);
		assert.equal(Object.prototype.toString.call(c), "[object ChurnMap]");
	});

	it("lets forEach and for…of delete as they go, as Moleculer's removePendingRequestByNodeID does", () => {
		const c = new ChurnMap<{ node: string }>();
		for (let i = 0; i < 100; i++) c.set(`ctx-${i}`, { node: i % 3 === 0 ? "dead" : "alive" });
		const seen: string[] = [];
		c.forEach((req, id, map) => {
			seen.push(id);
			if (req.node === "dead") map.delete(id);
		});
		assert.equal(seen.length, 100);
		assert.equal(c.size, 66);
		// deleting keys not yet visited: they are not visited
		const visited: string[] = [];
		for (const [id] of c) {
			visited.push(id);
			c.delete("ctx-98");
			c.delete(id);
		}
		assert.equal(c.size, 0);
		assert.ok(!visited.includes("ctx-98"));
		assert.equal(visited.length, 65);
	});

	it("holds no undefined value (which it would read as absent)", () => {
		const c = new ChurnMap<unknown>();
		assert.throws(() => c.set("a", undefined), TypeError);
		assert.equal(c.size, 0);
		c.set("a", null);
		assert.equal(c.has("a"), true);
		assert.equal(c.get("a"), null);
		assert.equal(c.size, 1);
	});
});
