/**
 * Contract of the `billing` service (issue 27; docs/decisions/0101-billing-service.md):
 * every rupee of an account. Today: the wallet ledger — the charge of each
 * booked attempt and the refund of each cancelled one, recorded by booking
 * and delivered through its outbox — its balance, the credit limit booking
 * enforces (mirrored for display), and `GET /v1/wallet`. Money in rupees on
 * the wire (integer paise in the database), times ISO-8601 UTC.
 */
import type { RouteParams } from "../platform/openapi/route";
import type { UploadParams } from "./common";
import type { BILLING_ROUTES } from "./http/billing";

/** The billing route definitions (lib/contracts/http/billing.ts). */
type Routes = typeof BILLING_ROUTES;

/** Page size of `GET /v1/wallet` when `limit` is absent (movements). */
export const WALLET_DEFAULT_LIMIT = 20;
/** Largest `limit` of `GET /v1/wallet` (§4.8, §8: list endpoints take 1 to 1000). */
export const WALLET_MAX_LIMIT = 1000;

/**
 * The kinds of wallet movements (docs/decisions/0020-wallet.md,
 * 0105-weight-discrepancies.md): `charge` (a booked attempt) and
 * `weight_discrepancy` (the extra charge of a weight discrepancy, held when it
 * opens) take money; `refund` (a cancelled attempt) and
 * `weight_discrepancy_refund` (a dispute won: the hold given back) and
 * `cod_settlement` (shipping charges settled from a COD payout, for an
 * account that chose it; docs/decisions/0104-cod-payouts.md) give it.
 */
export const LEDGER_KINDS = [
	"charge",
	"refund",
	"weight_discrepancy",
	"weight_discrepancy_refund",
	"cod_settlement",
] as const;
/** One {@link LEDGER_KINDS} value. */
export type LedgerKind = (typeof LEDGER_KINDS)[number];
/** The kinds booking records (its outbox kind `ledger_entry`). */
export type BookingLedgerKind = "charge" | "refund";
/** The kinds that add to the balance (the others take from it). */
export const CREDIT_KINDS: readonly LedgerKind[] = ["refund", "weight_discrepancy_refund", "cod_settlement"];

/**
 * One movement as booking records it (booking's outbox kind `ledger_entry`,
 * delivered to `billing.recordEntries`): paise, idempotent on
 * `(attempt_id, kind)` — a movement delivered twice is recorded once.
 */
