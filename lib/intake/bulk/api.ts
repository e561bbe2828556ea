/**
 * Bulk upload, the HTTP side (issue 10; spec §2.3, §4.1, §7, §8;
 * docs/decisions/0039-bulk-upload-api.md): reading the uploaded file (size
 * cap, empty file, bytes that must be what the name / content type say), the
 * job object and its per-row outcomes, the templates, the review decisions'
 * parameters. No SQL here (lib/intake/bulk/jobs-store.ts); the parsing of the
 * file's rows is the job's (lib/intake/bulk/process.ts).
 */

import { isUtf8 } from "node:buffer";
import type { Readable } from "node:stream";
import { stringify } from "csv-stringify/sync";
import ExcelJS from "exceljs";
import type { Sequelize } from "sequelize";
import type {
	BulkDecisionResult,
	BulkFormat,
	BulkJob,
	BulkJobSummary,
	BulkReviewRow,
	BulkRowError,
	BulkRowOutcome,
	BulkUploadResult,
	CursorPage,
	HttpParams,
} from "../../contracts";
import {
	APPROVE_ALL_MAX,
	BULK_DEFAULT_LIMIT,
	BULK_MAX_LIMIT,
	BULK_ROW_OUTCOMES,
	CREATED_IDS_MAX,
	TEMPLATE_COLUMNS as TEMPLATE_HEADERS,
	XLSX_LIMITS,
	XLSX_MIME,
} from "../../contracts/http/intake-bulk-input";
import { type CursorPosition, decodeCursor, encodeCursor } from "../../platform/cursor";
import { type apiError, type ErrorCode, errorBodyOf, fail, failWith } from "../../platform/errors";
import { textProblem } from "../../platform/text-rule";
import { parsePositiveInt } from "../../shared/fields";
import type { IntakeDbDeps } from "../deps";
import { columnOfField, TEMPLATE_EXAMPLE } from "./columns";
import {
	type BulkJobRow,
	type BulkRowDb,
	bulkJob,
	bulkJobsPage,
	bulkRow,
	bulkRowsPage,
	createdOrderIds,
	decideRow,
	type NewBulkJob,
	type RowDecision,
	rejectAllInReview,
} from "./jobs-store";
import { readUploadForm, type UploadForm } from "./multipart";
import { BulkFileError, inspectXlsx, looksLikeZip } from "./xlsx";

/** The 413 of a file over the 25 MB limit, enforced while the body streams (./multipart.ts). */
export { fileTooLarge } from "./multipart";

/** The exact 400 of a missing `sender_address_id` (issue 10). */
export const SENDER_ADDRESS_REQUIRED = "sender_address_id (pickup warehouse) required" satisfies ErrorCode;

/** Content types that say nothing about the format (the file name decides). */
const NEUTRAL_TYPES = new Set(["", "application/octet-stream", "binary/octet-stream", "application/zip"]);
/** Content types meaning CSV (browsers on Windows send the Excel one for `.csv`). */
const CSV_TYPES = new Set([
	"text/csv",
	"text/plain",
	"application/csv",
	"text/comma-separated-values",
	"application/vnd.ms-excel",
]);

/**
 * The format the client claims, from the file name's extension (`.csv`,
 * `.xlsx`, case-insensitive) and else the content type.
 * @throws 415 `unsupported_file_type` for any other name / type (`.xls`, `.ods`, `.json`, …)
 * @throws 400 `file_type_mismatch` when the name and a specific content type disagree
 */
