/**
 * The HTTP routes of the `billing` service, one definition each (issue 26,
 * issue 27; lib/platform/openapi/route.ts, docs/ARCHITECTURE.md §9): the
 * wallet (ours; docs/decisions/0020-wallet.md, moved from booking by
 * docs/decisions/0101-billing-service.md with its path, answer and
 * operationId unchanged for clients).
 *
 * The query is validated by hand (lib/billing/wallet.ts `parseWalletQuery`)
 * and documented as written (`queryParams`).
 */
import { CURSOR_UNRECOGNISED } from "../../platform/cursor";
import { json, queryParam } from "../../platform/openapi/components";
import { int, nullableStr, PAGINATION, rupees, str } from "../../platform/openapi/helpers";
import { defineRoutes } from "../../platform/openapi/route";
import type { JsonSchema } from "../../platform/openapi/types";
import { LEDGER_KINDS, WALLET_DEFAULT_LIMIT, WALLET_MAX_LIMIT } from "../billing";

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
});
