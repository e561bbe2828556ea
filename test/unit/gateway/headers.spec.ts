/**
 * Gateway headers on every response (`x-request-id`, nosniff) and the
 * structured access-log line.
 */

import assert from "node:assert/strict";
import { connect } from "node:net";
import { EVERY_REQUEST } from "../../../lib/gateway/http";
import { captureLines } from "../../../lib/platform/stdout-sink";
import { newSender } from "../../helpers/broker";
import { http, UUID_RE, useGateway } from "./setup";

describe("gateway: request ids, headers and access log", () => {
	const g = useGateway();

	describe("request ids and headers", () => {
		it("every response carries x-request-id and nosniff; a sane incoming id is echoed and used as ctx.requestID", async () => {
			const token = await g.idp.tokenFor(newSender());
			const answers = [
				await http(g.base, "GET", "/health"),
				await http(g.base, "GET", "/nope"),
				await http(g.base, "GET", "/v1/orders/status?order_no=A"),
				await http(g.base, "GET", "/v1/orders/status?order_no=boom", { token }),
				await http(g.base, "GET", "/v1/documents/label/1", { token }),
			];
			for (const a of answers) {
				assert.match(a.headers.get("x-request-id") ?? "", UUID_RE);
				assert.equal(a.headers.get("x-content-type-options"), "nosniff");
			}
			const echoed = await http(g.base, "GET", "/v1/orders/status?order_no=A", {
				token,
				headers: { "x-request-id": "client-123_ABC.x" },
			});
			assert.equal(echoed.headers.get("x-request-id"), "client-123_ABC.x");
			assert.equal(echoed.body.request_id, "client-123_ABC.x");
			for (const insane of ["has space", "x".repeat(65), "semi;colon", "ü"]) {
				const r = await http(g.base, "GET", "/v1/orders/status?order_no=A", {
					token,
					headers: { "x-request-id": encodeURI(insane) === insane ? insane : "a/b" },
				});
				const id = r.headers.get("x-request-id") ?? "";
				assert.match(id, UUID_RE, insane);
				assert.equal(r.body.request_id, id);
			}
			const e = await http(g.base, "GET", "/nope", { headers: { "x-request-id": "probe-1" } });
			assert.equal(e.headers.get("x-request-id"), "probe-1");
		});
	});

	describe("access log", () => {
		it("writes one JSON line per request with method, path (no query), status, ms, request_id, sender_id; never the token", async () => {
			const gw = g.broker.getLocalService("gateway") as any;
			const sender = newSender();
			const token = await g.idp.tokenFor(sender);
			const lines: string[] = [];
			gw.accessLog = EVERY_REQUEST;
			const release = captureLines((line) => lines.push(line));
			try {
				await http(g.base, "GET", "/v1/orders/status?order_no=SECRET-REF", {
					token,
					headers: { "x-request-id": "log-1" },
				});
				await http(g.base, "GET", "/nope?x=1", { headers: { "x-request-id": "log-2" } });
			} finally {
				release();
				gw.accessLog = undefined;
			}
			assert.equal(lines.length, 2);
			const [a, b] = lines.map((l) => JSON.parse(l));
			assert.equal(a.method, "GET");
			assert.equal(a.path, "/v1/orders/status");
			assert.equal(a.status, 200);
			assert.equal(a.request_id, "log-1");
			assert.equal(a.sender_id, sender);
			assert.equal(typeof a.ms, "number");
			assert.equal(b.path, "/nope");
			assert.equal(b.status, 404);
			assert.equal(b.sender_id, null);
			assert.ok(!lines.join("").includes(token) && !lines.join("").includes("SECRET-REF"));
		});

		it("sampled (record 0127): fast successful reads only by the draw, every write, error and slow request always", async () => {
			const gw = g.broker.getLocalService("gateway") as any;
			const token = await g.idp.tokenFor(newSender());
			const lines: string[] = [];
			const release = captureLines((line) => lines.push(line));
			const draw = Math.random;
			const get = (id: string, path = "/v1/orders/status?order_no=A") =>
				http(g.base, "GET", path, { token, headers: { "x-request-id": id } });
			try {
				gw.accessLog = { sampleEvery: 100, slowMs: 60_000 };
				Math.random = () => 0.5; // out of the sample
				assert.equal((await get("out-1")).status, 200);
				assert.equal((await get("err-1", "/nope")).status, 404);
				await http(g.base, "POST", "/v1/warehouses", {
					token,
					body: {},
					headers: { "x-request-id": "write-1" },
				});
				Math.random = () => 0.001; // in the sample
				assert.equal((await get("in-1")).status, 200);
				Math.random = draw;
				gw.accessLog = { sampleEvery: 100, slowMs: 0 }; // every request is "slow"
				assert.equal((await get("slow-1")).status, 200);
			} finally {
				Math.random = draw;
				release();
				gw.accessLog = undefined;
			}
			const byId = new Map(lines.map((l) => JSON.parse(l)).map((o) => [o.request_id, o]));
			assert.deepEqual([...byId.keys()].sort(), ["err-1", "in-1", "slow-1", "write-1"], lines.join(""));
			assert.equal(byId.get("in-1").sampled, 100);
			assert.equal(byId.get("in-1").status, 200);
			for (const id of ["err-1", "write-1", "slow-1"]) assert.equal("sampled" in byId.get(id), false, id);
			assert.equal(byId.get("write-1").method, "POST");
		});

		it("a request cut off before its answer gets one line, as an answered one does", async () => {
			const gw = g.broker.getLocalService("gateway") as any;
			const token = await g.idp.tokenFor(newSender());
			const lines: string[] = [];
			const release = captureLines((line) => lines.push(line));
			const draw = Math.random;
			try {
				gw.accessLog = { sampleEvery: 100, slowMs: 60_000 };
				Math.random = () => 0.5; // out of the sample: only "cut off" writes the line
				const { port, hostname } = new URL(g.base);
				const socket = connect(Number(port), hostname);
				await new Promise((ok) => socket.once("connect", ok));
				// a body announced longer than sent: the gateway waits for it, the client goes away
				socket.write(
					`POST /v1/warehouses HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n` +
						"Content-Type: application/json\r\nContent-Length: 100\r\nX-Request-ID: cut-1\r\n\r\n{",
				);
				await new Promise((r) => setTimeout(r, 100));
				socket.destroy();
				const end = Date.now() + 2000;
				while (!lines.some((l) => l.includes('"cut-1"')) && Date.now() < end)
					await new Promise((r) => setTimeout(r, 10));
				Math.random = () => 0.001; // in the sample
				assert.equal(
					(
						await http(g.base, "GET", "/v1/orders/status?order_no=A", {
							token,
							headers: { "x-request-id": "whole-1" },
						})
					).status,
					200,
				);
				await new Promise((r) => setTimeout(r, 50)); // a second line would come now
			} finally {
				Math.random = draw;
				release();
				gw.accessLog = undefined;
			}
			const ids = lines.map((l) => JSON.parse(l).request_id);
			assert.deepEqual(ids, ["cut-1", "whole-1"], lines.join(""));
		});
	});
});
