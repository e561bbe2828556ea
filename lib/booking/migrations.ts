/**
 * Tables of the `booking` schema (ARCHITECTURE §5 durability):
 *
 * - `booking.attempts`: one row per booking attempt of an order (the shipment:
 *   courier, AWB, state, failure reason, quoted charges in paise). A partial
 *   unique index keeps at most one LIVE attempt (queued, claimed, booked) per
 *   order, and an AWB is never held by two attempts.
 * - `booking.outbox`: side effects committed with the attempt and delivered
 *   after commit by the relay until acknowledged (`enqueue_booking` → BullMQ
 *   job, `order_update` → `intake.applyBookingUpdate`).
 * - `booking.rankings`: a merchant's AUTO ranking per direction (spec §2.8,
 *   `PATCH /v1/shipping/couriers/priority`); no rows = the rate card's default order.
 * - `booking.ledger`: the wallet, append-only, one row per movement (a
 *   booking's charge, its refund), at most one of each kind per attempt, paise.
 * - `booking.accounts`: per-account settings (optional credit limit, paise).
 */
import type { Migration } from "../db";

export const BOOKING_MIGRATIONS: Migration[] = [
	{
		name: "001-attempts-outbox",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`CREATE TABLE IF NOT EXISTS booking.attempts (
				attempt_id bigserial PRIMARY KEY,
				order_id bigint NOT NULL,
				sender_id bigint NOT NULL,
				logistic_id integer NOT NULL,
				courier_name text NOT NULL,
				mode text NOT NULL CHECK (mode IN ('auto', 'forced')),
				idem_key text GENERATED ALWAYS AS ('bk_' || attempt_id::text) STORED,
				state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'claimed', 'booked', 'failed', 'cancelled')),
				awb_number text,
				routing_code text,
				charges jsonb,
				failure_reason text,
				last_error text,
				ambiguous boolean NOT NULL DEFAULT false,
				tries integer NOT NULL DEFAULT 0,
				claimed_at timestamptz,
				booked_at timestamptz,
				created_at timestamptz NOT NULL DEFAULT now(),
				updated_at timestamptz NOT NULL DEFAULT now()
			)`);
			await q(`CREATE UNIQUE INDEX IF NOT EXISTS attempts_one_live_per_order
				ON booking.attempts (order_id) WHERE state IN ('queued', 'claimed', 'booked')`);
			await q(`CREATE UNIQUE INDEX IF NOT EXISTS attempts_awb
				ON booking.attempts (awb_number) WHERE awb_number IS NOT NULL`);
			await q(`CREATE UNIQUE INDEX IF NOT EXISTS attempts_idem_key ON booking.attempts (idem_key)`);
			await q(`CREATE INDEX IF NOT EXISTS attempts_sender_order ON booking.attempts (sender_id, order_id)`);
			await q(`CREATE INDEX IF NOT EXISTS attempts_pending
				ON booking.attempts (state, updated_at) WHERE state IN ('queued', 'claimed')`);
			await q(`CREATE TABLE IF NOT EXISTS booking.outbox (
				id bigserial PRIMARY KEY,
				kind text NOT NULL CHECK (kind IN ('enqueue_booking', 'order_update')),
				payload jsonb NOT NULL,
				created_at timestamptz NOT NULL DEFAULT now(),
				delivered_at timestamptz,
				tries integer NOT NULL DEFAULT 0,
				next_attempt_at timestamptz NOT NULL DEFAULT now(),
				last_error text
			)`);
			await q(`CREATE INDEX IF NOT EXISTS outbox_pending
				ON booking.outbox (next_attempt_at, id) WHERE delivered_at IS NULL`);
		},
	},
	{
		name: "002-ledger-rankings-sync-cancel",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`ALTER TABLE booking.attempts
				ADD COLUMN IF NOT EXISTS direction text NOT NULL DEFAULT 'forward' CHECK (direction IN ('forward', 'reverse')),
				ADD COLUMN IF NOT EXISTS via text NOT NULL DEFAULT 'async' CHECK (via IN ('async', 'sync')),
				ADD COLUMN IF NOT EXISTS chain jsonb NOT NULL DEFAULT '[]'::jsonb,
				ADD COLUMN IF NOT EXISTS cancel_requested_at timestamptz,
				ADD COLUMN IF NOT EXISTS cancelled_at timestamptz,
				ADD COLUMN IF NOT EXISTS settled_at timestamptz`);
			await q(`CREATE TABLE IF NOT EXISTS booking.rankings (
				sender_id bigint NOT NULL,
				direction text NOT NULL CHECK (direction IN ('forward', 'reverse')),
				logistic_id integer NOT NULL,
				priority integer NOT NULL CHECK (priority > 0),
				updated_at timestamptz NOT NULL DEFAULT now(),
				PRIMARY KEY (sender_id, direction, logistic_id)
			)`);
			await q(`CREATE TABLE IF NOT EXISTS booking.ledger (
				id bigserial PRIMARY KEY,
				sender_id bigint NOT NULL,
				attempt_id bigint NOT NULL REFERENCES booking.attempts (attempt_id),
				order_id bigint NOT NULL,
				kind text NOT NULL CHECK (kind IN ('charge', 'refund')),
				amount_paise bigint NOT NULL CHECK (amount_paise >= 0),
				awb_number text,
				note text,
				created_at timestamptz NOT NULL DEFAULT now(),
				UNIQUE (attempt_id, kind)
			)`);
			await q(`CREATE INDEX IF NOT EXISTS ledger_sender ON booking.ledger (sender_id, id DESC)`);
			await q(`CREATE TABLE IF NOT EXISTS booking.accounts (
				sender_id bigint PRIMARY KEY,
				credit_limit_paise bigint CHECK (credit_limit_paise IS NULL OR credit_limit_paise >= 0),
				updated_at timestamptz NOT NULL DEFAULT now()
			)`);
		},
	},
	{
		// GET /v1/shipping/couriers `shipments_30d`: the account's bookings of a direction by booked_at.
		name: "005-attempts-sender-booked",
		async up({ sequelize, transaction }) {
			await sequelize.query(
				`CREATE INDEX IF NOT EXISTS attempts_sender_booked
				 ON booking.attempts (sender_id, direction, booked_at) WHERE booked_at IS NOT NULL`,
				{ transaction },
			);
		},
	},
];
