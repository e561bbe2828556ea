/**
 * Replay refusal of courier scan pushes (issue 31;
 * docs/decisions/0078-sandbox-scan-signatures.md): a push whose adapter names
 * a replay key (the sandbox couriers' timestamped signature,
 * lib/couriers/sandbox/signature.ts) is claimed in `booking.push_seen` before
 * its scans are folded; the same key again is refused. PostgreSQL, not Redis
 * or process memory: booking always has its database (Redis is optional,
 * `REDIS_URL`), and every booking replica shares it, so a replay sent to
 * another replica is refused too. A row is kept {@link PUSH_SEEN_KEEP_S}
 * seconds, longer than a signature is accepted (5 minutes old to 1 minute
 * ahead), then purged by the booking sweeper ({@link forgetOldPushes}).
 */
import type { Sequelize } from "sequelize";
import { exec } from "../platform/db";

/** How long a claimed push key is kept, seconds (over the 6-minute acceptance span of a signature). */
export const PUSH_SEEN_KEEP_S = 600;

/**
 * Claims push `key` of courier `courier`: true when it was not seen before
 * (now recorded), false when it was (a replay). One INSERT … ON CONFLICT DO
 * NOTHING: two concurrent deliveries of one push claim it once.
 */
export async function claimPush(db: Sequelize, courier: string, key: string): Promise<boolean> {
	const r = await exec(
		db,
		`INSERT INTO booking.push_seen (courier_code, push_key) VALUES ($1, $2)
		 ON CONFLICT DO NOTHING RETURNING 1 AS claimed`,
		[courier, key],
	);
	return r.rows.length === 1;
}

/**
 * Releases a claim made by {@link claimPush} (the push's scans could not be
 * folded, e.g. a database error): the courier's retry of the same signed
 * request is then accepted. Never throws (a failed release only costs that retry).
 */
export async function releasePush(db: Sequelize, courier: string, key: string): Promise<void> {
	await exec(db, "DELETE FROM booking.push_seen WHERE courier_code = $1 AND push_key = $2", [
		courier,
		key,
	]).catch(() => undefined);
}

/** Deletes the claims older than {@link PUSH_SEEN_KEEP_S}; answers how many. */
export async function forgetOldPushes(db: Sequelize): Promise<number> {
	const r = await exec(
		db,
		`DELETE FROM booking.push_seen WHERE seen_at < now() - make_interval(secs => $1)`,
		[PUSH_SEEN_KEEP_S],
	);
	return r.count;
}
