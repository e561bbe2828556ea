/**
 * The pincode facts cache of rates (lib/rates/cache.ts `TtlLru`): entries expire after their time to live, and the
 * least recently used (a read counts as a use) goes first beyond `max`.
 */
import assert from "node:assert/strict";
import { TtlLru } from "../../../lib/rates/cache";

describe("rates: TtlLru (pincode facts cache)", () => {
	/** A cache of at most `max` entries living `ttl` ms on a clock the test moves. */
	function cache(max: number, ttl: number) {
		const clock = { t: 1_000_000 };
		return { c: new TtlLru<string>(max, ttl, () => clock.t), clock };
	}

	it("answers a live entry, forgets it once its time to live has passed", () => {
		const { c, clock } = cache(10, 5_000);
		c.set("560001", "Bengaluru");
		assert.equal(c.get("560001"), "Bengaluru");
		clock.t += 4_999;
		assert.equal(c.get("560001"), "Bengaluru");
		clock.t += 1;
		assert.equal(c.get("560001"), undefined);
		assert.equal(c.size, 0, "the expired entry is dropped when read");
		assert.equal(c.get("110001"), undefined);
	});

	it("beyond max the least recently used goes first: a read makes its entry the most recent", () => {
		const { c } = cache(2, 60_000);
		c.set("a", "A");
		c.set("b", "B");
		assert.equal(c.get("a"), "A", "a is now the most recent");
		c.set("c", "C");
		assert.equal(c.get("b"), undefined, "b was the least recently used");
		assert.equal(c.get("a"), "A");
		assert.equal(c.get("c"), "C");
		assert.equal(c.size, 2);
	});

	it("an entry read at least once in every max / 2 placements is never evicted; one read less often goes", () => {
		const { c } = cache(10, 60_000);
		c.set("hot", "H");
		c.set("warm", "W");
		for (let i = 0; i < 1_000; i++) {
			c.set(`k${i}`, "x");
			if (i % 5 === 4) assert.equal(c.get("hot"), "H", `hot still kept after ${i + 1} other keys`);
			if (i % 20 === 19) c.get("warm");
			assert.ok(c.size <= 10);
		}
		assert.equal(c.get("hot"), "H");
		assert.equal(c.get("warm"), undefined, "read once in 20 placements of a cache of 10: evicted");
	});

	it("setting a key again replaces its value and makes it the most recent; clear drops everything", () => {
		const { c } = cache(2, 60_000);
		c.set("a", "A");
		c.set("b", "B");
		c.set("a", "A2");
		c.set("c", "C");
		assert.equal(c.get("b"), undefined);
		assert.equal(c.get("a"), "A2");
		c.clear();
		assert.equal(c.size, 0);
		assert.equal(c.get("a"), undefined);
	});
});
