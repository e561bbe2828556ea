/**
 * CallFallback (lib/platform/call-fallback.ts, docs/decisions/0144-fallback-where-used.md) answers as Moleculer's
 * built-in Fallback middleware does: two in-process brokers, one with Moleculer's internal middlewares as they come
 * and one with the options of moleculer.config.ts (`withRequestMetrics`), run the same calls (a failure with no
 * fallback, a call's `fallbackResponse` as a value and as a function, an action's own `fallback` as a method name
 * and as a function, a success), and their answers, errors, warnings and `moleculer.request.fallback.total` counts
 * are compared. Without a fallback the call's promise is the next handler's own (no wrapper promise).
 */
import assert from "node:assert/strict";
import { type BrokerOptions, type Context, Errors, ServiceBroker } from "moleculer";
import { CallFallback } from "../../../lib/platform/call-fallback";
import { withRequestMetrics } from "../../../moleculer.config";

/** A broker with metrics on (no reporter), its warnings recorded in `warnings`. */
async function start(opts: BrokerOptions, warnings: string[]): Promise<ServiceBroker> {
	const b = new ServiceBroker({ logger: false, metrics: { enabled: true, reporter: [] }, ...opts });
	b.logger.warn = (...args: unknown[]) => {
		warnings.push(String(args[0]));
	};
	b.createService({
		name: "calc",
		actions: {
			quick: () => "quick",
			fail: () => {
				throw new Errors.MoleculerClientError("no such order", 404, "order_not_found");
			},
			named: {
				fallback: "spare",
				handler: () => {
					throw new Errors.MoleculerError("courier down", 503, "courier_down");
				},
			},
			inline: {
				fallback: async (_ctx: Context, err: Error) => `inline after ${err.message}`,
				handler: () => {
					throw new Errors.MoleculerError("courier down", 503, "courier_down");
				},
			},
		},
		methods: {
			spare(_ctx: Context, err: Error) {
				return `spare after ${err.message}`;
			},
		},
	});
	await b.start();
	return b;
}

/** What a call ended with: its answer, or its error's class, code, type and message. */
async function outcome(p: Promise<unknown>): Promise<unknown> {
	try {
		return { answer: await p };
	} catch (err) {
		const e = err as { name?: string; code?: unknown; type?: unknown; message?: string };
		return { error: e.name, code: e.code, type: e.type, message: e.message };
	}
}

/** The `moleculer.request.fallback.total` items (labels and count), sorted. */
function fallbackCounts(b: ServiceBroker): string[] {
	const snap = (b.metrics.getMetric("moleculer.request.fallback.total")?.snapshot() ?? []) as {
		labels: object;
		value: number;
	}[];
	return snap.map((x) => `${JSON.stringify(x.labels)} ${x.value}`).sort();
}

describe("unit: CallFallback answers as Moleculer's Fallback middleware (issue 32)", () => {
	const upstreamWarnings: string[] = [];
	const oursWarnings: string[] = [];
	let upstream: ServiceBroker;
	let ours: ServiceBroker;

	before(async () => {
		upstream = await start({}, upstreamWarnings);
		ours = await start(withRequestMetrics({}), oursWarnings);
		assert.ok(
			(ours.middlewares as unknown as { list: { name?: string }[] }).list.some((m) => m.name === "Fallback"),
			"the config's broker lists a Fallback middleware",
		);
	});

	after(async () => {
		await upstream?.stop();
		await ours?.stop();
	});

	it("gives the same answers, errors, warnings and fallback counts for the same calls", async () => {
		const calls: [string, unknown, object][] = [
			["calc.quick", {}, {}],
			["calc.fail", {}, {}],
			["calc.fail", {}, { fallbackResponse: { from: "the call" } }],
			["calc.fail", {}, { fallbackResponse: (_ctx: Context, err: Error) => `function after ${err.message}` }],
			["calc.fail", {}, { fallbackResponse: 0 }],
			["calc.quick", {}, { fallbackResponse: "unused" }],
			["calc.named", {}, {}],
			["calc.inline", {}, {}],
			["calc.named", {}, { fallbackResponse: "the call's wins" }],
		];
		for (const [action, params, opts] of calls) {
			const a = await outcome(upstream.call(action, params, opts));
			const b = await outcome(ours.call(action, params, opts));
			assert.deepEqual(b, a, `${action} ${JSON.stringify(opts)}`);
		}
		assert.deepEqual(oursWarnings, upstreamWarnings);
		assert.equal(
			oursWarnings.length,
			3,
			"the broker's warning for each call answered by its fallbackResponse",
		);
		assert.deepEqual(fallbackCounts(ours), fallbackCounts(upstream));
		assert.equal(
			fallbackCounts(ours).length,
			4,
			"counted: calc.fail (by the call), calc.named (by both), calc.inline",
		);
	});

	it("returns the next handler's own promise for a call without fallbackResponse to an action without fallback", () => {
		const mw = CallFallback(ours) as unknown as Record<
			"localAction" | "remoteAction",
			(next: (ctx: Context) => Promise<unknown>, action: object) => (ctx: Context) => Promise<unknown>
		>;
		const answer = Promise.resolve("rows");
		const failure = Promise.reject(new Error("lost"));
		failure.catch(() => undefined);
		for (const hook of ["localAction", "remoteAction"] as const) {
			const ok = mw[hook].call(ours, () => answer, { name: "calc.quick" });
			const bad = mw[hook].call(ours, () => failure, { name: "calc.fail" });
			const ctx = { options: {} } as Context;
			assert.equal(ok(ctx), answer, `${hook}: the answer's promise itself`);
			assert.equal(bad(ctx), failure, `${hook}: the failure's promise itself`);
		}
	});
});
