/**
 * SQL of handover manifests and the documents outbox (spec §3 manifest row,
 * §4.4, §7; tables in ./migrations.ts `0002_manifests`).
 *
 * - `documents.manifests`: one row per section of a manifest request (one
 *   courier, one pickup warehouse), numbered `MF-<yyyymmdd IST>-<seq>` (seq
 *   from the global sequence `documents.manifest_no_seq`, at least 6 digits, never
 *   reset: unique without a per-day counter row to lock; a rolled-back request
 *   leaves a gap). `warehouse` keeps the printed warehouse (name, address) and
 *   the totals are stored, so a manifest re-prints exactly as handed over.
 * - `documents.manifest_parcels`: one row per parcel with what was printed
 *   (order number, consignee, pincode, weight kg, COD paise). The partial
 *   unique index on `(logistic_id, awb_number) WHERE live` makes a parcel (an
 *   AWB is the courier's: unique per courier) appear on at most one live
 *   manifest: of two concurrent requests over the same AWB the second
 *   insert waits for the first to commit, then fails with a unique violation
 *   (no read-then-write decides it). `live` exists for a future void; nothing
 *   clears it today.
 * - `documents.outbox`: rows written in the same transaction as the manifest
 *   (kind `mark_manifested`: the params of `booking.markManifested`),
 *   delivered by ./manifest-relay.ts with acknowledged calls, retried with
 *   backoff until acknowledged.
 */

import type { Sequelize, Transaction } from "sequelize";
import { exec, select } from "../platform/db";
import { leaseOutboxRows, markOutboxDelivered } from "../platform/outbox";

/** One parcel as stored and printed (money in paise, weight in kg). */
export interface ManifestParcelRow {
	order_id: number;
	awb_number: string;
	/** the merchant's order reference (`customer_order_no`) */
	order_no: string;
	consignee_name: string;
	/** destination pincode */
	pincode: string;
	weight_kg: number;
	cod_paise: number;
}

/** The warehouse printed on a section (a snapshot taken when the manifest is made). */
export interface ManifestWarehouse {
	id: number | null;
	name: string;
	/** printable address lines (street, city/state, PIN) */
	lines: string[];
	phone: string | null;
}

/** A section to store: one courier, one pickup warehouse, its parcels in print order. */
export interface NewManifest {
	sender_id: number;
	logistic_id: number;
	courier_name: string;
	pickup_address_id: number | null;
	warehouse: ManifestWarehouse | null;
	parcels: ManifestParcelRow[];
}

/** A stored manifest (section) with its parcels. `created_at` ISO-8601 UTC. */
export interface StoredManifest extends NewManifest {
	id: number;
	manifest_no: string;
	created_at: string;
	parcel_count: number;
	cod_total_paise: number;
	/** the documents outbox row carrying `booking.markManifested` for it */
	outbox_id: number;
}

/** An AWB already on a live manifest. */
export interface ManifestedAwb {
	order_id: number;
	logistic_id: number;
	awb_number: string;
	manifest_no: string;
}

/** A parcel's identity: the courier and its AWB. */
export interface CourierAwb {
	logistic_id: number;
	awb_number: string;
}

/** Outbox row kinds of the documents service. */
export type DocumentsOutboxKind = "mark_manifested";

/** A leased outbox row. */
export interface DocumentsOutboxRow {
	id: number;
	kind: DocumentsOutboxKind;
	payload: Record<string, unknown>;
	tries: number;
}

/** PostgreSQL `unique_violation`. */
const UNIQUE_VIOLATION = "23505";

/** True when `err` is a unique violation of the live-AWB index (another manifest holds an AWB). */
export function isManifestConflict(err: unknown): boolean {
	const pg = (err as { parent?: { code?: string; constraint?: string } } | null)?.parent;
	return pg?.code === UNIQUE_VIOLATION && (!pg.constraint || pg.constraint === "manifest_parcels_live_awb");
}

/**
 * The parcels among `parcels` (courier, AWB) already on a live manifest of
 * `sender_id`, with the manifest holding each (another account's manifests
 * are never named: a (courier, AWB) belongs to one account).
 */
