/**
 * Migrations of the `webhooks` schema (issue 11;
 * docs/decisions/0044-merchant-webhooks.md).
 *
 * - `webhooks.endpoints`: a merchant's receiver: URL, subscribed event
 *   types, the signing secret (AES-GCM sealed, ./secrets.ts) and the
 *   previous one with its expiry (rotation), enabled / disabled with the
 *   reason, `failing_since` (first failed attempt since the last success).
 * - `webhooks.events`: one row per event received (`key` unique: a
 *   redelivered channel message is received once), its Standard Webhooks
 *   message id (`msg_id`, the `webhook-id` of every attempt), type, the
 *   account, the order, the shipment ordering key and seq (status events),
 *   and the `data` sent.
 * - `webhooks.deliveries`: one row per (event, endpoint) (unique), with the
 *   attempts made, the last attempt's outcome (status code, latency, error,
 *   first bytes of the answer), the next retry, the job generation (`gen`,
 *   bumped by a redelivery: the BullMQ job id is `wh-<id>-<gen>`).
 * - `webhooks.order_refs`: order id → order number (from `order.created`)
 *   and courier name (from `order.booked`), so later events of the order
 *   carry `order_no` (and status events `courier`) without asking intake.
 */
import type { Migration } from "../platform/db";

/** Ordered migrations for `DbMixin("webhooks", WEBHOOK_MIGRATIONS)`. */
export const WEBHOOK_MIGRATIONS: Migration[] = [
	{
		name: "0001-endpoints-events-deliveries",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`CREATE TABLE IF NOT EXISTS webhooks.endpoints (
				id bigserial PRIMARY KEY,
				sender_id bigint NOT NULL CHECK (sender_id > 0),
				url text NOT NULL,
				events text[] NOT NULL,
				description text NULL,
				enabled boolean NOT NULL DEFAULT true,
				disabled_reason text NULL,
				disabled_at timestamptz NULL,
				secret text NOT NULL,
				previous_secret text NULL,
				previous_secret_until timestamptz NULL,
				failing_since timestamptz NULL,
				created_at timestamptz NOT NULL DEFAULT now(),
				updated_at timestamptz NOT NULL DEFAULT now()
			)`);
			await q("CREATE INDEX IF NOT EXISTS endpoints_sender ON webhooks.endpoints (sender_id, id)");
			await q(`CREATE TABLE IF NOT EXISTS webhooks.events (
				id bigserial PRIMARY KEY,
				key text NOT NULL UNIQUE,
				msg_id text NOT NULL UNIQUE,
				sender_id bigint NOT NULL,
				type text NOT NULL,
				order_id bigint NULL,
				order_key text NULL,
				seq integer NULL,
				occurred_at timestamptz NOT NULL,
				data jsonb NOT NULL,
				created_at timestamptz NOT NULL DEFAULT now()
			)`);
			await q(
				"CREATE INDEX IF NOT EXISTS events_order_seq ON webhooks.events (order_key, seq) WHERE order_key IS NOT NULL",
			);
			await q(`CREATE TABLE IF NOT EXISTS webhooks.deliveries (
				id bigserial PRIMARY KEY,
				event_id bigint NOT NULL REFERENCES webhooks.events (id),
				endpoint_id bigint NOT NULL REFERENCES webhooks.endpoints (id) ON DELETE CASCADE,
				sender_id bigint NOT NULL,
				order_key text NULL,
				seq integer NULL,
				status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
				gen integer NOT NULL DEFAULT 1,
				attempts integer NOT NULL DEFAULT 0,
				status_code integer NULL,
				latency_ms integer NULL,
				error text NULL,
				response text NULL,
				first_attempt_at timestamptz NULL,
				last_attempt_at timestamptz NULL,
				next_retry_at timestamptz NULL,
				delivered_at timestamptz NULL,
				swept_at timestamptz NULL,
				created_at timestamptz NOT NULL DEFAULT now(),
				updated_at timestamptz NOT NULL DEFAULT now(),
				CONSTRAINT deliveries_event_endpoint UNIQUE (event_id, endpoint_id)
			)`);
			// the log of an endpoint, newest first (cursor on id)
			await q("CREATE INDEX IF NOT EXISTS deliveries_endpoint ON webhooks.deliveries (endpoint_id, id DESC)");
			// ordering per shipment: earlier pending deliveries of the same endpoint and shipment
			await q(`CREATE INDEX IF NOT EXISTS deliveries_order_pending ON webhooks.deliveries (endpoint_id, order_key, seq)
				WHERE status = 'pending' AND order_key IS NOT NULL`);
			// the sweeper: pending deliveries by when they were last looked at
			await q(
				"CREATE INDEX IF NOT EXISTS deliveries_pending ON webhooks.deliveries (id) WHERE status = 'pending'",
			);
			await q(`CREATE TABLE IF NOT EXISTS webhooks.order_refs (
				order_id bigint PRIMARY KEY,
				sender_id bigint NOT NULL,
				order_no text NULL,
				courier text NULL
			)`);
		},
	},
];
