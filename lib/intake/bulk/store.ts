/**
 * SQL of bulk processing (issue 10) over `intake.bulk_jobs`, `intake.bulk_files`,
 * `intake.bulk_rows` (migration 0005) and the batched, idempotent order insert
 * into `intake.orders`. Every statement binds its values; a batch travels as
 * ONE jsonb parameter expanded by `jsonb_to_recordset` (one round trip per
 * batch, never one per row).
 */
import type { Sequelize, Transaction } from "sequelize";
import { MAX_JOB_ERROR_CHARS } from "../../contracts/http/intake-bulk-input";
import { exec, select } from "../../platform/db";
import { insertOrderRows } from "../store";
import type { OrderInput } from "../validation";
import { capRowErrors, capText } from "./bounds";

/** The fields of a bulk job the processing reads. */
export interface BulkJobRow {
	job_id: number;
	sender_id: number;
	status: "queued" | "processing" | "completed" | "failed";
	format: "csv" | "xlsx";
	sender_address_id: number;
	total_rows: number | null;
	processed_rows: number;
}

/** Loads a job (null: unknown). */
export async function loadJob(db: Sequelize, job_id: number, tx?: Transaction): Promise<BulkJobRow | null> {
	const rows = await select<Record<string, string | number | null>>(
		db,
		`SELECT job_id, sender_id, status, format, sender_address_id, total_rows, processed_rows
		FROM intake.bulk_jobs WHERE job_id = $1${tx ? " FOR UPDATE" : ""}`,
		[job_id],
		tx,
	);
	if (!rows.length) return null;
	const r = rows[0];
	return {
		job_id: Number(r.job_id),
		sender_id: Number(r.sender_id),
		status: r.status as BulkJobRow["status"],
		format: r.format as BulkJobRow["format"],
		sender_address_id: Number(r.sender_address_id),
		total_rows: r.total_rows === null ? null : Number(r.total_rows),
		processed_rows: Number(r.processed_rows),
	};
}

/**
 * The stored file of a job (null: none): its parts (`intake.bulk_files.part`,
 * at most FILE_PART bytes each) read one statement at a time into one buffer of the
 * file's size, so no 25 MB value crosses the driver at once.
 */
export async function loadFile(db: Sequelize, job_id: number): Promise<Buffer | null> {
	const parts = await select<{ part: number; n: string | number }>(
		db,
		`SELECT part, octet_length(bytes) AS n FROM intake.bulk_files WHERE job_id = $1 ORDER BY part`,
		[job_id],
	);
	if (!parts.length) return null;
	const out = Buffer.allocUnsafe(parts.reduce((s, p) => s + Number(p.n), 0));
	let off = 0;
	for (const p of parts) {
		const [r] = await select<{ bytes: Buffer }>(
			db,
			`SELECT bytes FROM intake.bulk_files WHERE job_id = $1 AND part = $2`,
			[job_id, p.part],
		);
		if (!r) return null;
		off += r.bytes.copy(out, off);
	}
	return out;
}

/** Marks a queued/processing job processing (start time kept on a resume). */
export async function markProcessing(db: Sequelize, job_id: number, total: number | null): Promise<void> {
	await exec(
		db,
		`UPDATE intake.bulk_jobs SET status = 'processing', started_at = COALESCE(started_at, now()),
			total_rows = COALESCE($2, total_rows)
		WHERE job_id = $1 AND status IN ('queued', 'processing')`,
		[job_id, total],
	);
}

/**
 * Records an estimated total (an XLSX's row tags, ./xlsx.ts) while the job is
 * processing and has none yet; {@link finishJob} sets the exact one.
 */
export async function estimateTotal(db: Sequelize, job_id: number, total: number): Promise<void> {
	await exec(
		db,
		`UPDATE intake.bulk_jobs SET total_rows = $2
		WHERE job_id = $1 AND status = 'processing' AND total_rows IS NULL`,
		[job_id, total],
	);
}

/**
 * Ends a job: completed with its exact total, or failed with `error` (cut to
 * `MAX_JOB_ERROR_CHARS` characters, lib/contracts/http/intake-bulk-input.ts:
 * a last guard, whatever made it).
 */
