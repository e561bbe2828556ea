/**
 * SQL of pickup requests (issue 28; docs/decisions/0107-pickup-requests.md): table
 * `warehouses.pickups` and the `pickup.missed` rows of `warehouses.event_outbox`
 * (./migrations.ts 0003). The rules are in ./pickups.ts and ./pickup-rules.ts.
 */
import type { Sequelize, Transaction } from "sequelize";
import type { MerchantEvent, PickupSlot, PickupStatus, PickupView } from "../contracts";
import { exec, select } from "../platform/db";

/**
 * A `warehouses.pickups` row as read: the view's fields, with the bigint ids as pg answers them
 * (text), the account, and the times as Dates.
 */
export interface StoredPickup
	extends Omit<
		PickupView,
		"id" | "warehouse_id" | "picked_up_at" | "missed_at" | "cancelled_at" | "created_at" | "updated_at"
	> {
	id: string;
	sender_id: string;
	warehouse_id: string;
	picked_up_at: Date | null;
	missed_at: Date | null;
	cancelled_at: Date | null;
	created_at: Date;
	updated_at: Date;
}

const COLUMNS = `id, sender_id, warehouse_id, logistic_id, courier_name, to_char(pickup_date, 'YYYY-MM-DD') AS pickup_date,
	slot, expected_package_count, status, courier_pickup_id, courier_note, source, shipments_picked_up,
	picked_up_at, missed_at, cancelled_at, created_at, updated_at`;

/** Statuses that hold the day (one per warehouse, courier and day; index `pickups_one_live_per_day`). */
const LIVE = `('requested', 'scheduled', 'picked_up')`;

/** ISO-8601 UTC of a timestamp column, or null. */
const iso = (d: Date | null): string | null => (d ? new Date(d).toISOString() : null);

/** The API view of a row. */
export function pickupView(r: StoredPickup): PickupView {
	return {
		id: Number(r.id),
		warehouse_id: Number(r.warehouse_id),
		logistic_id: r.logistic_id,
		courier_name: r.courier_name,
		pickup_date: r.pickup_date,
		slot: r.slot,
		expected_package_count: r.expected_package_count,
		status: r.status,
		courier_pickup_id: r.courier_pickup_id,
		courier_note: r.courier_note,
		source: r.source,
		shipments_picked_up: r.shipments_picked_up,
		picked_up_at: iso(r.picked_up_at),
		missed_at: iso(r.missed_at),
		cancelled_at: iso(r.cancelled_at),
		created_at: new Date(r.created_at).toISOString(),
		updated_at: new Date(r.updated_at).toISOString(),
	};
}

/** What a new request stores. */
export interface NewPickup {
	sender_id: number;
	warehouse_id: number;
	logistic_id: number;
	courier_name: string;
	pickup_date: string;
	slot: PickupSlot;
	expected_package_count: number;
	source: "api" | "manifest";
}

/**
 * Stores a `requested` pickup (committed on return), or answers the live one already holding
 * that warehouse, courier and day (`{existing}`; nothing stored).
 */
export async function insertPickup(
	db: Sequelize,
	p: NewPickup,
): Promise<{ created: StoredPickup } | { existing: StoredPickup }> {
	const [row] = await select<StoredPickup>(
		db,
		`INSERT INTO warehouses.pickups (sender_id, warehouse_id, logistic_id, courier_name, pickup_date, slot,
		   expected_package_count, source)
		 VALUES ($1, $2, $3, $4, $5::date, $6, $7, $8)
		 ON CONFLICT (sender_id, warehouse_id, logistic_id, pickup_date) WHERE status IN ${LIVE} DO NOTHING
		 RETURNING ${COLUMNS}`,
		[
			p.sender_id,
			p.warehouse_id,
			p.logistic_id,
			p.courier_name,
			p.pickup_date,
			p.slot,
			p.expected_package_count,
			p.source,
		],
	);
	if (row) return { created: row };
	const existing = await livePickupOn(db, p.sender_id, p.warehouse_id, p.logistic_id, p.pickup_date);
	// the live row was cancelled between the insert and this read: a rare race, answer as a conflict anyway
	if (!existing) return insertPickup(db, p);
	return { existing };
}

