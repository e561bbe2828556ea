/**
 * RequestMetrics (lib/platform/request-metrics.ts, docs/decisions/0114-request-metrics.md) records the same
 * request series as Moleculer's built-in Metrics middleware: two in-process brokers, one with Moleculer's
 * internal middlewares as they come and one with the options of moleculer.config.ts (`withRequestMetrics`), run
 * the same calls (two callers, a nested call, failures, a slow action), and their registries' snapshots of the
 * five request metrics are compared.
 */
import assert from "node:assert/strict";
import { type BrokerOptions, Errors, type MetricRegistry, ServiceBroker } from "moleculer";
import {
	internalMiddlewares,
	QUANTILE_SAMPLES_PER_BUCKET,
	RequestMetrics,
} from "../../../lib/platform/request-metrics";
import { withRequestMetrics } from "../../../moleculer.config";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A broker with metrics on (no reporter) and the services the calls use. */
async function start(opts: BrokerOptions): Promise<ServiceBroker> {
	const b = new ServiceBroker({ logger: false, metrics: { enabled: true, reporter: [] }, ...opts });
	b.createService({
		name: "calc",
		actions: {
			add: (ctx) => (ctx.params as { a: number; b: number }).a + (ctx.params as { a: number; b: number }).b,
			twice: async (ctx) => (await ctx.call("calc.add", { a: 1, b: 1 })) as number,
			slow: async () => {
				await sleep(120);
				return "late";
			},
			fail: () => {
				throw new Errors.MoleculerClientError("no such order", 404, "order_not_found");
			},
		},
	});
	b.createService({
		name: "caller",
		actions: { run: async (ctx) => ctx.call("calc.add", { a: 2, b: 3 }) },
	});
	await b.start();
	return b;
}

/** The same calls on a broker. */
async function drive(b: ServiceBroker): Promise<void> {
	for (let i = 0; i < 5; i++) assert.equal(await b.call("calc.add", { a: i, b: 1 }), i + 1);
	assert.equal(await b.call("calc.twice"), 2);
	assert.equal(await b.call("caller.run"), 5);
	assert.equal(await b.call("calc.slow"), "late");
	for (let i = 0; i < 3; i++) await assert.rejects(b.call("calc.fail"), { code: 404 });
}

/** The snapshot of the request metrics, comparable across brokers (timings left out, counts kept). */
function requestSeries(reg: MetricRegistry): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const name of [
		"moleculer.request.total",
		"moleculer.request.active",
		"moleculer.request.error.total",
		"moleculer.request.levels",
	]) {
		const items = reg.getMetric(name)?.snapshot() as unknown as { value: number; labels: object }[];
		out[name] = items
			.map((it) => ({ labels: it.labels, value: it.value }))
			.sort((x: { labels: object }, y: { labels: object }) =>
				JSON.stringify(x.labels).localeCompare(JSON.stringify(y.labels)),
			);
	}
	return out;
}

type HistSnap = {
	labels: { action: string; caller: string | null };
	count: number;
	sum: number;
	buckets: Record<string, number>;
	quantiles: Record<string, number>;
};

