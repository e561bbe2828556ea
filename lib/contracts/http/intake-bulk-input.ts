/**
 * The bounds and lists of the bulk upload's HTTP routes (issue 10; spec §2.3,
 * §4.1, §8; docs/decisions/0039-bulk-upload-api.md), part of its contract:
 * the file size cap, the XLSX container bounds and MIME type, the template's
 * column lists, the page sizes, the row outcomes a query may name and the
 * bounds of the stored error texts. The routes' documentation reads them
 * (lib/contracts/http/intake-bulk.ts), and lib/intake/bulk/ enforces them
 * (imported from here). Constants only.
 */
import type { BulkRowOutcome } from "../intake";

// ---------------------------------------------------------------------------
// the file (spec §4.1, §8)
// ---------------------------------------------------------------------------

/** Largest accepted file: 25 MB (26,214,400 bytes; issue 10). Enforced while streaming (lib/intake/bulk/multipart.ts). */
export const BULK_MAX_BYTES = 25 * 1024 * 1024;

/** XLSX MIME type (upload content type, `template.xlsx` answer). */
export const XLSX_MIME = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

/** Bounds of an XLSX container (lib/intake/bulk/xlsx.ts `inspectXlsx`, `verifyXlsx`). */
export interface XlsxLimits {
	/** entries in the central directory */
	maxEntries: number;
	/** bytes, whole archive uncompressed */
	maxTotalUncompressed: number;
	/** bytes, any one entry uncompressed */
	maxEntryUncompressed: number;
	/** uncompressed / compressed of one entry (checked for entries above 1 MB uncompressed) */
	maxRatio: number;
	/** bytes, `xl/sharedStrings.xml` uncompressed */
	maxSharedStrings: number;
}

/** The bounds applied to uploads (issue 10); a workbook past one is 400 `file_refused` with body `limits`. */
export const XLSX_LIMITS: Readonly<XlsxLimits> = {
	maxEntries: 1000,
	maxTotalUncompressed: 1024 * 1024 * 1024,
	maxEntryUncompressed: 512 * 1024 * 1024,
	maxRatio: 200,
	maxSharedStrings: 64 * 1024 * 1024,
};

// ---------------------------------------------------------------------------
// columns (spec §2.1 fields flattened; table in lib/intake/bulk/columns.ts)
// ---------------------------------------------------------------------------

/** The canonical columns of a bulk file, in template order. */
export const TEMPLATE_COLUMNS = [
	"customer_order_no",
	"channel",
	"receiver_name",
	"receiver_address_1",
	"receiver_address_2",
	"receiver_landmark",
	"receiver_city",
	"receiver_state",
	"receiver_pincode",
	"receiver_mobile_no",
	"product_name",
	"product_sku",
	"physical_weight",
	"declared_order_total",
	"cod_amount",
	"length",
	"width",
	"height",
	"order_type",
	"order_date",
] as const;

/** A canonical column name. */
export type BulkColumn = (typeof TEMPLATE_COLUMNS)[number];

/** Columns a file must have (else the job fails naming the missing ones). */
export const REQUIRED_COLUMNS: readonly BulkColumn[] = [
	"customer_order_no",
	"receiver_name",
	"receiver_address_1",
	"receiver_pincode",
	"receiver_mobile_no",
	"product_name",
	"physical_weight",
	"declared_order_total",
	"order_type",
];

/**
 * The columns a job's rows export adds after the canonical ones
 * (`GET /v1/intake/jobs/{id}/rows.csv`): the row's number in the uploaded
 * file, its outcome, its errors and its review reason. An upload may carry
 * them (a corrected export uploaded again): they are ignored.
 */
export const REPORT_COLUMNS = ["row_no", "outcome", "errors", "review_reason"] as const;

// ---------------------------------------------------------------------------
// pages and row outcomes (spec §2.3, §2.12)
// ---------------------------------------------------------------------------

/** Default page size of the jobs list, a job's rows and its review queue. */
export const BULK_DEFAULT_LIMIT = 50;
/** Largest page size of the jobs list, a job's rows and its review queue. */
export const BULK_MAX_LIMIT = 500;

/** Every row outcome, the values `GET /v1/intake/jobs/{id}?outcome=` accepts. */
export const BULK_ROW_OUTCOMES: readonly BulkRowOutcome[] = [
	"created",
	"deduped",
	"failed",
	"review",
	"approved",
	"rejected",
];

/** Outcomes a rows export may name: those whose rows keep their cells (created and deduped rows do not). */
export const EXPORT_OUTCOMES: readonly BulkRowOutcome[] = ["failed", "review", "rejected"];
/** Outcomes exported when `outcome` is absent: the rows that need the merchant. */
export const EXPORT_DEFAULT_OUTCOMES: readonly BulkRowOutcome[] = ["failed", "review"];

/** How many created order ids the job object carries. */
export const CREATED_IDS_MAX = 1000;

/** How many rows one "approve all" call decides at most (the rest: call again; `in_review` says how many remain). */
export const APPROVE_ALL_MAX = 1000;

// ---------------------------------------------------------------------------
// stored error texts (docs/decisions/0077-bounded-bulk-errors.md)
// ---------------------------------------------------------------------------

/** Most characters of a job's stored `error`. */
export const MAX_JOB_ERROR_CHARS = 1_000;
/** Most characters of one row error's stored `message`. */
export const MAX_ROW_ERROR_CHARS = 500;
