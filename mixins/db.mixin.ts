/**
 * Database mixin factory: gives a service `this.db` (the process's Sequelize
 * pool), its schema name, and runs the service's migrations before the service
 * reports started (so `/ready` is only green once its tables exist).
 */

import type { ServiceSchema } from "moleculer";
import type { Sequelize } from "sequelize";
import { getSequelize, type Migration, migrate } from "../lib/db";

/** Members the db mixin adds to a service. */
export interface DbVars {
	db: Sequelize;
	/** PostgreSQL schema the service owns (not `schema`: Moleculer keeps the service schema there). */
	dbSchema: string;
}

/**
 * @param schema PostgreSQL schema this service owns (e.g. "intake")
 * @param migrations ordered migrations of that schema
 */
export function DbMixin(schema: string, migrations: Migration[]): Partial<ServiceSchema> {
	return {
		created(this: any) {
			this.dbSchema = schema;
		},
		async started(this: any) {
			this.db = getSequelize();
			const applied = await migrate(this.db, schema, migrations);
			if (applied.length) this.logger.info(`schema ${schema}: applied ${applied.join(", ")}`);
		},
	};
}
