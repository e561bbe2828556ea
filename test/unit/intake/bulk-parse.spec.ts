/** Unit: bulk file columns, CSV/XLSX reading, row validation, formula neutralisation (issue 10; zip bombs: bulk-zip.spec.ts). */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import ExcelJS from "exceljs";
import { TEMPLATE_COLUMNS } from "../../../lib/contracts/http/intake-bulk-input";
import { HeaderError, mapHeader, TEMPLATE_EXAMPLE } from "../../../lib/intake/bulk/columns";
import { countCsvRecords, readCsv } from "../../../lib/intake/bulk/csv";
import { parseRow, pincodeMismatch } from "../../../lib/intake/bulk/rows";
import { inspectXlsx, RowTagCounter, readXlsx } from "../../../lib/intake/bulk/xlsx";
import type { OrderInput } from "../../../lib/intake/validation";
import { neutralise } from "../../../lib/shared/csv-cell";

async function all<T>(g: AsyncGenerator<T>): Promise<T[]> {
	const out: T[] = [];
	for await (const x of g) out.push(x);
	return out;
}

describe("bulk parsing", () => {
	it("maps header variants and store-export names", () => {
		const m = mapHeader([
			" Order ID",
			"Customer Name",
			"address-line-1",
			"Zip",
			"Phone",
			"Product",
			"Weight (kg)",
			"Order Total",
			"Payment Mode",
		]);
		assert.deepEqual(m.columns, [
			"customer_order_no",
			"receiver_name",
			"receiver_address_1",
			"receiver_pincode",
			"receiver_mobile_no",
			"product_name",
			"physical_weight",
			"declared_order_total",
			"order_type",
		]);
	});
	it("reports unknown and missing required columns", () => {
		assert.throws(
			() => mapHeader(["customer_order_no", "colour"]),
			(e: unknown) => {
				assert.ok(e instanceof HeaderError);
				assert.match(e.message, /unknown column\(s\): "colour"/);
				assert.match(e.message, /missing required column\(s\): receiver_name/);
				return true;
			},
		);
	});
	it("a column named like a property of every object (Constructor, toString, __proto__) is unknown, not mapped", () => {
		for (const name of ["constructor", "Constructor", "toString", "__proto__", "hasOwnProperty"]) {
			assert.throws(
				() => mapHeader([...TEMPLATE_COLUMNS, name]),
				(e: unknown) =>
					e instanceof HeaderError && e.message.endsWith(`unknown column(s): ${JSON.stringify(name)}`),
				name,
			);
		}
	});
	it("pincodeMismatch: a city or state named like a property of every object is compared as text", () => {
		const info = { found: true, city: "Bangalore", state: "Karnataka", district: "Bengaluru", metro: null };
		const row = (city: string, state: string) =>
			({ receiver: { city, state, pincode: "560001" } }) as OrderInput;
		assert.equal(
			pincodeMismatch(row("Constructor", "Karnataka"), info),
			'pincode_mismatch: pincode 560001 city "Constructor" (directory: Bangalore)',
		);
		assert.match(String(pincodeMismatch(row("Bengaluru", "constructor"), info)), /state "constructor"/);
		assert.equal(pincodeMismatch(row("Bengaluru", "Karnataka"), info), null);
	});
	it("reads CSV with BOM, quotes, embedded newlines and CRLF", async () => {
		const csv = Buffer.from('\uFEFFa,b\r\n"x, y","multi\r\nline"\r\n\r\n"q""uote",2\r\n');
		const rows = await all(readCsv(csv));
		assert.deepEqual(
			rows.map((r) => r.cells),
			[
				["a", "b"],
				["x, y", "multi\r\nline"],
				['q"uote', "2"],
			],
		);
		assert.equal(countCsvRecords(csv), 3);
	});
	it("maps validator failures to row/column/field/message and COD above value to review", () => {
		const cells = { ...TEMPLATE_EXAMPLE, receiver_pincode: "0123", physical_weight: "abc" };
		const r = parseRow(cells, 7);
		assert.equal(r.kind, "failed");
		if (r.kind !== "failed") return;
		const cols = r.errors.map((e) => e.column).sort();
		assert.deepEqual(cols, ["physical_weight", "receiver_pincode"]);
		assert.equal(r.errors.find((e) => e.column === "receiver_pincode")?.field, "receiver.pincode");
		assert.equal(parseRow({ ...TEMPLATE_EXAMPLE, cod_amount: "5000" }, 7).kind, "cod_above");
		assert.equal(parseRow({ ...TEMPLATE_EXAMPLE }, 7).kind, "valid");
	});
	it("neutralises formula-looking values", () => {
		assert.equal(neutralise('=HYPERLINK("x")'), '\'=HYPERLINK("x")');
		assert.equal(neutralise("@SUM(A1)"), "'@SUM(A1)");
		assert.equal(neutralise("\tcmd"), "'\tcmd");
		assert.equal(neutralise("-12.5"), "-12.5");
		assert.equal(neutralise("Asha"), "Asha");
	});
	it("reads the first sheet of an XLSX, formulas as text", async () => {
		const wb = new ExcelJS.Workbook();
		const ws = wb.addWorksheet("Orders");
		ws.addRow([...TEMPLATE_COLUMNS]);
		ws.addRow(TEMPLATE_COLUMNS.map((c) => (c === "receiver_pincode" ? 560038 : TEMPLATE_EXAMPLE[c])));
		ws.getCell("B2").value = { formula: "1+1", result: 2 };
		wb.addWorksheet("Other").addRow(["ignored"]);
		const buf = Buffer.from(await wb.xlsx.writeBuffer());
		await inspectXlsx(buf);
		const rows = await all(readXlsx(buf));
		assert.equal(rows.length, 2);
		assert.equal(rows[1].cells[8], "560038");
		assert.equal(rows[1].cells[1], "=1+1");
	});

	it("RowTagCounter counts <row> start tags (any prefix) once, however the XML is split; not </row>, <rowBreaks> or text", () => {
		const xml = Buffer.from(
			'<worksheet><sheetData><row r="1"><c t="inlineStr"><is><t>row &lt;row x</t></is></c></row>' +
				'<row>\n</row><row r="3"/><x:row r="4"></x:row><ns-1.a:row\tr="5"/><rowBreaks/><rows/></sheetData></worksheet>',
		);
		const whole = new RowTagCounter();
		whole.push(xml);
		assert.equal(whole.count, 5);
		for (let cut = 1; cut < xml.length; cut++) {
			const c = new RowTagCounter();
			c.push(xml.subarray(0, cut));
			c.push(xml.subarray(cut));
			assert.equal(c.count, 5, `split at ${cut}`);
		}
		const bytes = new RowTagCounter();
		for (let i = 0; i < xml.length; i++) bytes.push(xml.subarray(i, i + 1));
		assert.equal(bytes.count, 5, "one byte at a time");
	});

	it("readXlsx estimates the data rows from the first sheet's row tags before the first row (both exceljs writers)", async () => {
		const data = (i: number) =>
			TEMPLATE_COLUMNS.map((c) => (c === "customer_order_no" ? `E-${i}` : TEMPLATE_EXAMPLE[c]));
		const wb = new ExcelJS.Workbook();
		const ws = wb.addWorksheet("Orders");
		ws.addRow([...TEMPLATE_COLUMNS]);
		for (let i = 1; i <= 40; i++) ws.addRow(data(i));
		ws.addRow(TEMPLATE_COLUMNS.map(() => "")); // a blank row: counted by the estimate, skipped by the reader
		wb.addWorksheet("Notes").addRow(["not", "counted"]);
		const chunks: Buffer[] = [];
		const sink = new PassThrough().on("data", (c: Buffer) => chunks.push(c));
		const sw = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: sink, useSharedStrings: true });
		const ss = sw.addWorksheet("Orders");
		ss.addRow([...TEMPLATE_COLUMNS]).commit();
		for (let i = 1; i <= 1200; i++) ss.addRow(data(i)).commit();
		ss.commit();
		await sw.commit();
		for (const [buf, estimate, read] of [
			[Buffer.from(await wb.xlsx.writeBuffer()), 41, 41],
			[Buffer.concat(chunks), 1200, 1201],
		] as const) {
			const seen: Array<number | string> = [];
			let n = 0;
			for await (const _ of readXlsx(buf, undefined, (e) => seen.push(e))) {
				if (n++ === 0) seen.push("first row");
			}
			assert.deepEqual(seen, [estimate, "first row"]);
			assert.equal(n, read);
		}
	});
});
