/**
 * SQL over schema `warehouses` (see ./migrations.ts): the warehouses of each
 * account and their courier registrations. Every statement binds its values
 * ($1, $2, …); the only SQL built from strings are the constant column lists.
 * Functions taking a `t` run inside that transaction (the caller's account
 * lock, see {@link lockAccount}).
 */
import type { Sequelize, Transaction } from "sequelize";
import { WAREHOUSE_COLUMNS, type WarehouseFields } from "../contracts";
import { exec, select } from "../platform/db";
import { NAME_UNIQUE_INDEX } from "./migrations";
import type { StoredRegistration, StoredWarehouse } from "./rows";

/** Placeholder courier id of a registration row written while the courier list was unavailable. */
export const PLACEHOLDER_LOGISTIC_ID = 0;

/** Columns every warehouse read selects (table alias `w`). */
const COLUMNS = `w.id, w.sender_id, w.warehouse_name, w.contact_person_name, w.contact_no, w.contact_email,
	w.address_line_1, w.address_line_2, w.city, w.state, w.pincode, w.gstin, w.warehouse_type, w.is_return_same,
	w.return_warehouse_name, w.return_contact_person_name, w.return_contact_no, w.return_contact_email,
	w.return_address_line_1, w.return_address_line_2, w.return_city, w.return_state, w.return_pincode,
	w.active, w.retired, w.retired_at, w.is_default, w.warehouse_code, w.version, w.created_at, w.updated_at`;

/**
 * The warehouse that inherits the default: the account's (`$1`) oldest active
 * warehouse other than `$2`.
 */
const SUCCESSOR_SQL = `SELECT id FROM warehouses.warehouses
	WHERE sender_id = $1 AND id <> $2 AND active AND NOT retired
	ORDER BY created_at, id LIMIT 1`;

/** A warehouse id and its current version (what a registration job names). */
export interface WarehouseVersion {
	id: number;
	version: number;
}

const versionOf = (r: { id: string; version: number }): WarehouseVersion => ({
	id: Number(r.id),
	version: r.version,
});

/** Serializes the writes of one account (default and name invariants) until `t` ends. */
export async function lockAccount(db: Sequelize, sender: number, t: Transaction): Promise<void> {
	await select(
		db,
		"SELECT pg_advisory_xact_lock(hashtextextended('warehouses:' || $1::text, 0))",
		[sender],
		t,
	);
}

/**
 * Runs `work` in one transaction that first takes the account lock of
 * `sender` ({@link lockAccount}): committed when `work` resolves, rolled back
 * when it throws (its error is rethrown as it came).
 */
export function withAccountLock<T>(
	db: Sequelize,
	sender: number,
	work: (t: Transaction) => Promise<T>,
): Promise<T> {
	return db.transaction(async (t) => {
		await lockAccount(db, sender, t);
		return work(t);
	});
}

/**
 * True when `err` is the unique violation of one non-retired name per account
 * (case-insensitive), which the service answers as `warehouse_name: already exists`.
 */
export function isNameConflict(err: unknown): boolean {
	const e = err as {
		name?: string;
		parent?: { constraint?: string };
		original?: { constraint?: string };
	};
	return (
		e?.name === "SequelizeUniqueConstraintError" &&
		(e.parent?.constraint === NAME_UNIQUE_INDEX || e.original?.constraint === NAME_UNIQUE_INDEX)
	);
}

/**
 * The account's warehouses for `GET /v1/warehouses`: non-retired ones (all
 * with `includeRetired`), the live default first, then the newest first.
 */
export async function listWarehouses(
	db: Sequelize,
	sender: number,
	includeRetired: boolean,
): Promise<StoredWarehouse[]> {
	return select<StoredWarehouse>(
		db,
		`SELECT ${COLUMNS} FROM warehouses.warehouses w
		 WHERE w.sender_id = $1 ${includeRetired ? "" : "AND NOT w.retired"}
		 ORDER BY (w.is_default AND NOT w.retired) DESC, w.created_at DESC, w.id DESC`,
		[sender],
	);
}

/** Options of {@link readWarehouse}. */
export interface ReadOptions {
	/** Also find a retired warehouse (default: active, non-retired only). */
	includeRetired?: boolean;
	/** Read inside this transaction, locking the row (`FOR UPDATE`). */
	t?: Transaction;
}

/**
 * Warehouse `id` of account `sender` (one primary-key query), or null: active
 * and non-retired unless `includeRetired`; with `t`, read in that transaction
 * and locked until it ends.
 */
export async function readWarehouse(
	db: Sequelize,
	sender: number,
	id: number,
	{ includeRetired = false, t }: ReadOptions = {},
): Promise<StoredWarehouse | null> {
	const [row] = await select<StoredWarehouse>(
		db,
		`SELECT ${COLUMNS} FROM warehouses.warehouses w
		 WHERE w.id = $1 AND w.sender_id = $2 ${includeRetired ? "" : "AND w.active AND NOT w.retired"}
		 ${t ? "FOR UPDATE" : ""}`,
		[id, sender],
		t,
	);
	return row ?? null;
}

