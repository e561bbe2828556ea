/**
 * SQL of the rates service's writes (schema `rates`, lib/rates/migrations.ts);
 * the catalog reads are in ./catalog.ts, the sandbox seed in ./seed.ts.
 */
import type { Sequelize } from "sequelize";
import type { LaneOutcomeParams } from "../contracts";
import { exec } from "../platform/db";
import type { LaneDbRow } from "./catalog";

/**
 * Records outcome `o` (tat_days rounded to 2 decimals) in `rates.lane_outcomes` and, in the same statement and only
 * when that row was inserted (a new attempt id), adds it to the lane's
 * counters in `rates.lane_performance`: shipments + 1, delivered or rto + 1,
 * and for a delivered outcome `tat_days_sum` + tat_days (the average is over
 * delivered shipments; an RTO's days are kept in its outcome row only).
 * Answers the lane's counters after the increment, or null when the attempt
 * was recorded before (nothing changed). Throws the pg error of a foreign key
 * (unknown `logistic_id`) or CHECK violation.
 */
export async function recordLaneOutcome(db: Sequelize, o: LaneOutcomeParams): Promise<LaneDbRow | null> {
	const { rows } = await exec<LaneDbRow>(
		db,
		`WITH o AS (
		   INSERT INTO rates.lane_outcomes (attempt_id, logistic_id, from_pin, to_pin, outcome, tat_days)
		   VALUES ($1, $2, $3, $4, $5, $6)
		   ON CONFLICT (attempt_id) DO NOTHING
		   RETURNING logistic_id, from_pin, to_pin, outcome, tat_days)
		 INSERT INTO rates.lane_performance AS lp (logistic_id, from_pin, to_pin, shipments, delivered, rto, tat_days_sum)
		 SELECT logistic_id, from_pin, to_pin, 1, (outcome = 'delivered')::int, (outcome = 'rto')::int,
		        CASE WHEN outcome = 'delivered' THEN tat_days ELSE 0 END
		   FROM o
		 ON CONFLICT (logistic_id, from_pin, to_pin) DO UPDATE SET
		   shipments = lp.shipments + 1,
		   delivered = lp.delivered + EXCLUDED.delivered,
		   rto = lp.rto + EXCLUDED.rto,
		   tat_days_sum = lp.tat_days_sum + EXCLUDED.tat_days_sum,
		   updated_at = now()
		 RETURNING lp.logistic_id, lp.from_pin, lp.to_pin, lp.shipments, lp.delivered, lp.rto, lp.tat_days_sum`,
		[o.attempt_id, o.logistic_id, o.from_pin, o.to_pin, o.outcome, o.tat_days],
	);
	return rows[0] ?? null;
}
