/**
 * XLSX reading of bulk order files (issue 10; STACK-NOTES "Spreadsheets":
 * exceljs streaming WorkbookReader, never the `xlsx` package).
 *
 * Before parsing, {@link inspectXlsx} reads the zip's central directory
 * (yauzl, no entry inflated) and refuses zip bombs: more than
 * {@link XLSX_LIMITS}.maxEntries entries, a total or per-entry uncompressed size
 * above the bounds, an entry whose compression ratio is above
 * `maxRatio` (only for entries above 1 MB uncompressed: tiny XML files
 * compress well legitimately), a shared-strings table above
 * `maxSharedStrings` bytes (exceljs keeps that table in memory). A bomb is
 * refused in milliseconds, reading a few KB.
 *
 * Then only the first worksheet is read, row by row. Cell values become
 * strings: numbers as JS prints them, dates as `YYYY-MM-DD` (midnight) or ISO,
 * rich text joined, hyperlinks their text; a formula cell becomes its formula
 * text with a leading `=` (stored as text, never evaluated, its cached result
 * ignored).
 */
import ExcelJS from "exceljs";
import yauzl from "yauzl";
import { bufferStream, type SourceRow } from "./csv";

/** Bounds of an XLSX container (see {@link inspectXlsx}). */
export const XLSX_LIMITS = {
	maxEntries: 1000,
	/** bytes, whole archive uncompressed */
	maxTotalUncompressed: 1024 * 1024 * 1024,
	/** bytes, any one entry */
	maxEntryUncompressed: 512 * 1024 * 1024,
	/** uncompressed / compressed of one entry (entries above 1 MB) */
	maxRatio: 200,
	/** bytes, xl/sharedStrings.xml uncompressed */
	maxSharedStrings: 64 * 1024 * 1024,
};

/** A file refused before or while reading (the job fails with this message). */
export class BulkFileError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "BulkFileError";
	}
}

/** Zip local-file-header magic (`PK\x03\x04`). */
export function looksLikeZip(buf: Buffer): boolean {
	return buf.length >= 4 && buf[0] === 0x50 && buf[1] === 0x4b && buf[2] === 0x03 && buf[3] === 0x04;
}

/**
 * Checks the zip's central directory against {@link XLSX_LIMITS} and that it
 * holds a workbook (`xl/workbook.xml`).
 * @throws BulkFileError naming the bound passed
 */
export async function inspectXlsx(buf: Buffer, limits = XLSX_LIMITS): Promise<void> {
	if (!looksLikeZip(buf)) throw new BulkFileError("file is not an XLSX workbook (not a zip archive)");
	const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
		yauzl.fromBuffer(buf, { lazyEntries: true, validateEntrySizes: true }, (err, z) =>
			err || !z
				? reject(new BulkFileError(`file is not a readable XLSX workbook: ${err?.message}`))
				: resolve(z),
		),
	);
	try {
		if (zip.entryCount > limits.maxEntries)
			throw new BulkFileError(`XLSX refused: ${zip.entryCount} zip entries (at most ${limits.maxEntries})`);
		let total = 0;
		let workbook = false;
		await new Promise<void>((resolve, reject) => {
			zip.on("error", (e: Error) =>
				reject(new BulkFileError(`file is not a readable XLSX workbook: ${e.message}`)),
			);
			zip.on("end", () => resolve());
			zip.on("entry", (e: yauzl.Entry) => {
				const name = e.fileName;
				const size = e.uncompressedSize;
				total += size;
				if (name === "xl/workbook.xml") workbook = true;
				let why: string | null = null;
				if (size > limits.maxEntryUncompressed)
					why = `entry ${name} expands to ${size} bytes (at most ${limits.maxEntryUncompressed})`;
				else if (total > limits.maxTotalUncompressed)
					why = `archive expands to more than ${limits.maxTotalUncompressed} bytes`;
				else if (size > 1024 * 1024 && size / Math.max(1, e.compressedSize) > limits.maxRatio)
					why = `entry ${name} has compression ratio ${Math.round(size / Math.max(1, e.compressedSize))} (at most ${limits.maxRatio})`;
				else if (/^xl\/sharedStrings\.xml$/i.test(name) && size > limits.maxSharedStrings)
					why = `shared strings table of ${size} bytes (at most ${limits.maxSharedStrings})`;
				if (why) {
					reject(new BulkFileError(`XLSX refused (possible zip bomb): ${why}`));
					return;
				}
				zip.readEntry();
			});
			zip.readEntry();
		});
		if (!workbook) throw new BulkFileError("file is not an XLSX workbook (no xl/workbook.xml)");
	} finally {
		zip.close();
	}
}

/** A cell value of exceljs as a string (see the module docs). */
export function cellText(v: ExcelJS.CellValue): string {
	if (v === null || v === undefined) return "";
	if (typeof v === "string") return v;
	if (typeof v === "number") return String(v);
	if (typeof v === "boolean") return v ? "TRUE" : "FALSE";
	if (v instanceof Date) {
		const iso = v.toISOString();
		return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso;
	}
	if (typeof v === "object") {
		if ("formula" in v && typeof v.formula === "string") return `=${v.formula}`;
		if ("sharedFormula" in v && typeof v.sharedFormula === "string") return `=${v.sharedFormula}`;
		if ("richText" in v && Array.isArray(v.richText)) return v.richText.map((t) => t.text).join("");
		if ("text" in v) return cellText(v.text as ExcelJS.CellValue);
		if ("error" in v) return String(v.error);
	}
	return String(v);
}

/**
 * Yields the rows of the first worksheet in order, the header row first
 * (rows without any value skipped). Run {@link inspectXlsx} first.
 */
export async function* readXlsx(buf: Buffer): AsyncGenerator<SourceRow> {
	const input = bufferStream(buf);
	const reader = new ExcelJS.stream.xlsx.WorkbookReader(input, {
		worksheets: "emit",
		sharedStrings: "cache",
		hyperlinks: "ignore",
		styles: "cache",
	});
	try {
		for await (const sheet of reader) {
			for await (const row of sheet) {
				const values = row.values as ExcelJS.CellValue[];
				const cells: string[] = [];
				let hasValue = false;
				for (let i = 1; i < values.length; i++) {
					const s = cellText(values[i]);
					if (s.trim() !== "") hasValue = true;
					cells.push(s);
				}
				if (hasValue) yield { cells };
			}
			return; // first sheet only
		}
	} catch (e) {
		throw new BulkFileError(`XLSX could not be read: ${(e as Error).message}`);
	} finally {
		input.destroy();
	}
}
