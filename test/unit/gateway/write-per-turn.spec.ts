/**
 * The gateway's answers written at the end of the turn (lib/gateway/write-per-turn.ts, record 0150): over real
 * sockets, the bytes of an answer made in the turn its request was read in wait for the turn's check phase and then
 * leave in order, an answer made in a later turn leaves at once; bodies of every shape (text,
 * bytes through `writev`, a long stream, a `Connection: close` answer) arrive whole and in order on keep-alive
 * connections; a socket closed while its write waits fails that write without harming the server; the gateway
 * installs it by default and not with `GATEWAY_WRITE_PER_TURN=0`.
 */
import assert from "node:assert/strict";
import {
	createServer,
	request as httpRequest,
	type IncomingMessage,
	type Server,
	type ServerResponse,
} from "node:http";
import { type AddressInfo, connect, Socket } from "node:net";
import { writePerTurn, writesQueued } from "../../../lib/gateway/write-per-turn";
import { FAKES, startGateway, useGateway } from "./setup";

/** A server on 127.0.0.1 answering with `handler`, with the writes per turn installed (or not). */
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void, perTurn = true) {
	const server: Server = createServer(handler);
	if (perTurn) assert.equal(writePerTurn(server), true, "this Node has net.Socket#_writeGeneric");
	await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
	const port = (server.address() as AddressInfo).port;
	return {
		port,
		close: () => new Promise<void>((ok) => server.close(() => ok())),
		server,
	};
}

/** GET `path` on a keep-alive agent; the status, headers and whole body. */
function get(port: number, path: string, agent: import("node:http").Agent) {
	return new Promise<{ status: number; body: Buffer; headers: IncomingMessage["headers"] }>((ok, fail) => {
		const req = httpRequest({ host: "127.0.0.1", port, path, agent }, (res) => {
			const parts: Buffer[] = [];
			res.on("data", (c: Buffer) => parts.push(c));
			res.on("end", () =>
				ok({ status: res.statusCode ?? 0, body: Buffer.concat(parts), headers: res.headers }),
			);
			res.on("error", fail);
		});
		req.on("error", fail);
		req.end();
	});
}

/** The body `/n` answers: text, bytes, a stream or a closing answer, by n. */
function bodyOf(n: number): Buffer {
	if (n % 4 === 2) return Buffer.alloc(300_000, n % 251);
	return Buffer.from(`answer ${n} `.repeat(1 + (n % 7)));
}