export async function finishJob(
	db: Sequelize,
	job_id: number,
	status: "completed" | "failed",
	error: string | null,
	total: number | null,
): Promise<void> {
	await exec(
		db,
		`UPDATE intake.bulk_jobs SET status = $2, error = $3, total_rows = COALESCE($4, total_rows), finished_at = now()
		WHERE job_id = $1 AND status IN ('queued', 'processing')`,
		[job_id, status, error === null ? null : capText(error, MAX_JOB_ERROR_CHARS), total],
	);
}

/** Jobs not finished (for the re-enqueue at start-up). */
export async function unfinishedJobs(db: Sequelize): Promise<number[]> {
	const rows = await select<{ job_id: string }>(
		db,
		`SELECT job_id FROM intake.bulk_jobs WHERE status IN ('queued', 'processing') ORDER BY job_id LIMIT 1000`,
	);
	return rows.map((r) => Number(r.job_id));
}

/** A live order holding a reference, with the fields a bulk row is compared on. */
export interface ExistingOrder {
	order_id: number;
	customer_order_no: string;
	shipment_type: number;
	/** comparable content (see {@link contentKey}) */
	key: string;
}

/** Columns of intake.orders compared by {@link contentKey}. */
const CONTENT_COLS = `order_type, pickup_address_id, receiver_name, receiver_address_1, receiver_address_2, receiver_landmark,
	receiver_city, receiver_state, receiver_pincode, receiver_mobile_no, product_name, product_sku, physical_weight,
	declared_order_total_paise, cod_amount_paise, length, width, height`;

/**
 * The content of an order that decides "same order" for a repeated
 * `customer_order_no`: payment mode, warehouse, receiver, product, amounts,
 * weight and dimensions (not channel or order_date).
 */
export function contentKey(input: OrderInput): string {
	const r = input.receiver;
	const p = input.product;
	const n = (x: number | null) => (x === null ? "" : String(Number(x)));
	return JSON.stringify([
		input.order.payment_mode === "cod" ? 1 : 0,
		n(input.order.pickup_address_id),
		r.name,
		r.address_1,
		r.address_2 ?? "",
		r.landmark ?? "",
		r.city ?? "",
		r.state ?? "",
		r.pincode,
		r.mobile_no,
		p.product_name,
		p.product_sku ?? "",
		n(p.physical_weight),
		n(p.declared_order_total_paise),
		n(p.cod_amount_paise),
		n(p.length),
		n(p.width),
		n(p.height),
	]);
}

/** {@link contentKey} of a stored row. */
function storedKey(r: Record<string, string | number | null>): string {
	const s = (x: string | number | null) => (x === null ? "" : String(x));
	const n = (x: string | number | null) => (x === null ? "" : String(Number(x)));
	return JSON.stringify([
		Number(r.order_type),
		n(r.pickup_address_id),
		s(r.receiver_name),
		s(r.receiver_address_1),
		s(r.receiver_address_2),
		s(r.receiver_landmark),
		s(r.receiver_city),
		s(r.receiver_state),
		s(r.receiver_pincode),
		s(r.receiver_mobile_no),
		s(r.product_name),
		s(r.product_sku),
		n(r.physical_weight),
		n(r.declared_order_total_paise),
		n(r.cod_amount_paise),
		n(r.length),
		n(r.width),
		n(r.height),
	]);
}

