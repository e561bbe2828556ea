/**
 * `rates` service (spec §4.2 serviceable, §2.7 rate quote, §7; ARCHITECTURE §1;
 * DOMAIN.md "Zones", "Weight and price"): couriers, rate cards (courier × zone
 * × direction, weight slabs), COD and RTO rules, pincode serviceability and
 * lane performance, all in the `rates` schema and cached in memory.
 *
 * Hot path (no database query): catalog snapshot in memory + pincode facts from
 * one `pincode.lookupMany` call per quote, behind an in-process LRU/TTL cache.
 *
 * Actions:
 * - `rates.serviceable`  GET /v1/shipping/serviceable (gateway-facing)
 * - `rates.quote`        internal QuoteParams → QuoteResult (never throws lane_not_priced)
 * - `rates.listCouriers` internal `{shipment_type?}` → CourierInfo[]
 * - `rates.getCourier`   internal `{logistic_id}` → CourierInfo | null
 * - `rates.reload`       internal: re-reads the catalog from the database on
 *   every rates instance (broadcast `rates.changed`)
 *
 * Events: broadcasts `rates.changed` `{}` after a `rates.reload` (every other
 * rates instance re-reads its catalog); on `pincode.changed` (the pincode
 * directory or zone facts were reloaded) the cached pincode facts are dropped.
 * The periodic reload stays as the safety net for a lost event.
 */
import type { Context, Service, ServiceSchema } from "moleculer";
import { loadConfig } from "../lib/config";
import type { CourierInfo, PincodeInfo, QuoteResult } from "../lib/contracts";
import { ApiError, apiError } from "../lib/errors";
import { TtlLru } from "../lib/rates/cache";
import { type CatalogSnapshot, courierInfo, loadCatalog } from "../lib/rates/catalog";
import { RATES_MIGRATIONS } from "../lib/rates/migrations";
import { parseQuoteInput } from "../lib/rates/params";
import { type LaneQuery, quoteLane } from "../lib/rates/quote";
import { seedSandbox } from "../lib/rates/seed";
import { Reloader } from "../lib/reloader";
import { DbMixin, type DbVars } from "../mixins/db.mixin";

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

interface RatesVars extends DbVars {
	catalog?: CatalogSnapshot;
	catalogLoader: Reloader<CatalogSnapshot>;
	pincodeCache: TtlLru<PincodeInfo>;
	reloadTimer?: NodeJS.Timeout;
}

interface RatesMethods {
	getCatalog(): Promise<CatalogSnapshot>;
	reloadCatalog(): Promise<CatalogSnapshot>;
	pincodeFacts(ctx: Context, pins: string[]): Promise<Record<string, PincodeInfo>>;
	runQuote(ctx: Context, q: LaneQuery): Promise<QuoteResult>;
}

type This = Service<RatesSettings> & RatesVars & RatesMethods;

const unavailable = () => apiError(503, "rate_unavailable", "Pricing is temporarily unavailable; retry");

