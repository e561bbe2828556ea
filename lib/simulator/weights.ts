/**
 * The sandbox couriers' weight (billing) file (`simulator.weightFile`), as a
 * real courier reports the weight it charged for each shipment after weighing
 * it at its hub; billing's weight reconciliation reads it to open weight
 * discrepancies. Pure: the packages come from ./store.ts `weighedPackages`
 * (not cancelled, with the weight recorded by `simulator.overweigh` when
 * there is one, ordered by waybill).
 *
 * Shape: a CSV written by csv-stringify (sync API; `\n` line ends, quoting
 * only where needed), header
 * `awb_number,charged_weight_kg,length_cm,width_cm,height_cm,weighed_on`,
 * then one line per package, e.g. `84000000000012,1.250,40,30,20.25,2025-03-05`
 * or `84000000000013,0.750,,,,2025-03-05`:
 * - `awb_number`: the package's waybill;
 * - `charged_weight_kg`: the weight recorded by `simulator.overweigh`, else the
 *   declared weight of its create payload (`weight`, grams on the wire), in kg
 *   with exactly three decimals (rounded to the gram); empty when neither is a
 *   positive number (the couriers refuse such a create, so never in practice);
 * - `length_cm`, `width_cm`, `height_cm`: the dimensions recorded by
 *   `simulator.overweigh`, else the declared ones of the create payload
 *   (`shipment_length`, `shipment_width`, `shipment_height`; all three
 *   positive numbers, else none), in cm with at most two decimals and no
 *   trailing zeros (`30`, `25.5`, `20.25`); three empty cells when neither;
 * - `weighed_on`: the day asked for, else today in IST (Asia/Kolkata),
 *   `YYYY-MM-DD`.
 * No package gives the header alone (`lines` 0).
 */
import { stringify } from "csv-stringify/sync";
import { WEIGHT_FILE_COLUMNS as BILLING_WEIGHT_COLUMNS, type WeightFile } from "../contracts";
import type { WeightRow } from "./store";

/** The columns of the sandbox couriers' weight file, in order (its header line): billing's, and the day weighed. */
export const WEIGHT_FILE_COLUMNS = [...BILLING_WEIGHT_COLUMNS, "weighed_on"] as const;

/** `value` (a number or numeric text) as a finite positive number, else undefined (absent, blank, not a number, ≤ 0). */
function positive(value: string | number | null | undefined): number | undefined {
	if (value === null || value === undefined || value === "") return undefined;
	const n = Number(value);
	return Number.isFinite(n) && n > 0 ? n : undefined;
}

/** `grams` (a whole number of grams) in kg with exactly three decimals: `1250` → `1.250`. */
function gramsText(grams: number): string {
	return `${Math.trunc(grams / 1000)}.${String(grams % 1000).padStart(3, "0")}`;
}

/**
 * A weight in kg (a number or numeric text, e.g. `1.25` or PostgreSQL's
 * `1.250`) with exactly three decimals, rounded to the gram: `1.25` →
 * `1.250`, `0.5` → `0.500`; absent, not a number or not above zero → ``.
 */
export function kilograms(kg: string | number | null | undefined): string {
	const n = positive(kg);
	return n === undefined ? "" : gramsText(Math.round(n * 1000));
}

/**
 * A declared weight in grams, as the wire carries it (a number or numeric
 * text), in kg with exactly three decimals, rounded to the gram: `750` →
 * `0.750`, `1200` → `1.200`; absent, not a number or not above zero → ``.
 */
export function gramsToKilograms(grams: string | number | null | undefined): string {
	const n = positive(grams);
	return n === undefined ? "" : gramsText(Math.round(n));
}

/**
 * A dimension in cm (a number or numeric text, e.g. `25.5` or PostgreSQL's
 * `25.50`) with at most two decimals and no trailing zeros: `30.00` → `30`,
 * `25.50` → `25.5`, `20.254` → `20.25`; absent, not a number or not above
 * zero → ``.
 */
export function centimetres(cm: string | number | null | undefined): string {
	const n = positive(cm);
	return n === undefined ? "" : String(Math.round(n * 100) / 100);
}

/** Three dimensions (cm) as cells when all three are positive numbers, else undefined. */
function dimensions(
	l: string | number | null | undefined,
	w: string | number | null | undefined,
	h: string | number | null | undefined,
): [string, string, string] | undefined {
	const cells: [string, string, string] = [centimetres(l), centimetres(w), centimetres(h)];
	return cells.every(Boolean) ? cells : undefined;
}

/**
 * The cells of package `r` but its date: the recorded charged weight, else the
 * declared one (kg, three decimals); the recorded dimensions, else the
 * declared ones, else empty (cm, at most two decimals).
 */
export function chargedCells(r: WeightRow): {
	charged_weight_kg: string;
	length_cm: string;
	width_cm: string;
	height_cm: string;
} {
	const charged_weight_kg = kilograms(r.charged_weight_kg) || gramsToKilograms(r.declared_weight_g);
	const [length_cm, width_cm, height_cm] = dimensions(r.length_cm, r.width_cm, r.height_cm) ??
		dimensions(r.declared_length_cm, r.declared_width_cm, r.declared_height_cm) ?? ["", "", ""];
	return { charged_weight_kg, length_cm, width_cm, height_cm };
}

/** The weight file of `rows` (in the order given) weighed on `date` (`YYYY-MM-DD`, IST). */
export function weightCsv(rows: readonly WeightRow[], date: string): WeightFile {
	const records = rows.map((r) => ({ awb_number: r.waybill, ...chargedCells(r), weighed_on: date }));
	const csv = stringify(records, { header: true, columns: [...WEIGHT_FILE_COLUMNS] });
	return { csv, lines: records.length };
}
