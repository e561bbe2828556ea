/**
 * SQL of the bulk upload's API side (issue 10; tables in lib/intake/migrations.ts
 * `0005-bulk-jobs`): storing an upload with its job, reading jobs and their
 * per-row outcomes, and recording review decisions. The worker's own
 * statements (checkpointed batches) are in lib/intake/bulk/store.ts.
 */
import type { Sequelize, Transaction } from "sequelize";
import type { BulkFormat, BulkJobStatus, BulkRowError, BulkRowOutcome } from "../../contracts";
import { exec, type StoredRow, select } from "../../platform/db";
import { capRowErrors } from "./bounds";

/** A `intake.bulk_jobs` row with the rejected count (ids and counts as numbers). */
export interface BulkJobRow {
	job_id: number;
	sender_id: number;
	status: BulkJobStatus;
	file_name: string;
	content_type: string | null;
	format: BulkFormat;
	size_bytes: number;
	sender_address_id: number;
	total_rows: number | null;
	processed_rows: number;
	created: number;
	deduped: number;
	failed: number;
	in_review: number;
	/** rows rejected in review (counted from bulk_rows) */
	rejected: number;
	error: string | null;
	created_at: Date;
	started_at: Date | null;
	finished_at: Date | null;
}

/** A `intake.bulk_rows` row. */
export interface BulkRowDb {
	job_id: number;
	row_no: number;
	outcome: BulkRowOutcome;
	order_id: number | null;
	errors: BulkRowError[] | null;
	review_reason: string | null;
	data: Record<string, string> | null;
	decided_at: Date | null;
}

/** What an upload stores. */
export interface NewBulkJob {
	sender_id: number;
	file_name: string;
	content_type: string | null;
	format: BulkFormat;
	sender_address_id: number;
	bytes: Buffer;
}

const JOB_COLUMNS = `j.job_id, j.sender_id, j.status, j.file_name, j.content_type, j.format, j.size_bytes,
	j.sender_address_id, j.total_rows, j.processed_rows, j.created, j.deduped, j.failed, j.in_review,
	j.error, j.created_at, j.started_at, j.finished_at`;

/** A job row as pg returns it (bigint columns and the `rejected` count as text). */
type StoredJob = StoredRow<
	BulkJobRow,
	"job_id" | "sender_id" | "size_bytes" | "sender_address_id" | "total_rows" | "rejected"
>;

/** A row outcome as pg returns it (bigint ids as text). */
type StoredBulkRow = StoredRow<BulkRowDb, "job_id" | "order_id">;

/** Numbers out of pg's bigint strings. */
function jobOf(r: StoredJob): BulkJobRow {
	const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
	return {
		...r,
		job_id: Number(r.job_id),
		sender_id: Number(r.sender_id),
		size_bytes: Number(r.size_bytes),
		sender_address_id: Number(r.sender_address_id),
		total_rows: n(r.total_rows),
		rejected: Number(r.rejected ?? 0),
	};
}

/** A row outcome with its ids as numbers. */
function rowOf(r: StoredBulkRow): BulkRowDb {
	return {
		...r,
		job_id: Number(r.job_id),
		order_id: r.order_id === null ? null : Number(r.order_id),
	};
}

/**
 * Bytes per stored part of a bulk file (`intake.bulk_files.part`): 256 KB.
 * The worker reads a file back part by part and node-postgres hands each
 * bytea over as a hex string twice its size: with 1 MB parts a 25 MB file
 * left ~75 MB of large strings to the collector at the start of the job (issue
 * 10 bench: XLSX worker peak RSS 371–443 MB, with 256 KB parts 356–399 MB).
 * Files stored with other part sizes read back the same.
 */
export const FILE_PART = 256 * 1024;

/**
 * Stores the upload: the job row (status `queued`) and the file's bytes in
 * ONE transaction, so a job never exists without its file. Returns the job id.
 * The file is stored in parts of {@link FILE_PART} bytes (`part` 0, 1, …).
 */
