/**
 * Couriers' COD remittance files (issue 27; docs/decisions/0102-cod-remittance.md):
 * a CSV `awb_number,amount,remittance_reference,remittance_date` (amount in
 * rupees with at most two decimals, date `YYYY-MM-DD`), as a courier sends
 * it. Each line is matched to a collected COD shipment — which becomes
 * `remitted` with the courier's reference, date and amount — or becomes a
 * reconciliation exception, never a silent accept:
 *
 * | kind | when |
 * |---|---|
 * | `invalid_line` | the line cannot be read (AWB missing, amount not rupees with ≤ 2 decimals, date not a real `YYYY-MM-DD`, reference empty) |
 * | `duplicate` | the AWB is on an earlier line of the file, or was remitted (or paid out) before |
 * | `unknown_awb` | no shipment of ours has that AWB, it is prepaid, or it is another courier's than the file's |
 * | `not_delivered` | the shipment was not delivered (COD `pending`), or went back without collecting (`not_collected`) |
 * | `amount_mismatch` | the amount differs from the shipment's COD amount |
 *
 * The same file received twice (same bytes) is recorded once: the second
 * answer is the first's stored outcome, `duplicate_file: true`.
 */
import { createHash } from "node:crypto";
import { parse } from "csv-parse/sync";
import {
	type CodExceptionKind,
	MAX_EXCEPTION_LINES,
	REMITTANCE_COLUMNS,
	type RemittanceReport,
} from "../contracts";
import { fail } from "../platform/errors";
import { isCalendarDay } from "../shared/ist-date";
import { toRupees } from "../shared/money";
import type { BillingDeps } from "./deps";
import { type CodRow, type RemittanceLine, recordRemittance } from "./store";

/** Largest file read (bytes): ~100,000 lines. */
export const MAX_REMITTANCE_BYTES = 8 * 1024 * 1024;

const AMOUNT = /^\d{1,10}(\.\d{1,2})?$/;

/** Rupees text (≤ 2 decimals) → integer paise, exactly (no float rounding). */
function paiseOf(s: string): number | null {
	if (!AMOUNT.test(s)) return null;
	const [whole, frac = ""] = s.split(".");
	return Number(whole) * 100 + Number(frac.padEnd(2, "0"));
}

/**
 * Reads a remittance CSV (UTF-8, optional BOM, header {@link REMITTANCE_COLUMNS}
 * in any order, extra columns ignored, blank lines skipped) into lines; a
 * line that cannot be read keeps its number and the reason.
 * @throws ApiError 400 `invalid_remittance_file` when the header lacks a column or the CSV cannot be parsed
 */
export function parseRemittance(csv: string): RemittanceLine[] {
	let records: string[][];
	try {
		records = parse(csv, { bom: true, skip_empty_lines: true, relax_column_count: true, trim: true });
	} catch (err) {
		throw fail("invalid_remittance_file", `not CSV (${err instanceof Error ? err.message : String(err)})`);
	}
	const [header, ...rows] = records;
	const at = new Map((header ?? []).map((h, i) => [h.toLowerCase(), i]));
	const missing = REMITTANCE_COLUMNS.filter((c) => !at.has(c));
	if (missing.length) throw fail("invalid_remittance_file", `the header lacks ${missing.join(", ")}`);
	// every column is in the header (checked above)
	const col = (r: string[], c: (typeof REMITTANCE_COLUMNS)[number]) => (r[at.get(c) ?? -1] ?? "").trim();
	return rows.map((r, i) => {
		const awb = col(r, "awb_number");
		const amount = paiseOf(col(r, "amount"));
		const reference = col(r, "remittance_reference");
		const rawDate = col(r, "remittance_date");
		const date = isCalendarDay(rawDate) ? rawDate : null;
		const invalid = !awb
			? "awb_number is empty"
			: amount === null
				? `amount "${col(r, "amount")}" is not rupees with at most two decimals`
				: !reference
					? "remittance_reference is empty"
					: reference.length > 100
						? "remittance_reference is longer than 100 characters"
						: date === null
							? `remittance_date "${col(r, "remittance_date")}" is not a real YYYY-MM-DD date`
							: null;
		return {
			line_no: i + 1,
			awb_number: awb ? awb.slice(0, 64) : null,
			amount_paise: amount,
			reference: reference ? reference.slice(0, 100) : null,
			remitted_on: date,
			invalid,
		};
	});
}

