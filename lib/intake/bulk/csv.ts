/**
 * Streaming CSV reader of bulk order files (issue 10; STACK-NOTES
 * "Spreadsheets": csv-parse streaming). UTF-8 with or without BOM, quoted
 * fields (embedded commas, quotes `""`, newlines), CRLF or LF line ends.
 *
 * Malformed records (e.g. a stray quote the relaxed rules cannot recover)
 * never stop the rows after them: csv-parse skips the record
 * (`skip_records_with_error`) and the reader yields a {@link SourceRow} with
 * `error` in its place, so row numbers stay stable and the row is reported
 * as failed. Every cell is a string: nothing is evaluated.
 */
import { Readable } from "node:stream";
import { type CsvError, type Options, parse } from "csv-parse";

/** One record of a file: its cells, or why it could not be read. */
export interface SourceRow {
	cells: string[];
	/** set when the record could not be parsed (cells empty) */
	error?: string;
}

/** Chunk size the in-memory file is fed to the parser with (bytes). */
const CHUNK = 256 * 1024;

/** A readable over `buf` in {@link CHUNK} slices (views: the file is not copied). */
export function bufferStream(buf: Buffer): Readable {
	let off = 0;
	return new Readable({
		read() {
			if (off >= buf.length) {
				this.push(null);
				return;
			}
			const end = Math.min(buf.length, off + CHUNK);
			this.push(buf.subarray(off, end));
			off = end;
		},
	});
}

/**
 * Counts the records of a CSV cheaply (a quote-aware scan of the bytes, no
 * parsing): lines that are not empty outside quoted fields. Used for the
 * progress total before processing; the exact total is set at the end.
 */
export function countCsvRecords(buf: Buffer): number {
	let inQuote = false;
	let nonEmpty = false;
	let n = 0;
	for (let i = 0; i < buf.length; i++) {
		const b = buf[i];
		if (b === 0x22) {
			inQuote = !inQuote;
			nonEmpty = true;
		} else if (b === 0x0a && !inQuote) {
			if (nonEmpty) n++;
			nonEmpty = false;
		} else if (b !== 0x0d) nonEmpty = true;
	}
	if (nonEmpty) n++;
	return n;
}

/** A parsed record plus the records skipped just before it. */
interface Tagged {
	cells: string[];
	skipped: string[];
}

/**
 * Yields every record of a CSV file in order, the header row first.
 * Empty lines are skipped; short/long rows are kept (the header decides the columns).
 */
export async function* readCsv(buf: Buffer): AsyncGenerator<SourceRow> {
	let skipped: string[] = [];
	const options: Options = {
		bom: true,
		relax_column_count: true,
		relax_quotes: true,
		skip_empty_lines: true,
		skip_records_with_error: true,
		on_skip: (err: CsvError | undefined) => {
			skipped.push(err?.message ?? "malformed record");
			return undefined;
		},
		// csv-parse types on_record as returning a record; a Tagged is what comes out
		on_record: ((record: string[]): Tagged => {
			const t = { cells: record, skipped };
			skipped = [];
			return t;
		}) as unknown as Options["on_record"],
	};
	const parser = parse(options);
	const input = bufferStream(buf);
	input.pipe(parser);
	input.on("error", (e) => parser.destroy(e));
	for await (const rec of parser as AsyncIterable<Tagged>) {
		for (const e of rec.skipped) yield { cells: [], error: e };
		yield { cells: rec.cells };
	}
	for (const e of skipped) yield { cells: [], error: e };
}
