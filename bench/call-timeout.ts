/**
 * What bounding a call by its timeout costs (issue 32, docs/decisions/0125-call-deadlines.md): `npm run
 * bench:timeout` starts in-process brokers in turn, each with a service whose action `outer` calls `a` (two action
 * calls per call, as a gateway request makes: `gateway.rest`, then the route's action), with the production
 * middleware list (moleculer.config.ts `withRequestMetrics`, metrics off) and:
 *
 * - ours: `CallTimeout` (the production setting);
 * - upstream: Moleculer's own `Timeout` middleware in its place;
 * - none: `requestTimeout: 0` (calls unbounded: what the rest of the call costs).
 *
 * Each times BENCH_CALLS (default 200,000) `broker.call("noop.outer")` after 50,000 to warm up, made by
 * BENCH_CONCURRENCY (default 50) callers at once, so that many deadlines are pending as under load. Prints ns per
 * outer call and what the timeout adds to one action call (half the difference to none), for BENCH_ROUNDS (default
 * 3) rounds. Figures, not a test: compare within a round.
 */
import type { BrokerOptions } from "moleculer";
import { CallTimeout } from "../lib/platform/call-timeout";
import { withRequestMetrics } from "../moleculer.config";
import { timeOuterCalls } from "./action-calls";

const calls = Number(process.env.BENCH_CALLS || 200_000);
const rounds = Number(process.env.BENCH_ROUNDS || 3);
const concurrency = Number(process.env.BENCH_CONCURRENCY || 50);

/** ns per `noop.outer` call on a broker built from `opts` with the request timeout `requestTimeout` (ms). */
function timeCalls(opts: BrokerOptions, requestTimeout = 4_000): Promise<number> {
	return timeOuterCalls({ ...opts, requestTimeout }, calls, concurrency);
}

/** The production options with the timeout middleware `timeout` in CallTimeout's place. */
function withTimeout(timeout: unknown): BrokerOptions {
	const opts = withRequestMetrics({ metrics: { enabled: false } });
	return {
		...opts,
		middlewares: (opts.middlewares ?? []).map((mw) =>
			mw === CallTimeout ? timeout : mw,
		) as BrokerOptions["middlewares"],
	};
}

async function main(): Promise<void> {
	console.log(
		`${calls} calls of an action calling another, ${concurrency} at once, in process, node ${process.version}`,
	);
	for (let r = 0; r < rounds; r++) {
		const none = await timeCalls(withTimeout(CallTimeout), 0);
		const ours = await timeCalls(withTimeout(CallTimeout));
		const upstream = await timeCalls(withTimeout("Timeout"));
		const perCall = (ns: number) => `${((ns - none) / 2).toFixed(0)} ns per action call`;
		console.log(
			`none ${none.toFixed(0)} ns   ours ${ours.toFixed(0)} ns (${perCall(ours)})   upstream ${upstream.toFixed(0)} ns (${perCall(upstream)})`,
		);
	}
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
