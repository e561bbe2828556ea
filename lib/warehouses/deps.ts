/**
 * What the warehouses modules (./operations.ts, ./remote.ts,
 * ./registration.ts) need of the running `warehouses` service: built once
 * per call by the service's `deps()` method, so the modules are plain
 * functions. SQL only through ./store.ts.
 */
import type { Logger, ServiceBroker } from "moleculer";
import type { Sequelize } from "sequelize";
import type { CallOptions } from "../contracts";

/** The warehouses service's pieces the warehouses modules use. */
export interface WarehousesDeps {
	/** the `warehouses` schema's connection (SQL only through ./store.ts) */
	db: Sequelize;
	/** the broker: calls made outside a request (the registration sweeper) */
	broker: ServiceBroker;
	logger: Logger;
	/** ms after which a pending registration is stale (`WAREHOUSE_REGISTRATION_STALE_MS`) */
	staleMs: number;
}

/** Timeout (ms) of calls to other services of ours. */
export const CALL_TIMEOUT_MS = 5000;

/**
 * Options of every call to another service: {@link CALL_TIMEOUT_MS}, and a
 * failure rethrown as it came (each caller decides: skip, log, or 503).
 */
export const CALL_OPTIONS: CallOptions = { timeout: CALL_TIMEOUT_MS, unavailable: false };

/** Error text of anything thrown. */
export function messageOf(err: unknown): string {
	return (err as Error)?.message ?? String(err);
}
