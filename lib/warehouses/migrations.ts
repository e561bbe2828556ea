/**
 * Schema `warehouses` (spec §2.9, §4.5): the merchants' pickup warehouses and
 * their registration as pickup locations with each courier.
 *
 * - `warehouses.warehouses`: one row per warehouse. `id` is the public id.
 *   `warehouse_code` is generated from the account and id (`WH<sender_id>-<id>`,
 *   e.g. `WH10023-57`): stable for the life of the row, unique, and the name a
 *   courier knows the pickup location by. `version` is bumped whenever a field
 *   a courier sees changes (name, address, contacts, return leg, GSTIN); a new
 *   version re-registers the warehouse with every courier.
 *   Invariants held by partial unique indexes: one non-retired warehouse per
 *   account and case-insensitive name; at most one non-retired default per
 *   account (the service keeps it exactly one whenever the account has a
 *   non-retired warehouse).
 * - `warehouses.courier_registrations`: per warehouse and courier, the state of
 *   the registration of `version` (`pending` → `registered` | `refused`, the
 *   courier's words in `reason`).
 * - `warehouses.pickups`: pickup requests (issue 28, ./pickups.ts) and
 *   `warehouses.event_outbox` (their `pickup.missed` events).
 */

import { PICKUP_MAX_PACKAGES } from "../contracts/warehouses";
import type { Migration } from "../platform/db";
import { eventOutboxDdl, eventOutboxRangesMigration } from "../platform/merchant-events-outbox";

/** Name of the unique index enforcing one name per account (used to map 23505 to a 400). */
export const NAME_UNIQUE_INDEX = "warehouses_sender_name_uq";
/** Name of the unique index holding one live pickup per warehouse, courier and day (a 23505 on it is a 409). */
export const PICKUP_LIVE_INDEX = "pickups_one_live_per_day";
/** Name of the unique index enforcing one default per account. */
export const DEFAULT_UNIQUE_INDEX = "warehouses_sender_default_uq";