/** The live pickup (requested, scheduled or picked up) of a warehouse, courier and day, if any. */
export async function livePickupOn(
	db: Sequelize,
	sender: number,
	warehouse: number,
	logistic: number,
	day: string,
	t?: Transaction,
): Promise<StoredPickup | undefined> {
	const [row] = await select<StoredPickup>(
		db,
		`SELECT ${COLUMNS} FROM warehouses.pickups
		  WHERE sender_id = $1 AND warehouse_id = $2 AND logistic_id = $3 AND pickup_date = $4::date AND status IN ${LIVE}`,
		[sender, warehouse, logistic, day],
		t,
	);
	return row;
}

/** One of the account's pickups by id (`FOR UPDATE` inside `t` when given), or undefined. */
export async function pickupById(
	db: Sequelize,
	sender: number | null,
	id: number,
	t?: Transaction,
): Promise<StoredPickup | undefined> {
	const [row] = await select<StoredPickup>(
		db,
		`SELECT ${COLUMNS} FROM warehouses.pickups WHERE id = $1 AND ($2::bigint IS NULL OR sender_id = $2)${t ? " FOR UPDATE" : ""}`,
		[id, sender],
		t,
	);
	return row;
}

/** Fields a change sets (absent: kept). */
export interface PickupChange {
	status?: PickupStatus;
	pickup_date?: string;
	slot?: PickupSlot;
	expected_package_count?: number;
	courier_pickup_id?: string | null;
	courier_note?: string | null;
}

/** Applies `c` to pickup `id` (its `cancelled_at` set when it becomes cancelled); the row after. */
export async function updatePickup(
	db: Sequelize,
	id: number,
	c: PickupChange,
	t?: Transaction,
): Promise<StoredPickup> {
	const [row] = await select<StoredPickup>(
		db,
		`UPDATE warehouses.pickups SET
		   status = COALESCE($2, status),
		   pickup_date = COALESCE($3::date, pickup_date),
		   slot = COALESCE($4, slot),
		   expected_package_count = COALESCE($5, expected_package_count),
		   courier_pickup_id = CASE WHEN $6 THEN $7 ELSE courier_pickup_id END,
		   courier_note = CASE WHEN $8 THEN $9 ELSE courier_note END,
		   cancelled_at = CASE WHEN $2 = 'cancelled' THEN COALESCE(cancelled_at, now()) ELSE cancelled_at END,
		   updated_at = now()
		 WHERE id = $1 RETURNING ${COLUMNS}`,
		[
			id,
			c.status ?? null,
			c.pickup_date ?? null,
			c.slot ?? null,
			c.expected_package_count ?? null,
			c.courier_pickup_id !== undefined,
			c.courier_pickup_id ?? null,
			c.courier_note !== undefined,
			c.courier_note ?? null,
		],
		t,
	);
	return row;
}

/** Deletes a `requested` row the courier refused at once (the request was never accepted). */
export async function deleteRequested(db: Sequelize, id: number): Promise<void> {
	await exec(db, `DELETE FROM warehouses.pickups WHERE id = $1 AND status = 'requested'`, [id]);
}

/** The filters of `GET /v1/pickups` (validated). */
export interface PickupFilters {
	from?: string;
	to?: string;
	warehouse_id?: number;
	logistic_id?: number;
	status?: PickupStatus;
}

