/**
 * What request metrics add to an in-process action call (issue 32, docs/decisions/0114-request-metrics.md):
 * `npm run bench:metrics` starts three in-process brokers in turn, each with a service whose action `outer` calls
 * `a` (two action calls per call, as a gateway request makes: `gateway.rest`, then the route's action), and times
 * BENCH_CALLS (default 200,000) sequential `broker.call("noop.outer")` after 50,000 to warm up:
 *
 * - metrics off (moleculer.config.ts's middleware list, `metrics.enabled: false`);
 * - ours: metrics on with {@link RequestMetrics} (the production setting, `withRequestMetrics`);
 * - upstream: metrics on with Moleculer's own `Metrics` middleware.
 *
 * Prints ns per outer call for each, and what metrics add to one action call (half the difference to off), for
 * BENCH_ROUNDS (default 3) rounds. Figures, not a test: a machine's speed changes them; compare within a round.
 */
import type { BrokerOptions } from "moleculer";
import { metricsOptions } from "../lib/platform/metrics";
import { withRequestMetrics } from "../moleculer.config";
import { freePort } from "../test/helpers/net";
import { timeOuterCalls } from "./action-calls";

const calls = Number(process.env.BENCH_CALLS || 200_000);
const rounds = Number(process.env.BENCH_ROUNDS || 3);

/** ns per `noop.outer` call on a broker built from `opts`, one call after another. */
function timeCalls(opts: BrokerOptions): Promise<number> {
	return timeOuterCalls(opts, calls);
}

/** Metrics on, served on a free port (the Prometheus endpoint of moleculer.config.ts). */
async function metricsOn(): Promise<BrokerOptions["metrics"]> {
	return metricsOptions({ METRICS_PORT: String(await freePort()) } as NodeJS.ProcessEnv);
}

async function main(): Promise<void> {
	console.log(`${calls} calls of an action calling another, in process, node ${process.version}`);
	for (let r = 0; r < rounds; r++) {
		const off = await timeCalls(withRequestMetrics({ metrics: { enabled: false } }));
		const ours = await timeCalls(withRequestMetrics({ metrics: await metricsOn() }));
		const upstream = await timeCalls({ metrics: await metricsOn() });
		const perCall = (ns: number) => `${((ns - off) / 2).toFixed(0)} ns per action call`;
		console.log(
			`off ${off.toFixed(0)} ns   ours ${ours.toFixed(0)} ns (${perCall(ours)})   upstream ${upstream.toFixed(0)} ns (${perCall(upstream)})`,
		);
	}
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
