/**
 * COD payouts to merchants (issue 27; docs/decisions/0104-cod-payouts.md):
 * on each of an account's cycle days (default Tuesday and Friday, IST) its
 * COD shipments that the couriers remitted and that were delivered at least
 * its delay before (default {@link PAYOUT_DELAY_DAYS} days; early COD
 * {@link EARLY_COD_DELAY_DAYS} days for a fee) become one payout, less its
 * deductions (the early-COD fee; the charges it owes, when it chose to settle
 * them from COD); ops mark it paid with the bank's UTR (its shipments'
 * `cod_status` becomes `paid`). The merchant reads the payouts, each with
 * its shipments, a summary of where the COD money is, and its settings.
 */

import { stringify } from "csv-stringify/sync";
import {
	EARLY_COD_DELAY_DAYS,
	type HttpParams,
	PAYOUT_DELAY_DAYS,
	PAYOUT_WEEKDAYS,
	type Payout,
	type PayoutCycleResult,
	type PayoutDetail,
	type PayoutPage,
	type PayoutSettings,
	type PayoutStatus,
	REMITTANCES_DEFAULT_LIMIT,
	REMITTANCES_MAX_LIMIT,
	type RemittanceSummary,
	WEEKDAYS,
	type Weekday,
} from "../contracts";
import { setting } from "../platform/config";
import { type CursorPosition, decodeCursor, encodeCursor } from "../platform/cursor";
import { fail, validationFailed } from "../platform/errors";
import { neutralise } from "../shared/csv-cell";
import { parsePositiveInt } from "../shared/fields";
import { addDays, isCalendarDay, istDay, istMidnight } from "../shared/ist-date";
import { toRupees } from "../shared/money";
import type { BillingDeps } from "./deps";
import {
	codSummary,
	markPayoutPaid,
	type PayoutRow,
	payoutOf,
	payoutSettingsOf,
	payoutsPage,
	runPayoutCycle as runCycleStatement,
	setPayoutSettings,
} from "./store";
import { pageLimit } from "./wallet";

/**
 * The cut-off of cycle `cycle_date` (ISO-8601 UTC): shipments collected
 * before it were delivered on or before the IST day {@link PAYOUT_DELAY_DAYS}
 * days earlier, so they are paid in this cycle.
 */
export function cutoffOf(cycle_date: string, delay_days: number = PAYOUT_DELAY_DAYS): string {
	return istMidnight(addDays(cycle_date, -(delay_days - 1)));
}

/** True when `date` (`YYYY-MM-DD`, IST) falls on one of `weekdays` (0 = Sunday; default {@link PAYOUT_WEEKDAYS}). */
export function isCycleDay(date: string, weekdays: readonly number[] = PAYOUT_WEEKDAYS): boolean {
	return weekdays.includes(new Date(`${date}T00:00:00Z`).getUTCDay());
}

/** The first cycle day on or after `date` (IST) among `weekdays` (default {@link PAYOUT_WEEKDAYS}). */
export function nextCycleDay(date: string, weekdays: readonly number[] = PAYOUT_WEEKDAYS): string {
	let d = date;
	while (!isCycleDay(d, weekdays)) d = addDays(d, 1);
	return d;
}

/** An account's effective payout terms: its settings, else the defaults (week days 0 = Sunday). */
interface Terms {
	weekdays: number[];
	delay_days: number;
	early_cod: boolean;
	settle_charges: boolean;
}

/** The defaults: Tuesday and Friday, {@link PAYOUT_DELAY_DAYS} days, no early COD, no settlement. */
const DEFAULT_TERMS: Terms = {
	weekdays: [...PAYOUT_WEEKDAYS],
	delay_days: PAYOUT_DELAY_DAYS,
	early_cod: false,
	settle_charges: false,
};

/** The account's terms (its stored settings, else {@link DEFAULT_TERMS}). */
async function termsOf(deps: BillingDeps, sender_id: number): Promise<Terms> {
	return (await payoutSettingsOf(deps.db, sender_id)) ?? DEFAULT_TERMS;
}

/** Days after delivery the terms pay at: the early-COD delay, else the account's. */
const delayOf = (t: Terms) => (t.early_cod ? EARLY_COD_DELAY_DAYS : t.delay_days);

/** The settings as the API shows them, with the next cycle day from `now` (IST). */
function settingsOut(t: Terms, now: Date): PayoutSettings {
	return {
		cycle_days: [...t.weekdays].sort((a, b) => a - b).map((d) => WEEKDAYS[d]),
		delay_days: t.delay_days,
		early_cod: t.early_cod,
		early_cod_delay_days: EARLY_COD_DELAY_DAYS,
		early_cod_fee_bp: setting("BILLING_EARLY_COD_FEE_BP"),
		settle_charges_from_cod: t.settle_charges,
		next_payout_date: nextCycleDay(istDay(now), t.weekdays),
	};
}

