/**
 * Schema `idempotency`, owned by the gateway (issue 25;
 * docs/decisions/0074-idempotency-keys.md): the answers of POST requests sent
 * with an `Idempotency-Key` header (lib/gateway/idempotency.ts).
 *
 * - `idempotency.keys`: one row per account (`sender_id` of the verified
 *   token) and key. While the request runs, `lock_id` / `locked_at` hold it
 *   and `status` is NULL; once answered, `status`, `headers` (the stored
 *   response headers, `{name: value}`) and `body` (the answer's bytes) are set
 *   and `lock_id` is NULL. `fingerprint` is the SHA-256 of the request (method,
 *   path, query, canonical JSON body): the same key with another request is
 *   refused. `expires_at` = created + `IDEMPOTENCY_TTL_S`; expired rows are
 *   overwritten on access and purged hourly.
 */
import type { Migration } from "../platform/db";

/** PostgreSQL schema of the gateway's idempotency keys. */
export const IDEMPOTENCY_SCHEMA = "idempotency";

/** Migrations of schema `idempotency`, in order (names and SQL are recorded in existing databases: never edit them). */
export const IDEMPOTENCY_MIGRATIONS: Migration[] = [
	{
		name: "0001_keys",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`
				CREATE TABLE IF NOT EXISTS idempotency.keys (
					sender_id bigint NOT NULL,
					key varchar(255) NOT NULL,
					fingerprint bytea NOT NULL,
					method text NOT NULL,
					path text NOT NULL,
					lock_id uuid,
					locked_at timestamptz,
					created_at timestamptz NOT NULL DEFAULT now(),
					expires_at timestamptz NOT NULL,
					completed_at timestamptz,
					status smallint,
					headers jsonb,
					body bytea,
					PRIMARY KEY (sender_id, key)
				)`);
			await q("CREATE INDEX IF NOT EXISTS keys_expires_at_idx ON idempotency.keys (expires_at)");
		},
	},
];
