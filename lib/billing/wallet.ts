/**
 * The merchant's wallet (`GET /v1/wallet`, ours; spec §2.12, §4.8;
 * docs/decisions/0020-wallet.md, 0101-billing-service.md): the post-paid
 * balance, the credit limit booking enforces and the ledger's movements,
 * newest first, cursor-paged. SQL in ./store.ts, cursors in
 * lib/platform/cursor.ts.
 */
import { type Sequelize, Transaction } from "sequelize";
import {
	type HttpParams,
	WALLET_DEFAULT_LIMIT,
	WALLET_MAX_LIMIT,
	type WalletAnswer,
	type WalletMovement,
} from "../contracts";
import { type CursorPosition, decodeCursor, encodeCursor } from "../platform/cursor";
import { validationFailed } from "../platform/errors";
import { parsePositiveInt } from "../shared/fields";
import { toRupees } from "../shared/money";
import { type LedgerRow, ledgerPage, walletAccount } from "./store";

/** Cursor kind of the wallet's movements. */
const KIND = "wallet";

/**
 * Position in the wallet: the account (`s`), and the last movement of the
 * page: when it happened (`t`, ISO-8601 UTC with microseconds) and its id.
 */
type WalletPosition = { s: number; t: string; id: number };

/** An ISO-8601 UTC instant with up to 6 fractional digits, as {@link ledgerPage} writes `occurred_us`. */
const INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$/;

/** Parsed query of `GET /v1/wallet`. */
export interface WalletQuery {
	limit: number;
	/** movements before this one, newest first (the next page), or null (the first page) */
	before: { t: string; id: number } | null;
}

/**
 * Parses the query of `GET /v1/wallet` for account `sender_id`: `limit`
 * (integer 1–1000, digit string or number, default 20) and `cursor` (a
 * `nextCursor` of this account's wallet; empty or absent = first page).
 * Other keys are ignored.
 * @throws 400 `validation_failed` details `["limit: must be an integer from 1 to 1000"]`;
 *   400 `cursor: unrecognised shape` (not a wallet cursor of this account, modified, garbage)
 */
export function parseWalletQuery(params: HttpParams, sender_id: number): WalletQuery {
	const limit = pageLimit(params.limit, WALLET_DEFAULT_LIMIT, WALLET_MAX_LIMIT);
	if (params.cursor === undefined || params.cursor === "") return { limit, before: null };
	const ours = (p: CursorPosition): p is WalletPosition =>
		p.s === sender_id &&
		typeof p.id === "number" &&
		Number.isSafeInteger(p.id) &&
		p.id > 0 &&
		typeof p.t === "string" &&
		INSTANT.test(p.t);
	const at = decodeCursor(KIND, params.cursor, ours);
	return { limit, before: { t: at.t, id: at.id } };
}

/**
 * The `limit` of a billing list (`GET /v1/wallet`, `GET /v1/remittances`):
 * an integer 1–`max` (digit string or number); absent or empty: `dflt`.
 * @throws 400 `validation_failed` details `["limit: must be an integer from 1 to <max>"]`
 */
export function pageLimit(raw: unknown, dflt: number, max: number): number {
	if (raw === undefined || raw === "") return dflt;
	const n = parsePositiveInt(raw);
	if (n === null || n > max) throw validationFailed([`limit: must be an integer from 1 to ${max}`]);
	return n;
}

function movement(r: LedgerRow): WalletMovement {
	return {
		id: r.id,
		kind: r.kind,
		amount: toRupees(r.amount_paise),
		order_id: r.order_id,
		attempt_id: r.attempt_id,
		awb_number: r.awb_number,
		note: r.note,
		created_at: r.occurred_at.toISOString(),
	};
}

/**
 * The wallet of `sender_id` (rupees, UTC): `{balance, credit_limit, data,
 * pagination:{mode:"cursor", limit, nextCursor}}`; balance = refunds −
 * charges over the whole ledger (the stored sum, `billing.balances`), `data` the page's movements newest first,
 * `nextCursor` null on the last page. Balance, limit and page are read in one
 * REPEATABLE READ snapshot, so the first page and the balance agree.
 */
export async function walletOf(db: Sequelize, sender_id: number, q: WalletQuery): Promise<WalletAnswer> {
	return db.transaction(
		{ isolationLevel: Transaction.ISOLATION_LEVELS.REPEATABLE_READ, readOnly: true },
		async (t) => {
			const { balance_paise: balance, credit_limit_paise: limit } = await walletAccount(db, sender_id, t);
			const page = await ledgerPage(db, sender_id, q.before, q.limit, t);
			const last = page.rows.at(-1);
			return {
				balance: toRupees(balance),
				credit_limit: limit === null ? null : toRupees(limit),
				data: page.rows.map(movement),
				pagination: {
					mode: "cursor",
					limit: q.limit,
					nextCursor:
						page.more && last ? encodeCursor(KIND, { s: sender_id, t: last.occurred_us, id: last.id }) : null,
				},
			};
		},
	);
}
