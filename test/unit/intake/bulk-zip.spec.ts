/**
 * Unit: XLSX zip bombs and crafted archives (issue 10 "Hardening";
 * docs/decisions/0041-bulk-parsing.md). The archives are built here with jszip (no binary fixture) and
 * patched byte by byte where a test needs headers that lie. `inspectXlsx` (upload, no inflating) and
 * `verifyXlsx` (worker, every entry inflated and counted) of lib/intake/bulk/xlsx.ts; `checkBytes` of
 * lib/intake/bulk/api.ts (the upload's 400s).
 */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import ExcelJS from "exceljs";
import JSZip from "jszip";
import { XLSX_LIMITS } from "../../../lib/contracts/http/intake-bulk-input";
import { checkBytes, templateXlsx } from "../../../lib/intake/bulk/api";
import {
	BulkFileError,
	type BulkFileErrorKind,
	inspectXlsx,
	readXlsx,
	verifyXlsx,
} from "../../../lib/intake/bulk/xlsx";

const MB = 1024 * 1024;
const SHEET = "xl/worksheets/sheet1.xml";

/** The parts of a minimal workbook, then `extra`, in that order (jszip: sizes in the local headers). */
async function workbookZip(
	extra: Record<string, Buffer | string> = {},
	opts: { compression?: "DEFLATE" | "STORE"; level?: number } = {},
): Promise<Buffer> {
	const zip = new JSZip();
	zip.file("[Content_Types].xml", '<?xml version="1.0"?><Types/>');
	zip.file("xl/workbook.xml", '<?xml version="1.0"?><workbook><sheets/></workbook>', {
		createFolders: false,
	});
	for (const [name, data] of Object.entries(extra)) zip.file(name, data, { createFolders: false });
	return zip.generateAsync({
		type: "nodebuffer",
		compression: opts.compression ?? "DEFLATE",
		compressionOptions: { level: opts.level ?? 6 },
	});
}

/** Byte offsets of the fields a test patches, in a local header and in a central directory record. */
const LOCAL = { flags: 6, method: 8, csize: 18, usize: 22, name: 30 } as const;
const CENTRAL = { flags: 8, method: 10, csize: 20, usize: 24, name: 46 } as const;
type Field = keyof typeof LOCAL;

/** End of central directory record: its offset, the entry count and the directory's offset. */
function eocdOf(buf: Buffer): { at: number; count: number; cd: number } {
	const at = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
	return { at, count: buf.readUInt16LE(at + 10), cd: buf.readUInt32LE(at + 16) };
}

/** Offsets of entry `name`'s local header and central directory record (and that record's length). */
function recordsOf(buf: Buffer, name: string): { local: number; central: number; centralLength: number } {
	const { count, cd } = eocdOf(buf);
	let p = cd;
	for (let i = 0; i < count; i++) {
		const n = buf.readUInt16LE(p + 28);
		const len = 46 + n + buf.readUInt16LE(p + 30) + buf.readUInt16LE(p + 32);
		if (buf.toString("latin1", p + 46, p + 46 + n) === name)
			return { local: buf.readUInt32LE(p + 42), central: p, centralLength: len };
		p += len;
	}
	throw new Error(`no entry ${name}`);
}

/** A copy of `buf` with `field` of entry `name` set to `value` in its local header and/or central record. */
function patched(
	buf: Buffer,
	name: string,
	field: Field,
	value: number | string,
	where: "both" | "local" | "central" = "both",
): Buffer {
	const out = Buffer.from(buf);
	const r = recordsOf(out, name);
	const at: number[] = [];
	if (where !== "central") at.push(r.local + LOCAL[field]);
	if (where !== "local") at.push(r.central + CENTRAL[field]);
	for (const a of at) {
		if (typeof value === "string") {
			assert.equal(value.length, name.length, "a patched name keeps its length");
			out.write(value, a, "latin1");
		} else if (field === "flags" || field === "method") out.writeUInt16LE(value, a);
		else out.writeUInt32LE(value, a);
	}
	return out;
}

/** A copy of `buf` whose central directory no longer lists `name` (its local entry stays in the file). */
function unlisted(buf: Buffer, name: string): Buffer {
	const r = recordsOf(buf, name);
	const out = Buffer.concat([buf.subarray(0, r.central), buf.subarray(r.central + r.centralLength)]);
	const e = eocdOf(out);
	out.writeUInt16LE(e.count - 1, e.at + 8);
	out.writeUInt16LE(e.count - 1, e.at + 10);
	out.writeUInt32LE(out.readUInt32LE(e.at + 12) - r.centralLength, e.at + 12);
	return out;
}

