/**
 * `rates` service (spec §4.2 serviceable, §2.7 rate quote, §7;
 * docs/ARCHITECTURE.md §1; DOMAIN.md "Zones", "Weight and price"): couriers,
 * rate cards (courier × zone × direction, weight slabs), COD and RTO rules,
 * pincode serviceability and lane performance, all in the `rates` schema and
 * cached in memory.
 *
 * Hot path (no database query): catalog snapshot in memory + pincode facts from
 * one `pincode.lookupMany` call per quote, behind an in-process LRU/TTL cache.
 *
 * Actions:
 * - `rates.serviceable`  GET /v1/shipping/serviceable (gateway-facing)
 * - `rates.quote`        internal QuoteParams → QuoteResult (never throws lane_not_priced)
 * - `rates.listCouriers` internal `{direction?}` → CourierInfo[]
 * - `rates.getCourier`   internal `{logistic_id}` → CourierInfo | null
 * - `rates.coverage`     internal `{direction}` → pincodes served per courier (cached)
 * - `rates.recordLaneOutcome` internal: a shipment's delivered / RTO outcome
 *   into its lane's performance (once per attempt id)
 * - `rates.reload`       internal: re-reads the catalog from the database on
 *   every rates instance (broadcast `rates.changed`)
 * - `rates.syncServiceability` internal (issue 14): pulls each courier's own
 *   pincode serviceability into `rates.courier_pincodes` (lib/rates/serviceability.ts);
 *   also the job of the BullMQ repeatable scheduler `rates-serviceability`
 *   (every `RATES_SERVICEABILITY_SYNC_MS`, default 24 h, 0 = off)
 * - `rates.serviceabilityStatus` internal: last sync time, rows and error per courier
 *
 * Events: broadcasts `rates.changed` `{}` after a `rates.reload` (every other
 * rates instance re-reads its catalog); on `pincode.changed` (the pincode
 * directory or zone facts were reloaded) the cached pincode facts and the
 * directory's pincode list (coverage) are dropped.
 * The periodic reload stays as the safety net for a lost event.
 */
import { loadConfig } from "../lib/config";
import {
	broadcast,
	type Caller,
	type CourierInfo,
	call,
	type PincodeInfo,
	type QuoteResult,
	type ResultOf,
	type ServiceabilitySyncOutcome,
} from "../lib/contracts";
import { adapterFor, type CourierAdapter } from "../lib/couriers";
import { ApiError, fail, failWith } from "../lib/errors";
import { recordServiceabilitySync } from "../lib/metrics";
import { getQueue } from "../lib/queue";
import { TtlLru } from "../lib/rates/cache";
import {
	type CatalogSnapshot,
	courierInfo,
	laneKey,
	lanePerformanceOf,
	loadCatalog,
} from "../lib/rates/catalog";
import { CoverageCache } from "../lib/rates/coverage";
import { RATES_MIGRATIONS } from "../lib/rates/migrations";
import { parseQuoteParams, parseServiceableQuery } from "../lib/rates/params";
import { type LaneQuery, quoteLane } from "../lib/rates/quote";
import { seedSandbox } from "../lib/rates/seed";
import {
	fetchServiceability,
	readSyncStatus,
	recordSyncError,
	replaceCourierPincodes,
	SYNC_QUEUE,
	syncIntervalMs,
	syncsServiceability,
} from "../lib/rates/serviceability";
import { recordLaneOutcome } from "../lib/rates/store";
import { Reloader } from "../lib/reloader";
import { defineService } from "../lib/service";
import { DbMixin } from "../mixins/db.mixin";
import { WorkerMixin } from "../mixins/worker.mixin";

interface RatesSettings {
	/** TTL of cached pincode facts (reference data), ms. */
	pincodeCacheTtlMs: number;
	/** Maximum cached pincodes (the whole directory is ~19k). */
	pincodeCacheMax: number;
	/** Timeout of the `pincode.lookupMany` call, ms. */
	pincodeTimeoutMs: number;
	/** Periodic catalog reload (so several rates pods converge after edits), ms; 0 = off. */
	reloadIntervalMs: number;
}

