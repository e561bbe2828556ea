/**
 * What a churning `Map` costs the young-generation collector, against a ChurnMap (issue 32,
 * docs/decisions/0148-pending-calls-table.md; printed figures, not a test). Each kind runs in a child process of
 * its own (`node --max-semi-space-size=16`, start:prod's young generation): for BENCH_CHURN_S seconds (default 4),
 * a key is added with a value of about 1 KB (a small object graph, as a pending call's context is) and the oldest
 * of BENCH_CHURN_LIVE (default 50) is deleted, as the transit's pending calls come and go. Prints per kind the
 * operations done, the scavenges, the bytes still in the young generation after a scavenge (its survivors) and
 * promoted per scavenge, and the collector's milliseconds (v8.GCProfiler).
 *
 * Usage: npx tsx bench/churn-map.ts
 */
import { spawnSync } from "node:child_process";
import { GCProfiler } from "node:v8";
import { ChurnMap } from "../lib/platform/churn-map";

const seconds = Number(process.env.BENCH_CHURN_S || 4);
const live = Number(process.env.BENCH_CHURN_LIVE || 50);

/** A value of about 1 KB: an object holding an array of small objects and a string. */
const payloadOf = (i: number) => ({
	i,
	parts: Array.from({ length: 20 }, (_, k) => ({ k })),
	tag: `call-${i}-${"x".repeat(40)}`,
});

/** Runs the churn on one kind of map in this process and prints its line. */
async function child(kind: "Map" | "ChurnMap"): Promise<void> {
	const table: Map<string, unknown> = kind === "Map" ? new Map() : new ChurnMap();
	const ids: string[] = [];
	const gc = new GCProfiler();
	gc.start();
	const end = Date.now() + seconds * 1000;
	let n = 0;
	while (Date.now() < end) {
		for (let k = 0; k < 1000; k++, n++) {
			const id = `ctx-${n}`;
			table.set(id, payloadOf(n));
			ids.push(id);
			if (ids.length > live) table.delete(ids.shift() as string);
		}
		await new Promise((r) => setImmediate(r));
	}
	const stats = gc.stop()?.statistics ?? [];
	const used = (h: { heapSpaceStatistics: { spaceName: string; spaceUsedSize: number }[] }, space: string) =>
		h.heapSpaceStatistics.find((s) => s.spaceName === space)?.spaceUsedSize ?? 0;
	const scavenges = stats.filter((s) => s.gcType === "Scavenge");
	const per = (f: (s: (typeof scavenges)[number]) => number) =>
		scavenges.reduce((a, s) => a + f(s), 0) / Math.max(1, scavenges.length) / 1e6;
	const gcMs = stats.reduce((a, s) => a + s.cost, 0) / 1000;
	console.log(
		`${kind.padEnd(9)} ${String(n).padStart(9)} adds   ${String(scavenges.length).padStart(4)} scavenges   survivors ${per((s) => used(s.afterGC, "new_space")).toFixed(2)} MB   promoted ${per((s) => used(s.afterGC, "old_space") - used(s.beforeGC, "old_space")).toFixed(2)} MB per scavenge   collector ${gcMs.toFixed(0)} ms`,
	);
}

const role = process.argv[2];
if (role === "Map" || role === "ChurnMap") void child(role);
else {
	console.log(
		`churn: ${live} keys present, one added and one deleted per step, ${seconds} s per kind, node ${process.version}`,
	);
	for (const kind of ["Map", "ChurnMap"]) {
		const r = spawnSync(
			process.execPath,
			["--max-semi-space-size=16", "--require", "tsx/cjs", __filename, kind],
			{
				stdio: "inherit",
			},
		);
		if (r.status !== 0) process.exit(r.status ?? 1);
	}
}