export async function insertBulkJob(db: Sequelize, job: NewBulkJob): Promise<number> {
	return db.transaction(async (t) => {
		const [row] = await select<{ job_id: string }>(
			db,
			`INSERT INTO intake.bulk_jobs (sender_id, file_name, content_type, format, size_bytes, sender_address_id)
			 VALUES ($1, $2, $3, $4, $5, $6) RETURNING job_id`,
			[job.sender_id, job.file_name, job.content_type, job.format, job.bytes.length, job.sender_address_id],
			t,
		);
		for (let part = 0, off = 0; off < job.bytes.length || part === 0; part++, off += FILE_PART) {
			await exec(
				db,
				"INSERT INTO intake.bulk_files (job_id, part, bytes) VALUES ($1, $2, $3)",
				[row.job_id, part, job.bytes.subarray(off, off + FILE_PART)],
				t,
			);
		}
		return Number(row.job_id);
	});
}

/** The sender's job, or null (missing and another account's are the same). */
export async function bulkJob(
	db: Sequelize,
	sender_id: number,
	job_id: number,
	t?: Transaction,
): Promise<BulkJobRow | null> {
	const rows = await select<StoredJob>(
		db,
		`SELECT ${JOB_COLUMNS},
			(SELECT count(*) FROM intake.bulk_rows r WHERE r.job_id = j.job_id AND r.outcome = 'rejected') AS rejected
		 FROM intake.bulk_jobs j WHERE j.job_id = $1 AND j.sender_id = $2`,
		[job_id, sender_id],
		t,
	);
	return rows[0] ? jobOf(rows[0]) : null;
}

/** Up to `limit` of the sender's jobs, newest first, with job_id below `before` (null: from the newest). */
export async function bulkJobsPage(
	db: Sequelize,
	sender_id: number,
	before: number | null,
	limit: number,
): Promise<BulkJobRow[]> {
	const rows = await select<StoredJob>(
		db,
		`SELECT ${JOB_COLUMNS},
			(SELECT count(*) FROM intake.bulk_rows r WHERE r.job_id = j.job_id AND r.outcome = 'rejected') AS rejected
		 FROM intake.bulk_jobs j
		 WHERE j.sender_id = $1 AND ($2::bigint IS NULL OR j.job_id < $2)
		 ORDER BY j.job_id DESC LIMIT $3`,
		[sender_id, before, limit],
	);
	return rows.map(jobOf);
}

/** Up to `limit` of a job's row outcomes in row order after row `after` (null: from the first), optionally of one outcome. */
export async function bulkRowsPage(
	db: Sequelize,
	job_id: number,
	outcome: BulkRowOutcome | null,
	after: number | null,
	limit: number,
): Promise<BulkRowDb[]> {
	// one outcome: the (job_id, outcome, row_no) index gives the rows in order
	return rowsPage(db, "($2::text IS NULL OR outcome = $2) AND ($3::int IS NULL OR row_no > $3)", [
		job_id,
		outcome,
		after,
		limit,
	]);
}

/** The columns of a {@link BulkRowDb}. */
const ROW_COLUMNS = "job_id, row_no, outcome, order_id, errors, review_reason, data, decided_at";

/** Rows of job `$1` matching `where` (over `$2`, `$3`), in row order, at most `$4`. */
async function rowsPage(db: Sequelize, where: string, params: unknown[]): Promise<BulkRowDb[]> {
	const rows = await select<StoredBulkRow>(
		db,
		`SELECT ${ROW_COLUMNS} FROM intake.bulk_rows WHERE job_id = $1 AND ${where} ORDER BY row_no LIMIT $4`,
		params,
	);
	return rows.map(rowOf);
}

/**
 * Up to `limit` of a job's rows whose outcome is one of `outcomes`, in row
 * order after row `after` (null: from the first); for the rows export
 * (./export.ts). Walks the primary key (job_id, row_no) and filters, so each
 * page stops at its limit and a whole export reads the job's rows once.
 */
export async function bulkRowsOfOutcomes(
	db: Sequelize,
	job_id: number,
	outcomes: readonly BulkRowOutcome[],
	after: number | null,
	limit: number,
): Promise<BulkRowDb[]> {
	return rowsPage(db, "row_no > $3 AND outcome = ANY($2::text[])", [job_id, outcomes, after ?? 0, limit]);
}

