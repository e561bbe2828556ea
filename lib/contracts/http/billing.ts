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
import { json, queryParam } from "../../platform/openapi/components";
import { int, nullableStr, PAGINATION, rupees, str } from "../../platform/openapi/helpers";
import { defineRoutes } from "../../platform/openapi/route";
import type { JsonSchema } from "../../platform/openapi/types";
import {
	COD_EXCEPTION_KINDS,
	LEDGER_KINDS,
	MAX_EXCEPTION_LINES,
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
});