describe("ops: RequestMetrics records Moleculer's request series", () => {
	let builtIn: ServiceBroker;
	let ours: ServiceBroker;
	before(async () => {
		builtIn = await start({});
		ours = await start(withRequestMetrics({}));
		await drive(builtIn);
		await drive(ours);
	});
	after(async () => {
		await builtIn?.stop();
		await ours?.stop();
	});

	it("is in the broker options in place of Moleculer's Metrics, internal middlewares in Moleculer's order", () => {
		const opts = withRequestMetrics({ middlewares: [] });
		assert.equal(opts.internalMiddlewares, false);
		assert.deepEqual(opts.middlewares, internalMiddlewares());
		assert.ok((opts.middlewares ?? []).includes(RequestMetrics as never));
		assert.ok(!(opts.middlewares ?? []).includes("Metrics" as never));
		// options built from these options are not given a second set
		assert.deepEqual(withRequestMetrics(opts).middlewares, opts.middlewares);
	});

	it("the same totals, active gauges (back to 0), error counts and levels for the same calls", () => {
		const a = requestSeries(builtIn.metrics);
		const b = requestSeries(ours.metrics);
		assert.deepEqual(b, a);
		const total = b["moleculer.request.total"] as {
			labels: { action: string; caller: string | null };
			value: number;
		}[];
		assert.equal(total.find((t) => t.labels.action === "calc.add" && t.labels.caller === null)?.value, 5);
		assert.equal(total.find((t) => t.labels.action === "calc.add" && t.labels.caller === "caller")?.value, 1);
		const errors = b["moleculer.request.error.total"] as { labels: Record<string, unknown>; value: number }[];
		assert.equal(errors.length, 1);
		assert.equal(errors[0].value, 3);
		assert.equal(errors[0].labels.errorCode, 404);
		assert.equal(errors[0].labels.errorName, "MoleculerClientError");
		for (const g of b["moleculer.request.active"] as { value: number }[]) assert.equal(g.value, 0);
		const levels = b["moleculer.request.levels"] as { labels: { level: number }; value: number }[];
		assert.deepEqual(
			levels.map((l) => [l.labels.level, l.value]),
			[
				[1, 11],
				[2, 2],
			],
		);
	});

	it("the same request-time histograms: counts, buckets (a slow call in none up to 100 ms), sums, quantiles", () => {
		const snap = (reg: MetricRegistry) =>
			((reg.getMetric("moleculer.request.time")?.snapshot() ?? []) as unknown as HistSnap[]).sort((x, y) =>
				JSON.stringify(x.labels).localeCompare(JSON.stringify(y.labels)),
			);
		const a = snap(builtIn.metrics);
		const b = snap(ours.metrics);
		assert.deepEqual(
			b.map((h) => [h.labels, h.count, Object.keys(h.buckets), Object.keys(h.quantiles)]),
			a.map((h) => [h.labels, h.count, Object.keys(h.buckets), Object.keys(h.quantiles)]),
		);
		const slow = b.find((h) => h.labels.action === "calc.slow");
		assert.ok(slow && slow.count === 1 && slow.sum >= 115, JSON.stringify(slow));
		// 120 ms of sleep: in no bucket up to 100 ms, in every bucket from 1 s (the wide margin is for a busy machine)
		for (const [le, n] of Object.entries(slow.buckets))
			if (Number(le) <= 100 || Number(le) >= 1000) assert.equal(n, Number(le) <= 100 ? 0 : 1, `le ${le}`);
		assert.ok(slow.quantiles["0.5"] >= 115);
		const add = b.find((h) => h.labels.action === "calc.add" && h.labels.caller === null);
		assert.ok(add && add.count === 5 && add.sum < add.count * 100, JSON.stringify(add));
		const top = Math.max(...Object.keys(add.buckets).map(Number));
		assert.equal(add.buckets[top], 5);
	});

	it("the quantile window keeps a bounded uniform sample; count, sum and buckets stay exact", async () => {
		const n = QUANTILE_SAMPLES_PER_BUCKET * 3;
		for (let i = 0; i < n; i++) await ours.call("calc.add", { a: i, b: 0 });
		const metric = ours.metrics.getMetric("moleculer.request.time") as unknown as {
			get(labels: object): {
				count: number;
				bucketValues: Record<string, number>;
				quantileValues: { ringBuckets: { count: number; samples: number[] }[]; currentBucket: number };
			};
		};
		const item = metric.get({ service: "calc", action: "calc.add", caller: null, type: "local" });
		assert.equal(item.count, n + 5);
		const top = Math.max(...Object.keys(item.bucketValues).map(Number));
		assert.equal(item.bucketValues[top], n + 5);
		// cumulative counts per bound: these trivial calls are mostly under 1 ms and all under 5 s
		assert.ok(item.bucketValues[1] > n / 2, `le 1: ${item.bucketValues[1]} of ${n + 5}`);
		assert.equal(item.bucketValues[5000], n + 5);
		const bounds = Object.keys(item.bucketValues).map(Number);
		for (let i = 1; i < bounds.length; i++)
			assert.ok(
				item.bucketValues[bounds[i]] >= item.bucketValues[bounds[i - 1]],
				`le ${bounds[i]} below le ${bounds[i - 1]}`,
			);
		const held = item.quantileValues.ringBuckets.reduce((k, b) => k + b.samples.length, 0);
		const seen = item.quantileValues.ringBuckets.reduce((k, b) => k + b.count, 0);
		assert.equal(seen, n + 5, "every value counted");
		assert.ok(held <= QUANTILE_SAMPLES_PER_BUCKET * 2, `${held} samples held for ${seen} values`);
		// upstream, for the same calls, holds every value
		for (let i = 0; i < n; i++) await builtIn.call("calc.add", { a: i, b: 0 });
		const up = (builtIn.metrics.getMetric("moleculer.request.time") as unknown as typeof metric).get({
			service: "calc",
			action: "calc.add",
			caller: null,
			type: "local",
		});
		assert.equal(
			up.quantileValues.ringBuckets.reduce((k, b) => k + b.samples.length, 0),
			n + 5,
		);
		const snap = (
			(ours.metrics.getMetric("moleculer.request.time")?.snapshot() ?? []) as unknown as HistSnap[]
		).find((h) => h.labels.action === "calc.add" && h.labels.caller === null);
		assert.ok(snap && snap.quantiles["0.5"] > 0 && snap.quantiles["0.5"] <= snap.quantiles["0.99"]);
	});
	it("bucket counts kept in a typed array read the same through Moleculer's snapshot, and count again after a reset", async () => {
		const labels = { service: "calc", action: "calc.twice", caller: null, type: "local" };
		const metric = ours.metrics.getMetric("moleculer.request.time") as unknown as {
			get(labels: object): { count: number; bucketValues: Record<string, number> };
			reset(labels: object): void;
			snapshot(): HistSnap[];
		};
		for (let i = 0; i < 4; i++) await ours.call("calc.twice");
		const before = metric.get(labels);
		assert.equal(before.count, 5);
		// after the first observation (upstream's observe) the item's buckets are accessors over the counts
		const desc = Object.getOwnPropertyDescriptor(before.bucketValues, "100");
		assert.ok(desc?.get && desc.enumerable, "le 100 is an enumerable accessor");
		const snap = () =>
			metric.snapshot().find((h) => h.labels.action === "calc.twice" && h.labels.caller === null);
		assert.equal(snap()?.buckets["100"], 5);
		assert.equal(snap()?.buckets["10000"], 5);
		// a reset (Moleculer's resetItem) gives the item a plain object of zeros: counting starts again from it
		metric.reset(labels);
		assert.equal(snap()?.buckets["100"], 0);
		for (let i = 0; i < 3; i++) await ours.call("calc.twice");
		assert.equal(metric.get(labels).count, 3);
		assert.equal(snap()?.buckets["100"], 3);
		assert.equal(snap()?.buckets["10000"], 3);
		assert.ok((snap()?.buckets["1"] ?? -1) >= 0 && (snap()?.buckets["1"] ?? 4) <= 3);
	});
});

