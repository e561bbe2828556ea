/**
 * Tables of the `billing` schema (issue 27; docs/decisions/0101-billing-service.md):
 *
 * - `billing.ledger`: the wallet, append-only (a trigger refuses UPDATE and
 *   DELETE: a correction is a new entry), one row per movement, integer
 *   paise; `entry_key` (`attempt:<attempt_id>:<kind>` for booking's
 *   movements) makes a redelivered movement a no-op. `occurred_at` is when
 *   the owning service recorded it (the wallet's `created_at`).
 * - `billing.balances`: per account, the sum of its entries (refunds −
 *   charges, paise), changed in the same statement as each
 *   insert; recomputable from the ledger at any time.
 * - `billing.accounts`: the credit limit booking enforces, mirrored from
 *   booking's outbox with its version (a stale delivery never wins).
 * - `billing.shipments` (migration 002): every shipment billing heard of on
 *   the `shipment.status_changed` channel, with its payment mode and, for
 *   COD, the amount to collect and its `cod_status` (pending → collected →
 *   remitted → paid; not_collected for RTO, lost, damaged, cancelled) and
 *   the courier's remittance that paid it.
 * - `billing.courier_remittances` and `billing.cod_exceptions` (migration
 *   002): each remittance file a courier sent (once per content: its SHA-256)
 *   with its line count (its matches are the shipments it paid:
 *   `shipments.remittance_id`), and each line that did not match a collected COD
 *   shipment (reconciliation exceptions, never silently accepted).
 * - `billing.payouts` (migration 003): one per account and payout cycle
 *   (UNIQUE (sender_id, cycle_date): a cycle run twice pays nothing twice):
 *   the remitted COD shipments it pays (`billing.shipments.payout_id`), gross,
 *   deductions and net (paise), `scheduled` until ops mark it `paid` with the
 *   bank's UTR.
 * - migration 004 (docs/decisions/0105-weight-discrepancies.md): the ledger
 *   kinds `weight_discrepancy` (a hold) and `weight_discrepancy_refund`;
 *   `billing.weight_tolerances` (per account, else the default);
 *   `billing.weight_reports` (each courier weight file once by SHA-256, its
 *   outcome stored); `billing.weight_discrepancies` (one per AWB: both sides'
 *   weights in grams and cm, the chargeable weights, the extra charge in
 *   paise, the status and its times); `billing.dispute_images` (the images
 *   of a dispute, EXIF-free bytes in PostgreSQL); `billing.event_outbox`
 *   (merchant events: `weight_discrepancy.opened`, `cod.exception`, `remittance.paid`).
 * - migration 005: `billing.outbox` (state crossing to other services,
 *   delivered by ./relay.ts): kind `cod_status`, a row per COD status a
 *   shipment takes (written by a trigger on `billing.shipments`, with the
 *   shipment's `cod_version`) for intake's orders list filter.
 * - migration 006 (docs/decisions/0104-cod-payouts.md): `billing.payout_settings`
 *   (per account: cycle week days, delay, early COD, settling charges from
 *   COD; absent = the defaults), the payouts' early-COD fee and settled
 *   charges (their `deductions` = the two), and the ledger kind
 *   `cod_settlement`; migration 007 makes the database hold deductions =
 *   fee + settled and net = gross − deductions.
 */
