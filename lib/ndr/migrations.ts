/**
 * Migrations of the `ndr` schema (issue 9; spec §2.10, §4.6;
 * docs/decisions/0038-ndr-cases.md).
 *
 * - `ndr.cases`: one row per NDR case of a shipment (AWB). `status` is the
 *   list tab the case is in: `action_required` / `action_requested` (open),
 *   `delivered` (delivered after NDR), `rto` (RTO requested by the policy or
 *   scanned), `closed` (lost, damaged, cancelled: in no tab). At most one open
 *   case per AWB (partial unique index). `deadline_at` is when the policy acts
 *   on an `action_required` case; `lease_until` the policy pass's lease (multi-pod).
 *   What the list rows show (order reference, value, courier, consignee's city)
 *   is copied at open time. Money integer paise, times timestamptz (UTC).
 * - `ndr.attempts`: one row per failed delivery attempt; `event_id` (the
 *   channel's) and (awb_number, at) unique: a redelivered event counts once.
 * - `ndr.actions`: every NDR action (merchant's through `POST /v1/shipping/ndr`,
 *   the policy's automatic re-attempt and RTO): who, when, what, the courier's
 *   request id or the error; for a courier that decides acts later (Delhivery) the
 *   outcome polled afterwards (`accepted` / `refused`, `courier_remarks`, `checked_at`).
 * - `ndr.comments`: merchant comments on a case.
 * - `ndr.cases.buyer_answer` (007): the buyer's answer on the tracking page to the case's latest
 *   attempt (`{attempt_no, choice, details, status, at}`); `ndr.actions.by` may be `buyer`.
 * - `ndr.notifications`: the buyer notifications ndr recorded before buyer
 *   messages moved to the notifications service (issue 29); nothing writes it now,
 *   the list still shows a row's record for cases opened then. `status` queued,
 *   sent, delivered (a provider's report only), failed, simulated (the sandbox:
 *   nothing sent).
 */

import type { Migration } from "../platform/db";
import { eventOutboxDdl, eventOutboxRangesMigration } from "../platform/merchant-events-outbox";
import { undeliveredByIdMigration } from "../platform/outbox";