/** `GET /v1/remittances/settings`: the account's payout settings (the defaults when it set none). */
export async function payoutSettings(
	deps: BillingDeps,
	sender_id: number,
	now: Date = new Date(),
): Promise<PayoutSettings> {
	return settingsOut(await termsOf(deps, sender_id), now);
}

/**
 * `PUT /v1/remittances/settings` `{cycle_days?, delay_days?, early_cod?,
 * settle_charges_from_cod?}` (validated by the action's schema): replaces the
 * account's settings, a field left out taking its default (Tuesday and
 * Friday, 7 days, false, false). Applies from the next cycle run.
 */
export async function updatePayoutSettings(
	deps: BillingDeps,
	sender_id: number,
	body: {
		cycle_days?: Weekday[] | null;
		delay_days?: number | null;
		early_cod?: boolean | null;
		settle_charges_from_cod?: boolean | null;
	},
	now: Date = new Date(),
): Promise<PayoutSettings> {
	const t: Terms = {
		weekdays: body.cycle_days
			? [...new Set(body.cycle_days.map((d) => WEEKDAYS.indexOf(d)))]
			: DEFAULT_TERMS.weekdays,
		delay_days: body.delay_days ?? PAYOUT_DELAY_DAYS,
		early_cod: body.early_cod ?? false,
		settle_charges: body.settle_charges_from_cod ?? false,
	};
	await setPayoutSettings(deps.db, sender_id, t);
	deps.logger.info("payout settings changed", { sender_id, ...t });
	return settingsOut(t, now);
}

/** A payout row as the API answers it (rupees, UTC). */
function payoutOut(r: PayoutRow): Payout {
	return {
		id: r.id,
		cycle_date: r.cycle_date,
		shipments: r.shipments,
		gross_cod: toRupees(r.gross_paise),
		deductions: toRupees(r.deductions_paise),
		early_cod_fee: toRupees(r.early_cod_fee_paise),
		settled_charges: toRupees(r.settled_charges_paise),
		net: toRupees(r.net_paise),
		status: r.status,
		utr: r.utr,
		paid_at: r.paid_at ? r.paid_at.toISOString() : null,
		created_at: r.created_at.toISOString(),
	};
}

/**
 * `billing.runPayoutCycle` (ops route, and the service's timer every day):
 * the payouts of `cycle_date` (default today, IST) for every account whose
 * cycle days include it (store.ts `runPayoutCycle`).
 * @throws 400 `validation_failed` `cycle_date: must be a real YYYY-MM-DD date`
 */
export async function runCycle(
	deps: BillingDeps,
	cycle_date: unknown,
	now: Date = new Date(),
): Promise<PayoutCycleResult> {
	const date = cycle_date === undefined || cycle_date === "" ? istDay(now) : cycle_date;
	if (!isCalendarDay(date)) throw validationFailed(["cycle_date: must be a real YYYY-MM-DD date"]);
	const r = await runCycleStatement(deps.db, {
		cycle_date: date,
		default_weekdays: PAYOUT_WEEKDAYS,
		default_delay_days: PAYOUT_DELAY_DAYS,
		early_delay_days: EARLY_COD_DELAY_DAYS,
		early_fee_bp: setting("BILLING_EARLY_COD_FEE_BP"),
	});
	if (r.payouts)
		deps.logger.info("payout cycle ran", { cycle_date: date, payouts: r.payouts, shipments: r.shipments });
	return { cycle_date: date, payouts: r.payouts, shipments: r.shipments, amount: toRupees(r.net_paise) };
}

/** Cursor kind of the payouts list. */
const KIND = "remittances";

/**
 * `GET /v1/remittances`: query `limit` (1–1000, default 20), `cursor` (a
 * `nextCursor` of this route for this account), `status` (`scheduled` | `paid`).
 * @throws 400 `validation_failed` (limit, status); 400 `cursor: unrecognised shape`
 */
export async function payoutList(
	deps: BillingDeps,
	sender_id: number,
	params: HttpParams,
): Promise<PayoutPage> {
	const limit = pageLimit(params.limit, REMITTANCES_DEFAULT_LIMIT, REMITTANCES_MAX_LIMIT);
	let status: PayoutStatus | null = null;
	if (params.status !== undefined && params.status !== "") {
		if (params.status !== "scheduled" && params.status !== "paid")
			throw validationFailed(["status: must be scheduled or paid"]);
		status = params.status;
	}
	let before: number | null = null;
	if (params.cursor !== undefined && params.cursor !== "") {
		const ours = (p: CursorPosition): p is { s: number; id: number; st: string } =>
			p.s === sender_id &&
			typeof p.id === "number" &&
			Number.isSafeInteger(p.id) &&
			p.id > 0 &&
			p.st === (status ?? "");
		before = decodeCursor(KIND, params.cursor, ours).id;
	}
	const page = await payoutsPage(deps.db, sender_id, before, limit, status);
	const last = page.rows.at(-1);
	return {
		data: page.rows.map(payoutOut),
		pagination: {
			mode: "cursor",
			limit,
			nextCursor:
				page.more && last ? encodeCursor(KIND, { s: sender_id, id: last.id, st: status ?? "" }) : null,
		},
	};
}

