/**
 * SQL of the booking service: cancellation (spec §4.2 `POST /v1/shipping/cancel`, §3 row
 * "booked → cancel") and booking's own view of an order (`booking.orderState`).
 * See ./index.ts; the decisions live in ../cancel.ts.
 *
 * Every state change is a conditional UPDATE (compare-and-set on `state`):
 * - queued → cancelled at once ({@link cancelQueued});
 * - claimed: only `cancel_requested_at` is set ({@link requestCancel}); the
 *   worker, which holds the courier call, never books such an attempt and
 *   cancels a late AWB at the courier;
 * - booked → cancelled after the courier accepted the cancel
 *   ({@link settleCancel}), with the refund ledger row and the order update in
 *   the same transaction.
 * Money: integer paise.
 */
import type { Sequelize, Transaction } from "sequelize";
import type { BookingUpdate } from "../../contracts";
import { exec, select } from "../../platform/db";
import type { AttemptRow } from "./attempts";
import { chargedPaise, recordLedger } from "./ledger";

/**
 * `seq` of the order update that reports a cancelled booking when nothing came
 * after the settlement: after 1 (queued) and 2 (booked / failed). The cancel
 * path takes the attempt's counter instead (`order_seq + 1`, incremented by
 * the UPDATE that cancels): after any tracking update (lib/booking/tracking.ts),
 * so intake applies the cancel over every earlier update of the attempt and
 * never lets a late one overwrite it.
 */
export const CANCEL_SEQ = 3;

/**
 * What cancellation and `booking.orderState` read of an attempt (ids as
 * numbers; `cancel_requested_at` set when a cancel arrived while the courier
 * call was in flight).
 */
export type AttemptView = Pick<
	AttemptRow,
	| "attempt_id"
	| "order_id"
	| "sender_id"
	| "logistic_id"
	| "courier_name"
	| "mode"
	| "state"
	| "direction"
	| "awb_number"
	| "failure_reason"
	| "cancel_requested_at"
	| "cancelled_at"
	| "tries"
>;

/** The {@link AttemptView} columns, each prefixed with `t` (a table alias and a dot, or nothing). */
function viewColumns(t = ""): string {
	return `${t}attempt_id::float8 AS attempt_id, ${t}order_id::float8 AS order_id, ${t}sender_id::float8 AS sender_id,
	${t}logistic_id, ${t}courier_name, ${t}mode, ${t}state, ${t}direction, ${t}awb_number, ${t}failure_reason,
	${t}cancel_requested_at, ${t}cancelled_at, ${t}tries`;
}

const VIEW_COLUMNS = viewColumns();

/**
 * The latest attempt (highest id) of the sender's order, or undefined (no
 * attempt, or the order is another sender's).
 */
export async function latestAttempt(
	db: Sequelize,
	sender_id: number,
	order_id: number,
	t?: Transaction,
): Promise<AttemptView | undefined> {
	const rows = await select<AttemptView>(
		db,
		`SELECT ${VIEW_COLUMNS} FROM booking.attempts
		 WHERE order_id = $1 AND sender_id = $2 ORDER BY attempt_id DESC LIMIT 1`,
		[order_id, sender_id],
		t,
	);
	return rows[0];
}

/**
 * The latest attempt of each `{sender_id, order_id}` in one statement (for
 * `booking.orderStates`); orders with no attempt of that sender are absent.
 */
export async function latestAttempts(
	db: Sequelize,
	keys: readonly { sender_id: number; order_id: number }[],
): Promise<AttemptView[]> {
	if (!keys.length) return [];
	return select<AttemptView>(
		db,
		`SELECT DISTINCT ON (a.order_id) ${viewColumns("a.")}
		 FROM booking.attempts a
		 JOIN unnest($1::bigint[], $2::bigint[]) AS k(order_id, sender_id)
		   ON a.order_id = k.order_id AND a.sender_id = k.sender_id
		 ORDER BY a.order_id, a.attempt_id DESC`,
		[keys.map((k) => k.order_id), keys.map((k) => k.sender_id)],
	);
}

/**
 * The order update that reports attempt `a` cancelled at step `seq` (the
 * attempt's incremented `order_seq`; default {@link CANCEL_SEQ}): state
 * `not_shipped`, status `cancelled`, no AWB / courier / logistic_id / failure
 * reason. Intake releases the order number when it applies it.
 */
export function cancelledUpdate(
	a: Pick<AttemptView, "attempt_id" | "order_id" | "sender_id">,
	seq: number = CANCEL_SEQ,
): BookingUpdate {
	return {
		order_id: a.order_id,
		sender_id: a.sender_id,
		attempt_id: a.attempt_id,
		seq,
		state: "not_shipped",
		status: "cancelled",
		awb_number: null,
		courier: null,
		logistic_id: null,
		failure_reason: null,
	};
}

/** Inserts the `order_update` outbox row of a cancellation at step `seq`; returns its id. */
async function addCancelOutbox(db: Sequelize, t: Transaction, a: AttemptView, seq: number): Promise<number> {
	const { rows } = await exec<{ id: string }>(
		db,
		`INSERT INTO booking.outbox (kind, payload) VALUES ('order_update', $1::jsonb) RETURNING id`,
		[JSON.stringify(cancelledUpdate(a, seq))],
		t,
	);
	return Number(rows[0].id);
}

