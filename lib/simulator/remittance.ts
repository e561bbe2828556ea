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
import { REMITTANCE_COLUMNS, type RemittanceFile } from "../contracts";
import { toPaise, toRupees } from "../shared/money";
import type { RemittanceRow } from "./store";

/**
 * A COD amount in rupees (a number or numeric text, as the create payload
 * carried it) with exactly two decimals, rounded to the paisa as
 * `lib/shared/money.ts` does: `1499` → `1499.00`, `250.5` → `250.50`; absent
 * or not a number → `0.00`.
 */
export function rupees(amount: string | number | null | undefined): string {
	const n = Number(amount ?? Number.NaN);
	if (amount === "" || !Number.isFinite(n)) return "0.00";
	return toRupees(toPaise(n)).toFixed(2);
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
