/**
 * Gateway headers on every response (`x-request-id`, nosniff) and the
 * structured access-log line.
 */

import assert from "node:assert/strict";
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
			gw.accessLog = true;
			const release = captureLines((line) => lines.push(line));
			try {
				await http(g.base, "GET", "/v1/orders/status?order_no=SECRET-REF", {
					token,
					headers: { "x-request-id": "log-1" },
				});
				await http(g.base, "GET", "/nope?x=1", { headers: { "x-request-id": "log-2" } });
			} finally {
				release();
				gw.accessLog = false;
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
	});
});
