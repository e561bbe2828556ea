/**
 * The sandbox couriers' COD remittance file (`simulator.remittanceFile`), as a
 * real courier sends one to the aggregator after paying out the cash it
 * collected; billing's reconciliation reads it. Pure: the packages come from
 * ./store.ts `deliveredCodPackages` (COD, not cancelled, with a delivered
 * scan, ordered by waybill).
 *
 * Shape: a CSV written by csv-stringify (sync API; `\n` line ends, quoting
 * only where needed), header
 * `awb_number,amount,remittance_reference,remittance_date`, then one line per
 * package, e.g. `84000000000012,1499.00,SBX-REM-20250305-sbx-delhivery,2025-03-05`:
 * - `awb_number`: the package's waybill;
 * - `amount`: the COD amount of its create payload (`cod_amount`), in rupees
 *   with exactly two decimals;
 * - `remittance_reference`: `SBX-REM-<YYYYMMDD>-<courier_code>` (the
 *   remittance date without dashes, the package's courier);
 * - `remittance_date`: the date asked for, else today in IST (Asia/Kolkata),
 *   `YYYY-MM-DD`.
 * No package gives the header alone (`lines` 0).
 */
import { stringify } from "csv-stringify/sync";
import type { RemittanceFile } from "../contracts";
import type { RemittanceRow } from "./store";

/** The columns of a remittance file, in order (its header line). */
export const REMITTANCE_COLUMNS = [
	"awb_number",
	"amount",
	"remittance_reference",
	"remittance_date",
] as const;

/** IST is UTC+05:30 all year (no daylight saving). */
const IST_OFFSET_MS = 330 * 60_000;

/** The India Standard Time (Asia/Kolkata) calendar day of `now`, `YYYY-MM-DD`. */
export function istToday(now: Date = new Date()): string {
	return new Date(now.getTime() + IST_OFFSET_MS).toISOString().slice(0, 10);
}

/** True when `s` is `YYYY-MM-DD` and a real calendar day (2025-02-30 is not). */
export function isCalendarDay(s: string): boolean {
	if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
	const t = new Date(`${s}T00:00:00Z`);
	return !Number.isNaN(t.getTime()) && t.toISOString().startsWith(s);
}

/**
 * A COD amount in rupees (a number or numeric text, as the create payload
 * carried it) with exactly two decimals, rounded half up to the paisa:
 * `1499` → `1499.00`, `250.5` → `250.50`; absent or not a number → `0.00`.
 */
export function rupees(amount: string | number | null | undefined): string {
	const n = Number(amount);
	if (amount === null || amount === undefined || amount === "" || !Number.isFinite(n)) return "0.00";
	// via 12 significant digits, so 1.005 (1.00499… in binary) rounds to 1.01 as written
	const paise = Math.round(Math.abs(Number((n * 100).toPrecision(12))));
	const sign = n < 0 && paise > 0 ? "-" : "";
	return `${sign}${Math.trunc(paise / 100)}.${String(paise % 100).padStart(2, "0")}`;
}

/** The remittance reference of courier `courierCode` on day `date` (`YYYY-MM-DD`): `SBX-REM-<YYYYMMDD>-<courier_code>`. */
export function remittanceReference(courierCode: string, date: string): string {
	return `SBX-REM-${date.replaceAll("-", "")}-${courierCode}`;
}

/** The remittance file of `rows` (in the order given) dated `date` (`YYYY-MM-DD`, IST). */
export function remittanceCsv(rows: readonly RemittanceRow[], date: string): RemittanceFile {
	const records = rows.map((r) => ({
		awb_number: r.waybill,
		amount: rupees(r.cod_amount),
		remittance_reference: remittanceReference(r.courier_code, date),
		remittance_date: date,
	}));
	const csv = stringify(records, { header: true, columns: [...REMITTANCE_COLUMNS] });
	return { csv, lines: records.length };
}
