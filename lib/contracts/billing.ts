/**
 * Contract of the `billing` service (issue 27; docs/decisions/0101-billing-service.md):
 * every rupee of an account. Today: the wallet ledger — the charge of each
 * booked attempt and the refund of each cancelled one, recorded by booking
 * and delivered through its outbox — its balance, the credit limit booking
 * enforces (mirrored for display), and `GET /v1/wallet`. Money in rupees on
 * the wire (integer paise in the database), times ISO-8601 UTC.
 */
import type { RouteParams } from "../platform/openapi/route";
import type { BILLING_ROUTES } from "./http/billing";

/** The billing route definitions (lib/contracts/http/billing.ts). */
type Routes = typeof BILLING_ROUTES;

/** Page size of `GET /v1/wallet` when `limit` is absent (movements). */
export const WALLET_DEFAULT_LIMIT = 20;
/** Largest `limit` of `GET /v1/wallet` (§4.8, §8: list endpoints take 1 to 1000). */
export const WALLET_MAX_LIMIT = 1000;

/** The kinds of wallet movements (docs/decisions/0020-wallet.md). */
export const LEDGER_KINDS = ["charge", "refund"] as const;
/** One kind of wallet movement: `charge` takes money (a booked attempt), `refund` gives it back (its cancel). */
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/**
 * One movement as booking records it (booking's outbox kind `ledger_entry`,
 * delivered to `billing.recordEntries`): paise, idempotent on
 * `(attempt_id, kind)` — a movement delivered twice is recorded once.
 */
export interface LedgerEntryEvent {
	sender_id: number;
	attempt_id: number;
	order_id: number;
	kind: LedgerKind;
	/** integer paise, ≥ 0 */
	amount_paise: number;
	awb_number: string | null;
	note: string | null;
	/** when booking recorded it (ISO-8601 UTC): the movement's `created_at` in the wallet */
	occurred_at: string;
}

/**
 * An account's credit limit as booking set it (booking's outbox kind
 * `credit_limit`, delivered to `billing.applyCreditLimit`): paise, null = no
 * limit; `version` increases with every change, so a late delivery of an
 * older value never overwrites a newer one.
 */
export interface CreditLimitEvent {
	sender_id: number;
	credit_limit_paise: number | null;
	version: number;
}

/** One wallet movement (rupees, ISO-8601 UTC). */
export interface WalletMovement {
	id: number;
	kind: LedgerKind;
	/** rupees, positive */
	amount: number;
	order_id: number;
	attempt_id: number;
	awb_number: string | null;
	note: string | null;
	created_at: string;
}

/** 200 answer of `GET /v1/wallet` (ours; docs/decisions/0020-wallet.md): post-paid balance and cursor-paged movements (§2.12). */
export interface WalletAnswer {
	/** rupees: refunds minus charges (negative = owed by the merchant) */
	balance: number;
	/** rupees, or null (no limit) */
	credit_limit: number | null;
	data: WalletMovement[];
	pagination: { mode: "cursor"; limit: number; nextCursor: string | null };
}

/**
 * Where a COD shipment's cash is (issue 27; docs/decisions/0102-cod-remittance.md):
 * `pending` (not delivered yet), `collected` (delivered: the courier holds
 * the cash), `remitted` (the courier paid it to us), `paid` (paid out to the
 * merchant); `not_collected` when it went back (RTO), was lost or damaged, or
 * its booking was cancelled.
 */
export const COD_STATUSES = ["pending", "collected", "remitted", "paid", "not_collected"] as const;
/** One {@link COD_STATUSES} value. */
export type CodStatus = (typeof COD_STATUSES)[number];

/** A COD shipment's money as billing knows it (rupees, ISO-8601 UTC; dates `YYYY-MM-DD`). */
export interface CodShipment {
	awb_number: string;
	cod_status: CodStatus;
	/** rupees the courier collects from the buyer */
	cod_amount: number;
	/** when the courier delivered (and collected), or null */
	collected_at: string | null;
	/** the courier's remittance that paid it, or null */
	remittance: { reference: string; remitted_on: string; amount: number } | null;
}

/** Why a line of a courier's remittance file was not accepted (a reconciliation exception). */
export const COD_EXCEPTION_KINDS = [
	"amount_mismatch",
	"unknown_awb",
	"not_delivered",
	"duplicate",
	"invalid_line",
] as const;
/** One {@link COD_EXCEPTION_KINDS} value. */
export type CodExceptionKind = (typeof COD_EXCEPTION_KINDS)[number];

/** One exception of a remittance file: its line (1 = the first line after the header), AWB, kind and words. */
export interface CodExceptionLine {
	line_no: number;
	awb_number: string | null;
	kind: CodExceptionKind;
	detail: string;
}

/** Most exception lines a reconciliation answer lists (the rest are stored and counted). */
export const MAX_EXCEPTION_LINES = 100;

/** The outcome of a courier remittance file (`billing.reconcileRemittance`). Money in rupees. */
export interface RemittanceReport {
	remittance_id: number;
	/** the same file (by content) was received before: this is its stored outcome, nothing was changed again */
	duplicate_file: boolean;
	lines: number;
	matched: number;
	matched_amount: number;
	exceptions: number;
	/** the first {@link MAX_EXCEPTION_LINES} exceptions, in line order */
	exception_lines: CodExceptionLine[];
}