/** ₹ text of paise for an exception's words. */
const rupees = (paise: number) => toRupees(paise).toFixed(2);

/**
 * The verdict of each line (see the module's table): null when it pays its
 * shipment, else the exception. `logistic_id`: the file's courier, when known.
 */
export function classifyLines(
	lines: RemittanceLine[],
	shipments: Map<string, CodRow | { prepaid: true }>,
	logistic_id: number | null,
): ({
	kind: CodExceptionKind;
	detail: string;
	sender_id: number | null;
	expected_paise: number | null;
} | null)[] {
	const seen = new Set<string>();
	return lines.map((l) => {
		const ex = (kind: CodExceptionKind, detail: string, s?: CodRow) => ({
			kind,
			detail,
			sender_id: s?.sender_id ?? null,
			expected_paise: s?.cod_amount_paise ?? null,
		});
		if (l.invalid || !l.awb_number || l.amount_paise === null)
			return ex("invalid_line", l.invalid ?? "unreadable");
		const awb = l.awb_number;
		if (seen.has(awb)) return ex("duplicate", `AWB ${awb} is on an earlier line of this file`);
		seen.add(awb);
		const s = shipments.get(awb);
		if (!s) return ex("unknown_awb", `no shipment has AWB ${awb}`);
		if ("prepaid" in s) return ex("unknown_awb", `AWB ${awb} is a prepaid shipment`);
		if (logistic_id !== null && s.logistic_id !== logistic_id)
			return ex("unknown_awb", `AWB ${awb} is a shipment of courier ${s.logistic_id}, not ${logistic_id}`, s);
		if (s.cod_status === "remitted" || s.cod_status === "paid")
			return ex("duplicate", `AWB ${awb} was remitted before (${s.remittance_reference ?? "?"})`, s);
		if (s.cod_status !== "collected")
			return ex(
				"not_delivered",
				s.cod_status === "pending"
					? `AWB ${awb} is not delivered yet`
					: `AWB ${awb} was not collected (returned, lost or cancelled)`,
				s,
			);
		if (l.amount_paise !== s.cod_amount_paise)
			return ex(
				"amount_mismatch",
				`amount ${rupees(l.amount_paise)} differs from the COD amount ${rupees(s.cod_amount_paise)}`,
				s,
			);
		return null;
	});
}

/**
 * `billing.reconcileRemittance`: reads a courier's remittance CSV and records
 * it (./store.ts `recordRemittance`: one transaction); answers the report
 * (rupees; the first {@link MAX_EXCEPTION_LINES} exceptions).
 * @throws ApiError 400 `invalid_remittance_file` for a file larger than {@link MAX_REMITTANCE_BYTES} or one that cannot be read
 */
export async function reconcileRemittance(
	deps: BillingDeps,
	csv: string,
	logistic_id: number | null,
): Promise<RemittanceReport> {
	if (Buffer.byteLength(csv) > MAX_REMITTANCE_BYTES)
		throw fail("invalid_remittance_file", `larger than ${MAX_REMITTANCE_BYTES} bytes`);
	const lines = parseRemittance(csv);
	const out = await recordRemittance(deps.db, {
		sha256: createHash("sha256").update(csv).digest("hex"),
		logistic_id,
		lines,
		classify: (ls, shipments) => classifyLines(ls, shipments, logistic_id),
		max_exceptions: MAX_EXCEPTION_LINES,
	});
	if (out.exceptions && !out.duplicate)
		deps.logger.warn("remittance file with reconciliation exceptions", {
			remittance_id: out.id,
			exceptions: out.exceptions,
		});
	return {
		remittance_id: out.id,
		duplicate_file: out.duplicate,
		lines: out.lines,
		matched: out.matched,
		matched_amount: toRupees(out.matched_paise),
		exceptions: out.exceptions,
		exception_lines: out.exception_lines,
	};
}
