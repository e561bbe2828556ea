/**
 * Migrations of the `documents` schema (docs/ARCHITECTURE.md §1, §5).
 *
 * `documents.labels`: one row per (order, AWB). `source` is `generated` for a
 * label we draw, `courier` when the courier issues its own label; then
 * `courier_file` holds the captured bytes, or is null when it was not
 * captured. Timestamps timestamptz (UTC).
 */

import type { Migration } from "../platform/db";
import { undeliveredByIdMigration } from "../platform/outbox";

/** Ordered migrations for `DbMixin("documents", DOCUMENTS_MIGRATIONS)` (idempotent SQL, schema-qualified names). */
export const DOCUMENTS_MIGRATIONS: Migration[] = [
	{
		name: "0001_labels",
		async up({ sequelize, transaction }) {
			await sequelize.query(
				`CREATE TABLE IF NOT EXISTS documents.labels (
					order_id bigint NOT NULL,
					sender_id bigint NOT NULL,
					awb_number text NOT NULL,
					logistic_id integer NOT NULL,
					source text NOT NULL DEFAULT 'generated' CHECK (source IN ('generated', 'courier')),
					courier_file bytea NULL,
					label_downloaded_at timestamptz NULL,
					first_downloaded_at timestamptz NULL,
					download_count integer NOT NULL DEFAULT 0,
					created_at timestamptz NOT NULL DEFAULT now(),
					PRIMARY KEY (order_id, awb_number)
				)`,
				{ transaction },
			);
			await sequelize.query(
				"CREATE INDEX IF NOT EXISTS labels_sender_order_idx ON documents.labels (sender_id, order_id, created_at DESC)",
				{ transaction },
			);
		},
	},
	{
		// Handover manifests (issue 8; lib/documents/manifest-store.ts): one manifest per (courier, pickup
		// warehouse) section, numbered MF-<yyyymmdd IST>-<seq>; one parcel row per AWB, (courier, AWB) unique
		// among live manifests (the partial unique index decides a race between two manifests, never a read); the
		// documents outbox carries booking.markManifested to booking (acknowledged call, retried).
		name: "0002_manifests",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q("CREATE SEQUENCE IF NOT EXISTS documents.manifest_no_seq");
			await q(
				`CREATE TABLE IF NOT EXISTS documents.manifests (
					id bigserial PRIMARY KEY,
					manifest_no text NOT NULL UNIQUE,
					sender_id bigint NOT NULL,
					logistic_id integer NOT NULL,
					courier_name text NOT NULL,
					pickup_address_id bigint NULL,
					warehouse jsonb NULL,
					parcel_count integer NOT NULL,
					cod_total_paise bigint NOT NULL,
					live boolean NOT NULL DEFAULT true,
					created_at timestamptz NOT NULL DEFAULT now()
				)`,
			);
			await q(
				"CREATE INDEX IF NOT EXISTS manifests_sender_idx ON documents.manifests (sender_id, created_at DESC)",
			);
			await q(
				`CREATE TABLE IF NOT EXISTS documents.manifest_parcels (
					manifest_id bigint NOT NULL REFERENCES documents.manifests (id),
					position integer NOT NULL,
					sender_id bigint NOT NULL,
					order_id bigint NOT NULL,
					logistic_id integer NOT NULL,
					awb_number text NOT NULL,
					order_no text NOT NULL,
					consignee_name text NOT NULL,
					pincode text NOT NULL,
					weight_kg numeric(10, 3) NOT NULL,
					cod_paise bigint NOT NULL,
					live boolean NOT NULL DEFAULT true,
					PRIMARY KEY (manifest_id, position)
				)`,
			);
			await q(
				"CREATE UNIQUE INDEX IF NOT EXISTS manifest_parcels_live_awb ON documents.manifest_parcels (logistic_id, awb_number) WHERE live",
			);
			await q(
				"CREATE INDEX IF NOT EXISTS manifest_parcels_order_idx ON documents.manifest_parcels (sender_id, order_id)",
			);
			await q(
				`CREATE TABLE IF NOT EXISTS documents.outbox (
					id bigserial PRIMARY KEY,
					kind text NOT NULL,
					payload jsonb NOT NULL,
					created_at timestamptz NOT NULL DEFAULT now(),
					next_attempt_at timestamptz NOT NULL DEFAULT now(),
					tries integer NOT NULL DEFAULT 0,
					last_error text NULL,
					delivered_at timestamptz NULL
				)`,
			);
			await q(
				"CREATE INDEX IF NOT EXISTS outbox_due_idx ON documents.outbox (next_attempt_at, id) WHERE delivered_at IS NULL",
			);
		},
	},
	{
		// Courier-issued labels (issue 8; lib/documents/store.ts recordCourierLabel): the captured file's
		// media type as the courier answered it, when it was captured, and why it is missing (the courier
		// definitively has no file) when `courier_file` stays null.
		name: "0003_courier_label_capture",
		async up({ sequelize, transaction }) {
			await sequelize.query(
				`ALTER TABLE documents.labels
					ADD COLUMN IF NOT EXISTS courier_content_type text NULL,
					ADD COLUMN IF NOT EXISTS courier_captured_at timestamptz NULL,
					ADD COLUMN IF NOT EXISTS courier_missing_reason text NULL`,
				{ transaction },
			);
		},
	},
	// relays read the oldest due rows by id (lib/platform/outbox.ts)
	undeliveredByIdMigration("0004_outbox_undelivered_by_id", [
		[{ schema: "documents", table: "outbox" }, "outbox_due_idx"],
	]),
];
