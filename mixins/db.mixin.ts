/**
 * Database mixin factory: gives a service `this.db` (the process's Sequelize
 * pool), its schema name, and runs the service's migrations
 * (`lib/<service>/migrations.ts`) before the service reports started (so
 * `/ready` is only green once its tables exist).
 */

import type { Service } from "moleculer";
import type { Sequelize } from "sequelize";
import { getSequelize, type Migration, migrate } from "../lib/platform/db";
import { everySample, metricsOn, setOutboxLag } from "../lib/platform/metrics";
import {
	outboxLag,
	outboxRetentionHours,
	outboxTablesOf,
	purgeDeliveredOutbox,
} from "../lib/platform/outbox";
import type { Mixin } from "../lib/platform/service";

/** Members the db mixin adds to a service. */
export interface DbVars {
	db: Sequelize;
	/** PostgreSQL schema the service owns (not `schema`: Moleculer keeps the service schema there). */
	dbSchema: string;
	/** stops the outbox-lag sampler (metrics on) */
	$stopOutboxLag?: () => void;
	/**
	 * Deletes the service's delivered outbox rows older than
	 * `OUTBOX_RETENTION_HOURS` now (lib/platform/outbox.ts purgeDeliveredOutbox; what
	 * the hourly timer runs); answers how many. Set once started (0 rows for a
	 * service without outbox tables).
	 */
	purgeDeliveredOutboxes: () => Promise<number>;
	/** the timer of the next purge of delivered outbox rows; null once stopped */
	$outboxPurgeTimer?: NodeJS.Timeout | null;
}

/** How often each process purges its service's delivered outbox rows (ms; ± 20 % so replicas spread). */
export const OUTBOX_PURGE_EVERY_MS = 3_600_000;

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
			const tables = await outboxTablesOf(this.db, schema);
			const db = this.db;
			// delivered outbox rows past OUTBOX_RETENTION_HOURS go (a bulk import alone leaves 85,000): a
			// first run a minute after start, then about hourly
			const retention = outboxRetentionHours();
			this.purgeDeliveredOutboxes = async () => {
				let all = 0;
				for (const t of tables) {
					const n = await purgeDeliveredOutbox(db, t, retention);
					if (n)
						this.logger.info(`${t.schema}.${t.table}: ${n} delivered rows older than ${retention} h purged`);
					all += n;
				}
				return all;
			};
			if (!tables.length) return;
			this.$outboxPurgeTimer = undefined;
			const schedule = (ms: number) => {
				if (this.$outboxPurgeTimer === null) return; // stopped
				this.$outboxPurgeTimer = setTimeout(() => {
					this.purgeDeliveredOutboxes()
						.catch((e: Error) => this.logger.warn(`outbox purge: ${e.message}`))
						.finally(() => schedule(OUTBOX_PURGE_EVERY_MS * (0.8 + 0.4 * Math.random())));
				}, ms).unref();
			};
			if (retention > 0) schedule(60_000 * (0.5 + Math.random()));
			if (!metricsOn(this.broker)) return;
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
			if (this.$outboxPurgeTimer) clearTimeout(this.$outboxPurgeTimer);
			this.$outboxPurgeTimer = null;
		},
	};
}
