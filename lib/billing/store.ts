/**
 * Every SQL statement of the billing service (tables: ./migrations.ts).
 *
 * The ledger is append-only; each insert changes the account's balance in
 * the same statement, so `billing.balances` always equals the sum of the
 * account's entries ({@link recomputedBalances} checks it).
 */
import type { Sequelize, Transaction } from "sequelize";
import {
	type BookingLedgerKind,
	type CodExceptionKind,
	type CodStatus,
	type CodStatusUpdate,
	CREDIT_KINDS,
	type CreditLimitEvent,
	type LedgerEntryEvent,
	type LedgerKind,
	type PayoutStatus,
} from "../contracts";
import { exec, numbersIn, type StoredRow, select } from "../platform/db";
import { leaseOutboxRows } from "../platform/outbox";
import { toRupees } from "../shared/money";

/** One `billing.ledger` row (ids as numbers, paise). */
export interface LedgerRow {
	id: number;
	sender_id: number;
	kind: LedgerKind;
	amount_paise: number;
	/** null for a weight discrepancy's movement whose AWB's booking charge billing has not recorded */
	attempt_id: number | null;
	/** null for an account-level movement (`cod_settlement`) */
	order_id: number | null;
	awb_number: string | null;
	note: string | null;
	occurred_at: Date;
	/** `occurred_at` as ISO-8601 UTC with microseconds (the wallet cursor's position) */
	occurred_us: string;
}

const LEDGER_NUMBERS = ["id", "sender_id", "amount_paise"] as const;

/**
 * SQL of an entry's effect on its balance (paise): the credit kinds
 * ({@link CREDIT_KINDS}: refunds) add, every other kind takes. Used wherever
 * a balance is summed, so the stored balances and the audit agree.
 */
export const BALANCE_DELTA = `CASE WHEN kind IN (${CREDIT_KINDS.map((k) => `'${k}'`).join(", ")}) THEN amount_paise ELSE -amount_paise END`;

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
	const kinds: readonly string[] = ["charge", "refund"] satisfies BookingLedgerKind[];
	if (!kinds.includes(e.kind)) throw new Error(`unknown ledger kind ${String(e.kind)}`);
}

/** A ledger entry to append, of whichever kind, with its own idempotency key (`entry_key`), paise. */
export interface NewLedgerEntry {
	sender_id: number;
	kind: LedgerKind;
	amount_paise: number;
	entry_key: string;
	attempt_id: number | null;
	/** null for an account-level movement (`cod_settlement`) */
	order_id: number | null;
	awb_number: string | null;
	note: string | null;
	/** ISO-8601 UTC */
	occurred_at: string;
}

/**
 * Appends entries in ONE statement: the entries not recorded before
 * (`ON CONFLICT (entry_key) DO NOTHING`) and, for each account they touch,
 * its balance ({@link BALANCE_DELTA}, paise). An entry delivered twice is
 * recorded once. Rows are locked in one order (entries by key, then
 * balances by account), so concurrent appends wait for each other instead of
 * deadlocking. `t`: the caller's transaction, when the entries belong to a
 * larger change (a weight discrepancy opened or won).
 * @returns how many entries were new
 */
