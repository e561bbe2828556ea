/**
 * All SQL of the gateway's idempotency keys (schema `idempotency`,
 * lib/gateway/migrations.ts; the rules in lib/gateway/idempotency.ts).
 */
import type { Sequelize } from "sequelize";
import { exec, select } from "../platform/db";

/** An answer stored under a key (what a replay writes). */
export interface StoredAnswer {
	/** HTTP status */
	status: number;
	/** response headers kept for replay, `{name: value}` (names as Node reports them: lower case) */
	headers: Record<string, string | string[]>;
	/** the answer's bytes (empty for none) */
	body: Buffer;
}

/** What {@link claimKey} found. */
export type Claim =
	/** the key is ours: run the request (a new key, an expired one, or a stale lock of the same request) */
	| { kind: "claimed" }
	/** the key holds another request (another fingerprint) */
	| { kind: "reused" }
	/** the same request is still running under the key (locked within the lock timeout) */
	| { kind: "in_progress" }
	/** the same request was answered: replay it */
	| { kind: "done"; answer: StoredAnswer };

/** The key of one request. */
export interface KeyRef {
	sender_id: number;
	key: string;
}

/** What {@link claimKey} needs besides the key. */
export interface ClaimInput extends KeyRef {
	/** SHA-256 of the request (lib/gateway/idempotency.ts `fingerprintOf`) */
	fingerprint: Buffer;
	method: string;
	path: string;
	/** the claim's own id (a UUID): only its holder completes or releases the key */
	lock_id: string;
	/** how long the answer is kept, seconds */
	ttl_s: number;
	/** how long a running request holds the key, seconds */
	lock_s: number;
}

/**
 * Claims the key in one statement: inserts a running row, or takes over a row
 * that expired or whose lock (same fingerprint) is older than `lock_s` (its
 * gateway died); otherwise reads what the key holds. Retries when the row
 * vanished between the two statements (released meanwhile).
 */
export async function claimKey(db: Sequelize, c: ClaimInput): Promise<Claim> {
	for (let attempt = 0; ; attempt++) {
		const { count } = await exec(
			db,
			`INSERT INTO idempotency.keys AS k
				(sender_id, key, fingerprint, method, path, lock_id, locked_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, now(), now() + make_interval(secs => $7))
			ON CONFLICT (sender_id, key) DO UPDATE SET
				fingerprint = EXCLUDED.fingerprint, method = EXCLUDED.method, path = EXCLUDED.path,
				lock_id = EXCLUDED.lock_id, locked_at = now(), created_at = now(), expires_at = EXCLUDED.expires_at,
				completed_at = NULL, status = NULL, headers = NULL, body = NULL
			WHERE k.expires_at <= now()
				OR (k.status IS NULL AND k.fingerprint = EXCLUDED.fingerprint
					AND k.locked_at <= now() - make_interval(secs => $8))
			RETURNING 1`,
			[c.sender_id, c.key, c.fingerprint, c.method, c.path, c.lock_id, c.ttl_s, c.lock_s],
		);
		if (count > 0) return { kind: "claimed" };
		const rows = await select<{
			fingerprint: Buffer;
			status: number | null;
			headers: Record<string, string | string[]> | null;
			body: Buffer | null;
		}>(
			db,
			`SELECT fingerprint, status, headers, body FROM idempotency.keys
			WHERE sender_id = $1 AND key = $2 AND expires_at > now()`,
			[c.sender_id, c.key],
		);
		const row = rows[0];
		if (!row) {
			if (attempt < 3) continue;
			throw new Error("idempotency key neither claimed nor found");
		}
		if (!row.fingerprint.equals(c.fingerprint)) return { kind: "reused" };
		if (row.status === null) return { kind: "in_progress" };
		return {
			kind: "done",
			answer: { status: row.status, headers: row.headers ?? {}, body: row.body ?? Buffer.alloc(0) },
		};
	}
}

/** Stores the answer of a claimed key (only while `lock_id` still holds it); answers whether it was stored. */
export async function completeKey(
	db: Sequelize,
	k: KeyRef & { lock_id: string },
	answer: StoredAnswer,
): Promise<boolean> {
	const { count } = await exec(
		db,
		`UPDATE idempotency.keys SET status = $4, headers = $5::jsonb, body = $6, completed_at = now(), lock_id = NULL
		WHERE sender_id = $1 AND key = $2 AND lock_id = $3`,
		[k.sender_id, k.key, k.lock_id, answer.status, JSON.stringify(answer.headers), answer.body],
	);
	return count > 0;
}

/** Releases a claimed key without an answer (the next request with it runs again). */
export async function releaseKey(db: Sequelize, k: KeyRef & { lock_id: string }): Promise<void> {
	await exec(
		db,
		"DELETE FROM idempotency.keys WHERE sender_id = $1 AND key = $2 AND lock_id = $3 AND status IS NULL",
		[k.sender_id, k.key, k.lock_id],
	);
}

/** Rows deleted per purge statement. */
const PURGE_BATCH = 5000;

/** Deletes expired keys in batches of {@link PURGE_BATCH}; answers how many. */
export async function purgeExpiredKeys(db: Sequelize): Promise<number> {
	let all = 0;
	for (;;) {
		const { count } = await exec(
			db,
			`DELETE FROM idempotency.keys WHERE ctid IN (
				SELECT ctid FROM idempotency.keys WHERE expires_at <= now() LIMIT ${PURGE_BATCH})`,
		);
		all += count;
		if (count < PURGE_BATCH) return all;
	}
}
