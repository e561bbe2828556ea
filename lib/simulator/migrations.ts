/**
 * Migrations of the `simulator` schema (docs/ARCHITECTURE.md §4): the sandbox
 * couriers' own state, so they behave as real couriers across restarts.
 *
 * - `simulator.awb_seq`: AWB numbers (unique across couriers);
 * - `simulator.packages`: booked shipments per courier and client reference;
 * - `simulator.scans`: tracking scans per AWB, oldest first by id;
 * - `simulator.pickup_locations`: registered warehouses per courier;
 * - `simulator.faults`: injected faults already played (SIMULATE_5XX once per reference);
 * - `simulator.calls`: every courier call (ops and tests);
 * - `simulator.ndr_actions`: NDR acts accepted (`POST /api/p/update`), each with the pending scan it answers;
 * - `simulator.charged_weights`: the weight (kg) and dimensions (cm) a courier "measured" for a package
 *   (`simulator.overweigh`), which its weight file charges instead of the declared ones.
 */
import type { Migration } from "../platform/db";

/** Ordered migrations of the `simulator` schema (given to `DbMixin("simulator", …)`). */
export const SIMULATOR_MIGRATIONS: Migration[] = [
	{
		name: "001-simulator",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`CREATE SEQUENCE IF NOT EXISTS simulator.awb_seq`);
			await q(`CREATE TABLE IF NOT EXISTS simulator.packages (
				courier_code text NOT NULL,
				refnum text NOT NULL,
				waybill text NOT NULL UNIQUE,
				sort_code text,
				client_order_no text,
				pickup_location text NOT NULL,
				payment_mode text NOT NULL,
				shipment jsonb NOT NULL,
				cancelled_at timestamptz,
				created_at timestamptz NOT NULL DEFAULT now(),
				PRIMARY KEY (courier_code, refnum)
			)`);
			await q(`CREATE TABLE IF NOT EXISTS simulator.scans (
				id bigserial PRIMARY KEY,
				waybill text NOT NULL,
				code text NOT NULL,
				location text NOT NULL,
				instructions text NOT NULL DEFAULT '',
				at timestamptz NOT NULL DEFAULT clock_timestamp()
			)`);
			await q(`CREATE INDEX IF NOT EXISTS scans_waybill ON simulator.scans (waybill, id)`);
			await q(`CREATE TABLE IF NOT EXISTS simulator.pickup_locations (
				courier_code text NOT NULL,
				name text NOT NULL,
				pincode text NOT NULL,
				city text NOT NULL,
				payload jsonb NOT NULL,
				created_at timestamptz NOT NULL DEFAULT now(),
				updated_at timestamptz NOT NULL DEFAULT now(),
				PRIMARY KEY (courier_code, name)
			)`);
			await q(`CREATE TABLE IF NOT EXISTS simulator.faults (
				courier_code text NOT NULL,
				refnum text NOT NULL,
				fault text NOT NULL,
				at timestamptz NOT NULL DEFAULT now(),
				PRIMARY KEY (courier_code, refnum, fault)
			)`);
			await q(`CREATE TABLE IF NOT EXISTS simulator.calls (
				id bigserial PRIMARY KEY,
				courier_code text NOT NULL,
				endpoint text NOT NULL,
				refnum text,
				status int NOT NULL,
				outcome text,
				at timestamptz NOT NULL DEFAULT now()
			)`);
			await q(`CREATE INDEX IF NOT EXISTS calls_ref ON simulator.calls (courier_code, refnum)`);
		},
	},
	{
		name: "002-simulator-ndr-actions",
		async up({ sequelize, transaction }) {
			await sequelize.query(
				`CREATE TABLE IF NOT EXISTS simulator.ndr_actions (
				id bigserial PRIMARY KEY,
				courier_code text NOT NULL,
				waybill text NOT NULL,
				scan_id bigint NOT NULL,
				act text NOT NULL,
				action_data jsonb NOT NULL DEFAULT '{}'::jsonb,
				request_id text NOT NULL,
				at timestamptz NOT NULL DEFAULT now()
			)`,
				{ transaction },
			);
			await sequelize.query(
				`CREATE INDEX IF NOT EXISTS ndr_actions_waybill ON simulator.ndr_actions (waybill, scan_id)`,
				{ transaction },
			);
		},
	},
	{
		name: "003-simulator-charged-weights",
		async up({ sequelize, transaction }) {
			await sequelize.query(
				`CREATE TABLE IF NOT EXISTS simulator.charged_weights (
				waybill text PRIMARY KEY REFERENCES simulator.packages (waybill) ON DELETE CASCADE,
				charged_weight_kg numeric(10,3) NOT NULL CHECK (charged_weight_kg > 0),
				length_cm numeric(10,2) CHECK (length_cm > 0),
				width_cm numeric(10,2) CHECK (width_cm > 0),
				height_cm numeric(10,2) CHECK (height_cm > 0),
				created_at timestamptz NOT NULL DEFAULT now(),
				updated_at timestamptz NOT NULL DEFAULT now(),
				CONSTRAINT charged_weights_dims_all_or_none
				  CHECK ((length_cm IS NULL) = (width_cm IS NULL) AND (width_cm IS NULL) = (height_cm IS NULL))
			)`,
				{ transaction },
			);
		},
	},
	{
		// issue 28 (docs/decisions/0107-pickup-requests.md): the sandbox couriers' pickup requests (./pickups.ts)
		name: "004-simulator-pickups",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`CREATE TABLE IF NOT EXISTS simulator.pickups (
				pickup_id bigint PRIMARY KEY DEFAULT nextval('simulator.awb_seq'),
				courier_code text NOT NULL,
				location text NOT NULL,
				pickup_date date NOT NULL,
				pickup_time text NOT NULL,
				expected_package_count integer NOT NULL CHECK (expected_package_count > 0),
				status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'cancelled')),
				created_at timestamptz NOT NULL DEFAULT now(),
				updated_at timestamptz NOT NULL DEFAULT now()
			)`);
			await q(`CREATE UNIQUE INDEX IF NOT EXISTS pickups_one_open
				ON simulator.pickups (courier_code, location, pickup_date) WHERE status = 'open'`);
		},
	},
];