/** Live orders of `sender_id` holding any of `refs` (stored references), keyed by reference. */
export async function existingOrders(
	db: Sequelize,
	sender_id: number,
	refs: string[],
	tx?: Transaction,
): Promise<Map<string, ExistingOrder>> {
	const out = new Map<string, ExistingOrder>();
	if (!refs.length) return out;
	const rows = await select<Record<string, string | number | null>>(
		db,
		// one probe of the live-reference unique index per reference (LATERAL, kept apart by
		// OFFSET 0): with `= ANY($2)` or a join, the planner (statistics not yet updated after
		// the file's own inserts) matched the sender prefix only and filtered every order of the
		// sender, each batch slower than the last (85,000 rows: 62 s instead of ~15 s)
		`SELECT o.order_id, o.customer_order_no, o.shipment_type, ${CONTENT_COLS.replace(/(\w+)/g, "o.$1")}
		FROM unnest($2::text[]) AS r(ref)
		CROSS JOIN LATERAL (SELECT * FROM intake.orders WHERE sender_id = $1 AND customer_order_no = r.ref
			AND released_at IS NULL OFFSET 0) AS o`,
		[sender_id, refs],
		tx,
	);
	for (const r of rows)
		out.set(String(r.customer_order_no), {
			order_id: Number(r.order_id),
			customer_order_no: String(r.customer_order_no),
			shipment_type: Number(r.shipment_type),
			key: storedKey(r),
		});
	return out;
}

/**
 * Inserts a batch's forward orders in one statement in `tx`
 * (`insertOrderRows`, lib/intake/store.ts: the same columns and conflict
 * target as a single create). Returns reference → new order id for the rows
 * inserted (a reference already live is left out).
 */
export async function insertOrdersBatch(
	db: Sequelize,
	sender_id: number,
	inputs: OrderInput[],
	tx: Transaction,
): Promise<Map<string, number>> {
	const ids = await insertOrderRows(
		db,
		inputs.map((input) => ({ sender_id, input })),
		tx,
	);
	const out = new Map<string, number>();
	ids.forEach((id, i) => {
		if (id !== null) out.set(inputs[i].customer_order_no, id);
	});
	return out;
}

/** One row outcome to record. */
export interface OutcomeRow {
	row_no: number;
	outcome: "created" | "deduped" | "failed" | "review";
	order_id: number | null;
	errors: Array<{ column: string | null; field: string | null; message: string }> | null;
	review_reason: string | null;
	data: Record<string, string> | null;
}

/**
 * Records outcomes (a row already recorded is left as it is: ON CONFLICT DO
 * NOTHING); each error message cut to `MAX_ROW_ERROR_CHARS`
 * (lib/contracts/http/intake-bulk-input.ts).
 */
export async function insertOutcomes(
	db: Sequelize,
	job_id: number,
	rows: OutcomeRow[],
	tx: Transaction,
): Promise<void> {
	if (!rows.length) return;
	await exec(
		db,
		`INSERT INTO intake.bulk_rows (job_id, row_no, outcome, order_id, errors, review_reason, data)
		SELECT $1, x.row_no, x.outcome, x.order_id, x.errors, x.review_reason, x.data
		FROM jsonb_to_recordset($2::jsonb) AS x(row_no integer, outcome text, order_id bigint, errors jsonb,
			review_reason text, data jsonb)
		ON CONFLICT (job_id, row_no) DO NOTHING`,
		[job_id, JSON.stringify(rows.map((r) => ({ ...r, errors: capRowErrors(r.errors) })))],
		tx,
	);
}

/** Advances the checkpoint and adds the batch's counts. */
export async function advanceJob(
	db: Sequelize,
	job_id: number,
	processed: number,
	c: { created: number; deduped: number; failed: number; review: number },
	tx: Transaction,
): Promise<void> {
	await exec(
		db,
		`UPDATE intake.bulk_jobs SET processed_rows = $2, created = created + $3, deduped = deduped + $4,
			failed = failed + $5, in_review = in_review + $6,
			total_rows = CASE WHEN total_rows IS NOT NULL AND total_rows < $2 THEN $2 ELSE total_rows END
		WHERE job_id = $1`,
		[job_id, processed, c.created, c.deduped, c.failed, c.review],
		tx,
	);
}

/** The stored cells of one outcome row (null: no such row). */
export async function rowData(
	db: Sequelize,
	job_id: number,
	row_no: number,
): Promise<Record<string, string> | null> {
	const rows = await select<{ data: Record<string, string> | null }>(
		db,
		`SELECT data FROM intake.bulk_rows WHERE job_id = $1 AND row_no = $2`,
		[job_id, row_no],
	);
	return rows.length ? rows[0].data : null;
}
