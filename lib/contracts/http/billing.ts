/**
 * The HTTP routes of the `billing` service, one definition each (issue 26,
 * issue 27; lib/platform/openapi/route.ts, docs/ARCHITECTURE.md §9): the
 * wallet (ours; docs/decisions/0020-wallet.md, moved from booking by
 * docs/decisions/0101-billing-service.md with its path, answer and
 * operationId unchanged for clients).
 *
 * The wallet's query is validated by hand (lib/billing/wallet.ts
 * `parseWalletQuery`) and documented as written (`queryParams`). The ops
 * route of couriers' remittance files (docs/decisions/0102-cod-remittance.md,
 * 0103-ops-routes.md) takes the ops token; its body is the validator schema
 * {@link REMITTANCE_BODY}.
 */
import { CURSOR_UNRECOGNISED } from "../../platform/cursor";
import { csvAttachment, ID_PATH_SCHEMA, json, queryParam } from "../../platform/openapi/components";
import { int, nullableStr, PAGINATION, rupees, str } from "../../platform/openapi/helpers";
import { defineRoutes, type RouteError } from "../../platform/openapi/route";
import type { JsonSchema } from "../../platform/openapi/types";
import {
	COD_EXCEPTION_KINDS,
	DEFAULT_WEIGHT_TOLERANCE,
	DISCREPANCIES_DEFAULT_LIMIT,
	DISCREPANCIES_MAX_LIMIT,
	DISCREPANCY_RESPONSE_DAYS,
	DISCREPANCY_STATUSES,
	DISPUTE_MAX_IMAGE_BYTES,
	DISPUTE_MAX_IMAGES,
	DISPUTE_MAX_REASON,
	EARLY_COD_DELAY_DAYS,
	LEDGER_KINDS,
	MAX_EXCEPTION_LINES,
	PAYOUT_DELAY_DAYS,
	PAYOUT_DELAY_MAX_DAYS,
	PAYOUT_STATUSES,
	REMITTANCES_DEFAULT_LIMIT,
	REMITTANCES_MAX_LIMIT,
	WALLET_DEFAULT_LIMIT,
	WALLET_MAX_LIMIT,
	WEEKDAYS,
	WEIGHT_EXCEPTION_KINDS,
} from "../billing";

/** Access of a route any authenticated role may call (read-only roles included). */
const ANY_ROLE = { auth: true } as const;

/** 200 of `GET /v1/wallet` (docs/decisions/0020-wallet.md; lib/contracts/billing.ts `WalletAnswer`). */
const WALLET_ANSWER: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: ["balance", "credit_limit", "data", "pagination"],
	properties: {
		balance: rupees("refunds − charges over the whole ledger (post-paid: negative = owed)."),
		credit_limit: {
			type: ["number", "null"],
			description: "the account's credit limit in rupees; null = no limit",
		},
		data: {
			type: "array",
			description: "wallet movements, newest first",
			items: {
				type: "object",
				additionalProperties: false,
				required: ["id", "kind", "amount", "order_id", "attempt_id", "awb_number", "note", "created_at"],
				properties: {
					id: int("movement id"),
					kind: {
						type: "string",
						enum: [...LEDGER_KINDS],
						description:
							"`charge` (a booked attempt) and `weight_discrepancy` (a weight discrepancy's extra charge, held when it opens) take from the balance; `refund` (a cancelled attempt), `weight_discrepancy_refund` (a dispute won) and `cod_settlement` (charges settled from a COD payout) add to it",
					},
					amount: rupees("positive amount of the movement."),
					order_id: {
						type: ["integer", "null"],
						description: "the order; null for an account-level movement (`cod_settlement`)",
					},
					attempt_id: {
						type: ["integer", "null"],
						description:
							"the booking attempt (a weight discrepancy's movements: the attempt that booked its AWB; null when unknown)",
					},
					awb_number: nullableStr("the AWB, when the booking had one"),
					note: nullableStr("free text"),
					created_at: str("UTC ISO-8601", { format: "date-time" }),
				},
			},
		},
		pagination: PAGINATION,
	},
};

/** Body of `POST /v1/ops/cod-remittances`: the courier's file as text, and its courier when known. */
export const REMITTANCE_BODY = {
	$$strict: "remove",
	csv: { type: "string", min: 1, max: 8 * 1024 * 1024 },
	logistic_id: { type: "number", integer: true, positive: true, optional: true, convert: true },
} as const;

/**
 * `exception_lines` of a courier file's reconciliation (remittance, weight):
 * the first {@link MAX_EXCEPTION_LINES} lines not accepted, each with its kind
 * (one of `kinds`) and the reason in words; all are stored.
 */