/** Migrations of schema `warehouses`, in order (names and SQL are recorded in existing databases: never edit them). */
export const WAREHOUSES_MIGRATIONS: Migration[] = [
	{
		name: "0001_warehouses",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`
				CREATE TABLE IF NOT EXISTS warehouses.warehouses (
					id bigserial PRIMARY KEY,
					sender_id bigint NOT NULL,
					warehouse_name varchar(191) NOT NULL,
					contact_person_name varchar(100) NOT NULL,
					contact_no varchar(10) NOT NULL,
					contact_email varchar(191),
					address_line_1 varchar(255) NOT NULL,
					address_line_2 varchar(255),
					city varchar(100) NOT NULL,
					state varchar(100) NOT NULL,
					pincode varchar(6) NOT NULL,
					gstin varchar(15),
					warehouse_type text NOT NULL DEFAULT 'fulfillment_pickup'
						CHECK (warehouse_type IN ('fulfillment_pickup', 'pickup', 'fulfillment')),
					is_return_same boolean NOT NULL DEFAULT true,
					return_warehouse_name varchar(191),
					return_contact_person_name varchar(100),
					return_contact_no varchar(10),
					return_contact_email varchar(191),
					return_address_line_1 varchar(255),
					return_address_line_2 varchar(255),
					return_city varchar(100),
					return_state varchar(100),
					return_pincode varchar(6),
					active boolean NOT NULL DEFAULT true,
					retired boolean NOT NULL DEFAULT false,
					retired_at timestamptz,
					is_default boolean NOT NULL DEFAULT false,
					warehouse_code text GENERATED ALWAYS AS ('WH' || sender_id::text || '-' || id::text) STORED,
					version integer NOT NULL DEFAULT 1,
					created_at timestamptz NOT NULL DEFAULT now(),
					updated_at timestamptz NOT NULL DEFAULT now()
				)`);
			await q(
				`CREATE UNIQUE INDEX IF NOT EXISTS warehouses_code_uq ON warehouses.warehouses (warehouse_code)`,
			);
			await q(
				`CREATE UNIQUE INDEX IF NOT EXISTS ${NAME_UNIQUE_INDEX}
				 ON warehouses.warehouses (sender_id, lower(warehouse_name)) WHERE NOT retired`,
			);
			await q(
				`CREATE UNIQUE INDEX IF NOT EXISTS ${DEFAULT_UNIQUE_INDEX}
				 ON warehouses.warehouses (sender_id) WHERE is_default AND NOT retired`,
			);
			await q(
				`CREATE INDEX IF NOT EXISTS warehouses_sender_created_idx
				 ON warehouses.warehouses (sender_id, created_at DESC, id DESC)`,
			);
			await q(`
				CREATE TABLE IF NOT EXISTS warehouses.courier_registrations (
					warehouse_id bigint NOT NULL REFERENCES warehouses.warehouses (id),
					logistic_id integer NOT NULL,
					version integer NOT NULL,
					status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'registered', 'refused')),
					courier_location_id text,
					reason text,
					updated_at timestamptz NOT NULL DEFAULT now(),
					PRIMARY KEY (warehouse_id, logistic_id)
				)`);
			await q(
				`CREATE INDEX IF NOT EXISTS courier_registrations_pending_idx
				 ON warehouses.courier_registrations (updated_at) WHERE status = 'pending'`,
			);
		},
	},
	{
		// §2.9 (issue 25): with is_return_same false `return_warehouse_name` is required like every other
		// `return_*` field the forward leg requires. A row stored before, without one, gets the name its
		// return leg already used (lib/warehouses/rows.ts `returnLeg` falls back to the pickup's name), so
		// nothing a courier sees changes (no version bump) and a PATCH of any other field still validates.
		name: "0002_return_warehouse_name",
		async up({ sequelize, transaction }) {
			await sequelize.query(
				`UPDATE warehouses.warehouses SET return_warehouse_name = warehouse_name
				 WHERE NOT is_return_same AND (return_warehouse_name IS NULL OR btrim(return_warehouse_name) = '')`,
				{ transaction },
			);
		},
	},
	{
		// Pickup requests (issue 28; docs/decisions/0107-pickup-requests.md; lib/warehouses/pickups.ts): one row
		// per request, at most one live (requested, scheduled, picked up) per warehouse, courier and day; and the
		// event outbox of `pickup.missed` (relayed to the merchant events channel).
		name: "0003_pickups",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`CREATE TABLE IF NOT EXISTS warehouses.pickups (
				id bigserial PRIMARY KEY,
				sender_id bigint NOT NULL,
				warehouse_id bigint NOT NULL REFERENCES warehouses.warehouses (id),
				logistic_id integer NOT NULL,
				courier_name text NOT NULL,
				pickup_date date NOT NULL,
				slot text NOT NULL,
				expected_package_count integer NOT NULL CHECK (expected_package_count BETWEEN 1 AND ${PICKUP_MAX_PACKAGES}),
				status text NOT NULL DEFAULT 'requested'
					CHECK (status IN ('requested', 'scheduled', 'picked_up', 'missed', 'cancelled')),
				courier_pickup_id text,
				courier_note text,
				source text NOT NULL DEFAULT 'api' CHECK (source IN ('api', 'manifest')),
				shipments_picked_up integer NOT NULL DEFAULT 0,
				picked_up_at timestamptz,
				missed_at timestamptz,
				cancelled_at timestamptz,
				created_at timestamptz NOT NULL DEFAULT now(),
				updated_at timestamptz NOT NULL DEFAULT now()
			)`);
			await q(`CREATE UNIQUE INDEX IF NOT EXISTS ${PICKUP_LIVE_INDEX}
				ON warehouses.pickups (sender_id, warehouse_id, logistic_id, pickup_date)
				WHERE status IN ('requested', 'scheduled', 'picked_up')`);
			await q(`CREATE INDEX IF NOT EXISTS pickups_sender ON warehouses.pickups (sender_id, id DESC)`);
			await q(`CREATE INDEX IF NOT EXISTS pickups_open
				ON warehouses.pickups (pickup_date, id) WHERE status IN ('requested', 'scheduled', 'picked_up')`);
			for (const sql of eventOutboxDdl("warehouses")) await q(sql);
		},
	},
	// a relay woken by a commit reads from the smallest id it added (docs/decisions/0118-event-outbox-ranges.md)
	eventOutboxRangesMigration("0004_event_outbox_ranges", "warehouses"),
];
