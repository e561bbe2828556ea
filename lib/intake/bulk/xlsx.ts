/**
 * XLSX reading of bulk order files (issue 10; STACK-NOTES "Spreadsheets":
 * exceljs streaming WorkbookReader, never the `xlsx` package).
 *
 * Zip bombs and smuggled entries are refused in two steps
 * (docs/decisions/0041-bulk-parsing.md):
 *
 * - {@link inspectXlsx} (at upload, and again in the worker): reads the zip's
 *   central directory with yauzl and walks the local file headers, inflating
 *   nothing (milliseconds, a few KB read). It refuses more than
 *   {@link XLSX_LIMITS}.maxEntries entries, a declared per-entry or total size
 *   above the bounds, a compression ratio above `maxRatio` (entries above
 *   1 MB uncompressed: tiny XML files compress well legitimately), an
 *   `xl/sharedStrings.xml` above `maxSharedStrings` bytes (exceljs keeps that
 *   table in memory); and an archive whose local headers are not exactly the
 *   central directory's entries, contiguous from offset 0 with the same name,
 *   method, flags and sizes (exceljs reads the local headers front to back
 *   with unzipper, yauzl reads the central directory: both must see the same
 *   entries and bytes, so nothing can hide from the checks). Names must be
 *   unique (case-insensitively), relative and without `..` or `\`; entries
 *   stored or deflated, not encrypted; `xl/workbook.xml` present.
 * - {@link verifyXlsx} (in the worker, before exceljs opens the file): the
 *   same, then inflates every entry as a stream (yauzl `openReadStream` with
 *   `validateEntrySizes`), counting the real inflated bytes and destroying the
 *   stream as soon as an entry passes its declared size or a bound (entry,
 *   total, ratio, shared strings). Nothing inflated is kept: memory stays at
 *   zlib's buffers whatever the archive declares.
 *
 * Then only the first worksheet is read, row by row ({@link readXlsx} runs
 * {@link verifyXlsx} first). Cell values become strings: numbers as JS prints
 * them, dates as `YYYY-MM-DD` (midnight) or ISO, rich text joined, hyperlinks
 * their text; a formula cell becomes its formula text with a leading `=`
 * (stored as text, never evaluated, its cached result ignored).
 */
import type { Readable } from "node:stream";
import ExcelJS from "exceljs";
import yauzl from "yauzl";
import { XLSX_LIMITS, type XlsxLimits } from "../../contracts/http/intake-bulk-input";
import { bufferStream, type SourceRow } from "./csv";

/** Entries at most this big (bytes uncompressed) are not held to `maxRatio`. */
const RATIO_FLOOR = 1024 * 1024;

/**
 * Why a file was refused: `not_a_workbook` — not a zip, an unreadable or
 * unsupported zip (encrypted, a method other than stored/deflate, duplicate or
 * unsafe names), no `xl/workbook.xml` (upload: 400 `file_content_mismatch`);
 * `refused` — a bound passed or an archive whose headers lie (possible zip
 * bomb; upload: 400 `file_refused`).
 */
export type BulkFileErrorKind = "not_a_workbook" | "refused";

/** A file refused before or while reading (the job fails with this message). */
export class BulkFileError extends Error {
	/** @param kind see {@link BulkFileErrorKind}; default `not_a_workbook` */
	constructor(
		message: string,
		readonly kind: BulkFileErrorKind = "not_a_workbook",
	) {
		super(message);
		this.name = "BulkFileError";
	}
}

const notWorkbook = (why: string) => new BulkFileError(`file is not an XLSX workbook (${why})`);
const bomb = (why: string) => new BulkFileError(`XLSX refused (possible zip bomb): ${why}`, "refused");
const inconsistent = (why: string) =>
	new BulkFileError(`XLSX refused (inconsistent zip structure): ${why}`, "refused");

const LOCAL_SIG = 0x04034b50;
const CENTRAL_SIG = 0x02014b50;
const DESCRIPTOR_SIG = Buffer.from([0x50, 0x4b, 0x07, 0x08]);
/** General purpose flags: bit 0 encrypted, bit 3 sizes in a data descriptor after the data. */
const FLAG_ENCRYPTED = 0x1;
const FLAG_DESCRIPTOR = 0x8;