export async function manifestedAwbs(
	db: Sequelize,
	sender_id: number,
	parcels: CourierAwb[],
): Promise<ManifestedAwb[]> {
	if (!parcels.length) return [];
	const rows = await select<{
		order_id: string;
		logistic_id: number;
		awb_number: string;
		manifest_no: string;
	}>(
		db,
		`SELECT p.order_id, p.logistic_id, p.awb_number, m.manifest_no
		FROM documents.manifest_parcels p JOIN documents.manifests m ON m.id = p.manifest_id
		JOIN unnest($2::integer[], $3::text[]) AS q(logistic_id, awb_number)
			ON q.logistic_id = p.logistic_id AND q.awb_number = p.awb_number
		WHERE p.live AND p.sender_id = $1`,
		[sender_id, parcels.map((p) => p.logistic_id), parcels.map((p) => p.awb_number)],
	);
	return rows.map((r) => ({
		order_id: Number(r.order_id),
		logistic_id: Number(r.logistic_id),
		awb_number: r.awb_number,
		manifest_no: r.manifest_no,
	}));
}

/**
 * Inserts one section in transaction `t` with ONE statement: the manifest
 * (numbered from the sequence, IST date of the transaction's `now()`), its
 * parcel rows and the outbox row `mark_manifested` `{sender_id, manifest_no,
 * at, awb_numbers}` (`at` the manifest's creation time, ISO-8601 UTC).
 * Throws the database's unique violation when an AWB is already on a live
 * manifest ({@link isManifestConflict}).
 */
async function insertManifest(db: Sequelize, t: Transaction, m: NewManifest): Promise<StoredManifest> {
	const p = m.parcels;
	const cod_total = p.reduce((a, r) => a + r.cod_paise, 0);
	const { rows } = await exec<{ id: string; manifest_no: string; created_at: Date; outbox_id: string }>(
		db,
		`WITH m AS (
			INSERT INTO documents.manifests
				(manifest_no, sender_id, logistic_id, courier_name, pickup_address_id, warehouse, parcel_count, cod_total_paise)
			VALUES (
				'MF-' || to_char(now() AT TIME ZONE 'Asia/Kolkata', 'YYYYMMDD') || '-' || lpad(nextval('documents.manifest_no_seq')::text, 6, '0'),
				$1, $2, $3, $4, $5::jsonb, $6, $7)
			RETURNING id, manifest_no, created_at
		), p AS (
			INSERT INTO documents.manifest_parcels
				(manifest_id, position, sender_id, order_id, logistic_id, awb_number, order_no, consignee_name, pincode, weight_kg, cod_paise)
			SELECT m.id, u.ord, $1, u.order_id, $2, u.awb_number, u.order_no, u.consignee_name, u.pincode, u.weight_kg, u.cod_paise
			FROM m, unnest($8::bigint[], $9::text[], $10::text[], $11::text[], $12::text[], $13::numeric[], $14::bigint[])
				WITH ORDINALITY AS u(order_id, awb_number, order_no, consignee_name, pincode, weight_kg, cod_paise, ord)
			RETURNING 1
		), o AS (
			INSERT INTO documents.outbox (kind, payload)
			SELECT 'mark_manifested', jsonb_build_object(
				'sender_id', $1::bigint,
				'manifest_no', m.manifest_no,
				'at', to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
				'awb_numbers', to_jsonb($9::text[]))
			FROM m
			RETURNING id
		)
		SELECT m.id, m.manifest_no, m.created_at, (SELECT id FROM o) AS outbox_id, (SELECT count(*) FROM p) AS parcels
		FROM m`,
		[
			m.sender_id,
			m.logistic_id,
			m.courier_name,
			m.pickup_address_id,
			m.warehouse ? JSON.stringify(m.warehouse) : null,
			p.length,
			cod_total,
			p.map((r) => r.order_id),
			p.map((r) => r.awb_number),
			p.map((r) => r.order_no),
			p.map((r) => r.consignee_name),
			p.map((r) => r.pincode),
			p.map((r) => r.weight_kg),
			p.map((r) => r.cod_paise),
		],
		t,
	);
	const r = rows[0];
	return {
		...m,
		id: Number(r.id),
		manifest_no: r.manifest_no,
		created_at: new Date(r.created_at).toISOString(),
		parcel_count: p.length,
		cod_total_paise: cod_total,
		outbox_id: Number(r.outbox_id),
	};
}

