/**
 * Migrations of the `intake` schema (docs/ARCHITECTURE.md §1, §5).
 *
 * `intake.orders` is the order aggregate: the merchant's fields (spec §2.1,
 * §2.2) plus the booking state and lifecycle status other services report to
 * it (§2.4, §3). Units: weights kg (numeric), money integer paise (bigint,
 * columns suffixed `_paise`), dimensions cm (numeric), timestamps timestamptz
 * (UTC).
 *
 * Idempotent create rests on a unique index over `(sender_id,
 * customer_order_no)` plus `INSERT … ON CONFLICT DO NOTHING` (never
 * read-then-write). Since 0002 that index covers live orders only
 * (`released_at IS NULL`): a cancelled booking releases the order number
 * (spec §3 row "booked → cancel"), and a later create with the same
 * `customer_order_no` makes a new order.
 */

import type { Migration } from "../platform/db";
import { eventOutboxDdl, eventOutboxRangesMigration } from "../platform/merchant-events-outbox";
import { undeliveredByIdMigration } from "../platform/outbox";

/** Ordered migrations for `DbMixin("intake", INTAKE_MIGRATIONS)`. */
export const INTAKE_MIGRATIONS: Migration[] = [
	{
		name: "0001-orders",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`
CREATE TABLE IF NOT EXISTS intake.orders (
	order_id bigserial PRIMARY KEY,
	sender_id bigint NOT NULL CHECK (sender_id > 0),
	customer_order_no text NOT NULL,
	shipment_type smallint NOT NULL DEFAULT 0 CHECK (shipment_type IN (0, 1)),
	channel text,
	order_type smallint NOT NULL DEFAULT 0 CHECK (order_type IN (0, 1)),
	pickup_address_id bigint,
	rto_address_id bigint,
	receiver_name text NOT NULL,
	receiver_address_1 text NOT NULL,
	receiver_address_2 text,
	receiver_landmark text,
	receiver_city text,
	receiver_state text,
	receiver_pincode text NOT NULL,
	receiver_mobile_no text NOT NULL,
	product_name text NOT NULL,
	product_sku text,
	physical_weight numeric(10, 3) NOT NULL CHECK (physical_weight > 0),
	declared_order_total_paise bigint NOT NULL CHECK (declared_order_total_paise >= 0),
	cod_amount_paise bigint NOT NULL DEFAULT 0 CHECK (cod_amount_paise >= 0),
	length numeric(8, 2),
	width numeric(8, 2),
	height numeric(8, 2),
	forward_source text,
	old_fwd_awb_no text,
	reverse_pickup_address_id bigint,
	return_address jsonb,
	order_date timestamptz NOT NULL DEFAULT now(),
	order_from_source text,
	state text NOT NULL DEFAULT 'not_shipped'
		CHECK (state IN ('not_shipped', 'booking_in_progress', 'booked', 'failed')),
	status text NOT NULL DEFAULT 'new',
	awb_number text,
	courier text,
	logistic_id integer,
	failure_reason text,
	booking_attempt_id bigint,
	booking_seq integer,
	booked_at timestamptz,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	CONSTRAINT orders_sender_ref_key UNIQUE (sender_id, customer_order_no)
)`);
			// warehouseUsage: open orders shipping from one warehouse, newest first.
			await q(
				`CREATE INDEX IF NOT EXISTS orders_sender_pickup_idx ON intake.orders (sender_id, pickup_address_id, order_id DESC)`,
			);
			// adoptOrphanOrders: the sender's orders that arrived with no warehouse.
			await q(
				`CREATE INDEX IF NOT EXISTS orders_orphan_idx ON intake.orders (sender_id) WHERE pickup_address_id IS NULL`,
			);
			// shippedCounts: orders booked since a time, per pickup warehouse.
			await q(
				`CREATE INDEX IF NOT EXISTS orders_booked_at_idx ON intake.orders (sender_id, booked_at) WHERE booked_at IS NOT NULL`,
			);
		},
	},
	{
		// Order number release (spec §3, §4.2 cancel): `released_at` is stamped when
		// a booking update reports the order cancelled; the reference is unique
		// among unreleased orders only. Lookups by reference (status, dedupe) use
		// the plain index, newest first.
		name: "0002-release-order-numbers",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`ALTER TABLE intake.orders ADD COLUMN IF NOT EXISTS released_at timestamptz`);
			await q(
				`CREATE INDEX IF NOT EXISTS orders_sender_ref_idx ON intake.orders (sender_id, customer_order_no, order_id DESC)`,
			);
			await q(`CREATE UNIQUE INDEX IF NOT EXISTS orders_sender_ref_live
				ON intake.orders (sender_id, customer_order_no) WHERE released_at IS NULL`);
			await q(`ALTER TABLE intake.orders DROP CONSTRAINT IF EXISTS orders_sender_ref_key`);
		},
	},
	{
		// Orders read side and tracking (issue 7; spec §2.5, §3, §4.3, §4.8):
		// lifecycle timestamps, the failure code of the unshipped queue, hiding,
		// buyer-detail edits, and the list bucket as a stored generated column
		// (lib/shared/shipment-status.ts `bucketOf`; test/unit/intake/ checks the two
		// agree) so every bucket is one keyset index range.
		name: "0003-orders-read-side",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`ALTER TABLE intake.orders
				ADD COLUMN IF NOT EXISTS failure_code text,
				ADD COLUMN IF NOT EXISTS status_at timestamptz,
				ADD COLUMN IF NOT EXISTS manifested_at timestamptz,
				ADD COLUMN IF NOT EXISTS picked_up_at timestamptz,
				ADD COLUMN IF NOT EXISTS delivered_at timestamptz,
				ADD COLUMN IF NOT EXISTS rto_at timestamptz,
				ADD COLUMN IF NOT EXISTS closed_at timestamptz,
				ADD COLUMN IF NOT EXISTS hidden_at timestamptz,
				ADD COLUMN IF NOT EXISTS edited_at timestamptz,
				ADD COLUMN IF NOT EXISTS bucket text GENERATED ALWAYS AS (CASE status
					WHEN 'booked' THEN 'rts'
					WHEN 'manifested' THEN 'manifest'
					WHEN 'pickup_scheduled' THEN 'pickup'
					WHEN 'picked_up' THEN 'transit'
					WHEN 'in_transit' THEN 'transit'
					WHEN 'out_for_delivery' THEN 'transit'
					WHEN 'delivered' THEN 'delivered'
					WHEN 'rto_initiated' THEN 'rto'
					WHEN 'rto_in_transit' THEN 'rto'
					WHEN 'rto_delivered' THEN 'rto'
					WHEN 'undelivered' THEN 'exceptions'
					WHEN 'lost' THEN 'exceptions'
					WHEN 'damaged' THEN 'exceptions'
					WHEN 'cancelled' THEN 'cancelled'
				END) STORED`);
			// GET /v1/orders: newest first per account (bucket all), per bucket, by AWB, by city
			await q(`CREATE INDEX IF NOT EXISTS orders_list_idx
				ON intake.orders (sender_id, order_id DESC) WHERE hidden_at IS NULL`);
			await q(`CREATE INDEX IF NOT EXISTS orders_bucket_idx
				ON intake.orders (sender_id, bucket, order_id DESC) WHERE hidden_at IS NULL`);
			await q(`CREATE INDEX IF NOT EXISTS orders_awb_idx
				ON intake.orders (sender_id, awb_number) WHERE awb_number IS NOT NULL`);
			await q(`CREATE INDEX IF NOT EXISTS orders_city_idx
				ON intake.orders (sender_id, lower(receiver_city), order_id DESC) WHERE hidden_at IS NULL`);
			// GET /v1/orders/unshipped and its counts: the open, not-yet-shipped orders
			await q(`CREATE INDEX IF NOT EXISTS orders_unshipped_idx
				ON intake.orders (sender_id, shipment_type, order_id DESC)
				WHERE hidden_at IS NULL AND state IN ('not_shipped', 'failed', 'booking_in_progress')
				  AND status <> 'cancelled'`);
		},
	},
	{
		// GET /v1/orders (issue 7, §4.3): the filters 0003 left without an
		// index. date_from / date_to (IST days over created_at): a range far in
		// the past scanned every newer order of the account; the planner takes
		// orders_created_idx when the range is selective and keeps orders_list_idx
		// (keyset order) otherwise. shipment_type: returns are a few percent of an
		// account's orders, so `shipment_type=1` read ~30 rows per row answered
		// through orders_list_idx; orders_type_idx is the keyset range itself.
		name: "0004-orders-list-filters",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`CREATE INDEX IF NOT EXISTS orders_created_idx
				ON intake.orders (sender_id, created_at) WHERE hidden_at IS NULL`);
			await q(`CREATE INDEX IF NOT EXISTS orders_type_idx
				ON intake.orders (sender_id, shipment_type, order_id DESC) WHERE hidden_at IS NULL`);
		},
	},
	{
		// Bulk upload (issue 10; docs/decisions/0039-bulk-upload-api.md): a job per
		// uploaded file, the file's bytes stored with it (in PostgreSQL, not one
		// pod's disk) before the 202, and one outcome row per data row.
		// `processed_rows` is the worker's checkpoint (rows fully handled,
		// committed with their orders and outcomes in one transaction). Row
		// numbers are 1-based data rows (the header is row 0).
		name: "0005-bulk-jobs",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`
CREATE TABLE IF NOT EXISTS intake.bulk_jobs (
	job_id bigserial PRIMARY KEY,
	sender_id bigint NOT NULL CHECK (sender_id > 0),
	status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'processing', 'completed', 'failed')),
	file_name text NOT NULL,
	content_type text,
	format text NOT NULL CHECK (format IN ('csv', 'xlsx')),
	size_bytes bigint NOT NULL CHECK (size_bytes > 0),
	sender_address_id bigint NOT NULL,
	total_rows integer,
	processed_rows integer NOT NULL DEFAULT 0,
	created integer NOT NULL DEFAULT 0,
	deduped integer NOT NULL DEFAULT 0,
	failed integer NOT NULL DEFAULT 0,
	in_review integer NOT NULL DEFAULT 0,
	error text,
	created_at timestamptz NOT NULL DEFAULT now(),
	started_at timestamptz,
	finished_at timestamptz
)`);
			await q(`CREATE INDEX IF NOT EXISTS bulk_jobs_sender_idx ON intake.bulk_jobs (sender_id, job_id DESC)`);
			await q(`
CREATE TABLE IF NOT EXISTS intake.bulk_files (
	job_id bigint PRIMARY KEY REFERENCES intake.bulk_jobs (job_id) ON DELETE CASCADE,
	bytes bytea NOT NULL
)`);
			await q(`
CREATE TABLE IF NOT EXISTS intake.bulk_rows (
	job_id bigint NOT NULL REFERENCES intake.bulk_jobs (job_id) ON DELETE CASCADE,
	row_no integer NOT NULL CHECK (row_no > 0),
	outcome text NOT NULL CHECK (outcome IN ('created', 'deduped', 'failed', 'review', 'approved', 'rejected')),
	order_id bigint,
	errors jsonb,
	review_reason text,
	data jsonb,
	decided_at timestamptz,
	PRIMARY KEY (job_id, row_no)
)`);
			// the review queue of a job, and its created orders, without scanning every outcome
			await q(
				`CREATE INDEX IF NOT EXISTS bulk_rows_outcome_idx ON intake.bulk_rows (job_id, outcome, row_no)`,
			);
		},
	},
	{
		// a bulk file in parts of at most 1 MB (lib/intake/bulk/jobs-store.ts FILE_PART): one 25 MB parameter made
		// node-postgres copy the file several times over while serialising it, and reading it back one 50 MB hex string
		name: "0006-bulk-file-parts",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`ALTER TABLE intake.bulk_files ADD COLUMN IF NOT EXISTS part integer NOT NULL DEFAULT 0`);
			await q(`ALTER TABLE intake.bulk_files DROP CONSTRAINT IF EXISTS bulk_files_pkey`);
			await q(`ALTER TABLE intake.bulk_files ADD CONSTRAINT bulk_files_pkey PRIMARY KEY (job_id, part)`);
		},
	},
	{
		// Merchant webhooks (issue 11): the event outbox (lib/platform/merchant-events-outbox.ts) and `order.created`, written by a
		// trigger in the transaction that inserts the order (every create path: single, return, bulk), relayed to
		// the durable channel `merchant.events` by the intake service's EventOutboxRelay.
		name: "webhooks-0001-order-created-events",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			for (const sql of eventOutboxDdl("intake")) await q(sql);
			await q(`CREATE OR REPLACE FUNCTION intake.order_created_event() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				INSERT INTO intake.event_outbox (event) VALUES (jsonb_build_object(
					'event_id', 'order.created:' || NEW.order_id,
					'type', 'order.created',
					'sender_id', NEW.sender_id,
					'order_id', NEW.order_id,
					'occurred_at', NEW.created_at,
					'data', jsonb_build_object(
						'order_id', NEW.order_id,
						'order_no', NEW.customer_order_no,
						'direction', CASE WHEN NEW.shipment_type = 1 THEN 'reverse' ELSE 'forward' END,
						'payment_mode', CASE WHEN NEW.order_type = 1 THEN 'cod' ELSE 'prepaid' END,
						'status', NEW.status,
						'pickup_address_id', NEW.pickup_address_id)));
				RETURN NULL;
			END $$`);
			await q("DROP TRIGGER IF EXISTS order_created_event ON intake.orders");
			await q(`CREATE TRIGGER order_created_event AFTER INSERT ON intake.orders
				FOR EACH ROW EXECUTE FUNCTION intake.order_created_event()`);
		},
	},
	{
		// Issue 10 bench: the row-level trigger above ran one INSERT into the outbox per order, and each of those
		// fired the outbox's statement-level NOTIFY trigger: a bulk batch of 500 orders made 500 statements and 500
		// notifications. The same events (same JSON, in order_id order) now come from one statement per INSERT into
		// intake.orders, read from its transition table (only the rows inserted: ON CONFLICT DO NOTHING skips).
		name: "webhooks-0002-order-created-per-statement",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`CREATE OR REPLACE FUNCTION intake.orders_created_events() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				INSERT INTO intake.event_outbox (event)
				SELECT jsonb_build_object(
					'event_id', 'order.created:' || n.order_id,
					'type', 'order.created',
					'sender_id', n.sender_id,
					'order_id', n.order_id,
					'occurred_at', n.created_at,
					'data', jsonb_build_object(
						'order_id', n.order_id,
						'order_no', n.customer_order_no,
						'direction', CASE WHEN n.shipment_type = 1 THEN 'reverse' ELSE 'forward' END,
						'payment_mode', CASE WHEN n.order_type = 1 THEN 'cod' ELSE 'prepaid' END,
						'status', n.status,
						'pickup_address_id', n.pickup_address_id))
				FROM new_orders n
				ORDER BY n.order_id;
				RETURN NULL;
			END $$`);
			await q("DROP TRIGGER IF EXISTS order_created_event ON intake.orders");
			await q("DROP TRIGGER IF EXISTS orders_created_events ON intake.orders");
			await q(`CREATE TRIGGER orders_created_events AFTER INSERT ON intake.orders
				REFERENCING NEW TABLE AS new_orders
				FOR EACH STATEMENT EXECUTE FUNCTION intake.orders_created_events()`);
			await q("DROP FUNCTION IF EXISTS intake.order_created_event()");
		},
	},
	// relays read the oldest due rows by id (lib/platform/outbox.ts)
	undeliveredByIdMigration("0007-outbox-undelivered-by-id", [
		[{ schema: "intake", table: "event_outbox" }, "event_outbox_due"],
	]),
	{
		// the COD status of each AWB as billing delivers it (docs/decisions/0102-cod-remittance.md): the orders
		// list's `cod_status` filter reads it for the order's current AWB; the newest version per AWB wins
		name: "0008-cod-statuses",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`CREATE TABLE IF NOT EXISTS intake.cod_statuses (
				awb_number text PRIMARY KEY,
				sender_id bigint NOT NULL,
				order_id bigint NOT NULL,
				cod_status text NOT NULL CHECK (cod_status IN ('pending', 'collected', 'remitted', 'paid', 'not_collected')),
				version integer NOT NULL,
				updated_at timestamptz NOT NULL DEFAULT now()
			)`);
		},
	},
	{
		// the buyer's e-mail (issue 29, docs/decisions/0109-buyer-messages.md): optional `receiver.email` of
		// order create, read by the notifications service for buyer e-mail
		name: "0009-receiver-email",
		async up({ sequelize, transaction }) {
			await sequelize.query("ALTER TABLE intake.orders ADD COLUMN IF NOT EXISTS receiver_email text", {
				transaction,
			});
		},
	},
	// a relay woken by a commit reads from the smallest id it added (docs/decisions/0118-event-outbox-ranges.md)
	eventOutboxRangesMigration("0010-event-outbox-ranges", "intake"),
	{
		// the orders booking has read to book them (docs/decisions/0129-status-without-booking.md): a row is
		// written before any attempt can exist, so a status read of an order without one skips the call to
		// booking. A table of its own, not a column: marking a column would write a new version of the whole
		// order row and of every index on it, once per booking. Orders that may already have an attempt
		// (not shipped or failed when the table is made) are entered as requested.
		name: "0011-booking-requests",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`CREATE TABLE IF NOT EXISTS intake.booking_requests (
				order_id bigint PRIMARY KEY,
				requested_at timestamptz NOT NULL DEFAULT now()
			)`);
			await q(`INSERT INTO intake.booking_requests (order_id)
				SELECT order_id FROM intake.orders WHERE state IN ('not_shipped', 'failed')
				ON CONFLICT DO NOTHING`);
		},
	},
];