function exceptionLines(kinds: readonly string[]): JsonSchema {
	return {
		type: "array",
		description: `the first ${MAX_EXCEPTION_LINES} exceptions, in line order (all are stored)`,
		items: {
			type: "object",
			additionalProperties: false,
			required: ["line_no", "awb_number", "kind", "detail"],
			properties: {
				line_no: int("1 = the first line after the header"),
				awb_number: nullableStr("the line's AWB, when it has one"),
				kind: { type: "string", enum: [...kinds] },
				detail: str("why, in words"),
			},
		},
	};
}

/** 200 of `POST /v1/ops/cod-remittances` (lib/contracts/billing.ts `RemittanceReport`). */
const REMITTANCE_REPORT: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: [
		"remittance_id",
		"duplicate_file",
		"lines",
		"matched",
		"matched_amount",
		"exceptions",
		"exception_lines",
	],
	properties: {
		remittance_id: int("the file's id"),
		duplicate_file: {
			type: "boolean",
			description:
				"the same file (same bytes) was received before: this is its stored outcome, nothing changed",
		},
		lines: int("lines after the header"),
		matched: int("lines that paid a collected COD shipment (now `remitted`)"),
		matched_amount: rupees("sum of the matched lines."),
		exceptions: int("lines recorded as reconciliation exceptions"),
		exception_lines: exceptionLines(COD_EXCEPTION_KINDS),
	},
};

/** Body of `POST /v1/ops/remittances/{id}/paid`: the bank transfer's UTR. */
export const PAYOUT_PAID_BODY = {
	$$strict: "remove",
	utr: { type: "string", min: 1, max: 64, pattern: /^[A-Za-z0-9-]+$/ },
} as const;

/** Body of `PUT /v1/remittances/settings`: every field optional (left out: its default). */
export const PAYOUT_SETTINGS_BODY = {
	$$strict: "remove",
	cycle_days: {
		type: "array",
		items: { type: "enum", values: [...WEEKDAYS] },
		min: 1,
		max: 7,
		unique: true,
		optional: true,
	},
	delay_days: {
		type: "number",
		integer: true,
		min: PAYOUT_DELAY_DAYS,
		max: PAYOUT_DELAY_MAX_DAYS,
		optional: true,
	},
	early_cod: { type: "boolean", optional: true },
	settle_charges_from_cod: { type: "boolean", optional: true },
} as const;

const PAYOUT_SETTINGS: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: [
		"cycle_days",
		"delay_days",
		"early_cod",
		"early_cod_delay_days",
		"early_cod_fee_bp",
		"settle_charges_from_cod",
		"next_payout_date",
	],
	properties: {
		cycle_days: {
			type: "array",
			items: { type: "string", enum: [...WEEKDAYS] },
			description: "week days (IST) payouts are made on",
		},
		delay_days: int("a shipment is paid in the first cycle at least this many days after delivery"),
		early_cod: { type: "boolean", description: "paid `early_cod_delay_days` after delivery, for the fee" },
		early_cod_delay_days: int("days after delivery under early COD"),
		early_cod_fee_bp: int("the early-COD fee, basis points of the gross COD (150 = 1.5 %)"),
		settle_charges_from_cod: {
			type: "boolean",
			description: "each payout first settles what the wallet owes (its negative balance)",
		},
		next_payout_date: str("the next cycle day (IST)", { format: "date" }),
	},
};

/** Body of `POST /v1/ops/payout-cycles`: the cycle's IST date, default today. */
export const PAYOUT_CYCLE_BODY = {
	$$strict: "remove",
	cycle_date: { type: "string", optional: true, pattern: /^\d{4}-\d{2}-\d{2}$/ },
} as const;

