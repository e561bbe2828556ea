/**
 * The HTTP routes of the `intake` service's bulk upload (issue 10; spec §2.3,
 * §4.1, §7, §8; docs/decisions/0039-bulk-upload-api.md,
 * docs/decisions/0040-bulk-rows-export.md), one definition each (issue 26;
 * lib/platform/openapi/route.ts, docs/ARCHITECTURE.md §9): the multipart
 * upload, the templates, the jobs list, a job, its review queue and
 * decisions, its rows export.
 *
 * Every input of these routes is parsed by hand-written code
 * (lib/intake/bulk/api.ts: `uploadBulk`, `parseJobId`, `parseLimit`,
 * `parseOutcome`, `parseReviewDecision`; lib/intake/bulk/export.ts
 * `parseExportOutcomes`), so the query parameters, path parameters and the
 * multipart body are described here by hand; their bounds and lists are read
 * from the constants that code enforces (./intake-bulk-input.ts).
 *
 * Units: sizes in bytes, timestamps ISO-8601 UTC.
 */
import {
	authErrors,
	csvAttachment,
	ID_PATH_SCHEMA,
	json,
	queryParam,
} from "../../platform/openapi/components";
import { int, str } from "../../platform/openapi/helpers";
import { defineRoutes } from "../../platform/openapi/route";
import type { JsonSchema, Parameter, Response } from "../../platform/openapi/types";
import {
	APPROVE_ALL_MAX,
	BULK_DEFAULT_LIMIT,
	BULK_MAX_BYTES,
	BULK_MAX_LIMIT,
	BULK_ROW_OUTCOMES,
	CREATED_IDS_MAX,
	EXPORT_DEFAULT_OUTCOMES,
	EXPORT_OUTCOMES,
	MAX_JOB_ERROR_CHARS,
	MAX_ROW_ERROR_CHARS,
	REPORT_COLUMNS,
	REQUIRED_COLUMNS,
	TEMPLATE_COLUMNS,
	XLSX_LIMITS,
	XLSX_MIME,
} from "./intake-bulk-input";

// ---------------------------------------------------------------------------
// small schema builders
// ---------------------------------------------------------------------------

/** A string or null. */
const nstr = (description: string, extra: JsonSchema = {}): JsonSchema => ({
	type: ["string", "null"],
	description,
	...extra,
});
/** An integer or null. */
const nint = (description: string, extra: JsonSchema = {}): JsonSchema => ({
	type: ["integer", "null"],
	description,
	...extra,
});
/** An ISO-8601 UTC timestamp. */
const ts = (description: string): JsonSchema =>
	str(`${description} (ISO-8601 UTC timestamp)`, { format: "date-time" });
/** An ISO-8601 UTC timestamp or null. */
const nts = (description: string): JsonSchema =>
	nstr(`${description} (ISO-8601 UTC timestamp; null: not reached)`, { format: "date-time" });
/** A closed object: every listed property required, nothing else allowed. */
const closed = (description: string, properties: Record<string, JsonSchema>): JsonSchema => ({
	type: "object",
	description,
	required: Object.keys(properties),
	properties,
	additionalProperties: false,
});
/** An array of `items`. */
const arr = (description: string, items: JsonSchema, extra: JsonSchema = {}): JsonSchema => ({
	type: "array",
	description,
	items,
	...extra,
});

/** §2.12 pagination object of a bulk list. */
const PAGINATION = closed("Pagination (spec §2.12, §4.8).", {
	mode: str("Always `cursor`.", { const: "cursor" }),
	limit: int(`The page size used (1–${BULK_MAX_LIMIT}; default ${BULK_DEFAULT_LIMIT}).`, {
		minimum: 1,
		maximum: BULK_MAX_LIMIT,
	}),
	nextCursor: nstr(
		"Opaque cursor of the next page (pass it back as `cursor`; never build one); null on the last page.",
	),
});

/** A §2.12 page of `row`. */
const page = (description: string, row: JsonSchema): JsonSchema =>
	closed(description, { data: arr("The rows of this page.", row), pagination: PAGINATION });

// ---------------------------------------------------------------------------
// parameters
// ---------------------------------------------------------------------------

