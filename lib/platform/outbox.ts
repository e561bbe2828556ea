/**
 * The parts of a service's transactional outbox (docs/ARCHITECTURE.md §5:
 * state that crosses services goes through the owner's outbox, delivered by
 * acknowledged calls, retried until acknowledged) that are the same in every
 * service: marking rows delivered and scheduling a failed row's redelivery with
 * capped exponential backoff. Each service keeps its own table
 * `<schema>.outbox (id, next_attempt_at, delivered_at, last_error, tries, …)`
 * and its own lease query (what it delivers differs).
 */
import type { Sequelize } from "sequelize";
import { setting } from "./config";
import { exec, type Migration, select } from "./db";

/** Schemas whose `outbox` table these functions may touch (the SQL names the schema). */
export type OutboxSchema = "booking" | "documents" | "billing";

/** Longest redelivery delay (ms). */
export const OUTBOX_MAX_DELAY_MS = 60_000;

/** Redelivery delay (ms) after a failed try: `baseMs` · 2^(tries−1), at most {@link OUTBOX_MAX_DELAY_MS}. */
export function outboxRetryDelayMs(tries: number, baseMs: number): number {
	return Math.min(OUTBOX_MAX_DELAY_MS, baseMs * 2 ** Math.max(0, Math.min(tries - 1, 16)));
}

/** Marks acknowledged rows `ids` of `<schema>.outbox` delivered (one UPDATE; nothing when empty). */
export async function markOutboxDelivered(db: Sequelize, schema: OutboxSchema, ids: number[]): Promise<void> {
	if (!ids.length) return;
	await exec(
		db,
		`UPDATE ${schema}.outbox SET delivered_at = now(), last_error = NULL WHERE id = ANY($1::bigint[])`,
		[ids],
	);
}

/**
 * Schedules the redelivery of failed row `row` of `<schema>.outbox` after
 * {@link outboxRetryDelayMs} and keeps the error (first 1000 characters).
 * A row delivered meanwhile is left alone.
 */
export async function retryOutboxLater(
	db: Sequelize,
	schema: OutboxSchema,
	row: { id: number; tries: number },
	error: string,
	baseMs: number,
): Promise<void> {
	await exec(
		db,
		`UPDATE ${schema}.outbox SET next_attempt_at = now() + make_interval(secs => $2::double precision / 1000), last_error = $3
		 WHERE id = $1 AND delivered_at IS NULL`,
		[row.id, outboxRetryDelayMs(row.tries, baseMs), error.slice(0, 1000)],
	);
}

/**
 * Leases up to `limit` due undelivered rows of `<schema>.outbox` (all, or only
 * `ids`), oldest first, `FOR UPDATE SKIP LOCKED`: each becomes invisible to
 * other relays for `leaseMs` and its `tries` grows by one. `K` and `P` are the
 * schema's kinds and payload shape (what its writers put in the table).
 * Booking's relay has its own lease (read-your-writes rows: lib/booking/store).
 */
export async function leaseOutboxRows<K extends string, P>(
	db: Sequelize,
	schema: Exclude<OutboxSchema, "booking">,
	limit: number,
	leaseMs: number,
	ids?: number[],
): Promise<{ id: number; kind: K; payload: P; tries: number }[]> {
	const { rows } = await exec<{ id: string; kind: K; payload: P; tries: number }>(
		db,
		`UPDATE ${schema}.outbox o
		SET next_attempt_at = now() + make_interval(secs => $2::double precision / 1000), tries = o.tries + 1
		WHERE o.id IN (
			SELECT id FROM ${schema}.outbox
			WHERE delivered_at IS NULL AND next_attempt_at <= now() AND ($3::bigint[] IS NULL OR id = ANY($3::bigint[]))
			ORDER BY id LIMIT $1
			FOR UPDATE SKIP LOCKED)
		RETURNING o.id, o.kind, o.payload, o.tries`,
		[limit, leaseMs, ids ?? null],
	);
	return rows
		.map((r) => ({ id: Number(r.id), kind: r.kind, payload: r.payload, tries: Number(r.tries) }))
		.sort((a, b) => a.id - b.id);
}

/** A leased outbox row, as the relays read it. */
export interface LeasedOutboxRow {
	id: number;
	kind: string;
	tries: number;
}

/**
 * Delivers leased `rows` of `<schema>.outbox` concurrently with `deliver`
 * (resolves only when the receiver acknowledged); a failed row is logged as
 * `<schema> outbox <id> (<kind>) not delivered (try <n>): <error>` and its
 * redelivery scheduled ({@link retryOutboxLater} after `backoffMs` · 2^(tries−1)).
 * Answers the acknowledged ids (for {@link markOutboxDelivered} or a
 * coalesced mark) and how many failed.
 */
export async function deliverRows<R extends LeasedOutboxRow>(
	db: Sequelize,
	schema: OutboxSchema,
	rows: R[],
	deliver: (row: R) => Promise<void>,
	opts: { backoffMs: number; logger: { warn(msg: string): void } },
): Promise<{ acked: number[]; failed: number }> {
	const acked: number[] = [];
	let failed = 0;
	await Promise.all(
		rows.map(async (row) => {
			try {
				await deliver(row);
				acked.push(row.id);
			} catch (err) {
				failed++;
				const msg = err instanceof Error ? err.message : String(err);
				opts.logger.warn(`${schema} outbox ${row.id} (${row.kind}) not delivered (try ${row.tries}): ${msg}`);
				await retryOutboxLater(db, schema, row, msg, opts.backoffMs);
			}
		}),
	);
	return { acked, failed };
}