/** A payout (lib/contracts/billing.ts `Payout`). */
const PAYOUT_PROPS: Record<string, JsonSchema> = {
	id: int("payout id"),
	cycle_date: str("the payout cycle, IST date", { format: "date" }),
	shipments: int("COD shipments it pays"),
	gross_cod: rupees("COD the couriers remitted for them."),
	deductions: rupees("early_cod_fee + settled_charges."),
	early_cod_fee: rupees("the early-COD fee (0 unless the account chose early COD)."),
	settled_charges: rupees(
		"shipping charges settled from this payout (credited to the wallet as `cod_settlement`).",
	),
	net: rupees("paid to you."),
	status: { type: "string", enum: [...PAYOUT_STATUSES], description: "`scheduled` until paid, then `paid`" },
	utr: nullableStr("the bank transfer's UTR, once paid"),
	paid_at: {
		type: ["string", "null"],
		format: "date-time",
		description: "when ops recorded the payment (UTC)",
	},
	created_at: str("when the cycle made it (UTC)", { format: "date-time" }),
};
const PAYOUT: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: Object.keys(PAYOUT_PROPS),
	properties: PAYOUT_PROPS,
};
const PAYOUT_DETAIL: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: [...Object.keys(PAYOUT_PROPS), "shipment_lines"],
	properties: {
		...PAYOUT_PROPS,
		shipment_lines: {
			type: "array",
			description: "the COD shipments it pays, oldest delivery first",
			items: {
				type: "object",
				additionalProperties: false,
				required: [
					"awb_number",
					"order_id",
					"cod_amount",
					"collected_at",
					"remittance_reference",
					"remitted_on",
				],
				properties: {
					awb_number: str("AWB"),
					order_id: int("the order"),
					cod_amount: rupees("the COD amount collected."),
					collected_at: str("when delivered (UTC)", { format: "date-time" }),
					remittance_reference: str("the courier's remittance that paid it"),
					remitted_on: str("that remittance's date", { format: "date" }),
				},
			},
		},
	},
};
const MONEY_COUNT = (what: string, count: string): JsonSchema => ({
	type: "object",
	additionalProperties: false,
	required: [count, "amount"],
	description: what,
	properties: { [count]: int(count), amount: rupees("rupees.") },
});
const SUMMARY: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: ["collected", "remitted", "scheduled", "next_payout"],
	properties: {
		collected: MONEY_COUNT("delivered: the couriers hold the cash", "shipments"),
		remitted: MONEY_COUNT("the couriers paid it; not in a payout yet", "shipments"),
		scheduled: MONEY_COUNT("in payouts not paid yet", "payouts"),
		next_payout: {
			type: "object",
			additionalProperties: false,
			required: ["date", "amount"],
			description: "the next cycle day and what it would pay of what is remitted now",
			properties: { date: str("IST date", { format: "date" }), amount: rupees("rupees.") },
		},
	},
};
const CYCLE_RESULT: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: ["cycle_date", "payouts", "shipments", "amount"],
	properties: {
		cycle_date: str("the cycle run (IST)", { format: "date" }),
		payouts: int("payouts made by this run (0: nothing new to pay)"),
		shipments: int("shipments they pay"),
		amount: rupees("their net."),
	},
};

/** Access of the merchant's discrepancy decisions: read-only roles are refused (403 `Read-only role`). */
const BILLING_WRITE = { writes: true, capability: "billing.write" } as const;

const MEASURED: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: ["weight", "length", "width", "height", "chargeable_weight"],
	properties: {
		weight: { type: "number", description: "dead weight, kg" },
		length: { type: ["number", "null"], description: "cm, null when not given" },
		width: { type: ["number", "null"], description: "cm" },
		height: { type: ["number", "null"], description: "cm" },
		chargeable_weight: {
			type: "number",
			description: "kg billed: max(dead, volumetric L×W×H/5000) raised to the rate card's slab",
		},
	},
};

/** A weight discrepancy (lib/contracts/billing.ts `WeightDiscrepancy`). */
const DISCREPANCY: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: [
		"id",
		"awb_number",
		"order_id",
		"logistic_id",
		"status",
		"declared",
		"charged",
		"slab_difference",
		"extra_charge",
		"opened_at",
		"respond_by",
		"dispute_reason",
		"disputed_at",
		"images",
		"resolution_note",
		"closed_at",
	],
	properties: {
		id: int("discrepancy id"),
		awb_number: str("AWB"),
		order_id: int("the order"),
		logistic_id: int("the courier"),
		status: {
			type: "string",
			enum: [...DISCREPANCY_STATUSES],
			description:
				"`open` (the extra charge is held; accept or dispute it), `accepted`, `disputed` (ops decide), `won` (the hold refunded), `lost` (the hold is the charge), `auto_accepted` (unanswered)",
		},
		declared: { ...MEASURED, description: "what the order declared" },
		charged: { ...MEASURED, description: "what the courier weighed and charged" },
		slab_difference: { type: "number", description: "charged − declared chargeable weight, kg" },
		extra_charge: rupees(
			"the extra charge (the courier's rate card, GST included), held in the wallet while open.",
		),
		opened_at: str("UTC", { format: "date-time" }),
		respond_by: str(`the end of the ${DISCREPANCY_RESPONSE_DAYS} days to accept or dispute (UTC)`, {
			format: "date-time",
		}),
		dispute_reason: nullableStr("the reason given with the dispute"),
		disputed_at: { type: ["string", "null"], format: "date-time", description: "UTC" },
		images: {
			type: "array",
			description: "the dispute's images (stored without metadata)",
			items: {
				type: "object",
				additionalProperties: false,
				required: ["n", "content_type", "bytes", "width", "height", "url"],
				properties: {
					n: int("1–5"),
					content_type: { type: "string", enum: ["image/jpeg", "image/png"] },
					bytes: int("size"),
					width: int("pixels"),
					height: int("pixels"),
					url: str("its path (GET with your token)"),
				},
			},
		},
		resolution_note: nullableStr("ops' words on a won or lost dispute"),
		closed_at: {
			type: ["string", "null"],
			format: "date-time",
			description: "when it reached a final status (UTC)",
		},
	},
};