export interface LedgerEntryEvent {
	sender_id: number;
	attempt_id: number;
	order_id: number;
	kind: BookingLedgerKind;
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
	/** the order; null for an account-level movement (`cod_settlement`: a payout of many orders) */
	order_id: number | null;
	/** the booking attempt; for a weight discrepancy's movements the attempt that booked its AWB (null if unknown) */
	attempt_id: number | null;
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

/**
 * One COD status a shipment took, as billing's outbox delivers it to intake
 * (`intake.applyCodStatuses`; the orders list's `cod_status` filter):
 * `version` grows with every change of the AWB's status, so an older one
 * arriving late never overwrites a newer one.
 */
export interface CodStatusUpdate {
	awb_number: string;
	sender_id: number;
	order_id: number;
	cod_status: CodStatus;
	version: number;
}

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

/**
 * The columns of a courier's COD remittance file (docs/decisions/0102-cod-remittance.md): billing reads
 * them in any order (extra columns ignored); the sandbox simulator writes them in this order.
 */
export const REMITTANCE_COLUMNS = [
	"awb_number",
	"amount",
	"remittance_reference",
	"remittance_date",
] as const;

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
/** Days after delivery an early-COD account's shipments are paid out (IST calendar days), for a fee. */
export const EARLY_COD_DELAY_DAYS = 2;
/** Longest payout delay an account may choose (days after delivery). */
export const PAYOUT_DELAY_MAX_DAYS = 30;
/** Week days by `Date#getUTCDay` number (0 = Sunday), as the payout settings name them. */
export const WEEKDAYS = [
	"sunday",
	"monday",
	"tuesday",
	"wednesday",
	"thursday",
	"friday",
	"saturday",
] as const;
/** One {@link WEEKDAYS} value. */
export type Weekday = (typeof WEEKDAYS)[number];

/**
 * An account's payout settings (docs/decisions/0104-cod-payouts.md):
 * `GET`/`PUT /v1/remittances/settings`. An account that never set them has
 * the defaults (Tuesday and Friday, 7 days, no early COD, no settlement).
 */
export interface PayoutSettings {
	/** the week days (IST) payouts are made on */
	cycle_days: Weekday[];
	/** a shipment is paid in the first cycle at least this many days after delivery ({@link PAYOUT_DELAY_DAYS}–{@link PAYOUT_DELAY_MAX_DAYS}) */
	delay_days: number;
	/** early COD: paid {@link EARLY_COD_DELAY_DAYS} days after delivery, for `early_cod_fee_bp` of the gross */
	early_cod: boolean;
	early_cod_delay_days: number;
	/** the early-COD fee in basis points of the gross COD (1 bp = 0.01 %), deducted from the payout */
	early_cod_fee_bp: number;
	/** deduct what the account owes (the wallet's negative balance) from each payout */
	settle_charges_from_cod: boolean;
	/** the next cycle day (IST) under these settings */
	next_payout_date: string;
}

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
	/** early_cod_fee + settled_charges, rupees */
	deductions: number;
	/** the early-COD fee, rupees (0 unless the account chose early COD) */
	early_cod_fee: number;
	/** shipping charges settled from this payout (the wallet credited), rupees */
	settled_charges: number;
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

/**
 * The statuses of a weight discrepancy (docs/decisions/0105-weight-discrepancies.md):
 * `open` (the extra charge is held; the merchant may accept or dispute it
 * for {@link DISCREPANCY_RESPONSE_DAYS} days), `accepted` (by the merchant:
 * the hold is the charge), `disputed` (with a reason and images; ops decide),
 * `won` (ops agreed with the merchant: the hold is refunded), `lost` (ops
 * agreed with the courier: the hold is the charge), `auto_accepted`
 * (unanswered for {@link DISCREPANCY_RESPONSE_DAYS} days).
 */
export const DISCREPANCY_STATUSES = ["open", "accepted", "disputed", "won", "lost", "auto_accepted"] as const;
/** One {@link DISCREPANCY_STATUSES} value. */
export type DiscrepancyStatus = (typeof DISCREPANCY_STATUSES)[number];
/** Days an open discrepancy waits for the merchant before it is `auto_accepted`. */
export const DISCREPANCY_RESPONSE_DAYS = 7;
/** Default tolerance: a courier's weight within max(50 g, 10 % of ours) above ours opens nothing. */
export const DEFAULT_WEIGHT_TOLERANCE = { grams: 50, percent: 10 } as const;
/** Page size of `GET /v1/weight-discrepancies` when `limit` is absent. */
export const DISCREPANCIES_DEFAULT_LIMIT = 20;
/** Largest `limit` of `GET /v1/weight-discrepancies`. */
export const DISCREPANCIES_MAX_LIMIT = 1000;
/** Images of a dispute: at least one, at most this many. */
export const DISPUTE_MAX_IMAGES = 5;
/** Largest image of a dispute (bytes): 5 MB. */
export const DISPUTE_MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/** Longest dispute reason (characters, trimmed; at least 10). */
export const DISPUTE_MAX_REASON = 1000;

/** Weight and dimensions as measured by one side (kg, cm; dims null when not given). */
export interface MeasuredWeight {
	/** dead weight, kg */
	weight: number;
	length: number | null;
	width: number | null;
	height: number | null;
	/** the weight billed: max(dead, volumetric) raised to the rate card's slab, kg */
	chargeable_weight: number;
}

/** One image of a dispute as listed (its bytes at `url`). */
export interface DisputeImage {
	n: number;
	content_type: "image/jpeg" | "image/png";
	bytes: number;
	width: number;
	height: number;
	/** path of the image for the account's token: `/v1/weight-discrepancies/{id}/images/{n}` */
	url: string;
}

/** A weight discrepancy (rupees, kg, cm; times ISO-8601 UTC). */
export interface WeightDiscrepancy {
	id: number;
	awb_number: string;
	order_id: number;
	logistic_id: number;
	status: DiscrepancyStatus;
	/** what the order declared (our weight) */
	declared: MeasuredWeight;
	/** what the courier weighed and charged */
	charged: MeasuredWeight;
	/** charged − declared chargeable weight, kg (whole slabs) */
	slab_difference: number;
	/** the extra charge (rate card, GST included), rupees; held in the wallet while open */
	extra_charge: number;
	opened_at: string;
	/** the last day to accept or dispute (UTC): after it the discrepancy is `auto_accepted` */
	respond_by: string;
	/** the merchant's reason, once disputed */
	dispute_reason: string | null;
	disputed_at: string | null;
	images: DisputeImage[];
	/** ops' words on a won or lost dispute */
	resolution_note: string | null;
	/** when it left `open` / `disputed` for a final status */
	closed_at: string | null;
}

/** 200 of `GET /v1/weight-discrepancies` (§2.12 cursor envelope). */
export interface DiscrepancyPage {
	data: WeightDiscrepancy[];
	pagination: { mode: "cursor"; limit: number; nextCursor: string | null };
}

/**
 * The columns a courier's weight (billing) file must have, in any order
 * (extra columns ignored): kg with at most 3 decimals, the dimensions in cm
 * all given or all empty (docs/decisions/0105-weight-discrepancies.md).
 */
export const WEIGHT_FILE_COLUMNS = [
	"awb_number",
	"charged_weight_kg",
	"length_cm",
	"width_cm",
	"height_cm",
] as const;

/** Why a line of a courier's weight file opened nothing and is not simply within tolerance. */
export const WEIGHT_EXCEPTION_KINDS = ["invalid_line", "unknown_awb", "duplicate", "not_priced"] as const;
/** One {@link WEIGHT_EXCEPTION_KINDS} value. */
export type WeightExceptionKind = (typeof WEIGHT_EXCEPTION_KINDS)[number];

/** One exception line of a weight file. */
export interface WeightExceptionLine {
	line_no: number;
	awb_number: string | null;
	kind: WeightExceptionKind;
	detail: string;
}

/** The outcome of a courier weight file (`billing.reconcileWeights`). Money in rupees. */
export interface WeightReport {
	report_id: number;
	/** the same file (same bytes) was received before: this is its stored outcome */
	duplicate_file: boolean;
	lines: number;
	/** discrepancies opened (extra charges held) */
	opened: number;
	opened_amount: number;
	/** the courier's weight within the account's tolerance of ours */
	within_tolerance: number;
	/** beyond tolerance but in the same slab: no extra charge, nothing opened */
	same_slab: number;
	exceptions: number;
	/** the first {@link MAX_EXCEPTION_LINES} exceptions, in line order */
	exception_lines: WeightExceptionLine[];
}

/** An account's weight tolerance (`billing.setWeightTolerance`, ops). */
export interface WeightTolerance {
	sender_id: number;
	/** grams the courier's weight may exceed ours by */
	grams: number;
	/** percent of our weight it may exceed it by (the larger of the two applies) */
	percent: number;
}

/** What one run of the auto-accept job did. */
export interface AutoAcceptResult {
	auto_accepted: number;
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
	/** GET /v1/remittances/settings: the account's payout settings. */
	"billing.remittanceSettings": {
		params: RouteParams<Routes["billing.remittanceSettings"]>;
		result: PayoutSettings;
	};
	/** PUT /v1/remittances/settings (billing.write): the account's payout settings. */
	"billing.setRemittanceSettings": {
		params: RouteParams<Routes["billing.setRemittanceSettings"]>;
		result: PayoutSettings;
	};
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
	/** GET /v1/weight-discrepancies: the account's weight discrepancies, newest first. */
	"billing.discrepancies": { params: RouteParams<Routes["billing.discrepancies"]>; result: DiscrepancyPage };
	/** GET /v1/weight-discrepancies/{id}. */
	"billing.discrepancy": { params: RouteParams<Routes["billing.discrepancy"]>; result: WeightDiscrepancy };
	/** GET /v1/weight-discrepancies/{id}/images/{n}: one image of its dispute (the action answers the bytes). */
	"billing.discrepancyImage": { params: RouteParams<Routes["billing.discrepancyImage"]>; result: Buffer };
	/** POST /v1/weight-discrepancies/{id}/accept (billing.write). */
	"billing.acceptDiscrepancy": {
		params: RouteParams<Routes["billing.acceptDiscrepancy"]>;
		result: WeightDiscrepancy;
	};
	/** POST /v1/weight-discrepancies/{id}/dispute (billing.write; multipart: reason + 1–5 images). */
	"billing.disputeDiscrepancy": { params: UploadParams; result: WeightDiscrepancy };
	/** POST /v1/ops/weight-discrepancies/{id}/resolve (ops): a disputed one `won` or `lost`. */
	"billing.resolveDiscrepancy": {
		params: RouteParams<Routes["billing.resolveDiscrepancy"]>;
		result: WeightDiscrepancy;
	};
	/** GET /v1/ops/weight-discrepancies/{id}/images/{n} (ops): one image of any account's dispute. */
	"billing.opsDiscrepancyImage": {
		params: RouteParams<Routes["billing.opsDiscrepancyImage"]>;
		result: Buffer;
	};
	/** POST /v1/ops/weight-reports (ops; also internal): a courier's weight file; opens discrepancies. */
	"billing.reconcileWeights": {
		params: RouteParams<Routes["billing.reconcileWeights"]>;
		result: WeightReport;
	};
	/** PUT /v1/ops/accounts/{sender_id}/weight-tolerance (ops): an account's tolerance. */
	"billing.setWeightTolerance": {
		params: RouteParams<Routes["billing.setWeightTolerance"]>;
		result: WeightTolerance;
	};
	/** Internal (the auto-accept timer; tests): open discrepancies past their response window become `auto_accepted`. */
	"billing.autoAcceptDiscrepancies": { params: { now?: string }; result: AutoAcceptResult };
}

/** billing emits no events: its state crosses services through outboxes only. */
export type BillingEvents = Record<never, never>;
