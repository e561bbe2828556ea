/**
 * Trace ids across services (issue 13; lib/platform/logging.ts): two brokers on the
 * real NATS; a log line written by a service called over NATS carries the
 * caller's request id (the gateway's X-Request-ID, Moleculer's
 * `ctx.requestID`), its own `call_id`, and the caller's call id as
 * `parent_id`. The metrics of a NATS broker count transporter traffic.
 */
import assert from "node:assert/strict";
import { type Context, ServiceBroker } from "moleculer";
import { jsonFormatter } from "../../../lib/platform/logging";
import { testBrokerOptions } from "../../helpers/broker";
import { freePort } from "../../helpers/net";

interface Line {
	msg: string;
	request_id?: string;
	call_id?: string;
	parent_id?: string;
	nodeID?: string;
}

describe("ops: trace ids follow a request across NATS", function () {
	this.timeout(30_000);
	const lines: Line[] = [];
	const orig = { log: console.log, info: console.info, warn: console.warn };
	let a: ServiceBroker;
	let b: ServiceBroker;
	let metricsPort = 0;
	const savedPort = process.env.METRICS_PORT;

	before(async () => {
		const capture = (...args: unknown[]) => {
			for (const s of args.map(String))
				if (s.startsWith("{")) {
					try {
						lines.push(JSON.parse(s) as Line);
					} catch {
						/* not ours */
					}
				}
		};
		console.log = capture;
		console.info = capture;
		const logger = { type: "Console", options: { level: "info", formatter: jsonFormatter, colors: false } };
		metricsPort = await freePort();
		process.env.METRICS_PORT = String(metricsPort);
		a = new ServiceBroker(testBrokerOptions(true, { nodeID: `trace-a-${process.pid}`, logger }));
		process.env.METRICS_PORT = "off";
		b = new ServiceBroker(testBrokerOptions(true, { nodeID: `trace-b-${process.pid}`, logger }));
		if (savedPort === undefined) delete process.env.METRICS_PORT;
		else process.env.METRICS_PORT = savedPort;
		a.createService({
			name: "tracea",
			actions: {
				async outer(ctx: Context) {
					this.logger.info("outer: calling inner");
					return ctx.call("traceb.inner");
				},
			},
		});
		b.createService({
			name: "traceb",
			actions: {
				async inner() {
					await new Promise((r) => setTimeout(r, 5));
					this.logger.info("inner: handled");
					return "ok";
				},
			},
		});
		await Promise.all([a.start(), b.start()]);
		await a.waitForServices(["traceb"], 10_000);
	});
	after(async () => {
		await Promise.all([a?.stop(), b?.stop()]);
		Object.assign(console, orig);
	});

	it("a log line of a service called over NATS carries the caller's request id, its call id and its parent", async () => {
		// the gateway sets X-Request-ID as the root call's requestID (services/gateway.service.ts beginRequest)
		const results = await Promise.all([
			a.call("tracea.outer", {}, { requestID: "req-trace-1" }),
			a.call("tracea.outer", {}, { requestID: "req-trace-2" }),
		]);
		assert.deepEqual(results, ["ok", "ok"]);
		for (const id of ["req-trace-1", "req-trace-2"]) {
			const outer = lines.find((l) => l.msg === "outer: calling inner" && l.request_id === id);
			const inner = lines.find((l) => l.msg === "inner: handled" && l.request_id === id);
			assert.ok(outer && inner, `${id}: ${JSON.stringify(lines)}`);
			assert.equal(outer.nodeID, a.nodeID);
			assert.equal(inner.nodeID, b.nodeID, "inner ran on the other broker (over NATS)");
			assert.ok(outer.call_id && inner.call_id && inner.call_id !== outer.call_id);
			assert.equal(inner.parent_id, outer.call_id);
		}
	});

	it("without a caller's id a root call starts its own trace (its call id)", async () => {
		await a.call("tracea.outer", {});
		const outer = lines.filter((l) => l.msg === "outer: calling inner").at(-1);
		const inner = lines.filter((l) => l.msg === "inner: handled").at(-1);
		assert.ok(outer?.request_id && outer.request_id === outer.call_id);
		assert.equal(inner?.request_id, outer.request_id);
		assert.equal(outer.parent_id, undefined);
	});

	it("the metrics of a NATS broker count transporter traffic", async () => {
		const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
		const sent = /^moleculer_transporter_packets_sent_total\{[^}]*\} (\d+)$/m.exec(text);
		assert.ok(sent && Number(sent[1]) > 0, text.slice(0, 2000));
		assert.match(text, /^moleculer_request_total\{[^}]*action="tracea\.outer"[^}]*\} [1-9]/m);
	});
});
