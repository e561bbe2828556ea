/**
 * SQL over the `documents` schema (tables in ./migrations.ts;
 * docs/ARCHITECTURE.md §1: documents owns labels; manifests and the outbox are
 * in ./manifest-store.ts).
 *
 * `documents.labels`: one row per (order, AWB). `source` is `generated` for a
 * label we draw, `courier` when the courier issues its own label; then
 * `courier_file` holds the captured bytes (`courier_content_type` its media
 * type as the courier answered it, `courier_captured_at` when), or is null
 * when it was not captured (`courier_missing_reason` says why when the courier
 * definitively has none; the download answers 409 `carrier_label_missing`). Every successful
 * download stamps `label_downloaded_at` (spec §4.4) with one
 * `INSERT … ON CONFLICT DO UPDATE` (no read-then-write).
 */
import type { Sequelize } from "sequelize";
import type { LabelInfo, LabelSourceKind, ShipmentRecord } from "../contracts";
import { exec, select } from "../platform/db";
import { courierIssuesOwnLabel, describeFile } from "./policy";

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

/** A stored label row as the serving paths read it. */
export interface StoredLabel {
	source: LabelSourceKind;
	/** the courier's captured bytes (source `courier`), else null */
	courier_file: Buffer | null;
	/** their media type as the courier answered it (null for rows captured before it was kept) */
	content_type: string | null;
}

/**
 * The stored label of (order, AWB) with the courier's bytes and media type,
 * for serving a courier-issued label (pass `content_type` to
 * ./policy.ts `describeFile`); null when no row exists.
 */
export async function storedLabel(
	db: Sequelize,
	sender_id: number,
	order_id: number,
	awb_number: string,
): Promise<StoredLabel | null> {
	const rows = await select<StoredLabel>(
		db,
		`SELECT source, courier_file, courier_content_type AS content_type FROM documents.labels
		WHERE sender_id = $1 AND order_id = $2 AND awb_number = $3`,
		[sender_id, order_id, awb_number],
	);
	return rows[0] ?? null;
}

/** A courier-issued label file ready to serve or merge. */
export interface CourierLabelFile {
	bytes: Buffer;
	/** media type to answer (./policy.ts `describeFile`: the courier's, checked against the bytes) */
	content_type: string;
	/** file extension matching it (`pdf`, `png`; `bin` when unknown) */
	ext: string;
}

/**
 * For bulk labels (and any multi-order path): which of the caller's live
 * booked `shipments` carry a courier-issued label, in one query. Answers a Map
 * order_id → the captured file; null when that label is courier-issued and
 * recorded as missing (the courier has none); `"pending"` when it is
 * courier-issued and no capture is recorded yet (the capture row is on its way
 * or being retried). Either fails the batch with 409 `carrier_label_missing`
 * listing those order ids (spec §7). Shipments absent
 * from the Map get the label we draw. A stored row decides first (source
 * `courier` → courier-issued); without one, the shipment's `courier_label`
 * flag (./policy.ts `courierIssuesOwnLabel`).
 */
export async function courierLabelsOf(
	db: Sequelize,
	sender_id: number,
	shipments: Pick<ShipmentRecord, "order_id" | "awb_number" | "courier_label">[],
): Promise<Map<number, CourierLabelFile | null | "pending">> {
	const out = new Map<number, CourierLabelFile | null | "pending">();
	if (!shipments.length) return out;
	const rows = await select<{
		order_id: string | number;
		awb_number: string;
		source: LabelSourceKind;
		courier_file: Buffer | null;
		content_type: string | null;
	}>(
		db,
		`SELECT l.order_id, l.awb_number, l.source,
			CASE WHEN l.source = 'courier' THEN l.courier_file END AS courier_file,
			l.courier_content_type AS content_type
		FROM documents.labels l
		JOIN unnest($2::bigint[], $3::text[]) AS k(order_id, awb_number)
			ON l.order_id = k.order_id AND l.awb_number = k.awb_number
		WHERE l.sender_id = $1`,
		[sender_id, shipments.map((s) => s.order_id), shipments.map((s) => s.awb_number)],
	);
	const byKey = new Map(rows.map((r) => [`${Number(r.order_id)}:${r.awb_number}`, r]));
	for (const s of shipments) {
		const row = byKey.get(`${s.order_id}:${s.awb_number}`);
		if (row ? row.source !== "courier" : !courierIssuesOwnLabel(s)) continue;
		if (!row) {
			out.set(s.order_id, "pending");
			continue;
		}
		const file = row.courier_file;
		if (!file?.length) {
			out.set(s.order_id, null);
			continue;
		}
		const { type, ext } = describeFile(file, row.content_type);
		out.set(s.order_id, { bytes: Buffer.from(file), content_type: type, ext });
	}
	return out;
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
 * Records that the courier issues its own label for (order, AWB)
 * (`documents.captureCourierLabel`), with its bytes and media type
 * (`content_type`, as the courier answered it; sniffed from the bytes when
 * not given) when captured, or `file` null and `missing_reason` when the
 * courier definitively has none (downloads then answer 409
 * `carrier_label_missing`). One `INSERT … ON CONFLICT DO UPDATE`; idempotent:
 * a later capture fills a missing file (and clears the reason), never
 * replaces or erases a captured one. A row of another account is left alone.
 */
export async function recordCourierLabel(
	db: Sequelize,
	row: {
		order_id: number;
		sender_id: number;
		awb_number: string;
		logistic_id: number;
		file: Buffer | null;
		content_type?: string | null;
		missing_reason?: string | null;
	},
): Promise<void> {
	const type = row.file ? (row.content_type ?? describeFile(row.file).type) : null;
	await exec(
		db,
		`INSERT INTO documents.labels AS l (order_id, sender_id, awb_number, logistic_id, source, courier_file,
			courier_content_type, courier_captured_at, courier_missing_reason)
		VALUES ($1, $2, $3, $4, 'courier', $5, $6, CASE WHEN $5::bytea IS NULL THEN NULL ELSE now() END,
			CASE WHEN $5::bytea IS NULL THEN $7 END)
		ON CONFLICT (order_id, awb_number) DO UPDATE SET
			source = 'courier',
			courier_file = COALESCE(l.courier_file, EXCLUDED.courier_file),
			courier_content_type = CASE WHEN l.courier_file IS NULL THEN EXCLUDED.courier_content_type ELSE l.courier_content_type END,
			courier_captured_at = COALESCE(l.courier_captured_at, EXCLUDED.courier_captured_at),
			courier_missing_reason = CASE WHEN COALESCE(l.courier_file, EXCLUDED.courier_file) IS NULL
				THEN EXCLUDED.courier_missing_reason END
		WHERE l.sender_id = EXCLUDED.sender_id`,
		[
			row.order_id,
			row.sender_id,
			row.awb_number,
			row.logistic_id,
			row.file,
			type,
			row.missing_reason ?? null,
		],
	);
}