export function claimedFormat(fileName: string, contentType: string): BulkFormat {
	const ext = /\.([A-Za-z0-9]+)$/.exec(fileName.trim())?.[1]?.toLowerCase();
	const type = contentType.split(";")[0].trim().toLowerCase();
	const byType: BulkFormat | null = type === XLSX_MIME ? "xlsx" : CSV_TYPES.has(type) ? "csv" : null;
	const byExt: BulkFormat | null = ext === "csv" ? "csv" : ext === "xlsx" ? "xlsx" : null;
	if (byExt && byType && byExt !== byType && type !== "application/vnd.ms-excel") {
		throw fail("file_type_mismatch", String(ext), type);
	}
	const f = byExt ?? (ext === undefined || NEUTRAL_TYPES.has(type) ? byType : null);
	if (!f) {
		throw fail("unsupported_file_type");
	}
	return f;
}

/**
 * Checks the bytes are what the claimed format says: XLSX = a ZIP (local
 * file header `PK\x03\x04`) naming a `[Content_Types].xml` part whose zip
 * structure passes {@link inspectXlsx} (central directory and local headers
 * only, nothing inflated: milliseconds); CSV = text: valid UTF-8 (a BOM is
 * allowed), no NUL byte, not a ZIP. The worker inflates and counts every
 * entry later (`verifyXlsx` of ./xlsx.ts, run by `readXlsx`).
 * @throws 400 `empty_file` for zero bytes
 * @throws 400 `file_refused` for an XLSX past a bound of {@link XLSX_LIMITS} (entries, declared sizes,
 *   compression ratio, shared strings) or whose local headers disagree with its central directory (possible
 *   zip bomb); the message names the bound, `limits` lists them
 * @throws 400 `file_content_mismatch` otherwise (not a zip, unreadable or unsupported zip, no `xl/workbook.xml`,
 *   not UTF-8 text)
 */
export async function checkBytes(format: BulkFormat, bytes: Buffer): Promise<void> {
	if (bytes.length === 0) throw fail("empty_file");
	const zip = looksLikeZip(bytes);
	if (format === "xlsx") {
		const mismatch = (why?: string) => fail("file_content_mismatch", "xlsx", why);
		if (!zip || !bytes.includes("[Content_Types].xml")) throw mismatch();
		try {
			await inspectXlsx(bytes);
		} catch (err) {
			if (!(err instanceof BulkFileError)) throw err;
			if (err.kind === "refused") {
				throw failWith("file_refused", { limits: { ...XLSX_LIMITS } }, err.message);
			}
			throw mismatch(err.message);
		}
		return;
	}
	// isUtf8 validates in place (a decode would copy the 25 MB into a string)
	if (zip || bytes.includes(0) || !isUtf8(bytes)) {
		throw fail("file_content_mismatch", "csv");
	}
}

/**
 * `sender_address_id` of the upload form (or query): a positive integer.
 * @throws 400 `sender_address_id (pickup warehouse) required` when absent or empty
 * @throws 400 `invalid_pickup_address` when not a positive integer (it cannot be one of the caller's warehouses)
 */
export function parseSenderAddressId(v: unknown): number {
	if (v === undefined || v === null || (typeof v === "string" && v.trim() === "")) {
		throw fail(SENDER_ADDRESS_REQUIRED);
	}
	const id =
		typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? v : parsePositiveInt(v, { trim: true });
	if (id === null) {
		throw fail("invalid_pickup_address", { field: "sender_address_id" });
	}
	return id;
}

/**
 * The one `sender_address_id` of an upload, from the query string or the form
 * (issue 25: the form field may come before or after the file part). Only the
 * absence or presence is decided here; {@link parseSenderAddressId} reads it.
 * @throws 400 `ambiguous_parameter` when a form field is also in the query string (the gateway's rule for a key
 *   in both the query and the body, issue 12: even with the same value), or `sender_address_id` is in the form
 *   more than once
 */
export function senderAddressField(query: HttpParams, fields: UploadForm["fields"]): unknown {
	for (const [name] of fields) {
		if (Object.hasOwn(query, name)) {
			throw fail("ambiguous_parameter", name);
		}
	}
	const inForm = fields.filter(([name]) => name === "sender_address_id");
	if (inForm.length > 1) {
		throw fail("ambiguous_parameter", "sender_address_id", "form_twice");
	}
	return inForm.length === 1 ? inForm[0][1] : query.sender_address_id;
}

