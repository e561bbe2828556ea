/**
 * Migrations of the `documents` schema (ARCHITECTURE §1, §5).
 *
 * `documents.labels`: one row per (order, AWB). `source` is `generated` for a
 * label we draw, `courier` when the courier issues its own label; then
 * `courier_file` holds the captured bytes, or is null when it was not
 * captured. Timestamps timestamptz (UTC).
 */
import type { Migration } from "../db";

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
];
