/**
 * Spreadsheet-safe CSV cells (OWASP "CSV Injection"): what every CSV export
 * writes (bulk upload's rows export, billing's payout export) and what an
 * upload reads back.
 */

/** First characters that make a spreadsheet treat a cell as a formula (OWASP CSV injection). */
export const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A value made safe to echo into a spreadsheet or a review screen: a cell
 * starting with `=`, `+`, `-`, `@`, tab or carriage return is prefixed with a
 * single quote (OWASP "CSV Injection" advice), so no spreadsheet evaluates it.
 * A plain negative number (`-12.5`) is left alone.
 */
export function neutralise(v: string): string {
	if (!FORMULA_START.test(v)) return v;
	if (/^-\d+(\.\d+)?$/.test(v)) return v;
	return `'${v}`;
}

/**
 * The inverse of {@link neutralise} for a cell read from an upload: a single
 * quote followed by `=`, `+`, `-`, `@`, tab or carriage return is dropped
 * (`'+919812345678` → `+919812345678`); anything else is left as it is. The
 * value is stored as text either way and never evaluated.
 */
export function unneutralise(v: string): string {
	return v.charCodeAt(0) === 39 && FORMULA_START.test(v.slice(1)) ? v.slice(1) : v;
}