/**
 * The refusals of the form's texts (issue 31): a field name or value, the
 * file part's name, file name or content type that breaks the system's one
 * text rule (lib/platform/text-rule.ts: a control character other than TAB / LF / CR,
 * an unpaired surrogate; a NUL cannot be stored in a PostgreSQL text column:
 * it answered 500). One detail per text, `<part>: <what> must not contain
 * control characters` (or `unpaired surrogates`); a name that breaks the rule
 * is not echoed.
 */
export function controlCharProblems(form: UploadForm): string[] {
	const out: string[] = [];
	for (const [name, value] of form.fields) {
		const bad = textProblem(name);
		if (bad) out.push(`form field: field name ${bad}`);
		else {
			const v = textProblem(value);
			if (v) out.push(`${name}: value ${v}`);
		}
	}
	const f = form.file;
	if (f) {
		const badName = textProblem(f.fieldname);
		const label = badName ? "file part" : f.fieldname;
		if (badName) out.push(`${label}: part name ${badName}`);
		const fn = textProblem(f.filename);
		if (fn) out.push(`${label}: file name ${fn}`);
		const ct = textProblem(f.mimetype);
		if (ct) out.push(`${label}: content type ${ct}`);
	}
	return out;
}

// --- ids, paging ---

/** 404 `not found` (§7): a job that never existed or is another account's (the same answer). */
export function jobNotFound(): ReturnType<typeof apiError> {
	return fail("not found");
}

/** The `:id` of a job path; anything but a positive integer is the same 404 as a missing job. */
export function parseJobId(v: unknown): number {
	const id = parsePositiveInt(v);
	if (id === null) throw jobNotFound();
	return id;
}

/** `limit` of a bulk list: 1–{@link BULK_MAX_LIMIT}, default {@link BULK_DEFAULT_LIMIT}. @throws 400 validation_failed */
export function parseLimit(v: unknown): number {
	if (v === undefined || v === "") return BULK_DEFAULT_LIMIT;
	const n = parsePositiveInt(v);
	if (n === null || n > BULK_MAX_LIMIT) {
		const detail = `limit: must be an integer from 1 to ${BULK_MAX_LIMIT}`;
		throw failWith("validation_failed", { field: "limit", details: [detail] }, detail);
	}
	return n;
}

/** Outcomes a row filter may name (`GET /v1/intake/jobs/{id}?outcome=`): every outcome. */
const OUTCOMES: readonly BulkRowOutcome[] = BULK_ROW_OUTCOMES;

/** `outcome` filter of a job's rows (absent: all). @throws 400 validation_failed */
export function parseOutcome(v: unknown): BulkRowOutcome | null {
	if (v === undefined || v === "") return null;
	if (typeof v === "string" && (OUTCOMES as readonly string[]).includes(v)) return v as BulkRowOutcome;
	const detail = `outcome: must be one of ${OUTCOMES.join(", ")}`;
	throw failWith("validation_failed", { field: "outcome", details: [detail] }, detail);
}

/** Cursor of a paged bulk list: `kind` separates lists; bound to the account, the job and the filter. */
export function decodeBulkCursor(
	kind: "bulk-jobs" | "bulk-rows" | "bulk-review",
	cursor: unknown,
	binding: CursorPosition,
): number | null {
	if (cursor === undefined || cursor === "") return null;
	const ours = (p: CursorPosition): p is CursorPosition & { at: number } =>
		typeof p.at === "number" &&
		Number.isSafeInteger(p.at) &&
		Object.entries(binding).every(([k, v]) => p[k] === v);
	return decodeCursor(kind, cursor, ours).at;
}

