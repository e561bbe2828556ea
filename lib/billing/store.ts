/**
 * Every SQL statement of the billing service (tables: ./migrations.ts).
 *
 * The ledger is append-only; each insert changes the account's balance in
 * the same statement, so `billing.balances` always equals the sum of the
 * account's entries ({@link recomputedBalances} checks it).
 */
import type { Sequelize, Transaction } from "sequelize";
import type { CreditLimitEvent, LedgerEntryEvent, LedgerKind } from "../contracts";
import { exec, numbersIn, type StoredRow, select } from "../platform/db";

/** One `billing.ledger` row (ids as numbers, paise). */
export interface LedgerRow {
	id: number;
	sender_id: number;
	kind: LedgerKind;
	amount_paise: number;
	attempt_id: number;
	order_id: number;
	awb_number: string | null;
	note: string | null;
	occurred_at: Date;
	/** `occurred_at` as ISO-8601 UTC with microseconds (the wallet cursor's position) */
	occurred_us: string;
}

const LEDGER_NUMBERS = ["id", "sender_id", "attempt_id", "order_id", "amount_paise"] as const;

/** A ledger row as pg returns it: bigints come as strings. */
type StoredLedger = StoredRow<LedgerRow, (typeof LEDGER_NUMBERS)[number]>;

/** The idempotency key of a movement booking made: one of each kind per attempt. */
export const entryKeyOf = (e: Pick<LedgerEntryEvent, "attempt_id" | "kind">): string =>
	`attempt:${e.attempt_id}:${e.kind}`;

/**
 * Checks a movement before it is written.
 * @throws Error for an amount that is not a non-negative safe integer of paise or an unknown kind (a bug of the
 *   sender, not input: the relay redelivers and logs it)
 */
export function assertEntry(e: LedgerEntryEvent): void {
	if (!Number.isSafeInteger(e.amount_paise) || e.amount_paise < 0)
		throw new Error(`ledger amount must be a non-negative integer of paise, got ${e.amount_paise}`);
	if (e.kind !== "charge" && e.kind !== "refund") throw new Error(`unknown ledger kind ${String(e.kind)}`);
}

/**
 * Records movements in ONE statement: the entries not recorded before
 * (`ON CONFLICT (entry_key) DO NOTHING`) and, for each account they touch,
 * its balance (refunds − charges, paise) and entry count. A movement
 * delivered twice (an outbox redelivery) is recorded once. Rows are locked
 * in one order (entries by key, then balances by account), so concurrent
 * deliveries wait for each other instead of deadlocking.
 * @returns how many entries were new
 */
export async function recordEntries(db: Sequelize, entries: LedgerEntryEvent[]): Promise<number> {
	if (!entries.length) return 0;
	for (const e of entries) assertEntry(e);
	const payload = entries.map((e) => ({ ...e, entry_key: entryKeyOf(e) }));
	const { rows } = await exec<{ recorded: string }>(
		db,
		`WITH ins AS (
			INSERT INTO billing.ledger (sender_id, kind, amount_paise, entry_key, attempt_id, order_id, awb_number, note,
				occurred_at)
			SELECT x.sender_id, x.kind, x.amount_paise, x.entry_key, x.attempt_id, x.order_id, x.awb_number, x.note,
				x.occurred_at
			FROM jsonb_to_recordset($1::jsonb) AS x(sender_id bigint, kind text, amount_paise bigint, entry_key text,
				attempt_id bigint, order_id bigint, awb_number text, note text, occurred_at timestamptz)
			ORDER BY x.entry_key
			ON CONFLICT (entry_key) DO NOTHING
			RETURNING sender_id, kind, amount_paise),
		sums AS (
			SELECT sender_id, SUM(CASE kind WHEN 'refund' THEN amount_paise ELSE -amount_paise END) AS delta,
				COUNT(*) AS n
			FROM ins GROUP BY sender_id),
		bal AS (
			INSERT INTO billing.balances (sender_id, balance_paise, entries)
			SELECT sender_id, delta, n FROM sums ORDER BY sender_id
			ON CONFLICT (sender_id) DO UPDATE SET balance_paise = billing.balances.balance_paise + EXCLUDED.balance_paise,
				entries = billing.balances.entries + EXCLUDED.entries, updated_at = now()
			RETURNING 1)
		SELECT (SELECT COUNT(*) FROM ins) AS recorded`,
		[JSON.stringify(payload)],
	);
	return Number(rows[0]?.recorded ?? 0);
}