/** The ids of the orders a job created (outcome created or approved), in row order, at most `limit`. */
export async function createdOrderIds(db: Sequelize, job_id: number, limit: number): Promise<number[]> {
	const rows = await select<{ order_id: string }>(
		db,
		// one index-ordered scan per outcome, each stopping at the limit, then merged: `outcome IN (…) ORDER BY
		// row_no` read every created row of the job and sorted them (85,000 for a 25 MB file) on each status poll
		`SELECT order_id FROM (
		   (SELECT row_no, order_id FROM intake.bulk_rows
		    WHERE job_id = $1 AND outcome = 'created' AND order_id IS NOT NULL ORDER BY row_no LIMIT $2)
		   UNION ALL
		   (SELECT row_no, order_id FROM intake.bulk_rows
		    WHERE job_id = $1 AND outcome = 'approved' AND order_id IS NOT NULL ORDER BY row_no LIMIT $2)
		 ) t ORDER BY row_no LIMIT $2`,
		[job_id, limit],
	);
	return rows.map((r) => Number(r.order_id));
}

/** One row of a job, or null. */
export async function bulkRow(db: Sequelize, job_id: number, row_no: number): Promise<BulkRowDb | null> {
	const rows = await select<StoredBulkRow>(
		db,
		`SELECT ${ROW_COLUMNS} FROM intake.bulk_rows WHERE job_id = $1 AND row_no = $2`,
		[job_id, row_no],
	);
	return rows[0] ? rowOf(rows[0]) : null;
}

/** How a decided review row ends. */
export interface RowDecision {
	outcome: "approved" | "rejected" | "failed";
	order_id: number | null;
	/** approved onto an order that already existed (same customer_order_no) */
	deduped: boolean;
	errors: BulkRowError[] | null;
}

/**
 * Records the decision on a row still in review (error messages cut to
 * `MAX_ROW_ERROR_CHARS`, lib/contracts/http/intake-bulk-input.ts), and moves the job's counts
 * (in_review −1; approved: created or deduped +1; failed: failed +1), in one
 * transaction. Conditional on the row still being in review: false when
 * another decision got there first (nothing changed).
 */
export async function decideRow(
	db: Sequelize,
	job_id: number,
	row_no: number,
	d: RowDecision,
): Promise<boolean> {
	return db.transaction(async (t) => {
		const { count } = await exec(
			db,
			`UPDATE intake.bulk_rows SET outcome = $3, order_id = $4, errors = $5::jsonb, decided_at = now()
			 WHERE job_id = $1 AND row_no = $2 AND outcome = 'review'`,
			[
				job_id,
				row_no,
				d.outcome,
				d.order_id,
				d.errors === null ? null : JSON.stringify(capRowErrors(d.errors)),
			],
			t,
		);
		if (count === 0) return false;
		const created = d.outcome === "approved" && !d.deduped ? 1 : 0;
		const deduped = d.outcome === "approved" && d.deduped ? 1 : 0;
		const failed = d.outcome === "failed" ? 1 : 0;
		await exec(
			db,
			`UPDATE intake.bulk_jobs SET in_review = in_review - 1, created = created + $2,
				deduped = deduped + $3, failed = failed + $4
			 WHERE job_id = $1`,
			[job_id, created, deduped, failed],
			t,
		);
		return true;
	});
}

/**
 * Rejects every row of a job still in review, in one statement with the
 * count update. Returns how many were rejected.
 */
export async function rejectAllInReview(db: Sequelize, job_id: number): Promise<number> {
	return db.transaction(async (t) => {
		const { count } = await exec(
			db,
			`UPDATE intake.bulk_rows SET outcome = 'rejected', decided_at = now()
			 WHERE job_id = $1 AND outcome = 'review'`,
			[job_id],
			t,
		);
		if (count > 0) {
			await exec(
				db,
				"UPDATE intake.bulk_jobs SET in_review = in_review - $2 WHERE job_id = $1",
				[job_id, count],
				t,
			);
		}
		return count;
	});
}
