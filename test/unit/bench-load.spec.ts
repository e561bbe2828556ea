/**
 * The benchmarks' load generator (bench/wrk.ts): a body's `{{n}}` is unique to its request across every load of the
 * process, so a create line loaded in several turns (bench/turns.ts `alongside`) makes new orders in every turn
 * rather than answering the first turn's again as duplicates. Against a real local HTTP server, with wrk when its
 * binary is on PATH and with the process's load generator (wrk or autocannon) as the benchmarks use it.
 */
import assert from "node:assert/strict";
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { generateLoad, type WrkRequest, wrk, wrkAvailable } from "../../bench/wrk";

describe("bench load generator: {{n}} unique across loads", function () {
	this.timeout(20_000);
	const bodies: string[] = [];
	let server: ReturnType<typeof createHttpServer>;
	let url = "";

	before(async () => {
		server = createHttpServer((req, res) => {
			let body = "";
			req.setEncoding("utf8");
			req.on("data", (c: string) => {
				body += c;
			});
			req.on("end", () => {
				bodies.push(body);
				res.writeHead(201, { "content-type": "application/json" }).end("{}");
			});
		});
		await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
		url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	});
	after(() => new Promise<void>((ok) => server.close(() => ok())));

	const requests: WrkRequest[] = [
		{ method: "POST", path: "/a", headers: { "content-type": "application/json" }, body: '{"no":"X-{{n}}"}' },
		{ method: "POST", path: "/b", headers: { "content-type": "application/json" }, body: '{"no":"X-{{n}}"}' },
	];

	/** Asserts that every body seen holds a distinct `no`, none with `{{n}}` left in it. */
	function assertUnique(expected: number): void {
		const nos = bodies.map((b) => (JSON.parse(b) as { no: string }).no);
		assert.ok(nos.length >= expected, `${nos.length} requests seen, ${expected} answered`);
		assert.ok(!nos.some((n) => n.includes("{{n}}")));
		assert.equal(new Set(nos).size, nos.length, "a value of {{n}} repeated");
	}

	it("two loads of the process's generator in turn: every request's value new", async () => {
		bodies.length = 0;
		const a = await generateLoad({ url, connections: 4, durationS: 1, requests });
		const b = await generateLoad({ url, connections: 4, durationS: 1, requests });
		assert.ok(a.total > 0 && b.total > 0);
		assertUnique(a.total + b.total);
	});

	it("wrk, two loads in turn on two threads: every request's value new", async function () {
		if (!wrkAvailable()) this.skip();
		bodies.length = 0;
		const a = await wrk({ url, connections: 4, durationS: 1, requests, threads: 2 });
		const b = await wrk({ url, connections: 4, durationS: 1, requests, threads: 2 });
		assert.ok(a.total > 0 && b.total > 0);
		assertUnique(a.total + b.total);
	});
});
