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
 *
 * The handlers parse and answer; the operations are plain functions over
 * `RatesDeps` (lib/rates/deps.ts: the one holder of the catalog snapshot and
 * the pincode and coverage caches, built in `created`):
 * lib/rates/operations.ts (catalog, pincode facts, quotes, courier reads,
 * lane outcomes, reload) and lib/rates/sync.ts (the serviceability sync, its
 * scheduler, the start). SQL in lib/rates/store.ts, catalog.ts,
 * serviceability.ts and seed.ts. The service shape every service follows:
 * docs/ARCHITECTURE.md §1, docs/decisions/0091-service-shape.md.
 */
import { createHash } from "node:crypto";
import { EDD_QUERY, RATES_ROUTES } from "../lib/contracts/http/rates";
import { loadConfig } from "../lib/platform/config";
import { defineService } from "../lib/platform/service";
import { answerJson } from "../lib/platform/shared-answers";
import { createRatesDeps, type RatesDeps, type RatesSettings } from "../lib/rates/deps";
import { RATES_MIGRATIONS } from "../lib/rates/migrations";
import {
	catalogChanged,
	coverage,
	earliestDelivery,
	findCourier,
	listCouriers,
	pincodesChanged,
	recordOutcome,
	reloadCatalog,
	reloadEverywhere,
	runQuote,
	serviceabilityStatus,
	serviceableQuote,
} from "../lib/rates/operations";
import { parseQuoteParams, parseServiceableQuery } from "../lib/rates/params";
import { SYNC_QUEUE } from "../lib/rates/serviceability";
import { startRates, syncServiceability } from "../lib/rates/sync";
import { DbMixin } from "../mixins/db.mixin";
import { WorkerMixin } from "../mixins/worker.mixin";

/** State set in `created` / `started`. */
interface RatesVars {
	/** what lib/rates needs of this service, built once in `created` (the catalog snapshot and caches live in it) */
	ratesDeps: RatesDeps;
	reloadTimer?: NodeJS.Timeout;
}

const settings: RatesSettings = {
	pincodeCacheTtlMs: 10 * 60_000,
	pincodeCacheMax: 50_000,
	pincodeTimeoutMs: 5_000,
	reloadIntervalMs: 5 * 60_000,
};

/** The ETag of each EDD answer object (answers are cached and shared: lib/rates/operations.ts `earliestDelivery`). */
const ETAGS = new WeakMap<object, string>();

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
		/** What lib/rates needs of this service: the one object built in `created` (no allocation per request). */
		deps(): RatesDeps {
			return this.ratesDeps;
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
			access: RATES_ROUTES["rates.serviceable"].access,
			handler(ctx) {
				return serviceableQuote(this.deps(), ctx, parseServiceableQuery(ctx.params));
			},
		},

		/**
		 * GET /v1/shipping/edd (ours; issue 28; docs/decisions/0106-working-days-and-edd.md):
		 * `{from_pin, to_pin, payment_mode?}` → {@link EddAnswer}: the earliest
		 * delivery estimate (IST) among the couriers serving the lane, with
		 * `Cache-Control: private, max-age=<seconds to valid_until>` and a strong
		 * `ETag` (the gateway answers 304 to a matching `If-None-Match`).
		 * Access: every authenticated role.
		 * Errors: 400 `validation_failed` (pins not 6 digits, payment_mode); 503 `rate_unavailable`.
		 */
		edd: {
			access: RATES_ROUTES["rates.edd"].access,
			params: EDD_QUERY,
			async handler(ctx) {
				const now = new Date();
				const answer = await earliestDelivery(this.deps(), ctx, ctx.params, now);
				const maxAge = Math.max(0, Math.floor((Date.parse(answer.valid_until) - now.getTime()) / 1000));
				let tag = ETAGS.get(answer);
				if (!tag) {
					tag = createHash("sha256").update(answerJson(answer)).digest("base64url").slice(0, 27);
					ETAGS.set(answer, tag);
				}
				ctx.meta.$responseHeaders = { "Cache-Control": `private, max-age=${maxAge}`, ETag: `"${tag}"` };
				return answer;
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
			async handler(ctx) {
				return runQuote(this.deps(), ctx, parseQuoteParams(ctx.params));
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
			async handler(ctx) {
				return listCouriers(this.deps(), ctx.params.direction);
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
			async handler(ctx) {
				return coverage(this.deps(), ctx.params.direction);
			},
		},

		/** Internal: one courier (active or not) by `logistic_id`, or null. */
		getCourier: {
			params: { logistic_id: { type: "number", integer: true, positive: true, convert: true } },
			async handler(ctx) {
				return findCourier(this.deps(), ctx.params.logistic_id);
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
			async handler(ctx) {
				return recordOutcome(this.deps(), ctx.params);
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
			async handler(ctx) {
				return reloadEverywhere(this.deps(), ctx);
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
			async handler(ctx) {
				return syncServiceability(this.deps(), ctx, ctx.params.logistic_id);
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
			async handler() {
				return serviceabilityStatus(this.deps());
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
				await catalogChanged(this.deps());
			},
		},
		/** The pincode directory or its zone facts were reloaded: drop the cached pincode facts and coverage. */
		"pincode.changed"() {
			pincodesChanged(this.deps());
		},
	},
	created() {
		this.ratesDeps = createRatesDeps(this);
	},
	async started() {
		// Runs after the DbMixin's migrations (mixin lifecycle handlers run first).
		await startRates(this.deps(), loadConfig().sandbox);
		if (this.settings.reloadIntervalMs > 0) {
			this.reloadTimer = setInterval(() => {
				reloadCatalog(this.deps()).catch(() => undefined);
			}, this.settings.reloadIntervalMs);
			this.reloadTimer.unref();
		}
	},
	stopped() {
		if (this.reloadTimer) clearInterval(this.reloadTimer);
		this.reloadTimer = undefined;
	},
});
