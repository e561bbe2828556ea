/**
 * Every claim of an attempt asks whether an earlier attempt of its order failed ambiguously
 * (lib/booking/store/attempts.ts `claimAttempt`'s `earlier_ambiguous`), and `ambiguousAttempts` lists them. Booking
 * migration 017 indexes those rows by order id (docs/decisions/0147-ambiguous-attempts-index.md). Real PostgreSQL:
 * booking.attempts copied with its indexes (`LIKE … INCLUDING ALL`) into a schema of this test, 20,000 attempts of
 * which 2,000 failed and 20 ambiguous; the two statements of lib/booking/store/attempts.ts, run on the copy, read the
 * earlier ambiguous attempts through that index, not the table.
 */
import assert from "node:assert/strict";
import { BOOKING_MIGRATIONS } from "../../../lib/booking/migrations";
import { AMBIGUOUS_ATTEMPTS_SQL, CLAIM_ATTEMPT_SQL } from "../../../lib/booking/store/attempts";
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

	/** `sql` (a statement of lib/booking/store/attempts.ts) on this test's copy of booking.attempts. */
	const onCopy = (sql: string) => sql.replaceAll("booking.attempts", copy);

	/** The plan of `sql` (with ANALYZE when `analyze`: it runs) and the definitions of the indexes it scanned. */
	async function planOf(sql: string, bind: unknown[], analyze: boolean) {
		const db = getSequelize();
		const [{ "QUERY PLAN": out }] = await select<{ "QUERY PLAN": Array<{ Plan: Record<string, unknown> }> }>(
			db,
			`EXPLAIN (${analyze ? "ANALYZE, " : ""}FORMAT JSON) ${sql}`,
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

	/** A new queued attempt of `order` in the copy; answers its id. */
	async function queued(order: number): Promise<number> {
		const { rows } = await exec<{ attempt_id: number }>(
			getSequelize(),
			`INSERT INTO ${copy} (order_id, sender_id, logistic_id, courier_name, mode, state)
			 VALUES ($1, 900000, 1, 'Sandbox Express', 'auto', 'queued') RETURNING attempt_id`,
			[order],
		);
		return Number(rows[0]?.attempt_id);
	}

	it("claimAttempt's statement answers earlier_ambiguous through that index, no table scan", async () => {
		// orders 5000 and 5010 each have one failed attempt, 5000's ambiguous (g % 1000 = 0), 5010's not
		for (const [order, expected] of [
			[5000, true],
			[5010, false],
		] as const) {
			const id = await queued(order);
			const { rows } = await exec<{ state: string; earlier_ambiguous: boolean }>(
				getSequelize(),
				onCopy(CLAIM_ATTEMPT_SQL),
				[id, 60_000],
			);
			assert.equal(rows[0]?.state, "claimed", `order ${order}`);
			assert.equal(rows[0]?.earlier_ambiguous, expected, `order ${order}`);
		}
		// planned, not run (it would claim): the claimed row by its key, the earlier ones through the partial index
		const { nodes, defs } = await planOf(onCopy(CLAIM_ATTEMPT_SQL), [await queued(6000), 60_000], false);
		assert.ok(
			!nodes.some((n) => n["Node Type"] === "Seq Scan"),
			JSON.stringify(nodes.map((n) => n["Node Type"])),
		);
		assert.ok(
			defs.some((d) => ambiguousIndex.test(d)),
			defs.join("\n"),
		);
	});

	it("ambiguousAttempts' statement reads that index only", async () => {
		const { nodes, defs } = await planOf(onCopy(AMBIGUOUS_ATTEMPTS_SQL), [5000, 1_000_000], true);
		assert.ok(
			!nodes.some((n) => n["Node Type"] === "Seq Scan"),
			JSON.stringify(nodes.map((n) => n["Node Type"])),
		);
		assert.ok(defs.length > 0 && defs.every((d) => ambiguousIndex.test(d)), defs.join("\n"));
		const rows = nodes.find((n) => n["Index Name"]);
		assert.equal(rows?.["Actual Rows"], 1);
	});
});