/**
 * `GET /v1/remittances/{id}`: the sender's payout with its shipments.
 * @throws 400 `validation_failed` (id); 404 `remittance_not_found` (missing and another account's alike)
 */
export async function payoutDetail(
	deps: BillingDeps,
	sender_id: number,
	rawId: unknown,
): Promise<PayoutDetail> {
	const id = parsePositiveInt(rawId);
	if (id === null) throw validationFailed(["id: must be a positive integer"]);
	const found = await payoutOf(deps.db, sender_id, id);
	if (!found) throw fail("remittance_not_found");
	return {
		...payoutOut(found.payout),
		shipment_lines: found.shipments.map((s) => ({
			awb_number: s.awb_number,
			order_id: found.order_ids.get(s.awb_number) ?? 0,
			cod_amount: toRupees(s.cod_amount_paise),
			collected_at: s.collected_at ? s.collected_at.toISOString() : "",
			remittance_reference: s.remittance_reference ?? "",
			remitted_on: s.remitted_on ?? "",
		})),
	};
}

/** `GET /v1/remittances/summary`: where the sender's COD money is now (rupees; the next cycle day, IST). */
export async function summaryOf(
	deps: BillingDeps,
	sender_id: number,
	now: Date = new Date(),
): Promise<RemittanceSummary> {
	const terms = await termsOf(deps, sender_id);
	const next = nextCycleDay(istDay(now), terms.weekdays);
	const s = await codSummary(deps.db, sender_id, cutoffOf(next, delayOf(terms)));
	return {
		collected: { shipments: s.collected[0], amount: toRupees(s.collected[1]) },
		remitted: { shipments: s.remitted[0], amount: toRupees(s.remitted[1]) },
		scheduled: { payouts: s.scheduled[0], amount: toRupees(s.scheduled[1]) },
		next_payout: { date: next, amount: toRupees(s.next_paise) },
	};
}

/**
 * `POST /v1/ops/remittances/{id}/paid` `{utr}`: marks the payout paid (its
 * shipments' `cod_status` → `paid`); the same UTR again answers the payout.
 * @throws 400 `validation_failed` (id, utr: 1–64 letters, digits, `-`);
 *   404 `remittance_not_found`; 409 `payout_already_paid` (paid with another UTR)
 */
export async function payoutPaid(deps: BillingDeps, rawId: unknown, utr: string): Promise<Payout> {
	const id = parsePositiveInt(rawId);
	if (id === null) throw validationFailed(["id: must be a positive integer"]);
	const r = await markPayoutPaid(deps.db, id, utr);
	if (!r) throw fail("remittance_not_found");
	if (r.conflict) throw fail("payout_already_paid", r.payout.utr ?? "");
	deps.logger.info("payout marked paid", { payout_id: id, sender_id: r.payout.sender_id });
	return payoutOut(r.payout);
}

/** The columns of a payout's CSV export, in order (one line per shipment). */
export const PAYOUT_CSV_COLUMNS = [
	"payout_id",
	"cycle_date",
	"awb_number",
	"order_id",
	"cod_amount",
	"collected_at",
	"remittance_reference",
	"remitted_on",
	"payout_status",
	"utr",
] as const;

/**
 * `GET /v1/remittances/{id}/export.csv`: the sender's payout with one line
 * per shipment ({@link PAYOUT_CSV_COLUMNS}; rupees with two decimals, times
 * UTC, dates IST), UTF-8 with a byte-order mark and CRLF lines (spreadsheets
 * open it as is), every cell neutralised against formulas.
 * @throws 400 `validation_failed` (id); 404 `remittance_not_found`
 */
export async function payoutCsv(
	deps: BillingDeps,
	sender_id: number,
	rawId: unknown,
): Promise<{ file_name: string; csv: string }> {
	const p = await payoutDetail(deps, sender_id, rawId);
	const records = p.shipment_lines.map((l) =>
		[
			String(p.id),
			p.cycle_date,
			l.awb_number,
			String(l.order_id),
			l.cod_amount.toFixed(2),
			l.collected_at,
			l.remittance_reference,
			l.remitted_on,
			p.status,
			p.utr ?? "",
		].map(neutralise),
	);
	const csv = stringify(records, {
		header: true,
		columns: [...PAYOUT_CSV_COLUMNS],
		bom: true,
		record_delimiter: "windows",
	});
	return { file_name: `payout-${p.id}-${p.cycle_date}.csv`, csv };
}