/** Warehouse `id` whoever owns it, retired too (the registration worker), or null. */
export async function warehouseById(db: Sequelize, id: number): Promise<StoredWarehouse | null> {
	const [row] = await select<StoredWarehouse>(
		db,
		`SELECT ${COLUMNS} FROM warehouses.warehouses w WHERE w.id = $1`,
		[id],
	);
	return row ?? null;
}

/** How many non-retired warehouses account `sender` has. */
export async function countLive(db: Sequelize, sender: number, t: Transaction): Promise<number> {
	const [{ n }] = await select<{ n: number }>(
		db,
		"SELECT count(*)::int AS n FROM warehouses.warehouses WHERE sender_id = $1 AND NOT retired",
		[sender],
		t,
	);
	return n;
}

/** Clears the account's current default (before another warehouse becomes it: one default is a unique index). */
export async function clearDefault(db: Sequelize, sender: number, t: Transaction): Promise<void> {
	await exec(
		db,
		`UPDATE warehouses.warehouses SET is_default = false, updated_at = now()
		 WHERE sender_id = $1 AND is_default AND NOT retired`,
		[sender],
		t,
	);
}

/**
 * Inserts a warehouse of `sender` (version 1, active). Throws Sequelize's
 * unique violation on a taken name ({@link isNameConflict}).
 */
export async function insertWarehouse(
	db: Sequelize,
	sender: number,
	fields: WarehouseFields,
	isDefault: boolean,
	t: Transaction,
): Promise<WarehouseVersion> {
	const cols = ["sender_id", ...WAREHOUSE_COLUMNS, "is_default"];
	const bind = [sender, ...WAREHOUSE_COLUMNS.map((c) => fields[c] ?? null), isDefault];
	const { rows } = await exec<{ id: string; version: number }>(
		db,
		`INSERT INTO warehouses.warehouses (${cols.join(", ")})
		 VALUES (${cols.map((_, i) => `$${i + 1}`).join(", ")})
		 RETURNING id, version`,
		bind,
		t,
	);
	return versionOf(rows[0]);
}

/**
 * Writes every field of warehouse `id` of `sender`, its default flag and
 * `version`; answers the row as updated. Throws Sequelize's unique violation
 * on a taken name ({@link isNameConflict}).
 */
export async function updateWarehouse(
	db: Sequelize,
	sender: number,
	id: number,
	change: { fields: WarehouseFields; isDefault: boolean; version: number },
	t: Transaction,
): Promise<StoredWarehouse> {
	const n = WAREHOUSE_COLUMNS.length;
	const sets = WAREHOUSE_COLUMNS.map((c, i) => `${c} = $${i + 3}`);
	const { rows } = await exec<StoredWarehouse>(
		db,
		`UPDATE warehouses.warehouses w SET ${sets.join(", ")},
		   is_default = $${n + 3}, version = $${n + 4}, updated_at = now()
		 WHERE w.id = $1 AND w.sender_id = $2
		 RETURNING ${COLUMNS}`,
		[id, sender, ...WAREHOUSE_COLUMNS.map((c) => change.fields[c] ?? null), change.isDefault, change.version],
		t,
	);
	return rows[0];
}

/** The warehouse that would inherit the default from `id`: the account's oldest other active one, or null. */
export async function successorOf(
	db: Sequelize,
	sender: number,
	id: number,
	t: Transaction,
): Promise<number | null> {
	const [next] = await select<{ id: string }>(db, SUCCESSOR_SQL, [sender, id], t);
	return next ? Number(next.id) : null;
}

/** Makes warehouse `id` the default (after the old default was cleared: one per account is a unique index). */
export async function makeDefault(db: Sequelize, id: number, t: Transaction): Promise<void> {
	await exec(
		db,
		"UPDATE warehouses.warehouses SET is_default = true, updated_at = now() WHERE id = $1",
		[id],
		t,
	);
}

/**
 * Soft-deletes warehouse `id` (`active=false, retired=true, retired_at=now()`,
 * no longer default); with `promote`, the account's oldest other active
 * warehouse becomes the default in the same transaction.
 */
export async function retireWarehouse(
	db: Sequelize,
	sender: number,
	id: number,
	promote: boolean,
	t: Transaction,
): Promise<void> {
	await exec(
		db,
		`UPDATE warehouses.warehouses
		 SET active = false, retired = true, retired_at = now(), is_default = false, updated_at = now()
		 WHERE id = $1`,
		[id],
		t,
	);
	if (!promote) return;
	await exec(
		db,
		`UPDATE warehouses.warehouses SET is_default = true, updated_at = now()
		 WHERE id = (${SUCCESSOR_SQL})`,
		[sender, id],
		t,
	);
}

