/**
 * Every claim of an attempt asks whether an earlier attempt of its order failed ambiguously
 * (lib/booking/store/attempts.ts `claimAttempt`'s `earlier_ambiguous`), and `ambiguousAttempts` lists them. Booking
 * migration 017 indexes those rows by order id (docs/decisions/0147-ambiguous-attempts-index.md). Real PostgreSQL:
 * booking.attempts copied with its indexes (`LIKE … INCLUDING ALL`) into a schema of this test, 20,000 attempts of
 * which 2,000 failed and 20 ambiguous; both look-ups are one index scan of that index, not a read of the table.
 */
import assert from "node:assert/strict";
import { BOOKING_MIGRATIONS } from "../../../lib/booking/migrations";
import { exec, getSequelize, migrate, select } from "../../../lib/platform/db";
import { nodesOf } from "../../helpers/plans";

describe("booking: an order's earlier ambiguous attempts are an index look-up (record 0147)", function () {
	this.timeout(60_000);
	const mine = `ambiguous_idx_${process.pid}_${Date.now().toString(36)}`;
	const copy = `"${mine}"."attempts"`;

	before(async () => {
		const db = getSequelize();
		await migrate(db, "booking", BOOKING_MIGRATIONS);
		await exec(db, `CREATE SCHEMA "${mine}"`);
		await exec(db, `CREATE TABLE ${copy} (LIKE booking.attempts INCLUDING ALL)`);
		await exec(
			db,
			`INSERT INTO ${copy} (order_id, sender_id, logistic_id, courier_name, mode, state, ambiguous)
			 SELECT g, 900000 + g % 20, 1, 'Sandbox Express', 'auto',
			   CASE WHEN g % 10 = 0 THEN 'failed' ELSE 'booked' END, g % 1000 = 0
			 FROM generate_series(1, 20000) g`,
		);
		await exec(db, `ANALYZE ${copy}`);
	});
	after(() => exec(getSequelize(), `DROP SCHEMA IF EXISTS "${mine}" CASCADE`));

	/** The plan of `sql` (run with ANALYZE) and the definitions of the indexes it scanned. */
	async function planOf(sql: string, bind: unknown[]) {
		const db = getSequelize();
		const [{ "QUERY PLAN": out }] = await select<{ "QUERY PLAN": Array<{ Plan: Record<string, unknown> }> }>(
			db,
			`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
			bind,
		);
		const nodes = nodesOf(out[0].Plan);
		const scanned = nodes.filter((n) => n["Index Name"]).map((n) => String(n["Index Name"]));
		const defs = await select<{ indexdef: string }>(
			db,
			"SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = ANY($2::text[])",
			[mine, scanned],
		);
		return { nodes, defs: defs.map((d) => d.indexdef) };
	}

	const ambiguousIndex = /\(order_id\) WHERE \(\(state = 'failed'::text\) AND ambiguous\)/;

	it("the claim's question (an earlier ambiguous attempt of this order?) reads that index only", async () => {
		// the sub-query of claimAttempt, for an order with one ambiguous attempt and one without
		for (const [order, expected] of [
			[5000, true],
			[5001, false],
		] as const) {
			const [{ found }] = await select<{ found: boolean }>(
				getSequelize(),
				`SELECT EXISTS (SELECT 1 FROM ${copy} p
				   WHERE p.order_id = $1 AND p.attempt_id < $2 AND p.state = 'failed' AND p.ambiguous) AS found`,
				[order, 1_000_000],
			);
			assert.equal(found, expected, `order ${order}`);
		}
		const { nodes, defs } = await planOf(
			`SELECT EXISTS (SELECT 1 FROM ${copy} p
			   WHERE p.order_id = $1 AND p.attempt_id < $2 AND p.state = 'failed' AND p.ambiguous)`,
			[5000, 1_000_000],
		);
		assert.ok(
			!nodes.some((n) => n["Node Type"] === "Seq Scan"),
			JSON.stringify(nodes.map((n) => n["Node Type"])),
		);
		assert.ok(defs.length > 0 && defs.every((d) => ambiguousIndex.test(d)), defs.join("\n"));
	});

	it("ambiguousAttempts' list reads that index only", async () => {
		const { nodes, defs } = await planOf(
			`SELECT * FROM ${copy} WHERE order_id = $1 AND attempt_id < $2 AND state = 'failed' AND ambiguous
			 ORDER BY attempt_id`,
			[5000, 1_000_000],
		);
		assert.ok(
			!nodes.some((n) => n["Node Type"] === "Seq Scan"),
			JSON.stringify(nodes.map((n) => n["Node Type"])),
		);
		assert.ok(defs.length > 0 && defs.every((d) => ambiguousIndex.test(d)), defs.join("\n"));
		const rows = nodes.find((n) => n["Index Name"]);
		assert.equal(rows?.["Actual Rows"], 1);
	});
});