describe("gateway: answers written at the end of the turn (record 0150)", () => {
	it("holds an answer's bytes until the turn's check phase, then writes them", async () => {
		const seen: number[] = [];
		const s = await serve((_req, res) => {
			res.end("held");
			seen.push(writesQueued());
			setImmediate(() => seen.push(writesQueued()));
		});
		const agent = new (await import("node:http")).Agent({ keepAlive: true });
		try {
			const r = await get(s.port, "/", agent);
			assert.equal(r.body.toString(), "held");
			await new Promise((ok) => setImmediate(ok));
			assert.ok(seen[0] >= 1, `queued right after end(): ${seen[0]}`);
			assert.equal(seen[1], 0, "written by the next check phase");
		} finally {
			agent.destroy();
			await s.close();
		}
		// without it, the bytes are written at once
		const plain = await serve((_req, res) => {
			res.end("at once");
			seen.push(writesQueued());
		}, false);
		const agent2 = new (await import("node:http")).Agent({ keepAlive: true });
		try {
			assert.equal((await get(plain.port, "/", agent2)).body.toString(), "at once");
			assert.equal(seen[2], 0);
		} finally {
			agent2.destroy();
			await plain.close();
		}
	});

	it("writes at once an answer made in a later turn than its request, even while another turn's answers wait", async () => {
		let held: ServerResponse | undefined;
		const seen: Record<string, number> = {};
		const s = await serve((req, res) => {
			if (req.url === "/late") {
				held = res; // answered later, by the next request
				return;
			}
			held?.end("late");
			seen.late = writesQueued(); // its request was read in an earlier turn: written at once
			res.end("now");
			seen.now = writesQueued(); // this turn's own answer waits
		});
		const one = new (await import("node:http")).Agent({ keepAlive: true });
		const two = new (await import("node:http")).Agent({ keepAlive: true });
		try {
			const late = get(s.port, "/late", one);
			await new Promise((ok) => setTimeout(ok, 30));
			const [a, b] = await Promise.all([late, get(s.port, "/now", two)]);
			assert.equal(a.body.toString(), "late");
			assert.equal(b.body.toString(), "now");
			assert.deepEqual(seen, { late: 0, now: 1 });
		} finally {
			one.destroy();
			two.destroy();
			await s.close();
		}
	});

	it("text, bytes, long streams and closing answers arrive whole and in order on shared keep-alive connections", async () => {
		const s = await serve((req, res) => {
			const n = Number(req.url?.slice(1));
			const body = bodyOf(n);
			if (n % 4 === 0) res.end(body.toString());
			else if (n % 4 === 1) {
				res.setHeader("Content-Type", "application/octet-stream");
				res.end(body); // headers and a Buffer: one writev
			} else if (n % 4 === 2) {
				// a long answer streamed in 64 KiB chunks, one per turn
				let at = 0;
				const next = () => {
					const chunk = body.subarray(at, at + 65_536);
					at += chunk.length;
					if (at >= body.length) res.end(chunk);
					else if (res.write(chunk)) setImmediate(next);
					else res.once("drain", next);
				};
				next();
			} else {
				res.setHeader("Connection", "close");
				res.end(body);
			}
		});
		const agent = new (await import("node:http")).Agent({ keepAlive: true, maxSockets: 6 });
		try {
			const answers = await Promise.all(Array.from({ length: 240 }, (_, n) => get(s.port, `/${n}`, agent)));
			answers.forEach((a, n) => {
				assert.equal(a.status, 200);
				assert.ok(a.body.equals(bodyOf(n)), `answer ${n} arrived whole (${a.body.length} bytes)`);
			});
		} finally {
			agent.destroy();
			await s.close();
		}
	});

	it("a socket closed while its write waits fails that write; the server goes on answering", async () => {
		const errors: unknown[] = [];
		const s = await serve((req, res) => {
			if (req.url === "/drop") {
				res.on("error", (e) => errors.push(e));
				req.socket.on("error", (e) => errors.push(e));
				res.end("never seen");
				req.socket.destroy();
				return;
			}
			res.end("fine");
		});
		try {
			const got = await new Promise<string>((ok) => {
				const sock = connect(s.port, "127.0.0.1", () => sock.write("GET /drop HTTP/1.1\r\nHost: x\r\n\r\n"));
				let text = "";
				sock.on("data", (d) => {
					text += d.toString();
				});
				sock.on("close", () => ok(text));
				sock.on("error", () => undefined);
			});
			assert.equal(got, "", "nothing of the dropped answer was written");
			const agent = new (await import("node:http")).Agent({ keepAlive: true });
			assert.equal((await get(s.port, "/ok", agent)).body.toString(), "fine");
			agent.destroy();
		} finally {
			await s.close();
		}
	});
});

describe("gateway: GATEWAY_WRITE_PER_TURN", () => {
	const g = useGateway();

	/** The `_writeGeneric` of the gateway's side of a new connection. */
	async function serverSideWrite(server: Server, base = g.base): Promise<unknown> {
		const accepted = new Promise<Socket>((ok) =>
			server.once("connection", (s: Socket) => setImmediate(() => ok(s))),
		);
		const url = new URL(base);
		const client = connect(Number(url.port), url.hostname);
		const socket = await accepted;
		client.destroy();
		return (socket as unknown as { _writeGeneric: unknown })._writeGeneric;
	}

	it("is on by default: the gateway's connections write at the end of the turn", async () => {
		const server = (g.broker.getLocalService("gateway") as unknown as { server: Server }).server;
		const own = await serverSideWrite(server);
		assert.notEqual(own, (Socket.prototype as unknown as { _writeGeneric: unknown })._writeGeneric);
		const r = await fetch(`${g.base}/health`);
		assert.deepEqual(await r.json(), { status: "ok" });
	});

	it("with GATEWAY_WRITE_PER_TURN=0 each answer is written at once (Node's own socket writes)", async () => {
		const before = process.env.GATEWAY_WRITE_PER_TURN;
		process.env.GATEWAY_WRITE_PER_TURN = "0";
		let off: Awaited<ReturnType<typeof startGateway>> | undefined;
		try {
			off = await startGateway(FAKES, { nodeID: `gw-write-off-${process.pid}` });
		} finally {
			if (before === undefined) delete process.env.GATEWAY_WRITE_PER_TURN;
			else process.env.GATEWAY_WRITE_PER_TURN = before;
		}
		try {
			const server = (off.broker.getLocalService("gateway") as unknown as { server: Server }).server;
			const own = await serverSideWrite(server, off.base);
			assert.equal(own, (Socket.prototype as unknown as { _writeGeneric: unknown })._writeGeneric);
			assert.deepEqual(await (await fetch(`${off.base}/health`)).json(), { status: "ok" });
		} finally {
			await off.broker.stop();
		}
	});
});
