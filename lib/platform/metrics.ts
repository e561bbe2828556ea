/**
 * Prometheus metrics of a process (issue 13; docs/ARCHITECTURE.md §6, README
 * "Metrics").
 *
 * Every process serves Prometheus text at `GET /metrics` on `METRICS_PORT`
 * (default {@link DEFAULT_METRICS_PORT}; `0`/`off` disables metrics entirely):
 * Moleculer's own metrics (`moleculer_request_*` per action: rate, latency in
 * ms, errors; `moleculer_transit_*` / `moleculer_transporter_*`: NATS traffic;
 * `process_*`, `os_*`) plus ours, registered on the same broker metric
 * registry ({@link MetricsMiddleware}) so one scrape sees all of them:
 *
 * | name | type | labels | recorded by |
 * |---|---|---|---|
 * | `msa_queue_jobs` | gauge | queue, state (waiting/active/delayed/failed) | the process running the queue's workers, every `METRICS_SAMPLE_MS` (mixins/worker.mixin.ts) |
 * | `msa_queue_jobs_total` | counter | queue, outcome (completed/failed) | each job attempt's end (mixins/worker.mixin.ts) |
 * | `msa_bookings_total` | counter | courier, outcome (booked/failed/cancelled) | booking, where an attempt settles (lib/booking/worker.ts) |
 * | `msa_courier_call_duration_seconds` | histogram | courier, operation, outcome (ok/refused/unavailable/error) | every courier adapter call (lib/couriers/index.ts `adapterFor`) |
 * | `msa_outbox_oldest_age_seconds` | gauge | outbox (`<schema>.<table>`) | the owning service, every `METRICS_SAMPLE_MS` (mixins/db.mixin.ts) |
 * | `msa_outbox_pending` | gauge | outbox | same query |
 * | `msa_tracking_scans_total` | counter | source (push/poll/manifest) | booking tracking's fold (lib/booking/tracking.ts) |
 * | `msa_serviceability_pincodes` | gauge | courier | rates, after each courier's serviceability sync and at start (services/rates.service.ts) |
 * | `msa_serviceability_synced_timestamp_seconds` | gauge | courier | same: Unix time of its last successful sync |
 * | `msa_serviceability_sync_failures_total` | counter | courier | rates, each failed courier sync |
 *
 * Code outside a service (lib/couriers, lib/booking) records through the
 * functions here, on the registry of every live broker of the process that
 * has metrics on (production runs one broker per process).
 */
import { type BrokerOptions, type MetricRegistry, MetricReporters, type ServiceBroker } from "moleculer";
import { setting } from "./config";

/** Port of `GET /metrics` when `METRICS_PORT` is unset. */
export const DEFAULT_METRICS_PORT = setting("METRICS_PORT", {}) as number;
/** Interval (ms) of the sampled gauges (queue depth, outbox lag) when `METRICS_SAMPLE_MS` is unset. */
export const DEFAULT_SAMPLE_MS = setting("METRICS_SAMPLE_MS", {});

/** Metric names (Prometheus style, units in the name). */
export const M = {
	queueJobs: "msa_queue_jobs",
	queueJobsTotal: "msa_queue_jobs_total",
	bookingsTotal: "msa_bookings_total",
	courierCallSeconds: "msa_courier_call_duration_seconds",
	outboxOldestAgeSeconds: "msa_outbox_oldest_age_seconds",
	outboxPending: "msa_outbox_pending",
	scansTotal: "msa_tracking_scans_total",
	serviceabilityPincodes: "msa_serviceability_pincodes",
	serviceabilitySyncedSeconds: "msa_serviceability_synced_timestamp_seconds",
	serviceabilitySyncFailures: "msa_serviceability_sync_failures_total",
} as const;

/**
 * The metrics port of this process from `METRICS_PORT`: unset or empty →
 * {@link DEFAULT_METRICS_PORT}; `0` or `off` → null (metrics disabled).
 * @throws Error when the value is not a port number
 */
export function metricsPort(env: NodeJS.ProcessEnv = process.env): number | null {
	return setting("METRICS_PORT", env);
}

/**
 * Interval (ms) of the sampled gauges: `METRICS_SAMPLE_MS`, default {@link DEFAULT_SAMPLE_MS}, at least 50.
 * @throws Error naming the variable when the value is not allowed (lib/platform/config.ts)
 */
export function sampleEveryMs(env: NodeJS.ProcessEnv = process.env): number {
	return setting("METRICS_SAMPLE_MS", env);
}

