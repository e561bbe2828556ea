/**
 * Every outbox relay asks for the oldest due rows (`WHERE delivered_at IS
 * NULL AND next_attempt_at <= now() ORDER BY id LIMIT n FOR UPDATE SKIP
 * LOCKED`). With the old `(next_attempt_at, id)` partial index PostgreSQL read
 * and sorted every due row for each round, so draining a backlog was
 * quadratic; each outbox now has `(id) WHERE delivered_at IS NULL`
 * (lib/platform/outbox.ts undeliveredByIdMigration, a migration per owning service). Real
 * PostgreSQL: each migrated outbox table copied with its indexes (`LIKE …
 * INCLUDING ALL`) into a schema of this test, 20,000 undelivered rows (the
 * first 50 in backoff), and the plan of a relay round: no sort, an index scan
 * that stops after the round's rows. Booking's look-up of an attempt's pending
 * `enqueue_booking` row (settle, book/sync, fall-over) is an index scan by
 * attempt id, however many rows were delivered since the last VACUUM
 * (docs/decisions/0119-outbox-enqueue-by-attempt.md).
 */
import assert from "node:assert/strict";
import { BILLING_MIGRATIONS } from "../../lib/billing/migrations";
import { BOOKING_MIGRATIONS } from "../../lib/booking/migrations";
import { DOCUMENTS_MIGRATIONS } from "../../lib/documents/migrations";
import { INTAKE_MIGRATIONS } from "../../lib/intake/migrations";
import { NDR_MIGRATIONS } from "../../lib/ndr/migrations";
import { exec, getSequelize, migrate, select } from "../../lib/platform/db";
import { WAREHOUSES_MIGRATIONS } from "../../lib/warehouses/migrations";
import { nodesOf } from "../helpers/plans";

/** The outbox tables relays read, and the service migrations that make them. */
const TABLES = [
	{ schema: "intake", table: "event_outbox", payload: "event" },
	{ schema: "ndr", table: "event_outbox", payload: "event" },
	{ schema: "booking", table: "event_outbox", payload: "event" },
	{ schema: "billing", table: "event_outbox", payload: "event" },
	{ schema: "warehouses", table: "event_outbox", payload: "event" },
	{ schema: "booking", table: "outbox", payload: "payload" },
	{ schema: "documents", table: "outbox", payload: "payload" },
] as const;

