/**
 * Schema `notifications` (issue 29; docs/decisions/0108-buyer-tracking-page.md): what the buyer
 * sees of a merchant.
 * - `notifications.brands`: per account, the brand of its buyer tracking page (name, logo URL,
 *   colour, support phone and e-mail). No row: the neutral page.
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
];