/** Path `id` of a bulk job. */
const JOB_ID_PATH = {
	description:
		"The bulk job's `job_id` (spec §4.1): a positive integer. Anything else answers the same 404 `not found` as a missing job.",
	schema: ID_PATH_SCHEMA,
};

/** `cursor` of a bulk list (lib/intake/bulk/api.ts `decodeBulkCursor`). */
const cursorParam = (list: string): Parameter =>
	queryParam(
		"cursor",
		`\`nextCursor\` of a previous page of ${list} (spec §4.8): issued by the service, bound to the account and the filters; anything else is 400 \`cursor: unrecognised shape\`.`,
	);

/** `limit` of a bulk list (lib/intake/bulk/api.ts `parseLimit`). */
const LIMIT_PARAM: Parameter = queryParam(
	"limit",
	`Page size, 1–${BULK_MAX_LIMIT}; default ${BULK_DEFAULT_LIMIT}. May change from page to page.`,
	{ type: "integer", minimum: 1, maximum: BULK_MAX_LIMIT, default: BULK_DEFAULT_LIMIT },
);

// ---------------------------------------------------------------------------
// shapes (lib/contracts/intake.ts BulkJobSummary, BulkJob, BulkRowView, BulkReviewRow, BulkDecisionResult)
// ---------------------------------------------------------------------------

/** The job's row counts. */
const COUNTS = closed(
	"Row counts: `total` the file's data rows (null until known: a CSV's is counted first; an XLSX's is estimated from its first sheet's rows before the first batch, blank rows included, and made exact at the end), `processed` rows fully handled, then rows per outcome (approved rows count as created or deduped; `in_review` is what still waits).",
	{
		total: nint("Data rows of the file; null until counted.", { minimum: 0 }),
		processed: int("Rows fully handled.", { minimum: 0 }),
		created: int("Rows that created an order.", { minimum: 0 }),
		deduped: int("Rows whose `customer_order_no` already had a live order with the same content.", {
			minimum: 0,
		}),
		failed: int("Invalid rows (see each row's `errors`).", { minimum: 0 }),
		in_review: int("Rows waiting for a human decision.", { minimum: 0 }),
		rejected: int("Review rows rejected.", { minimum: 0 }),
	},
);

/** Fields of a job as listed (lib/contracts/intake.ts `BulkJobSummary`). */
const JOB_SUMMARY_PROPS: Record<string, JsonSchema> = {
	job_id: int("The job's id.", { minimum: 1 }),
	status: str("`queued` → `processing` → `completed` | `failed` (spec §2.3).", {
		enum: ["queued", "processing", "completed", "failed"],
	}),
	file_name: str("The uploaded file's name (at most 255 characters)."),
	format: str("File format.", { enum: ["csv", "xlsx"] }),
	size_bytes: int("File size, bytes.", { minimum: 0 }),
	sender_address_id: int("Pickup warehouse of every row.", { minimum: 1 }),
	counts: COUNTS,
	progress: int(
		"0–100: 0 while queued or while the total is unknown, processed / total while processing (at most 99), 100 when completed.",
		{ minimum: 0, maximum: 100 },
	),
	error: nstr(
		`Why the job failed (e.g. missing required columns, a refused file); else null. At most ${MAX_JOB_ERROR_CHARS} characters: a header error names at most 10 unknown (or repeated) columns, each cut to 40 characters, and how many more (\`… and 19,990 more\`).`,
		{ maxLength: MAX_JOB_ERROR_CHARS },
	),
	created_at: ts("Upload time"),
	started_at: nts("Processing started"),
	finished_at: nts("Processing finished"),
};

/** Why a row failed (lib/contracts/intake.ts `BulkRowError`). */
const ROW_ERROR = closed("Why a row failed.", {
	column: nstr("The file's canonical column (null when no column maps to the field)."),
	field: str("The §2.1 field path (e.g. `receiver.pincode`)."),
	message: str(`The validator's words (at most ${MAX_ROW_ERROR_CHARS} characters).`, {
		maxLength: MAX_ROW_ERROR_CHARS,
	}),
});