/** Asserts a BulkFileError of `kind` whose message matches `re` (for assert.rejects). */
const fileError =
	(kind: BulkFileErrorKind, re: RegExp) =>
	(e: unknown): boolean => {
		assert.ok(e instanceof BulkFileError, String(e));
		assert.equal(e.kind, kind, e.message);
		assert.match(e.message, re);
		return true;
	};

/** Runs `f`, sampling the process RSS every 5 ms: elapsed ms, peak RSS growth in MB, what `f` threw. */
async function measured(
	f: () => Promise<unknown>,
): Promise<{ ms: number; rssGrowthMb: number; error: unknown }> {
	const base = process.memoryUsage().rss;
	let peak = base;
	const timer = setInterval(() => {
		peak = Math.max(peak, process.memoryUsage().rss);
	}, 5);
	const t = Date.now();
	let error: unknown = null;
	try {
		await f();
	} catch (e) {
		error = e;
	} finally {
		clearInterval(timer);
	}
	peak = Math.max(peak, process.memoryUsage().rss);
	return { ms: Date.now() - t, rssGrowthMb: (peak - base) / MB, error };
}

/** Reads every row of `readXlsx` (the worker's reader). */
async function readAll(buf: Buffer): Promise<number> {
	let n = 0;
	for await (const _ of readXlsx(buf)) n++;
	return n;
}

