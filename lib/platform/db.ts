/**
 * PostgreSQL access: one Sequelize pool per process (shared by the services the
 * process runs) and umzug migrations per service schema.
 *
 * Each service owns its tables in its own schema (docs/ARCHITECTURE.md §1).
 * Migrations run on service start, under a transaction-scoped advisory lock
 * keyed by the schema, so several processes starting at once apply each
 * migration exactly once (the others wait, then find nothing pending).
 */
import pg, { type QueryResult, type QueryResultRow } from "pg";
import { Sequelize, type Transaction } from "sequelize";
import { SequelizeStorage, Umzug } from "umzug";
import { loadConfig } from "./config";
import { installRowTemplate } from "./pg-row-template";

// pg's row template as a plain object (./pg-row-template.ts): before any connection of this process exists
installRowTemplate();

const pools = new Map<string, Sequelize>();

/**
 * Returns the process-wide Sequelize instance for `url` (default
 * `DATABASE_URL`). Throws when no database is configured.
 */
export function getSequelize(url?: string): Sequelize {
	const cfg = loadConfig();
	const dsn = url ?? cfg.databaseUrl;
	if (!dsn) throw new Error("DATABASE_URL is not set (bin/start.ts sets it for the zero-setup start)");
	let s = pools.get(dsn);
	if (!s) {
		s = new Sequelize(dsn, {
			dialect: "postgres",
			logging: false,
			pool: { max: cfg.dbPoolMax, min: 0, idle: 10_000, acquire: 15_000 },
			dialectOptions: { application_name: cfg.dbApplicationName, statement_timeout: 15_000 },
		});
		pools.set(dsn, s);
	}
	return s;
}

/** Closes every pool this process opened (on broker stop). */
export async function closeAllPools(): Promise<void> {
	const all = [...pools.values()];
	pools.clear();
	await Promise.all(all.map((s) => s.close().catch(() => undefined)));
}

/** Context handed to each migration. */
export interface MigrationContext {
	sequelize: Sequelize;
	schema: string;
	transaction: Transaction;
}

/** One migration of a service schema; `up` runs inside the migration transaction. */
export interface Migration {
	name: string;
	up: (ctx: MigrationContext) => Promise<void>;
}

/**
 * Applies pending migrations of `schema` idempotently; safe under concurrent
 * starts. Every migration runs in the same transaction as the lock, so a failed
 * migration leaves nothing half-applied.
 */