export async function appendEntries(
	db: Sequelize,
	entries: NewLedgerEntry[],
	t?: Transaction,
): Promise<number> {
	if (!entries.length) return 0;
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
			SELECT sender_id, SUM(${BALANCE_DELTA}) AS delta
			FROM ins GROUP BY sender_id),
		bal AS (
			INSERT INTO billing.balances (sender_id, balance_paise)
			SELECT sender_id, delta FROM sums ORDER BY sender_id
			ON CONFLICT (sender_id) DO UPDATE SET balance_paise = billing.balances.balance_paise + EXCLUDED.balance_paise,
				updated_at = now())
		SELECT (SELECT COUNT(*) FROM ins) AS recorded`,
		[JSON.stringify(entries)],
		t,
	);
	return Number(rows[0]?.recorded ?? 0);
}

/**
 * Records booking's movements ({@link appendEntries}, keyed
 * `attempt:<attempt_id>:<kind>`): a movement delivered twice (an outbox
 * redelivery) is recorded once.
 * @returns how many entries were new
 * @throws Error for an amount that is not integer paise or a kind booking does not record ({@link assertEntry})
 */
export async function recordEntries(db: Sequelize, entries: LedgerEntryEvent[]): Promise<number> {
	for (const e of entries) assertEntry(e);
	return appendEntries(
		db,
		entries.map((e) => ({ ...e, entry_key: entryKeyOf(e) })),
	);
}

/**
 * The account's wallet figures in one statement: its balance in paise
 * (refunds − charges; 0 when it has no entry) and the credit limit booking
 * enforces, as last mirrored (paise; null: none).
 */
export async function walletAccount(
	db: Sequelize,
	sender_id: number,
	t?: Transaction,
): Promise<{ balance_paise: number; credit_limit_paise: number | null }> {
	const [r] = await select<{ balance_paise: string | null; credit_limit_paise: string | null }>(
		db,
		`SELECT (SELECT balance_paise FROM billing.balances WHERE sender_id = $1) AS balance_paise,
			(SELECT credit_limit_paise FROM billing.accounts WHERE sender_id = $1) AS credit_limit_paise`,
		[sender_id],
		t,
	);
	return {
		balance_paise: Number(r.balance_paise ?? 0),
		credit_limit_paise: r.credit_limit_paise === null ? null : Number(r.credit_limit_paise),
	};
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
		FULL JOIN (SELECT sender_id, SUM(${BALANCE_DELTA}) AS sum
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
		rows: rows.slice(0, limit).map((r) => ({
			...numbersIn<LedgerRow, (typeof LEDGER_NUMBERS)[number]>(r, LEDGER_NUMBERS),
			attempt_id: r.attempt_id === null ? null : Number(r.attempt_id),
			order_id: r.order_id === null ? null : Number(r.order_id),
		})),
		more: rows.length > limit,
	};
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

/** Where a status change moves a COD shipment's cash (lib/billing/cod.ts `codTargetOf`). */
export type CodTarget = "pending" | "collected" | "not_collected";

/** A status change of a shipment, as billing applies it. */
export interface ShipmentStatusFact {
	awb_number: string;
	seq: number;
	target: CodTarget;
	/** when the status was reached (ISO-8601 UTC) */
	at: string;
}

/** The rule of a status change on a stored COD status (SQL, shared by the update and the insert's conflict). */
const COD_TRANSITION = `CASE
	WHEN s.payment_mode <> 'cod' OR $2 <= s.status_seq THEN s.cod_status
	WHEN $3 = 'collected' AND s.cod_status IN ('pending', 'not_collected') THEN 'collected'
	WHEN $3 = 'not_collected' AND s.cod_status = 'pending' THEN 'not_collected'
	ELSE s.cod_status END`;

/**
 * Applies a status change to a shipment billing already holds: only a newer
 * `seq`, and only forward (pending → collected | not_collected; a delivery
 * after an RTO was started also counts; collected, remitted and paid never
 * move back). @returns false when billing holds no row for the AWB yet
 */
export async function applyShipmentStatus(db: Sequelize, f: ShipmentStatusFact): Promise<boolean> {
	const { count } = await exec(
		db,
		`UPDATE billing.shipments s SET
			cod_status = ${COD_TRANSITION},
			collected_at = CASE WHEN s.payment_mode = 'cod' AND $2 > s.status_seq AND $3 = 'collected'
				AND s.cod_status IN ('pending', 'not_collected') THEN $4::timestamptz ELSE s.collected_at END,
			not_collected_at = CASE WHEN s.payment_mode = 'cod' AND $2 > s.status_seq AND $3 = 'not_collected'
				AND s.cod_status = 'pending' THEN $4::timestamptz ELSE s.not_collected_at END,
			status_seq = GREATEST(s.status_seq, $2), updated_at = now()
		WHERE s.awb_number = $1`,
		[f.awb_number, f.seq, f.target, f.at],
	);
	return count > 0;
}

/** A shipment billing has not seen before: its order's payment and COD amount (from intake). */
export interface NewShipment extends ShipmentStatusFact {
	sender_id: number;
	order_id: number;
	logistic_id: number;
	payment_mode: "cod" | "prepaid";
	cod_amount_paise: number;
}

/**
 * Records a shipment billing sees for the first time, with its COD status as
 * of this status change; when a concurrent change inserted it meanwhile,
 * applies this one to it instead (the same rule as {@link applyShipmentStatus}).
 */
export async function insertShipment(db: Sequelize, n: NewShipment): Promise<void> {
	const cod = n.payment_mode === "cod";
	await exec(
		db,
		`INSERT INTO billing.shipments AS s (awb_number, status_seq, sender_id, order_id, logistic_id, payment_mode,
			cod_amount_paise, cod_status, collected_at, not_collected_at)
		VALUES ($1, $2, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT (awb_number) DO UPDATE SET
			cod_status = ${COD_TRANSITION},
			collected_at = CASE WHEN s.payment_mode = 'cod' AND $2 > s.status_seq AND $3 = 'collected'
				AND s.cod_status IN ('pending', 'not_collected') THEN $4::timestamptz ELSE s.collected_at END,
			not_collected_at = CASE WHEN s.payment_mode = 'cod' AND $2 > s.status_seq AND $3 = 'not_collected'
				AND s.cod_status = 'pending' THEN $4::timestamptz ELSE s.not_collected_at END,
			status_seq = GREATEST(s.status_seq, $2), updated_at = now()`,
		[
			n.awb_number,
			n.seq,
			n.target,
			n.at,
			n.sender_id,
			n.order_id,
			n.logistic_id,
			n.payment_mode,
			cod ? n.cod_amount_paise : 0,
			cod ? n.target : null,
			cod && n.target === "collected" ? n.at : null,
			cod && n.target === "not_collected" ? n.at : null,
		],
	);
}

/** A COD shipment row as the detail and the reconciliation read it. */
export interface CodRow {
	awb_number: string;
	sender_id: number;
	logistic_id: number;
	cod_status: CodStatus;
	cod_amount_paise: number;
	collected_at: Date | null;
	remittance_reference: string | null;
	remitted_on: string | null;
	remitted_paise: number | null;
}

const COD_COLUMNS = `awb_number, sender_id, logistic_id, cod_status, cod_amount_paise, collected_at,
	remittance_reference, to_char(remitted_on, 'YYYY-MM-DD') AS remitted_on, remitted_paise`;

/** A COD row as pg returns it: bigints come as strings. */
type StoredCod = StoredRow<CodRow, "sender_id" | "logistic_id" | "cod_amount_paise" | "remitted_paise">;

function codRow(r: StoredCod): CodRow {
	return {
		...r,
		sender_id: Number(r.sender_id),
		logistic_id: Number(r.logistic_id),
		cod_amount_paise: Number(r.cod_amount_paise),
		remitted_paise: r.remitted_paise === null ? null : Number(r.remitted_paise),
	};
}

/** The sender's COD shipment `awb_number`, or null (unknown, not COD, or another sender's). */
export async function codShipmentOf(
	db: Sequelize,
	sender_id: number,
	awb_number: string,
): Promise<CodRow | null> {
	const rows = await select<StoredCod>(
		db,
		`SELECT ${COD_COLUMNS} FROM billing.shipments
		 WHERE awb_number = $1 AND sender_id = $2 AND payment_mode = 'cod'`,
		[awb_number, sender_id],
	);
	return rows[0] ? codRow(rows[0]) : null;
}

/** A remittance file's stored outcome (its counts and its first exceptions). */
export interface StoredRemittance {
	id: number;
	lines: number;
	matched: number;
	matched_paise: number;
	exceptions: number;
	exception_lines: { line_no: number; awb_number: string | null; kind: CodExceptionKind; detail: string }[];
}

/** The stored outcome of remittance file `id` with its first `max` exceptions. */
async function storedRemittance(
	db: Sequelize,
	id: number,
	max: number,
	t: Transaction,
): Promise<StoredRemittance> {
	const [r] = await select<{ lines: number; matched: string; matched_paise: string; exceptions: string }>(
		db,
		`SELECT r.lines,
			(SELECT COUNT(*) FROM billing.shipments s WHERE s.remittance_id = r.id) AS matched,
			(SELECT COALESCE(SUM(s.remitted_paise), 0) FROM billing.shipments s WHERE s.remittance_id = r.id)
				AS matched_paise,
			(SELECT COUNT(*) FROM billing.cod_exceptions e WHERE e.remittance_id = r.id) AS exceptions
		 FROM billing.courier_remittances r WHERE r.id = $1`,
		[id],
		t,
	);
	const ex = await select<StoredRemittance["exception_lines"][number]>(
		db,
		`SELECT line_no, awb_number, kind, detail FROM billing.cod_exceptions WHERE remittance_id = $1
		 ORDER BY line_no LIMIT $2`,
		[id, max],
		t,
	);
	return {
		id,
		lines: r.lines,
		matched: Number(r.matched),
		matched_paise: Number(r.matched_paise),
		exceptions: Number(r.exceptions),
		exception_lines: ex,
	};
}

/** One line of a remittance file, parsed (or refused: `invalid`). */
export interface RemittanceLine {
	line_no: number;
	awb_number: string | null;
	amount_paise: number | null;
	reference: string | null;
	remitted_on: string | null;
	/** why the line could not be read, or null */
	invalid: string | null;
}

/** What {@link recordRemittance} is asked to store: the lines and how to classify them. */
export interface RemittanceInput {
	sha256: string;
	logistic_id: number | null;
	lines: RemittanceLine[];
	/**
	 * Classifies each readable line against the COD shipments of its AWBs (read under lock): a
	 * reconciliation exception or null (the line pays the shipment).
	 */
	classify: (
		lines: RemittanceLine[],
		shipments: Map<string, CodRow | { prepaid: true }>,
	) => ({
		kind: CodExceptionKind;
		detail: string;
		sender_id: number | null;
		expected_paise: number | null;
	} | null)[];
	max_exceptions: number;
}

/**
 * Records a courier remittance file in ONE transaction: the file (once per
 * content: a file received before answers its stored outcome, `duplicate`),
 * its matched lines (their shipments `collected` → `remitted` with the
 * reference, date and amount) and its exceptions. The shipments of the
 * file's AWBs are locked while classified, so two files paying the same AWB
 * cannot both match it.
 */
export async function recordRemittance(
	db: Sequelize,
	input: RemittanceInput,
): Promise<StoredRemittance & { duplicate: boolean }> {
	return db.transaction(async (t) => {
		const { rows: made } = await exec<{ id: string }>(
			db,
			`INSERT INTO billing.courier_remittances (file_sha256, logistic_id, lines)
			 VALUES ($1, $2, $3) ON CONFLICT (file_sha256) DO NOTHING RETURNING id`,
			[input.sha256, input.logistic_id, input.lines.length],
			t,
		);
		if (!made[0]) {
			const [old] = await select<{ id: string }>(
				db,
				`SELECT id FROM billing.courier_remittances WHERE file_sha256 = $1`,
				[input.sha256],
				t,
			);
			return { ...(await storedRemittance(db, Number(old.id), input.max_exceptions, t)), duplicate: true };
		}
		const id = Number(made[0].id);
		const awbs = [...new Set(input.lines.flatMap((l) => (l.awb_number ? [l.awb_number] : [])))];
		const found = await select<
			Omit<StoredCod, "cod_status"> & { cod_status: CodStatus | null; payment_mode: "cod" | "prepaid" }
		>(
			db,
			`SELECT ${COD_COLUMNS}, payment_mode FROM billing.shipments WHERE awb_number = ANY($1::text[])
			 ORDER BY awb_number FOR UPDATE`,
			[awbs],
			t,
		);
		const shipments = new Map<string, CodRow | { prepaid: true }>(
			found.map(({ payment_mode, cod_status, ...r }) => [
				r.awb_number,
				payment_mode === "cod" && cod_status !== null
					? codRow({ ...r, cod_status })
					: { prepaid: true as const },
			]),
		);
		const verdicts = input.classify(input.lines, shipments);
		const matched = input.lines.filter((_, i) => verdicts[i] === null);
		const exceptions = input.lines.flatMap((l, i) => {
			const v = verdicts[i];
			return v ? [{ ...l, ...v }] : [];
		});
		if (matched.length)
			await exec(
				db,
				`UPDATE billing.shipments s SET cod_status = 'remitted', remittance_id = $2,
					remittance_reference = x.reference, remitted_on = x.remitted_on, remitted_paise = x.amount_paise,
					updated_at = now()
				 FROM jsonb_to_recordset($1::jsonb) AS x(awb_number text, reference text, remitted_on date,
					amount_paise bigint)
				 WHERE s.awb_number = x.awb_number AND s.cod_status = 'collected'`,
				[
					JSON.stringify(
						matched.map((l) => ({
							awb_number: l.awb_number,
							reference: l.reference,
							remitted_on: l.remitted_on,
							amount_paise: l.amount_paise,
						})),
					),
					id,
				],
				t,
			);
		if (exceptions.length)
			await exec(
				db,
				`INSERT INTO billing.cod_exceptions (remittance_id, line_no, awb_number, kind, detail, sender_id,
					expected_paise, amount_paise, remittance_reference, remitted_on)
				 SELECT $2, x.line_no, x.awb_number, x.kind, x.detail, x.sender_id, x.expected_paise, x.amount_paise,
					x.reference, x.remitted_on
				 FROM jsonb_to_recordset($1::jsonb) AS x(line_no integer, awb_number text, kind text, detail text,
					sender_id bigint, expected_paise bigint, amount_paise bigint, reference text, remitted_on date)`,
				[JSON.stringify(exceptions), id],
				t,
			);
		if (exceptions.length)
			// the merchant's side of its exceptions (webhook `cod.exception`): lines that name one of its COD
			// shipments with a wrong amount, before delivery, or a second time; unknown and unreadable lines are ops'
			await exec(
				db,
				`INSERT INTO billing.event_outbox (event)
				 SELECT jsonb_build_object('event_id', 'cod.exception:' || e.id, 'type', 'cod.exception',
					'sender_id', s.sender_id, 'order_id', s.order_id, 'occurred_at', e.created_at,
					'data', jsonb_build_object('awb_number', e.awb_number, 'kind', e.kind, 'detail', e.detail,
						'expected_amount', round(e.expected_paise / 100.0, 2), 'amount', round(e.amount_paise / 100.0, 2),
						'remittance_reference', e.remittance_reference, 'remitted_on', to_char(e.remitted_on, 'YYYY-MM-DD')))
				 FROM billing.cod_exceptions e
				 JOIN billing.shipments s ON s.awb_number = e.awb_number AND s.sender_id = e.sender_id
				 WHERE e.remittance_id = $1 AND e.kind IN ('amount_mismatch', 'not_delivered', 'duplicate')
				 ORDER BY e.id`,
				[id],
				t,
			);
		return { ...(await storedRemittance(db, id, input.max_exceptions, t)), duplicate: false };
	});
}

/** A `billing.payouts` row as read (paise; dates as text). */
export interface PayoutRow {
	id: number;
	sender_id: number;
	cycle_date: string;
	shipments: number;
	gross_paise: number;
	deductions_paise: number;
	early_cod_fee_paise: number;
	settled_charges_paise: number;
	net_paise: number;
	status: PayoutStatus;
	utr: string | null;
	paid_at: Date | null;
	created_at: Date;
}

const PAYOUT_COLUMNS = `id, sender_id, to_char(cycle_date, 'YYYY-MM-DD') AS cycle_date, shipments, gross_paise,
	deductions_paise, early_cod_fee_paise, settled_charges_paise, net_paise, status, utr, paid_at, created_at`;

const PAYOUT_NUMBERS = [
	"id",
	"sender_id",
	"shipments",
	"gross_paise",
	"deductions_paise",
	"early_cod_fee_paise",
	"settled_charges_paise",
	"net_paise",
] as const;

/** A payout row as pg returns it: bigints come as strings. */
type StoredPayout = StoredRow<PayoutRow, (typeof PAYOUT_NUMBERS)[number]>;

function payoutRow(r: StoredPayout): PayoutRow {
	return numbersIn<PayoutRow, (typeof PAYOUT_NUMBERS)[number]>(r, PAYOUT_NUMBERS);
}

/** The rules of a payout cycle that are not per account: the defaults and the early-COD terms. */
export interface CycleRules {
	/** `YYYY-MM-DD` (IST) */
	cycle_date: string;
	/** week days (0 = Sunday) of an account without settings */
	default_weekdays: readonly number[];
	/** days after delivery of an account without settings */
	default_delay_days: number;
	/** days after delivery of an early-COD account */
	early_delay_days: number;
	/** the early-COD fee, basis points of the gross */
	early_fee_bp: number;
}

/**
 * Runs payout cycle `cycle_date` (IST) in ONE transaction under an advisory
 * lock (two runs never claim one shipment): per account whose cycle days
 * include the date's week day, one payout (UNIQUE (sender_id, cycle_date):
 * a second run makes nothing) of its remitted COD shipments in no payout,
 * delivered before its cut-off (midnight IST, delay − 1 days before the
 * cycle: its own delay, or the early-COD delay). Deductions: the early-COD
 * fee (fee_bp × gross, rounded half up to the paisa) and, for an account
 * settling charges from COD, what it owes (the wallet's negative balance,
 * at most what is left after the fee), credited to its wallet by a
 * `cod_settlement` entry in the same transaction. Net = gross − deductions.
 */
export async function runPayoutCycle(
	db: Sequelize,
	rules: CycleRules,
): Promise<{ payouts: number; shipments: number; net_paise: number }> {
	return db.transaction(async (t) => {
		await exec(db, `SELECT pg_advisory_xact_lock(hashtextextended('billing.payout_cycle', 0))`, [], t);
		const made = await select<{
			id: string;
			sender_id: string;
			shipments: number;
			net_paise: string;
			settled_charges_paise: string;
			created_at: Date;
		}>(
			db,
			`WITH acct AS (
				SELECT DISTINCT sender_id FROM billing.shipments WHERE cod_status = 'remitted' AND payout_id IS NULL),
			cfg AS (
				SELECT a.sender_id, COALESCE(p.early_cod, false) AS early, COALESCE(p.settle_charges, false) AS settle,
					(($1::date - (CASE WHEN COALESCE(p.early_cod, false) THEN $4::int ELSE COALESCE(p.delay_days, $3::int) END
						- 1))::timestamp AT TIME ZONE 'Asia/Kolkata') AS cutoff
				FROM acct a LEFT JOIN billing.payout_settings p ON p.sender_id = a.sender_id
				WHERE extract(dow FROM $1::date)::smallint = ANY(COALESCE(p.weekdays, $2::smallint[]))),
			eligible AS (
				SELECT s.awb_number, s.sender_id, s.remitted_paise FROM billing.shipments s JOIN cfg c USING (sender_id)
				WHERE s.cod_status = 'remitted' AND s.payout_id IS NULL AND s.collected_at < c.cutoff),
			sums AS (
				SELECT e.sender_id, COUNT(*) AS n, SUM(e.remitted_paise) AS gross,
					CASE WHEN bool_or(c.early) THEN floor(($5::bigint * SUM(e.remitted_paise) + 5000) / 10000) ELSE 0 END
						AS fee,
					bool_or(c.settle) AS settle
				FROM eligible e JOIN cfg c USING (sender_id) GROUP BY e.sender_id),
			owed AS (
				SELECT s.*, CASE WHEN s.settle
					THEN LEAST(GREATEST(-COALESCE(b.balance_paise, 0), 0), s.gross - s.fee) ELSE 0 END AS settled
				FROM sums s LEFT JOIN billing.balances b ON b.sender_id = s.sender_id),
			made AS (
				INSERT INTO billing.payouts (sender_id, cycle_date, shipments, gross_paise, deductions_paise,
					early_cod_fee_paise, settled_charges_paise, net_paise)
				SELECT sender_id, $1::date, n, gross, fee + settled, fee, settled, gross - fee - settled
				FROM owed ORDER BY sender_id
				ON CONFLICT (sender_id, cycle_date) DO NOTHING
				RETURNING id, sender_id, shipments, net_paise, settled_charges_paise, created_at),
			marked AS (
				UPDATE billing.shipments s SET payout_id = made.id, updated_at = now()
				FROM made, eligible e
				WHERE e.sender_id = made.sender_id AND s.awb_number = e.awb_number AND s.payout_id IS NULL
				RETURNING s.awb_number, s.payout_id)
			SELECT made.*, (SELECT COUNT(*) FROM marked m WHERE m.payout_id = made.id)::int AS shipments FROM made`,
			[
				rules.cycle_date,
				[...rules.default_weekdays],
				rules.default_delay_days,
				rules.early_delay_days,
				rules.early_fee_bp,
			],
			t,
		);
		await appendEntries(
			db,
			made
				.filter((m) => Number(m.settled_charges_paise) > 0)
				.map((m) => ({
					sender_id: Number(m.sender_id),
					kind: "cod_settlement",
					amount_paise: Number(m.settled_charges_paise),
					entry_key: `payout:${m.id}:settlement`,
					attempt_id: null,
					order_id: null,
					awb_number: null,
					note: `shipping charges settled from COD payout ${m.id} (${rules.cycle_date})`,
					occurred_at: m.created_at.toISOString(),
				})),
			t,
		);
		return {
			payouts: made.length,
			shipments: made.reduce((n, m) => n + m.shipments, 0),
			net_paise: made.reduce((n, m) => n + Number(m.net_paise), 0),
		};
	});
}

/** An account's stored payout settings (week days 0 = Sunday), or null (the defaults apply). */
export async function payoutSettingsOf(
	db: Sequelize,
	sender_id: number,
): Promise<{ weekdays: number[]; delay_days: number; early_cod: boolean; settle_charges: boolean } | null> {
	const [r] = await select<{
		weekdays: number[];
		delay_days: number;
		early_cod: boolean;
		settle_charges: boolean;
	}>(
		db,
		`SELECT weekdays, delay_days, early_cod, settle_charges FROM billing.payout_settings WHERE sender_id = $1`,
		[sender_id],
	);
	return r ? { ...r, weekdays: r.weekdays.map(Number) } : null;
}

/** Stores an account's payout settings (replacing any). */
export async function setPayoutSettings(
	db: Sequelize,
	sender_id: number,
	s: { weekdays: number[]; delay_days: number; early_cod: boolean; settle_charges: boolean },
): Promise<void> {
	await exec(
		db,
		`INSERT INTO billing.payout_settings (sender_id, weekdays, delay_days, early_cod, settle_charges)
		 VALUES ($1, $2::smallint[], $3, $4, $5)
		 ON CONFLICT (sender_id) DO UPDATE SET weekdays = EXCLUDED.weekdays, delay_days = EXCLUDED.delay_days,
			early_cod = EXCLUDED.early_cod, settle_charges = EXCLUDED.settle_charges, updated_at = now()`,
		[sender_id, s.weekdays, s.delay_days, s.early_cod, s.settle_charges],
	);
}

/** One page of the account's payouts, newest first (by id), optionally of one status; plus whether more follow. */
export async function payoutsPage(
	db: Sequelize,
	sender_id: number,
	before_id: number | null,
	limit: number,
	status: PayoutStatus | null,
): Promise<{ rows: PayoutRow[]; more: boolean }> {
	const rows = await select<StoredPayout>(
		db,
		`SELECT ${PAYOUT_COLUMNS} FROM billing.payouts
		 WHERE sender_id = $1 AND ($2::bigint IS NULL OR id < $2::bigint) AND ($3::text IS NULL OR status = $3)
		 ORDER BY id DESC LIMIT $4`,
		[sender_id, before_id, status, limit + 1],
	);
	return { rows: rows.slice(0, limit).map(payoutRow), more: rows.length > limit };
}

/** The sender's payout `id` with its shipments, or null (missing, or another sender's). */
export async function payoutOf(
	db: Sequelize,
	sender_id: number,
	id: number,
): Promise<{ payout: PayoutRow; shipments: CodRow[]; order_ids: Map<string, number> } | null> {
	const [p] = await select<StoredPayout>(
		db,
		`SELECT ${PAYOUT_COLUMNS} FROM billing.payouts WHERE id = $1 AND sender_id = $2`,
		[id, sender_id],
	);
	if (!p) return null;
	const lines = await select<StoredCod & { order_id: string }>(
		db,
		`SELECT ${COD_COLUMNS}, order_id FROM billing.shipments WHERE payout_id = $1 ORDER BY collected_at, awb_number`,
		[id],
	);
	return {
		payout: payoutRow(p),
		shipments: lines.map(codRow),
		order_ids: new Map(lines.map((l) => [l.awb_number, Number(l.order_id)])),
	};
}

/**
 * Marks payout `id` paid with `utr` (any account: ops). The same UTR again
 * changes nothing. @returns the payout and whether it was paid before with
 * another UTR (`conflict`), or null when there is no such payout
 */
export async function markPayoutPaid(
	db: Sequelize,
	id: number,
	utr: string,
): Promise<{ payout: PayoutRow; conflict: boolean } | null> {
	return db.transaction(async (t) => {
		const { rows } = await exec<StoredPayout>(
			db,
			`UPDATE billing.payouts SET status = 'paid', utr = $2, paid_at = now()
			 WHERE id = $1 AND status = 'scheduled' RETURNING ${PAYOUT_COLUMNS}`,
			[id, utr],
			t,
		);
		if (rows[0]) {
			await exec(
				db,
				`UPDATE billing.shipments SET cod_status = 'paid', updated_at = now()
				 WHERE payout_id = $1 AND cod_status = 'remitted'`,
				[id],
				t,
			);
			const payout = payoutRow(rows[0]);
			// webhook `remittance.paid` (an account-level event: no order)
			await exec(
				db,
				`INSERT INTO billing.event_outbox (event) VALUES ($1::jsonb)`,
				[
					JSON.stringify({
						event_id: `remittance.paid:${payout.id}`,
						type: "remittance.paid",
						sender_id: payout.sender_id,
						order_id: null,
						occurred_at: payout.paid_at?.toISOString() ?? new Date().toISOString(),
						data: {
							remittance_id: payout.id,
							cycle_date: payout.cycle_date,
							shipments: payout.shipments,
							gross_cod: toRupees(payout.gross_paise),
							deductions: toRupees(payout.deductions_paise),
							net: toRupees(payout.net_paise),
							utr: payout.utr,
							paid_at: payout.paid_at?.toISOString() ?? null,
						},
					}),
				],
				t,
			);
			return { payout, conflict: false };
		}
		const [p] = await select<StoredPayout>(
			db,
			`SELECT ${PAYOUT_COLUMNS} FROM billing.payouts WHERE id = $1`,
			[id],
			t,
		);
		if (!p) return null;
		const payout = payoutRow(p);
		return { payout, conflict: payout.utr !== utr };
	});
}

/**
 * Where the sender's COD money is (paise): collected (the couriers hold it),
 * remitted and in no payout, in scheduled payouts; and what a cycle with
 * cut-off `cutoff` would pay now.
 */
export async function codSummary(
	db: Sequelize,
	sender_id: number,
	cutoff: string,
): Promise<{
	collected: [number, number];
	remitted: [number, number];
	scheduled: [number, number];
	next_paise: number;
}> {
	const [r] = await select<{
		collected_n: string;
		collected_paise: string;
		remitted_n: string;
		remitted_paise: string;
		next_paise: string;
		scheduled_n: string;
		scheduled_paise: string;
	}>(
		db,
		`SELECT
			COUNT(*) FILTER (WHERE cod_status = 'collected') AS collected_n,
			COALESCE(SUM(cod_amount_paise) FILTER (WHERE cod_status = 'collected'), 0) AS collected_paise,
			COUNT(*) FILTER (WHERE cod_status = 'remitted' AND payout_id IS NULL) AS remitted_n,
			COALESCE(SUM(remitted_paise) FILTER (WHERE cod_status = 'remitted' AND payout_id IS NULL), 0) AS remitted_paise,
			COALESCE(SUM(remitted_paise) FILTER (WHERE cod_status = 'remitted' AND payout_id IS NULL
				AND collected_at < $2::timestamptz), 0) AS next_paise,
			(SELECT COUNT(*) FROM billing.payouts WHERE sender_id = $1 AND status = 'scheduled') AS scheduled_n,
			(SELECT COALESCE(SUM(net_paise), 0) FROM billing.payouts WHERE sender_id = $1 AND status = 'scheduled')
				AS scheduled_paise
		 FROM billing.shipments WHERE sender_id = $1 AND payment_mode = 'cod'`,
		[sender_id, cutoff],
	);
	return {
		collected: [Number(r.collected_n), Number(r.collected_paise)],
		remitted: [Number(r.remitted_n), Number(r.remitted_paise)],
		scheduled: [Number(r.scheduled_n), Number(r.scheduled_paise)],
		next_paise: Number(r.next_paise),
	};
}

/** A leased `billing.outbox` row. */
export interface BillingOutboxRow {
	id: number;
	kind: "cod_status";
	/** written by the trigger of migration 005 */
	payload: CodStatusUpdate;
	tries: number;
}

/** Leases up to `limit` due undelivered `billing.outbox` rows, oldest first, for `leaseMs` (lib/platform/outbox.ts). */
export function leaseOutbox(db: Sequelize, limit: number, leaseMs: number): Promise<BillingOutboxRow[]> {
	return leaseOutboxRows<"cod_status", CodStatusUpdate>(db, "billing", limit, leaseMs);
}