/** State set in `created` / `started`. */
interface RatesVars {
	catalog?: CatalogSnapshot;
	catalogLoader: Reloader<CatalogSnapshot>;
	pincodeCache: TtlLru<PincodeInfo>;
	/** courier coverage counts (`rates.coverage`) and the directory's pincodes they are counted over */
	coverageCache: CoverageCache;
	reloadTimer?: NodeJS.Timeout;
}

const unavailable = () => fail("rate_unavailable");

const settings: RatesSettings = {
	pincodeCacheTtlMs: 10 * 60_000,
	pincodeCacheMax: 50_000,
	pincodeTimeoutMs: 5_000,
	reloadIntervalMs: 5 * 60_000,
};

export default defineService<RatesVars>()({
	name: "rates",
	mixins: [
		DbMixin("rates", RATES_MIGRATIONS),
		// the scheduled serviceability sync (one job at a time per pod; a sync of ~19k pincodes takes minutes)
		WorkerMixin([
			{
				queue: SYNC_QUEUE,
				action: "rates.syncServiceability",
				concurrency: 1,
				lockDuration: 10 * 60_000,
				callTimeout: 60 * 60_000,
			},
		]),
	],
	settings,
	methods: {
		/** The in-memory catalog, loading it if needed; 503 `rate_unavailable` if it cannot be read. */
		async getCatalog(): Promise<CatalogSnapshot> {
			return this.catalog ?? this.reloadCatalog();
		},

		/**
		 * Reads a fresh catalog (a read started after this call; concurrent callers
		 * share it) and swaps it in; 503 `rate_unavailable` on failure (old catalog kept).
		 */
		async reloadCatalog(): Promise<CatalogSnapshot> {
			try {
				this.catalog = await this.catalogLoader.load();
				return this.catalog;
			} catch (err) {
				this.logger.error("rates catalog unavailable", (err as Error).message);
				throw unavailable();
			}
		},

		/**
		 * Pincode facts of `pins` (six-digit strings): cached ones from the LRU,
		 * the rest with one `pincode.lookupMany` call (timeout
		 * `settings.pincodeTimeoutMs`). 503 `rate_unavailable` when the pincode
		 * service fails (any error, its own 502 included) or cannot be reached.
		 */
		async pincodeFacts(ctx: Caller, pins: string[]): Promise<Record<string, PincodeInfo>> {
			const out: Record<string, PincodeInfo> = {};
			const missing: string[] = [];
			for (const p of new Set(pins)) {
				const hit = this.pincodeCache.get(p);
				if (hit) out[p] = hit;
				else missing.push(p);
			}
			if (missing.length) {
				let res: Record<string, PincodeInfo>;
				try {
					res = await call(
						ctx,
						"pincode.lookupMany",
						{ pincodes: missing },
						{ timeout: this.settings.pincodeTimeoutMs, unavailable: false },
					);
				} catch (err) {
					this.logger.warn("pincode facts unavailable", (err as Error).message);
					throw unavailable();
				}
				for (const p of missing) {
					const info = res?.[p];
					if (!info || typeof info.found !== "boolean") throw unavailable();
					this.pincodeCache.set(p, info);
					out[p] = info;
				}
			}
			return out;
		},

		/** Prices a parsed lane query against the cached catalog; 503 `rate_unavailable` on an unexpected failure. */
		async runQuote(ctx: Caller, q: LaneQuery): Promise<QuoteResult> {
			const [snap, facts] = await Promise.all([
				this.getCatalog(),
				this.pincodeFacts(ctx, [q.from_pin, q.to_pin]),
			]);
			try {
				return quoteLane(snap, facts[q.from_pin], facts[q.to_pin], q);
			} catch (err) {
				if (err instanceof ApiError) throw err;
				this.logger.error("quote failed", (err as Error).message);
				throw unavailable();
			}
		},

		/**
		 * Syncs one courier (lib/rates/serviceability.ts): asks `adapter` every
		 * pincode of `pincodes` and replaces its `rates.courier_pincodes` rows in
		 * one transaction. A courier error (or a database failure) is recorded in
		 * `rates.serviceability_syncs` and answered as `ok: false`; the previous
		 * rows stay. Never throws.
		 */
		async syncCourier(
			courier: { logistic_id: number; code: string },
			adapter: CourierAdapter,
			pincodes: string[],
		): Promise<ServiceabilitySyncOutcome> {
			const id = courier.logistic_id;
			try {
				const rows = await fetchServiceability(adapter, pincodes);
				const r = await replaceCourierPincodes(this.db, id, rows);
				recordServiceabilitySync(this.broker, courier.code, r.rows, new Date(r.synced_at));
				this.logger.info(`serviceability of courier ${courier.code} synced: ${r.rows} pincodes`);
				return { logistic_id: id, ok: true, rows: r.rows, error: null };
			} catch (err) {
				const message = `${(err as Error).name}: ${(err as Error).message}`;
				this.logger.warn(
					`serviceability sync of courier ${courier.code} failed (previous rows kept): ${message}`,
				);
				recordServiceabilitySync(this.broker, courier.code, null);
				await recordSyncError(this.db, id, message).catch((e: Error) =>
					this.logger.error("serviceability sync error not recorded", e.message),
				);
				return { logistic_id: id, ok: false, rows: null, error: message };
			}
		},

		/**
		 * Registers (interval > 0) or removes (0) the repeatable BullMQ job of
		 * the serviceability sync on queue {@link SYNC_QUEUE}: one scheduler id
		 * shared by every rates pod, so the job runs once per interval, not
		 * once per pod. A queue failure is logged (quotes do not depend on it).
		 */
		async scheduleServiceabilitySync(everyMs: number): Promise<void> {
			const q: object = getQueue(SYNC_QUEUE);
			const sched = q as {
				upsertJobScheduler?: (
					id: string,
					repeat: { every: number },
					tpl: { name: string; data: object },
				) => Promise<unknown>;
				removeJobScheduler?: (id: string) => Promise<unknown>;
			};
			try {
				if (everyMs > 0)
					await sched.upsertJobScheduler?.call(q, SYNC_QUEUE, { every: everyMs }, { name: "sync", data: {} });
				else await sched.removeJobScheduler?.call(q, SYNC_QUEUE);
			} catch (err) {
				this.logger.warn("serviceability sync not scheduled", (err as Error).message);
			}
		},
	},
	actions: {
		/**
		 * GET /v1/shipping/serviceable (spec §4.2, §2.7). Query params arrive as
		 * strings: `from_pin`, `to_pin` (`^\d{6}$`), `physical_weight` (kg, > 0),
		 * `volumetric_weight` (kg, ≥ 0, default 0), `order_type` (1 = COD, anything
		 * else prepaid), `collectable_amount` (rupees, ≥ 0; the COD amount),
		 * `operation` ("reverse" prices the return leg, "forward" default); they
		 * are converted to the internal lane query here (lib/rates/params.ts).
		 *
		 * 200 `{data: Quote[], dropped_couriers: DroppedCourier[]}` (money in
		 * rupees, `weight` = chargeable kg, sorted by courier priority).
		 * Errors: 400 `from_pin, to_pin and physical_weight are required`; 400
		 * `validation_failed` with `details`; 422 `{error:"lane_not_priced",
		 * message, dropped_couriers}` when no courier prices the lane (including an
		 * unknown pincode); 503 `rate_unavailable` when the pincode service or the
		 * database cannot be reached.
		 */
		serviceable: {
			access: { auth: true },
			async handler(ctx): Promise<QuoteResult> {
				const q = parseServiceableQuery(ctx.params);
				const res = await this.runQuote(ctx, q);
				if (res.data.length === 0) {
					const unknown = res.dropped_couriers.find((d) => d.reason === "unknown_pincode");
					const message = unknown
						? `No courier prices this lane: ${unknown.detail}`
						: `No courier on the rate card prices ${q.from_pin} → ${q.to_pin}`;
					throw failWith("lane_not_priced", { dropped_couriers: res.dropped_couriers }, message);
				}
				return res;
			},
		},

		/**
		 * Internal quote (lib/contracts/rates.ts QuoteParams → QuoteResult): the
		 * same pricing as `rates.serviceable` (weights kg, `cod_amount` rupees,
		 * `payment_mode` default prepaid, `direction` default forward), optionally
		 * for one courier (`logistic_id`). Never throws `lane_not_priced`: an
		 * unpriced lane answers `data: []` with the reasons in `dropped_couriers`.
		 * Throws 400 (REQUIRED_MESSAGE or `validation_failed`) on malformed input
		 * and 503 `rate_unavailable`.
		 */
		quote: {
			async handler(ctx): Promise<QuoteResult> {
				return this.runQuote(ctx, parseQuoteParams(ctx.params));
			},
		},

		/**
		 * Internal: active couriers by default priority (then logistic_id).
		 * `direction` "forward" → couriers doing forward shipments, "reverse" →
		 * couriers doing reverse pickups, absent → all. Answers CourierInfo[].
		 * Another value → Moleculer ValidationError.
		 */
		listCouriers: {
			params: { direction: { type: "enum", values: ["forward", "reverse"], optional: true } },
			async handler(ctx): Promise<CourierInfo[]> {
				const snap = await this.getCatalog();
				const dir = ctx.params.direction;
				return snap.couriers
					.filter((c) => c.active && (dir === undefined || (dir === "forward" ? c.forward : c.reverse)))
					.map(courierInfo);
			},
		},

		/**
		 * Internal (spec §2.8 `serviceable_pincodes`, `unique_pincodes`):
		 * `{direction: "forward"|"reverse"}` → `{couriers: {[logistic_id]: count},
		 * unique_pincodes, limits: {[logistic_id]: {max_weight_kg (kg|null), mode,
		 * zones}}}` over the active couriers doing that direction: how many pincodes
		 * of the India Post directory (`pincode.all`) each serves at the customer's
		 * end (forward: delivery, reverse: pickup) by its serviceability rules
		 * (lib/rates/coverage.ts). Cached in memory; recomputed after a catalog
		 * reload or `pincode.changed`. Another direction → Moleculer
		 * ValidationError; 503 `rate_unavailable` when the catalog or the pincode
		 * service cannot be read.
		 */
		coverage: {
			params: { direction: { type: "enum", values: ["forward", "reverse"] } },
			async handler(ctx): Promise<ResultOf<"rates.coverage">> {
				return this.coverageCache.get(await this.getCatalog(), ctx.params.direction);
			},
		},

		/** Internal: one courier (active or not) by `logistic_id`, or null. */
		getCourier: {
			params: { logistic_id: { type: "number", integer: true, positive: true, convert: true } },
			async handler(ctx): Promise<CourierInfo | null> {
				const c = (await this.getCatalog()).byId.get(ctx.params.logistic_id);
				return c ? courierInfo(c) : null;
			},
		},

		/**
		 * Internal (spec §2.7 `performance`; issue 7): counts one shipment's
		 * final outcome into its lane. Params: `attempt_id` (booking attempt,
		 * positive integer), `logistic_id`, `from_pin` / `to_pin` (six digits),
		 * `outcome` "delivered" | "rto", `tat_days` (days ≥ 0, two decimals
		 * kept; averaged over delivered outcomes only). Idempotent per
		 * `attempt_id`: the first call inserts `rates.lane_outcomes` and
		 * increments `rates.lane_performance` in one statement (lib/rates/store.ts)
		 * and answers `{recorded: true}`; a repeat changes nothing and answers
		 * `{recorded: false}`. This instance's catalog snapshot takes the lane's
		 * new counters at once (the quote's `performance` appears once the lane
		 * has MIN_LANE_SHIPMENTS = 20 shipments); other rates instances take
		 * them at their periodic reload (`reloadIntervalMs`, 5 min).
		 * A courier no longer in the database answers `{recorded: false}` (logged):
		 * there is no lane to count it into, and a retry would not change that.
		 * Errors: Moleculer ValidationError for malformed params; 503
		 * `rate_unavailable` when the database cannot be reached.
		 */
		recordLaneOutcome: {
			params: {
				attempt_id: { type: "number", integer: true, positive: true, convert: true },
				logistic_id: { type: "number", integer: true, positive: true, convert: true },
				from_pin: { type: "string", pattern: /^\d{6}$/ },
				to_pin: { type: "string", pattern: /^\d{6}$/ },
				outcome: { type: "enum", values: ["delivered", "rto"] },
				tat_days: { type: "number", min: 0, max: 999_999, convert: true },
			},
			async handler(ctx): Promise<{ recorded: boolean }> {
				const p = ctx.params;
				let lane: Awaited<ReturnType<typeof recordLaneOutcome>>;
				try {
					lane = await recordLaneOutcome(this.db, p);
				} catch (err) {
					// no such courier in the database (the snapshot may lag a new one, so the database decides)
					// (a courier removed since the shipment was booked: nothing to count it into; answering
					// `recorded:false` lets booking's outbox deliver the row instead of retrying it forever)
					if ((err as Error).name === "SequelizeForeignKeyConstraintError") {
						this.logger.warn(
							`lane outcome of attempt ${p.attempt_id} not recorded: unknown courier ${p.logistic_id}`,
						);
						return { recorded: false };
					}
					this.logger.error("lane outcome not recorded", (err as Error).message);
					throw unavailable();
				}
				if (!lane) return { recorded: false };
				const perf = lanePerformanceOf(lane);
				// into the snapshot in use now (none loaded yet: its first load reads the lane); counters only
				// grow, so an answer that raced a later one never replaces it
				const cur = this.catalog;
				const key = laneKey(p.logistic_id, p.from_pin, p.to_pin);
				const held = cur?.performance.get(key);
				if (cur && perf && (!held || held.shipments <= perf.shipments)) cur.performance.set(key, perf);
				return { recorded: true };
			},
		},

		/**
		 * Internal: re-reads couriers, rate cards, COD/RTO rules, serviceability
		 * and lane performance from the database (after an operator edit), clears
		 * the pincode cache, then broadcasts `rates.changed` so every other rates
		 * instance reloads too. Answers `{couriers, rate_cards, lanes}` counts.
		 * On failure the previous catalog stays in use, nothing is broadcast and
		 * 503 `rate_unavailable` is thrown.
		 */
		reload: {
			async handler(ctx): Promise<ResultOf<"rates.reload">> {
				const snap = await this.reloadCatalog();
				this.pincodeCache.clear();
				await broadcast(ctx, "rates.changed", {});
				return { couriers: snap.couriers.length, rate_cards: snap.cards.size, lanes: snap.performance.size };
			},
		},

		/**
		 * Internal (issue 14): pulls each active courier's own pincode
		 * serviceability (couriers whose adapter implements the optional
		 * `serviceability` operation; only `logistic_id` when given) for every
		 * pincode of the directory (`pincode.all`), in the adapter's batches,
		 * into `rates.courier_pincodes` (replaced per courier atomically), then
		 * reloads the catalog here and broadcasts `rates.changed`, so quotes stop
		 * offering a courier on a lane it does not serve (lib/rates/quote.ts).
		 * Answers `{couriers: [{logistic_id, ok, rows, error}]}`; a courier
		 * whose sync failed keeps its previous rows (`ok: false`, `error`).
		 * Couriers without the operation are not listed. Errors: 503
		 * `rate_unavailable` when the catalog or the pincode directory cannot
		 * be read. Also the job of the repeatable scheduler (queue `rates-serviceability`).
		 */
		syncServiceability: {
			params: {
				logistic_id: { type: "number", integer: true, positive: true, convert: true, optional: true },
			},
			async handler(ctx): Promise<ResultOf<"rates.syncServiceability">> {
				const snap = await this.reloadCatalog();
				const want = ctx.params.logistic_id;
				const targets: { courier: (typeof snap.couriers)[number]; adapter: CourierAdapter }[] = [];
				for (const c of snap.couriers) {
					if (!c.active || (want !== undefined && c.logistic_id !== want)) continue;
					let adapter: CourierAdapter;
					try {
						adapter = adapterFor(c);
					} catch {
						continue; // no adapter under that key: nothing to sync
					}
					if (syncsServiceability(adapter)) targets.push({ courier: c, adapter });
				}
				if (!targets.length) return { couriers: [] };
				let pincodes: string[];
				try {
					pincodes = await call(ctx, "pincode.all", {}, { timeout: 30_000, unavailable: false });
				} catch (err) {
					this.logger.warn(
						"pincode directory unavailable for the serviceability sync",
						(err as Error).message,
					);
					throw unavailable();
				}
				const couriers: ServiceabilitySyncOutcome[] = [];
				for (const t of targets) couriers.push(await this.syncCourier(t.courier, t.adapter, pincodes));
				if (couriers.some((c) => c.ok)) {
					await this.reloadCatalog().catch(() => undefined);
					this.pincodeCache.clear();
					await broadcast(ctx, "rates.changed", {});
				}
				return { couriers };
			},
		},

		/**
		 * Internal (issue 14; ops): `{couriers: ServiceabilitySyncStatus[]}`, the
		 * last serviceability sync of every courier ever synced, by logistic_id:
		 * `synced_at` (last success, ISO-8601 UTC or null), `rows` (pincodes
		 * stored), `attempted_at`, `last_error` / `last_error_at`. 503
		 * `rate_unavailable` when the database cannot be read.
		 */
		serviceabilityStatus: {
			async handler(): Promise<ResultOf<"rates.serviceabilityStatus">> {
				try {
					return { couriers: await readSyncStatus(this.db) };
				} catch (err) {
					this.logger.error("serviceability status unavailable", (err as Error).message);
					throw unavailable();
				}
			},
		},
	},
	events: {
		/**
		 * Another rates instance reloaded after an edit: reload here too (our own
		 * broadcast is ignored: the action already reloaded). A failed read is
		 * logged and the previous catalog kept (the periodic reload retries).
		 */
		"rates.changed": {
			async handler(ctx) {
				if (ctx.nodeID === this.broker.nodeID) return;
				this.pincodeCache.clear();
				await this.reloadCatalog().catch(() => undefined);
			},
		},
		/** The pincode directory or its zone facts were reloaded: drop the cached pincode facts and coverage. */
		"pincode.changed"() {
			this.pincodeCache.clear();
			this.coverageCache.clearPincodes();
		},
	},
	created() {
		this.catalogLoader = new Reloader(() => loadCatalog(this.db));
		this.pincodeCache = new TtlLru<PincodeInfo>(
			this.settings.pincodeCacheMax,
			this.settings.pincodeCacheTtlMs,
		);
		this.coverageCache = new CoverageCache(() =>
			call(this.broker, "pincode.all", {}, { timeout: this.settings.pincodeTimeoutMs }).catch((err) => {
				this.logger.warn("pincode directory unavailable for coverage", (err as Error).message);
				throw unavailable();
			}),
		);
	},
	async started() {
		// Runs after the DbMixin's migrations (mixin lifecycle handlers run first).
		if (loadConfig().sandbox) {
			const n = await seedSandbox(this.db);
			if (n) this.logger.info(`sandbox rates seeded (${n} rows)`);
		}
		const snap = await this.reloadCatalog();
		this.logger.info(`rates catalog loaded: ${snap.couriers.length} couriers, ${snap.cards.size} rate cards`);
		await this.scheduleServiceabilitySync(syncIntervalMs());
		// last syncs into the gauges (ops see them after a restart too)
		const status = await readSyncStatus(this.db).catch(() => []);
		for (const st of status) {
			const c = snap.byId.get(st.logistic_id);
			if (c && st.synced_at) recordServiceabilitySync(this.broker, c.code, st.rows, new Date(st.synced_at));
		}
		if (this.settings.reloadIntervalMs > 0) {
			this.reloadTimer = setInterval(() => {
				this.reloadCatalog().catch(() => undefined);
			}, this.settings.reloadIntervalMs);
			this.reloadTimer.unref();
		}
	},
	stopped() {
		if (this.reloadTimer) clearInterval(this.reloadTimer);
		this.reloadTimer = undefined;
	},
});
