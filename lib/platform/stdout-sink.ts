/**
 * The process's asynchronous stdout for high-volume lines (issue 32, docs/decisions/0095-asynchronous-access-log.md):
 * the gateway's access log, one line per request, and the broker's log lines at `info` and below
 * (lib/platform/logging.ts `StdoutSinkLogger`). `process.stdout.write` is synchronous on Linux when stdout is a pipe
 * or a file (as under a container runtime), so a line per request blocked the event loop on every request. Here
 * lines go to a sonic-boom stream on fd 1 (pino's destination): written by the thread pool, lines arriving while a
 * write is in flight are batched into the next one, and every write is at most 4096 bytes (PIPE_BUF, so a write to a
 * pipe is atomic and never interleaves with a line another writer puts on fd 1 synchronously, e.g. a library's
 * `console.log`). Nothing waits for a size threshold, so a line is written as soon as the previous write is done.
 * {@link flushStdoutSink} writes what is left synchronously: called when the gateway stops and on process exit.
 */
import SonicBoom from "sonic-boom";

/** Largest single write (bytes): PIPE_BUF, the size a pipe writes atomically. */
const ATOMIC_WRITE = 4096;

let sink: SonicBoom | undefined;

/** The sink, created on first use. */
function stdoutSink(): SonicBoom {
	if (!sink) {
		sink = new SonicBoom({ fd: 1, sync: false, minLength: 0, maxWrite: ATOMIC_WRITE });
		// a reader that went away (EPIPE) must not crash the process: the lines are dropped
		sink.on("error", () => undefined);
		process.once("exit", flushStdoutSink);
	}
	return sink;
}

/** Where lines go instead of fd 1 while a test captures them ({@link captureLines}). */
let capture: ((line: string) => void) | undefined;

/** Queues `line` (ending in "\n") for stdout; never blocks on the write. */
export function writeLine(line: string): void {
	if (capture) capture(line);
	else stdoutSink().write(line);
}

/**
 * Tests: sends the lines of {@link writeLine} to `to` instead of stdout until
 * the returned function is called.
 */
export function captureLines(to: (line: string) => void): () => void {
	capture = to;
	return () => {
		capture = undefined;
	};
}

/** Writes what is queued synchronously (no-op when nothing was ever written). */
export function flushStdoutSink(): void {
	if (!sink) return;
	try {
		sink.flushSync();
	} catch {
		// EAGAIN on a full pipe, or a closed stdout: what is left is dropped, as a dying process would
	}
}
