/**
 * Loads measured in turns (issue 32, docs/decisions/0098-benchmark-anchors.md): a route and its anchor loaded
 * slice by slice, alternately, so a machine whose speed drifts during a run moves both sides of the ratio.
 * Used by bench/run.ts; the order and the merging are checked by test/unit/bench-turns.spec.ts.
 */
import { median } from "../test/helpers/gc";

/**
 * One measured line: requests per second (2xx only), p50 and p99 in ms, and the CPU time (user + system, every
 * thread) the server's processes spent per request, in µs: the steadier measure on a machine whose load generator
 * shares the cores.
 */
export interface Figure {
	title: string;
	rps: number;
	p50: number;
	p99: number;
	bad: number;
	/** answers, good and bad */
	total: number;
	cpuUs: number;
}

/**
 * The slices of one load merged into one figure: answers, errors and CPU summed; the rate over the whole time
 * (slices of equal length); p50 and p99 the median slice's. Each slice opens its connections anew, so the worst
 * slice's p99 would mostly show that start; the median slice's is what one continuous load of that length shows.
 */
export function merged(parts: Figure[]): Figure {
	const total = parts.reduce((n, f) => n + f.total, 0);
	return {
		title: parts[0].title,
		rps: parts.reduce((n, f) => n + f.rps, 0) / parts.length,
		p50: median(parts.map((f) => f.p50)),
		p99: median(parts.map((f) => f.p99)),
		bad: parts.reduce((n, f) => n + f.bad, 0),
		total,
		cpuUs: total ? parts.reduce((n, f) => n + f.cpuUs * f.total, 0) / total : 0,
	};
}

/**
 * One line measured alongside its anchor: `rounds` turns of an anchor slice and a route slice of
 * `seconds / rounds` s each (rounded, at least 2 s), in the order anchor-route, route-anchor, … so a steady drift
 * of the machine's speed weighs on both alike. Answers the route's merged figure and the anchor's mean rate
 * (per second) over its slices.
 */
export async function alongside(
	route: (seconds: number) => Promise<Figure>,
	anchor: (seconds: number) => Promise<number>,
	opts: { rounds: number; seconds: number },
): Promise<{ figure: Figure; anchorRate: number }> {
	const slice = Math.max(2, Math.round(opts.seconds / opts.rounds));
	const parts: Figure[] = [];
	let anchorSum = 0;
	for (let i = 0; i < opts.rounds; i++) {
		if (i % 2 === 0) {
			anchorSum += await anchor(slice);
			parts.push(await route(slice));
		} else {
			parts.push(await route(slice));
			anchorSum += await anchor(slice);
		}
	}
	return { figure: merged(parts), anchorRate: anchorSum / opts.rounds };
}