/** Zip local-file-header magic (`PK\x03\x04`). */
export function looksLikeZip(buf: Buffer): boolean {
	return buf.length >= 4 && buf.readUInt32LE(0) === LOCAL_SIG;
}

/**
 * The bound `size` (bytes of entry `name` so far; `total` of the archive so
 * far; `compressed` its compressed size) passes, or null. `declared`: sizes
 * from the central directory, else real inflated bytes.
 */
function boundPassed(
	name: string,
	size: number,
	total: number,
	compressed: number,
	limits: XlsxLimits,
	declared: boolean,
): string | null {
	const expands = declared ? "expands to" : "inflates to more than";
	const ratio = size / Math.max(1, compressed);
	if (size > limits.maxEntryUncompressed)
		return `entry ${name} ${expands} ${size} bytes (at most ${limits.maxEntryUncompressed})`;
	if (total > limits.maxTotalUncompressed)
		return `archive expands to more than ${limits.maxTotalUncompressed} bytes (at most ${limits.maxTotalUncompressed})`;
	if (size > RATIO_FLOOR && ratio > limits.maxRatio)
		return `entry ${name} has compression ratio ${declared ? "" : "above "}${Math.round(ratio)} (at most ${limits.maxRatio})`;
	if (/^xl\/sharedStrings\.xml$/i.test(name) && size > limits.maxSharedStrings)
		return `shared strings table ${declared ? "of" : "of more than"} ${size} bytes (at most ${limits.maxSharedStrings})`;
	return null;
}

/** What the central directory says of one entry. */
interface CentralEntry {
	entry: yauzl.Entry;
	name: string;
	/** local header offset */
	offset: number;
}

/** Opens `buf` with yauzl (lazy entries, strict names, sizes validated on read). */
async function openZip(buf: Buffer): Promise<yauzl.ZipFile> {
	if (!looksLikeZip(buf)) throw notWorkbook("not a zip archive");
	const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
		yauzl.fromBuffer(
			buf,
			{ lazyEntries: true, validateEntrySizes: true, strictFileNames: true, decodeStrings: true },
			(err, z) => (err || !z ? reject(notWorkbook(`unreadable zip: ${err?.message}`)) : resolve(z)),
		),
	);
	// errors are also delivered to the listener of the pending read (nextEntry); this one keeps a
	// late error from being an uncaught 'error' event
	zip.on("error", () => {});
	return zip;
}

/** The next central directory entry, or null at the end. @throws BulkFileError not_a_workbook */
function nextEntry(zip: yauzl.ZipFile): Promise<yauzl.Entry | null> {
	return new Promise((resolve, reject) => {
		const off = () => {
			zip.off("entry", onEntry);
			zip.off("end", onEnd);
			zip.off("error", onError);
		};
		const onEntry = (e: yauzl.Entry) => {
			off();
			resolve(e);
		};
		const onEnd = () => {
			off();
			resolve(null);
		};
		const onError = (err: Error) => {
			off();
			reject(notWorkbook(`unreadable zip: ${err.message}`));
		};
		zip.on("entry", onEntry);
		zip.on("end", onEnd);
		zip.on("error", onError);
		zip.readEntry();
	});
}

/**
 * Reads the central directory of an open zip, checking each entry's
 * declared sizes against `limits`, its name, method and encryption.
 */