describe("outbox relays read the oldest due rows by id (no sort of every due row)", function () {
	this.timeout(60_000);
	const mine = `outbox_idx_${process.pid}_${Date.now().toString(36)}`;

	before(async () => {
		const db = getSequelize();
		await migrate(db, "intake", INTAKE_MIGRATIONS);
		await migrate(db, "ndr", NDR_MIGRATIONS);
		await migrate(db, "booking", BOOKING_MIGRATIONS);
		await migrate(db, "documents", DOCUMENTS_MIGRATIONS);
		await migrate(db, "billing", BILLING_MIGRATIONS);
		await migrate(db, "warehouses", WAREHOUSES_MIGRATIONS);
		await exec(db, `CREATE SCHEMA "${mine}"`);
	});
	after(() => exec(getSequelize(), `DROP SCHEMA IF EXISTS "${mine}" CASCADE`));

	for (const t of TABLES) {
		it(`${t.schema}.${t.table}: a 200-row round over 20,000 due rows is an id-ordered index scan`, async () => {
			const db = getSequelize();
			const copy = `"${mine}"."${t.schema}_${t.table}"`;
			await exec(db, `CREATE TABLE ${copy} (LIKE ${t.schema}.${t.table} INCLUDING ALL)`);
			const indexes = await select<{ indexdef: string }>(
				db,
				"SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2",
				[t.schema, t.table],
			);
			assert.ok(
				indexes.some((i) => /\(id\) WHERE \(delivered_at IS NULL\)/.test(i.indexdef)),
				indexes.map((i) => i.indexdef).join("\n"),
			);
			assert.ok(!indexes.some((i) => /\(next_attempt_at, id\)/.test(i.indexdef)), "the old index is gone");
			// the columns every outbox has; a booking / documents row also needs its kind
			const kind = t.table === "outbox" ? ", kind" : "";
			const kindValue =
				t.table !== "outbox" ? "" : t.schema === "booking" ? ", 'order_update'" : ", 'manifest'";
			await exec(
				db,
				`INSERT INTO ${copy} (${t.payload}${kind}, next_attempt_at)
				 SELECT jsonb_build_object('n', g)${kindValue},
				   CASE WHEN g <= 50 THEN now() + interval '1 hour' ELSE now() - interval '1 second' END
				 FROM generate_series(1, 20000) g`,
			);
			await exec(db, `ANALYZE ${copy}`);
			const [{ "QUERY PLAN": out }] = await select<{
				"QUERY PLAN": Array<{ Plan: Record<string, unknown> }>;
			}>(
				db,
				`EXPLAIN (ANALYZE, FORMAT JSON) SELECT id FROM ${copy}
				 WHERE delivered_at IS NULL AND next_attempt_at <= now() ORDER BY id LIMIT 200 FOR UPDATE SKIP LOCKED`,
			);
			const nodes = nodesOf(out[0].Plan);
			assert.ok(
				!nodes.some((n) => n["Node Type"] === "Sort"),
				JSON.stringify(nodes.map((n) => n["Node Type"])),
			);
			const scan = nodes.find((n) => String(n["Node Type"]).startsWith("Index"));
			assert.ok(scan, JSON.stringify(nodes.map((n) => n["Node Type"])));
			// the copy's index names are PostgreSQL's own: check the scanned one's definition
			const [used] = await select<{ indexdef: string }>(
				db,
				"SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = $2",
				[mine, scan["Index Name"]],
			);
			assert.match(used.indexdef, /\(id\) WHERE \(delivered_at IS NULL\)/);
			// the 50 rows in backoff are skipped, then it stops: ~250 rows read, not 20,000
			assert.equal(scan["Actual Rows"], 200);
			assert.ok(Number(scan["Rows Removed by Filter"] ?? 0) <= 50, JSON.stringify(scan));
		});
	}

	it("booking.outbox: an attempt's pending enqueue_booking row is one index look-up, with 19,990 delivered rows not yet vacuumed", async () => {
		const db = getSequelize();
		const copy = `"${mine}"."booking_outbox_enqueue"`;
		await exec(db, `CREATE TABLE ${copy} (LIKE booking.outbox INCLUDING ALL)`);
		await exec(
			db,
			`INSERT INTO ${copy} (kind, payload)
			 SELECT 'enqueue_booking', jsonb_build_object('attempt_id', g, 'order_id', g) FROM generate_series(1, 20000) g`,
		);
		// delivered rows leave their undelivered-index entries behind until VACUUM (autovacuum may be off)
		await exec(db, `UPDATE ${copy} SET delivered_at = now() WHERE id <= 19990`);
		await exec(db, `ANALYZE ${copy}`);
		const [pending] = await select<{ id: string }>(
			db,
			`SELECT id FROM ${copy} WHERE (payload->>'attempt_id')::bigint = 19995`,
		);
		// the predicate of lib/booking/store/attempts.ts (settle's skip, skipEnqueue, enqueueNow)
		const [{ "QUERY PLAN": out }] = await select<{
			"QUERY PLAN": Array<{ Plan: Record<string, unknown> }>;
		}>(
			db,
			`EXPLAIN (ANALYZE, FORMAT JSON) UPDATE ${copy} SET next_attempt_at = now()
			 WHERE kind = 'enqueue_booking' AND delivered_at IS NULL AND (payload->>'attempt_id')::bigint = $1
			 RETURNING id`,
			[19995],
		);
		const nodes = nodesOf(out[0].Plan);
		assert.equal(out[0].Plan["Actual Rows"], 1, "the pending row is updated");
		const scan = nodes.find((n) => n["Node Type"] === "Index Scan");
		assert.ok(scan, JSON.stringify(nodes.map((n) => n["Node Type"])));
		const [used] = await select<{ indexdef: string }>(
			db,
			"SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = $2",
			[mine, scan["Index Name"]],
		);
		assert.match(
			used.indexdef,
			/attempt_id.*WHERE \(\(kind = 'enqueue_booking'::text\) AND \(delivered_at IS NULL\)\)/,
		);
		assert.ok(
			!nodes.some((n) => String(n["Node Type"]).startsWith("Bitmap")),
			JSON.stringify(nodes.map((n) => n["Node Type"])),
		);
		const [after] = await select<{ due: boolean }>(
			db,
			`SELECT next_attempt_at <= now() AS due FROM ${copy} WHERE id = $1`,
			[pending.id],
		);
		assert.equal(after.due, true);
	});
});