export async function migrate(
	sequelize: Sequelize,
	schema: string,
	migrations: Migration[],
): Promise<string[]> {
	return sequelize.transaction(async (transaction) => {
		await sequelize.query("SELECT pg_advisory_xact_lock(hashtext($1))", {
			bind: [`msa-migrate:${schema}`],
			transaction,
		});
		await sequelize.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`, { transaction });
		const umzug = new Umzug<MigrationContext>({
			migrations: migrations.map((m) => ({ name: m.name, up: ({ context }) => m.up(context) })),
			context: { sequelize, schema, transaction },
			storage: new TxSequelizeStorage(sequelize, schema, transaction),
			logger: undefined,
		});
		const done = await umzug.up();
		return done.map((m) => m.name);
	});
}

/**
 * What {@link TxSequelizeStorage} uses of umzug's migration-log model (a
 * Sequelize model class): umzug's own minimal type leaves out the options
 * (the transaction) these calls pass.
 */
interface MigrationLogModel {
	sync(opts: { transaction: Transaction }): Promise<unknown>;
	create(values: Record<string, string>, opts: { transaction: Transaction }): Promise<unknown>;
	findAll(opts: {
		order: [string, string][];
		transaction: Transaction;
	}): Promise<Array<{ get(column: string): unknown }>>;
}

/** umzug's SequelizeStorage, bound to the migration transaction so the log commits with the schema. */
class TxSequelizeStorage extends SequelizeStorage {
	constructor(
		sequelize: Sequelize,
		schema: string,
		private readonly tx: Transaction,
	) {
		// One model per schema: umzug reuses a model already defined under the same
		// name, so a shared default name made concurrent migrations of two schemas
		// (two services starting in one process) write to each other's table.
		super({ sequelize, schema, tableName: "schema_migrations", modelName: `schema_migrations_${schema}` });
	}
	override async logMigration({ name }: { name: string }): Promise<void> {
		const model = this.model as MigrationLogModel;
		await model.sync({ transaction: this.tx });
		await model.create({ [this.columnName]: name }, { transaction: this.tx });
	}
	override async executed(): Promise<string[]> {
		const model = this.model as MigrationLogModel;
		await model.sync({ transaction: this.tx });
		const rows = await model.findAll({ order: [[this.columnName, "ASC"]], transaction: this.tx });
		return rows.map((r) => String(r.get(this.columnName)));
	}
}

/** At most this many distinct statements are prepared by name (per process, so per connection too). */
const MAX_PREPARED = 500;
/** Longer SQL (e.g. a batch INSERT whose text grows with the batch) is never prepared by name. */
const MAX_PREPARED_SQL = 4000;
/** SQL text → its prepared-statement name. */
const statementNames = new Map<string, string>();

/**
 * The name under which `sql` is prepared on each connection (pg parses a named
 * statement once per connection, then only binds and executes it: PostgreSQL
 * skips parse and analysis, which is most of a short statement's cost), or
 * undefined (run unnamed) once {@link MAX_PREPARED} names are taken or for
 * long SQL. Statements are prepared at the protocol level: outside any
 * transaction's rollback, and pg prepares again on a connection whose Parse failed.
 */
function statementName(sql: string): string | undefined {
	let n = statementNames.get(sql);
	if (n === undefined && statementNames.size < MAX_PREPARED && sql.length <= MAX_PREPARED_SQL) {
		n = `msa_${statementNames.size + 1}`;
		statementNames.set(sql, n);
	}
	return n;
}

/** PostgreSQL's "cached plan must not change result type" (feature_not_supported on a stale prepared statement). */
function isStalePlan(err: unknown): boolean {
	const e = err as { code?: string; message?: string };
	return e?.code === "0A000" && /cached plan must not change result type/.test(e.message ?? "");
}

/** A pg `Query` (pg/lib/query.js) as {@link namedQuery} makes it: the statement name and the callback set on it. */
interface PgQuery {
	name?: string;
	callback?: (err: Error | null, res?: QueryResult) => void;
}

/** pg's `Query` class (pinned pg 8.23.1; its typings leave the constructor out). */
const PgQueryClass = (pg as unknown as { Query: new (text: string, values?: unknown[]) => PgQuery }).Query;

/** The pg client beneath a Sequelize connection (what the postgres dialect hands out). */
interface PgClient {
	query<R extends QueryResultRow>(sql: string, values?: unknown[]): Promise<QueryResult<R>>;
	/** a query object given as is: pg runs it and calls its callback (answers nothing of use) */
	query(q: PgQuery): unknown;
	/** set to have Sequelize's pool discard the connection (as Sequelize does on a reset) */
	_invalid?: boolean;
}

/** What {@link run} uses of Sequelize internals: its postgres error mapping. */
interface DialectWithQuery {
	Query: new (
		connection: unknown,
		sequelize: Sequelize,
		options: Record<string, unknown>,
	) => { formatError(err: Error, stack?: string): Error };
}

/**
 * Runs `sql` prepared as `name` with `bind` on `conn`: what `conn.query({ name, text, values })` does, with the
 * query made from the SQL text and the name set on it (pg copies a config object's property descriptors per
 * statement; a text is not copied). Answers pg's result; rejects with pg's error.
 */
function namedQuery<R extends QueryResultRow>(
	conn: PgClient,
	name: string,
	sql: string,
	bind: unknown[],
): Promise<QueryResult<R>> {
	return new Promise((resolve, reject) => {
		const q = new PgQueryClass(sql, bind);
		q.name = name;
		q.callback = (err, res) => (err ? reject(err) : resolve(res as QueryResult<R>));
		conn.query(q);
	});
}

/**
 * Runs one statement straight on the pg client beneath Sequelize: the
 * transaction's connection, or one borrowed from Sequelize's pool (the same
 * connections, type parsers, time zone and statement_timeout as
 * `sequelize.query`), without Sequelize's per-query work (bind rewriting,
 * hooks, retry, a stack trace per query). A statement with bind values is
 * prepared by name (parsed once per connection, see statementName). Errors are mapped as
 * `sequelize.query` maps them (e.g. `SequelizeUniqueConstraintError`).
 */
async function run<T extends object>(
	sequelize: Sequelize,
	sql: string,
	bind: unknown[],
	transaction?: Transaction,
): Promise<QueryResult<T & QueryResultRow>> {
	const tx = transaction as (Transaction & { connection?: PgClient; finished?: string }) | undefined;
	if (tx?.finished) {
		throw new Error(`${tx.finished} has been called on this transaction, you can no longer use it`);
	}
	const cm = sequelize.connectionManager;
	const conn = tx?.connection ?? ((await cm.getConnection({ type: "write" })) as PgClient);
	// parameterised statements are prepared by name (see statementName)
	const name = bind.length ? statementName(sql) : undefined;
	try {
		try {
			return await (name
				? namedQuery<T & QueryResultRow>(conn, name, sql, bind)
				: conn.query<T & QueryResultRow>(sql, bind.length ? bind : undefined));
		} catch (err) {
			// A table changed under a prepared statement (a migration by a newer pod during a rolling
			// deploy): PostgreSQL refuses the cached plan. The connection is dropped from the pool (its
			// prepared statements with it); outside a transaction the statement runs again unnamed.
			if (!name || !isStalePlan(err)) throw err;
			conn._invalid = true;
			if (tx?.connection) throw err;
			return await conn.query<T & QueryResultRow>(sql, bind);
		}
	} catch (err) {
		const e = err as Error & { code?: string };
		if (e.code === "ECONNRESET" || e.message === "Query read timeout") conn._invalid = true;
		// Sequelize's typings do not expose its dialect; its Query class maps pg errors as sequelize.query does
		const Query = (sequelize as unknown as { dialect: DialectWithQuery }).dialect.Query;
		throw new Query(conn, sequelize, {}).formatError(e, new Error().stack);
	} finally {
		if (!tx?.connection) cm.releaseConnection(conn);
	}
}

/**
 * Runs a parameterised SELECT (or DML … RETURNING) and returns the rows.
 * `bind` values map to $1, $2, …
 */
export async function select<T extends object>(
	sequelize: Sequelize,
	sql: string,
	bind: unknown[] = [],
	transaction?: Transaction,
): Promise<T[]> {
	return (await run<T>(sequelize, sql, bind, transaction)).rows;
}

/**
 * Select-list item: timestamptz `column` as ISO-8601 UTC text with milliseconds (what `Date#toISOString`
 * writes, e.g. `2026-11-30T13:04:21.123Z`), formatted by PostgreSQL and named `column`: rows then need no Date
 * parsing and formatting in Node (the largest per-row cost of the orders list once measured; issue 32).
 * `column` is a trusted column name, never input.
 */
export const isoColumn = (column: string): string =>
	`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${column}`;

/** Runs DML and returns the affected row count plus any RETURNING rows. */
export async function exec<T extends object = Record<string, unknown>>(
	sequelize: Sequelize,
	sql: string,
	bind: unknown[] = [],
	transaction?: Transaction,
): Promise<{ rows: T[]; count: number }> {
	const r = await run<T>(sequelize, sql, bind, transaction);
	return { rows: r.rows, count: r.rowCount ?? r.rows.length };
}

/** A row as pg returns it: the columns `K` (bigint, numeric) may come as strings (or null, where `T` allows it). */
export type StoredRow<T, K extends keyof T> = Omit<T, K> & {
	[P in K]: string | number | (null extends T[P] ? null : never);
};

/**
 * The row with its columns `keys` (bigint ids, paise amounts: exact below 2^53)
 * converted to numbers.
 */
export function numbersIn<T, K extends keyof T>(row: StoredRow<T, K>, keys: readonly K[]): T {
	const out: Record<string, unknown> = { ...row };
	for (const k of keys) out[k as string] = Number(row[k]);
	// every key of T is present: the others came through unchanged
	return out as T;
}
