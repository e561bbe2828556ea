/**
 * What the billing modules (./operations.ts) need of the running `billing`
 * service: built by the service's `deps()` method (docs/ARCHITECTURE.md §1
 * "The one service shape"). SQL only through ./store.ts.
 */
import type { Logger } from "moleculer";
import type { Sequelize } from "sequelize";

export interface BillingDeps {
	/** the `billing` schema's connection */
	db: Sequelize;
	logger: Logger;
}
