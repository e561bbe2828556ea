/**
 * Entry of the bulk reader thread (see reader-thread.ts): reads
 * `workerData.bytes` as `workerData.format` and posts its rows in batches,
 * at most READER_AHEAD batches ahead of the consumer's `more`.
 */
import { readlinkSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { readCsv, type SourceRow } from "./csv";
import { READER_AHEAD, READER_BATCH, type ReaderMessage } from "./reader-thread";
import { raiseThreadNice } from "./role";
import { BulkFileError, readXlsx } from "./xlsx";

const port = parentPort;
if (!port) throw new Error("reader-worker runs only as a worker thread");
const { format, bytes, nice } = workerData as { format: "csv" | "xlsx"; bytes: Uint8Array; nice: number };

/**
 * Lowers this thread's CPU priority (`/proc/thread-self` names its id), so a
 * file being read yields the CPU to the requests the process and its
 * neighbours serve; a bulk-only worker's higher nice is kept
 * (./role.ts raiseThreadNice). Best effort: elsewhere nothing changes.
 */
function lowerPriority(): void {
	try {
		const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
		if (Number.isSafeInteger(tid) && tid > 0) raiseThreadNice(tid, nice);
	} catch {
		// not Linux: the thread keeps the process's priority
	}
}
lowerPriority();

let credit = READER_AHEAD;
let waiting: (() => void) | null = null;
port.on("message", () => {
	credit++;
	const w = waiting;
	waiting = null;
	w?.();
});

/** Posts one message, waiting for credit first when it carries rows. */
async function send(m: ReaderMessage): Promise<void> {
	if (m.kind === "rows") {
		while (credit <= 0) await new Promise<void>((r) => (waiting = r));
		credit--;
	}
	port?.postMessage(m);
}

(async () => {
	const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
	const rows =
		format === "xlsx"
			? readXlsx(buf, undefined, (n) =>
					port.postMessage({ kind: "estimate", rows: n } satisfies ReaderMessage),
				)
			: readCsv(buf);
	let batch: SourceRow[] = [];
	try {
		for await (const r of rows) {
			batch.push(r);
			if (batch.length >= READER_BATCH) {
				await send({ kind: "rows", rows: batch });
				batch = [];
			}
		}
		if (batch.length) await send({ kind: "rows", rows: batch });
		await send({ kind: "end" });
	} catch (e) {
		await send({ kind: "error", fileError: e instanceof BulkFileError, message: (e as Error).message });
	}
	port.close();
})();