/** A page of the account's pickups, newest request first, after id `before` (exclusive). */
export async function listPickups(
	db: Sequelize,
	sender: number,
	f: PickupFilters,
	before: number | null,
	limit: number,
): Promise<StoredPickup[]> {
	return select<StoredPickup>(
		db,
		`SELECT ${COLUMNS} FROM warehouses.pickups
		  WHERE sender_id = $1
		    AND ($2::date IS NULL OR pickup_date >= $2::date) AND ($3::date IS NULL OR pickup_date <= $3::date)
		    AND ($4::bigint IS NULL OR warehouse_id = $4) AND ($5::int IS NULL OR logistic_id = $5)
		    AND ($6::text IS NULL OR status = $6) AND ($7::bigint IS NULL OR id < $7)
		  ORDER BY id DESC LIMIT $8`,
		[
			sender,
			f.from ?? null,
			f.to ?? null,
			f.warehouse_id ?? null,
			f.logistic_id ?? null,
			f.status ?? null,
			before,
			limit,
		],
	);
}

/**
 * Pickups the sweep looks at (≤ `limit`, oldest day first): open ones (requested or scheduled)
 * whose day is `today` or earlier, and ones picked up since `since` (their count may grow).
 */
export async function pickupsDue(
	db: Sequelize,
	today: string,
	since: string,
	limit: number,
): Promise<StoredPickup[]> {
	return select<StoredPickup>(
		db,
		`SELECT ${COLUMNS} FROM warehouses.pickups
		  WHERE (status IN ('requested', 'scheduled') AND pickup_date <= $1::date)
		     OR (status = 'picked_up' AND pickup_date >= $2::date)
		  ORDER BY pickup_date, id LIMIT $3`,
		[today, since, limit],
	);
}

/**
 * Claims `requested` pickups the courier has not confirmed, untouched for `staleMs`, to ask
 * again (≤ `limit`): their `updated_at` is set to now in the same statement (rows another pod
 * holds are skipped), so each is sent by one sweep at a time.
 */
export async function claimStaleRequested(
	db: Sequelize,
	staleMs: number,
	limit: number,
): Promise<StoredPickup[]> {
	return select<StoredPickup>(
		db,
		`UPDATE warehouses.pickups SET updated_at = now()
		  WHERE id IN (SELECT id FROM warehouses.pickups
		                WHERE status = 'requested' AND updated_at < now() - make_interval(secs => $1 / 1000.0)
		                ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
		  RETURNING ${COLUMNS}`,
		[staleMs, limit],
	);
}

/** Marks an open pickup collected (`shipments` of its shipments scanned, the first at `at`); false when no longer open. */
export async function markPickedUp(
	db: Sequelize,
	id: number,
	at: string,
	shipments: number,
): Promise<boolean> {
	const { count } = await exec(
		db,
		`UPDATE warehouses.pickups SET status = 'picked_up', picked_up_at = $2::timestamptz,
		   shipments_picked_up = $3, updated_at = now()
		 WHERE id = $1 AND status IN ('requested', 'scheduled')`,
		[id, at, shipments],
	);
	return count > 0;
}

/** Counts more shipments collected for a picked-up pickup (later scans that day). */
export async function recountPickedUp(db: Sequelize, id: number, shipments: number): Promise<void> {
	await exec(
		db,
		`UPDATE warehouses.pickups SET shipments_picked_up = $2, updated_at = now()
		 WHERE id = $1 AND status = 'picked_up' AND shipments_picked_up < $2`,
		[id, shipments],
	);
}

/**
 * Marks an open pickup `missed` and writes its `pickup.missed` event to the outbox, in one
 * transaction; false (nothing written) when it is no longer open.
 */
export async function markMissed(
	db: Sequelize,
	id: number,
	event: (row: StoredPickup) => MerchantEvent,
): Promise<boolean> {
	return db.transaction(async (t) => {
		const [row] = await select<StoredPickup>(
			db,
			`UPDATE warehouses.pickups SET status = 'missed', missed_at = now(), updated_at = now()
			 WHERE id = $1 AND status IN ('requested', 'scheduled') RETURNING ${COLUMNS}`,
			[id],
			t,
		);
		if (!row) return false;
		await exec(
			db,
			`INSERT INTO warehouses.event_outbox (event) VALUES ($1::jsonb)`,
			[JSON.stringify(event(row))],
			t,
		);
		return true;
	});
}
