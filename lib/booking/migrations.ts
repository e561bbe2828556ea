/**
 * Tables of the `booking` schema (docs/ARCHITECTURE.md §5 durability):
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
 * - `booking.ledger`: the money booking moves, append-only, one row per
 *   movement (a booking's charge, its refund), at most one of each kind per
 *   attempt, paise: what refunds and the credit check read. Each row is
 *   also sent to the `billing` service (which owns the wallet) by an outbox
 *   row of kind `ledger_entry` written by a trigger in the same transaction
 *   (migration 011; docs/decisions/0101-billing-service.md).
 * - `booking.accounts`: per-account settings (optional credit limit, paise,
 *   and its `version`; each change is mirrored to billing by an outbox row of
 *   kind `credit_limit`).
 * - `booking.scans`: courier tracking scans of booked shipments (pushed or
 *   polled; issue 7), deduplicated on (awb_number, at, courier_code, status);
 *   attempts carry the folded `shipment_status` (lib/shared/shipment-status.ts), the
 *   order-update counter `order_seq`, the poller's `next_track_at`, the lane
 *   (`from_pin`, `to_pin`) and `picked_up_at` (lib/booking/tracking.ts).
 * - `booking.push_seen`: the replay keys of recent courier pushes
 *   (lib/booking/push-replay.ts).
 */

