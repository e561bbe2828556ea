/**
 * Pacing of a streamed call's chunks (issue 10: API p99 during a bulk
 * import ≤ 2× idle). A 25 MB upload arrives on loopback or a fast link far
 * quicker than the gateway publishes it to NATS: Node reads up to 32 socket
 * buffers per poll of the event loop, busboy and Moleculer's transit turn
 * each into a NATS message in the same turn, and the gateway's other
 * requests wait behind the whole burst (measured: `GET /v1/shipping/serviceable`
 * answered in up to 440 ms while a file was sent, against ~4 ms idle).
 * {@link pacedStream} hands on one chunk per turn of the event loop, so
 * requests interleave with the upload; the stream's backpressure (busboy,
 * then the socket: TCP flow control) holds the rest.
 */
import { type Readable, Transform } from "node:stream";

/**
 * `src` re-emitted one chunk per turn of the event loop (`setImmediate`
 * between chunks), bytes and order unchanged. An error of `src` (busboy's
 * size cut destroys the file stream with a 413 error) destroys the returned
 * stream with the same error, so the receiving side sees it as before.
 * `src` keeps its own listeners (moleculer-web drains it on a failed call).
 */
export function pacedStream(src: Readable): Readable {
	const paced = new Transform({
		readableObjectMode: src.readableObjectMode,
		writableObjectMode: src.readableObjectMode,
		transform(chunk: unknown, _enc, done) {
			setImmediate(done, null, chunk);
		},
	});
	src.once("error", (err) => paced.destroy(err));
	return src.pipe(paced);
}