/**
 * Moleculer's Prometheus reporter (its own HTTP server, `GET /metrics`, gzip
 * when asked) that does not take the process down when its port is taken
 * (several processes on one machine, tests): it logs a warning and serves
 * nothing; `stop()` never fails.
 */
export class MetricsEndpoint extends MetricReporters.Prometheus {
	/** Starts the HTTP server (Moleculer's) and handles its listen errors. */
	override init(registry: MetricRegistry): void {
		super.init(registry);
		this.server.on("error", (err: Error) =>
			this.logger.warn(`metrics: not served on port ${this.opts.port}: ${err.message}`),
		);
	}

	/** Closes the server (resolves also when it never listened). */
	override stop(): Promise<void> {
		return new Promise((resolve) => {
			if (!this.server.listening) return resolve();
			this.server.close(() => resolve());
		});
	}
}

/**
 * The broker's `metrics` option for this process: disabled when
 * {@link metricsPort} is null, else enabled with a {@link MetricsEndpoint}
 * on that port at `/metrics`, listening on `HOST` when set (else every
 * interface).
 */
export function metricsOptions(env: NodeJS.ProcessEnv = process.env): NonNullable<BrokerOptions["metrics"]> {
	const port = metricsPort(env);
	if (port === null) return { enabled: false };
	// Moleculer takes a reporter instance (reporters/index.js `resolve`); its typing lists only names
	// on HOST like the gateway (the zero-setup start: 127.0.0.1), every interface otherwise
	const host = port !== 0 ? setting("HOST", env) : undefined;
	const reporter = new MetricsEndpoint({ port, path: "/metrics", ...(host ? { host } : {}) }) as unknown as {
		type: "Prometheus";
	};
	return { enabled: true, reporter: [reporter] };
}

/** Registries of this process's live brokers with metrics on. */
const live = new Set<MetricRegistry>();

/** Histogram buckets (seconds) of courier calls: 10 ms … 30 s. */
const COURIER_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Every metric of ours: name, type, labels, unit and help text as Moleculer's registry takes them. */
const DEFINITIONS: readonly (
	| MetricRegistry.GaugeMetricOptions
	| MetricRegistry.CounterMetricOptions
	| MetricRegistry.HistogramMetricOptions
)[] = [
	{
		name: M.queueJobs,
		type: "gauge",
		labelNames: ["queue", "state"],
		description: "BullMQ jobs per queue and state (sampled)",
	},
	{
		name: M.queueJobsTotal,
		type: "counter",
		labelNames: ["queue", "outcome"],
		description: "BullMQ job attempts ended, per queue and outcome",
	},
	{
		name: M.bookingsTotal,
		type: "counter",
		labelNames: ["courier", "outcome"],
		description: "Booking attempts settled, per courier and outcome",
	},
	{
		name: M.courierCallSeconds,
		type: "histogram",
		labelNames: ["courier", "operation", "outcome"],
		buckets: COURIER_BUCKETS,
		quantiles: true,
		unit: "seconds",
		description: "Courier API call latency, per courier, operation and outcome",
	},
	{
		name: M.outboxOldestAgeSeconds,
		type: "gauge",
		labelNames: ["outbox"],
		unit: "seconds",
		description: "Age of the oldest undelivered outbox row (0 when none; sampled)",
	},
	{
		name: M.outboxPending,
		type: "gauge",
		labelNames: ["outbox"],
		description: "Undelivered outbox rows (sampled)",
	},
	{
		name: M.scansTotal,
		type: "counter",
		labelNames: ["source"],
		description: "Tracking scans ingested, per source",
	},
	{
		name: M.serviceabilityPincodes,
		type: "gauge",
		labelNames: ["courier"],
		description: "Pincodes stored by the courier's last successful serviceability sync",
	},
	{
		name: M.serviceabilitySyncedSeconds,
		type: "gauge",
		labelNames: ["courier"],
		unit: "seconds",
		description: "Unix time of the courier's last successful serviceability sync",
	},
	{
		name: M.serviceabilitySyncFailures,
		type: "counter",
		labelNames: ["courier"],
		description: "Failed courier serviceability syncs",
	},
];

/** Registers our metrics on `reg` (idempotent). */
function registerAll(reg: MetricRegistry): void {
	for (const def of DEFINITIONS) {
		if (reg.hasMetric(def.name)) continue;
		// one call per overload of `register` (it takes no union)
		if (def.type === "histogram") reg.register(def);
		else if (def.type === "counter") reg.register(def);
		else reg.register(def);
	}
}