const RatesService = {
	name: "rates",
	mixins: [DbMixin("rates", RATES_MIGRATIONS)],
	settings: {
		pincodeCacheTtlMs: 10 * 60_000,
		pincodeCacheMax: 50_000,
		pincodeTimeoutMs: 5_000,
		reloadIntervalMs: 5 * 60_000,
	},
	actions: {
		/**
		 * GET /v1/shipping/serviceable (spec §4.2, §2.7). Query params arrive as
		 * strings: `from_pin`, `to_pin` (`^\d{6}$`), `physical_weight` (kg, > 0),
		 * `volumetric_weight` (kg, ≥ 0, default 0), `order_type` (1 = COD, anything
		 * else prepaid), `collectable_amount` (rupees, ≥ 0; the COD amount),
		 * `operation` ("reverse" prices the return leg, "forward" default).
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
			async handler(this: This, ctx: Context<Record<string, unknown>>): Promise<QuoteResult> {
				const q = parseQuoteInput(ctx.params, false);
				const res = await this.runQuote(ctx, q);
				if (res.data.length === 0) {
					const unknown = res.dropped_couriers.find((d) => d.reason === "unknown_pincode");
					const message = unknown
						? `No courier prices this lane: ${unknown.detail}`
						: `No courier on the rate card prices ${q.from_pin} → ${q.to_pin}`;
					throw apiError(422, "lane_not_priced", message, { dropped_couriers: res.dropped_couriers });
				}
				return res;
			},
		},

		/**
		 * Internal quote (lib/contracts.ts QuoteParams → QuoteResult): the same
		 * pricing as `rates.serviceable`, optionally for one courier
		 * (`logistic_id`). Never throws `lane_not_priced`: an unpriced lane answers
		 * `data: []` with the reasons in `dropped_couriers`. Throws 400 (as
		 * serviceable) on malformed input and 503 `rate_unavailable`.
		 */
		quote: {
			async handler(this: This, ctx: Context<Record<string, unknown>>): Promise<QuoteResult> {
				return this.runQuote(ctx, parseQuoteInput(ctx.params, true));
			},
		},

		/**
		 * Internal: active couriers by default priority (then logistic_id).
		 * `shipment_type` 0 → forward couriers, 1 or 2 → reverse couriers, absent → all.
		 * Answers CourierInfo[] (lib/contracts.ts).
		 */
		listCouriers: {
			params: {
				shipment_type: { type: "number", integer: true, min: 0, max: 2, convert: true, optional: true },
			},
			async handler(this: This, ctx: Context<{ shipment_type?: number }>): Promise<CourierInfo[]> {
				const snap = await this.getCatalog();
				const st = ctx.params.shipment_type;
				return snap.couriers
					.filter((c) => c.active && (st === undefined || (st === 0 ? c.forward : c.reverse)))
					.map(courierInfo);
			},
		},

		/** Internal: one courier (active or not) by `logistic_id`, or null. */
		getCourier: {
			params: { logistic_id: { type: "number", integer: true, positive: true, convert: true } },
			async handler(this: This, ctx: Context<{ logistic_id: number }>): Promise<CourierInfo | null> {
				const c = (await this.getCatalog()).byId.get(ctx.params.logistic_id);
				return c ? courierInfo(c) : null;
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
			async handler(
				this: This,
				ctx: Context,
			): Promise<{ couriers: number; rate_cards: number; lanes: number }> {
				const snap = await this.reloadCatalog();
				this.pincodeCache.clear();
				await ctx.broadcast("rates.changed", {});
				return { couriers: snap.couriers.length, rate_cards: snap.cards.size, lanes: snap.performance.size };
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
			async handler(this: This, ctx: Context) {
				if (ctx.nodeID === this.broker.nodeID) return;
				this.pincodeCache.clear();
				await this.reloadCatalog().catch(() => undefined);
			},
		},
		/** The pincode directory or its zone facts were reloaded: drop the cached pincode facts. */
		"pincode.changed"(this: This) {
			this.pincodeCache.clear();
		},
	},
	methods: {
		/** The in-memory catalog, loading it if needed; 503 `rate_unavailable` if it cannot be read. */
		async getCatalog(this: This): Promise<CatalogSnapshot> {
			return this.catalog ?? this.reloadCatalog();
		},

		/**
		 * Reads a fresh catalog (a read started after this call; concurrent callers
		 * share it) and swaps it in; 503 `rate_unavailable` on failure (old catalog kept).
		 */
		async reloadCatalog(this: This): Promise<CatalogSnapshot> {
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
		 * the rest with one `pincode.lookupMany` call. 503 `rate_unavailable` when
		 * the pincode service fails or cannot be reached.
		 */
		async pincodeFacts(this: This, ctx: Context, pins: string[]): Promise<Record<string, PincodeInfo>> {
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
					res = await ctx.call<Record<string, PincodeInfo>, { pincodes: string[] }>(
						"pincode.lookupMany",
						{ pincodes: missing },
						{ timeout: this.settings.pincodeTimeoutMs },
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

		/** Prices a parsed lane query against the cached catalog. */
		async runQuote(this: This, ctx: Context, q: LaneQuery): Promise<QuoteResult> {
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
	},
	created(this: This) {
		this.catalogLoader = new Reloader(() => loadCatalog(this.db));
		this.pincodeCache = new TtlLru<PincodeInfo>(
			this.settings.pincodeCacheMax,
			this.settings.pincodeCacheTtlMs,
		);
	},
	async started(this: This) {
		// Runs after the DbMixin's migrations (mixin lifecycle handlers run first).
		if (loadConfig().sandbox) {
			const n = await seedSandbox(this.db);
			if (n) this.logger.info(`sandbox rates seeded (${n} rows)`);
		}
		const snap = await this.reloadCatalog();
		this.logger.info(`rates catalog loaded: ${snap.couriers.length} couriers, ${snap.cards.size} rate cards`);
		if (this.settings.reloadIntervalMs > 0) {
			this.reloadTimer = setInterval(() => {
				this.reloadCatalog().catch(() => undefined);
			}, this.settings.reloadIntervalMs);
			this.reloadTimer.unref();
		}
	},
	stopped(this: This) {
		if (this.reloadTimer) clearInterval(this.reloadTimer);
		this.reloadTimer = undefined;
	},
} satisfies ServiceSchema<RatesSettings, RatesMethods, RatesVars>;

export default RatesService;