/** The transit and transporter series (counts and bytes by label), comparable across brokers. */
function transportSeries(reg: MetricRegistry): Record<string, string[]> {
	const out: Record<string, string[]> = {};
	for (const name of [
		"moleculer.transit.publish.total",
		"moleculer.transit.receive.total",
		"moleculer.transit.requests.active",
		"moleculer.transit.streams.send.active",
		"moleculer.transporter.packets.sent.total",
		"moleculer.transporter.packets.sent.bytes",
		"moleculer.transporter.packets.received.total",
		"moleculer.transporter.packets.received.bytes",
	]) {
		const items = (reg.getMetric(name)?.snapshot() ?? []) as unknown as { value: number; labels: object }[];
		out[name] = items.map((it) => `${JSON.stringify(it.labels)} ${it.value}`).sort();
	}
	return out;
}

/** What each series gained from `before` to `after` (items whose value changed). */
function gained(before: Record<string, string[]>, after: Record<string, string[]>): Record<string, string[]> {
	const out: Record<string, string[]> = {};
	for (const [name, items] of Object.entries(after)) {
		const was = new Map(
			before[name].map((x) => [x.slice(0, x.lastIndexOf(" ")), Number(x.slice(x.lastIndexOf(" ") + 1))]),
		);
		out[name] = items
			.map((x) => {
				const key = x.slice(0, x.lastIndexOf(" "));
				return `${key} +${Number(x.slice(x.lastIndexOf(" ") + 1)) - (was.get(key) ?? 0)}`;
			})
			.filter((x) => !x.endsWith(" +0"));
	}
	return out;
}