/** Body of `POST /v1/ops/weight-reports`: the courier's weight file as text, and its courier when known. */
export const WEIGHT_REPORT_BODY = {
	$$strict: "remove",
	csv: { type: "string", min: 1, max: 8 * 1024 * 1024 },
	logistic_id: { type: "number", integer: true, positive: true, optional: true, convert: true },
} as const;

/** Body of `POST /v1/ops/weight-discrepancies/{id}/resolve`. */
export const RESOLVE_BODY = {
	$$strict: "remove",
	outcome: { type: "enum", values: ["won", "lost"] },
	note: { type: "string", optional: true, max: 1000, trim: true },
} as const;

/** Body of `PUT /v1/ops/accounts/{sender_id}/weight-tolerance`. */
export const TOLERANCE_BODY = {
	$$strict: "remove",
	grams: { type: "number", integer: true, min: 0, max: 100_000 },
	percent: { type: "number", integer: true, min: 0, max: 100 },
} as const;

const WEIGHT_REPORT: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: [
		"report_id",
		"duplicate_file",
		"lines",
		"opened",
		"opened_amount",
		"within_tolerance",
		"same_slab",
		"exceptions",
		"exception_lines",
	],
	properties: {
		report_id: int("the file's id"),
		duplicate_file: {
			type: "boolean",
			description: "the same bytes were received before: their stored outcome",
		},
		lines: int("lines after the header"),
		opened: int("discrepancies opened (extra charges held)"),
		opened_amount: rupees("their extra charges."),
		within_tolerance: int("lines within the account's tolerance"),
		same_slab: int("lines beyond tolerance that cost nothing more (the same slab)"),
		exceptions: int("lines not matched"),
		exception_lines: exceptionLines(WEIGHT_EXCEPTION_KINDS),
	},
};

const DISCREPANCY_ID = { id: { description: "the discrepancy id", schema: ID_PATH_SCHEMA } };

/** The `status` member of a 409 on a discrepancy: the status it is in. */
const STATUS_EXTRA: Record<string, JsonSchema> = {
	status: { type: "string", enum: [...DISCREPANCY_STATUSES] },
};
/** 409 `discrepancy_not_open` (accept, dispute). */
const NOT_OPEN: RouteError = { code: "discrepancy_not_open", extra: STATUS_EXTRA };

/** What the merchant's and ops' image routes share: the path, the answer, the errors. */
const IMAGE_ROUTE = {
	path: { ...DISCREPANCY_ID, n: { description: `1–${DISPUTE_MAX_IMAGES}`, schema: ID_PATH_SCHEMA } },
	responses: {
		"200": {
			description: "The image (JPEG or PNG, no metadata).",
			content: {
				"image/jpeg": { schema: { type: "string", contentMediaType: "image/jpeg" } },
				"image/png": { schema: { type: "string", contentMediaType: "image/png" } },
			},
		},
	},
	errors: [
		{ code: "validation_failed", when: "`id` or `n` not a positive integer" },
		"discrepancy_not_found",
	],
} as const;

