/**
 * Reading a bulk file in a worker thread with a bounded heap (issue 10:
 * worker peak RSS ≤ 400 MB). exceljs's streaming reader and csv-parse make
 * garbage faster than V8 collects it in a large heap (reading a 25 MB XLSX
 * alone peaked above 500 MB RSS with a live heap near 130 MB); in a thread
 * whose isolate is capped ({@link READER_LIMITS}) V8 collects early, and the
 * main thread, which validates and writes the rows, keeps its own heap small.
 *
 * Protocol: the thread posts batches of up to {@link READER_BATCH} rows; it
 * keeps at most {@link READER_AHEAD} batches ahead of the consumer (credit:
 * the main thread answers `more` after taking one). A {@link BulkFileError} in the thread comes
 * back as a BulkFileError (the job fails with its message); any other error
 * is rethrown as an Error.
 */
import { Worker } from "node:worker_threads";
import { setting } from "../../platform/config";
import type { SourceRow } from "./csv";
import { BulkFileError } from "./xlsx";

/** Rows per message between the reader thread and the main thread. */
export const READER_BATCH = 500;

/** Batches the thread may read ahead of the consumer. */
export const READER_AHEAD = 4;

/**
 * Nice value of the reader thread (0–19; `INTAKE_BULK_READER_NICE`, default
 * 10): parsing a file is background work, the API's requests come first.
 */
export const READER_NICE = setting("INTAKE_BULK_READER_NICE");

/**
 * Heap bounds of the reader thread's isolate (MB). Measured on the bench's
 * 24 MB XLSX (115k rows): 128/16 reads it in 6.3 s with a process peak of
 * 259 MB; 256/48 in 4.9 s, 279 MB; 96/8 thrashes in GC (14 s); 64/8 crawls.
 */
export const READER_LIMITS = { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16 };

/** A message from the reader thread. */
export type ReaderMessage =
	| { kind: "rows"; rows: SourceRow[] }
	/** an XLSX's estimated data rows (./xlsx.ts readXlsx `onEstimate`), before its first rows */
	| { kind: "estimate"; rows: number }
	| { kind: "end" }
	| { kind: "error"; fileError: boolean; message: string };

/** The thread's entry module: compiled `.js` next to this file, or the `.ts` source run through tsx. */
function workerEntry(): { file: string; eval: boolean } {
	const ts = __filename.endsWith(".ts");
	const entry = `${__dirname}/reader-worker.${ts ? "ts" : "js"}`;
	return ts
		? { file: `require("tsx/cjs"); require(${JSON.stringify(entry)});`, eval: true }
		: { file: entry, eval: false };
}

/**
 * Yields the rows of `buf` read as `format` (header row first), parsed in a
 * worker thread. `buf`'s memory is moved to the thread (transferred, not
 * copied) when it owns its whole ArrayBuffer: the caller must not read `buf`
 * afterwards. `onEstimate` gets an XLSX's estimated data rows (see
 * ./xlsx.ts `readXlsx`) before its first row.
 * @throws BulkFileError when the file cannot be read as that format
 */
export async function* readRowsInThread(
	format: "csv" | "xlsx",
	buf: Buffer,
	onEstimate?: (dataRows: number) => void,
): AsyncGenerator<SourceRow> {
	const entry = workerEntry();
	const owned =
		buf.byteOffset === 0 && buf.byteLength === buf.buffer.byteLength && buf.buffer instanceof ArrayBuffer;
	const worker = new Worker(entry.file, {
		eval: entry.eval,
		workerData: { format, bytes: buf, nice: READER_NICE },
		transferList: owned ? [buf.buffer as ArrayBuffer] : [],
		resourceLimits: READER_LIMITS,
		stdout: false,
		stderr: false,
	});
	const queue: ReaderMessage[] = [];
	let wake: (() => void) | null = null;
	let failure: Error | null = null;
	let exited = false;
	const notify = () => {
		const w = wake;
		wake = null;
		w?.();
	};
	worker.on("message", (m: ReaderMessage) => {
		queue.push(m);
		notify();
	});
	worker.on("error", (e: Error) => {
		failure = e;
		notify();
	});
	worker.on("exit", () => {
		exited = true;
		notify();
	});
	try {
		for (;;) {
			const m = queue.shift();
			if (!m) {
				if (failure) throw failure;
				if (exited) throw new Error("bulk reader thread exited before the end of the file");
				await new Promise<void>((r) => {
					wake = r;
				});
				continue;
			}
			if (m.kind === "end") return;
			if (m.kind === "estimate") {
				onEstimate?.(m.rows);
				continue;
			}
			if (m.kind === "error") throw m.fileError ? new BulkFileError(m.message) : new Error(m.message);
			worker.postMessage("more");
			yield* m.rows;
		}
	} finally {
		await worker.terminate();
	}
}
