/**
 * Moleculer's per-action request metrics, recorded without the per-call label work (issue 32,
 * docs/decisions/0114-request-metrics.md; a framework patch, docs/decisions/0087-framework-patches.md §11).
 *
 * Moleculer's built-in `Metrics` middleware records five series per action call (`moleculer_request_total`,
 * `_active` up and down, `_levels`, the `moleculer_request_time` histogram) through the registry's public
 * methods, each of which builds the label set's key string again (`hashingLabels`), looks the item up and stamps
 * `Date.now()`: on a light GET that was the largest JavaScript cost of the call after the HTTP parser.
 * {@link RequestMetrics} is that middleware with its two action hooks replaced: per action and caller it looks
 * the items up once (through the public `set`/`observe`, which create them) and afterwards updates the same
 * fields the public methods update (value, timestamp, rate, sum, count, buckets, quantile window, dirty flag). The
 * quantile window keeps at most {@link QUANTILE_SAMPLES_PER_BUCKET} samples per time slice ({@link sampleInto}), so
 * above that rate the quantiles, min, mean and variance are estimates from a uniform sample; `_sum`, `_count` and
 * the buckets stay exact. The buckets' cumulative counts are kept in a typed array behind the item's `bucketValues`
 * ({@link countedBuckets}), because Moleculer's object of them is a dictionary-mode hash in V8. The series, their
 * names, labels, buckets and quantiles, and so the `/metrics` text, are Moleculer's own;
 * test/unit/ops/request-metrics.spec.ts checks that the two record the same snapshot for the same calls. The
 * transit and transporter series (`moleculer_transit_*`, `moleculer_transporter_packets_*`: four to five counter
 * updates per packet sent or received over NATS) are updated the same way, each item looked up once per label
 * value (record 0146); event metrics stay Moleculer's code (its hooks are kept).
 *
 * Use it in place of the internal one: the broker option `internalMiddlewares: false` and
 * {@link internalMiddlewares} at the end of `middlewares` (moleculer.config.ts).
 */

import type { ActionSchema, Context, MetricRegistry, Middleware, ServiceBroker } from "moleculer";
import * as moleculer from "moleculer";
import { CallFallback } from "./call-fallback";
import { CallTimeout } from "./call-timeout";
import { BuiltIn } from "./moleculer-builtins";

/** Moleculer's request, transit and transporter metric names (its `METRIC` constants). */
const TOTAL = "moleculer.request.total";
const ACTIVE = "moleculer.request.active";
const ERRORS = "moleculer.request.error.total";
const TIME = "moleculer.request.time";
const LEVELS = "moleculer.request.levels";
const PUBLISH_TOTAL = "moleculer.transit.publish.total";
const RECEIVE_TOTAL = "moleculer.transit.receive.total";
const REQUESTS_ACTIVE = "moleculer.transit.requests.active";
const STREAMS_SEND_ACTIVE = "moleculer.transit.streams.send.active";
const PACKETS_SENT_TOTAL = "moleculer.transporter.packets.sent.total";
const PACKETS_SENT_BYTES = "moleculer.transporter.packets.sent.bytes";
const PACKETS_RECEIVED_TOTAL = "moleculer.transporter.packets.received.total";
const PACKETS_RECEIVED_BYTES = "moleculer.transporter.packets.received.bytes";

/** A counter's or gauge's item in a metric's `values` (Moleculer's shape). */
interface ValueItem {
	value: number;
	timestamp: number;
	rate?: { update(value: number): void };
}

/** A histogram's item (Moleculer's shape). */
interface HistogramItem {
	timestamp: number;
	sum: number;
	count: number;
	lastValue: number;
	bucketValues?: Record<number, number>;
	quantileValues?: QuantileWindow;
	rate?: { update(value: number): void };
}

/** Moleculer's `TimeWindowQuantiles` of a histogram item: a ring of buckets, each the samples of a time slice. */
interface QuantileWindow {
	ringBuckets: { count: number; samples: number[] }[];
	currentBucket: number;
	setDirty(): void;
}

/**
 * Most samples a quantile bucket keeps (one bucket is a tenth of Moleculer's default 60 s window, so 20,000 for the
 * window per action and caller).
 */
export const QUANTILE_SAMPLES_PER_BUCKET = 2000;

