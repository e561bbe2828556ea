/**
 * A process's NATS packets leave once per turn of the event loop (lib/platform/publish-per-turn.ts,
 * docs/decisions/0122-publishes-per-turn.md): two brokers over real NATS with the system's broker options, and a
 * raw nats connection beside them. The caller's socket writes are counted at the nats client's transport (its
 * internals: the one place a write can be seen).
 */
import assert from "node:assert/strict";
import { ServiceBroker } from "moleculer";
import { connect, type NatsConnection } from "nats";
import { middlewareNames, testBrokerOptions } from "../helpers/broker";

/** The nats client behind a broker's transporter, down to the transport that writes the socket. */
interface ClientInternals {
	publish(subject: string, data: Uint8Array): void;
	info?: { max_payload: number };
	protocol: { transport: { send(frame: Uint8Array): void } };
}

const clientOf = (b: ServiceBroker): ClientInternals =>
	(b.transit!.tx as unknown as { client: ClientInternals }).client;

/** Records every socket write of `b`'s NATS connection (as text) until `stop` is called. */
function countWrites(b: ServiceBroker): { writes: string[]; stop(): void } {
	const transport = clientOf(b).protocol.transport;
	const send = transport.send;
	const writes: string[] = [];
	transport.send = function (frame: Uint8Array) {
		writes.push(Buffer.from(frame).toString("latin1"));
		return send.call(this, frame);
	};
	return {
		writes,
		stop: () => {
			transport.send = send;
		},
	};
}

describe("integration: NATS packets leave once per turn (PublishPerTurn)", function () {
	this.timeout(30_000);
	const namespace = `${process.env.NAMESPACE}-per-turn`;
	let caller: ServiceBroker;
	let callee: ServiceBroker;
	const received: number[] = [];

	before(async () => {
		callee = new ServiceBroker(testBrokerOptions(true, { namespace, nodeID: "per-turn-callee" }));
		callee.createService({
			name: "echo",
			actions: {
				/** answers `{ i }`, and records the order requests arrived in */
				n(ctx) {
					received.push(Number(ctx.params.i));
					return { i: ctx.params.i };
				},
			},
		});
		caller = new ServiceBroker(testBrokerOptions(true, { namespace, nodeID: "per-turn-caller" }));
		await Promise.all([callee.start(), caller.start()]);
		await caller.waitForServices(["echo"], 10_000);
	});
	after(async () => {
		await caller?.stop();
		await callee?.stop();
	});

	it("is registered by the production broker options with a transporter, not without one", () => {
		assert.ok(middlewareNames("nats://127.0.0.1:4222").includes("PublishPerTurn"));
		assert.ok(!middlewareNames(undefined).includes("PublishPerTurn"));
	});

	it("sends the calls of one turn in one socket write, in order, each answered", async () => {
		received.length = 0;
		const published: string[] = [];
		const client = clientOf(caller);
		const publish = client.publish;
		client.publish = function (subject: string, data: Uint8Array) {
			published.push(subject);
			return publish.call(this, subject, data);
		};
		const w = countWrites(caller);
		try {
			// call i starts after i promise steps: without the end-of-turn publish, the nats client's
			// microtask flush would write the first calls before the later ones were made
			const step = (k: number): Promise<void> =>
				k === 0 ? Promise.resolve() : Promise.resolve().then(() => step(k - 1));
			const calls = Array.from({ length: 20 }, (_, i) =>
				step(i).then(() => caller.call("echo.n", { i }) as Promise<{ i: number }>),
			);
			const answers = await Promise.all(calls);
			assert.deepEqual(
				answers.map((a) => a.i),
				Array.from({ length: 20 }, (_, i) => i),
			);
			assert.deepEqual(
				received,
				Array.from({ length: 20 }, (_, i) => i),
				"the requests arrived in call order",
			);
			const requests = w.writes.filter((x) => x.includes(".REQB.echo.n"));
			assert.equal(requests.length, 1, `the 20 requests left in ${requests.length} writes`);
			assert.equal(requests[0].split("PUB ").length - 1, 20);
			assert.equal(published.filter((s) => s.endsWith(".REQB.echo.n")).length, 20);
		} finally {
			w.stop();
			client.publish = publish;
		}
	});

	it("fails a call at once when the client refuses its packet (over the server's max_payload)", async () => {
		const max = clientOf(caller).info?.max_payload ?? 1024 * 1024;
		const t0 = Date.now();
		const err = await caller.call("echo.n", { i: 1, blob: "x".repeat(max + 1) }, { timeout: 10_000 }).then(
			() => assert.fail("answered"),
			(e: unknown) => e as { code?: string },
		);
		assert.equal(err.code, "MAX_PAYLOAD_EXCEEDED", String(err));
		assert.ok(Date.now() - t0 < 2_000, `rejected after ${Date.now() - t0} ms`);
		// the broker goes on: a call of normal size right after it is answered
		assert.deepEqual(await caller.call("echo.n", { i: 7 }), { i: 7 });
	});

	it("still sends the packets queued as its connection starts to disconnect and sent during it, however soon the PONG comes", async () => {
		const nc: NatsConnection = await connect({ servers: process.env.TEST_NATS_URL });
		const leaving = new ServiceBroker(testBrokerOptions(true, { namespace, nodeID: "per-turn-leaving" }));
		try {
			await leaving.start();
			const subject = `${namespace}.probe.last`;
			const sub = nc.subscribe(subject, { max: 2 });
			await nc.flush();
			const tx = leaving.transit?.tx as unknown as {
				send(topic: string, data: Buffer, meta: object): Promise<void>;
				disconnect(): Promise<void>;
			};
			// in the timers phase, so the loop polls its sockets before it reaches the check phase
			await new Promise((r) => setTimeout(r, 0));
			const sent = tx.send(subject, Buffer.from("last packet"), {});
			const disconnected = tx.disconnect();
			// a packet sent once the disconnect has begun (Moleculer's own transporter publishes it until it closes)
			const sentDuring = tx.send(subject, Buffer.from("sent during the disconnect"), {});
			// let the client write its closing PING, then hold the loop while the server's PONG comes back: the
			// poll phase then reads the PONG and closes the connection before any setImmediate of this turn runs
			await Promise.resolve();
			const until = Date.now() + 200;
			while (Date.now() < until) {
				// hold the event loop
			}
			await disconnected;
			await Promise.all([sent, sentDuring]);
			const got: string[] = [];
			await Promise.race([
				(async () => {
					for await (const m of sub) got.push(Buffer.from(m.data).toString());
				})(),
				new Promise((r) => setTimeout(r, 3_000)),
			]);
			assert.deepEqual(got, ["last packet", "sent during the disconnect"]);
		} finally {
			await leaving.stop().catch(() => undefined);
			await nc.close();
		}
	});
});
