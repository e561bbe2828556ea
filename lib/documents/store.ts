/**
 * SQL over the `documents` schema (tables in ./migrations.ts; ARCHITECTURE §1:
 * documents owns labels; manifests come with a later issue).
 *
 * `documents.labels`: one row per (order, AWB). `source` is `generated` for a
 * label we draw, `courier` when the courier issues its own label; then
 * `courier_file` holds the captured bytes, or is null when it was not captured
 * (the download answers 409 `carrier_label_missing`). Every successful
 * download stamps `label_downloaded_at` (spec §4.4) with one
 * `INSERT … ON CONFLICT DO UPDATE` (no read-then-write).
 */
import type { Sequelize } from "sequelize";
import type { LabelInfo, LabelSourceKind } from "../contracts";
import { exec, select } from "../db";

interface LabelRowDb {
	order_id: string | number;
	sender_id: string | number;
	awb_number: string;
	logistic_id: number;
	source: LabelSourceKind;
	has_courier_file: boolean;
	label_downloaded_at: Date | string | null;
	first_downloaded_at: Date | string | null;
	download_count: number;
	created_at: Date | string;
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

function toInfo(r: LabelRowDb): LabelInfo {
	return {
		order_id: Number(r.order_id),
		sender_id: Number(r.sender_id),
		awb_number: r.awb_number,
		logistic_id: Number(r.logistic_id),
		source: r.source,
		has_courier_file: Boolean(r.has_courier_file),
		label_downloaded_at: iso(r.label_downloaded_at),
		first_downloaded_at: iso(r.first_downloaded_at),
		download_count: Number(r.download_count),
		created_at: iso(r.created_at)!,
	};
}

const INFO_COLUMNS = `order_id, sender_id, awb_number, logistic_id, source, (courier_file IS NOT NULL) AS has_courier_file,
	label_downloaded_at, first_downloaded_at, download_count, created_at`;

/**
 * The label row of the caller's order for its current AWB (`awb_number`
 * given) or, without it, the most recently created one; null when none.
 */
export async function labelInfo(
	db: Sequelize,
	sender_id: number,
	order_id: number,
	awb_number?: string,
): Promise<LabelInfo | null> {
	const rows = awb_number
		? await select<LabelRowDb>(
				db,
				`SELECT ${INFO_COLUMNS} FROM documents.labels WHERE sender_id = $1 AND order_id = $2 AND awb_number = $3`,
				[sender_id, order_id, awb_number],
			)
		: await select<LabelRowDb>(
				db,
				`SELECT ${INFO_COLUMNS} FROM documents.labels WHERE sender_id = $1 AND order_id = $2
				ORDER BY created_at DESC, label_downloaded_at DESC NULLS LAST LIMIT 1`,
				[sender_id, order_id],
			);
	return rows[0] ? toInfo(rows[0]) : null;
}

/** The stored label of (order, AWB) with the courier's bytes, for serving a courier-issued label. */
export async function storedLabel(
	db: Sequelize,
	sender_id: number,
	order_id: number,
	awb_number: string,
): Promise<{ source: LabelSourceKind; courier_file: Buffer | null } | null> {
	const rows = await select<{ source: LabelSourceKind; courier_file: Buffer | null }>(
		db,
		"SELECT source, courier_file FROM documents.labels WHERE sender_id = $1 AND order_id = $2 AND awb_number = $3",
		[sender_id, order_id, awb_number],
	);
	return rows[0] ?? null;
}

/**
 * Records a successful download: inserts the row (source `generated`) or
 * updates it, stamping `label_downloaded_at = now()`, keeping the first
 * download time and counting downloads. A stored `courier` row keeps its
 * source and file. Returns the row after the stamp.
 */
export async function stampDownload(
	db: Sequelize,
	row: { order_id: number; sender_id: number; awb_number: string; logistic_id: number },
): Promise<LabelInfo> {
	const { rows } = await exec<LabelRowDb>(
		db,
		`INSERT INTO documents.labels AS l
			(order_id, sender_id, awb_number, logistic_id, source, label_downloaded_at, first_downloaded_at, download_count)
		VALUES ($1, $2, $3, $4, 'generated', now(), now(), 1)
		ON CONFLICT (order_id, awb_number) DO UPDATE SET
			label_downloaded_at = now(),
			first_downloaded_at = COALESCE(l.first_downloaded_at, now()),
			download_count = l.download_count + 1
		WHERE l.sender_id = EXCLUDED.sender_id
		RETURNING ${INFO_COLUMNS}`,
		[row.order_id, row.sender_id, row.awb_number, row.logistic_id],
	);
	if (!rows[0]) throw new Error("label row belongs to another account");
	return toInfo(rows[0]);
}

/**
 * Seam for courier-issued labels (a later issue): records that the courier
 * issues its own label for (order, AWB), with its bytes when captured (null
 * when not; downloads then answer 409 `carrier_label_missing`). Idempotent; a
 * later capture fills a missing file, never erases one.
 */
export async function recordCourierLabel(
	db: Sequelize,
	row: { order_id: number; sender_id: number; awb_number: string; logistic_id: number; file: Buffer | null },
): Promise<void> {
	await exec(
		db,
		`INSERT INTO documents.labels AS l (order_id, sender_id, awb_number, logistic_id, source, courier_file)
		VALUES ($1, $2, $3, $4, 'courier', $5)
		ON CONFLICT (order_id, awb_number) DO UPDATE SET
			source = 'courier',
			courier_file = COALESCE(EXCLUDED.courier_file, l.courier_file)
		WHERE l.sender_id = EXCLUDED.sender_id`,
		[row.order_id, row.sender_id, row.awb_number, row.logistic_id, row.file],
	);
}
