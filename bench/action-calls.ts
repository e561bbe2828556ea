/**
 * The in-process call loop of bench/request-metrics.ts and bench/call-timeout.ts (issue 32): a broker built from
 * given options with a service whose action `outer` calls `a` (two action calls per call, as a gateway request
 * makes: `gateway.rest`, then the route's action).
 */
import { type BrokerOptions, ServiceBroker } from "moleculer";

/**
 * ns per `noop.outer` call on a broker built from `opts` (its logger off): `calls` calls timed after 50,000 to warm
 * up, made by `concurrency` callers at once (1: one after another).
 */
export async function timeOuterCalls(opts: BrokerOptions, calls: number, concurrency = 1): Promise<number> {
	const broker = new ServiceBroker({ ...opts, logger: false });
	broker.createService({
		name: "noop",
		actions: {
			a: () => ({ ok: true }),
			outer: (ctx) => ctx.call("noop.a"),
		},
	});
	await broker.start();
	const run = async (n: number) => {
		let left = n;
		await Promise.all(
			Array.from({ length: concurrency }, async () => {
				while (left-- > 0) await broker.call("noop.outer");
			}),
		);
	};
	try {
		await run(50_000);
		const t0 = process.hrtime.bigint();
		await run(calls);
		return Number(process.hrtime.bigint() - t0) / calls;
	} finally {
		await broker.stop();
	}
}