/** A page envelope (§2.12) from up to `limit + 1` items read; `at` is the keyset position of an item. */
export function pageOf<T, R>(
	kind: "bulk-jobs" | "bulk-rows" | "bulk-review",
	binding: CursorPosition,
	limit: number,
	items: R[],
	at: (r: R) => number,
	shape: (r: R) => T,
): CursorPage<T> {
	const more = items.length > limit;
	const page = more ? items.slice(0, limit) : items;
	const last = page[page.length - 1];
	return {
		data: page.map(shape),
		pagination: {
			mode: "cursor",
			limit,
			nextCursor: more && last ? encodeCursor(kind, { ...binding, at: at(last) }) : null,
		},
	};
}

// --- the job object ---

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/** A job row as listed (`GET /v1/intake/jobs`): no rows, no order ids. */
export function jobSummary(j: BulkJobRow): BulkJobSummary {
	const processed = j.processed_rows;
	let progress: number;
	if (j.status === "completed") progress = 100;
	else if (j.status === "queued" || !j.total_rows) progress = 0;
	else progress = Math.min(99, Math.floor((processed * 100) / j.total_rows));
	return {
		job_id: j.job_id,
		status: j.status,
		file_name: j.file_name,
		format: j.format,
		size_bytes: j.size_bytes,
		sender_address_id: j.sender_address_id,
		counts: {
			total: j.total_rows,
			processed,
			created: j.created,
			deduped: j.deduped,
			failed: j.failed,
			in_review: j.in_review,
			rejected: j.rejected,
		},
		progress,
		error: j.error,
		created_at: iso(j.created_at) as string,
		started_at: iso(j.started_at),
		finished_at: iso(j.finished_at),
	};
}

/** One per-row outcome as answered (no cell data; the review queue adds it). */
export function rowOutcome(r: BulkRowDb): BulkJob["rows"]["data"][number] {
	return {
		row_no: r.row_no,
		outcome: r.outcome,
		order_id: r.order_id,
		errors: r.errors ?? [],
		review_reason: r.review_reason,
		decided_at: iso(r.decided_at),
	};
}

/** Parsed query of `GET /v1/intake/jobs/{id}` (its rows page). */
export interface JobRowsQuery {
	job_id: number;
	limit: number;
	outcome: BulkRowOutcome | null;
	/** rows after this row number (cursor) */
	after: number | null;
}

/** Reads `id`, `limit`, `outcome`, `cursor` of `GET /v1/intake/jobs/{id}`. */
export function parseJobRowsQuery(params: HttpParams, sender: number): JobRowsQuery {
	const job_id = parseJobId(params.id);
	const limit = parseLimit(params.limit);
	const outcome = parseOutcome(params.outcome);
	const after = decodeBulkCursor("bulk-rows", params.cursor, { s: sender, j: job_id, o: outcome });
	return { job_id, limit, outcome, after };
}

// --- templates ---

/** `template.csv`: UTF-8, CRLF lines, the header row and the example row (csv-stringify, RFC 4180 quoting). */
export function templateCsv(): Buffer {
	return Buffer.from(
		stringify([TEMPLATE_HEADERS.map((h) => TEMPLATE_EXAMPLE[h])], {
			header: true,
			columns: [...TEMPLATE_HEADERS],
			record_delimiter: "windows",
		}),
		"utf8",
	);
}

/** `template.xlsx` (exceljs): first sheet "orders", the header row (bold) and the example row, every cell text. */
export async function templateXlsx(): Promise<Buffer> {
	const wb = new ExcelJS.Workbook();
	const ws = wb.addWorksheet("orders");
	ws.addRow([...TEMPLATE_HEADERS]).font = { bold: true };
	ws.addRow(TEMPLATE_HEADERS.map((h) => TEMPLATE_EXAMPLE[h]));
	ws.columns.forEach((c) => {
		c.width = 20;
		c.numFmt = "@";
	});
	return Buffer.from(await wb.xlsx.writeBuffer());
}

// --- review decisions ---