/**
 * Stores every section of a manifest request in ONE transaction (manifests,
 * parcels, outbox rows), in the given order; resolves after the commit.
 * Throws the unique violation ({@link isManifestConflict}) when any AWB is
 * already on a live manifest: then nothing is stored.
 */
export async function createManifests(db: Sequelize, sections: NewManifest[]): Promise<StoredManifest[]> {
	return db.transaction(async (t) => {
		const out: StoredManifest[] = [];
		for (const s of sections) out.push(await insertManifest(db, t, s));
		return out;
	});
}

interface ManifestRowDb {
	id: string;
	manifest_no: string;
	sender_id: string;
	logistic_id: number;
	courier_name: string;
	pickup_address_id: string | null;
	warehouse: ManifestWarehouse | null;
	parcel_count: number;
	cod_total_paise: string;
	created_at: Date;
}

interface ParcelRowDb {
	manifest_id: string;
	order_id: string;
	awb_number: string;
	order_no: string;
	consignee_name: string;
	pincode: string;
	weight_kg: string;
	cod_paise: string;
}

/**
 * The caller's live manifest `manifest_no` with its parcels in print order,
 * or null when there is none on the account (another account's number
 * answers null too). `outbox_id` is 0 (not looked up).
 */
export async function manifestByNo(
	db: Sequelize,
	sender_id: number,
	manifest_no: string,
): Promise<StoredManifest | null> {
	const [m] = await select<ManifestRowDb>(
		db,
		`SELECT id, manifest_no, sender_id, logistic_id, courier_name, pickup_address_id, warehouse, parcel_count,
			cod_total_paise, created_at
		FROM documents.manifests WHERE manifest_no = $1 AND sender_id = $2 AND live`,
		[manifest_no, sender_id],
	);
	if (!m) return null;
	const parcels = await select<ParcelRowDb>(
		db,
		`SELECT manifest_id, order_id, awb_number, order_no, consignee_name, pincode, weight_kg, cod_paise
		FROM documents.manifest_parcels WHERE manifest_id = $1 ORDER BY position`,
		[m.id],
	);
	return {
		id: Number(m.id),
		manifest_no: m.manifest_no,
		sender_id: Number(m.sender_id),
		logistic_id: Number(m.logistic_id),
		courier_name: m.courier_name,
		pickup_address_id: m.pickup_address_id === null ? null : Number(m.pickup_address_id),
		warehouse: m.warehouse,
		parcel_count: Number(m.parcel_count),
		cod_total_paise: Number(m.cod_total_paise),
		created_at: new Date(m.created_at).toISOString(),
		outbox_id: 0,
		parcels: parcels.map((r) => ({
			order_id: Number(r.order_id),
			awb_number: r.awb_number,
			order_no: r.order_no,
			consignee_name: r.consignee_name,
			pincode: r.pincode,
			weight_kg: Number(r.weight_kg),
			cod_paise: Number(r.cod_paise),
		})),
	};
}

/**
 * Leases up to `limit` due undelivered outbox rows (all, or only `ids`) with
 * `FOR UPDATE SKIP LOCKED`: each becomes invisible to other relays for
 * `leaseMs` and its `tries` grows by one.
 */
export function leaseDocumentsOutbox(
	db: Sequelize,
	limit: number,
	leaseMs: number,
	ids?: number[],
): Promise<DocumentsOutboxRow[]> {
	return leaseOutboxRows<DocumentsOutboxKind, Record<string, unknown>>(db, "documents", limit, leaseMs, ids);
}

/** Marks acknowledged outbox rows delivered (one UPDATE; lib/platform/outbox.ts). */
export async function documentsOutboxDelivered(db: Sequelize, ids: number[]): Promise<void> {
	await markOutboxDelivered(db, "documents", ids);
}
