/**
 * Schema `notifications` (issue 29; docs/decisions/0108-buyer-tracking-page.md): what the buyer
 * sees of a merchant.
 * - `notifications.brands`: per account, the brand of its buyer tracking page (name, logo URL,
 *   colour, support phone and e-mail). No row: the neutral page. * - `notifications.preferences` (0002): per account, which channels and events reach buyers,
 *   quiet hours (IST minutes), the messages' language, whether a buyer's NDR answer is applied at
 *   once or awaits the merchant. No row: the defaults (lib/notifications/preferences.ts).
 * - `notifications.messages` (0002): every buyer message and its state (`queued`, `held`,
 *   `sent`, `delivered`, `failed`, `simulated`, `suppressed`); unique per (`event_key`,
 *   `channel`), so a redelivered event makes no second message.
 * - `notifications.opt_outs` (0002): per account, the buyer contacts (10-digit mobile or
 *   lower-case e-mail) that asked for no more messages (a STOP reply or the link).
 */
import type { Migration } from "../platform/db";

/** Migrations of schema `notifications`, in order (recorded in existing databases: never edit them). */
export const NOTIFICATIONS_MIGRATIONS: Migration[] = [
	{
		name: "0001_brands",
		async up({ sequelize, transaction }) {
			await sequelize.query(
				`CREATE TABLE IF NOT EXISTS notifications.brands (
					sender_id bigint PRIMARY KEY,
					brand_name text CHECK (char_length(brand_name) BETWEEN 1 AND 80),
					logo_url text CHECK (logo_url ~ '^https://' AND char_length(logo_url) <= 500),
					colour text CHECK (colour ~ '^#[0-9A-F]{6}$'),
					support_phone text CHECK (support_phone ~ '^[0-9]{10}$'),
					support_email text CHECK (char_length(support_email) <= 191),
					created_at timestamptz NOT NULL DEFAULT now(),
					updated_at timestamptz NOT NULL DEFAULT now()
				)`,
				{ transaction },
			);
		},
	},
	{
		name: "0002_messages",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(
				`CREATE TABLE IF NOT EXISTS notifications.preferences (
					sender_id bigint PRIMARY KEY,
					channels text[] NOT NULL,
					events text[] NOT NULL,
					quiet_start smallint CHECK (quiet_start BETWEEN 0 AND 1439),
					quiet_end smallint CHECK (quiet_end BETWEEN 0 AND 1439),
					language text NOT NULL CHECK (language IN ('en', 'hi')),
					ndr_answers text NOT NULL CHECK (ndr_answers IN ('apply', 'approve')),
					updated_at timestamptz NOT NULL DEFAULT now(),
					CHECK ((quiet_start IS NULL) = (quiet_end IS NULL))
				)`,
			);
			await q(
				`CREATE TABLE IF NOT EXISTS notifications.messages (
					id bigserial PRIMARY KEY,
					sender_id bigint NOT NULL,
					order_id bigint,
					awb_number text,
					event text NOT NULL,
					event_key text NOT NULL,
					seq integer NOT NULL DEFAULT 0,
					channel text NOT NULL CHECK (channel IN ('sms', 'whatsapp', 'email')),
					lang text NOT NULL CHECK (lang IN ('en', 'hi')),
					recipient text NOT NULL,
					vars jsonb NOT NULL,
					body text NOT NULL,
					subject text,
					provider text,
					provider_ref text,
					status text NOT NULL CHECK (status IN ('queued', 'held', 'sent', 'delivered', 'failed', 'simulated', 'suppressed')),
					tries integer NOT NULL DEFAULT 0,
					hold_until timestamptz,
					error text,
					created_at timestamptz NOT NULL DEFAULT now(),
					sent_at timestamptz,
					delivered_at timestamptz,
					failed_at timestamptz,
					updated_at timestamptz NOT NULL DEFAULT now(),
					UNIQUE (event_key, channel)
				)`,
			);
			await q(
				"CREATE INDEX IF NOT EXISTS messages_order ON notifications.messages (sender_id, order_id, id)",
			);
			await q(
				"CREATE UNIQUE INDEX IF NOT EXISTS messages_provider_ref ON notifications.messages (provider, provider_ref) WHERE provider_ref IS NOT NULL",
			);
			await q(
				"CREATE INDEX IF NOT EXISTS messages_pending ON notifications.messages (updated_at) WHERE status IN ('queued', 'held')",
			);
			await q(
				`CREATE TABLE IF NOT EXISTS notifications.opt_outs (
					sender_id bigint NOT NULL,
					recipient text NOT NULL,
					source text NOT NULL CHECK (source IN ('reply', 'link')),
					created_at timestamptz NOT NULL DEFAULT now(),
					PRIMARY KEY (sender_id, recipient)
				)`,
			);
		},
	},
];