/**
 * Moleculer middleware: registers our metrics on the broker's registry when
 * metrics are on, and makes the registry a target of the recording functions
 * below until the broker stops.
 */
export const MetricsMiddleware = {
	name: "MsaMetrics",
	created(broker: ServiceBroker) {
		if (!broker.isMetricsEnabled()) return;
		registerAll(broker.metrics);
		live.add(broker.metrics);
	},
	async stopped(broker: ServiceBroker) {
		live.delete(broker.metrics);
	},
};

/** The registry of `broker` with our metrics, or null when its metrics are off. */
function registryOf(broker: ServiceBroker): MetricRegistry | null {
	return broker.isMetricsEnabled() && broker.metrics.hasMetric(M.queueJobs) ? broker.metrics : null;
}

/** Booking attempt settled (`outcome` booked / failed / cancelled) with courier `courier` (its name). */
export function countBooking(courier: string, outcome: "booked" | "failed" | "cancelled"): void {
	for (const r of live) r.increment(M.bookingsTotal, { courier, outcome });
}

/** One courier adapter call of `operation` took `seconds` and ended with `outcome`. */
export function observeCourierCall(
	courier: string,
	operation: string,
	outcome: string,
	seconds: number,
): void {
	for (const r of live) r.observe(M.courierCallSeconds, seconds, { courier, operation, outcome });
}

/** `n` tracking scans ingested from `source` (push, poll, manifest). */
export function countScans(source: string, n: number): void {
	if (n <= 0) return;
	for (const r of live) r.increment(M.scansTotal, { source }, n);
}

/** A job attempt of `queue` ended (`completed` or `failed`), on `broker`'s registry. */
export function countJob(broker: ServiceBroker, queue: string, outcome: "completed" | "failed"): void {
	registryOf(broker)?.increment(M.queueJobsTotal, { queue, outcome });
}

/** Sets the depth gauges of `queue` on `broker`'s registry from BullMQ job counts (`{waiting, active, …}`). */
export function setQueueDepth(broker: ServiceBroker, queue: string, counts: Record<string, number>): void {
	const r = registryOf(broker);
	if (!r) return;
	for (const state of ["waiting", "active", "delayed", "failed"])
		r.set(M.queueJobs, counts[state] ?? 0, { queue, state });
}

/** Sets the lag gauges of outbox `outbox` (`<schema>.<table>`) on `broker`'s registry. */
export function setOutboxLag(
	broker: ServiceBroker,
	outbox: string,
	pending: number,
	oldestAgeSeconds: number,
): void {
	const r = registryOf(broker);
	if (!r) return;
	r.set(M.outboxPending, pending, { outbox });
	r.set(M.outboxOldestAgeSeconds, oldestAgeSeconds, { outbox });
}

/**
 * A serviceability sync of courier `courier` (its code) on `broker`'s
 * registry: a success sets its pincode count and sync time (`syncedAt`), a
 * failure (`rows` null) counts one failure.
 */
export function recordServiceabilitySync(
	broker: ServiceBroker,
	courier: string,
	rows: number | null,
	syncedAt?: Date,
): void {
	const r = registryOf(broker);
	if (!r) return;
	if (rows === null) {
		r.increment(M.serviceabilitySyncFailures, { courier });
		return;
	}
	r.set(M.serviceabilityPincodes, rows, { courier });
	if (syncedAt) r.set(M.serviceabilitySyncedSeconds, Math.floor(syncedAt.getTime() / 1000), { courier });
}

/** Whether `broker` records our metrics (metrics on): samplers start only then. */
export function metricsOn(broker: ServiceBroker): boolean {
	return registryOf(broker) !== null;
}

/**
 * Runs `sample` every {@link sampleEveryMs} (first run at once; never two at
 * a time; errors go to `onError`). Answers the function that stops it.
 */
export function everySample(sample: () => Promise<void>, onError: (err: Error) => void): () => void {
	let stopped = false;
	let timer: NodeJS.Timeout | undefined;
	const tick = async () => {
		try {
			await sample();
		} catch (err) {
			onError(err instanceof Error ? err : new Error(String(err)));
		}
		if (!stopped) timer = setTimeout(tick, sampleEveryMs()).unref();
	};
	void tick();
	return () => {
		stopped = true;
		if (timer) clearTimeout(timer);
	};
}