import type { Migration } from "../platform/db";
import { eventOutboxDdl, eventOutboxRangesMigration } from "../platform/merchant-events-outbox";
import { undeliveredByIdMigration } from "../platform/outbox";

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
	{
		// POST /v1/orders/{id}/hide (issue 7): the merchant closed an open cancellation
		// (a cancel requested while the courier call was in flight) by hiding the order.
		name: "006-attempts-cancel-closed",
		async up({ sequelize, transaction }) {
			await sequelize.query(
				`ALTER TABLE booking.attempts ADD COLUMN IF NOT EXISTS cancel_closed_at timestamptz`,
				{ transaction },
			);
		},
	},
	{
		// Tracking pipeline (issue 7; spec §2.6, §3; lib/booking/tracking.ts).
		name: "006-tracking",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			const statuses = `'booked', 'manifested', 'pickup_scheduled', 'picked_up', 'in_transit', 'out_for_delivery',
				'undelivered', 'rto_initiated', 'rto_in_transit', 'delivered', 'rto_delivered', 'lost', 'damaged', 'cancelled'`;
			// shipment_status: the folded normalized status of a booked attempt (null before booked);
			// order_seq: the seq of the attempt's last order update (1 queued, 2 settled; each later
			// update — tracking, cancel — takes order_seq + 1 in the statement that writes it).
			await q(`ALTER TABLE booking.attempts
				ADD COLUMN IF NOT EXISTS shipment_status text CHECK (shipment_status IN (${statuses})),
				ADD COLUMN IF NOT EXISTS shipment_status_at timestamptz,
				ADD COLUMN IF NOT EXISTS order_seq integer NOT NULL DEFAULT 2,
				ADD COLUMN IF NOT EXISTS next_track_at timestamptz,
				ADD COLUMN IF NOT EXISTS from_pin text,
				ADD COLUMN IF NOT EXISTS to_pin text,
				ADD COLUMN IF NOT EXISTS picked_up_at timestamptz`);
			// attempts booked before this migration: booked, due for a first poll
			await q(`UPDATE booking.attempts
				SET shipment_status = 'booked', shipment_status_at = COALESCE(booked_at, updated_at), next_track_at = now()
				WHERE state = 'booked' AND shipment_status IS NULL`);
			// the poller: open (booked, not terminal) shipments by when they are due
			await q(`CREATE INDEX IF NOT EXISTS attempts_track_due
				ON booking.attempts (next_track_at) WHERE state = 'booked' AND next_track_at IS NOT NULL`);
			await q(`CREATE TABLE IF NOT EXISTS booking.scans (
				id bigserial PRIMARY KEY,
				attempt_id bigint NOT NULL REFERENCES booking.attempts (attempt_id),
				awb_number text NOT NULL,
				logistic_id integer NOT NULL,
				status text NOT NULL CHECK (status IN (${statuses})),
				courier_code text NOT NULL,
				courier_status text NOT NULL,
				location text NOT NULL,
				at timestamptz NOT NULL,
				remarks text,
				source text NOT NULL CHECK (source IN ('push', 'poll')),
				received_at timestamptz NOT NULL DEFAULT now(),
				CONSTRAINT scans_dedupe UNIQUE (awb_number, at, courier_code, status)
			)`);
			// GET /v1/orders/{id}/tracking: one attempt's scans by time
			await q(`CREATE INDEX IF NOT EXISTS scans_attempt ON booking.scans (attempt_id, at, id)`);
			// lane outcomes (delivered / RTO delivered) are delivered to rates.recordLaneOutcome
			await q(`ALTER TABLE booking.outbox DROP CONSTRAINT IF EXISTS outbox_kind_check`);
			await q(`ALTER TABLE booking.outbox ADD CONSTRAINT outbox_kind_check
				CHECK (kind IN ('enqueue_booking', 'order_update', 'lane_outcome'))`);
		},
	},
	{
		// Manifests and durable shipment events (issue 8; spec §3 manifest row, §6; lib/booking/tracking.ts):
		// manifest scans (booking.markManifested) and the `status_event` outbox rows the relay publishes
		// to the `shipment.status_changed` channel. A later migration adding an outbox kind must list these too.
		name: "007-manifest-scans-status-events",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`ALTER TABLE booking.scans DROP CONSTRAINT IF EXISTS scans_source_check`);
			await q(`ALTER TABLE booking.scans ADD CONSTRAINT scans_source_check
				CHECK (source IN ('push', 'poll', 'manifest'))`);
			await q(`ALTER TABLE booking.outbox DROP CONSTRAINT IF EXISTS outbox_kind_check`);
			await q(`ALTER TABLE booking.outbox ADD CONSTRAINT outbox_kind_check
				CHECK (kind IN ('enqueue_booking', 'order_update', 'lane_outcome', 'status_event'))`);
		},
	},
	{
		// Courier-issued labels (issue 8; spec §4.4, §7 carrier_label_missing): `courier_label` marks a booked
		// attempt whose courier issues its own label file (the adapter's setting when it was booked; served
		// in booking.getShipment), and the `courier_label` outbox row (written by markBooked) has documents
		// capture that file (documents.captureCourierLabel). A later migration adding an outbox kind must list these too.
		name: "008-courier-labels",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(
				`ALTER TABLE booking.attempts ADD COLUMN IF NOT EXISTS courier_label boolean NOT NULL DEFAULT false`,
			);
			await q(`ALTER TABLE booking.outbox DROP CONSTRAINT IF EXISTS outbox_kind_check`);
			await q(`ALTER TABLE booking.outbox ADD CONSTRAINT outbox_kind_check
				CHECK (kind IN ('enqueue_booking', 'order_update', 'lane_outcome', 'status_event', 'courier_label'))`);
		},
	},
	{
		// Merchant webhooks (issue 11): the event outbox (lib/platform/merchant-events-outbox.ts) and `order.booked` /
		// `order.booking_failed`, written by a trigger on the seq-2 `order_update` outbox row of a booked or
		// failed attempt (markBooked / markFailed: the same statement as the state change; an AUTO fall-over
		// writes no order update, so only the booking's final outcome is an event), relayed to the durable
		// channel `merchant.events` by the booking service's EventOutboxRelay.
		name: "webhooks-0001-booking-events",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			for (const sql of eventOutboxDdl("booking")) await q(sql);
			await q(`CREATE OR REPLACE FUNCTION booking.booking_outcome_event() RETURNS trigger LANGUAGE plpgsql AS $$
			DECLARE p jsonb := NEW.payload; booked boolean := (NEW.payload->>'state') = 'booked';
			BEGIN
				INSERT INTO booking.event_outbox (event) VALUES (jsonb_build_object(
					'event_id', CASE WHEN booked THEN 'order.booked:' ELSE 'order.booking_failed:' END || (p->>'attempt_id'),
					'type', CASE WHEN booked THEN 'order.booked' ELSE 'order.booking_failed' END,
					'sender_id', (p->>'sender_id')::bigint,
					'order_id', (p->>'order_id')::bigint,
					'occurred_at', now(),
					'data', CASE WHEN booked THEN jsonb_build_object(
						'order_id', (p->>'order_id')::bigint,
						'awb_number', p->>'awb_number',
						'courier', p->>'courier',
						'logistic_id', (p->>'logistic_id')::integer,
						'status', 'booked')
					ELSE jsonb_build_object(
						'order_id', (p->>'order_id')::bigint,
						'status', 'booking_failed',
						'reason', p->>'failure_reason',
						'failure_code', p->>'failure_code') END));
				RETURN NULL;
			END $$`);
			await q("DROP TRIGGER IF EXISTS booking_outcome_event ON booking.outbox");
			await q(`CREATE TRIGGER booking_outcome_event AFTER INSERT ON booking.outbox
				FOR EACH ROW WHEN (NEW.kind = 'order_update' AND (NEW.payload->>'seq') = '2'
				  AND (NEW.payload->>'state') IN ('booked', 'failed'))
				EXECUTE FUNCTION booking.booking_outcome_event()`);
		},
	},
	// relays read the oldest due rows by id (lib/platform/outbox.ts)
	undeliveredByIdMigration("009-outbox-undelivered-by-id", [
		[{ schema: "booking", table: "outbox" }, "outbox_pending"],
		[{ schema: "booking", table: "event_outbox" }, "event_outbox_due"],
	]),
	{
		// Replayed courier pushes (issue 31; lib/booking/push-replay.ts): the keys (timestamped signatures)
		// of the pushes seen in the last minutes, purged by the sweeper.
		name: "010-push-seen",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`CREATE TABLE IF NOT EXISTS booking.push_seen (
				courier_code text NOT NULL,
				push_key text NOT NULL,
				seen_at timestamptz NOT NULL DEFAULT now(),
				PRIMARY KEY (courier_code, push_key))`);
			await q("CREATE INDEX IF NOT EXISTS push_seen_at ON booking.push_seen (seen_at)");
		},
	},
	{
		// The wallet moves to the billing service (issue 27; docs/decisions/0101-billing-service.md): every
		// ledger row, from now on and before, goes to billing through the outbox; the credit limits too.
		name: "011-ledger-to-billing",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`ALTER TABLE booking.outbox DROP CONSTRAINT IF EXISTS outbox_kind_check`);
			await q(`ALTER TABLE booking.outbox ADD CONSTRAINT outbox_kind_check
				CHECK (kind IN ('enqueue_booking', 'order_update', 'lane_outcome', 'status_event', 'courier_label',
					'ledger_entry', 'credit_limit'))`);
			await q(`ALTER TABLE booking.accounts ADD COLUMN IF NOT EXISTS version bigint NOT NULL DEFAULT 0`);
			// the movement as billing records it (lib/contracts/billing.ts LedgerEntryEvent)
			await q(`CREATE OR REPLACE FUNCTION booking.ledger_entry_payload(l booking.ledger) RETURNS jsonb
				LANGUAGE sql IMMUTABLE AS $$
					SELECT jsonb_build_object('sender_id', l.sender_id, 'attempt_id', l.attempt_id,
						'order_id', l.order_id, 'kind', l.kind, 'amount_paise', l.amount_paise,
						'awb_number', l.awb_number, 'note', l.note,
						'occurred_at', to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
				$$`);
			await q(`CREATE OR REPLACE FUNCTION booking.ledger_to_billing() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
					INSERT INTO booking.outbox (kind, payload, next_attempt_at)
					VALUES ('ledger_entry', booking.ledger_entry_payload(NEW), now());
					RETURN NULL;
				END $$`);
			await q("DROP TRIGGER IF EXISTS ledger_to_billing ON booking.ledger");
			await q(`CREATE TRIGGER ledger_to_billing AFTER INSERT ON booking.ledger
				FOR EACH ROW EXECUTE FUNCTION booking.ledger_to_billing()`);
			// history: every movement recorded before, oldest first, and every credit limit set
			await q(`INSERT INTO booking.outbox (kind, payload, next_attempt_at)
				SELECT 'ledger_entry', booking.ledger_entry_payload(l), now() FROM booking.ledger l ORDER BY l.id`);
			await q(`INSERT INTO booking.outbox (kind, payload, next_attempt_at)
				SELECT 'credit_limit', jsonb_build_object('sender_id', sender_id,
					'credit_limit_paise', credit_limit_paise, 'version', version), now()
				FROM booking.accounts ORDER BY sender_id`);
		},
	},
	{
		// Pickups (issue 28; docs/decisions/0107-pickup-requests.md): the warehouse each shipment is collected
		// from, so a pickup request learns it was collected from the first pickup scan of one of its shipments.
		name: "012-attempts-warehouse",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`ALTER TABLE booking.attempts ADD COLUMN IF NOT EXISTS warehouse_id bigint`);
			await q(`CREATE INDEX IF NOT EXISTS attempts_pickup_scans
				ON booking.attempts (sender_id, warehouse_id, logistic_id, picked_up_at)
				WHERE picked_up_at IS NOT NULL AND warehouse_id IS NOT NULL`);
		},
	},
	{
		// The buyer's tracking page (issue 29; docs/decisions/0108-buyer-tracking-page.md): the delivery date the
		// booking's quote promised (null for attempts before, and for couriers without transit data).
		name: "013-attempts-edd",
		async up({ sequelize, transaction }) {
			await sequelize.query(`ALTER TABLE booking.attempts ADD COLUMN IF NOT EXISTS edd date`, {
				transaction,
			});
		},
	},
	{
		// A dead node costs no call (issue 30; docs/decisions/0113-dead-node-rescue.md): the context id of the
		// booking call that created the attempt, so the same call sent again to another node is answered this
		// attempt instead of 409 already_booked / booking_in_progress (null on older attempts and fall-overs).
		name: "014-attempts-call-key",
		async up({ sequelize, transaction }) {
			await sequelize.query(`ALTER TABLE booking.attempts ADD COLUMN IF NOT EXISTS call_key text`, {
				transaction,
			});
		},
	},
	// a relay woken by a commit reads from the smallest id it added (docs/decisions/0118-event-outbox-ranges.md)
	eventOutboxRangesMigration("015-event-outbox-ranges", "booking"),
	{
		// An attempt's pending `enqueue_booking` row found by its attempt id
		// (docs/decisions/0119-outbox-enqueue-by-attempt.md): settling an attempt, book/sync and a fall-over look
		// it up by `payload->>'attempt_id'`, which the undelivered index could only answer by visiting every row
		// delivered since the last VACUUM.
		name: "016-outbox-enqueue-by-attempt",
		async up({ sequelize, transaction }) {
			await sequelize.query(
				`CREATE INDEX IF NOT EXISTS outbox_enqueue_attempt ON booking.outbox (((payload->>'attempt_id')::bigint))
				 WHERE kind = 'enqueue_booking' AND delivered_at IS NULL`,
				{ transaction },
			);
		},
	},
	{
		// An order's earlier ambiguous attempts found by order id (docs/decisions/0147-ambiguous-attempts-index.md):
		// every claim asks whether one exists (`claimAttempt`'s `earlier_ambiguous`), and `ambiguousAttempts` lists
		// them; no index answered `order_id` alone, so each claim read the whole table. Rows are rare (a failed
		// attempt whose courier outcome is unknown), so the index is small.
		name: "017-attempts-ambiguous-by-order",
		async up({ sequelize, transaction }) {
			await sequelize.query(
				`CREATE INDEX IF NOT EXISTS attempts_ambiguous ON booking.attempts (order_id)
				 WHERE state = 'failed' AND ambiguous`,
				{ transaction },
			);
		},
	},
	{
		// Merchant webhook `order.cancelled` (docs/decisions/0160-order-cancelled-event.md): written by a trigger on
		// the `order_update` outbox row that reports an attempt cancelled (state `not_shipped`, status `cancelled`:
		// the merchant's cancel of a queued or booked attempt, or the worker settling a cancel requested while the
		// courier call was in flight), in the transaction of the cancel; the AWB, courier and refund are the
		// attempt's and its ledger's (the refund row is written before the order update). A courier's own
		// `cancelled` scan leaves the attempt booked (state `booked`): it is a `shipment.status_changed`, not this.
		name: "018-order-cancelled-event",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`CREATE OR REPLACE FUNCTION booking.order_cancelled_event() RETURNS trigger LANGUAGE plpgsql AS $$
			DECLARE p jsonb := NEW.payload; att booking.attempts; refund bigint;
			BEGIN
				SELECT * INTO att FROM booking.attempts WHERE attempt_id = (p->>'attempt_id')::bigint;
				SELECT amount_paise INTO refund FROM booking.ledger
					WHERE attempt_id = (p->>'attempt_id')::bigint AND kind = 'refund';
				INSERT INTO booking.event_outbox (event) VALUES (jsonb_build_object(
					'event_id', 'order.cancelled:' || (p->>'attempt_id'),
					'type', 'order.cancelled',
					'sender_id', (p->>'sender_id')::bigint,
					'order_id', (p->>'order_id')::bigint,
					'occurred_at', now(),
					'data', jsonb_build_object(
						'order_id', (p->>'order_id')::bigint,
						'status', 'cancelled',
						'awb_number', att.awb_number,
						'courier', att.courier_name,
						'logistic_id', att.logistic_id,
						'refunded', round(COALESCE(refund, 0) / 100.0, 2))));
				RETURN NULL;
			END $$`);
			await q("DROP TRIGGER IF EXISTS order_cancelled_event ON booking.outbox");
			await q(`CREATE TRIGGER order_cancelled_event AFTER INSERT ON booking.outbox
				FOR EACH ROW WHEN (NEW.kind = 'order_update' AND (NEW.payload->>'state') = 'not_shipped'
				  AND (NEW.payload->>'status') = 'cancelled')
				EXECUTE FUNCTION booking.order_cancelled_event()`);
		},
	},
];
