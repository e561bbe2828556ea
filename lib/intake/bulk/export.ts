/**
 * The rows export of a bulk job (issue 10 "neutralised in any export";
 * docs/decisions/0040-bulk-rows-export.md):
 * `GET /v1/intake/jobs/{id}/rows.csv[?outcome=failed,review]`.
 *
 * A merchant downloads the rows that need attention as a CSV in the upload
 * template's layout, corrects them in a spreadsheet and uploads the same file
 * again. Columns: the canonical template columns (./columns.ts
 * `TEMPLATE_COLUMNS`) with the row's cells as uploaded, then
 * {@link REPORT_COLUMNS}: `row_no` (in the uploaded file), `outcome`,
 * `errors` (`column: message`, joined with ` | `; `field: message` when the
 * row has no matching column) and `review_reason`. An upload ignores the
 * report columns and undoes the export's neutralisation, so the file uploads
 * as it is.
 *
 * Every cell is neutralised (./columns.ts `neutralise`: a value starting with
 * `=`, `+`, `-`, `@`, tab or carriage return gets a leading `'`, OWASP CSV
 * injection), so no spreadsheet evaluates a formula a file smuggled in.
 * Written by csv-stringify: UTF-8 with a byte-order mark (Excel reads the
 * file as UTF-8: names in Indian scripts), CRLF line ends, RFC 4180 quoting.
 * The rows are read from PostgreSQL {@link EXPORT_PAGE} at a time and
 * streamed, one chunk per page: a 25 MB file's worth of failed rows never
 * sits in memory and crosses NATS as a stream.
 */
import { Readable } from "node:stream";
import { stringify } from "csv-stringify/sync";
import type { BulkRowOutcome, HttpParams } from "../../contracts";
import {
	EXPORT_DEFAULT_OUTCOMES,
	EXPORT_OUTCOMES,
	REPORT_COLUMNS,
	TEMPLATE_COLUMNS,
} from "../../contracts/http/intake-bulk-input";
import { failWith } from "../../platform/errors";
import { neutralise } from "../../shared/csv-cell";
import type { IntakeDbDeps } from "../deps";
import { jobNotFound, parseJobId } from "./api";
import { type BulkRowDb, bulkJob, bulkRowsOfOutcomes } from "./jobs-store";

/** Rows read per query while streaming. */
export const EXPORT_PAGE = 1000;

/**
 * `outcome` of the export: absent or empty → {@link EXPORT_DEFAULT_OUTCOMES};
 * else a comma-separated list of {@link EXPORT_OUTCOMES} (duplicates dropped).
 * @throws 400 validation_failed
 */
export function parseExportOutcomes(v: unknown): BulkRowOutcome[] {
	if (v === undefined || v === "") return [...EXPORT_DEFAULT_OUTCOMES];
	const names = typeof v === "string" ? v.split(",").map((x) => x.trim()) : [];
	if (!names.length || names.some((n) => !(EXPORT_OUTCOMES as readonly string[]).includes(n))) {
		const msg = `outcome: must be a comma-separated list of ${EXPORT_OUTCOMES.join(", ")}`;
		throw failWith("validation_failed", { field: "outcome", details: [msg] }, msg);
	}
	return [...new Set(names)] as BulkRowOutcome[];
}

/** The header row of an export. */
export const EXPORT_HEADER: readonly string[] = [...TEMPLATE_COLUMNS, ...REPORT_COLUMNS];

/** One exported record (every cell neutralised), in {@link EXPORT_HEADER} order. */
export function exportRecord(r: BulkRowDb): string[] {
	const cells = r.data ?? {};
	const errors = (r.errors ?? [])
		.map((e) => ((e.column ?? e.field) ? `${e.column ?? e.field}: ${e.message}` : e.message))
		.join(" | ");
	return [
		...TEMPLATE_COLUMNS.map((c) => neutralise(cells[c] ?? "")),
		String(r.row_no),
		r.outcome,
		neutralise(errors),
		neutralise(r.review_reason ?? ""),
	];
}

/** What {@link rowsExport} answers: the file name and the CSV as a byte stream. */
export interface RowsExport {
	file_name: string;
	stream: Readable;
}

/**
 * `GET /v1/intake/jobs/{id}/rows.csv` for `sender`: checks the job (404
 * `not found` for a bad id, another account's job or none) and the
 * `outcome` filter (400 `validation_failed`) before answering, then streams
 * the header and the job's rows of those outcomes in row order. A job still
 * processing exports the rows recorded so far.
 */
export async function rowsExport(
	{ db }: IntakeDbDeps,
	sender: number,
	params: HttpParams,
): Promise<RowsExport> {
	const job_id = parseJobId(params.id);
	const outcomes = parseExportOutcomes(params.outcome);
	const job = await bulkJob(db, sender, job_id);
	if (!job) throw jobNotFound();
	// one chunk per page (not per record): each chunk of a stream crossing NATS is a message of its own
	async function* chunks(): AsyncGenerator<Buffer> {
		yield Buffer.from(stringify([], { header: true, columns: [...EXPORT_HEADER], bom: true, ...CSV_FORMAT }));
		let after = 0;
		for (;;) {
			const page = await bulkRowsOfOutcomes(db, job_id, outcomes, after, EXPORT_PAGE);
			if (page.length) yield Buffer.from(stringify(page.map(exportRecord), CSV_FORMAT));
			if (page.length < EXPORT_PAGE) return;
			after = page[page.length - 1].row_no;
		}
	}
	return {
		file_name: `bulk-${job_id}-rows.csv`,
		stream: Readable.from(chunks(), { objectMode: false }),
	};
}

/** csv-stringify options of every chunk: CRLF line ends (RFC 4180, as the template), quoting only when needed. */
const CSV_FORMAT = { record_delimiter: "windows" } as const;
