/** GC measurements for tests (node:v8's GCProfiler). */
import { GCProfiler } from "node:v8";

/**
 * Bytes that each scavenge (V8's young-generation collection) moved into the
 * old generation while `fn` ran, in order (old, code and large-object spaces
 * after minus before the scavenge).
 */
export async function promotedPerScavenge(fn: () => Promise<void>): Promise<number[]> {
	type Space = { spaceName: string; spaceUsedSize: number };
	const old = (spaces: Space[]) =>
		spaces
			.filter((s) => ["old_space", "code_space", "large_object_space"].includes(s.spaceName))
			.reduce((n, s) => n + s.spaceUsedSize, 0);
	const profiler = new GCProfiler();
	profiler.start();
	let stats: ReturnType<GCProfiler["stop"]>;
	try {
		await fn();
	} finally {
		stats = profiler.stop();
	}
	return (stats?.statistics ?? [])
		.filter((g) => g.gcType === "Scavenge")
		.map(
			(g) => old(g.afterGC.heapSpaceStatistics as Space[]) - old(g.beforeGC.heapSpaceStatistics as Space[]),
		);
}

/** The median of `xs` (the upper one of an even count); NaN when empty. */
export function median(xs: number[]): number {
	return [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? Number.NaN;
}
