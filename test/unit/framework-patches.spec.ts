/**
 * Guards the framework internals this code overrides or relies on
 * (docs/decisions/0087-framework-patches.md), as
 * test/unit/gateway/upstream.spec.ts does for moleculer-web:
 *
 * - moleculer, sequelize and @moleculer/channels are pinned to an exact
 *   version, and the installed version is the pinned one;
 * - the source text of every upstream function a patch replaces, bypasses or
 *   depends on hashes to the value recorded for that version: a different
 *   text (an upgrade) fails here, naming the function, and the patches that
 *   depend on it must be checked again (and the hash recorded anew) or dropped;
 * - the upstream behaviour each patch exists for, or relies on, still holds.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Adapters } from "@moleculer/channels";
import * as moleculer from "moleculer";
import {
	type ActionEndpoint,
	Discoverers,
	MetricReporters,
	ServiceBroker,
	Transit,
	Transporters,
} from "moleculer";
import pg from "pg";
import { Sequelize, Transaction, UniqueConstraintError } from "sequelize";
import { CallFallback } from "../../lib/platform/call-fallback";
import { CallTimeout } from "../../lib/platform/call-timeout";
import { upstreamAddFields } from "../../lib/platform/pg-row-template";
import { internalMiddlewares, RequestMetrics } from "../../lib/platform/request-metrics";
import { type BalancedTx, type CallPromise, gapless, sealCtx } from "../../moleculer.config";

/** A function as its source text names it (everything read here is plain upstream JavaScript). */
type Fn = (...args: never[]) => unknown;
/** Upstream prototypes and factories, read untyped: their typings leave most of these out. */
type Untyped = Record<string, Fn> & { prototype: Record<string, Fn> };
const untyped = (x: unknown): Untyped => x as Untyped;
/** Moleculer's built-in middlewares (exported at run time, absent from its typings). */
const Middlewares = untyped((moleculer as unknown as { Middlewares: unknown }).Middlewares);

/** First 16 hex digits of the SHA-256 of a function's source text. */
const hashOf = (f: unknown): string =>
	createHash("sha256").update(Function.prototype.toString.call(f)).digest("hex").slice(0, 16);

const pkg = JSON.parse(readFileSync(resolve(__dirname, "../../package.json"), "utf8"));
const installed = (name: string): string =>
	JSON.parse(readFileSync(resolve(__dirname, `../../node_modules/${name}/package.json`), "utf8")).version;

/** A Sequelize instance that never connects (nothing here runs a query). */
const sequelize = new Sequelize("postgres://guard@127.0.0.1:1/guard", {
	dialect: "postgres",
	logging: false,
});
const pgConnectionManager = untyped(Object.getPrototypeOf(sequelize.connectionManager));
const PgQuery = untyped((sequelize as unknown as { dialect: { Query: unknown } }).dialect.Query);

/** An in-process broker with one local action `guard.echo`. */
async function echoBroker(middlewares: unknown[] = []): Promise<ServiceBroker> {
	const b = new ServiceBroker({ logger: false, metrics: false, middlewares: middlewares as never });
	b.createService({ name: "guard", actions: { echo: (ctx) => ctx.params } });
	await b.start();
	return b;
}

