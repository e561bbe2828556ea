/**
 * SQL of the booking service: per-account courier rankings (`booking.rankings`,
 * migration 002) and the 30-day booking count of `GET /v1/shipping/couriers`
 * (spec §2.8, §4.2). One ranking per (account, direction): rows
 * `(sender_id, direction, logistic_id, priority)`, priority 1 = first.
 */
import type { Sequelize } from "sequelize";
import type { ShipmentDirection } from "../../contracts";
import { exec, select } from "../../platform/db";

/** One stored ranking entry: courier and its position (1 = first). */
export interface RankingRow {
	logistic_id: number;
	priority: number;
}

/** The account's stored ranking for `direction`, by priority then logistic_id (empty: never ranked). */
export async function rankingOf(
	db: Sequelize,
	sender_id: number,
	direction: ShipmentDirection,
): Promise<RankingRow[]> {
	const rows = await select<{ logistic_id: number | string; priority: number | string }>(
		db,
		`SELECT logistic_id, priority FROM booking.rankings
		 WHERE sender_id = $1 AND direction = $2 ORDER BY priority, logistic_id`,
		[sender_id, direction],
	);
	return rows.map((r) => ({ logistic_id: Number(r.logistic_id), priority: Number(r.priority) }));
}

/**
 * Replaces the account's ranking for `direction` with `rows` in ONE
 * transaction: upserts every row (in logistic_id order, so two concurrent
 * replacements lock rows in the same order and the later one wins whole),
 * then deletes the account's other rows of that direction (couriers no longer
 * on the card). Rows of the other direction and of other accounts are never
 * touched. The caller has validated `rows` (a permutation of 1..n).
 */
export async function replaceRanking(
	db: Sequelize,
	sender_id: number,
	direction: ShipmentDirection,
	rows: RankingRow[],
): Promise<void> {
	const sorted = [...rows].sort((a, b) => a.logistic_id - b.logistic_id);
	await db.transaction(async (t) => {
		await exec(
			db,
			`INSERT INTO booking.rankings (sender_id, direction, logistic_id, priority)
			 SELECT $1, $2, x.logistic_id, x.priority
			   FROM jsonb_to_recordset($3::jsonb) AS x(logistic_id integer, priority integer)
			  ORDER BY x.logistic_id
			 ON CONFLICT (sender_id, direction, logistic_id)
			 DO UPDATE SET priority = EXCLUDED.priority, updated_at = now()`,
			[sender_id, direction, JSON.stringify(sorted)],
			t,
		);
		await exec(
			db,
			`DELETE FROM booking.rankings
			 WHERE sender_id = $1 AND direction = $2 AND NOT (logistic_id = ANY($3::integer[]))`,
			[sender_id, direction, sorted.map((r) => r.logistic_id)],
			t,
		);
	});
}

/**
 * The account's bookings of `direction` that got an AWB in the last 30 days
 * (`booked_at` within 30 × 24 h of now, UTC), not counting those cancelled since.
 */
export async function bookedLast30Days(
	db: Sequelize,
	sender_id: number,
	direction: ShipmentDirection,
): Promise<number> {
	const rows = await select<{ n: string | number }>(
		db,
		`SELECT count(*) AS n FROM booking.attempts
		 WHERE sender_id = $1 AND direction = $2 AND booked_at >= now() - interval '30 days'
		   AND state <> 'cancelled'`,
		[sender_id, direction],
	);
	return Number(rows[0]?.n ?? 0);
}
