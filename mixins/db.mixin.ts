/**
 * Database mixin factory: gives a service `this.db` (the process's Sequelize
 * pool), its schema name, and runs the service's migrations
 * (`lib/<service>/migrations.ts`) before the service reports started (so
 * `/ready` is only green once its tables exist).
 */

import type { Service } from "moleculer";
import type { Sequelize } from "sequelize";
import { getSequelize, type Migration, migrate } from "../lib/db";
import { everySample, metricsOn, setOutboxLag } from "../lib/metrics";
import { outboxLag, outboxTablesOf } from "../lib/outbox";
import type { Mixin } from "../lib/service";

/** Members the db mixin adds to a service. */
export interface DbVars {
	db: Sequelize;
	/** PostgreSQL schema the service owns (not `schema`: Moleculer keeps the service schema there). */
	dbSchema: string;
	/** stops the outbox-lag sampler (metrics on) */
	$stopOutboxLag?: () => void;
}

/**
 * @param schema PostgreSQL schema this service owns (e.g. "intake")
 * @param migrations ordered migrations of that schema
 */
export function DbMixin(schema: string, migrations: Migration[]): Mixin<DbVars> {
	return {
		created(this: Service & DbVars) {
			this.dbSchema = schema;
		},
		async started(this: Service & DbVars) {
			this.db = getSequelize();
			const applied = await migrate(this.db, schema, migrations);
			if (applied.length) this.logger.info(`schema ${schema}: applied ${applied.join(", ")}`);
			if (!metricsOn(this.broker)) return;
			const tables = await outboxTablesOf(this.db, schema);
			if (!tables.length) return;
			const db = this.db;
			this.$stopOutboxLag = everySample(
				async () => {
					for (const t of tables) {
						const lag = await outboxLag(db, t);
						setOutboxLag(this.broker, `${t.schema}.${t.table}`, lag.pending, lag.oldestAgeSeconds);
					}
				},
				(e) => this.logger.debug(`outbox lag not sampled: ${e.message}`),
			);
		},
		stopped(this: Service & DbVars) {
			this.$stopOutboxLag?.();
		},
	};
}