/** The account's balance in paise (refunds − charges; 0 when it has no entry). */
export async function balancePaise(db: Sequelize, sender_id: number, t?: Transaction): Promise<number> {
	const rows = await select<{ balance_paise: string }>(
		db,
		`SELECT balance_paise FROM billing.balances WHERE sender_id = $1`,
		[sender_id],
		t,
	);
	return rows[0] ? Number(rows[0].balance_paise) : 0;
}

/**
 * Every account whose stored balance differs from the sum of its entries (an
 * audit: empty when the ledger and the balances agree).
 */
export async function recomputedBalances(
	db: Sequelize,
): Promise<{ sender_id: number; stored: number; recomputed: number }[]> {
	const rows = await select<{ sender_id: string; stored: string | null; recomputed: string | null }>(
		db,
		`SELECT COALESCE(b.sender_id, l.sender_id) AS sender_id, b.balance_paise AS stored, l.sum AS recomputed
		FROM billing.balances b
		FULL JOIN (SELECT sender_id, SUM(CASE kind WHEN 'refund' THEN amount_paise ELSE -amount_paise END) AS sum
			FROM billing.ledger GROUP BY sender_id) l ON l.sender_id = b.sender_id
		WHERE b.balance_paise IS DISTINCT FROM l.sum`,
	);
	return rows.map((r) => ({
		sender_id: Number(r.sender_id),
		stored: Number(r.stored ?? 0),
		recomputed: Number(r.recomputed ?? 0),
	}));
}

/**
 * One page of the account's movements, newest first by when they happened
 * (`occurred_at`, then id: the order in which their services recorded them,
 * not the order in which billing heard of them): at most `limit` rows before
 * `before` (all when null), plus whether more follow.
 */
export async function ledgerPage(
	db: Sequelize,
	sender_id: number,
	before: { t: string; id: number } | null,
	limit: number,
	t?: Transaction,
): Promise<{ rows: LedgerRow[]; more: boolean }> {
	const rows = await select<StoredLedger>(
		db,
		`SELECT id, sender_id, kind, amount_paise, attempt_id, order_id, awb_number, note, occurred_at,
			to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS occurred_us
		 FROM billing.ledger
		 WHERE sender_id = $1 AND ($2::timestamptz IS NULL OR (occurred_at, id) < ($2::timestamptz, $3::bigint))
		 ORDER BY occurred_at DESC, id DESC LIMIT $4`,
		[sender_id, before?.t ?? null, before?.id ?? null, limit + 1],
		t,
	);
	return {
		rows: rows
			.slice(0, limit)
			.map((r) => numbersIn<LedgerRow, (typeof LEDGER_NUMBERS)[number]>(r, LEDGER_NUMBERS)),
		more: rows.length > limit,
	};
}

/** The account's credit limit in paise as last mirrored, or null (none). */
export async function creditLimitPaise(
	db: Sequelize,
	sender_id: number,
	t?: Transaction,
): Promise<number | null> {
	const rows = await select<{ credit_limit_paise: string | null }>(
		db,
		`SELECT credit_limit_paise FROM billing.accounts WHERE sender_id = $1`,
		[sender_id],
		t,
	);
	const v = rows[0]?.credit_limit_paise;
	return v === null || v === undefined ? null : Number(v);
}

/**
 * Mirrors booking's credit limit of an account when `version` is newer than
 * the stored one. @returns whether it was applied (false: a stale or repeated delivery)
 */
export async function applyCreditLimit(db: Sequelize, e: CreditLimitEvent): Promise<boolean> {
	const { rows } = await exec(
		db,
		`INSERT INTO billing.accounts (sender_id, credit_limit_paise, version) VALUES ($1, $2, $3)
		 ON CONFLICT (sender_id) DO UPDATE SET credit_limit_paise = EXCLUDED.credit_limit_paise,
			version = EXCLUDED.version, updated_at = now()
		 WHERE billing.accounts.version < EXCLUDED.version
		 RETURNING sender_id`,
		[e.sender_id, e.credit_limit_paise, e.version],
	);
	return rows.length === 1;
}