/** What `POST /v1/intake/jobs/{id}/review/{row}/{decision}` names. */
export interface ReviewDecision {
	job_id: number;
	/** a row number, or "all" (every row still in review) */
	row: number | "all";
	decision: "approve" | "reject";
}

/** Reads the path of a review decision. @throws 404 not found (bad id / row), 400 validation_failed (decision) */
export function parseReviewDecision(params: HttpParams): ReviewDecision {
	const job_id = parseJobId(params.id);
	const rowRaw = params.row;
	const row = rowRaw === "all" ? "all" : parsePositiveInt(rowRaw);
	if (row === null) throw jobNotFound();
	const d = params.decision;
	if (d !== "approve" && d !== "reject") {
		const detail = "decision: must be approve or reject";
		throw failWith("validation_failed", { field: "decision", details: [detail] }, detail);
	}
	return { job_id, row, decision: d };
}

// --- the actions' bodies (services/intake.service.ts keeps thin handlers) ---

/** Queue of the bulk jobs (BullMQ; processed by `intake.processBulkJob`): the one constant of ./process.ts. */
export { BULK_QUEUE } from "./process";

/** What an upload action hands over. */
export interface UploadInput {
	sender_id: number;
	/** the request's query string (flat strings; `sender_address_id` may be given there) */
	query: HttpParams;
	/** the request's `Content-Type` header ("" when none): multipart/form-data with its boundary */
	content_type: string;
	/** the raw request body (`ctx.stream`), null when none */
	stream: Readable | null;
	/** `warehouses.resolve` through intake's cache: throws 400 invalid_pickup_address when not the caller's */
	assertWarehouse: (id: number) => Promise<void>;
	/** stores the job and its file (one transaction); returns the job id */
	store: (job: NewBulkJob) => Promise<number>;
	/** enqueues the job (BullMQ `intake-bulk`, jobId `bulk-<id>`) */
	enqueue: (job_id: number) => Promise<void>;
	/** logs an enqueue failure (the job row stays queued; re-enqueued by the sweeper) */
	warn: (msg: string, extra: Record<string, unknown>) => void;
}

/**
 * `POST /v1/intake/bulk` (spec §4.1; issue 10, issue 25): reads the whole
 * multipart body ({@link readUploadForm}: parts in any order, the file counted
 * while it streams: 413 `file_too_large` as soon as it passes 25 MB, 400
 * `invalid_multipart` for a body that cannot be read), then decides, in this
 * order: 400 `validation_failed` (a control character in a field name or
 * value, the file name or its content type), 400 `ambiguous_parameter`
 * (`sender_address_id` in the query and the form, or twice in the form), 400
 * `sender_address_id (pickup warehouse) required`, 400 `import_file_required`,
 * 415 `unsupported_file_type` / 400 `file_type_mismatch` (claimed format),
 * 400 `invalid_pickup_address` (`warehouses.resolve`), the bytes
 * ({@link checkBytes}: 400 `empty_file`, `file_refused`, `file_content_mismatch`).
 * Only then are job + file stored in one transaction and the job enqueued:
 * a refused upload has stored nothing.
 */
export async function uploadBulk(u: UploadInput): Promise<BulkUploadResult> {
	if (!u.stream) throw fail("invalid_multipart");
	const form = await readUploadForm(u.stream, u.content_type);
	const problems = controlCharProblems(form);
	if (problems.length) {
		throw failWith(
			"validation_failed",
			{ field: problems[0].split(":")[0], details: problems },
			problems.join("; "),
		);
	}
	const sender_address_id = parseSenderAddressId(senderAddressField(u.query, form.fields));
	const file = form.file;
	if (file?.fieldname !== "import_file") {
		throw fail("import_file_required");
	}
	const format = claimedFormat(file.filename, file.mimetype);
	await u.assertWarehouse(sender_address_id);
	await checkBytes(format, file.bytes);
	const job_id = await u.store({
		sender_id: u.sender_id,
		file_name: file.filename.slice(0, 255),
		content_type: file.mimetype || null,
		format,
		sender_address_id,
		bytes: file.bytes,
	});
	try {
		await u.enqueue(job_id);
	} catch (err) {
		u.warn("bulk job stored but not enqueued (the sweeper re-enqueues it)", {
			job_id,
			error: (err as Error)?.message,
		});
	}
	return { job_id, status: "queued" };
}

