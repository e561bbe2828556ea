/**
 * The turns of bench/turns.ts (issue 32, record 0098): a route line and its anchor alternate slice by slice,
 * anchor first, then route first, …; the slices merge into one figure (rate averaged, answers and errors summed,
 * CPU weighted by answers, p50/p99 the median slice's) and the anchor's rate is the mean of its slices.
 */
import assert from "node:assert/strict";
import { alongside, type Figure, merged } from "../../bench/turns";

const slice = (rps: number, p99: number, total: number, cpuUs: number): Figure => ({
	title: "GET /x",
	rps,
	p50: p99 / 4,
	p99,
	bad: 1,
	total,
	cpuUs,
});

describe("bench turns (route and anchor alternated)", () => {
	it("alternates anchor-route, route-anchor, … in slices of seconds / rounds (at least 2 s)", async () => {
		const order: string[] = [];
		const seconds: number[] = [];
		let n = 0;
		const { figure, anchorRate } = await alongside(
			async (s) => {
				order.push("route");
				seconds.push(s);
				return slice(100 * ++n, 10, 1000, 50);
			},
			async (s) => {
				order.push("anchor");
				seconds.push(s);
				return order.length * 10;
			},
			{ rounds: 3, seconds: 10 },
		);
		assert.deepEqual(order, ["anchor", "route", "route", "anchor", "anchor", "route"]);
		assert.deepEqual(seconds, [3, 3, 3, 3, 3, 3]);
		// anchor slices answered 10, 40, 50 (their position × 10)
		assert.equal(anchorRate, (10 + 40 + 50) / 3);
		assert.equal(figure.rps, (100 + 200 + 300) / 3);
		const short = await alongside(
			async (s) => slice(s, 1, 1, 1),
			async (s) => s,
			{ rounds: 6, seconds: 4 },
		);
		assert.equal(short.anchorRate, 2, "a slice is never shorter than 2 s");
	});

	it("merges slices: rate averaged, answers and errors summed, CPU weighted by answers, median p99", () => {
		const f = merged([slice(100, 40, 1000, 50), slice(300, 10, 3000, 90), slice(200, 20, 2000, 70)]);
		assert.equal(f.rps, 200);
		assert.equal(f.total, 6000);
		assert.equal(f.bad, 3);
		assert.equal(f.cpuUs, (1000 * 50 + 3000 * 90 + 2000 * 70) / 6000);
		assert.equal(f.p99, 20, "the median slice's p99, not the worst");
		assert.equal(f.p50, 5);
		assert.equal(f.title, "GET /x");
	});
});