/**
 * Marks warehouse `id` pending registration of `version` with couriers
 * `logisticIds`; rows of an older version are reset to pending, rows already
 * at this version are left as they are.
 */
export async function markPending(
	db: Sequelize,
	id: number,
	logisticIds: number[],
	version: number,
	t?: Transaction,
): Promise<void> {
	await exec(
		db,
		`INSERT INTO warehouses.courier_registrations (warehouse_id, logistic_id, version, status)
		 SELECT $1, l, $3, 'pending' FROM unnest($2::int[]) AS l
		 ON CONFLICT (warehouse_id, logistic_id) DO UPDATE
		   SET version = EXCLUDED.version, status = 'pending', reason = NULL, updated_at = now()
		   WHERE courier_registrations.version < EXCLUDED.version`,
		[id, logisticIds, version],
		t,
	);
}

/** Deletes the registration rows of warehouse `id` for couriers other than `logisticIds` (no longer active). */
export async function dropOtherCouriers(db: Sequelize, id: number, logisticIds: number[]): Promise<void> {
	await exec(
		db,
		"DELETE FROM warehouses.courier_registrations WHERE warehouse_id = $1 AND NOT (logistic_id = ANY($2::int[]))",
		[id, logisticIds],
	);
}

/** The registration rows of warehouse `id` at `version`. */
export async function registrationsAt(
	db: Sequelize,
	id: number,
	version: number,
): Promise<StoredRegistration[]> {
	return select<StoredRegistration>(
		db,
		"SELECT * FROM warehouses.courier_registrations WHERE warehouse_id = $1 AND version = $2",
		[id, version],
	);
}

/** The registration rows of warehouses `ids`, without placeholders ({@link PLACEHOLDER_LOGISTIC_ID}). */
export async function registrationsOf(db: Sequelize, ids: number[]): Promise<StoredRegistration[]> {
	return select<StoredRegistration>(
		db,
		`SELECT * FROM warehouses.courier_registrations
		 WHERE warehouse_id = ANY($1::bigint[]) AND logistic_id <> $2`,
		[ids.map(String), PLACEHOLDER_LOGISTIC_ID],
	);
}

/** A courier's answer for one version of a warehouse ({@link recordRegistration}). */
export interface RegistrationOutcome {
	status: StoredRegistration["status"];
	/** the courier's words (refused) or the transient error (pending); null when registered */
	reason: string | null;
	/** the courier's id of the pickup location; null keeps the stored one */
	courier_location_id: string | null;
}

/** Records a courier's answer for `version` of warehouse `id` (no-op once a newer version was queued). */
export async function recordRegistration(
	db: Sequelize,
	id: number,
	logistic_id: number,
	version: number,
	outcome: RegistrationOutcome,
): Promise<void> {
	await exec(
		db,
		`UPDATE warehouses.courier_registrations
		 SET status = $4, reason = $5, courier_location_id = COALESCE($6, courier_location_id), updated_at = now()
		 WHERE warehouse_id = $1 AND logistic_id = $2 AND version = $3`,
		[id, logistic_id, version, outcome.status, outcome.reason, outcome.courier_location_id],
	);
}

/**
 * Non-retired warehouses with a pending registration row last touched more
 * than `staleMs` ms ago (its job was lost or ran out of retries); at most 500.
 */
export async function staleRegistrations(db: Sequelize, staleMs: number): Promise<WarehouseVersion[]> {
	const rows = await select<{ id: string; version: number }>(
		db,
		`SELECT DISTINCT w.id, w.version
		 FROM warehouses.courier_registrations r
		 JOIN warehouses.warehouses w ON w.id = r.warehouse_id
		 WHERE r.status = 'pending' AND r.updated_at < now() - ($1::int * interval '1 millisecond')
		   AND NOT w.retired
		 LIMIT 500`,
		[staleMs],
	);
	return rows.map(versionOf);
}

/**
 * Non-retired warehouses unchanged for `staleMs` ms that lack a current-version
 * row for one of the couriers `logisticIds` (a courier that became active); at most 500.
 */
export async function missingRegistrations(
	db: Sequelize,
	logisticIds: number[],
	staleMs: number,
): Promise<WarehouseVersion[]> {
	const rows = await select<{ id: string; version: number }>(
		db,
		`SELECT w.id, w.version FROM warehouses.warehouses w
		 WHERE NOT w.retired AND w.updated_at < now() - ($2::int * interval '1 millisecond')
		   AND EXISTS (SELECT 1 FROM unnest($1::int[]) AS l(id) WHERE NOT EXISTS (
		     SELECT 1 FROM warehouses.courier_registrations r
		     WHERE r.warehouse_id = w.id AND r.logistic_id = l.id AND r.version = w.version))
		 LIMIT 500`,
		[logisticIds, staleMs],
	);
	return rows.map(versionOf);
}