/** `GET /v1/intake/jobs/{id}`: the job object with one page of its rows. @throws 404 not found */
export async function jobObject({ db }: IntakeDbDeps, sender: number, params: HttpParams): Promise<BulkJob> {
	const q = parseJobRowsQuery(params, sender);
	const job = await bulkJob(db, sender, q.job_id);
	if (!job) throw jobNotFound();
	const [ids, rows] = await Promise.all([
		createdOrderIds(db, job.job_id, CREATED_IDS_MAX),
		bulkRowsPage(db, job.job_id, q.outcome, q.after, q.limit + 1),
	]);
	return {
		...jobSummary(job),
		created_order_ids: ids,
		rows: pageOf(
			"bulk-rows",
			{ s: sender, j: job.job_id, o: q.outcome },
			q.limit,
			rows,
			(r) => r.row_no,
			rowOutcome,
		),
	};
}

/** `GET /v1/intake/jobs`: the caller's jobs, newest first. */
export async function jobsList(
	{ db }: IntakeDbDeps,
	sender: number,
	params: HttpParams,
): Promise<CursorPage<BulkJobSummary>> {
	const limit = parseLimit(params.limit);
	const before = decodeBulkCursor("bulk-jobs", params.cursor, { s: sender });
	const rows = await bulkJobsPage(db, sender, before, limit + 1);
	return pageOf("bulk-jobs", { s: sender }, limit, rows, (j) => j.job_id, jobSummary);
}

/** `GET /v1/intake/jobs/{id}/review`: the rows still waiting for a decision, with their cells. */
export async function reviewList(
	{ db }: IntakeDbDeps,
	sender: number,
	params: HttpParams,
): Promise<CursorPage<BulkReviewRow>> {
	const job_id = parseJobId(params.id);
	const limit = parseLimit(params.limit);
	const after = decodeBulkCursor("bulk-review", params.cursor, { s: sender, j: job_id });
	if (!(await bulkJob(db, sender, job_id))) throw jobNotFound();
	const rows = await bulkRowsPage(db, job_id, "review", after, limit + 1);
	return pageOf(
		"bulk-review",
		{ s: sender, j: job_id },
		limit,
		rows,
		(r) => r.row_no,
		(r) => ({
			...rowOutcome(r),
			data: r.data ?? {},
		}),
	);
}

/** Creates the order of a review row through the one create path (B2's `createFromRow`). */
export type CreateFromReviewRow = (
	job: BulkJobRow,
	row_no: number,
) => Promise<{ order_id: number; deduped: boolean }>;

/** The row errors of a create that failed validation (ApiError `validation_failed` details, or its message). */
function errorsOf(err: unknown): BulkRowError[] | null {
	// createFromRow (lib/intake/bulk/rows.ts) throws a plain Error "bulk row N is not valid: field: message; …"
	const invalid = err instanceof Error ? /is not valid: (.*)$/s.exec(err.message) : null;
	if (invalid) {
		return invalid[1].split("; ").map((d) => {
			const m = /^([A-Za-z0-9_.]+): (.*)$/s.exec(d);
			const field = m ? m[1] : "";
			return { column: columnOfField(field), field, message: m ? m[2] : d };
		});
	}
	const body = errorBodyOf(err);
	if (!body || body.status >= 500) return null;
	const b = body.body;
	const details = Array.isArray(b.details)
		? b.details.map(String)
		: [String(b.message ?? b.error ?? "invalid")];
	return details.map((d) => {
		const m = /^([A-Za-z0-9_.]+): (.*)$/.exec(d);
		const field = m ? m[1] : typeof b.field === "string" ? b.field : String(b.error ?? "");
		return { column: columnOfField(field), field, message: m ? m[2] : d };
	});
}