describe("XLSX zip bombs and crafted archives (issue 10)", function () {
	this.timeout(20_000);
	/** 256 MB of zeros in the first sheet, deflated (ratio about 230). */
	let ratioBomb: Buffer;
	let plain: Buffer;

	before(async () => {
		ratioBomb = await workbookZip({ [SHEET]: Buffer.alloc(256 * MB) }, { level: 1 });
		plain = await workbookZip({
			[SHEET]: "<worksheet><sheetData/></worksheet>",
			"xl/styles.xml": "<styleSheet/>",
		});
	});

	describe("bounds", () => {
		it("(a) a high-ratio entry (256 MB of zeros) is refused from the central directory in milliseconds", async () => {
			assert.ok(ratioBomb.length < 2 * MB, `bomb of ${ratioBomb.length} bytes`);
			for (const check of [inspectXlsx, verifyXlsx, readAll]) {
				const m = await measured(() => check(ratioBomb));
				fileError(
					"refused",
					/possible zip bomb\): entry xl\/worksheets\/sheet1\.xml has compression ratio \d+ \(at most 200\)/,
				)(m.error);
				assert.ok(m.ms < 500, `${check.name}: ${m.ms} ms`);
				assert.ok(m.rssGrowthMb < 50, `${check.name}: RSS +${m.rssGrowthMb} MB`);
			}
			// the same archive under a larger ratio bound still passes the per-entry size bound
			await assert.rejects(
				inspectXlsx(ratioBomb, { ...XLSX_LIMITS, maxRatio: 10_000, maxEntryUncompressed: 100 * MB }),
				fileError(
					"refused",
					/entry xl\/worksheets\/sheet1\.xml expands to 268435456 bytes \(at most 104857600\)/,
				),
			);
		});

		it("(b) 1001 entries are refused (default limits); 1000 are not", async () => {
			const entries = (n: number) =>
				Object.fromEntries(Array.from({ length: n }, (_, i) => [`xl/media/p${i}.xml`, "<p/>"]));
			const over = await workbookZip(entries(999)); // + [Content_Types].xml + xl/workbook.xml
			await assert.rejects(inspectXlsx(over), fileError("refused", /1001 zip entries \(at most 1000\)/));
			await inspectXlsx(await workbookZip(entries(998)));
		});

		it("(c) a shared-strings table above the bound is refused (small limits and the default 64 MiB)", async () => {
			const limits = { ...XLSX_LIMITS, maxSharedStrings: 64 * 1024 };
			const table = (bytes: number) => Buffer.alloc(bytes, "<si><t>Bengaluru</t></si>");
			const small = await workbookZip({ "xl/sharedStrings.xml": table(60 * 1024) });
			await inspectXlsx(small, limits);
			await verifyXlsx(small, limits);
			const big = await workbookZip({ "xl/sharedStrings.xml": table(100 * 1024) });
			await assert.rejects(
				inspectXlsx(big, limits),
				fileError("refused", /shared strings table of 102400 bytes \(at most 65536\)/),
			);
			// default limits: 65 MB stored (ratio 1, so only the shared-strings bound applies)
			const huge = await workbookZip({ "xl/sharedStrings.xml": table(65 * MB) }, { compression: "STORE" });
			await assert.rejects(
				inspectXlsx(huge),
				fileError("refused", /shared strings table of 68157440 bytes \(at most 67108864\)/),
			);
		});

		it("(c) the total bound counts every entry", async () => {
			const limits = { ...XLSX_LIMITS, maxTotalUncompressed: 150 * 1024 };
			const part = Buffer.alloc(60 * 1024, "<row/>");
			await inspectXlsx(await workbookZip({ "xl/a.xml": part, "xl/b.xml": part }), limits);
			await assert.rejects(
				inspectXlsx(await workbookZip({ "xl/a.xml": part, "xl/b.xml": part, "xl/c.xml": part }), limits),
				fileError("refused", /archive expands to more than 153600 bytes/),
			);
		});
	});

	describe("sizes that lie", () => {
		it("(d) declared sizes patched small in both headers: the central directory passes, the inflating refuses within seconds and bounded memory", async () => {
			const r = recordsOf(ratioBomb, SHEET);
			assert.equal(ratioBomb.readUInt16LE(r.local + LOCAL.flags) & 0x8, 0, "sizes are in the local header");
			const lying = patched(ratioBomb, SHEET, "usize", 1000);
			await inspectXlsx(lying); // nothing declared is large: the central directory alone is fooled
			for (const check of [verifyXlsx, readAll]) {
				const m = await measured(() => check(lying));
				fileError(
					"refused",
					/entry xl\/worksheets\/sheet1\.xml does not inflate to its declared 1000 bytes/,
				)(m.error);
				assert.ok(m.ms < 3000, `${check.name}: ${m.ms} ms`);
				assert.ok(m.rssGrowthMb < 100, `${check.name}: RSS +${m.rssGrowthMb} MB`);
			}
		});

		it("(d) a declared size above the real one is refused too", async () => {
			const data = Buffer.alloc(200 * 1024, "<c>1</c>");
			const zip = await workbookZip({ [SHEET]: data });
			await verifyXlsx(zip);
			const lying = patched(zip, SHEET, "usize", data.length + 1);
			await assert.rejects(
				verifyXlsx(lying),
				fileError("refused", /does not inflate to its declared 204801 bytes/),
			);
		});

		it("a compressed size patched in both headers leaves bytes the central directory does not list", async () => {
			const { local } = recordsOf(plain, SHEET);
			const csize = plain.readUInt32LE(local + LOCAL.csize);
			await assert.rejects(
				inspectXlsx(patched(plain, SHEET, "csize", csize - 4)),
				fileError("refused", /inconsistent zip structure/),
			);
		});
	});

	describe("local headers against the central directory", () => {
		it("refuses a local header whose size, method or name differs from the central directory", async () => {
			await inspectXlsx(plain);
			await assert.rejects(
				inspectXlsx(patched(plain, SHEET, "usize", 5, "local")),
				fileError(
					"refused",
					/inconsistent zip structure\): entry xl\/worksheets\/sheet1\.xml: local header sizes/,
				),
			);
			await assert.rejects(
				inspectXlsx(patched(plain, SHEET, "method", 0, "local")),
				fileError("refused", /local header compression method 0/),
			);
			await assert.rejects(
				inspectXlsx(patched(plain, "xl/styles.xml", "name", "xl/styles.xmz", "local")),
				fileError("refused", /local header of entry xl\/styles\.xml names another file/),
			);
		});

		it("refuses an entry hidden from the central directory (in the middle or at the end)", async () => {
			await assert.rejects(
				inspectXlsx(unlisted(plain, SHEET)),
				fileError("refused", /entry xl\/styles\.xml starts at byte \d+, the previous entry ends at \d+/),
			);
			await assert.rejects(
				inspectXlsx(unlisted(plain, "xl/styles.xml")),
				fileError("refused", /data after the last entry/),
			);
		});

		it("accepts data descriptors (exceljs's streaming writer) and refuses a descriptor signature inside an entry's data", async () => {
			const out = new PassThrough();
			const chunks: Buffer[] = [];
			out.on("data", (c: Buffer) => chunks.push(c));
			const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useSharedStrings: true });
			const ws = wb.addWorksheet("orders");
			for (let i = 0; i < 200; i++) ws.addRow([`A-${i}`, "Asha", 560038 + i]).commit();
			ws.commit();
			await wb.commit();
			const streamed = Buffer.concat(chunks);
			const { local } = recordsOf(streamed, SHEET);
			assert.equal(streamed.readUInt16LE(local + LOCAL.flags) & 0x8, 0x8, "sizes in a data descriptor");
			assert.equal(streamed.readUInt32LE(local + LOCAL.csize), 0);
			await inspectXlsx(streamed);
			await verifyXlsx(streamed);
			assert.equal(await readAll(streamed), 200);
			const planted = Buffer.from(streamed);
			const dataStart = local + 30 + streamed.readUInt16LE(local + 26) + streamed.readUInt16LE(local + 28);
			planted.write("PK\x07\x08", dataStart + 2, "latin1");
			await assert.rejects(
				inspectXlsx(planted),
				fileError("not_a_workbook", /data descriptor not where expected/),
			);
			const lying = Buffer.from(streamed);
			const d = lying.indexOf("PK\x07\x08", dataStart, "latin1");
			lying.writeUInt32LE(lying.readUInt32LE(d + 12) + 1, d + 12);
			await assert.rejects(
				inspectXlsx(lying),
				fileError("refused", /data descriptor differs from the central directory/),
			);
		});
	});

	describe("not a workbook", () => {
		it("refuses duplicate names, `..` paths, encrypted entries and methods other than stored/deflate", async () => {
			const two = await workbookZip({ "xl/a.xml": "<a/>", "xl/b.xml": "<b/>" });
			await inspectXlsx(two);
			await assert.rejects(
				inspectXlsx(patched(two, "xl/b.xml", "name", "xl/A.xml")),
				fileError("not_a_workbook", /duplicate zip entry xl\/A\.xml/),
			);
			await assert.rejects(
				inspectXlsx(patched(two, "xl/b.xml", "name", "../b.xml")),
				fileError("not_a_workbook", /invalid relative path/),
			);
			await assert.rejects(
				inspectXlsx(patched(two, "xl/b.xml", "name", "/x/b.xml")),
				fileError("not_a_workbook", /absolute path/),
			);
			await assert.rejects(
				inspectXlsx(patched(two, "xl/b.xml", "flags", 0x1)),
				fileError("not_a_workbook", /entry xl\/b\.xml is encrypted/),
			);
			await assert.rejects(
				inspectXlsx(patched(two, "xl/b.xml", "method", 12)),
				fileError("not_a_workbook", /compression method 12/),
			);
		});

		it("refuses a zip without xl/workbook.xml and bytes that are not a zip", async () => {
			const zip = new JSZip();
			zip.file("[Content_Types].xml", "<Types/>");
			zip.file("word/document.xml", "<w:document/>");
			const docx = await zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE" });
			await assert.rejects(inspectXlsx(docx), fileError("not_a_workbook", /no xl\/workbook\.xml/));
			await assert.rejects(inspectXlsx(Buffer.from("a,b\n1,2\n")), fileError("not_a_workbook", /not a zip/));
		});
	});

	describe("(e) upload checks (checkBytes: 400 before anything is stored)", () => {
		const answer = async (p: Promise<void>): Promise<{ status: number; error: string; message: string }> => {
			try {
				await p;
			} catch (e) {
				const err = e as { code: number; data: { body: { error: string; message: string } } };
				return { status: err.code, error: err.data.body.error, message: err.data.body.message };
			}
			return { status: 200, error: "", message: "" };
		};
		const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489", "hex");

		it("a .xlsx whose bytes are CSV, PNG or a zip without a workbook is 400 file_content_mismatch", async () => {
			for (const bytes of [Buffer.from("customer_order_no\nA-1\n"), PNG]) {
				const a = await answer(checkBytes("xlsx", bytes));
				assert.deepEqual([a.status, a.error], [400, "file_content_mismatch"]);
			}
			const zip = new JSZip();
			zip.file("[Content_Types].xml", "<Types/>");
			zip.file("word/document.xml", "<w:document/>");
			const docx = await zip.generateAsync({ type: "nodebuffer" });
			const a = await answer(checkBytes("xlsx", docx));
			assert.deepEqual([a.status, a.error], [400, "file_content_mismatch"]);
			assert.match(a.message, /no xl\/workbook\.xml/);
			const csvPng = await answer(checkBytes("csv", PNG));
			assert.deepEqual([csvPng.status, csvPng.error], [400, "file_content_mismatch"]);
		});

		it("an XLSX bomb is 400 file_refused naming the bound, in milliseconds; a real workbook passes", async () => {
			const t = Date.now();
			const a = await answer(checkBytes("xlsx", ratioBomb));
			assert.ok(Date.now() - t < 500);
			assert.deepEqual([a.status, a.error], [400, "file_refused"]);
			assert.match(a.message, /compression ratio \d+ \(at most 200\)/);
			const lying = await answer(checkBytes("xlsx", patched(plain, SHEET, "usize", 5, "local")));
			assert.deepEqual([lying.status, lying.error], [400, "file_refused"]);
			assert.equal((await answer(checkBytes("xlsx", await templateXlsx()))).status, 200);
		});
	});
});
