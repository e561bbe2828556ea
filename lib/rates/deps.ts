/**
 * What the rates modules (./operations.ts, ./sync.ts) need of the running
 * `rates` service: its database, broker, logger and settings, and its
 * mutable in-memory state (the catalog snapshot, the pincode facts cache,
 * the coverage cache). Built once by {@link createRatesDeps} in the service's `created` and returned
 * as is by its `deps()` method, so the hot path (`rates.serviceable`,
 * `rates.quote`) reads one property and allocates nothing for it. SQL only
 * through ./store.ts, ./catalog.ts (the catalog reads) and ./serviceability.ts
 * (the sync's replace-in-one-transaction). docs/decisions/0091-service-shape.md.
 */
import type { Logger, ServiceBroker } from "moleculer";
import type { Sequelize } from "sequelize";
import { call, type PincodeInfo } from "../contracts";
import { fail } from "../platform/errors";
import { Reloader } from "../platform/reloader";
import { TtlLru } from "./cache";
import { type CatalogSnapshot, loadCatalog } from "./catalog";
import { CoverageCache } from "./coverage";

/** The `rates` service's settings (services/rates.service.ts). */
export interface RatesSettings {
	/** TTL of cached pincode facts (reference data), ms. */
	pincodeCacheTtlMs: number;
	/** Maximum cached pincodes (the whole directory is ~19k). */
	pincodeCacheMax: number;
	/** Timeout of the `pincode.lookupMany` call, ms. */
	pincodeTimeoutMs: number;
	/** Periodic catalog reload (so several rates pods converge after edits), ms; 0 = off. */
	reloadIntervalMs: number;
}

/**
 * The rates service's pieces the rates modules use: one object per service
 * instance (a holder), whose `catalog` the modules replace on a reload.
 */
export interface RatesDeps {
	/** the `rates` schema's connection (set once the service has started; read through the service) */
	readonly db: Sequelize;
	/** the broker: calls and metrics outside a request (coverage, the sync gauges) */
	readonly broker: ServiceBroker;
	readonly logger: Logger;
	readonly settings: RatesSettings;
	/** the catalog snapshot in use; undefined until its first load (./operations.ts `getCatalog`) */
	catalog?: CatalogSnapshot;
	/** reads a fresh catalog from the database (concurrent callers share one read) */
	readonly catalogLoader: Reloader<CatalogSnapshot>;
	/** pincode facts by pincode (`pincode.lookupMany` answers), LRU with TTL */
	readonly pincodeCache: TtlLru<PincodeInfo>;
	/** courier coverage counts (`rates.coverage`) and the directory's pincodes they are counted over */
	readonly coverageCache: CoverageCache;
}

/** 503 `rate_unavailable` (spec §2.11): the catalog, the pincode service or the database cannot be reached. */
export const unavailable = () => fail("rate_unavailable");

/** The members of the `rates` service {@link createRatesDeps} reads (its `db` is set once the DbMixin has started). */
export interface RatesService {
	db: Sequelize;
	broker: ServiceBroker;
	logger: Logger;
	settings: RatesSettings;
}

/**
 * The one {@link RatesDeps} of `service` (called in its `created`): no
 * catalog yet, an empty pincode cache (`pincodeCacheMax` entries,
 * `pincodeCacheTtlMs`), and the coverage cache, whose directory read is
 * `pincode.all` (timeout `pincodeTimeoutMs`; a failure is logged and becomes
 * 503 `rate_unavailable`). `db` is read through `service`, which has it only
 * once started.
 */
export function createRatesDeps(service: RatesService): RatesDeps {
	const { broker, logger, settings } = service;
	return {
		get db() {
			return service.db;
		},
		broker,
		logger,
		settings,
		catalog: undefined,
		catalogLoader: new Reloader(() => loadCatalog(service.db)),
		pincodeCache: new TtlLru<PincodeInfo>(settings.pincodeCacheMax, settings.pincodeCacheTtlMs),
		coverageCache: new CoverageCache(() =>
			call(broker, "pincode.all", {}, { timeout: settings.pincodeTimeoutMs }).catch((err) => {
				logger.warn("pincode directory unavailable for coverage", (err as Error).message);
				throw unavailable();
			}),
		),
	};
}
