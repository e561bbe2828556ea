/**
 * SQL of the booking service: the money booking moves and the credit limits
 * (tables `booking.ledger`, `booking.accounts`; ../migrations.ts, migrations
 * 002 and 011).
 *
 * The ledger is append-only: one row per movement (a booking's `charge`, its
 * `refund`), at most one of each kind per attempt (UNIQUE (attempt_id, kind)),
 * amounts in integer paise, never updated or deleted. It is what refunds and
 * the credit check read; the wallet merchants see is the billing service's,
 * fed from these rows by a trigger that writes a `ledger_entry` outbox row in
 * the same transaction as each one (docs/decisions/0101-billing-service.md).
 * The outstanding amount is charges − refunds. An account has no credit limit
 * unless `booking.accounts` holds one; each change is mirrored to billing.
 */
import type { Sequelize, Transaction } from "sequelize";
import { exec, select } from "../../platform/db";
import { failWith } from "../../platform/errors";
import { toRupees } from "../../shared/money";

/** A movement to record (paise). */
export interface LedgerEntry {
	sender_id: number;
	attempt_id: number;
	order_id: number;
	kind: "charge" | "refund";
	/** integer paise, ≥ 0 */
	amount_paise: number;
	awb_number?: string | null;
	note?: string | null;
}

/**
 * Checks a ledger amount before it is written.
 * @throws Error for an amount that is not a non-negative safe integer of paise (a bug, not input)
 */
export function assertPaise(amount_paise: number): void {
	if (!Number.isSafeInteger(amount_paise) || amount_paise < 0) {
		throw new Error(`ledger amount must be a non-negative integer of paise, got ${amount_paise}`);
	}
}

/**
 * Appends one movement in the caller's transaction `t` (the one that marks
 * the attempt booked / cancelled): INSERT … ON CONFLICT (attempt_id, kind) DO
 * NOTHING, so a retried worker or a double cancel never moves money twice
 * (a concurrent duplicate waits for the first transaction, then does nothing).
 * @returns true when this call inserted the row, false when the attempt
 *   already had a movement of that kind
 * @throws Error for an amount that is not a non-negative safe integer of paise (a bug, not input)
 */
export async function recordLedger(db: Sequelize, t: Transaction, e: LedgerEntry): Promise<boolean> {
	assertPaise(e.amount_paise);
	const { rows } = await exec<{ id: string }>(
		db,
		`INSERT INTO booking.ledger (sender_id, attempt_id, order_id, kind, amount_paise, awb_number, note)
		 VALUES ($1, $2, $3, $4, $5, $6, $7)
		 ON CONFLICT (attempt_id, kind) DO NOTHING
		 RETURNING id`,
		[e.sender_id, e.attempt_id, e.order_id, e.kind, e.amount_paise, e.awb_number ?? null, e.note ?? null],
		t,
	);
	return rows.length === 1;
}

/** The attempt's charge in paise, or null when it was never charged. */
export async function chargedPaise(
	db: Sequelize,
	attempt_id: number,
	t?: Transaction,
): Promise<number | null> {
	const rows = await select<{ amount_paise: string }>(
		db,
		`SELECT amount_paise FROM booking.ledger WHERE attempt_id = $1 AND kind = 'charge'`,
		[attempt_id],
		t,
	);
	return rows[0] ? Number(rows[0].amount_paise) : null;
}

/** The account's credit limit in paise, or null (none: post-paid without limit). */
export async function creditLimitPaise(
	db: Sequelize,
	sender_id: number,
	t?: Transaction,
): Promise<number | null> {
	const rows = await select<{ credit_limit_paise: string | null }>(
		db,
		`SELECT credit_limit_paise FROM booking.accounts WHERE sender_id = $1`,
		[sender_id],
		t,
	);
	const v = rows[0]?.credit_limit_paise;
	return v === null || v === undefined ? null : Number(v);
}

/**
 * Sets (paise ≥ 0) or removes (null) the account's credit limit, in ONE
 * statement with its next `version` and the `credit_limit` outbox row that
 * mirrors it to billing. The settings row is kept (with a null limit) when removed.
 */
export async function setCreditLimitPaise(
	db: Sequelize,
	sender_id: number,
	paise: number | null,
): Promise<void> {
	await exec(
		db,
		`WITH acc AS (
			INSERT INTO booking.accounts (sender_id, credit_limit_paise, version) VALUES ($1, $2, 1)
			ON CONFLICT (sender_id) DO UPDATE SET credit_limit_paise = EXCLUDED.credit_limit_paise,
				version = booking.accounts.version + 1, updated_at = now()
			RETURNING sender_id, credit_limit_paise, version)
		INSERT INTO booking.outbox (kind, payload, next_attempt_at)
		SELECT 'credit_limit', jsonb_build_object('sender_id', sender_id, 'credit_limit_paise', credit_limit_paise,
			'version', version), now() FROM acc`,
		[sender_id, paise],
	);
}

/**
 * Credit check of a new booking, INSIDE the transaction `t` that creates the
 * attempt and BEFORE its INSERT (a queued attempt of this transaction would
 * otherwise count twice). No limit → returns at once. Otherwise takes a
 * per-account `pg_advisory_xact_lock` (held until `t` ends, so concurrent
 * bookings of one account are checked one after the other, each seeing the
 * ones committed before) and refuses when
 * outstanding + needed > limit, where outstanding = charges − refunds +
 * quoted totals of the account's live unbooked (queued, claimed) attempts.
 * @param needed_paise the new booking's quoted total, paise
 * @throws 409 `credit_limit_exceeded` `{error, message, credit_limit,
 *   outstanding, needed}` (rupees)
 */
export async function assertCredit(
	db: Sequelize,
	t: Transaction,
	sender_id: number,
	needed_paise: number,
): Promise<void> {
	const limit = await creditLimitPaise(db, sender_id, t);
	if (limit === null) return;
	await exec(
		db,
		`SELECT pg_advisory_xact_lock(hashtextextended('booking.credit:' || $1::text, 0))`,
		[sender_id],
		t,
	);
	const rows = await select<{ ledger: string; pending: string }>(
		db,
		`SELECT
		   (SELECT COALESCE(SUM(CASE kind WHEN 'charge' THEN amount_paise ELSE -amount_paise END), 0)
		    FROM booking.ledger WHERE sender_id = $1) AS ledger,
		   (SELECT COALESCE(SUM((charges->>'total')::bigint), 0)
		    FROM booking.attempts WHERE sender_id = $1 AND state IN ('queued', 'claimed')) AS pending`,
		[sender_id],
		t,
	);
	const outstanding = Number(rows[0].ledger) + Number(rows[0].pending);
	if (outstanding + needed_paise <= limit) return;
	const [lim, out, need] = [toRupees(limit), toRupees(outstanding), toRupees(needed_paise)];
	throw failWith(
		"credit_limit_exceeded",
		{ credit_limit: lim, outstanding: out, needed: need },
		need,
		out,
		lim,
	);
}
