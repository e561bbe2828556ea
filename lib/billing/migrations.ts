/**
 * Tables of the `billing` schema (issue 27; docs/decisions/0101-billing-service.md):
 *
 * - `billing.ledger`: the wallet, append-only (a trigger refuses UPDATE and
 *   DELETE: a correction is a new entry), one row per movement, integer
 *   paise; `entry_key` (`attempt:<attempt_id>:<kind>` for booking's
 *   movements) makes a redelivered movement a no-op. `occurred_at` is when
 *   the owning service recorded it (the wallet's `created_at`).
 * - `billing.balances`: per account, the sum of its entries (refunds −
 *   charges, paise) and their count, changed in the same statement as each
 *   insert; recomputable from the ledger at any time.
 * - `billing.accounts`: the credit limit booking enforces, mirrored from
 *   booking's outbox with its version (a stale delivery never wins).
 */
import type { Migration } from "../platform/db";

export const BILLING_MIGRATIONS: Migration[] = [
	{
		name: "001-ledger-balances-accounts",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`CREATE TABLE IF NOT EXISTS billing.ledger (
				id bigserial PRIMARY KEY,
				sender_id bigint NOT NULL CHECK (sender_id > 0),
				kind text NOT NULL CHECK (kind IN ('charge', 'refund')),
				amount_paise bigint NOT NULL CHECK (amount_paise >= 0),
				entry_key text NOT NULL UNIQUE,
				attempt_id bigint,
				order_id bigint,
				awb_number text,
				note text,
				occurred_at timestamptz NOT NULL,
				created_at timestamptz NOT NULL DEFAULT now()
			)`);
			// the wallet's order: when the movement happened, then id (lib/billing/store.ts ledgerPage)
			await q(
				`CREATE INDEX IF NOT EXISTS ledger_sender_time ON billing.ledger (sender_id, occurred_at DESC, id DESC)`,
			);
			await q(`CREATE OR REPLACE FUNCTION billing.ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
					RAISE EXCEPTION 'billing.ledger is append-only: % refused', TG_OP;
				END $$`);
			await q(`DROP TRIGGER IF EXISTS ledger_append_only ON billing.ledger`);
			await q(`CREATE TRIGGER ledger_append_only BEFORE UPDATE OR DELETE ON billing.ledger
				FOR EACH ROW EXECUTE FUNCTION billing.ledger_append_only()`);
			await q(`CREATE TABLE IF NOT EXISTS billing.balances (
				sender_id bigint PRIMARY KEY,
				balance_paise bigint NOT NULL,
				entries bigint NOT NULL,
				updated_at timestamptz NOT NULL DEFAULT now()
			)`);
			await q(`CREATE TABLE IF NOT EXISTS billing.accounts (
				sender_id bigint PRIMARY KEY,
				credit_limit_paise bigint CHECK (credit_limit_paise IS NULL OR credit_limit_paise >= 0),
				version bigint NOT NULL,
				updated_at timestamptz NOT NULL DEFAULT now()
			)`);
		},
	},
];
