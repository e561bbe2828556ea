/**
 * lib/platform/coalesce.ts: concurrent calls share runs, one run in flight at a time,
 * each caller gets the result (or the error) of the run that took its keys.
 */
import assert from "node:assert/strict";
import { coalesce } from "../../lib/platform/coalesce";

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