/** Fields of one row's outcome (lib/contracts/intake.ts `BulkRowView`). */
const ROW_VIEW_PROPS: Record<string, JsonSchema> = {
	row_no: int("1-based data row (the header is row 0).", { minimum: 1 }),
	outcome: str(
		"`created` (new order), `deduped` (same reference and content already had a live order), `failed` (see `errors`), `review` (waiting for a decision, see `review_reason`), then `approved` or `rejected`.",
		{ enum: [...BULK_ROW_OUTCOMES] },
	),
	order_id: nint("The order created or found; null otherwise.", { minimum: 1 }),
	errors: arr("Why the row failed (empty unless `failed`).", ROW_ERROR),
	review_reason: nstr(
		"Why the row waits for a decision, `<code>: <words>` with code `pincode_mismatch`, `reference_conflict` or `cod_above_order_value` (e.g. `reference_conflict: customer_order_no X is already used with different content`); null otherwise.",
	),
	decided_at: nts("When a review decision was made"),
};

/** The job object of `GET /v1/intake/jobs/{id}` (lib/contracts/intake.ts `BulkJob`). */
const JOB_OBJECT = closed(
	`The job object (spec §2.3 "not shown"; ours, docs/decisions/0039-bulk-upload-api.md): status, counts, progress, created order ids (the first ${CREATED_IDS_MAX}), error, timestamps, and one page of per-row outcomes.`,
	{
		...JOB_SUMMARY_PROPS,
		created_order_ids: arr(
			`Ids of the orders the job created (created and approved rows), in row order, the first ${CREATED_IDS_MAX}.`,
			int("Order id.", { minimum: 1 }),
			{ maxItems: CREATED_IDS_MAX },
		),
		rows: page(
			"One page (spec §2.12) of per-row outcomes in row order (`limit`, `cursor`, `outcome` query).",
			closed("One row's outcome.", ROW_VIEW_PROPS),
		),
	},
);

/** A row of the review queue (lib/contracts/intake.ts `BulkReviewRow`). */
const REVIEW_ROW = closed("A row waiting for a decision: its outcome plus the cells read from the file.", {
	...ROW_VIEW_PROPS,
	data: {
		type: "object",
		description: `The row's cells by canonical column (${TEMPLATE_COLUMNS.join(", ")}); empty cells absent. A cell starting with \`=\`, \`+\`, \`-\` (not a number), \`@\`, tab or CR is prefixed with \`'\` (CSV-injection guard).`,
		additionalProperties: { type: "string" },
	},
});

/** A row decided by a review decision (lib/contracts/intake.ts `BulkDecisionResult`). */
const DECIDED_ROW: JsonSchema = {
	type: "object",
	description:
		"A decided row: `approved` (with `order_id`; `deduped: true` when the reference already had a live order), `rejected`, or `failed` (the row no longer validates; `errors`).",
	required: ["row_no", "outcome", "order_id"],
	properties: {
		row_no: int("1-based data row.", { minimum: 1 }),
		outcome: str("The decision's result.", { enum: ["approved", "rejected", "failed"] }),
		order_id: nint("The order created or found (approved); null otherwise.", { minimum: 1 }),
		deduped: { type: "boolean", description: "Approved rows: the order already existed." },
		errors: arr("Failed rows: why.", ROW_ERROR),
	},
	additionalProperties: false,
};

// ---------------------------------------------------------------------------
// answers and errors shared by the routes
// ---------------------------------------------------------------------------

/**
 * The 403 the reference documents on the any-role reads (as before the
 * definitions; their access rule derives no 403, none is answered in practice).
 */
const READ_403: Response = authErrors["403"];

/** 404 of a job path. */
const JOB_404 = {
	code: "not found",
	when: "not the caller's job, never existed, or a non-numeric id (code and message alike, spec §7).",
} as const;

/** 400 of an unissued cursor. */
const CURSOR_400 = "cursor: unrecognised shape";

/** Who may upload and decide (spec §5 rules 1–2). */
const WRITE = { writes: true, capability: "orders.write" } as const;

// ---------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------