describe("framework patches: pinned upstream (docs/decisions/0087-framework-patches.md)", () => {
	it("moleculer, sequelize, @moleculer/channels and pg are pinned to exactly the installed versions", () => {
		const pins = { moleculer: "0.15.2", sequelize: "6.37.8", "@moleculer/channels": "0.1.8", pg: "8.23.1" };
		for (const [name, version] of Object.entries(pins)) {
			assert.equal(pkg.dependencies[name], version, `${name} must be pinned to ${version} in package.json`);
			assert.equal(installed(name), version, `installed ${name}`);
		}
	});

	it("every upstream function a patch replaces, bypasses or relies on is the recorded text", () => {
		const broker = untyped(ServiceBroker);
		const nats = untyped(untyped(Transporters).NATS);
		const m = Middlewares;
		const channels = untyped(Adapters);
		const metricTypes = untyped(moleculer.MetricTypes);
		const histogram = untyped(metricTypes.Histogram);
		const quantiles = untyped(histogram.TimeWindowQuantiles).prototype;
		const bucket = untyped(histogram.Bucket).prototype;
		/** name → [function, recorded hash, the patch that depends on it (moleculer.config.ts unless said)] */
		const table: Record<string, [unknown, string, string]> = {
			"ServiceBroker#call": [broker.prototype.call, "92daeb7c8f8d1c89", "QueueGroupCalls: balancedCall"],
			"ServiceBroker#callWithoutBalancer": [
				broker.prototype.callWithoutBalancer,
				"8190feb063f092e3",
				"QueueGroupCalls: local calls (callWithoutBalancer always goes through NATS)",
			],
			"ServiceBroker#interceptCallMiddleware": [
				broker.prototype.interceptCallMiddleware,
				"38039354852fea2d",
				"sealCtx",
			],
			"ServiceBroker#localServiceChanged": [
				broker.prototype.localServiceChanged,
				"4e71515f4c6a5153",
				"QueueGroupCalls.started: INFO sent at start",
			],
			"BaseTransporter#makeBalancedSubscriptions": [
				nats.prototype.makeBalancedSubscriptions,
				"cc7e5e9369e97a4a",
				"gapless",
			],
			"NatsTransporter#subscribeBalancedRequest": [
				nats.prototype.subscribeBalancedRequest,
				"50e741a2b3c47b4b",
				"gapless",
			],
			"NatsTransporter#subscribeBalancedEvent": [
				nats.prototype.subscribeBalancedEvent,
				"17bb7419b3ea4d92",
				"gapless",
			],
			"NatsTransporter#unsubscribeFromBalancedCommands": [
				nats.prototype.unsubscribeFromBalancedCommands,
				"e7b198821668effc",
				"QueueGroupCalls.stopping",
			],
			"NatsTransporter#connect": [
				nats.prototype.connect,
				"bf2c7936579b4e8f",
				"QueueGroupCalls.started: tx.client",
			],
			"LocalDiscoverer#sendLocalNodeInfo": [
				untyped(untyped(Discoverers).Local).prototype.sendLocalNodeInfo,
				"38ce4e50d702417e",
				"QueueGroupCalls.started",
			],
			"Transit (class: its pendingRequests)": [
				Transit,
				"bb21ef1b8fa48c7b",
				"lib/platform/churn-map.ts PendingCallsTable (the operations upstream uses on pendingRequests)",
			],
			"Transit#removePendingRequest": [
				untyped(Transit).prototype.removePendingRequest,
				"9e0ca038e36a8562",
				"lib/platform/remote-deadline.ts",
			],
			"Transit#_sendRequest": [
				untyped(Transit).prototype._sendRequest,
				"280904911c9d7647",
				"lib/platform/dead-node.ts: the pending request it records (nodeID, ctx, settlers) is what is followed, and a call is sent again under its context id with its settlers",
			],
			"Transit#responseHandler": [
				untyped(Transit).prototype.responseHandler,
				"15cea3eddaffd0f0",
				"lib/platform/dead-node.ts: the first answer to a context id settles the call, a later one is an orphan",
			],
			"ErrorHandler.remoteAction": [
				(m.ErrorHandler() as Record<string, Fn>).remoteAction,
				"14510fa89aaed632",
				"lib/platform/remote-deadline.ts",
			],
			"Timeout.remoteAction": [
				(m.Timeout as unknown as (b: object) => Record<string, Fn>)({}).remoteAction,
				"9315231b7d11c2a3",
				"lib/platform/remote-deadline.ts",
			],
			"Timeout (middleware)": [
				m.Timeout,
				"90829217fb12f67e",
				"lib/platform/call-timeout.ts CallTimeout (its defaults, log line, metric, stream event and error)",
			],
			"Fallback (middleware)": [
				m.Fallback,
				"b25968309cf6d57c",
				"lib/platform/call-fallback.ts CallFallback (its wrapper kept where a fallback can apply)",
			],
			"Metrics (middleware)": [
				m.Metrics,
				"1d303d9be57970da",
				"lib/platform/request-metrics.ts RequestMetrics",
			],
			"GaugeMetric#set": [
				untyped(metricTypes.Gauge).prototype.set,
				"1a372804444df157",
				"lib/platform/request-metrics.ts RequestMetrics (the fields it updates directly)",
			],
			"HistogramMetric#observe": [
				histogram.prototype.observe,
				"ef73560211df1130",
				"lib/platform/request-metrics.ts RequestMetrics (the fields it updates directly)",
			],
			"HistogramMetric#generateItemSnapshot": [
				histogram.prototype.generateItemSnapshot,
				"a0dc94312b228087",
				"lib/platform/request-metrics.ts countedBuckets (bucketValues read per bound)",
			],
			"HistogramMetric#resetItem": [
				histogram.prototype.resetItem,
				"67f4c37e64b3d105",
				"lib/platform/request-metrics.ts countedBuckets (a reset replaces bucketValues)",
			],
			"TimeWindowQuantiles#add": [
				quantiles.add,
				"0f5858ec3c24ae28",
				"lib/platform/request-metrics.ts sampleInto",
			],
			"TimeWindowQuantiles#rotate": [
				quantiles.rotate,
				"36633a78b31fa901",
				"lib/platform/request-metrics.ts sampleInto (ringBuckets / currentBucket)",
			],
			"TimeWindowQuantiles#snapshot": [
				quantiles.snapshot,
				"30fcb863275114b9",
				"lib/platform/request-metrics.ts sampleInto (reads every bucket's samples)",
			],
			"Bucket#add": [bucket.add, "e079ef923ba4e93e", "lib/platform/request-metrics.ts sampleInto"],
			"Bucket#clear": [bucket.clear, "2a010310b7f4824f", "lib/platform/request-metrics.ts sampleInto"],
			"BaseMetric#changed": [
				Object.getPrototypeOf(untyped(metricTypes.Gauge).prototype).changed,
				"e29fece335bd55bc",
				"lib/platform/request-metrics.ts RequestMetrics (setDirty, no metricChanged)",
			],
			"ServiceBroker#registerMiddlewares": [
				broker.prototype.registerMiddlewares,
				"a3f4f2fb3bf502f9",
				"lib/platform/request-metrics.ts internalMiddlewares",
			],
			"PrometheusReporter#init": [
				untyped(untyped(MetricReporters).Prometheus).prototype.init,
				"101be4e8d73d27b0",
				"lib/platform/metrics.ts MetricsEndpoint",
			],
			"PrometheusReporter#stop": [
				untyped(untyped(MetricReporters).Prometheus).prototype.stop,
				"ee85051e8f8ba90b",
				"lib/platform/metrics.ts MetricsEndpoint",
			],
			"PostgresConnectionManager#validate": [
				pgConnectionManager.validate,
				"bf49a547a922784d",
				"lib/platform/db.ts run",
			],
			"ConnectionManager#getConnection": [
				pgConnectionManager.getConnection,
				"ca31cbdb11d44c81",
				"lib/platform/db.ts run",
			],
			"ConnectionManager#releaseConnection": [
				pgConnectionManager.releaseConnection,
				"5812f3158e57f1ab",
				"lib/platform/db.ts run",
			],
			"PostgresQuery#run": [
				PgQuery.prototype.run,
				"3af3e50e6783045d",
				"lib/platform/db.ts run (its invalidation rule)",
			],
			"PostgresQuery#formatError": [
				PgQuery.prototype.formatError,
				"bce24207b672650b",
				"lib/platform/db.ts run",
			],
			"Transaction#prepareEnvironment": [
				untyped(Transaction).prototype.prepareEnvironment,
				"cf7f18b6800176f6",
				"lib/platform/db.ts run",
			],
			"Transaction#commit": [Transaction.prototype.commit, "aba633c38e2a61c6", "lib/platform/db.ts run"],
			"pg Result#addFields (upstream's, as found before the patch)": [
				upstreamAddFields,
				"b85c0e5db5c85c53",
				"lib/platform/pg-row-template.ts addFields (what it sets on a Result)",
			],
			"pg Query (class: its constructor and the fields it reads when run)": [
				untyped(pg).Query,
				"65c6baae14173b88",
				"lib/platform/db.ts namedQuery (a query made from the SQL text, its name set after)",
			],
			"pg Client#query": [
				untyped(untyped(pg).Client).prototype.query,
				"e0d6c16a864254c3",
				"lib/platform/db.ts namedQuery (a query object given with its callback is run as given)",
			],
			"pg Result#parseRow": [
				untyped(untyped(pg).Result).prototype.parseRow,
				"0afa63022d75b52b",
				"lib/platform/pg-row-template.ts addFields (a row is a copy of the template, its columns set in order)",
			],
			"Transaction#rollback": [Transaction.prototype.rollback, "933c1fc63f26ff39", "lib/platform/db.ts run"],
			"ChannelsBaseAdapter#addPrefixTopic": [
				untyped(channels.Base).prototype.addPrefixTopic,
				"10de694f893da0af",
				"lib/platform/channels.ts publishToChannel",
			],
			"ChannelsNatsAdapter#connect": [
				untyped(channels.NATS).prototype.connect,
				"a4a563565a3ab25a",
				"lib/platform/channels.ts ensureStream",
			],
			"ChannelsNatsAdapter#publish": [
				untyped(channels.NATS).prototype.publish,
				"95d89bae131cc812",
				"lib/platform/channels.ts publishToChannel",
			],
			"ChannelsRedisAdapter#publish": [
				untyped(channels.Redis).prototype.publish,
				"f913e21bab69d855",
				"lib/platform/channels.ts publishToChannel",
			],
			"ChannelsFakeAdapter#publish": [
				untyped(channels.Fake).prototype.publish,
				"bbb5eb34b6df3b99",
				"lib/platform/channels.ts publishToChannel",
			],
		};
		const changed = Object.entries(table)
			.filter(([, [fn, hash]]) => typeof fn !== "function" || hashOf(fn) !== hash)
			.map(
				([name, [fn, , patch]]) =>
					`${name} (${typeof fn === "function" ? hashOf(fn) : "gone"}): check ${patch}`,
			);
		assert.deepEqual(changed, [], "upstream changed under a patch");
	});

	it("Moleculer's internal middlewares are the list internalMiddlewares() repeats, Metrics where RequestMetrics is, Timeout where CallTimeout is, Fallback where CallFallback is", () => {
		const src = readFileSync(
			resolve(__dirname, "../../node_modules/moleculer/src/service-broker.js"),
			"utf8",
		);
		const block = /const INTERNAL_MIDDLEWARES = \[([^\]]*)\]/.exec(src)?.[1] ?? "";
		const upstream = [...block.matchAll(/"(\w+)"/g)].map((x) => x[1]);
		const ours = internalMiddlewares().map((mw) =>
			mw === RequestMetrics
				? "Metrics"
				: mw === CallTimeout
					? "Timeout"
					: mw === CallFallback
						? "Fallback"
						: mw,
		);
		assert.deepEqual(ours, upstream);
	});

	it("Moleculer's call interceptor gives a middleware's own answer the previous call's ctx; sealCtx keeps its own", async () => {
		let skip = false;
		const answers: CallPromise[] = [];
		const skipper = {
			name: "Skipper",
			call: (next: (...a: unknown[]) => CallPromise) =>
				function skipperCall(...args: unknown[]) {
					if (!skip) return next(...args);
					// answers without `next`: as QueueGroupCalls does for a local call or a refusal
					const own = Promise.resolve("own") as CallPromise;
					return answers.length ? sealCtx(own, undefined) : own;
				},
		};
		const b = await echoBroker([skipper]);
		try {
			const first = b.call("guard.echo", { n: 1 }) as CallPromise;
			await first;
			assert.ok(first.ctx, "a call's promise carries its context");
			skip = true;
			const unsealed = b.call("guard.echo", { n: 2 }) as CallPromise;
			answers.push(unsealed);
			assert.equal(await unsealed, "own");
			assert.equal(
				unsealed.ctx,
				first.ctx,
				"upstream still hands out the previous call's ctx (why sealCtx exists)",
			);
			const sealed = b.call("guard.echo", { n: 3 }) as CallPromise;
			assert.equal(await sealed, "own");
			assert.equal(sealed.ctx, undefined, "a sealed promise keeps its own ctx");
		} finally {
			await b.stop();
		}
	});

	it("ServiceBroker.prototype.call given a local endpoint runs the handler in process and points p.ctx at the call", async () => {
		const b = await echoBroker();
		try {
			const ep = b.registry.getActionEndpoints("guard.echo").nextLocal() as ActionEndpoint;
			assert.ok(ep?.local);
			const call = ServiceBroker.prototype.call as unknown as (
				this: ServiceBroker,
				a: ActionEndpoint,
				p: unknown,
				o: object,
			) => CallPromise;
			const p = call.call(b, ep, { x: 1 }, {});
			assert.deepEqual(await p, { x: 1 });
			const ctx = p.ctx as { endpoint: { local: boolean }; nodeID: string; params: unknown };
			assert.equal(ctx.endpoint.local, true);
			assert.equal(ctx.nodeID, b.nodeID);
			assert.deepEqual(ctx.params, { x: 1 });
		} finally {
			await b.stop();
		}
	});

	/** A transporter stand-in recording the order of (un)subscriptions. */
	function fakeTx(log: string[]) {
		const sub = (name: string) => ({ unsubscribe: () => log.push(`unsubscribe ${name}`) });
		const tx = {
			hasBuiltInBalancer: true,
			subscriptions: [sub("old")] as { unsubscribe(): void }[],
			broker: {
				Promise,
				getLocalNodeInfo: () => ({
					services: [{ name: "svc", actions: { "svc.a": {} }, events: { "e.x": {} } }],
				}),
			},
			client: { flush: async () => undefined },
			subscribeBalancedRequest(action: string) {
				log.push(`subscribe ${action}`);
				tx.subscriptions.push(sub(action));
			},
			subscribeBalancedEvent(event: string, group: string) {
				log.push(`subscribe ${event}/${group}`);
				tx.subscriptions.push(sub(event));
			},
			unsubscribeFromBalancedCommands() {
				for (const s of tx.subscriptions) s.unsubscribe();
				tx.subscriptions = [];
				return Promise.resolve();
			},
		};
		return tx;
	}

	it("upstream makeBalancedSubscriptions drops every queue group before subscribing again; gapless subscribes first", async () => {
		const upstreamLog: string[] = [];
		const tx = fakeTx(upstreamLog);
		await untyped(untyped(Transporters).NATS).prototype.makeBalancedSubscriptions.call(tx as never);
		assert.deepEqual(upstreamLog, ["unsubscribe old", "subscribe svc.a", "subscribe e.x/svc"]);

		const ourLog: string[] = [];
		const ours = fakeTx(ourLog);
		await gapless(ours.broker as unknown as ServiceBroker, ours as unknown as BalancedTx)();
		assert.deepEqual(ourLog, ["subscribe svc.a", "subscribe e.x/svc", "unsubscribe old"]);
		assert.equal(ours.subscriptions.length, 2);
	});

	it("the local discoverer's INFO (re)makes the queue groups; service changes send it only after a 1 s debounce", async () => {
		const log: string[] = [];
		const discoverer = {
			Promise,
			broker: { options: { disableBalancer: true }, getLocalNodeInfo: () => ({ services: [] }) },
			transit: {
				tx: { makeBalancedSubscriptions: async () => log.push("makeBalancedSubscriptions") },
				sendNodeInfo: async () => log.push("INFO"),
			},
		};
		await untyped(untyped(Discoverers).Local).prototype.sendLocalNodeInfo.call(discoverer as never);
		assert.deepEqual(log, ["makeBalancedSubscriptions", "INFO"]);
		const defaults = (ServiceBroker as unknown as { defaultOptions: { transit: Record<string, unknown> } })
			.defaultOptions;
		assert.equal(defaults.transit.serviceChangedDebounceTime, 1000);
	});

	it("the error handler drops a failed remote call's pending request without settling it (why RemoteCallDeadline exists)", () => {
		const settled: string[] = [];
		const transit = {
			pendingRequests: new Map([
				["id1", { resolve: () => settled.push("resolve"), reject: () => settled.push("reject") }],
			]),
			pendingReqStreams: new Map(),
			pendingResStreams: new Map(),
		};
		untyped(Transit).prototype.removePendingRequest.call(transit as never, "id1" as never);
		assert.equal(transit.pendingRequests.size, 0);
		assert.deepEqual(settled, []);
		const errorHandler = Function.prototype.toString.call(
			(Middlewares.ErrorHandler() as Record<string, Fn>).remoteAction,
		);
		assert.ok(errorHandler.includes("this.transit.removePendingRequest(ctx.id)"));
	});

	it("Sequelize: the pool drops a connection marked _invalid; pg errors map as sequelize.query maps them; a transaction keeps connection and finished", () => {
		const cm = sequelize.connectionManager as unknown as { validate(c: object): boolean };
		assert.equal(cm.validate({}), true);
		assert.equal(cm.validate({ _invalid: true }), false);
		const pgErr = Object.assign(new Error('duplicate key value violates unique constraint "t_pkey"'), {
			code: "23505",
			detail: "Key (id)=(1) already exists.",
			constraint: "t_pkey",
			table: "t",
		});
		const mapped = new (
			PgQuery as unknown as new (
				c: unknown,
				s: Sequelize,
				o: object,
			) => {
				formatError(e: Error, stack?: string): Error;
			}
		)({}, sequelize, {}).formatError(pgErr, new Error().stack);
		assert.ok(mapped instanceof UniqueConstraintError);
		const run = Function.prototype.toString.call(PgQuery.prototype.run);
		assert.ok(run.includes('error.code === "ECONNRESET"') && run.includes("connection._invalid = true"));
		const tx = untyped(Transaction).prototype;
		assert.ok(
			Function.prototype.toString.call(tx.prepareEnvironment).includes("this.connection = connection;"),
		);
		assert.ok(Function.prototype.toString.call(tx.commit).includes('this.finished = "commit";'));
		// only a commit marks the transaction finished (run refuses a committed one as sequelize.query does)
		assert.ok(!Function.prototype.toString.call(tx.rollback).includes("this.finished ="));
	});

	it("Moleculer's Prometheus reporter keeps its HTTP server in this.server (MetricsEndpoint handles its errors)", () => {
		const init = Function.prototype.toString.call(
			untyped(untyped(MetricReporters).Prometheus).prototype.init,
		);
		assert.ok(init.includes("this.server = http.createServer();"));
	});

	it("@moleculer/channels: publishing while stopping is a silent no-op (why publishToChannel refuses first)", () => {
		const publish = Function.prototype.toString.call(untyped(untyped(Adapters).NATS).prototype.publish);
		assert.ok(publish.includes("if (this.stopping) return;"));
		const adapter = new (
			untyped(Adapters).Fake as unknown as new (
				o: object,
			) => { addPrefixTopic(t: string): string }
		)({
			prefix: "ns",
		});
		assert.equal(adapter.addPrefixTopic("shipment.status_changed"), "ns.shipment.status_changed");
	});
});
