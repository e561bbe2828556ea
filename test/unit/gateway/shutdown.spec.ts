/**
 * The gateway's graceful stop (services/gateway.service.ts `beginShutdown` /
 * `closeListener`; docs/decisions/0052-gateway-stop.md): new
 * connections are refused at once, but a request on a connection already open
 * — kept alive after an earlier answer, or opened and not yet used — is
 * answered (with `Connection: close`) instead of the socket being dropped,
 * and the stop completes once those connections have ended.
 */
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { useGateway } from "./setup";

/** A connected raw TCP socket to `base`. */
function open(base: string): Promise<Socket> {
	const { hostname, port } = new URL(base);
	return new Promise((resolve, reject) => {
		const s = connect(Number(port), hostname, () => resolve(s));
		s.once("error", reject);
	});
}

/** Sends `GET path` on `s` (keep-alive) and answers the raw response head + body once it is complete. */
function get(s: Socket, path: string): Promise<string> {
	return new Promise((resolve, reject) => {
		let text = "";
		const onData = (d: Buffer) => {
			text += d.toString("latin1");
			const head = text.indexOf("\r\n\r\n");
			const len = /content-length: (\d+)/i.exec(text)?.[1];
			if (head >= 0 && len !== undefined && text.length >= head + 4 + Number(len)) {
				s.off("data", onData);
				resolve(text);
			}
		};
		s.on("data", onData);
		s.once("error", reject);
		s.write(`GET ${path} HTTP/1.1\r\nHost: gw\r\nConnection: keep-alive\r\n\r\n`);
	});
}

describe("gateway: graceful stop keeps open connections answered", () => {
	const g = useGateway();

	it("refuses new connections, answers requests on open ones with Connection: close, then finishes", async () => {
		const used = await open(g.base);
		const first = await get(used, "/health");
		assert.match(first, /^HTTP\/1\.1 200/);
		assert.doesNotMatch(first, /connection: close/i, "before the stop the connection is kept alive");
		const fresh = await open(g.base); // connected, nothing sent yet

		const gw = g.broker.getLocalService("gateway") as unknown as {
			beginShutdown(): void;
			serverClosed?: Promise<void>;
		};
		gw.beginShutdown();
		await assert.rejects(() => open(g.base), /ECONNREFUSED/, "no new connection is accepted");

		for (const s of [used, fresh]) {
			const closed = new Promise<void>((r) => s.once("close", () => r()));
			const answer = await get(s, "/health");
			assert.match(answer, /^HTTP\/1\.1 200/, "a request on an open connection is answered");
			assert.match(answer, /connection: close/i);
			await closed;
		}
		let done = false;
		void gw.serverClosed?.then(() => {
			done = true;
		});
		await new Promise((r) => setTimeout(r, 100));
		assert.equal(done, true, "the listener's close completes once its connections ended");
	});
});
