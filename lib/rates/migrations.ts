/**
 * Migrations of the `rates` schema (docs/ARCHITECTURE.md §1; DOMAIN.md "Zones",
 * "Weight and price"). Every number that varies by courier is data here:
 *
 * - `rates.couriers`: the courier catalogue (adapter, mode, volumetric divisor,
 *   default AUTO priority, weight limit, active flag).
 * - `rates.rate_cards`: courier × zone (A–E) × direction (forward/reverse):
 *   first slab (kg, paise), additional slab (kg, paise), minimum chargeable kg.
 * - `rates.cod_config`: COD fee per courier = max(flat paise, basis points × COD amount).
 * - `rates.rto_rules`: RTO charge per courier as basis points of the forward freight (0 allowed).
 * - `rates.serviceability`: pincode-prefix rules per courier (longest prefix wins;
 *   no matching rule = serviceable), for pickup, delivery or both ends.
 * - `rates.lane_performance`: per courier and lane (origin pincode → destination
 *   pincode) outcome counters; empty until shipments report history.
 * - `rates.lane_outcomes` (002): one row per booking attempt whose outcome was
 *   counted into `lane_performance` (`rates.recordLaneOutcome`), so a
 *   re-delivered outcome is counted once.
 * - `rates.courier_pincodes` (003, issue 14): each courier's own pincode
 *   serviceability as its API last answered it (lib/rates/serviceability.ts),
 *   replaced per courier in one transaction per sync; `rates.serviceability_syncs`
 *   the last sync of each courier (time, row count, last error).
 *
 * - `rates.couriers.pickup_cutoff` / `pickup_weekdays` and `rates.transit_days`
 *   (004, issue 28): when each courier picks up (its daily cut-off, IST, and
 *   week days; holidays from data/holidays.json) and its transit working days
 *   per zone and direction ({min, max}), for the estimated delivery dates.
 *
 * Sandbox couriers are NOT seeded here (see lib/rates/seed.ts, run in `started`).
 */
import type { Migration } from "../platform/db";

