/**
 * Integration: a bulk job survives `kill -9` of the intake process mid-file
 * (issue 10; lib/intake/bulk/process.ts).
 *
 * Two processes as `npm start` runs them over real NATS, PostgreSQL and
 * Redis: the core (gateway, pincode, warehouses, …) and intake alone. A CSV
 * of a few thousand rows (some repeated references, some invalid rows) is
 * stored as a queued job; intake is restarted so its start-up sweep enqueues
 * it, killed with SIGKILL while 0 < processed_rows < total, and restarted
 * (the BullMQ lock expires and the job runs again from its checkpoint). Then:
 * the job completed, exactly one order per distinct valid reference, none
 * missing, none extra, one outcome per row, and counts that add up.
 */
import { strict as assert } from "node:assert";
import type { Server } from "node:http";
import { Client } from "pg";
import { TEMPLATE_COLUMNS } from "../../lib/contracts/http/intake-bulk-input";
import { TEMPLATE_EXAMPLE } from "../../lib/intake/bulk/columns";
import { newSender } from "../helpers/broker";
import { freshRef } from "../helpers/fixtures";
import { eventually } from "../helpers/poll";
import { childSystem, type StartedProcess, startProcess, waitReady } from "../helpers/processes";

/** Data rows of the file. */
const ROWS = 4000;

describe("integration: bulk job under kill -9 of the intake process", function () {
	this.timeout(240_000);
	let jwks: Server;
	let core: StartedProcess;
	let intake: StartedProcess | undefined;
	let intakeEnv: Record<string, string | undefined> = {};
	let base = "";
	let db: Client;

	before(async () => {
		const sys = await childSystem("bulkcrash", { labelLinkSecret: "crash-secret", logLevel: "error" });
		({ jwks, base } = sys);
		const common = sys.env;
		intakeEnv = {
			...common,
			SERVICES: "intake",
			NODEID: "bulkcrash-intake",
			// small batches: many checkpoints, so the kill lands mid-file
			INTAKE_BULK_BATCH: "100",
			// the killed worker's job runs again after this
			INTAKE_BULK_LOCK_MS: "2000",
		};
		core = startProcess({
			...common,
			SERVICES:
				"gateway,documents,pincode,rates,warehouses,booking,billing,ndr,webhooks,notifications,simulator",
			NODEID: "bulkcrash-core",
		});
		intake = startProcess(intakeEnv);
		db = new Client({ connectionString: process.env.DATABASE_URL });
		await db.connect();
		await waitReady(base, [core, intake], 90_000);
	});

	after(async () => {
		await Promise.all([intake?.stop(), core?.stop()]);
		jwks?.close();
		await db?.end();
	});

	it("resumes at the checkpoint after kill -9 and creates exactly one order per distinct valid reference", async () => {
		const sender = newSender();
		const prefix = freshRef("BC");
		// rows: every 50th repeats the previous row's reference (same content → deduped),
		// every 97th is invalid (pincode) → failed
		const refs: string[] = [];
		const lines = [TEMPLATE_COLUMNS.join(",")];
		const expected = new Set<string>();
		for (let i = 1; i <= ROWS; i++) {
			const ref = i % 50 === 0 ? refs[refs.length - 1] : `${prefix}-${i}`;
			const bad = i % 97 === 0;
			refs.push(ref);
			if (!bad) expected.add(ref);
			const cells = TEMPLATE_COLUMNS.map((c) =>
				c === "customer_order_no" ? ref : c === "receiver_pincode" && bad ? "12" : TEMPLATE_EXAMPLE[c],
			);
			lines.push(cells.map((v) => (/[",]/.test(v) ? `"${v}"` : v)).join(","));
		}
		// a bad row that repeats a reference: that reference is still created by its valid first row
		const bytes = Buffer.from(`${lines.join("\n")}\n`);
		const { rows } = await db.query<{ job_id: string }>(
			`INSERT INTO intake.bulk_jobs (sender_id, file_name, content_type, format, size_bytes, sender_address_id)
			VALUES ($1, 'crash.csv', 'text/csv', 'csv', $2, 7) RETURNING job_id`,
			[sender, bytes.length],
		);
		const job_id = rows[0].job_id;
		await db.query(`INSERT INTO intake.bulk_files (job_id, bytes) VALUES ($1, $2)`, [job_id, bytes]);
		const job = async () =>
			(await db.query(`SELECT * FROM intake.bulk_jobs WHERE job_id = $1`, [job_id])).rows[0] as Record<
				string,
				any
			>;

		// restart intake: its start-up sweep enqueues the queued job
		await intake?.stop("SIGKILL");
		intake = startProcess(intakeEnv);
		let killedAt = -1;
		await eventually(
			async () => {
				const j = await job();
				if (j.processed_rows > 0 && j.processed_rows < ROWS) {
					intake?.child.kill("SIGKILL");
					killedAt = j.processed_rows;
					return true;
				}
				if (j.status === "completed" || j.status === "failed")
					assert.fail(`job ended before the kill: ${JSON.stringify(j)}\n${intake?.output().slice(-3000)}`);
				return false;
			},
			{ what: "the job to be mid-file", ms: 90_000, every: 5 },
		);
		await new Promise((r) => intake?.child.once("exit", r));
		const atKill = await job();
		assert.equal(atKill.status, "processing");
		assert.ok(
			atKill.processed_rows < ROWS,
			`killed mid-file (checkpoint ${atKill.processed_rows}, seen ${killedAt})`,
		);

		intake = startProcess(intakeEnv);
		await eventually(
			async () => {
				const j = await job();
				if (j.status === "failed") assert.fail(`job failed: ${j.error}`);
				return j.status === "completed";
			},
			{
				what: `the job to complete after the restart\n${intake.output().slice(-2000)}`,
				ms: 120_000,
				every: 200,
			},
		);

		const j = await job();
		const orders = (
			await db.query<{ customer_order_no: string; n: string }>(
				`SELECT customer_order_no, count(*) AS n FROM intake.orders WHERE sender_id = $1 GROUP BY 1`,
				[sender],
			)
		).rows;
		const dup = orders.filter((o) => Number(o.n) !== 1);
		assert.deepEqual(dup, [], "no reference has two orders");
		const got = new Set(orders.map((o) => o.customer_order_no));
		const missing = [...expected].filter((r) => !got.has(r));
		const extra = [...got].filter((r) => !expected.has(r));
		assert.deepEqual([missing.slice(0, 5), extra.slice(0, 5)], [[], []]);
		assert.equal(got.size, expected.size);

		const outs = (
			await db.query<{ outcome: string; n: string; lo: number; hi: number }>(
				`SELECT outcome, count(*) AS n, min(row_no) AS lo, max(row_no) AS hi FROM intake.bulk_rows WHERE job_id = $1 GROUP BY 1`,
				[job_id],
			)
		).rows;
		const count = (k: string) => Number(outs.find((o) => o.outcome === k)?.n ?? 0);
		assert.equal(
			outs.reduce((s, o) => s + Number(o.n), 0),
			ROWS,
			`one outcome per row: ${JSON.stringify(outs)}`,
		);
		assert.equal(count("review"), 0, JSON.stringify(outs));
		assert.equal(count("created"), expected.size);
		assert.deepEqual(
			[j.total_rows, j.processed_rows, j.created, j.deduped, j.failed, j.in_review],
			[ROWS, ROWS, count("created"), count("deduped"), count("failed"), 0],
		);
		assert.equal(count("failed"), refs.filter((_, i) => (i + 1) % 97 === 0).length);
	});
});