/**
 * `POST /v1/intake/jobs/{id}/review/{row|all}/{approve|reject}`. Approve
 * creates the row's order through `create` (the same validation and
 * idempotency as `POST /v1/intake/order`): the row becomes `approved` with
 * its order id (`deduped` when the customer_order_no already had a live
 * order), or `failed` with its errors when the order fails validation now.
 * Reject: `rejected`. A row not in review (already decided, never in review)
 * is 409 `not_in_review`; a row that does not exist 404 `not found`. "all"
 * decides every row still in review (approve: up to {@link APPROVE_ALL_MAX}
 * per call).
 */
export async function decideReview(
	db: Sequelize,
	sender: number,
	params: HttpParams,
	create: CreateFromReviewRow,
): Promise<BulkDecisionResult> {
	const d = parseReviewDecision(params);
	const job = await bulkJob(db, sender, d.job_id);
	if (!job) throw jobNotFound();
	const decided: BulkDecisionResult["decided"] = [];
	const one = async (row_no: number): Promise<boolean> => {
		if (d.decision === "reject") {
			const ok = await decideRow(db, job.job_id, row_no, {
				outcome: "rejected",
				order_id: null,
				deduped: false,
				errors: null,
			});
			if (ok) decided.push({ row_no, outcome: "rejected", order_id: null });
			return ok;
		}
		let res: { order_id: number; deduped: boolean } | null = null;
		let errors: BulkRowError[] | null = null;
		try {
			res = await create(job, row_no);
		} catch (err) {
			errors = errorsOf(err);
			if (!errors) throw err;
		}
		const dec: RowDecision = res
			? { outcome: "approved", order_id: res.order_id, deduped: res.deduped, errors: null }
			: { outcome: "failed", order_id: null, deduped: false, errors };
		const ok = await decideRow(db, job.job_id, row_no, dec);
		if (ok) {
			decided.push(
				res
					? { row_no, outcome: "approved", order_id: res.order_id, deduped: res.deduped }
					: { row_no, outcome: "failed", order_id: null, errors: errors ?? [] },
			);
		}
		return ok;
	};
	if (d.row === "all") {
		if (d.decision === "reject") {
			const rows: BulkRowDb[] = [];
			for (let after: number | null = null; ; ) {
				const page = await bulkRowsPage(db, job.job_id, "review", after, 1000);
				rows.push(...page);
				if (page.length < 1000) break;
				after = page[page.length - 1].row_no;
			}
			await rejectAllInReview(db, job.job_id);
			for (const r of rows) decided.push({ row_no: r.row_no, outcome: "rejected", order_id: null });
		} else {
			let after: number | null = null;
			while (decided.length < APPROVE_ALL_MAX) {
				const page = await bulkRowsPage(
					db,
					job.job_id,
					"review",
					after,
					Math.min(100, APPROVE_ALL_MAX - decided.length),
				);
				if (page.length === 0) break;
				for (const r of page) await one(r.row_no);
				after = page[page.length - 1].row_no;
			}
		}
	} else {
		const row = await bulkRow(db, job.job_id, d.row);
		if (!row) throw jobNotFound();
		if (row.outcome !== "review" || !(await one(d.row))) {
			const now = (await bulkRow(db, job.job_id, d.row))?.outcome ?? row.outcome;
			throw failWith("not_in_review", { row_no: d.row, outcome: now }, d.row, now);
		}
	}
	const after = await bulkJob(db, sender, job.job_id);
	return { job_id: job.job_id, decided, in_review: after?.in_review ?? 0 };
}
