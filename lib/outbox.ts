/**
 * The parts of a service's transactional outbox (ARCHITECTURE §5: state that
 * crosses services goes through the owner's outbox, delivered by acknowledged
 * calls, retried until acknowledged) that are the same in every service:
 * marking rows delivered and scheduling a failed row's redelivery with
 * capped exponential backoff. Each service keeps its own table
 * `<schema>.outbox (id, next_attempt_at, delivered_at, last_error, tries, …)`
 * and its own lease query (what it delivers differs).
 */
import type { Sequelize } from "sequelize";
import { exec } from "./db";

/** Schemas whose `outbox` table these functions may touch (the SQL names the schema). */
export type OutboxSchema = "booking" | "documents";

/** Longest redelivery delay (ms). */
export const OUTBOX_MAX_DELAY_MS = 60_000;

/** Redelivery delay (ms) after a failed try: `baseMs` · 2^(tries−1), at most {@link OUTBOX_MAX_DELAY_MS}. */
export function outboxRetryDelayMs(tries: number, baseMs: number): number {
	return Math.min(OUTBOX_MAX_DELAY_MS, baseMs * 2 ** Math.max(0, Math.min(tries - 1, 16)));
}

/** Marks acknowledged rows `ids` of `<schema>.outbox` delivered (one UPDATE; nothing when empty). */
export async function markOutboxDelivered(db: Sequelize, schema: OutboxSchema, ids: number[]): Promise<void> {
	if (!ids.length) return;
	await exec(
		db,
		`UPDATE ${schema}.outbox SET delivered_at = now(), last_error = NULL WHERE id = ANY($1::bigint[])`,
		[ids],
	);
}

/**
 * Schedules the redelivery of failed row `row` of `<schema>.outbox` after
 * {@link outboxRetryDelayMs} and keeps the error (first 1000 characters).
 * A row delivered meanwhile is left alone.
 */
export async function retryOutboxLater(
	db: Sequelize,
	schema: OutboxSchema,
	row: { id: number; tries: number },
	error: string,
	baseMs: number,
): Promise<void> {
	await exec(
		db,
		`UPDATE ${schema}.outbox SET next_attempt_at = now() + make_interval(secs => $2::double precision / 1000), last_error = $3
		 WHERE id = $1 AND delivered_at IS NULL`,
		[row.id, outboxRetryDelayMs(row.tries, baseMs), error.slice(0, 1000)],
	);
}