/**
 * A migration of the owning service replacing, for each `[table, oldIndex]`,
 * the outbox's `(next_attempt_at, id) WHERE delivered_at IS NULL` index
 * `oldIndex` with `(id) WHERE delivered_at IS NULL` (named
 * `<table>_undelivered_id`). Every relay asks for the oldest due rows
 * (`WHERE delivered_at IS NULL AND next_attempt_at <= now() ORDER BY id
 * LIMIT n FOR UPDATE SKIP LOCKED`): over the old index PostgreSQL read and
 * sorted EVERY due row for each round, so draining a backlog was quadratic
 * (85,000 undelivered event rows: ~15–18 s of PostgreSQL CPU in 425 rounds);
 * the id-ordered index stops after `n` due rows, skipping the few in backoff or
 * leased (1.1–1.3 s for the same 85,000).
 */
export function undeliveredByIdMigration(name: string, tables: [OutboxTable, string][]): Migration {
	return {
		name,
		async up({ sequelize, transaction }) {
			for (const [t, oldIndex] of tables) {
				await sequelize.query(
					`CREATE INDEX IF NOT EXISTS ${t.table}_undelivered_id ON ${t.schema}.${t.table} (id) WHERE delivered_at IS NULL`,
					{ transaction },
				);
				await sequelize.query(`DROP INDEX IF EXISTS ${t.schema}.${oldIndex}`, { transaction });
			}
		},
	};
}

/** An outbox table: `<schema>.outbox` or `<schema>.event_outbox` (both have `created_at`, `delivered_at`). */
export interface OutboxTable {
	schema: string;
	table: "outbox" | "event_outbox";
}

/** The outbox tables of PostgreSQL schema `schema` that exist now (after its migrations). */
export async function outboxTablesOf(db: Sequelize, schema: string): Promise<OutboxTable[]> {
	const rows = await select<{ table_name: "outbox" | "event_outbox" }>(
		db,
		`SELECT table_name FROM information_schema.tables
		 WHERE table_schema = $1 AND table_name IN ('outbox', 'event_outbox') ORDER BY table_name`,
		[schema],
	);
	return rows.map((r) => ({ schema, table: r.table_name }));
}

/**
 * Lag of outbox `t` (metrics, issue 13): undelivered rows and the age in
 * seconds of the oldest of them (0 when none). One query over the partial
 * `delivered_at IS NULL` index.
 */
export async function outboxLag(
	db: Sequelize,
	t: OutboxTable,
): Promise<{ pending: number; oldestAgeSeconds: number }> {
	// names come from information_schema (outboxTablesOf), never from input
	const [row] = await select<{ pending: string | number; age: string | number | null }>(
		db,
		`SELECT count(*) AS pending, extract(epoch FROM now() - min(created_at)) AS age
		 FROM "${t.schema}"."${t.table}" WHERE delivered_at IS NULL`,
	);
	return { pending: Number(row?.pending ?? 0), oldestAgeSeconds: Math.max(0, Number(row?.age ?? 0)) };
}

/** Delivered rows taken per purge round (one statement). */
const PURGE_BATCH = 5_000;
/** Rounds per purge run at most (bounds one run's time; the next run goes on). */
const PURGE_MAX_ROUNDS = 200;

/**
 * `OUTBOX_RETENTION_HOURS` of `env`: how long a delivered outbox row is kept
 * (the trail ops read when a consumer says it missed something); default 168
 * (7 days); 0 keeps delivered rows for ever.
 * @throws Error when not a non-negative integer (the process refuses to start)
 */
export function outboxRetentionHours(env: NodeJS.ProcessEnv = process.env): number {
	return setting("OUTBOX_RETENTION_HOURS", env);
}

/**
 * Deletes the rows of outbox `t` delivered more than `retentionHours` ago
 * (undelivered rows are never touched, however old). Oldest first, in rounds
 * of {@link PURGE_BATCH} delivered rows walked by id (the primary key: no
 * index on `delivered_at` needed; undelivered rows are neither taken nor
 * locked, so a relay never finds one held by a purge): each round takes the
 * next delivered rows after the last round's, skipping rows another purge
 * holds (`FOR UPDATE SKIP LOCKED`, so several processes may purge at once),
 * and deletes those past retention; rows kept (delivered late) do not stop
 * the walk. The run ends at the first round reaching a row created after the
 * cut-off (no later row can be due: a row is delivered after it is created),
 * at the table's end, or after {@link PURGE_MAX_ROUNDS}. Answers the number
 * of rows deleted; `retentionHours` 0: nothing.
 */
export async function purgeDeliveredOutbox(
	db: Sequelize,
	t: OutboxTable,
	retentionHours: number,
	batch = PURGE_BATCH,
): Promise<number> {
	if (retentionHours <= 0) return 0;
	let deleted = 0;
	let after: number | null = null;
	for (let round = 0; round < PURGE_MAX_ROUNDS; round++) {
		// names come from information_schema (outboxTablesOf), never from input
		const rows: { deleted: string | number; last: string | null; more: boolean | null }[] = await select(
			db,
			`WITH head AS (
			   SELECT id, delivered_at, created_at FROM "${t.schema}"."${t.table}"
			   WHERE ($3::bigint IS NULL OR id > $3) AND delivered_at IS NOT NULL
			   ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED),
			 del AS (
			   DELETE FROM "${t.schema}"."${t.table}" o USING head
			   WHERE o.id = head.id AND head.delivered_at < now() - make_interval(hours => $1) RETURNING o.id)
			 SELECT (SELECT count(*) FROM del) AS deleted, (SELECT max(id) FROM head) AS last,
			   (SELECT max(created_at) < now() - make_interval(hours => $1) FROM head) AS more`,
			[retentionHours, batch, after],
		);
		const r = rows[0];
		deleted += Number(r.deleted);
		if (r.last === null || !r.more) break;
		after = Number(r.last);
	}
	return deleted;
}