async function centralDirectory(zip: yauzl.ZipFile, limits: XlsxLimits): Promise<CentralEntry[]> {
	if (zip.entryCount > limits.maxEntries)
		throw bomb(`${zip.entryCount} zip entries (at most ${limits.maxEntries})`);
	const out: CentralEntry[] = [];
	const names = new Set<string>();
	let total = 0;
	let workbook = false;
	for (let e = await nextEntry(zip); e; e = await nextEntry(zip)) {
		const name = e.fileName;
		const size = e.uncompressedSize;
		total += size;
		const why = boundPassed(name, size, total, e.compressedSize, limits, true);
		if (why) throw bomb(why);
		const key = name.toLowerCase();
		if (names.has(key)) throw notWorkbook(`duplicate zip entry ${name}`);
		names.add(key);
		if (e.generalPurposeBitFlag & FLAG_ENCRYPTED) throw notWorkbook(`entry ${name} is encrypted`);
		if (e.compressionMethod !== 0 && e.compressionMethod !== 8)
			throw notWorkbook(`entry ${name} uses compression method ${e.compressionMethod}`);
		if (name === "xl/workbook.xml") workbook = true;
		out.push({ entry: e, name, offset: e.relativeOffsetOfLocalHeader });
	}
	if (!workbook) throw notWorkbook("no xl/workbook.xml");
	return out;
}

/**
 * Walks the local file headers from offset 0 as a front-to-back reader
 * (exceljs's unzipper) does and checks they are the central directory's
 * entries, contiguous, each with the same name, method, flags, sizes and
 * CRC (or zeros and a data descriptor carrying them), the central directory
 * right after the last one.
 */
function checkLocalHeaders(buf: Buffer, entries: CentralEntry[]): void {
	const sorted = [...entries].sort((a, b) => a.offset - b.offset);
	let pos = 0;
	for (const { entry: e, name, offset } of sorted) {
		if (offset !== pos)
			throw inconsistent(`entry ${name} starts at byte ${offset}, the previous entry ends at ${pos}`);
		if (pos + 30 > buf.length || buf.readUInt32LE(pos) !== LOCAL_SIG)
			throw inconsistent(`no local header for entry ${name}`);
		const flags = buf.readUInt16LE(pos + 6);
		const method = buf.readUInt16LE(pos + 8);
		const crc = buf.readUInt32LE(pos + 14);
		const csize = buf.readUInt32LE(pos + 18);
		const usize = buf.readUInt32LE(pos + 22);
		const nameEnd = pos + 30 + buf.readUInt16LE(pos + 26);
		const dataStart = nameEnd + buf.readUInt16LE(pos + 28);
		if (dataStart > buf.length || !buf.subarray(pos + 30, nameEnd).equals(e.fileNameRaw))
			throw inconsistent(`the local header of entry ${name} names another file`);
		if (method !== e.compressionMethod)
			throw inconsistent(`entry ${name}: local header compression method ${method}`);
		if (
			(flags & (FLAG_ENCRYPTED | FLAG_DESCRIPTOR)) !==
			(e.generalPurposeBitFlag & (FLAG_ENCRYPTED | FLAG_DESCRIPTOR))
		)
			throw inconsistent(`entry ${name}: local header flags differ from the central directory`);
		const descriptor = (flags & FLAG_DESCRIPTOR) !== 0;
		const agrees = (local: number, central: number) => local === central || (descriptor && local === 0);
		if (!agrees(usize, e.uncompressedSize) || !agrees(crc, e.crc32))
			throw inconsistent(`entry ${name}: local header sizes differ from the central directory`);
		const end = dataStart + e.compressedSize;
		if (end > buf.length) throw inconsistent(`entry ${name} runs past the end of the file`);
		if (!descriptor || csize !== 0) {
			// the reader takes the local header's compressed size
			if (csize !== e.compressedSize)
				throw inconsistent(`entry ${name}: local header sizes differ from the central directory`);
			pos = end;
			continue;
		}
		// the reader takes the entry's data up to the first data-descriptor signature
		if (buf.indexOf(DESCRIPTOR_SIG, dataStart) !== end)
			throw notWorkbook(`entry ${name} cannot be read front to back (data descriptor not where expected)`);
		if (
			end + 16 > buf.length ||
			buf.readUInt32LE(end + 4) !== e.crc32 ||
			buf.readUInt32LE(end + 8) !== e.compressedSize ||
			buf.readUInt32LE(end + 12) !== e.uncompressedSize
		)
			throw inconsistent(`entry ${name}: data descriptor differs from the central directory`);
		pos = end + 16;
	}
	if (pos + 4 > buf.length || buf.readUInt32LE(pos) !== CENTRAL_SIG)
		throw inconsistent(`data after the last entry (byte ${pos}) that the central directory does not list`);
}