/**
 * In ONE transaction: queued → cancelled (conditional UPDATE; `cancelled_at`,
 * `cancel_requested_at` stamped) and the cancelled order update in the outbox.
 * Nothing was charged (no AWB), so no ledger row. Returns the outbox ids, or
 * null when the attempt was no longer queued (a worker claimed it meanwhile).
 */
export async function cancelQueued(db: Sequelize, a: AttemptView): Promise<number[] | null> {
	return db.transaction(async (t) => {
		const { rows } = await exec<{ order_seq: number }>(
			db,
			`UPDATE booking.attempts
			 SET state = 'cancelled', cancelled_at = now(), cancel_requested_at = COALESCE(cancel_requested_at, now()),
			     claimed_at = NULL, settled_at = COALESCE(settled_at, now()), order_seq = order_seq + 1, updated_at = now()
			 WHERE attempt_id = $1 AND state = 'queued' AND tries = 0
			 RETURNING order_seq`,
			[a.attempt_id],
			t,
		);
		if (!rows[0]) return null;
		return [await addCancelOutbox(db, t, a, Number(rows[0].order_seq))];
	});
}

/**
 * Marks an attempt the courier may have seen as cancel-requested: claimed
 * (courier call in flight) or queued again after a try (released after a
 * transient failure, so the courier may hold an AWB for it). Idempotent: the
 * first request's time is kept. The worker never books it: it looks the
 * reference up and cancels any AWB. True when the attempt was still in such a
 * state; false when the worker finished it meanwhile.
 */
export async function requestCancel(db: Sequelize, attempt_id: number): Promise<boolean> {
	const { count } = await exec(
		db,
		`UPDATE booking.attempts SET cancel_requested_at = COALESCE(cancel_requested_at, now()), updated_at = now()
		 WHERE attempt_id = $1 AND (state = 'claimed' OR (state = 'queued' AND tries > 0))`,
		[attempt_id],
	);
	return count > 0;
}

/**
 * After the courier accepted the cancel of `a`'s AWB, in ONE transaction:
 * booked → cancelled (conditional UPDATE, `cancelled_at`), the refund ledger
 * row (amount = the attempt's charge, {@link chargedPaise}; none when nothing
 * was charged; idempotent per attempt) and the cancelled order update in the
 * outbox. Returns the outbox ids (the attempt's `ledger_entry` rows not yet
 * delivered: the refund, and the charge when the relay has not carried it yet;
 * then the order update), or null when the attempt was no longer booked (a
 * concurrent cancel settled it first).
 */
export async function settleCancel(db: Sequelize, a: AttemptView): Promise<number[] | null> {
	return db.transaction(async (t) => {
		const { rows } = await exec<{ order_seq: number }>(
			db,
			`UPDATE booking.attempts
			 SET state = 'cancelled', cancelled_at = now(), cancel_requested_at = COALESCE(cancel_requested_at, now()),
			     order_seq = order_seq + 1, updated_at = now()
			 WHERE attempt_id = $1 AND state = 'booked'
			 RETURNING order_seq`,
			[a.attempt_id],
			t,
		);
		if (!rows[0]) return null;
		const charged = await chargedPaise(db, a.attempt_id, t);
		const ids: number[] = [];
		if (charged !== null) {
			await recordLedger(db, t, {
				sender_id: a.sender_id,
				attempt_id: a.attempt_id,
				order_id: a.order_id,
				kind: "refund",
				amount_paise: charged,
				awb_number: a.awb_number,
				note: `cancelled by the merchant; AWB ${a.awb_number} cancelled at ${a.courier_name}`,
			});
			ids.push(...(await ledgerOutboxIds(db, t, a.attempt_id)));
		}
		return [...ids, await addCancelOutbox(db, t, a, Number(rows[0].order_seq))];
	});
}

/**
 * Attempt `attempt_id`'s `ledger_entry` outbox rows not yet delivered, in transaction `t`: the refund's, which the
 * ledger's trigger (migration 011) has just written, and the charge's when the relay has not carried it yet. The
 * cancel relays them with its own rows, so billing's wallet holds the charge and its refund when the cancel answers
 * `refunded` (docs/decisions/0161-refund-in-the-wallet-before-the-answer.md). Read through the outbox's
 * undelivered-rows index (a cancel is rare; the rows not yet delivered are few).
 */
async function ledgerOutboxIds(db: Sequelize, t: Transaction, attempt_id: number): Promise<number[]> {
	const rows = await select<{ id: string }>(
		db,
		`SELECT id FROM booking.outbox
		 WHERE delivered_at IS NULL AND kind = 'ledger_entry' AND (payload->>'attempt_id')::bigint = $1
		 ORDER BY id`,
		[attempt_id],
		t,
	);
	return rows.map((r) => Number(r.id));
}

/** The refund of an attempt in paise (0 when none was recorded). */
export async function refundedPaise(db: Sequelize, attempt_id: number): Promise<number> {
	const rows = await select<{ amount_paise: string }>(
		db,
		`SELECT amount_paise FROM booking.ledger WHERE attempt_id = $1 AND kind = 'refund'`,
		[attempt_id],
	);
	return rows[0] ? Number(rows[0].amount_paise) : 0;
}