/** The billing routes, keyed by the action that answers each. */
export const BILLING_ROUTES = defineRoutes({
	"billing.wallet": {
		route: "GET /v1/wallet",
		access: ANY_ROLE,
		tag: "shipping",
		operationId: "booking_wallet",
		summary: "The account's post-paid wallet",
		description:
			"Ours (docs/decisions/0020-wallet.md; spec §2.12, §4.8): balance, credit limit and the ledger's movements (one charge per booked attempt, one refund per cancelled one), newest first, cursor-paged. Money in rupees. Any authenticated role (read-only roles may read). Served by the billing service, which records every movement booking makes (through its outbox): a movement shows here moments after the booking or cancel that made it. Query validated by hand (lib/billing/wallet.ts `parseWalletQuery`).",
		queryParams: [
			queryParam("limit", `page size, integer 1–${WALLET_MAX_LIMIT}, default ${WALLET_DEFAULT_LIMIT}`, {
				type: "string",
				pattern: "^[0-9]+$",
				default: String(WALLET_DEFAULT_LIMIT),
			}),
			queryParam("cursor", "a `nextCursor` of this route for this account; absent or empty = first page"),
		],
		responses: { "200": json("Balance and a page of movements.", WALLET_ANSWER) },
		errors: [
			{
				code: "validation_failed",
				when: `with \`details\` \`limit: must be an integer from 1 to ${WALLET_MAX_LIMIT}\``,
			},
			{
				code: CURSOR_UNRECOGNISED,
				when: "not a cursor this route issued to this account (code = message).",
			},
		],
	},
	"billing.reconcileRemittance": {
		route: "POST /v1/ops/cod-remittances",
		kind: "ops",
		tag: "ops",
		operationId: "ops_reconcileCodRemittance",
		summary: "Reconcile a courier's COD remittance file",
		description:
			"Ours (docs/decisions/0102-cod-remittance.md, 0103-ops-routes.md). Ops token only. `csv`: the courier's file as sent, header `awb_number,amount,remittance_reference,remittance_date` (rupees with at most two decimals, `YYYY-MM-DD`; columns in any order, extra columns ignored); `logistic_id`: the file's courier, when known (an AWB of another courier is then `unknown_awb`). Each line pays one collected COD shipment with exactly its COD amount (it becomes `remitted` with the courier's reference and date) or is recorded as a reconciliation exception: `amount_mismatch`, `unknown_awb`, `not_delivered`, `duplicate` (earlier in the file, or remitted before), `invalid_line`. One transaction; the same file sent again answers its stored outcome with `duplicate_file: true`.",
		body: REMITTANCE_BODY,
		responses: { "200": json("The file's reconciliation.", REMITTANCE_REPORT) },
		errors: ["validation_failed", "invalid_remittance_file"],
	},
	"billing.remittances": {
		route: "GET /v1/remittances",
		access: ANY_ROLE,
		tag: "shipping",
		operationId: "billing_remittances",
		summary: "The account's COD payouts",
		description: `Ours (docs/decisions/0104-cod-payouts.md): your COD payouts, newest first, cursor-paged. A payout is made on each of your cycle days (default Tuesday and Friday, IST; \`GET /v1/remittances/settings\`) of the COD shipments the couriers remitted and that were delivered at least your delay before (default ${PAYOUT_DELAY_DAYS} days; early COD ${EARLY_COD_DELAY_DAYS}), less its deductions (the early-COD fee, charges settled from COD); \`scheduled\` until paid, then \`paid\` with the bank's UTR. Money in rupees. Any authenticated role. Query validated by hand.`,
		queryParams: [
			queryParam(
				"limit",
				`page size, integer 1–${REMITTANCES_MAX_LIMIT}, default ${REMITTANCES_DEFAULT_LIMIT}`,
				{
					type: "string",
					pattern: "^[0-9]+$",
					default: String(REMITTANCES_DEFAULT_LIMIT),
				},
			),
			queryParam("status", "only payouts of this status", { type: "string", enum: [...PAYOUT_STATUSES] }),
			queryParam(
				"cursor",
				"a `nextCursor` of this route for this account and status; absent or empty = first page",
			),
		],
		responses: {
			"200": json("A page of payouts.", {
				type: "object",
				additionalProperties: false,
				required: ["data", "pagination"],
				properties: { data: { type: "array", items: PAYOUT }, pagination: PAGINATION },
			}),
		},
		errors: [
			{
				code: "validation_failed",
				when: "with `details`: `limit: …` or `status: must be scheduled or paid`",
			},
			{ code: CURSOR_UNRECOGNISED, when: "not a cursor this route issued to this account for this status." },
		],
	},
	"billing.remittanceSummary": {
		route: "GET /v1/remittances/summary",
		access: ANY_ROLE,
		tag: "shipping",
		operationId: "billing_remittanceSummary",
		summary: "Where the account's COD money is",
		description:
			"Ours (docs/decisions/0104-cod-payouts.md): COD collected by the couriers and not remitted yet, remitted and not in a payout yet, in payouts not paid yet, and the next cycle day with what it would pay now. Money in rupees. Any authenticated role.",
		responses: { "200": json("The summary.", SUMMARY) },
	},
	"billing.remittanceSettings": {
		route: "GET /v1/remittances/settings",
		access: ANY_ROLE,
		tag: "shipping",
		operationId: "billing_remittanceSettings",
		summary: "The account's COD payout settings",
		description: `Ours (docs/decisions/0104-cod-payouts.md): the week days payouts are made on (default Tuesday and Friday), the delay after delivery (default ${PAYOUT_DELAY_DAYS} days), early COD (paid ${EARLY_COD_DELAY_DAYS} days after delivery for a fee in basis points of the gross) and whether payouts settle what the wallet owes; with the next payout date. Any authenticated role.`,
		responses: { "200": json("The settings.", PAYOUT_SETTINGS) },
	},
	"billing.setRemittanceSettings": {
		route: "PUT /v1/remittances/settings",
		access: BILLING_WRITE,
		tag: "shipping",
		operationId: "billing_setRemittanceSettings",
		summary: "Change the account's COD payout settings",
		description: `Ours (docs/decisions/0104-cod-payouts.md): replaces the settings; a field left out takes its default (\`cycle_days\` Tuesday and Friday, \`delay_days\` ${PAYOUT_DELAY_DAYS}, \`early_cod\` false, \`settle_charges_from_cod\` false). \`delay_days\` ${PAYOUT_DELAY_DAYS}–${PAYOUT_DELAY_MAX_DAYS} (a shorter wait is early COD, which costs its fee). With \`settle_charges_from_cod\`, each payout first pays what the wallet owes (at most the payout), credited to the wallet as a \`cod_settlement\` movement. Applies from the next cycle run. Capability \`billing.write\`; read-only roles are refused.`,
		body: PAYOUT_SETTINGS_BODY,
		bodyOptional: true,
		responses: { "200": json("The settings now.", PAYOUT_SETTINGS) },
		errors: [
			{
				code: "validation_failed",
				when: `with \`details\`: cycle_days (1–7 distinct week day names), delay_days (${PAYOUT_DELAY_DAYS}–${PAYOUT_DELAY_MAX_DAYS}), early_cod and settle_charges_from_cod (booleans)`,
			},
		],
	},
	"billing.remittance": {
		route: "GET /v1/remittances/:id",
		access: ANY_ROLE,
		tag: "shipping",
		operationId: "billing_remittance",
		summary: "A COD payout with its shipments",
		description:
			"Ours (docs/decisions/0104-cod-payouts.md): one of your payouts with the shipments it pays (AWB, order, COD amount, delivery time, the courier's remittance). Money in rupees. Any authenticated role.",
		path: { id: { description: "the payout id", schema: ID_PATH_SCHEMA } },
		responses: { "200": json("The payout.", PAYOUT_DETAIL) },
		errors: [
			{ code: "validation_failed", when: "with `details` `id: must be a positive integer`" },
			"remittance_not_found",
		],
	},
	"billing.remittanceCsv": {
		route: "GET /v1/remittances/:id/export.csv",
		access: ANY_ROLE,
		tag: "shipping",
		operationId: "billing_remittanceCsv",
		summary: "A COD payout's shipments, as CSV",
		description:
			"Ours (docs/decisions/0104-cod-payouts.md): one line per shipment of the payout — payout_id, cycle_date, awb_number, order_id, cod_amount (rupees, two decimals), collected_at (UTC), remittance_reference, remitted_on, payout_status, utr. UTF-8 with a byte-order mark, CRLF lines, RFC 4180 quoting; every cell starting with `=`, `+`, `-` (not a number), `@`, tab or CR is prefixed with `'` so no spreadsheet evaluates it. Answered as an attachment. Any authenticated role.",
		path: { id: { description: "the payout id", schema: ID_PATH_SCHEMA } },
		responses: {
			"200": csvAttachment(
				"The payout's shipments, as an attachment.",
				"payout-<id>-<cycle_date>.csv",
				"shipment",
			),
		},
		errors: [
			{ code: "validation_failed", when: "with `details` `id: must be a positive integer`" },
			"remittance_not_found",
		],
	},
	"billing.runPayoutCycle": {
		route: "POST /v1/ops/payout-cycles",
		kind: "ops",
		tag: "ops",
		operationId: "ops_runPayoutCycle",
		summary: "Run a payout cycle",
		description:
			"Ours (docs/decisions/0104-cod-payouts.md). Ops token only. Makes the payouts of `cycle_date` (IST, default today): per account whose cycle days include that week day (default Tuesday and Friday), its remitted COD shipments delivered before its cut-off (its delay, or the early-COD delay) and in no payout yet, less its deductions. Idempotent per account and cycle: a second run makes no payout for an account that has one of that cycle. The service runs today's cycle by itself every day.",
		body: PAYOUT_CYCLE_BODY,
		responses: { "200": json("What the run made.", CYCLE_RESULT) },
		errors: [{ code: "validation_failed", when: "the cycle date is not a real calendar day (YYYY-MM-DD)" }],
	},
	"billing.discrepancies": {
		route: "GET /v1/weight-discrepancies",
		access: ANY_ROLE,
		tag: "shipping",
		operationId: "billing_discrepancies",
		summary: "The account's weight discrepancies",
		description: `Ours (docs/decisions/0105-weight-discrepancies.md): the shipments a courier weighed heavier than declared beyond your tolerance (default max(${DEFAULT_WEIGHT_TOLERANCE.grams} g, ${DEFAULT_WEIGHT_TOLERANCE.percent} %)) and at a higher charge, newest first, cursor-paged. Each holds its extra charge in the wallet while \`open\`; accept or dispute it within ${DISCREPANCY_RESPONSE_DAYS} days, else it is \`auto_accepted\`. Any authenticated role. Query validated by hand.`,
		queryParams: [
			queryParam(
				"limit",
				`page size, integer 1–${DISCREPANCIES_MAX_LIMIT}, default ${DISCREPANCIES_DEFAULT_LIMIT}`,
				{ type: "string", pattern: "^[0-9]+$", default: String(DISCREPANCIES_DEFAULT_LIMIT) },
			),
			queryParam("status", "only this status", { type: "string", enum: [...DISCREPANCY_STATUSES] }),
			queryParam("from", "opened on or after this IST day (YYYY-MM-DD)", { type: "string", format: "date" }),
			queryParam("to", "opened on or before this IST day (YYYY-MM-DD)", { type: "string", format: "date" }),
			queryParam("awb_number", "only this AWB"),
			queryParam(
				"cursor",
				"a `nextCursor` of this route with the same filters; absent or empty = first page",
			),
		],
		responses: {
			"200": json("A page of discrepancies.", {
				type: "object",
				additionalProperties: false,
				required: ["data", "pagination"],
				properties: { data: { type: "array", items: DISCREPANCY }, pagination: PAGINATION },
			}),
		},
		errors: [
			{ code: "validation_failed", when: "with `details`: `limit`, `status`, `from`, `to` or `awb_number`" },
			{
				code: CURSOR_UNRECOGNISED,
				when: "not a cursor this route issued to this account for these filters.",
			},
		],
	},
	"billing.discrepancy": {
		route: "GET /v1/weight-discrepancies/:id",
		access: ANY_ROLE,
		tag: "shipping",
		operationId: "billing_discrepancy",
		summary: "A weight discrepancy",
		description:
			"Ours (docs/decisions/0105-weight-discrepancies.md): both sides' weights and dimensions, the slab difference, the extra charge, its status and the dispute with its images. Any authenticated role.",
		path: DISCREPANCY_ID,
		responses: { "200": json("The discrepancy.", DISCREPANCY) },
		errors: [{ code: "validation_failed", when: "`id` not a positive integer" }, "discrepancy_not_found"],
	},
	"billing.discrepancyImage": {
		route: "GET /v1/weight-discrepancies/:id/images/:n",
		access: ANY_ROLE,
		tag: "shipping",
		operationId: "billing_discrepancyImage",
		summary: "An image of a weight dispute",
		description:
			"Ours (docs/decisions/0105-weight-discrepancies.md): image `n` of the dispute, as stored (no metadata). Any authenticated role.",
		...IMAGE_ROUTE,
	},
	"billing.acceptDiscrepancy": {
		route: "POST /v1/weight-discrepancies/:id/accept",
		access: BILLING_WRITE,
		tag: "shipping",
		operationId: "billing_acceptDiscrepancy",
		summary: "Accept a weight discrepancy",
		description:
			"Ours (docs/decisions/0105-weight-discrepancies.md): you accept the courier's weight; the held extra charge stays as the charge. Only an `open` discrepancy. Capability `billing.write`; read-only roles are refused. No body.",
		path: DISCREPANCY_ID,
		responses: { "200": json("The discrepancy, accepted.", DISCREPANCY) },
		errors: [
			{ code: "validation_failed", when: "`id` not a positive integer" },
			"discrepancy_not_found",
			NOT_OPEN,
		],
	},
	"billing.disputeDiscrepancy": {
		route: "POST /v1/weight-discrepancies/:id/dispute",
		kind: "upload",
		access: BILLING_WRITE,
		tag: "shipping",
		operationId: "billing_disputeDiscrepancy",
		summary: "Dispute a weight discrepancy",
		description: `Ours (docs/decisions/0105-weight-discrepancies.md). \`multipart/form-data\` with \`reason\` (10–${DISPUTE_MAX_REASON} characters) and 1–${DISPUTE_MAX_IMAGES} file parts \`images\` (photos of the parcel on a scale, its dimensions): JPEG or PNG, recognised by their bytes, at most ${DISPUTE_MAX_IMAGE_BYTES} bytes each; each is decoded and stored again without metadata (EXIF, GPS). Parts in any order; nothing is stored unless the whole form is accepted. Only an \`open\` discrepancy; it becomes \`disputed\` and ops decide (\`won\`: the hold is refunded; \`lost\`: it stays the charge). Capability \`billing.write\`; read-only roles are refused.`,
		path: DISCREPANCY_ID,
		requestBody: {
			required: true,
			content: {
				"multipart/form-data": {
					schema: {
						type: "object",
						required: ["reason", "images"],
						properties: {
							reason: str(`why the courier's weight is wrong, 10–${DISPUTE_MAX_REASON} characters`),
							images: {
								type: "array",
								minItems: 1,
								maxItems: DISPUTE_MAX_IMAGES,
								items: { type: "string", contentMediaType: "image/jpeg" },
								description: `JPEG or PNG, at most ${DISPUTE_MAX_IMAGE_BYTES} bytes each`,
							},
						},
					},
				},
			},
		},
		responses: { "200": json("The discrepancy, disputed.", DISCREPANCY) },
		errors: [
			{ code: "validation_failed", when: "`id` not a positive integer" },
			"invalid_dispute",
			{ code: "image_too_large", extra: { limit_bytes: int("bytes") } },
			"discrepancy_not_found",
			NOT_OPEN,
		],
	},
	"billing.resolveDiscrepancy": {
		route: "POST /v1/ops/weight-discrepancies/:id/resolve",
		kind: "ops",
		tag: "ops",
		operationId: "ops_resolveDiscrepancy",
		summary: "Resolve a disputed weight discrepancy",
		description:
			"Ours (docs/decisions/0105-weight-discrepancies.md). Ops token only. `won`: the merchant was right, the held extra charge is refunded (a `weight_discrepancy_refund` wallet movement); `lost`: the courier was right, the hold stays the charge. Only a `disputed` one; the same outcome again answers it unchanged.",
		path: DISCREPANCY_ID,
		body: RESOLVE_BODY,
		responses: { "200": json("The discrepancy, resolved.", DISCREPANCY) },
		errors: [
			{ code: "validation_failed", when: "`id`, `outcome` (won or lost) or `note` (≤ 1000 characters)" },
			"discrepancy_not_found",
			{ code: "discrepancy_not_disputed", extra: STATUS_EXTRA },
		],
	},
	"billing.opsDiscrepancyImage": {
		route: "GET /v1/ops/weight-discrepancies/:id/images/:n",
		kind: "ops",
		tag: "ops",
		operationId: "ops_discrepancyImage",
		summary: "An image of any account's weight dispute",
		description:
			"Ours (docs/decisions/0105-weight-discrepancies.md). Ops token only: image `n` of the dispute, to decide it.",
		...IMAGE_ROUTE,
	},
	"billing.reconcileWeights": {
		route: "POST /v1/ops/weight-reports",
		kind: "ops",
		tag: "ops",
		operationId: "ops_reconcileWeights",
		summary: "Reconcile a courier's weight file",
		description: `Ours (docs/decisions/0105-weight-discrepancies.md). Ops token only. \`csv\`: the courier's weight (billing) file, header \`awb_number,charged_weight_kg,length_cm,width_cm,height_cm\` (kg with at most 3 decimals; the dimensions in cm all given or all empty; columns in any order, extra ones ignored); \`logistic_id\`: the file's courier, when known. Each line is compared with the order's declared weight (billable = max(dead, L×W×H/5000)): within the account's tolerance (default max(${DEFAULT_WEIGHT_TOLERANCE.grams} g, ${DEFAULT_WEIGHT_TOLERANCE.percent} %)) nothing opens; beyond it both weights are priced with the courier's rate card and a higher charge opens a discrepancy, its extra charge held in the merchant's wallet, webhook \`weight_discrepancy.opened\`. Exceptions: \`invalid_line\`, \`unknown_awb\`, \`duplicate\` (earlier in the file, or a discrepancy opened before), \`not_priced\`. The same file again answers its stored outcome.`,
		body: WEIGHT_REPORT_BODY,
		responses: { "200": json("The file's reconciliation.", WEIGHT_REPORT) },
		errors: ["validation_failed", "invalid_weight_file", "service_unavailable"],
	},
	"billing.setWeightTolerance": {
		route: "PUT /v1/ops/accounts/:sender_id/weight-tolerance",
		kind: "ops",
		tag: "ops",
		operationId: "ops_setWeightTolerance",
		summary: "Set an account's weight tolerance",
		description: `Ours (docs/decisions/0105-weight-discrepancies.md). Ops token only. A courier's billable weight may exceed the declared one by max(\`grams\`, \`percent\` % of it) before a discrepancy opens; default ${DEFAULT_WEIGHT_TOLERANCE.grams} g and ${DEFAULT_WEIGHT_TOLERANCE.percent} %. Applies to weight files received afterwards.`,
		path: { sender_id: { description: "the account", schema: ID_PATH_SCHEMA } },
		body: TOLERANCE_BODY,
		responses: {
			"200": json("The tolerance.", {
				type: "object",
				additionalProperties: false,
				required: ["sender_id", "grams", "percent"],
				properties: { sender_id: int("the account"), grams: int("grams"), percent: int("percent") },
			}),
		},
		errors: [{ code: "validation_failed", when: "`sender_id`, `grams` (0–100000) or `percent` (0–100)" }],
	},
	"billing.markPayoutPaid": {
		route: "POST /v1/ops/remittances/:id/paid",
		kind: "ops",
		tag: "ops",
		operationId: "ops_markPayoutPaid",
		summary: "Mark a COD payout paid",
		description:
			"Ours (docs/decisions/0104-cod-payouts.md). Ops token only. Records the bank transfer's UTR: the payout becomes `paid`, its shipments' `cod_status` `paid`. The same UTR again answers the payout unchanged.",
		path: { id: { description: "the payout id", schema: ID_PATH_SCHEMA } },
		body: PAYOUT_PAID_BODY,
		responses: { "200": json("The payout, paid.", PAYOUT) },
		errors: [
			{ code: "validation_failed", when: "`id` or `utr` (1–64 letters, digits, `-`)" },
			"remittance_not_found",
			{ code: "payout_already_paid", when: "paid before with another UTR" },
		],
	},
});
