/** Migrations (lib/platform/db.ts): idempotent and safe when several processes start at once. */
import { strict as assert } from "node:assert";
import { Sequelize } from "sequelize";
import { loadConfig } from "../../lib/platform/config";
import { exec, getSequelize, type Migration, migrate, select } from "../../lib/platform/db";

describe("db: migrations", () => {
	const schema = `mig_test_${Date.now().toString(36)}`;
	let runs = 0;
	const migrations: Migration[] = [
		{
			name: "001-create",
			async up({ sequelize, transaction }) {
				runs++;
				await sequelize.query(`CREATE TABLE "${schema}".t (id int PRIMARY KEY)`, { transaction });
				await new Promise((r) => setTimeout(r, 100)); // widen the race window
			},
		},
		{
			name: "002-seed",
			async up({ sequelize, transaction }) {
				runs++;
				await sequelize.query(`INSERT INTO "${schema}".t VALUES (1)`, { transaction });
			},
		},
	];
	// separate pools, as separate processes would have
	let pools: Sequelize[] = [];
	before(() => {
		pools = Array.from({ length: 4 }, () => new Sequelize(process.env.DATABASE_URL!, { logging: false }));
	});
	after(async () => {
		await pools[0].query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
		await Promise.all(pools.map((p) => p.close()));
	});

	it("applies each migration exactly once under concurrent starts", async () => {
		const applied = await Promise.all(pools.map((p) => migrate(p, schema, migrations)));
		assert.equal(runs, 2);
		assert.deepEqual(applied.flat().sort(), ["001-create", "002-seed"]);
		const rows = await select<{ id: number }>(pools[0], `SELECT id FROM "${schema}".t`);
		assert.deepEqual(rows, [{ id: 1 }]);
	});

	it("is idempotent on restart", async () => {
		assert.deepEqual(await migrate(pools[1], schema, migrations), []);
		assert.equal(runs, 2);
	});

	it("rolls a failing migration back whole", async () => {
		const bad: Migration[] = [
			...migrations,
			{
				name: "003-broken",
				async up({ sequelize, transaction }) {
					await sequelize.query(`INSERT INTO "${schema}".t VALUES (2)`, { transaction });
					await sequelize.query("SELECT * FROM no_such_table", { transaction });
				},
			},
		];
		await assert.rejects(() => migrate(pools[2], schema, bad));
		const rows = await select<{ id: number }>(pools[0], `SELECT id FROM "${schema}".t ORDER BY id`);
		assert.deepEqual(rows, [{ id: 1 }]);
		assert.deepEqual(await migrate(pools[3], schema, migrations), []);
	});
});

describe("db: prepared statements", () => {
	const schema = `prep_test_${Date.now().toString(36)}`;
	let pool: Sequelize;
	before(async () => {
		// one connection, so the prepared statement is certainly on it
		pool = new Sequelize(process.env.DATABASE_URL!, { logging: false, pool: { max: 1 } });
		await pool.query(`CREATE SCHEMA "${schema}"`);
		await pool.query(`CREATE TABLE "${schema}".t (id int PRIMARY KEY, a text)`);
		await pool.query(`INSERT INTO "${schema}".t VALUES (1, 'x')`);
	});
	after(async () => {
		await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
		await pool.close();
	});

	it("a statement with bind values is prepared by name on the connection and answers its rows; its errors map as sequelize.query's", async () => {
		const sql = `SELECT a FROM "${schema}".t WHERE id = $1 AND a = $2`;
		assert.deepEqual(await select(pool, sql, [1, "x"]), [{ a: "x" }]);
		assert.deepEqual(await select(pool, sql, [1, "y"]), [], "bound again with other values");
		const prepared = await select<{ name: string; statement: string; parameter_types: string }>(
			pool,
			"SELECT name, statement, parameter_types::text FROM pg_prepared_statements WHERE statement = $1",
			[sql],
		);
		assert.equal(prepared.length, 1, "prepared once on the pool's one connection");
		assert.match(prepared[0].name, /^msa_\d+$/);
		// a unique violation of a prepared INSERT: Sequelize's error, the connection still usable
		const insert = `INSERT INTO "${schema}".t (id, a) VALUES ($1, $2)`;
		await assert.rejects(
			() => exec(pool, insert, [1, "dup"]),
			(err: Error) => err.name === "SequelizeUniqueConstraintError",
		);
		await assert.rejects(
			() => select(pool, `SELECT a FROM "${schema}".t WHERE id = $1::int`, ["not a number"]),
			(err: Error) => err.name === "SequelizeDatabaseError" && /invalid input syntax/.test(err.message),
		);
		assert.deepEqual(
			await select(pool, sql, [1, "x"]),
			[{ a: "x" }],
			"the connection answers after the errors",
		);
	});

	it("a table changed under a prepared SELECT * (a migration by a newer process) is read again, not an error", async () => {
		const sql = `SELECT * FROM "${schema}".t WHERE id = $1`;
		assert.deepEqual(await select(pool, sql, [1]), [{ id: 1, a: "x" }]);
		await pool.query(`ALTER TABLE "${schema}".t ADD COLUMN b int NOT NULL DEFAULT 7`);
		assert.deepEqual(await select(pool, sql, [1]), [{ id: 1, a: "x", b: 7 }]);
		assert.deepEqual(
			await select(pool, sql, [1]),
			[{ id: 1, a: "x", b: 7 }],
			"and again on a fresh connection",
		);
	});
});

describe("db: application_name names the process in pg_stat_activity", () => {
	it("defaults to msa-<SERVICES>, msa-all without SERVICES; DB_APPLICATION_NAME overrides, cut at 63 bytes", () => {
		assert.equal(loadConfig({}).dbApplicationName, "msa-all");
		assert.equal(loadConfig({ SERVICES: "intake" }).dbApplicationName, "msa-intake");
		assert.equal(loadConfig({ SERVICES: "gateway, rates" }).dbApplicationName, "msa-gateway+rates");
		assert.equal(
			loadConfig({ SERVICES: "intake", DB_APPLICATION_NAME: " msa-intake-bulk " }).dbApplicationName,
			"msa-intake-bulk",
		);
		assert.equal(loadConfig({ DB_APPLICATION_NAME: "x".repeat(80) }).dbApplicationName.length, 63);
		assert.equal(loadConfig({ DB_APPLICATION_NAME: "  " }).dbApplicationName, "msa-all");
	});

	it("the process pool's sessions carry it", async () => {
		const rows = await select<{ application_name: string }>(
			getSequelize(),
			"SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()",
		);
		assert.equal(rows[0].application_name, loadConfig().dbApplicationName);
		assert.match(rows[0].application_name, /^msa-/);
	});
});