/**
 * Checks an XLSX container without inflating anything (milliseconds; used at
 * upload and by the worker): the central directory against `limits`, the
 * names, methods and encryption of its entries, `xl/workbook.xml` present,
 * and the local headers agreeing with it (see the module docs).
 * @param buf the whole file
 * @param limits bounds, default {@link XLSX_LIMITS}
 * @throws BulkFileError `refused` naming the bound passed or the inconsistency; `not_a_workbook` otherwise
 */
export async function inspectXlsx(buf: Buffer, limits: XlsxLimits = XLSX_LIMITS): Promise<void> {
	const zip = await openZip(buf);
	try {
		checkLocalHeaders(buf, await centralDirectory(zip, limits));
	} finally {
		zip.close();
	}
}

/** yauzl's read stream of an entry (inflating, its size checked against the declared one). */
function openEntry(zip: yauzl.ZipFile, e: yauzl.Entry): Promise<Readable> {
	return new Promise((resolve, reject) =>
		zip.openReadStream(e, (err, s) =>
			err || !s ? reject(notWorkbook(`entry ${e.fileName} cannot be read: ${err?.message}`)) : resolve(s),
		),
	);
}

/** What {@link verifyXlsx} learnt while inflating. */
export interface XlsxFacts {
	/**
	 * Start tags `<row …>` (any namespace prefix) in the first worksheet entry
	 * in zip order (the sheet the reader reads), counted by
	 * {@link RowTagCounter}; null when the archive has no worksheet entry.
	 */
	rowTags: number | null;
}

/**
 * Counts the start tags named `row` (`<row …>`, `<row>`, `<row/>`, `<x:row …>`)
 * in XML fed to it in chunks (split anywhere), for a progress estimate of an
 * XLSX (the rows themselves are read by exceljs). In well-formed XML `<` can
 * only open markup, so every count is a tag (or, in a crafted file, a comment
 * or CDATA that looks like one: an estimate is all it gives). `</row>`,
 * `<rowBreaks>` and text `row` are not counted. A namespace prefix longer than
 * {@link RowTagCounter.TAIL} − 5 characters is not recognised.
 */
export class RowTagCounter {
	/** bytes kept from the previous chunk, so a tag split across chunks is seen once */
	static readonly TAIL = 64;
	count = 0;
	private tail: Buffer = Buffer.alloc(0);

	/** Counts the tags that end in `chunk` (their first byte after the name arrived with it). */
	push(chunk: Buffer): void {
		const buf = this.tail.length ? Buffer.concat([this.tail, chunk]) : chunk;
		const fresh = this.tail.length;
		for (let i = buf.indexOf(ROW, Math.max(0, fresh - 3)); i >= 0; i = buf.indexOf(ROW, i + 1)) {
			const after = i + 3;
			// evaluated once: when the byte after the name is in this chunk
			if (after < fresh || after >= buf.length) continue;
			if (!NAME_END.has(buf[after])) continue;
			if (opensTag(buf, i)) this.count++;
		}
		const keep = Math.min(RowTagCounter.TAIL, buf.length);
		this.tail = Buffer.from(buf.subarray(buf.length - keep));
	}
}

const ROW = Buffer.from("row");
/** Bytes that end a tag name: space, tab, LF, CR, `>`, `/`. */
const NAME_END = new Set([0x20, 0x09, 0x0a, 0x0d, 0x3e, 0x2f]);
const LT = 0x3c;
const COLON = 0x3a;

