/**
 * Unit: bulk job processing (issue 10; lib/intake/bulk/process.ts) on a broker
 * with the real intake service, real PostgreSQL, and fakes of `warehouses`
 * (test/unit/intake/setup.ts) and `pincode.lookupMany`. Jobs and files are
 * inserted directly into the 0005 tables and `intake.processBulkJob` is called.
 */
import assert from "node:assert/strict";
import ExcelJS from "exceljs";
import type { Context } from "moleculer";
import type { PincodeInfo } from "../../../lib/contracts";
import { type BulkColumn, TEMPLATE_COLUMNS } from "../../../lib/contracts/http/intake-bulk-input";
import { TEMPLATE_EXAMPLE } from "../../../lib/intake/bulk/columns";
import { exec, getSequelize, select } from "../../../lib/platform/db";
import { as, newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { freshRef } from "../../helpers/fixtures";
import { broker, create, reverseBody, rowsFor, useIntake, warehouseOf } from "./setup";

/** Directory of the fake `pincode.lookupMany`. */
const DIRECTORY: Record<string, Omit<PincodeInfo, "pincode">> = {
	"560038": {
		found: true,
		city: "Bengaluru Urban",
		state: "Karnataka",
		district: "Bengaluru Urban",
		metro: "Bengaluru",
	},
	"110001": { found: true, city: "New Delhi", state: "Delhi", district: "New Delhi", metro: "Delhi" },
};
const lookupCalls: string[][] = [];
/** When set, `pincode.lookupMany` call number `failLookupAt` (1-based, counted in lookupCalls) fails. */
let failLookupAt: number | null = null;
/** When set, awaited by `pincode.lookupMany` before it answers (a look at the job mid-run), then cleared. */
let beforeLookup: (() => Promise<void>) | null = null;

type Row = Partial<Record<BulkColumn, string>>;

/** A CSV (template header) of `rows` (each merged over the example row). */
function csvOf(rows: Row[], columns: readonly string[] = TEMPLATE_COLUMNS): Buffer {
	const q = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
	const lines = [columns.join(",")];
	for (const r of rows)
		lines.push(
			columns.map((c) => q(({ ...TEMPLATE_EXAMPLE, ...r } as Row)[c as BulkColumn] ?? "")).join(","),
		);
	return Buffer.from(`${lines.join("\r\n")}\r\n`);
}

/** A workbook whose first sheet "Orders" holds the template's header row. */
function ordersWorkbook(): { wb: ExcelJS.Workbook; ws: ExcelJS.Worksheet } {
	const wb = new ExcelJS.Workbook();
	const ws = wb.addWorksheet("Orders");
	ws.addRow([...TEMPLATE_COLUMNS]);
	return { wb, ws };
}

/** `n` valid rows with distinct references. */
function validRows(n: number, prefix = freshRef("BLK")): Row[] {
	return Array.from({ length: n }, (_, i) => ({ customer_order_no: `${prefix}-${i + 1}` }));
}

/** Inserts a queued job and its file; returns the job id. */
async function insertJob(
	sender: number,
	pickup: number,
	bytes: Buffer,
	format: "csv" | "xlsx" = "csv",
): Promise<number> {
	const db = getSequelize();
	const [j] = await select<{ job_id: string }>(
		db,
		`INSERT INTO intake.bulk_jobs (sender_id, file_name, content_type, format, size_bytes, sender_address_id)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING job_id`,
		[
			sender,
			`orders.${format}`,
			format === "csv" ? "text/csv" : "application/octet-stream",
			format,
			bytes.length,
			pickup,
		],
	);
	await exec(db, `INSERT INTO intake.bulk_files (job_id, bytes) VALUES ($1, $2)`, [j.job_id, bytes]);
	return Number(j.job_id);
}

const run = (job_id: number) =>
	callAs(broker(), "intake.processBulkJob", { job_id }) as Promise<{ status: string; error?: string }>;

async function jobOf(job_id: number): Promise<Record<string, any>> {
	const [j] = await select<Record<string, any>>(
		getSequelize(),
		`SELECT * FROM intake.bulk_jobs WHERE job_id = $1`,
		[job_id],
	);
	return j;
}

async function outcomes(job_id: number): Promise<Array<Record<string, any>>> {
	return select(getSequelize(), `SELECT * FROM intake.bulk_rows WHERE job_id = $1 ORDER BY row_no`, [job_id]);
}

/** Sender + its warehouse. */
function merchant(): { sender: number; pickup: number } {
	const sender = newSender();
	return { sender, pickup: warehouseOf(sender) };
}

// Other spec files' uploads leave jobs queued in this run's database; intake re-enqueues unfinished jobs when it
// starts, so they are settled first: this file's worker must process (and count look-ups for) its own jobs only.
describe("bulk processing", () => {
	before(async () => {
		await exec(
			getSequelize(),
			`UPDATE intake.bulk_jobs SET status = 'failed', error = 'left unfinished by another spec file'
			 WHERE status IN ('queued', 'processing')`,
		).catch(() => undefined); // no table yet: this file runs first
	});

	describe("intake.processBulkJob", function () {
		this.timeout(60_000);
		useIntake();
		before(async () => {
			broker().createService({
				name: "pincode",
				actions: {
					lookupMany: {
						async handler(ctx: Context<{ pincodes: string[] }>): Promise<Record<string, PincodeInfo>> {
							lookupCalls.push(ctx.params.pincodes);
							const hook = beforeLookup;
							beforeLookup = null;
							await hook?.();
							if (failLookupAt === lookupCalls.length) throw new Error("pincode service down");
							const out: Record<string, PincodeInfo> = {};
							for (const p of ctx.params.pincodes)
								out[p] = DIRECTORY[p]
									? { pincode: p, ...DIRECTORY[p] }
									: { found: false, pincode: p, city: "", state: "" };
							return out;
						},
					},
				},
			});
			await broker().waitForServices(["pincode"], 10_000, 10);
		});

		it("creates one order per row, records counts and outcomes, and a second run of the same file creates nothing", async () => {
			const { sender, pickup } = merchant();
			const rows = validRows(1203);
			const bytes = csvOf(rows);
			const id = await insertJob(sender, pickup, bytes);
			lookupCalls.length = 0;
			assert.deepEqual(await run(id), { status: "completed" });
			const j = await jobOf(id);
			assert.equal(j.status, "completed");
			assert.deepEqual(
				[j.total_rows, j.processed_rows, j.created, j.deduped, j.failed, j.in_review],
				[1203, 1203, 1203, 0, 0, 0],
			);
			assert.ok(j.started_at && j.finished_at);
			assert.equal(lookupCalls.length, 3, "one pincode.lookupMany per batch of 500");
			const orders = await rowsFor(sender);
			assert.equal(orders.length, 1203);
			assert.deepEqual(
				orders.map((o) => o.customer_order_no).sort(),
				rows.map((r) => r.customer_order_no).sort(),
			);
			const o = orders[0];
			assert.equal(Number(o.pickup_address_id), pickup);
			assert.equal(Number(o.declared_order_total_paise), 129950);
			assert.equal(Number(o.cod_amount_paise), 129950);
			assert.equal(o.receiver_pincode, "560038");
			const outs = await outcomes(id);
			assert.equal(outs.length, 1203);
			assert.ok(outs.every((x) => x.outcome === "created" && x.order_id));
			assert.equal(new Set(outs.map((x) => String(x.order_id))).size, 1203);

			// the same file again: all deduped onto the same orders
			const id2 = await insertJob(sender, pickup, bytes);
			assert.deepEqual(await run(id2), { status: "completed" });
			const j2 = await jobOf(id2);
			assert.deepEqual([j2.created, j2.deduped, j2.failed, j2.in_review], [0, 1203, 0, 0]);
			assert.equal((await rowsFor(sender)).length, 1203);
			const outs2 = await outcomes(id2);
			assert.deepEqual(
				outs2.map((x) => String(x.order_id)),
				outs.map((x) => String(x.order_id)),
			);
			// a redelivery of a completed job is a no-op
			assert.deepEqual(await run(id), { status: "skipped" });
		});

		it("records each failure kind with row, column, field and message; a bad row does not stop later rows", async () => {
			const { sender, pickup } = merchant();
			const p = freshRef("F");
			const ret = `${p}-RET`;
			await create(sender, reverseBody(pickup, ret), "intake.createReverse");
			const rows: Row[] = [
				{ customer_order_no: `${p}-1` },
				{ customer_order_no: `${p}-2`, receiver_pincode: "0123" },
				{ customer_order_no: `${p}-3`, physical_weight: "abc" },
				{ customer_order_no: `${p}-4`, receiver_mobile_no: "12" },
				{ customer_order_no: `${p}-5`, receiver_name: "" },
				{ customer_order_no: `${p}-6`, order_type: "1", cod_amount: "" },
				{ customer_order_no: `${p}-7`, channel: "b2b" },
				{ customer_order_no: `${ret}-R` }, // a return is stored with its -R suffix
				{ customer_order_no: `${p}-9`, order_date: "not a date" },
				{ customer_order_no: `${p}-10` },
			];
			const id = await insertJob(sender, pickup, csvOf(rows));
			assert.deepEqual(await run(id), { status: "completed" });
			const j = await jobOf(id);
			const outs = await outcomes(id);
			const by = new Map(outs.map((x) => [x.row_no, x]));
			assert.equal(by.get(1)?.outcome, "created");
			assert.equal(by.get(10)?.outcome, "created", "the row after the bad rows is processed");
			const err = (row: number) => {
				const o = by.get(row);
				assert.equal(o?.outcome, "failed", `row ${row}: ${JSON.stringify(o)}`);
				assert.ok(Array.isArray(o?.errors) && o.errors.length, `row ${row} has errors`);
				return o.errors[0] as { column: string; field: string; message: string };
			};
			assert.deepEqual([err(2).column, err(2).field], ["receiver_pincode", "receiver.pincode"]);
			assert.deepEqual([err(3).column, err(3).field], ["physical_weight", "product.physical_weight"]);
			assert.deepEqual([err(4).column, err(4).field], ["receiver_mobile_no", "receiver.mobile_no"]);
			assert.deepEqual([err(5).column, err(5).field], ["receiver_name", "receiver.name"]);
			assert.deepEqual([err(6).column, err(6).field], ["cod_amount", "product.cod_amount"]);
			assert.equal(err(7).column, "channel");
			assert.deepEqual([err(8).column, err(8).field], ["customer_order_no", "customer_order_no"]);
			assert.match(err(8).message, /reference_in_use/);
			assert.deepEqual([err(9).column, err(9).field], ["order_date", "order.order_date"]);
			for (const r of [2, 3, 4, 5, 6, 7, 8, 9]) assert.ok(err(r).message.length > 3);
			assert.deepEqual([j.created, j.failed, j.deduped, j.in_review, j.processed_rows], [2, 8, 0, 0, 10]);
			// the failed rows keep their cells for the merchant to fix
			assert.equal(by.get(3)?.data.physical_weight, "abc");
			assert.equal((await rowsFor(sender)).filter((o) => Number(o.shipment_type) === 0).length, 2);
		});

		it("sends each review kind to review and creates nothing for them; same reference twice in one file dedupes", async () => {
			const { sender, pickup } = merchant();
			const p = freshRef("R");
			await create(sender, { ...bodyOfExample(pickup), customer_order_no: `${p}-OLD` });
			const rows: Row[] = [
				{ customer_order_no: `${p}-1`, receiver_city: "Mumbai" }, // pincode_mismatch (city)
				{ customer_order_no: `${p}-2`, receiver_state: "Kerala" }, // pincode_mismatch (state)
				{ customer_order_no: `${p}-3`, receiver_city: "Bangalore" }, // alternative spelling: fine
				{ customer_order_no: `${p}-4`, receiver_pincode: "999999", receiver_city: "Nowhere" }, // unknown pincode: not reviewed
				{ customer_order_no: `${p}-5`, cod_amount: "5000" }, // cod_above_order_value
				{ customer_order_no: `${p}-OLD`, receiver_name: "Someone Else" }, // reference_conflict vs existing order
				{ customer_order_no: `${p}-OLD` }, // same content as the existing order: deduped
				{ customer_order_no: `${p}-7` },
				{ customer_order_no: `${p}-7` }, // same reference, same content, same file: deduped
				{ customer_order_no: `${p}-7`, product_name: "Other" }, // same reference, different content: review
			];
			const id = await insertJob(sender, pickup, csvOf(rows));
			assert.deepEqual(await run(id), { status: "completed" });
			const by = new Map((await outcomes(id)).map((x) => [x.row_no, x]));
			const reason = (r: number) => {
				assert.equal(by.get(r)?.outcome, "review", `row ${r}: ${JSON.stringify(by.get(r))}`);
				assert.equal(by.get(r)?.order_id, null);
				assert.ok(by.get(r)?.data?.customer_order_no, "review rows keep their cells");
				return String(by.get(r)?.review_reason);
			};
			assert.match(reason(1), /^pincode_mismatch: .*city "Mumbai"/);
			assert.match(reason(2), /^pincode_mismatch: .*state "Kerala"/);
			assert.equal(by.get(3)?.outcome, "created");
			assert.equal(by.get(4)?.outcome, "created");
			assert.match(reason(5), /^cod_above_order_value/);
			assert.match(reason(6), /^reference_conflict/);
			const old = (await rowsFor(sender)).find((o) => o.customer_order_no === `${p}-OLD`);
			assert.equal(by.get(7)?.outcome, "deduped");
			assert.equal(String(by.get(7)?.order_id), String(old?.order_id));
			assert.equal(by.get(8)?.outcome, "created");
			assert.equal(by.get(9)?.outcome, "deduped");
			assert.equal(String(by.get(9)?.order_id), String(by.get(8)?.order_id));
			assert.match(reason(10), /^reference_conflict: .*row 8/);
			const j = await jobOf(id);
			assert.deepEqual([j.created, j.deduped, j.failed, j.in_review], [3, 2, 0, 5]);
			const refs = (await rowsFor(sender)).map((o) => o.customer_order_no).sort();
			assert.deepEqual(refs, [`${p}-3`, `${p}-4`, `${p}-7`, `${p}-OLD`].sort());
		});

		it("a failure in batch 2 leaves batch 1 committed and nothing after it; the retry completes, a reference of batch 1 repeated in batch 3 deduped", async () => {
			const { sender, pickup } = merchant();
			const rows = validRows(1203);
			// batch 1's reference again in batch 3: deduped, not a second order
			rows[1100] = { ...rows[3] };
			const id = await insertJob(sender, pickup, csvOf(rows));
			lookupCalls.length = 0;
			failLookupAt = 2; // batch 2's pincode lookup fails (an infrastructure error: the job throws, BullMQ retries)
			try {
				await assert.rejects(run(id), /pincode service down/);
			} finally {
				failLookupAt = null;
			}
			const j = await jobOf(id);
			assert.deepEqual([j.status, j.processed_rows, j.created], ["processing", 500, 500]);
			// nothing of the failed attempt is written after it answered
			await new Promise((r) => setTimeout(r, 300));
			assert.equal((await rowsFor(sender)).length, 500);
			assert.equal((await outcomes(id)).length, 500);

			assert.deepEqual(await run(id), { status: "completed" });
			const done = await jobOf(id);
			assert.deepEqual(
				[done.status, done.processed_rows, done.created, done.deduped],
				["completed", 1203, 1202, 1],
			);
			const outs = await outcomes(id);
			assert.deepEqual(
				outs.map((o) => o.row_no),
				Array.from({ length: 1203 }, (_, i) => i + 1),
			);
			const dup = outs.find((o) => o.row_no === 1101);
			assert.equal(dup?.outcome, "deduped");
			assert.equal(String(dup?.order_id), String(outs.find((o) => o.row_no === 4)?.order_id));
			assert.equal((await rowsFor(sender)).length, 1202);
		});

		it("resumes after the checkpoint: only rows > processed_rows are handled, no duplicates", async () => {
			const { sender, pickup } = merchant();
			const rows = validRows(40);
			const id = await insertJob(sender, pickup, csvOf(rows));
			// rows 1..25 were committed by an earlier attempt that died
			await exec(
				getSequelize(),
				`UPDATE intake.bulk_jobs SET status = 'processing', processed_rows = 25, created = 25 WHERE job_id = $1`,
				[id],
			);
			assert.deepEqual(await run(id), { status: "completed" });
			const orders = await rowsFor(sender);
			assert.deepEqual(
				orders.map((o) => o.customer_order_no).sort(),
				rows
					.slice(25)
					.map((r) => r.customer_order_no)
					.sort(),
			);
			const outs = await outcomes(id);
			assert.deepEqual(
				outs.map((o) => o.row_no),
				Array.from({ length: 15 }, (_, i) => 26 + i),
			);
			const j = await jobOf(id);
			assert.deepEqual([j.status, j.processed_rows, j.created, j.total_rows], ["completed", 40, 40, 40]);
		});

		it("processes an XLSX file end to end (numbers and formulas as text)", async () => {
			const { sender, pickup } = merchant();
			const p = freshRef("X");
			const { wb, ws } = ordersWorkbook();
			for (let i = 1; i <= 30; i++)
				ws.addRow(
					TEMPLATE_COLUMNS.map((c) =>
						c === "customer_order_no"
							? `${p}-${i}`
							: c === "receiver_pincode"
								? 560038
								: c === "physical_weight"
									? 0.45
									: c === "receiver_mobile_no"
										? 9876543210
										: TEMPLATE_EXAMPLE[c],
					),
				);
			ws.addRow(
				TEMPLATE_COLUMNS.map((c) =>
					c === "customer_order_no" ? `${p}-31` : c === "receiver_name" ? "=1+1" : TEMPLATE_EXAMPLE[c],
				),
			);
			wb.addWorksheet("Notes").addRow(["ignored"]);
			const id = await insertJob(sender, pickup, Buffer.from(await wb.xlsx.writeBuffer()), "xlsx");
			assert.deepEqual(await run(id), { status: "completed" });
			const j = await jobOf(id);
			assert.deepEqual(
				[j.total_rows, j.processed_rows, j.created, j.failed, j.in_review],
				[31, 31, 31, 0, 0],
			);
			const orders = await rowsFor(sender);
			assert.equal(orders.length, 31);
			assert.equal(orders[0].receiver_pincode, "560038");
			assert.equal(orders[0].receiver_mobile_no, "9876543210");
			assert.equal(orders.find((o) => o.customer_order_no === `${p}-31`)?.receiver_name, "=1+1");
		});

		it("an XLSX's total is estimated before its first batch (progress while processing) and exact at the end", async () => {
			const { sender, pickup } = merchant();
			const p = freshRef("XE");
			const { wb, ws } = ordersWorkbook();
			for (let i = 1; i <= 600; i++)
				ws.addRow(
					TEMPLATE_COLUMNS.map((c) => (c === "customer_order_no" ? `${p}-${i}` : TEMPLATE_EXAMPLE[c])),
				);
			ws.addRow(TEMPLATE_COLUMNS.map(() => "")); // blank: in the estimate, not in the exact total
			const id = await insertJob(sender, pickup, Buffer.from(await wb.xlsx.writeBuffer()), "xlsx");
			let midRun: Record<string, any> | undefined;
			let seenOverHttp: { progress: number; total: number | null } | undefined;
			beforeLookup = async () => {
				midRun = await jobOf(id);
				const api = (await callAs(broker(), "intake.bulkJob", { id: String(id) }, as(sender))) as {
					progress: number;
					counts: { total: number | null };
				};
				seenOverHttp = { progress: api.progress, total: api.counts.total };
			};
			assert.deepEqual(await run(id), { status: "completed" });
			assert.equal(midRun?.status, "processing");
			assert.equal(
				Number(midRun?.total_rows),
				601,
				"estimated before the first batch: 601 row tags less the header",
			);
			assert.deepEqual(seenOverHttp, { progress: 0, total: 601 });
			const j = await jobOf(id);
			assert.deepEqual([j.status, j.total_rows, j.processed_rows, j.created], ["completed", 600, 600, 600]);
		});

		it("fails the job with a clear error for a bad header, a binary CSV and a non-zip XLSX, creating nothing", async () => {
			const { sender, pickup } = merchant();
			const bad = await insertJob(sender, pickup, Buffer.from("customer_order_no,colour\nA,red\n"));
			const r = await run(bad);
			assert.equal(r.status, "failed");
			assert.match(String(r.error), /unknown column\(s\): "colour"/);
			const j = await jobOf(bad);
			assert.equal(j.status, "failed");
			assert.match(j.error, /missing required column/);
			const bin = await insertJob(sender, pickup, Buffer.from([0x41, 0, 0x42, 0x0a]));
			assert.equal((await run(bin)).status, "failed");
			const notZip = await insertJob(sender, pickup, Buffer.from("customer_order_no\nA\n"), "xlsx");
			assert.equal((await run(notZip)).status, "failed");
			assert.equal((await jobOf(notZip)).status, "failed");
			assert.equal((await rowsFor(sender)).length, 0);
		});
	});

	/** The §2.1 create body of the example row. */
	function bodyOfExample(pickup: number): Record<string, any> {
		const e = TEMPLATE_EXAMPLE;
		return {
			customer_order_no: e.customer_order_no,
			channel: e.channel,
			receiver: {
				name: e.receiver_name,
				address_1: e.receiver_address_1,
				address_2: e.receiver_address_2,
				landmark: e.receiver_landmark,
				city: e.receiver_city,
				state: e.receiver_state,
				pincode: e.receiver_pincode,
				mobile_no: e.receiver_mobile_no,
			},
			product: {
				product_name: e.product_name,
				product_sku: e.product_sku,
				physical_weight: Number(e.physical_weight),
				declared_order_total: Number(e.declared_order_total),
				cod_amount: Number(e.cod_amount),
				length: Number(e.length),
				width: Number(e.width),
				height: Number(e.height),
			},
			order: { pickup_address_id: pickup, order_type: 1, order_date: e.order_date },
		};
	}
});
