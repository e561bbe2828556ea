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

/**
 * A burst of calls in flight at once: `rounds` rounds of `perRound`
 * concurrent `call()`s, the answers of the last four rounds held meanwhile
 * (as overlapping requests' are under load), then released. Enough to make
 * V8's allocation-site pretenuring tenure the call path's literals
 * (moleculer.config.ts `disablePretenuring`). Answers how many answers were
 * held at the end, before the release (4 × `perRound` for 5 rounds).
 */
export async function burstInFlight(
	call: () => Promise<unknown>,
	rounds = 5,
	perRound = 5000,
): Promise<number> {
	const held: unknown[][] = [];
	for (let round = 0; round < rounds; round++) {
		held.push(await Promise.all(Array.from({ length: perRound }, call)));
		if (held.length > 4) held.shift();
	}
	const n = held.flat().length;
	held.length = 0;
	return n;
}