/**
 * Adds `value` to the current bucket of `w` as Moleculer's `TimeWindowQuantiles#add` does while the bucket holds
 * fewer than {@link QUANTILE_SAMPLES_PER_BUCKET} samples; past that, as a uniform reservoir sample of every value
 * the bucket saw (Algorithm R: the n-th value replaces a random slot with probability K/n). Upstream keeps every
 * value of the last 60 s and sorts them all at each scrape: at thousands of calls a second that is millions of
 * numbers per action held and collected by the garbage collector. `count` still counts every value.
 */
export function sampleInto(w: QuantileWindow, value: number): void {
	const b = w.ringBuckets[w.currentBucket];
	b.count += 1;
	if (b.samples.length < QUANTILE_SAMPLES_PER_BUCKET) b.samples.push(value);
	else {
		const j = Math.floor(Math.random() * b.count);
		if (j < QUANTILE_SAMPLES_PER_BUCKET) b.samples[j] = value;
	}
	w.setDirty();
}

/** The parts of Moleculer's metric objects used here (public methods and the fields they write). */
interface GaugeLike {
	get(labels: object): ValueItem | undefined;
	set(value: number, labels: object, timestamp?: number): ValueItem;
	setDirty(): void;
}
interface HistogramLike {
	observe(value: number, labels: object, timestamp?: number): HistogramItem;
	setDirty(): void;
	buckets?: number[];
}

/** Adds `by` to a counter's or gauge's `item` of `metric` at `now` (epoch ms), as `GaugeMetric#set` updates it. */
function bump(metric: GaugeLike, item: ValueItem, by: number, now: number): void {
	item.value += by;
	item.timestamp = now;
	item.rate?.update(item.value);
	metric.setDirty();
}

/** The parts of Moleculer's Transit its publish hook reads (its pending calls and streams). */
interface TransitLike {
	pendingRequests: Map<string, unknown>;
	pendingReqStreams: Map<string, unknown>;
	pendingResStreams: Map<string, unknown>;
}

/** The series of one action and caller, looked up once. */
interface Slot {
	labels: { service: string | null; action: string; caller: string | null; type: "local" | "remote" };
	total: ValueItem;
	active: ValueItem;
	time: HistogramItem | null;
	/** the histogram item's `bucketValues` made by {@link countedBuckets}, and the counts behind it */
	buckets: CountedBuckets | null;
}

/** A histogram item's cumulative bucket counts held in a typed array, and the `bucketValues` object over it. */
export interface CountedBuckets {
	/** count per bound, in the order of the histogram's (ascending) bounds */
	counts: Float64Array;
	/** what `item.bucketValues` is: one enumerable accessor property per bound, reading and writing `counts` */
	view: Record<number, number>;
}

/**
 * Replaces `item.bucketValues` (Moleculer's object keyed by bound: 1, 5, …, 10000 ms) with accessors over a
 * Float64Array holding the same counts, and returns both. Moleculer's object has integer keys up to 10,000, so V8
 * keeps it in dictionary mode and every `bucketValues[b] += 1` of an observation is a hash lookup and store: twelve
 * of each per action call, the largest part of what metrics added to a call. The typed array is incremented directly
 * ({@link RequestMetrics}); Moleculer's own readers and writers (`generateItemSnapshot` reads
 * `item.bucketValues[b]` per bound, `observe` adds to it) go through the accessors and see the same numbers. A
 * reset (`resetItem`) gives the item a new plain object: the caller compares `item.bucketValues` with `view`
 * and counts again from that object.
 */
export function countedBuckets(
	item: { bucketValues?: Record<number, number> },
	bounds: readonly number[],
): CountedBuckets {
	const counts = new Float64Array(bounds.length);
	const view: Record<number, number> = {};
	bounds.forEach((bound, i) => {
		counts[i] = item.bucketValues?.[bound] ?? 0;
		Object.defineProperty(view, bound, {
			enumerable: true,
			get: () => counts[i],
			set: (v: number) => {
				counts[i] = v;
			},
		});
	});
	item.bucketValues = view;
	return { counts, view };
}

/**
 * Moleculer's internal middlewares in its own order (`INTERNAL_MIDDLEWARES` of service-broker.js) with `Metrics`
 * replaced by {@link RequestMetrics}, `Timeout` by `CallTimeout` (lib/platform/call-timeout.ts) and `Fallback` by
 * `CallFallback` (lib/platform/call-fallback.ts): the tail of
 * the broker's `middlewares` when `internalMiddlewares` is false (test/unit/framework-patches.spec.ts checks the
 * list against the installed Moleculer's).
 */
