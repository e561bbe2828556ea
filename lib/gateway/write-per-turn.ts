/**
 * The gateway's HTTP answers leave once per turn of the event loop (issue 32, docs/decisions/0150-writes-per-turn.md).
 *
 * Under load one turn of the loop reads many requests from many connections, and each answer used to be written to
 * its socket as soon as it was made, between the reading of one request and the next. On loopback and on a virtual
 * machine most of the cost of such a `write` is the kernel waking the client's thread: a client that has read the
 * answers it had goes back to sleep, and the next answer, one request later, wakes it again. Here each answer's
 * bytes wait for the end of the turn (the check phase, after the turn's I/O callbacks and their promise chains);
 * then every answer of the turn is written, one `write` per connection as before, back to back: the client, woken by
 * the first, is still reading when the others arrive. The same idea as the NATS packets of a turn
 * (lib/platform/publish-per-turn.ts, record 0122).
 *
 * How: each connection of the gateway's server gets its own `_writeGeneric` (Node's `net.Socket` method through
 * which its `_write` and `_writev` reach the socket) that queues the write and its callback; one `setImmediate` per
 * turn hands the queue, in order, to Node's own method. Node's stream machinery keeps a connection's writes in order
 * and one at a time: a write is in flight until its callback runs, so later bytes wait behind it, and a closing
 * `end()` (a `Connection: close` answer, a graceful stop) shuts the socket only after the queued bytes were written.
 * A socket closed meanwhile fails the write with Node's own `ERR_SOCKET_CLOSED`, as a write to it would have. An
 * answer is still written only once it is complete: what changes is when in the turn, never what or in which order.
 */
import type { Server } from "node:http";
import { Socket } from "node:net";

/** Node's `net.Socket#_writeGeneric(writev, data, encoding, cb)` (internal since Node 10; checked at install). */
type WriteGeneric = (
	this: Socket,
	writev: boolean,
	data: unknown,
	encoding: string,
	cb: (err?: Error | null) => void,
) => unknown;

/** Node's own `_writeGeneric`, undefined if this Node has none (then nothing is installed). */
const nodeWriteGeneric = (Socket.prototype as unknown as { _writeGeneric?: WriteGeneric })._writeGeneric;

/** A write waiting for the end of the turn. */
interface QueuedWrite {
	socket: Socket;
	writev: boolean;
	data: unknown;
	encoding: string;
	cb: (err?: Error | null) => void;
}

let queued: QueuedWrite[] = [];
let scheduled = false;

/** Hands the turn's writes to Node, in the order they were made (the check phase of the turn). */
function writeQueued(): void {
	scheduled = false;
	const batch = queued;
	queued = [];
	for (const w of batch) {
		try {
			nodeWriteGeneric?.call(w.socket, w.writev, w.data, w.encoding, w.cb);
		} catch (err) {
			w.cb(err as Error);
		}
	}
}

/** The `_writeGeneric` of a gateway connection: queues the write until the end of the turn. */
function writeAtEndOfTurn(
	this: Socket,
	writev: boolean,
	data: unknown,
	encoding: string,
	cb: QueuedWrite["cb"],
): void {
	// a writev's chunk list is Node's buffer of the stream: keep our own copy (with its allBuffers mark)
	let chunks = data;
	if (writev && Array.isArray(data)) {
		const copy: unknown[] & { allBuffers?: unknown } = data.slice();
		copy.allBuffers = (data as { allBuffers?: unknown }).allBuffers;
		chunks = copy;
	}
	queued.push({ socket: this, writev, data: chunks, encoding, cb });
	if (!scheduled) {
		scheduled = true;
		setImmediate(writeQueued);
	}
}

/**
 * Makes every connection `server` accepts from now on write its answers at the end of the turn (see the module
 * notes). Returns false, changing nothing, when this Node's `net.Socket` has no `_writeGeneric`.
 */
export function writePerTurn(server: Server): boolean {
	if (typeof nodeWriteGeneric !== "function") return false;
	server.on("connection", (socket: Socket) => {
		(socket as unknown as { _writeGeneric: WriteGeneric })._writeGeneric = writeAtEndOfTurn;
	});
	return true;
}

/** Writes still waiting for the end of the turn (for tests). */
export function writesQueued(): number {
	return queued.length;
}