import type { Migration } from "../platform/db";
import { eventOutboxDdl, eventOutboxRangesMigration } from "../platform/merchant-events-outbox";

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
	{
		name: "002-cod-shipments-remittances",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`CREATE TABLE IF NOT EXISTS billing.courier_remittances (
				id bigserial PRIMARY KEY,
				file_sha256 text NOT NULL UNIQUE,
				logistic_id integer,
				lines integer NOT NULL,
				received_at timestamptz NOT NULL DEFAULT now()
			)`);
			await q(`CREATE TABLE IF NOT EXISTS billing.shipments (
				awb_number text PRIMARY KEY,
				sender_id bigint NOT NULL,
				order_id bigint NOT NULL,
				logistic_id integer NOT NULL,
				payment_mode text NOT NULL CHECK (payment_mode IN ('cod', 'prepaid')),
				cod_amount_paise bigint NOT NULL DEFAULT 0 CHECK (cod_amount_paise >= 0),
				cod_status text CHECK (cod_status IN ('pending', 'collected', 'remitted', 'paid', 'not_collected')),
				status_seq integer NOT NULL,
				collected_at timestamptz,
				not_collected_at timestamptz,
				remittance_id bigint REFERENCES billing.courier_remittances (id),
				remittance_reference text,
				remitted_on date,
				remitted_paise bigint,
				created_at timestamptz NOT NULL DEFAULT now(),
				updated_at timestamptz NOT NULL DEFAULT now(),
				CHECK ((payment_mode = 'cod') = (cod_status IS NOT NULL))
			)`);
			await q(`CREATE INDEX IF NOT EXISTS shipments_sender_order ON billing.shipments (sender_id, order_id)`);
			// a remittance's matched lines are the shipments it paid (lib/billing/store.ts storedRemittance)
			await q(`CREATE INDEX IF NOT EXISTS shipments_remittance ON billing.shipments (remittance_id)
				WHERE remittance_id IS NOT NULL`);
			await q(`CREATE TABLE IF NOT EXISTS billing.cod_exceptions (
				id bigserial PRIMARY KEY,
				remittance_id bigint NOT NULL REFERENCES billing.courier_remittances (id),
				line_no integer NOT NULL,
				awb_number text,
				kind text NOT NULL
					CHECK (kind IN ('amount_mismatch', 'unknown_awb', 'not_delivered', 'duplicate', 'invalid_line')),
				detail text NOT NULL,
				sender_id bigint,
				expected_paise bigint,
				amount_paise bigint,
				remittance_reference text,
				remitted_on date,
				created_at timestamptz NOT NULL DEFAULT now(),
				UNIQUE (remittance_id, line_no)
			)`);
			await q(`CREATE INDEX IF NOT EXISTS cod_exceptions_awb ON billing.cod_exceptions (awb_number)`);
		},
	},
	{
		name: "003-payouts",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`CREATE TABLE IF NOT EXISTS billing.payouts (
				id bigserial PRIMARY KEY,
				sender_id bigint NOT NULL,
				cycle_date date NOT NULL,
				shipments integer NOT NULL CHECK (shipments > 0),
				gross_paise bigint NOT NULL CHECK (gross_paise >= 0),
				deductions_paise bigint NOT NULL DEFAULT 0 CHECK (deductions_paise >= 0),
				net_paise bigint NOT NULL,
				status text NOT NULL DEFAULT 'scheduled' CHECK (status IN ('scheduled', 'paid')),
				utr text,
				paid_at timestamptz,
				created_at timestamptz NOT NULL DEFAULT now(),
				UNIQUE (sender_id, cycle_date),
				CHECK ((status = 'paid') = (utr IS NOT NULL))
			)`);
			await q(`CREATE INDEX IF NOT EXISTS payouts_sender ON billing.payouts (sender_id, id DESC)`);
			await q(
				`ALTER TABLE billing.shipments ADD COLUMN IF NOT EXISTS payout_id bigint REFERENCES billing.payouts (id)`,
			);
			// the cycle's candidates: remitted, not yet in a payout
			await q(`CREATE INDEX IF NOT EXISTS shipments_payable ON billing.shipments (collected_at)
				WHERE cod_status = 'remitted' AND payout_id IS NULL`);
			await q(
				`CREATE INDEX IF NOT EXISTS shipments_payout ON billing.shipments (payout_id) WHERE payout_id IS NOT NULL`,
			);
		},
	},
	{
		name: "004-weight-discrepancies",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`ALTER TABLE billing.ledger DROP CONSTRAINT IF EXISTS ledger_kind_check`);
			await q(`ALTER TABLE billing.ledger ADD CONSTRAINT ledger_kind_check
				CHECK (kind IN ('charge', 'refund', 'weight_discrepancy', 'weight_discrepancy_refund'))`);
			// the AWB's booking charge (a discrepancy's movements name its attempt)
			await q(
				`CREATE INDEX IF NOT EXISTS ledger_awb ON billing.ledger (awb_number) WHERE awb_number IS NOT NULL`,
			);
			await q(`CREATE TABLE IF NOT EXISTS billing.weight_tolerances (
				sender_id bigint PRIMARY KEY,
				grams integer NOT NULL CHECK (grams BETWEEN 0 AND 100000),
				percent integer NOT NULL CHECK (percent BETWEEN 0 AND 100),
				updated_at timestamptz NOT NULL DEFAULT now()
			)`);
			await q(`CREATE TABLE IF NOT EXISTS billing.weight_reports (
				id bigserial PRIMARY KEY,
				file_sha256 text NOT NULL UNIQUE,
				logistic_id integer,
				lines integer NOT NULL,
				outcome jsonb NOT NULL,
				received_at timestamptz NOT NULL DEFAULT now()
			)`);
			await q(`CREATE TABLE IF NOT EXISTS billing.weight_discrepancies (
				id bigserial PRIMARY KEY,
				sender_id bigint NOT NULL,
				order_id bigint NOT NULL,
				awb_number text NOT NULL UNIQUE,
				logistic_id integer NOT NULL,
				report_sha256 text NOT NULL,
				declared_g integer NOT NULL CHECK (declared_g > 0),
				declared_dims_cm numeric(10, 2)[],
				declared_chargeable_g integer NOT NULL,
				charged_g integer NOT NULL CHECK (charged_g > 0),
				charged_dims_cm numeric(10, 2)[],
				charged_chargeable_g integer NOT NULL,
				extra_paise bigint NOT NULL CHECK (extra_paise > 0),
				status text NOT NULL DEFAULT 'open'
					CHECK (status IN ('open', 'accepted', 'disputed', 'won', 'lost', 'auto_accepted')),
				dispute_reason text,
				disputed_at timestamptz,
				resolution_note text,
				closed_at timestamptz,
				opened_at timestamptz NOT NULL DEFAULT now(),
				respond_by timestamptz NOT NULL,
				updated_at timestamptz NOT NULL DEFAULT now(),
				CHECK ((status IN ('open', 'disputed')) = (closed_at IS NULL))
			)`);
			await q(
				`CREATE INDEX IF NOT EXISTS discrepancies_sender ON billing.weight_discrepancies (sender_id, id DESC)`,
			);
			// the auto-accept job's candidates
			await q(`CREATE INDEX IF NOT EXISTS discrepancies_due ON billing.weight_discrepancies (respond_by)
				WHERE status = 'open'`);
			await q(`CREATE TABLE IF NOT EXISTS billing.dispute_images (
				discrepancy_id bigint NOT NULL REFERENCES billing.weight_discrepancies (id),
				n smallint NOT NULL CHECK (n BETWEEN 1 AND 5),
				content_type text NOT NULL CHECK (content_type IN ('image/jpeg', 'image/png')),
				width integer NOT NULL,
				height integer NOT NULL,
				bytes bytea NOT NULL,
				sha256 text NOT NULL,
				created_at timestamptz NOT NULL DEFAULT now(),
				PRIMARY KEY (discrepancy_id, n)
			)`);
			for (const sql of eventOutboxDdl("billing")) await q(sql);
		},
	},
	{
		name: "005-cod-status-outbox",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			// a COD shipment's cod_status version: +1 per change, so a late delivery of an older one never wins
			await q(
				`ALTER TABLE billing.shipments ADD COLUMN IF NOT EXISTS cod_version integer NOT NULL DEFAULT 1`,
			);
			await q(`CREATE TABLE IF NOT EXISTS billing.outbox (
				id bigserial PRIMARY KEY,
				kind text NOT NULL CHECK (kind IN ('cod_status')),
				payload jsonb NOT NULL,
				next_attempt_at timestamptz NOT NULL DEFAULT now(),
				delivered_at timestamptz,
				tries integer NOT NULL DEFAULT 0,
				last_error text,
				created_at timestamptz NOT NULL DEFAULT now()
			)`);
			// relays read the oldest due rows by id (lib/platform/outbox.ts)
			await q(
				`CREATE INDEX IF NOT EXISTS outbox_undelivered_id ON billing.outbox (id) WHERE delivered_at IS NULL`,
			);
			await q(`CREATE OR REPLACE FUNCTION billing.cod_version() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
					IF TG_OP = 'UPDATE' AND NEW.cod_status IS DISTINCT FROM OLD.cod_status THEN
						NEW.cod_version := OLD.cod_version + 1;
					END IF;
					RETURN NEW;
				END $$`);
			await q(`DROP TRIGGER IF EXISTS cod_version ON billing.shipments`);
			await q(`CREATE TRIGGER cod_version BEFORE UPDATE ON billing.shipments
				FOR EACH ROW EXECUTE FUNCTION billing.cod_version()`);
			// every COD status a shipment takes goes to intake (the orders list's cod_status filter), by the outbox
			await q(`CREATE OR REPLACE FUNCTION billing.cod_status_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
					IF NEW.cod_status IS NOT NULL
						AND (TG_OP = 'INSERT' OR NEW.cod_status IS DISTINCT FROM OLD.cod_status) THEN
						INSERT INTO billing.outbox (kind, payload) VALUES ('cod_status', jsonb_build_object(
							'awb_number', NEW.awb_number, 'sender_id', NEW.sender_id, 'order_id', NEW.order_id,
							'cod_status', NEW.cod_status, 'version', NEW.cod_version));
					END IF;
					RETURN NULL;
				END $$`);
			await q(`DROP TRIGGER IF EXISTS cod_status_outbox ON billing.shipments`);
			await q(`CREATE TRIGGER cod_status_outbox AFTER INSERT OR UPDATE ON billing.shipments
				FOR EACH ROW EXECUTE FUNCTION billing.cod_status_outbox()`);
			// the shipments billing already holds: their status once
			await q(`INSERT INTO billing.outbox (kind, payload)
				SELECT 'cod_status', jsonb_build_object('awb_number', awb_number, 'sender_id', sender_id,
					'order_id', order_id, 'cod_status', cod_status, 'version', cod_version)
				FROM billing.shipments WHERE cod_status IS NOT NULL ORDER BY awb_number`);
		},
	},
	{
		name: "006-payout-settings",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`CREATE TABLE IF NOT EXISTS billing.payout_settings (
				sender_id bigint PRIMARY KEY,
				weekdays smallint[] NOT NULL CHECK (cardinality(weekdays) BETWEEN 1 AND 7
					AND weekdays <@ ARRAY[0, 1, 2, 3, 4, 5, 6]::smallint[]),
				delay_days smallint NOT NULL CHECK (delay_days BETWEEN 1 AND 30),
				early_cod boolean NOT NULL DEFAULT false,
				settle_charges boolean NOT NULL DEFAULT false,
				updated_at timestamptz NOT NULL DEFAULT now()
			)`);
			await q(`ALTER TABLE billing.payouts
				ADD COLUMN IF NOT EXISTS early_cod_fee_paise bigint NOT NULL DEFAULT 0 CHECK (early_cod_fee_paise >= 0),
				ADD COLUMN IF NOT EXISTS settled_charges_paise bigint NOT NULL DEFAULT 0 CHECK (settled_charges_paise >= 0)`);
			await q(`ALTER TABLE billing.ledger DROP CONSTRAINT IF EXISTS ledger_kind_check`);
			await q(`ALTER TABLE billing.ledger ADD CONSTRAINT ledger_kind_check CHECK (kind IN ('charge', 'refund',
				'weight_discrepancy', 'weight_discrepancy_refund', 'cod_settlement'))`);
		},
	},
	{
		// a payout's deductions and net are its parts' sums: the database refuses a row where they are not
		name: "007-payout-amounts-check",
		async up({ sequelize, transaction }) {
			await sequelize.query(
				`ALTER TABLE billing.payouts ADD CONSTRAINT payouts_amounts_add_up CHECK (
					deductions_paise = early_cod_fee_paise + settled_charges_paise
					AND net_paise = gross_paise - deductions_paise)`,
				{ transaction },
			);
		},
	},
	// a relay woken by a commit reads from the smallest id it added (docs/decisions/0118-event-outbox-ranges.md)
	eventOutboxRangesMigration("008-event-outbox-ranges", "billing"),
];
