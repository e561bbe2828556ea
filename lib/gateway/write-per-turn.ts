/**
 * The gateway's answers made in the turn of the event loop their request was read in leave together, at the end of
 * that turn (issue 32, docs/decisions/0150-writes-per-turn.md).
 *
 * Under load one turn of the loop reads many requests from many connections. An answer made from memory (a kept
 * pincode, quote or EDD answer) used to be written as soon as it was made, between the reading of one request and
 * the next. On loopback and on a virtual machine most of the cost of such a `write` is the kernel waking the client's
 * thread: a client that has read the answers it had goes back to sleep, and the next answer, one request later,
 * wakes it again. Here such an answer's bytes wait for the end of the turn (the check phase, after the turn's I/O
 * callbacks and their promise chains); then the turn's answers are written, one `write` per connection as before,
 * back to back: the client, woken by the first, is still reading when the others arrive. The same idea as the NATS
 * packets of a turn (lib/platform/publish-per-turn.ts, record 0122).
 *
 * An answer made in a later turn (it waited on a database read, a call over NATS, a timer) is written at once: such
 * answers already come in bursts (a coalesced read answers many requests at once), and holding them back to the end
 * of the turn only delays the client's next request.
 *
 * How: the server's first `request` listener notes the turn on the request's connection and schedules the turn's end
 * (one `setImmediate`); each connection gets its own `_writeGeneric` (Node's `net.Socket` method through which its
 * `_write` and `_writev` reach the socket), which queues a write of the turn its latest request was read in and hands
 * any other to Node's own method at once; the turn's end hands the queue, in order, to Node's method. Node's stream
 * machinery keeps a connection's writes in order and one at a time: a write is in flight until its callback runs, so
 * later bytes wait behind it, and a closing `end()` (a `Connection: close` answer, a graceful stop) shuts the socket
 * only after the queued bytes were written. A socket closed meanwhile fails the write with Node's own
 * `ERR_SOCKET_CLOSED`, as a write to it would have. An answer is still written only once it is complete: what changes
 * is when in the turn, never what or in which order.
 */
import type { IncomingMessage, Server } from "node:http";
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
/** The turns ended so far (each by {@link endOfTurn}). */
let turn = 0;
/** True from the first request of a turn to its end ({@link endOfTurn} is scheduled). */
let turnOpen = false;
/** Where a connection notes the turn in which its latest request was read. */
const READ_IN_TURN = Symbol("readInTurn");

/** A gateway connection, with the turn of its latest request. */
type Connection = Socket & { [READ_IN_TURN]?: number };

/** Hands the queued writes to Node, in the order they were made. */
function writeQueued(): void {
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

/** The end of the turn (its check phase): the turn's answers are written, and the next turn begins. */
function endOfTurn(): void {
	turnOpen = false;
	turn++;
	writeQueued();
}

/** Notes that `socket`'s latest request was read in this turn, whose end is then scheduled. */
function requestRead(socket: Connection): void {
	socket[READ_IN_TURN] = turn;
	if (!turnOpen) {
		turnOpen = true;
		setImmediate(endOfTurn);
	}
}

/**
 * The `_writeGeneric` of a gateway connection: a write for a request read in this same turn is queued until the
 * turn's end; any other (an answer that waited on I/O in a later turn: a database read, a call over NATS) is written
 * at once, as Node writes it.
 */
function writeAtEndOfTurn(
	this: Connection,
	writev: boolean,
	data: unknown,
	encoding: string,
	cb: QueuedWrite["cb"],
): void {
	if (!turnOpen || this[READ_IN_TURN] !== turn) {
		nodeWriteGeneric?.call(this, writev, data, encoding, cb);
		return;
	}
	// a writev's chunk list is Node's buffer of the stream: keep our own copy (with its allBuffers mark)
	let chunks = data;
	if (writev && Array.isArray(data)) {
		const copy: unknown[] & { allBuffers?: unknown } = data.slice();
		copy.allBuffers = (data as { allBuffers?: unknown }).allBuffers;
		chunks = copy;
	}
	queued.push({ socket: this, writev, data: chunks, encoding, cb });
}

/**
 * Makes every connection `server` accepts from now on write the answers made in the turn their request was read in
 * at the end of that turn (see the module notes). Returns false, changing nothing, when this Node's `net.Socket` has
 * no `_writeGeneric`.
 */
export function writePerTurn(server: Server): boolean {
	if (typeof nodeWriteGeneric !== "function") return false;
	server.on("connection", (socket: Socket) => {
		(socket as unknown as { _writeGeneric: WriteGeneric })._writeGeneric = writeAtEndOfTurn;
	});
	// first, so the turn is noted before any listener answers
	server.prependListener("request", (req: IncomingMessage) => requestRead(req.socket as Connection));
	return true;
}

/** Writes still waiting for the end of the turn (for tests). */
export function writesQueued(): number {
	return queued.length;
}
