/**
 * The merchant's wallet (`GET /v1/wallet`, ours; spec §2.12, §4.8): the
 * post-paid balance, the optional credit limit and the ledger's movements,
 * newest first, cursor-paged. SQL in ./store/ledger.ts, cursors in ../cursor.ts.
 */
import { type Sequelize, Transaction } from "sequelize";
import {
	type CreditLimit,
	type HttpParams,
	WALLET_DEFAULT_LIMIT,
	WALLET_MAX_LIMIT,
	type WalletAnswer,
	type WalletMovement,
} from "../contracts";
import { type CursorPosition, decodeCursor, encodeCursor } from "../platform/cursor";
import { validationFailed } from "../platform/errors";
import { parsePositiveInt } from "../shared/fields";
import { toPaise, toRupees } from "../shared/money";
import {
	balancePaise,
	creditLimitPaise,
	type LedgerRow,
	ledgerPage,
	setCreditLimitPaise,
} from "./store/ledger";

/** Cursor kind of the wallet's movements. */
const KIND = "wallet";

/** Position in the wallet: the account (`s`) and the last movement id of the page (`id`). */
type WalletPosition = { s: number; id: number };

/** Parsed query of `GET /v1/wallet`. */
export interface WalletQuery {
	limit: number;
	/** movements with an id below this one (the next page), or null (the first page) */
	before_id: number | null;
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
	let limit = WALLET_DEFAULT_LIMIT;
	if (params.limit !== undefined && params.limit !== "") {
		const n = parsePositiveInt(params.limit);
		if (n === null || n > WALLET_MAX_LIMIT) {
			throw validationFailed([`limit: must be an integer from 1 to ${WALLET_MAX_LIMIT}`]);
		}
		limit = n;
	}
	if (params.cursor === undefined || params.cursor === "") return { limit, before_id: null };
	const ours = (p: CursorPosition): p is WalletPosition =>
		p.s === sender_id && typeof p.id === "number" && Number.isSafeInteger(p.id) && p.id > 0;
	return { limit, before_id: decodeCursor(KIND, params.cursor, ours).id };
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
		created_at: r.created_at.toISOString(),
	};
}

/**
 * The wallet of `sender_id` (rupees, UTC): `{balance, credit_limit, data,
 * pagination:{mode:"cursor", limit, nextCursor}}`; balance = refunds −
 * charges over the whole ledger, `data` the page's movements newest first,
 * `nextCursor` null on the last page. Balance, limit and page are read in one
 * REPEATABLE READ snapshot, so the first page and the balance agree.
 */
export async function walletOf(db: Sequelize, sender_id: number, q: WalletQuery): Promise<WalletAnswer> {
	return db.transaction(
		{ isolationLevel: Transaction.ISOLATION_LEVELS.REPEATABLE_READ, readOnly: true },
		async (t) => {
			const balance = await balancePaise(db, sender_id, t);
			const limit = await creditLimitPaise(db, sender_id, t);
			const page = await ledgerPage(db, sender_id, q.before_id, q.limit, t);
			const last = page.rows.at(-1);
			return {
				balance: toRupees(balance),
				credit_limit: limit === null ? null : toRupees(limit),
				data: page.rows.map(movement),
				pagination: {
					mode: "cursor",
					limit: q.limit,
					nextCursor: page.more && last ? encodeCursor(KIND, { s: sender_id, id: last.id }) : null,
				},
			};
		},
	);
}

/**
 * Sets (rupees ≥ 0, rounded to the paisa) or removes (null) the credit limit
 * of `sender_id`; answers it as stored (rupees). Ops only (`booking.setCreditLimit`).
 */
export async function setCreditLimit(
	db: Sequelize,
	sender_id: number,
	credit_limit: number | null,
): Promise<CreditLimit> {
	const paise = credit_limit === null ? null : toPaise(credit_limit);
	await setCreditLimitPaise(db, sender_id, paise);
	return { sender_id, credit_limit: paise === null ? null : toRupees(paise) };
}