/** Ordered migrations of the `rates` schema (given to `DbMixin("rates", …)`). */
export const RATES_MIGRATIONS: Migration[] = [
	{
		name: "001_rates",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`CREATE TABLE IF NOT EXISTS rates.couriers (
				logistic_id        integer PRIMARY KEY CHECK (logistic_id > 0),
				logistic_name      text NOT NULL,
				adapter            text NOT NULL,
				code               text NOT NULL UNIQUE,
				forward            boolean NOT NULL DEFAULT true,
				reverse            boolean NOT NULL DEFAULT false,
				cod                boolean NOT NULL DEFAULT false,
				mode               text NOT NULL DEFAULT 'surface' CHECK (mode IN ('air', 'surface')),
				volumetric_divisor integer NOT NULL DEFAULT 5000 CHECK (volumetric_divisor > 0),
				max_weight_kg      numeric(8,3) CHECK (max_weight_kg IS NULL OR max_weight_kg > 0),
				default_priority   integer NOT NULL CHECK (default_priority > 0),
				active             boolean NOT NULL DEFAULT true,
				created_at         timestamptz NOT NULL DEFAULT now(),
				updated_at         timestamptz NOT NULL DEFAULT now()
			)`);
			await q(`CREATE TABLE IF NOT EXISTS rates.rate_cards (
				logistic_id          integer NOT NULL REFERENCES rates.couriers (logistic_id) ON DELETE CASCADE,
				zone                 char(1) NOT NULL CHECK (zone IN ('A', 'B', 'C', 'D', 'E')),
				direction            text NOT NULL CHECK (direction IN ('forward', 'reverse')),
				first_slab_kg        numeric(8,3) NOT NULL CHECK (first_slab_kg > 0),
				first_slab_paise     bigint NOT NULL CHECK (first_slab_paise >= 0),
				additional_slab_kg   numeric(8,3) NOT NULL CHECK (additional_slab_kg > 0),
				additional_slab_paise bigint NOT NULL CHECK (additional_slab_paise >= 0),
				min_chargeable_kg    numeric(8,3) NOT NULL DEFAULT 0 CHECK (min_chargeable_kg >= 0),
				updated_at           timestamptz NOT NULL DEFAULT now(),
				PRIMARY KEY (logistic_id, zone, direction)
			)`);
			await q(`CREATE TABLE IF NOT EXISTS rates.cod_config (
				logistic_id integer PRIMARY KEY REFERENCES rates.couriers (logistic_id) ON DELETE CASCADE,
				flat_paise  bigint NOT NULL CHECK (flat_paise >= 0),
				percent_bp  integer NOT NULL CHECK (percent_bp >= 0),
				updated_at  timestamptz NOT NULL DEFAULT now()
			)`);
			await q(`CREATE TABLE IF NOT EXISTS rates.rto_rules (
				logistic_id integer PRIMARY KEY REFERENCES rates.couriers (logistic_id) ON DELETE CASCADE,
				percent_bp  integer NOT NULL CHECK (percent_bp >= 0),
				updated_at  timestamptz NOT NULL DEFAULT now()
			)`);
			await q(`CREATE TABLE IF NOT EXISTS rates.serviceability (
				logistic_id    integer NOT NULL REFERENCES rates.couriers (logistic_id) ON DELETE CASCADE,
				pincode_prefix text NOT NULL CHECK (pincode_prefix ~ '^[0-9]{1,6}$'),
				applies_to     text NOT NULL DEFAULT 'both' CHECK (applies_to IN ('pickup', 'delivery', 'both')),
				serviceable    boolean NOT NULL,
				note           text,
				PRIMARY KEY (logistic_id, pincode_prefix, applies_to)
			)`);
			await q(`CREATE TABLE IF NOT EXISTS rates.lane_performance (
				logistic_id  integer NOT NULL REFERENCES rates.couriers (logistic_id) ON DELETE CASCADE,
				from_pin     text NOT NULL CHECK (from_pin ~ '^[0-9]{6}$'),
				to_pin       text NOT NULL CHECK (to_pin ~ '^[0-9]{6}$'),
				shipments    integer NOT NULL DEFAULT 0 CHECK (shipments >= 0),
				delivered    integer NOT NULL DEFAULT 0 CHECK (delivered >= 0),
				rto          integer NOT NULL DEFAULT 0 CHECK (rto >= 0),
				tat_days_sum numeric(12,2) NOT NULL DEFAULT 0 CHECK (tat_days_sum >= 0),
				updated_at   timestamptz NOT NULL DEFAULT now(),
				PRIMARY KEY (logistic_id, from_pin, to_pin)
			)`);
		},
	},
	{
		name: "002_lane_outcomes",
		async up({ sequelize, transaction }) {
			await sequelize.query(
				`CREATE TABLE IF NOT EXISTS rates.lane_outcomes (
				attempt_id  bigint PRIMARY KEY CHECK (attempt_id > 0),
				logistic_id integer NOT NULL REFERENCES rates.couriers (logistic_id) ON DELETE CASCADE,
				from_pin    text NOT NULL CHECK (from_pin ~ '^[0-9]{6}$'),
				to_pin      text NOT NULL CHECK (to_pin ~ '^[0-9]{6}$'),
				outcome     text NOT NULL CHECK (outcome IN ('delivered', 'rto')),
				tat_days    numeric(8,2) NOT NULL CHECK (tat_days >= 0),
				recorded_at timestamptz NOT NULL DEFAULT now()
			)`,
				{ transaction },
			);
		},
	},
	{
		name: "003_courier_pincodes",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`CREATE TABLE IF NOT EXISTS rates.courier_pincodes (
				logistic_id      integer NOT NULL REFERENCES rates.couriers (logistic_id) ON DELETE CASCADE,
				pincode          text NOT NULL CHECK (pincode ~ '^[0-9]{6}$'),
				prepaid          boolean NOT NULL,
				cod              boolean NOT NULL,
				pickup           boolean NOT NULL,
				reverse          boolean NOT NULL,
				oda              boolean NOT NULL,
				max_amount_paise bigint CHECK (max_amount_paise IS NULL OR max_amount_paise >= 0),
				max_weight_g     integer CHECK (max_weight_g IS NULL OR max_weight_g >= 0),
				sort_code        text,
				synced_at        timestamptz NOT NULL,
				PRIMARY KEY (logistic_id, pincode)
			)`);
			await q(`CREATE TABLE IF NOT EXISTS rates.serviceability_syncs (
				logistic_id     integer PRIMARY KEY REFERENCES rates.couriers (logistic_id) ON DELETE CASCADE,
				synced_at       timestamptz,
				rows            integer NOT NULL DEFAULT 0 CHECK (rows >= 0),
				attempted_at    timestamptz NOT NULL DEFAULT now(),
				last_error      text,
				last_error_at   timestamptz
			)`);
		},
	},
	{
		// issue 28 (docs/decisions/0106-working-days-and-edd.md): pickup rules and transit days per courier
		name: "004_pickup_rules_transit",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`ALTER TABLE rates.couriers
				ADD COLUMN IF NOT EXISTS pickup_cutoff text NOT NULL DEFAULT '14:00'
					CHECK (pickup_cutoff ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
				ADD COLUMN IF NOT EXISTS pickup_weekdays smallint[] NOT NULL DEFAULT '{1,2,3,4,5,6}'
					CHECK (cardinality(pickup_weekdays) BETWEEN 1 AND 7
						AND pickup_weekdays <@ ARRAY[0, 1, 2, 3, 4, 5, 6]::smallint[])`);
			await q(`CREATE TABLE IF NOT EXISTS rates.transit_days (
				logistic_id integer NOT NULL REFERENCES rates.couriers (logistic_id) ON DELETE CASCADE,
				zone        char(1) NOT NULL CHECK (zone IN ('A', 'B', 'C', 'D', 'E')),
				direction   text NOT NULL CHECK (direction IN ('forward', 'reverse')),
				min_days    smallint NOT NULL CHECK (min_days >= 0),
				max_days    smallint NOT NULL CHECK (max_days >= min_days AND max_days <= 30),
				PRIMARY KEY (logistic_id, zone, direction)
			)`);
		},
	},
];
