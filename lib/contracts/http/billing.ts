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
import { ID_PATH_SCHEMA, json, queryParam } from "../../platform/openapi/components";
import { int, nullableStr, PAGINATION, rupees, str } from "../../platform/openapi/helpers";
import { defineRoutes } from "../../platform/openapi/route";
import type { JsonSchema } from "../../platform/openapi/types";
import {
	COD_EXCEPTION_KINDS,
	LEDGER_KINDS,
	MAX_EXCEPTION_LINES,
	PAYOUT_DELAY_DAYS,
	PAYOUT_STATUSES,
	REMITTANCES_DEFAULT_LIMIT,
	REMITTANCES_MAX_LIMIT,
	WALLET_DEFAULT_LIMIT,
	WALLET_MAX_LIMIT,
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
					kind: { type: "string", enum: [...LEDGER_KINDS] },
					amount: rupees("positive amount of the movement."),
					order_id: int("the order"),
					attempt_id: int("the booking attempt"),
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
		exception_lines: {
			type: "array",
			description: `the first ${MAX_EXCEPTION_LINES} exceptions, in line order (all are stored)`,
			items: {
				type: "object",
				additionalProperties: false,
				required: ["line_no", "awb_number", "kind", "detail"],
				properties: {
					line_no: int("1 = the first line after the header"),
					awb_number: nullableStr("the line's AWB, when it has one"),
					kind: { type: "string", enum: [...COD_EXCEPTION_KINDS] },
					detail: str("why, in words"),
				},
			},
		},
	},
};

/** Body of `POST /v1/ops/remittances/{id}/paid`: the bank transfer's UTR. */
export const PAYOUT_PAID_BODY = {
	$$strict: "remove",
	utr: { type: "string", min: 1, max: 64, pattern: /^[A-Za-z0-9-]+$/ },
} as const;

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
	deductions: rupees("settled from the COD (none yet)."),
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
		description: `Ours (docs/decisions/0104-cod-payouts.md): your COD payouts, newest first, cursor-paged. A payout is made on each cycle day (Tuesday and Friday, IST) of the COD shipments the couriers remitted and that were delivered at least ${PAYOUT_DELAY_DAYS} days before; \`scheduled\` until paid, then \`paid\` with the bank's UTR. Money in rupees. Any authenticated role. Query validated by hand.`,
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
			"200": {
				description: "The payout's shipments, as an attachment.",
				headers: {
					"Content-Disposition": {
						description: '`attachment; filename="payout-<id>-<cycle_date>.csv"`',
						schema: { type: "string" },
					},
				},
				content: {
					"text/csv": {
						schema: {
							type: "string",
							contentMediaType: "text/csv",
							description:
								"UTF-8 with a byte-order mark, CRLF lines; the header row, then one record per shipment.",
						},
					},
				},
			},
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
			"Ours (docs/decisions/0104-cod-payouts.md). Ops token only. Makes the payouts of `cycle_date` (IST, default today): per account, its remitted COD shipments delivered before the cycle's cut-off and in no payout yet. Idempotent per account and cycle: a second run makes no payout for an account that has one of that cycle. The service runs today's cycle by itself on cycle days (Tuesday, Friday).",
		body: PAYOUT_CYCLE_BODY,
		responses: { "200": json("What the run made.", CYCLE_RESULT) },
		errors: [{ code: "validation_failed", when: "the cycle date is not a real calendar day (YYYY-MM-DD)" }],
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
