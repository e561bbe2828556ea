/**
 * What the documents modules (./operations.ts, ./capture.ts, ./manifest-relay.ts)
 * need of the running `documents` service: built by the service's `deps()`
 * method, so the modules are plain functions (docs/ARCHITECTURE.md §1 "The one
 * service shape"). SQL only through ./store.ts and ./manifest-store.ts.
 */
import type { Logger, ServiceBroker } from "moleculer";
import type { Sequelize } from "sequelize";

/** The documents service's pieces the documents modules use. */
export interface DocumentsDeps {
	/** the `documents` schema's connection (SQL only through ./store.ts, ./manifest-store.ts) */
	db: Sequelize;
	/** the broker: calls made outside a request (the outbox relay) */
	broker: ServiceBroker;
	logger: Logger;
	/**
	 * Delivers the documents outbox rows `outbox_ids` (just committed) to booking now, in the
	 * background (./manifest-relay.ts `ManifestRelay.kick`; the relay's timer retries failures).
	 */
	relayNow(outbox_ids: number[]): void;
}