/** Ordered migrations for `DbMixin("ndr", NDR_MIGRATIONS)`. */
export const NDR_MIGRATIONS: Migration[] = [
	{
		name: "0001_cases",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(
				`CREATE TABLE IF NOT EXISTS ndr.cases (
					id bigserial PRIMARY KEY,
					sender_id bigint NOT NULL,
					order_id bigint NOT NULL,
					attempt_id bigint NOT NULL,
					awb_number text NOT NULL,
					logistic_id integer NOT NULL,
					courier_name text NOT NULL DEFAULT '',
					customer_order_no text NOT NULL DEFAULT '',
					payment_mode text NOT NULL DEFAULT 'prepaid',
					order_value_paise bigint NOT NULL DEFAULT 0,
					cod_amount_paise bigint NULL,
					consignee_name text NULL,
					consignee_city text NULL,
					consignee_pincode text NULL,
					status text NOT NULL CHECK (status IN ('action_required', 'action_requested', 'delivered', 'rto', 'closed')),
					attempts integer NOT NULL DEFAULT 1,
					reason text NOT NULL,
					courier_words text NOT NULL DEFAULT '',
					first_pending_at timestamptz NOT NULL,
					last_attempt_at timestamptz NOT NULL,
					last_seq integer NOT NULL DEFAULT 0,
					deadline_at timestamptz NULL,
					lease_until timestamptz NULL,
					closed_status text NULL,
					closed_at timestamptz NULL,
					created_at timestamptz NOT NULL DEFAULT now(),
					updated_at timestamptz NOT NULL DEFAULT now()
				)`,
			);
			await q(
				"CREATE UNIQUE INDEX IF NOT EXISTS cases_one_open ON ndr.cases (awb_number) WHERE status IN ('action_required', 'action_requested')",
			);
			await q("CREATE INDEX IF NOT EXISTS cases_tab ON ndr.cases (sender_id, status, id DESC)");
			await q("CREATE INDEX IF NOT EXISTS cases_order ON ndr.cases (sender_id, order_id, id DESC)");
			await q("CREATE INDEX IF NOT EXISTS cases_awb ON ndr.cases (awb_number, id DESC)");
			await q(
				"CREATE INDEX IF NOT EXISTS cases_due ON ndr.cases (deadline_at) WHERE status = 'action_required'",
			);
			await q(
				`CREATE TABLE IF NOT EXISTS ndr.attempts (
					id bigserial PRIMARY KEY,
					case_id bigint NOT NULL REFERENCES ndr.cases (id),
					attempt_no integer NOT NULL,
					event_id text NOT NULL UNIQUE,
					awb_number text NOT NULL,
					at timestamptz NOT NULL,
					reason text NOT NULL,
					courier_words text NOT NULL DEFAULT '',
					created_at timestamptz NOT NULL DEFAULT now(),
					UNIQUE (awb_number, at)
				)`,
			);
			await q(
				`CREATE TABLE IF NOT EXISTS ndr.actions (
					id bigserial PRIMARY KEY,
					case_id bigint NOT NULL REFERENCES ndr.cases (id),
					sender_id bigint NOT NULL,
					order_id bigint NOT NULL,
					act text NOT NULL CHECK (act IN ('RE-ATTEMPT', 'DEFER_DLV', 'EDIT_DETAILS', 'RTO')),
					by text NOT NULL CHECK (by IN ('merchant', 'system')),
					actor text NOT NULL,
					details jsonb NOT NULL DEFAULT '{}'::jsonb,
					status text NOT NULL CHECK (status IN ('sent', 'failed')),
					request_id text NULL,
					error_code text NULL,
					error_message text NULL,
					attempt_no integer NOT NULL,
					created_at timestamptz NOT NULL DEFAULT now()
				)`,
			);
			await q("CREATE INDEX IF NOT EXISTS actions_case ON ndr.actions (case_id, id DESC)");
			await q(
				`CREATE TABLE IF NOT EXISTS ndr.comments (
					id bigserial PRIMARY KEY,
					case_id bigint NOT NULL REFERENCES ndr.cases (id),
					sender_id bigint NOT NULL,
					order_id bigint NOT NULL,
					comment text NOT NULL,
					author text NOT NULL,
					role text NOT NULL,
					created_at timestamptz NOT NULL DEFAULT now()
				)`,
			);
			await q("CREATE INDEX IF NOT EXISTS comments_case ON ndr.comments (case_id, id DESC)");
			await q(
				`CREATE TABLE IF NOT EXISTS ndr.notifications (
					id bigserial PRIMARY KEY,
					case_id bigint NOT NULL REFERENCES ndr.cases (id),
					channel text NOT NULL,
					template text NOT NULL,
					recipient text NULL,
					vars jsonb NOT NULL DEFAULT '{}'::jsonb,
					status text NOT NULL CHECK (status IN ('queued', 'sent', 'delivered', 'failed')),
					provider text NULL,
					provider_ref text NULL,
					sent_at timestamptz NULL,
					delivered_at timestamptz NULL,
					failed_at timestamptz NULL,
					error text NULL,
					created_at timestamptz NOT NULL DEFAULT now(),
					updated_at timestamptz NOT NULL DEFAULT now(),
					UNIQUE (case_id, template)
				)`,
			);
			await q(
				"CREATE INDEX IF NOT EXISTS notifications_queued ON ndr.notifications (id) WHERE status = 'queued'",
			);
		},
	},
	{
		// Closing events (delivered, RTO, lost, damaged, cancelled) of every shipment, also those with no case
		// yet: the channel consumer may take a shipment's `delivered` before its earlier `undelivered`
		// (several messages in flight, several pods); the late `undelivered` then opens its case already
		// closed instead of a case nothing would ever close.
		name: "002-shipment-closings",
		async up({ sequelize, transaction }) {
			await sequelize.query(
				`CREATE TABLE IF NOT EXISTS ndr.shipment_closings (
					awb_number text PRIMARY KEY,
					seq integer NOT NULL,
					tab text NOT NULL CHECK (tab IN ('delivered', 'rto', 'closed')),
					status text NOT NULL,
					at timestamptz NOT NULL,
					updated_at timestamptz NOT NULL DEFAULT now()
				)`,
				{ transaction },
			);
		},
	},
	{
		// Merchant webhooks (issue 11): the event outbox (lib/platform/merchant-events-outbox.ts) and `ndr.opened` (a case
		// inserted) / `ndr.closed` (a case takes a scanned outcome: delivered, RTO, lost / damaged / cancelled;
		// the policy's `rto_requested` is not a close), written by triggers in the transaction of the change,
		// relayed to the durable channel `merchant.events` by the ndr service's EventOutboxRelay.
		name: "webhooks-0001-ndr-events",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			for (const sql of eventOutboxDdl("ndr")) await q(sql);
			await q(`CREATE OR REPLACE FUNCTION ndr.case_event() RETURNS trigger LANGUAGE plpgsql AS $$
			DECLARE kind text;
			BEGIN
				IF TG_OP = 'INSERT' THEN
					kind := 'ndr.opened';
				ELSIF NEW.closed_status IS NOT NULL AND NEW.closed_status <> 'rto_requested'
				  AND (OLD.closed_status IS NULL OR OLD.closed_status = 'rto_requested') THEN
					kind := 'ndr.closed';
				ELSE
					RETURN NULL;
				END IF;
				INSERT INTO ndr.event_outbox (event) VALUES (jsonb_build_object(
					'event_id', kind || ':' || NEW.id,
					'type', kind,
					'sender_id', NEW.sender_id,
					'order_id', NEW.order_id,
					'occurred_at', CASE WHEN kind = 'ndr.opened' THEN NEW.created_at ELSE COALESCE(NEW.closed_at, now()) END,
					'data', jsonb_build_object(
						'order_id', NEW.order_id,
						'order_no', NULLIF(NEW.customer_order_no, ''),
						'ndr_id', NEW.id,
						'awb_number', NEW.awb_number,
						'courier', NULLIF(NEW.courier_name, ''),
						'logistic_id', NEW.logistic_id,
						'reason', NEW.reason,
						'attempts', NEW.attempts,
						'status', CASE WHEN kind = 'ndr.opened' THEN 'undelivered' ELSE NEW.closed_status END,
						'tab', NEW.status)));
				RETURN NULL;
			END $$`);
			await q("DROP TRIGGER IF EXISTS case_opened_event ON ndr.cases");
			await q(`CREATE TRIGGER case_opened_event AFTER INSERT ON ndr.cases
				FOR EACH ROW EXECUTE FUNCTION ndr.case_event()`);
			await q("DROP TRIGGER IF EXISTS case_closed_event ON ndr.cases");
			await q(`CREATE TRIGGER case_closed_event AFTER UPDATE OF closed_status ON ndr.cases
				FOR EACH ROW EXECUTE FUNCTION ndr.case_event()`);
		},
	},
	{
		// The courier's later decision on a sent act (Delhivery decides an NDR upload asynchronously;
		// lib/ndr/act-status.ts polls it): `accepted` / `refused` besides `sent` / `failed`, the
		// courier's remarks and when we last asked.
		name: "004-action-outcome",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q("ALTER TABLE ndr.actions DROP CONSTRAINT IF EXISTS actions_status_check");
			await q(
				`ALTER TABLE ndr.actions ADD CONSTRAINT actions_status_check
				 CHECK (status IN ('sent', 'failed', 'accepted', 'refused'))`,
			);
			await q("ALTER TABLE ndr.actions ADD COLUMN IF NOT EXISTS courier_remarks text NULL");
			await q("ALTER TABLE ndr.actions ADD COLUMN IF NOT EXISTS checked_at timestamptz NULL");
		},
	},
	// relays read the oldest due rows by id (lib/platform/outbox.ts)
	undeliveredByIdMigration("005-outbox-undelivered-by-id", [
		[{ schema: "ndr", table: "event_outbox" }, "event_outbox_due"],
	]),
	{
		// Truthful notification records (issue 25): the sandbox notifier sends nothing, so it records
		// `simulated`, never `delivered`. The rows it recorded `delivered` before are rewritten (nothing was
		// sent or delivered: no times either); a real provider's rows are left as they are.
		name: "006-notification-simulated",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q("ALTER TABLE ndr.notifications DROP CONSTRAINT IF EXISTS notifications_status_check");
			await q(
				`ALTER TABLE ndr.notifications ADD CONSTRAINT notifications_status_check
				 CHECK (status IN ('queued', 'sent', 'delivered', 'failed', 'simulated'))`,
			);
			await q(
				`UPDATE ndr.notifications SET status = 'simulated', sent_at = NULL, delivered_at = NULL, updated_at = now()
				 WHERE provider = 'sandbox' AND status IN ('sent', 'delivered')`,
			);
		},
	},
	{
		// Failed deliveries answered by the buyer on the tracking page (issue 29): an action may be the
		// buyer's; an answer waiting for the merchant's approval is kept on its case.
		name: "007-buyer-answers",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q("ALTER TABLE ndr.actions DROP CONSTRAINT IF EXISTS actions_by_check");
			await q(
				"ALTER TABLE ndr.actions ADD CONSTRAINT actions_by_check CHECK (by IN ('merchant', 'system', 'buyer'))",
			);
			await q("ALTER TABLE ndr.cases ADD COLUMN IF NOT EXISTS buyer_answer jsonb NULL");
		},
	},
	// a relay woken by a commit reads from the smallest id it added (docs/decisions/0118-event-outbox-ranges.md)
	eventOutboxRangesMigration("008-event-outbox-ranges", "ndr"),
];