/** Page size of `GET /v1/remittances` when `limit` is absent. */
export const REMITTANCES_DEFAULT_LIMIT = 20;
/** Largest `limit` of `GET /v1/remittances` (§8: list endpoints take 1 to 1000). */
export const REMITTANCES_MAX_LIMIT = 1000;
/** A shipment is paid out in the first cycle at least this many days after its delivery (IST calendar days). */
export const PAYOUT_DELAY_DAYS = 7;
/** Payout cycle days (IST): Tuesday and Friday (`Date#getUTCDay` numbering of the IST date). */
export const PAYOUT_WEEKDAYS: readonly number[] = [2, 5];
/** The statuses of a payout: `scheduled` (computed, not paid yet), `paid` (ops recorded the bank's UTR). */
export const PAYOUT_STATUSES = ["scheduled", "paid"] as const;
/** One {@link PAYOUT_STATUSES} value. */
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

/** A payout of COD money to a merchant (rupees, dates `YYYY-MM-DD` IST, times ISO-8601 UTC). */
export interface Payout {
	id: number;
	/** the payout cycle (IST date) */
	cycle_date: string;
	/** COD shipments it pays */
	shipments: number;
	/** COD the couriers remitted for them, rupees */
	gross_cod: number;
	/** settled from the COD (none yet), rupees */
	deductions: number;
	/** paid to the merchant, rupees */
	net: number;
	status: PayoutStatus;
	/** the bank's transfer reference, once paid */
	utr: string | null;
	paid_at: string | null;
	created_at: string;
}

/** One shipment of a payout (rupees). */
export interface PayoutShipment {
	awb_number: string;
	order_id: number;
	cod_amount: number;
	collected_at: string;
	remittance_reference: string;
	remitted_on: string;
}

/** 200 of `GET /v1/remittances/{id}`: the payout and its shipments. */
export interface PayoutDetail extends Payout {
	shipment_lines: PayoutShipment[];
}

/** 200 of `GET /v1/remittances` (§2.12 cursor envelope). */
export interface PayoutPage {
	data: Payout[];
	pagination: { mode: "cursor"; limit: number; nextCursor: string | null };
}

/** 200 of `GET /v1/remittances/summary`: where the account's COD money is now (rupees). */
export interface RemittanceSummary {
	/** delivered, the couriers hold the cash */
	collected: { shipments: number; amount: number };
	/** the couriers paid it, not in a payout yet */
	remitted: { shipments: number; amount: number };
	/** in payouts not paid yet */
	scheduled: { payouts: number; amount: number };
	/** the next cycle day (IST) and what it would pay of the shipments remitted today */
	next_payout: { date: string; amount: number };
}

/** What one run of a payout cycle made (`billing.runPayoutCycle`). */
export interface PayoutCycleResult {
	cycle_date: string;
	/** payouts made by this run (0 when the cycle had run for every account with something to pay) */
	payouts: number;
	shipments: number;
	amount: number;
}

export interface BillingActions {
	/** GET /v1/wallet (ours; docs/decisions/0020-wallet.md): balance, credit limit and movements. */
	"billing.wallet": { params: RouteParams<Routes["billing.wallet"]>; result: WalletAnswer };
	/**
	 * Internal (booking's outbox): records movements, each once (idempotent on `(attempt_id, kind)`), with the
	 * account's balance in the same transaction; answers how many were new.
	 */
	"billing.recordEntries": { params: { entries: LedgerEntryEvent[] }; result: { recorded: number } };
	/** Internal (booking's outbox): mirrors an account's credit limit when `version` is newer than the stored one. */
	"billing.applyCreditLimit": { params: CreditLimitEvent; result: { applied: boolean } };
	/** Internal (intake's order detail): the COD money of the sender's shipment `awb_number`, or null (not COD, unknown). */
	"billing.codStatus": { params: { sender_id: number; awb_number: string }; result: CodShipment | null };
	/**
	 * POST /v1/ops/cod-remittances (ops token; also called internally): a courier's remittance file; matches each line to a collected COD shipment — remitted — or
	 * records a reconciliation exception. CSV `awb_number,amount,remittance_reference,remittance_date`.
	 */
	/** GET /v1/remittances: the account's payouts, newest first. */
	"billing.remittances": { params: RouteParams<Routes["billing.remittances"]>; result: PayoutPage };
	/** GET /v1/remittances/summary: where the account's COD money is. */
	"billing.remittanceSummary": {
		params: RouteParams<Routes["billing.remittanceSummary"]>;
		result: RemittanceSummary;
	};
	/** GET /v1/remittances/{id}: one payout with its shipments. */
	"billing.remittance": { params: RouteParams<Routes["billing.remittance"]>; result: PayoutDetail };
	/** GET /v1/remittances/{id}/export.csv: the payout's shipments as CSV (the action answers the text). */
	"billing.remittanceCsv": { params: RouteParams<Routes["billing.remittanceCsv"]>; result: string };
	/** POST /v1/ops/payout-cycles (ops; the timer too): runs the payout cycle of a date. */
	"billing.runPayoutCycle": {
		params: RouteParams<Routes["billing.runPayoutCycle"]>;
		result: PayoutCycleResult;
	};
	/** POST /v1/ops/remittances/{id}/paid (ops): marks a payout paid with the bank's UTR. */
	"billing.markPayoutPaid": { params: RouteParams<Routes["billing.markPayoutPaid"]>; result: Payout };
	"billing.reconcileRemittance": {
		params: RouteParams<Routes["billing.reconcileRemittance"]>;
		result: RemittanceReport;
	};
}

/** billing emits no events: its state crosses services through outboxes only. */
export type BillingEvents = Record<never, never>;