describe("ops: RequestMetrics records Moleculer's transit and transporter series", () => {
	/** A caller and a callee over Moleculer's in-memory transporter, with node ids of the same length. */
	async function pair(opts: BrokerOptions, tag: string): Promise<[ServiceBroker, ServiceBroker]> {
		const base = {
			logger: false,
			namespace: `rm-${tag}-${process.pid}`,
			transporter: "Fake",
			metrics: { enabled: true, reporter: [] },
			...opts,
		} satisfies BrokerOptions;
		const callee = new ServiceBroker({ ...base, nodeID: `callee-${tag}` });
		callee.createService({
			name: "remote",
			actions: {
				echo: (ctx) => ctx.params,
				fail: () => {
					throw new Errors.MoleculerClientError("no such order", 404, "order_not_found");
				},
			},
		});
		const caller = new ServiceBroker({ ...base, nodeID: `caller-${tag}` });
		await Promise.all([callee.start(), caller.start()]);
		await caller.waitForServices(["remote"], 5000);
		return [caller, callee];
	}

	let builtIn: [ServiceBroker, ServiceBroker];
	let ours: [ServiceBroker, ServiceBroker];
	before(async () => {
		builtIn = await pair({}, "up");
		ours = await pair(withRequestMetrics({}), "us");
	});
	after(async () => {
		for (const b of [...(builtIn ?? []), ...(ours ?? [])]) await b.stop();
	});

	it("the same packet counts, bytes and gauges on both sides for the same remote calls", async () => {
		const answered = async ([caller]: [ServiceBroker, ServiceBroker]) => {
			for (let i = 0; i < 7; i++) assert.deepEqual(await caller.call("remote.echo", { i }), { i });
			await Promise.all(Array.from({ length: 5 }, (_, i) => caller.call("remote.echo", { i, at: "once" })));
		};
		const failed = async ([caller]: [ServiceBroker, ServiceBroker]) => {
			for (let i = 0; i < 2; i++) await assert.rejects(caller.call("remote.fail"), { code: 404 });
		};
		const runOn = async (p: [ServiceBroker, ServiceBroker], drive: typeof answered) => {
			const before = p.map((b) => transportSeries(b.metrics));
			await drive(p);
			return p.map((b, i) => gained(before[i], transportSeries(b.metrics)));
		};
		const a = await runOn(builtIn, answered);
		const b = await runOn(ours, answered);
		assert.deepEqual(b, a);
		const [callerGained, calleeGained] = b;
		assert.deepEqual(callerGained["moleculer.transit.publish.total"], ['{"type":"REQ"} +12']);
		assert.deepEqual(calleeGained["moleculer.transit.receive.total"], ['{"type":"REQ"} +12']);
		assert.deepEqual(calleeGained["moleculer.transit.publish.total"], ['{"type":"RES"} +12']);
		assert.ok(Number(callerGained["moleculer.transporter.packets.sent.bytes"][0]?.split("+")[1]) > 12 * 50);
		assert.equal(
			callerGained["moleculer.transit.requests.active"].length,
			1,
			"pending requests added at publish",
		);
		// an error's packet carries its stack, whose frames differ between the two middleware stacks: bytes left out
		const noBytes = (g: Record<string, string[]>[]) =>
			g.map((x) => Object.fromEntries(Object.entries(x).filter(([name]) => !name.endsWith(".bytes"))));
		const fa = await runOn(builtIn, failed);
		const fb = await runOn(ours, failed);
		assert.deepEqual(noBytes(fb), noBytes(fa));
		assert.deepEqual(fb[1]["moleculer.transit.publish.total"], ['{"type":"RES"} +2']);
		// the same items exist (an item first added to by 0 is made, as upstream makes it)
		const labelsOf = (b: ServiceBroker) =>
			Object.values(transportSeries(b.metrics)).map((items) =>
				items.map((x) => x.slice(0, x.lastIndexOf(" "))),
			);
		assert.deepEqual(ours.map(labelsOf), builtIn.map(labelsOf));
		assert.ok(
			labelsOf(ours[0]).every((items) => items.length > 0),
			"every series has its item",
		);
	});
});
