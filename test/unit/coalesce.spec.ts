/**
 * lib/platform/coalesce.ts: concurrent calls share runs, one run in flight at a time,
 * each caller gets the result (or the error) of the run that took its keys.
 */
import assert from "node:assert/strict";
import { coalesce, groupCommit } from "../../lib/platform/coalesce";

describe("coalesce", () => {
	it("runs a lone call at once, and the calls made while a run is in flight together in the next run", async () => {
		const runs: number[][] = [];
		let release: () => void = () => undefined;
		let inFlight = 0;
		let maxInFlight = 0;
		const f = coalesce(async (keys: number[]) => {
			runs.push(keys);
			inFlight++;
			maxInFlight = Math.max(maxInFlight, inFlight);
			if (runs.length === 1) await new Promise<void>((r) => (release = r));
			inFlight--;
			return new Set(keys);
		});
		const first = f([1]);
		await new Promise((r) => setImmediate(r));
		assert.deepEqual(runs, [[1]]);
		const later = [f([2, 3]), f([3, 4]), f([5])];
		await new Promise((r) => setImmediate(r));
		assert.equal(runs.length, 1, "no second run while the first is in flight");
		release();
		const [r1, ...rest] = await Promise.all([first, ...later]);
		assert.deepEqual([...r1], [1]);
		assert.deepEqual(runs, [[1], [2, 3, 4, 5]]); // deduplicated
		for (const r of rest) assert.deepEqual([...r], [2, 3, 4, 5]);
		assert.equal(maxInFlight, 1);
	});

	it("rejects the callers of a failed run only, and keeps serving afterwards", async () => {
		let n = 0;
		const f = coalesce(async (keys: string[]) => {
			n++;
			if (keys.includes("bad")) throw new Error("boom");
			return keys.length;
		});
		await assert.rejects(f(["bad"]), /boom/);
		assert.equal(await f(["ok"]), 1);
		assert.equal(n, 2);
	});

	it("splits a backlog into runs of at most maxKeys keys without splitting a call", async () => {
		const runs: number[][] = [];
		const f = coalesce(async (keys: number[]) => {
			runs.push(keys);
			return keys.length;
		}, 3);
		await Promise.all([f([1, 2]), f([3]), f([4, 5]), f([6, 7, 8, 9])]);
		assert.deepEqual(runs, [
			[1, 2, 3],
			[4, 5],
			[6, 7, 8, 9],
		]);
	});
});

describe("groupCommit", () => {
	/** A wave function that records its waves and holds each until released. */
	function held() {
		const waves: number[][] = [];
		const releases: Array<() => void> = [];
		let inFlight = 0;
		let maxInFlight = 0;
		const wave = async (items: number[]): Promise<PromiseSettledResult<string>[]> => {
			waves.push(items);
			inFlight++;
			maxInFlight = Math.max(maxInFlight, inFlight);
			await new Promise<void>((r) => releases.push(r));
			inFlight--;
			return items.map((n) =>
				n < 0
					? { status: "rejected", reason: new Error(`bad ${n}`) }
					: { status: "fulfilled", value: `ok ${n}` },
			);
		};
		return { waves, releases, wave, max: () => maxInFlight };
	}
	const tick = () => new Promise((r) => setImmediate(r));

	it("gathers the calls made while a wave is in flight into the next wave; each caller gets its own item's result", async () => {
		const h = held();
		const f = groupCommit(h.wave, { inFlight: 1 });
		const first = f(1);
		await tick();
		assert.deepEqual(h.waves, [[1]]);
		const later = [f(2), f(-3), f(4)];
		await tick();
		assert.equal(h.waves.length, 1, "no second wave while the first is in flight");
		h.releases[0]();
		assert.equal(await first, "ok 1");
		await tick();
		assert.deepEqual(h.waves, [[1], [2, -3, 4]]);
		h.releases[1]();
		const settled = await Promise.allSettled(later);
		assert.deepEqual(settled[0], { status: "fulfilled", value: "ok 2" });
		assert.equal(settled[1].status, "rejected");
		assert.match(String((settled[1] as PromiseRejectedResult).reason), /bad -3/);
		assert.deepEqual(settled[2], { status: "fulfilled", value: "ok 4" });
		assert.equal(h.max(), 1);
	});

	it("runs up to inFlight waves at once and cuts waves at maxItems", async () => {
		const h = held();
		const f = groupCommit(h.wave, { inFlight: 2, maxItems: 2 });
		const all = [1, 2, 3, 4, 5].map((n) => f(n));
		await tick();
		assert.deepEqual(h.waves, [
			[1, 2],
			[3, 4],
		]);
		h.releases[0]();
		await tick();
		await tick();
		assert.deepEqual(h.waves[2], [5]);
		h.releases[1]();
		h.releases[2]();
		assert.deepEqual(await Promise.all(all), ["ok 1", "ok 2", "ok 3", "ok 4", "ok 5"]);
		assert.equal(h.max(), 2);
	});

	it("rejects every call of a wave that throws, and keeps serving afterwards", async () => {
		let n = 0;
		const f = groupCommit(async (items: string[]): Promise<PromiseSettledResult<string>[]> => {
			n++;
			if (items.includes("bad")) throw new Error("boom");
			return items.map((value) => ({ status: "fulfilled", value }));
		});
		const [a, b] = await Promise.allSettled([f("x"), f("bad")]);
		assert.equal(a.status, "rejected");
		assert.equal(b.status, "rejected");
		assert.equal(await f("y"), "y");
		assert.equal(n, 2);
	});
});
