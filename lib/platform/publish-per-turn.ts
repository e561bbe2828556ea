/**
 * A process's NATS packets leave once per turn of the event loop, so the packets a turn produces share one socket
 * write (issue 32, docs/decisions/0122-publishes-per-turn.md).
 *
 * The nats client (2.x) appends each publish to its outbound buffer and writes the buffer to the socket in a
 * microtask queued by the first publish of a burst. A packet published a few promise steps later misses that
 * microtask and costs a write of its own. Under load, one turn of the loop serves many requests: the gateway reads
 * several HTTP requests from its sockets, a service reads several NATS requests from one socket read. Each of them
 * calls or answers in its own promise chain, so each paid its own `write` system call, and NATS its own wake-up.
 */
import type { Middleware } from "moleculer";

/** The transporter's `send` (Moleculer's `BaseTransporter#send`): topic, serialized packet, the packet's meta. */
export type SendFn = (topic: string, data: Buffer, meta: object) => Promise<void>;

/** The transporter the hook is bound to: its `disconnect` (Moleculer's `BaseTransporter#disconnect`). */
interface Disconnectable {
	disconnect(): Promise<void> | undefined;
}

/** A packet waiting for the end of the turn, and its `send` promise's settlers. */
interface Queued {
	topic: string;
	data: Buffer;
	meta: object;
	resolve(): void;
	reject(err: unknown): void;
}

/**
 * Moleculer middleware (its `transporterSend` hook; moleculer.config.ts registers it with a transporter): the
 * wrapped `send` queues the packet and answers a promise; one `setImmediate` per turn (the check phase, after the
 * turn's I/O callbacks and their promise chains) hands the queue to the transporter's own `send` in order, so the
 * nats client writes the turn's packets together. Each promise settles as its packet's own `send` did: it resolves
 * once the client took the packet and rejects with the client's error (NatsError `MAX_PAYLOAD_EXCEEDED`,
 * `CONNECTION_CLOSED`, …), one turn later, so Moleculer still fails such a call at once rather than at its timeout.
 * A packet sent while there is no connection is dropped by the transporter, as before.
 *
 * The hook is called with the transporter as `this` (Moleculer's `wrapMethod`), and the transporter's `disconnect` is
 * wrapped as well: it hands the queue to the client before the client's closing flush (a PING), and from then until
 * the disconnect settles `send` hands each packet over at once. A packet sent before a disconnect is written before
 * the connection closes, however soon the server's PONG comes back.
 */
export function PublishPerTurn(): Middleware {
	/** Wraps the transporter's `send` of one broker (one queue per transit), and its `disconnect`. */
	function transporterSend(this: Disconnectable, next: SendFn): SendFn {
		let queued: Queued[] = [];
		/** true from a disconnect's start to its end: packets go to the client at once */
		let closing = false;
		const publish = (q: Queued): void => {
			try {
				next(q.topic, q.data, q.meta).then(q.resolve, q.reject);
			} catch (err) {
				// Moleculer's NATS `send` calls the client's `publish`, which throws rather than rejects
				q.reject(err);
			}
		};
		const publishQueued = (): void => {
			const batch = queued;
			queued = [];
			for (const q of batch) publish(q);
		};
		const disconnect = this.disconnect;
		this.disconnect = function (this: Disconnectable) {
			publishQueued();
			closing = true;
			// a disconnect that throws rejects instead, so `closing` is reset either way
			return new Promise<void>((resolve) => resolve(disconnect.call(this))).finally(() => {
				closing = false;
			});
		};
		return (topic, data, meta) =>
			new Promise<void>((resolve, reject) => {
				const q = { topic, data, meta, resolve, reject };
				if (closing) publish(q);
				else if (queued.push(q) === 1) setImmediate(publishQueued);
			});
	}
	return {
		name: "PublishPerTurn",
		// framework boundary: Moleculer's typing declares the hook as answering a promise; it answers the wrapped `send`
		transporterSend: transporterSend as unknown as Middleware["transporterSend"],
	};
}