export function internalMiddlewares(): (string | ((broker: ServiceBroker) => Middleware))[] {
	return [
		"ActionHook",
		"Validator",
		"Bulkhead",
		"Cacher",
		"ContextTracker",
		"CircuitBreaker",
		CallTimeout,
		"Retry",
		CallFallback,
		"ErrorHandler",
		"Tracing",
		RequestMetrics,
		"Debounce",
		"Throttle",
	];
}

/**
 * Moleculer's `Metrics` middleware for `broker` with cheaper action hooks (see the file head). When metrics are
 * off, or a metric reporter of the broker listens to single changes (`metricChanged`, which the direct updates do
 * not call), it is Moleculer's middleware unchanged.
 */
export function RequestMetrics(broker: ServiceBroker): Middleware {
	const upstream = BuiltIn.Metrics(broker);
	let direct = false;
	let reg: MetricRegistry;
	/** `moleculer_request_levels` items by call level (labelled by level only). */
	const levelItems: ValueItem[] = [];

	const hooks = (type: "local" | "remote") =>
		function wrap(next: (ctx: Context) => Promise<unknown>, action: ActionSchema) {
			const upstreamHook = (type === "local" ? upstream.localAction : upstream.remoteAction) as unknown as (
				next: (ctx: Context) => Promise<unknown>,
				action: ActionSchema,
			) => (ctx: Context) => Promise<unknown>;
			if (!direct) return upstreamHook.call(broker, next, action);
			const service = (action.service as { fullName?: string } | undefined)?.fullName ?? null;
			const name = action.name as string;
			const total = reg.getMetric(TOTAL) as unknown as GaugeLike;
			const active = reg.getMetric(ACTIVE) as unknown as GaugeLike;
			const time = reg.getMetric(TIME) as unknown as HistogramLike;
			const levels = reg.getMetric(LEVELS) as unknown as GaugeLike;
			const buckets = time.buckets ?? [];
			const slots = new Map<string | null, Slot>();

			const slotOf = (caller: string | null): Slot => {
				const labels = { service, action: name, caller, type };
				// another endpoint's wrapper of the same remote action may have made the items already
				const slot: Slot = {
					labels,
					total: total.get(labels) ?? total.set(0, labels),
					active: active.get(labels) ?? active.set(0, labels),
					time: null,
					buckets: null,
				};
				slots.set(caller, slot);
				return slot;
			};
			const settle = (slot: Slot, started: number): void => {
				const now = Date.now();
				const ms = performance.now() - started;
				bump(active, slot.active, -1, now);
				const h = slot.time;
				if (!h) {
					slot.time = time.observe(ms, slot.labels, now);
					return;
				}
				h.timestamp = now;
				h.sum += ms;
				h.count += 1;
				h.lastValue = ms;
				if (h.bucketValues) {
					// cumulative: every bound at or above the value (ascending bounds, so from the top down)
					let c = slot.buckets;
					if (!c || h.bucketValues !== c.view) c = slot.buckets = countedBuckets(h, buckets);
					const counts = c.counts;
					for (let i = counts.length - 1; i >= 0 && ms <= buckets[i]; i--) counts[i] += 1;
				}
				if (h.quantileValues) sampleInto(h.quantileValues, ms);
				h.rate?.update(h.count);
				time.setDirty();
			};

			return function requestMetrics(ctx: Context): Promise<unknown> {
				const caller = ctx.caller ?? null;
				const slot = slots.get(caller) ?? slotOf(caller);
				const now = Date.now();
				bump(total, slot.total, 1, now);
				bump(active, slot.active, 1, now);
				const level = ctx.level ?? 1;
				const l = levelItems[level];
				if (l) bump(levels, l, 1, now);
				else levelItems[level] = levels.set((levels.get({ level })?.value ?? 0) + 1, { level }, now);
				const started = performance.now();
				return next(ctx).then(
					(res) => {
						settle(slot, started);
						return res;
					},
					(err: { name?: string; code?: unknown; type?: unknown } | undefined) => {
						settle(slot, started);
						reg.increment(ERRORS, {
							...slot.labels,
							errorName: err ? err.name : null,
							errorCode: err ? err.code : null,
							errorType: err ? err.type : null,
						});
						throw err;
					},
				);
			};
		};

	/**
	 * A counter's or gauge's items by one label's value (`undefined`: the unlabelled item), looked up once each
	 * through the public `get` / `set` (the first creates the item at 0, as upstream's first `increment` does even
	 * by 0), then added to as `increment` would: an addition of 0 changes nothing (upstream's `set` of the same value
	 * does not stamp it either).
	 */
	const counter = (name: string, label?: string) => {
		let metric: GaugeLike | undefined;
		const items = new Map<unknown, ValueItem>();
		return (by: number, value: unknown, now: number): void => {
			if (!metric) metric = reg.getMetric(name) as unknown as GaugeLike;
			let item = items.get(value);
			if (!item) {
				const labels = label === undefined ? null : { [label]: value };
				item = metric.get(labels as object) ?? metric.set(0, labels as object, now);
				items.set(value, item);
			}
			if (by !== 0) bump(metric, item, by, now);
		};
	};

	/**
	 * Upstream's hook `name` of the transit (`this`) or its transporter, counting with {@link counter}s when direct:
	 * `before` the wrapped method runs, `after` it returned (as upstream's order). Metrics off: `next` untouched.
	 */
	const transportHook = (
		name: "transitPublish" | "transitMessageHandler" | "transporterSend" | "transporterReceive",
		before: (transit: TransitLike, args: unknown[], now: number) => void,
		after?: (transit: TransitLike, now: number) => void,
	) =>
		function (this: TransitLike, next: (...args: unknown[]) => unknown) {
			const hook = upstream[name] as unknown as (
				this: unknown,
				next: unknown,
			) => (...args: unknown[]) => unknown;
			const wrapped = hook.call(this, next);
			if (wrapped === next) return next;
			const transit = this;
			return function metricsMiddleware(this: unknown, ...args: unknown[]) {
				// `direct` is known once the broker is created, after the transit wrapped its methods
				if (!direct) return wrapped.apply(this, args);
				const now = Date.now();
				before(transit, args, now);
				const out = next.apply(this, args);
				after?.(transit, now);
				return out;
			};
		};
	const published = counter(PUBLISH_TOTAL, "type");
	const requestsActive = counter(REQUESTS_ACTIVE);
	const streamsSendActive = counter(STREAMS_SEND_ACTIVE);
	const received = counter(RECEIVE_TOTAL, "type");
	const sent = counter(PACKETS_SENT_TOTAL);
	const sentBytes = counter(PACKETS_SENT_BYTES);
	const got = counter(PACKETS_RECEIVED_TOTAL);
	const gotBytes = counter(PACKETS_RECEIVED_BYTES);
	const lengthOf = (data: unknown): number => (data as { length?: number } | null)?.length || 0;

	return {
		...upstream,
		name: "Metrics",
		created(this: ServiceBroker, b: ServiceBroker) {
			(upstream.created as ((b: ServiceBroker) => void) | undefined)?.call(this, b);
			if (!broker.isMetricsEnabled()) return;
			reg = broker.metrics;
			const reporters = (reg as unknown as { reporter?: { metricChanged: unknown }[] }).reporter ?? [];
			const base = (moleculer.MetricReporters.Base as unknown as { prototype: { metricChanged: unknown } })
				.prototype.metricChanged;
			direct = reporters.every((r) => r.metricChanged === base);
		},
		localAction: hooks("local"),
		remoteAction: hooks("remote"),
		// as upstream: the publish counted by packet type before it is sent, then the pending requests' and streams'
		// counts added to their gauges (upstream adds them at every publish rather than setting them; kept as it is)
		transitPublish: transportHook(
			"transitPublish",
			(_transit, args, now) => {
				published(1, (args[0] as { type?: string }).type, now);
			},
			(transit, now) => {
				requestsActive(transit.pendingRequests.size, undefined, now);
				streamsSendActive(transit.pendingReqStreams.size + transit.pendingResStreams.size, undefined, now);
			},
		),
		transitMessageHandler: transportHook("transitMessageHandler", (_t, args, now) =>
			received(1, args[0], now),
		),
		transporterSend: transportHook("transporterSend", (_t, args, now) => {
			sent(1, undefined, now);
			sentBytes(lengthOf(args[1]), undefined, now);
		}),
		transporterReceive: transportHook("transporterReceive", (_t, args, now) => {
			got(1, undefined, now);
			gotBytes(lengthOf(args[1]), undefined, now);
		}),
	} as unknown as Middleware;
}
