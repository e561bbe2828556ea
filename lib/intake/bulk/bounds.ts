/**
 * Bounds of the error text a bulk job stores and answers (issue 31;
 * docs/decisions/0077-bounded-bulk-errors.md): a file error lists at most
 * {@link MAX_LISTED_NAMES} column names, each cut to {@link MAX_NAME_CHARS}
 * characters, and says how many it left out; the job's `error` is cut to
 * `MAX_JOB_ERROR_CHARS` characters as a last guard where it is stored
 * (./store.ts `finishJob`), and so is every row error's message (at most
 * {@link MAX_ROW_ERROR_CHARS}: ./store.ts `insertOutcomes`, ./jobs-store.ts
 * `decideRow`). Pure functions. The two answered bounds are part of the
 * contract (lib/contracts/http/intake-bulk-input.ts).
 */
import { MAX_ROW_ERROR_CHARS } from "../../contracts/http/intake-bulk-input";

/** Most column names one list of a header error names. */
export const MAX_LISTED_NAMES = 10;
/** Most characters of one column name in a header error. */
export const MAX_NAME_CHARS = 40;

/**
 * `s` when at most `max` characters (UTF-16 code units), else its first
 * `max − 1` followed by `…` (a surrogate pair is never split).
 */
export function capText(s: string, max: number): string {
	if (s.length <= max) return s;
	let end = max - 1;
	const last = s.charCodeAt(end - 1);
	if (last >= 0xd800 && last <= 0xdbff) end--;
	return `${s.slice(0, end)}…`;
}

/**
 * The first `max` of `items` (default {@link MAX_LISTED_NAMES}) joined with
 * ", ", then `… and 19,980 more` when some were left out (thousands grouped
 * by commas). The caller cuts each item (column names: {@link MAX_NAME_CHARS}).
 * @example listSome(["a", "b"]) → "a, b"
 * @example listSome(["a", "b", "c"], 2) → "a, b … and 1 more"
 */
export function listSome(items: readonly string[], max = MAX_LISTED_NAMES): string {
	const shown = items.slice(0, max).join(", ");
	const left = items.length - Math.min(items.length, max);
	return left > 0 ? `${shown} … and ${left.toLocaleString("en-US")} more` : shown;
}

/**
 * A row's errors bounded for storage: each message cut to
 * {@link MAX_ROW_ERROR_CHARS} (their number is bounded already: at most a
 * few per column of the template). Null stays null.
 */
export function capRowErrors<E extends { message: string }>(errors: E[] | null): E[] | null {
	return errors === null
		? null
		: errors.map((e) => ({ ...e, message: capText(e.message, MAX_ROW_ERROR_CHARS) }));
}