/** The bulk upload routes, keyed by the action that answers each. */
export const INTAKE_BULK_ROUTES = defineRoutes({
	"intake.bulkUpload": {
		route: "POST /v1/intake/bulk",
		kind: "upload",
		access: WRITE,
		tag: "intake",
		operationId: "intake_bulkUpload",
		summary: "Upload a CSV or XLSX of orders",
		description: `Bulk order upload (spec §2.3, §4.1, §8; docs/decisions/0039-bulk-upload-api.md). \`multipart/form-data\` with \`import_file\` (one .csv or .xlsx file, at most 25 MB = ${BULK_MAX_BYTES} bytes) and \`sender_address_id\`, as a form field or in the query string (not both). The parts may come in any order (\`curl -F import_file=@orders.csv -F sender_address_id=1\`, a browser \`FormData\` with the file appended first): the file is streamed and counted (413 as soon as it passes the limit); every other check is made once the body has ended, and nothing is stored unless they all pass. Each row becomes a §2.1 order through the same validation as \`POST /v1/intake/order\`, shipped from \`sender_address_id\`; the columns are those of the templates (\`GET /v1/intake/bulk/template.csv\`). The job row and the file are committed, then the job is queued: poll \`GET /v1/intake/jobs/{id}\`. Capability \`orders.write\`; read-only roles are refused. Parsed by hand-written code (lib/intake/bulk/api.ts \`uploadBulk\`), described here by hand.`,
		queryParams: [
			queryParam(
				"sender_address_id",
				"The pickup warehouse of every row, when not sent as a form field (a positive integer). Given both here and as a form field (even with the same value): 400 `ambiguous_parameter`.",
				{ type: "string", pattern: "^[0-9]+$" },
			),
		],
		requestBody: {
			required: true,
			content: {
				"multipart/form-data": {
					schema: {
						type: "object",
						required: ["import_file"],
						properties: {
							sender_address_id: str(
								"The pickup warehouse of every row (spec §4.1): a positive integer, one of the caller's active warehouses. Must precede the file part (or be given in the query). Absent: 400 `sender_address_id (pickup warehouse) required`.",
								{ pattern: "^\\s*[0-9]+\\s*$" },
							),
							import_file: {
								type: "string",
								contentMediaType: "application/octet-stream",
								description: `The file (spec §4.1, §8): .csv (UTF-8 text, BOM allowed, no NUL byte) or .xlsx (first sheet read, every cell as text), at most ${BULK_MAX_BYTES} bytes. The format is taken from the file name's extension, else the part's content type (\`text/csv\`, \`${XLSX_MIME}\`). Required columns: ${REQUIRED_COLUMNS.join(", ")}.`,
							},
						},
					},
					encoding: { import_file: { contentType: `text/csv, ${XLSX_MIME}, application/octet-stream` } },
				},
			},
		},
		responses: {
			"202": json(
				"The job is stored and queued (spec §4.1).",
				closed("Bulk job accepted.", {
					job_id: int("The job's id (`GET /v1/intake/jobs/{id}`).", { minimum: 1 }),
					status: str("Always `queued`.", { const: "queued" }),
				}),
			),
		},
		// the 400s in the order they are checked (lib/intake/bulk/api.ts `uploadBulk`)
		errors: [
			{
				code: "invalid_multipart",
				when: "while the body streams (not multipart/form-data, malformed or cut short, more than one file part, more than 12 parts or 10 fields, a field name over 100 bytes or a value over 1024 bytes); the others once the body has ended, in the order listed",
			},
			{
				code: "validation_failed",
				when: "a control character — U+0000–U+001F, U+007F–U+009F — in a form field's name or value, or in the file part's name, file name or content type; `details` name each, e.g. \"import_file: file name must not contain control characters\"",
			},
			{
				code: "ambiguous_parameter",
				when: "`sender_address_id` twice, or in the query and the form",
			},
			{
				code: "sender_address_id (pickup warehouse) required",
				when: "`sender_address_id` absent or empty (the text is the code and the message; spec §7)",
			},
			// not the catalogue's text alone: its backquoted `import_file` reads as an unknown code (test/unit/errors/catalogue.spec.ts)
			{ code: "import_file_required", when: "the form has no file part named import_file" },
			{ code: "file_type_mismatch", when: "name and content type disagree" },
			{ code: "invalid_pickup_address", when: "not one of the caller's active warehouses" },
			"empty_file",
			{
				code: "file_refused",
				when: `an XLSX past a zip bound — entries ${XLSX_LIMITS.maxEntries}, ${XLSX_LIMITS.maxTotalUncompressed} bytes uncompressed in total, ${XLSX_LIMITS.maxEntryUncompressed} per entry, ratio ${XLSX_LIMITS.maxRatio}, ${XLSX_LIMITS.maxSharedStrings} bytes of shared strings — or local headers that disagree with its central directory; body \`limits\``,
			},
			{
				code: "file_content_mismatch",
				when: "bytes not an XLSX workbook / not UTF-8 text. A refused upload stores nothing.",
			},
			{
				code: "file_too_large",
				when: `the file passed ${BULK_MAX_BYTES} bytes (body \`limit_bytes\`), answered as soon as it does, whatever the other parts say (it wins over every 400 and the 415); nothing is stored.`,
			},
			{
				code: "unsupported_file_type",
				when: "not a .csv or .xlsx file (by extension, else content type).",
			},
		],
	},
	"intake.bulkJobs": {
		route: "GET /v1/intake/jobs",
		access: { auth: true },
		tag: "intake",
		operationId: "intake_bulkJobs",
		summary: "List bulk jobs",
		description:
			"The caller's bulk upload jobs, newest first, cursor-paged (spec §2.3, §2.12, §4.8). Any authenticated role.",
		queryParams: [LIMIT_PARAM, cursorParam("this list")],
		responses: {
			"200": json(
				"One page of jobs.",
				page("Jobs, newest first.", closed("A job as listed (no rows, no order ids).", JOB_SUMMARY_PROPS)),
			),
			"403": READ_403,
		},
		errors: [CURSOR_400, { code: "validation_failed", when: `\`field\` "limit": not 1–${BULK_MAX_LIMIT}.` }],
	},
	"intake.bulkJob": {
		route: "GET /v1/intake/jobs/:id",
		access: { auth: true },
		tag: "intake",
		operationId: "intake_bulkJob",
		summary: "Read a bulk job",
		description:
			"The job object with counts and status (spec §2.3, §4.1) and one page of its per-row outcomes (query `limit`, `cursor`, `outcome`). Any authenticated role.",
		path: { id: JOB_ID_PATH },
		queryParams: [
			LIMIT_PARAM,
			cursorParam("this job's rows"),
			queryParam("outcome", "Only rows with this outcome.", {
				type: "string",
				enum: [...BULK_ROW_OUTCOMES],
			}),
		],
		responses: { "200": json("The job.", JOB_OBJECT), "403": READ_403 },
		errors: [CURSOR_400, { code: "validation_failed", when: '`field` "limit" or "outcome".' }, JOB_404],
	},
	"intake.bulkTemplate": {
		route: "GET /v1/intake/bulk/template.:format",
		access: { auth: true },
		tag: "intake",
		operationId: "intake_bulkTemplate",
		summary: "Download the upload template",
		description: `The bulk upload template (spec §4.1; issue 10): the canonical header row (${TEMPLATE_COLUMNS.join(", ")}) and one example row (a valid COD order). \`template.csv\` is UTF-8 with CRLF lines; \`template.xlsx\` has one sheet "orders", every cell text. Answered as an attachment (\`Content-Disposition: attachment; filename="orders-template.<format>"\`). Any authenticated role.`,
		path: { format: { description: "`csv` or `xlsx`; anything else is 404 `not found`." } },
		responses: {
			"200": {
				description: "The template file.",
				headers: {
					"Content-Disposition": {
						description: '`attachment; filename="orders-template.<format>"`',
						schema: { type: "string" },
					},
				},
				content: {
					"text/csv": {
						schema: { type: "string", contentMediaType: "text/csv", description: "UTF-8, CRLF lines." },
					},
					[XLSX_MIME]: { schema: { type: "string", contentMediaType: XLSX_MIME } },
				},
			},
			"403": READ_403,
		},
		errors: [
			{
				// the gateway's edge text rule (GATEWAY_RESPONSES.InvalidText, which documented this 400 before)
				code: "validation_failed",
				when: "the gateway's edge text rule, before anything else runs: a query value or key or the path parameter contains a control character other than TAB, LF and CR, or an unpaired surrogate; `details` names each field.",
			},
			{ code: "not found", when: "a format other than csv or xlsx." },
		],
	},
	"intake.bulkReview": {
		route: "GET /v1/intake/jobs/:id/review",
		access: { auth: true, capability: "orders.write" },
		tag: "intake",
		operationId: "intake_bulkReview",
		summary: "List a job's review queue",
		description:
			"The job's rows waiting for a human decision (outcome `review`), in row order, each with `review_reason` and its cells, cursor-paged (spec §2.3; issue 10). Capability `orders.write` (a role without it: 403 `forbidden`).",
		path: { id: JOB_ID_PATH },
		queryParams: [LIMIT_PARAM, cursorParam("this review queue")],
		responses: { "200": json("One page of review rows.", page("Rows in review.", REVIEW_ROW)) },
		errors: [CURSOR_400, { code: "validation_failed", when: '`field` "limit".' }, JOB_404],
	},
	"intake.bulkRowsCsv": {
		route: "GET /v1/intake/jobs/:id/rows.csv",
		access: { auth: true },
		tag: "intake",
		operationId: "intake_bulkRowsCsv",
		summary: "Download a job's rows to correct, as CSV",
		description: `The job's rows of the chosen outcomes (default ${EXPORT_DEFAULT_OUTCOMES.join(" and ")}) as a CSV in the upload template's layout, to correct in a spreadsheet and upload again (issue 10; docs/decisions/0040-bulk-rows-export.md). Columns: ${TEMPLATE_COLUMNS.join(", ")} (the row's cells as uploaded), then ${REPORT_COLUMNS.join(", ")} (\`errors\`: \`column: message\` joined with \` | \`). Every cell starting with \`=\`, \`+\`, \`-\` (not a number), \`@\`, tab or CR is prefixed with \`'\` so no spreadsheet evaluates it; an upload drops that \`'\` again and ignores the report columns, so the corrected file uploads as it is. UTF-8 with a byte-order mark, CRLF lines, RFC 4180 quoting, streamed in row order. A job still processing exports the rows recorded so far. Any authenticated role.`,
		path: { id: JOB_ID_PATH },
		queryParams: [
			queryParam(
				"outcome",
				`Comma-separated outcomes to export, of ${EXPORT_OUTCOMES.join(", ")} (created and deduped rows keep no cells); default \`${EXPORT_DEFAULT_OUTCOMES.join(",")}\`.`,
				{
					type: "string",
					pattern: `^(${EXPORT_OUTCOMES.join("|")})(,(${EXPORT_OUTCOMES.join("|")}))*$`,
				},
			),
		],
		responses: {
			"200": csvAttachment("The rows, as an attachment.", "bulk-<job_id>-rows.csv", "row"),
			"403": READ_403,
		},
		errors: [{ code: "validation_failed", when: '`field` "outcome".' }, JOB_404],
	},
	"intake.bulkReviewDecide": {
		route: "POST /v1/intake/jobs/:id/review/:row/:decision",
		access: WRITE,
		tag: "intake",
		operationId: "intake_bulkReviewDecide",
		summary: "Approve or reject review rows",
		description: `Decides one review row, or every row still in review (\`all\`; approve decides at most ${APPROVE_ALL_MAX} rows a call: call again while \`in_review\` > 0). Approve creates the order through the same path as \`POST /v1/intake/order\`; approving \`cod_above_order_value\` raises \`declared_order_total\` to the COD amount; approving \`reference_conflict\` answers the existing order. Reject marks the row \`rejected\`. Row and counts change in one transaction (spec §2.3; issue 10). Capability \`orders.write\`; read-only roles are refused.`,
		path: {
			id: JOB_ID_PATH,
			row: {
				description: "A data row number (1-based), or `all`.",
				schema: { type: "string", pattern: "^(all|[0-9]+)$" },
			},
			decision: { description: "`approve` or `reject`; anything else is 400 `validation_failed`." },
		},
		responses: {
			"200": json(
				"The rows decided by this call.",
				closed("Decision result.", {
					job_id: int("The job.", { minimum: 1 }),
					decided: arr("Each row decided by this call.", DECIDED_ROW),
					in_review: int("Rows of the job still in review after this call.", { minimum: 0 }),
				}),
			),
		},
		errors: [
			{ code: "validation_failed", when: '`field` "decision": not approve or reject.' },
			{
				code: "not found",
				when: "the job is not the caller's or does not exist, or the row does not exist / is not a row number.",
			},
			{ code: "not_in_review", when: "the row was already decided (body `row_no`, `outcome`)." },
		],
	},
});