/** Whether the name at `i` follows `<` directly or `<prefix:` (prefix: XML name characters). */
function opensTag(buf: Buffer, i: number): boolean {
	if (i > 0 && buf[i - 1] === LT) return true;
	if (i < 2 || buf[i - 1] !== COLON) return false;
	for (let j = i - 2; j >= 0 && i - j <= RowTagCounter.TAIL; j--) {
		const b = buf[j];
		if (b === LT) return j < i - 2;
		const nameChar =
			(b >= 0x61 && b <= 0x7a) ||
			(b >= 0x41 && b <= 0x5a) ||
			(b >= 0x30 && b <= 0x39) ||
			b === 0x5f ||
			b === 0x2d ||
			b === 0x2e ||
			b >= 0x80;
		if (!nameChar) return false;
	}
	return false;
}

/** The first worksheet's entry name pattern (exceljs emits worksheets in zip order; the reader takes the first). */
const WORKSHEET = /^xl\/worksheets\/[^/]+\.xml$/i;

/**
 * {@link inspectXlsx}, then inflates every entry, one at a time as a stream,
 * counting its real bytes and stopping (stream destroyed) at the first bound
 * passed: its declared size (yauzl `validateEntrySizes`), `maxEntryUncompressed`,
 * `maxTotalUncompressed`, `maxRatio` (above 1 MB), `maxSharedStrings`. Memory
 * stays bounded (no inflated entry is kept); time is at most the inflating of
 * `maxTotalUncompressed` bytes (about 150 MB/s of XML here, more for
 * repetitive data). Run by the worker before exceljs reads the file
 * ({@link readXlsx} does it).
 * While the first worksheet entry inflates, its `<row>` start tags are
 * counted ({@link XlsxFacts}: a progress estimate, no parsing).
 * @param buf the whole file
 * @param limits bounds, default {@link XLSX_LIMITS}
 * @returns what was counted on the way
 * @throws BulkFileError `refused` naming the bound passed or the size that lied; `not_a_workbook` for a corrupt entry
 */
export async function verifyXlsx(buf: Buffer, limits: XlsxLimits = XLSX_LIMITS): Promise<XlsxFacts> {
	await inspectXlsx(buf, limits);
	const zip = await openZip(buf);
	let rows: RowTagCounter | null = null;
	try {
		let total = 0;
		for (let e = await nextEntry(zip); e; e = await nextEntry(zip)) {
			const name = e.fileName;
			const stream = await openEntry(zip, e);
			const counter: RowTagCounter | null = !rows && WORKSHEET.test(name) ? new RowTagCounter() : null;
			rows ??= counter;
			let size = 0;
			try {
				for await (const chunk of stream as AsyncIterable<Buffer>) {
					size += chunk.length;
					total += chunk.length;
					const why = boundPassed(name, size, total, e.compressedSize, limits, false);
					if (why) throw bomb(why);
					counter?.push(chunk);
				}
			} catch (err) {
				stream.destroy();
				if (err instanceof BulkFileError) throw err;
				const msg = (err as Error).message;
				if (/too many bytes|not enough bytes/.test(msg))
					throw bomb(`entry ${name} does not inflate to its declared ${e.uncompressedSize} bytes (${msg})`);
				throw notWorkbook(`entry ${name} is corrupt: ${msg}`);
			}
		}
	} finally {
		zip.close();
	}
	return { rowTags: rows ? rows.count : null };
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
 * (rows without any value skipped). Runs {@link verifyXlsx} first (every
 * entry inflated and counted before exceljs opens the file), so the first
 * `next()` rejects with its BulkFileError for a refused file.
 * @param limits bounds of {@link verifyXlsx}, default {@link XLSX_LIMITS}
 * @param onEstimate called once, before the first row, with the estimated
 *   data rows (the sheet's row tags less the header; blank rows count here
 *   and are skipped when read) when the sheet was found
 * @throws BulkFileError refused by {@link verifyXlsx}, or exceljs could not read the file
 */
export async function* readXlsx(
	buf: Buffer,
	limits: XlsxLimits = XLSX_LIMITS,
	onEstimate?: (dataRows: number) => void,
): AsyncGenerator<SourceRow> {
	const facts = await verifyXlsx(buf, limits);
	if (facts.rowTags !== null) onEstimate?.(Math.max(0, facts.rowTags - 1));
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
