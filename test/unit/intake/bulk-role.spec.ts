/**
 * The bulk worker role (lib/intake/bulk/role.ts) and the pacing of streamed
 * calls (lib/platform/paced-stream.ts), issue 10.
 */
import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { PassThrough, Readable } from "node:stream";
import { bulkNice, bulkRole, lowerThreadsPriority } from "../../../lib/intake/bulk/role";
import { pacedStream } from "../../../lib/platform/paced-stream";

describe("intake: bulk worker role (INTAKE_BULK_WORKER, INTAKE_BULK_NICE)", () => {
	it("reads on / off / only (default on) and refuses anything else", () => {
		assert.equal(bulkRole({}), "on");
		assert.equal(bulkRole({ INTAKE_BULK_WORKER: "" }), "on");
		assert.equal(bulkRole({ INTAKE_BULK_WORKER: "off" }), "off");
		assert.equal(bulkRole({ INTAKE_BULK_WORKER: " ONLY " }), "only");
		assert.throws(() => bulkRole({ INTAKE_BULK_WORKER: "yes" }), /must be on, off or only/);
	});

	it("nice: default 10, an integer 0–19, anything else refuses", () => {
		assert.equal(bulkNice({}), 10);
		assert.equal(bulkNice({ INTAKE_BULK_NICE: "4" }), 4);
		assert.equal(bulkNice({ INTAKE_BULK_NICE: "19" }), 19);
		for (const bad of ["40", "-5", "x", "2.5"])
			assert.throws(
				() => bulkNice({ INTAKE_BULK_NICE: bad }),
				new RegExp(`INTAKE_BULK_NICE must be an integer from 0 to 19 \\(got "${bad.replace(".", "\\.")}"\\)`),
			);
	});

	it("lowers every thread of a process, and threads started afterwards inherit it (Linux)", function () {
		if (process.platform !== "linux") this.skip();
		// in a child process: the test process keeps its own priority
		const script = `
			const { lowerThreadsPriority } = require(${JSON.stringify(require.resolve("../../../lib/intake/bulk/role"))});
			const { readdirSync, readFileSync } = require("node:fs");
			const { Worker } = require("node:worker_threads");
			const nices = () => readdirSync("/proc/self/task").map((t) => Number(readFileSync("/proc/self/task/" + t + "/stat", "utf8").split(") ")[1].split(" ")[16]));
			const before = nices();
			const target = Math.min(19, Math.max(...before) + 3);
			const changed = lowerThreadsPriority(target);
			const w = new Worker("setTimeout(() => {}, 300)", { eval: true });
			w.on("online", () => {
				setTimeout(() => {
					console.log(JSON.stringify({ before, target, changed, after: nices(), again: lowerThreadsPriority(target) }));
					w.terminate();
				}, 100);
			});
		`;
		const out = JSON.parse(
			execFileSync(process.execPath, ["--require", "tsx/cjs", "-e", script], { encoding: "utf8" }),
		) as { before: number[]; target: number; changed: number; after: number[]; again: number };
		if (out.before.some((n) => n >= 19)) this.skip(); // already at the lowest priority: nothing to observe
		assert.ok(
			out.before.every((n) => n < out.target),
			JSON.stringify(out),
		);
		assert.equal(out.changed, out.before.length);
		assert.ok(out.after.length > out.before.length, "the worker's threads are listed");
		assert.ok(
			out.after.every((n) => n === out.target),
			`every thread, the worker's included, at nice ${out.target}: ${out.after}`,
		);
		assert.equal(out.again, 0, "a thread already at that nice is left alone");
		assert.equal(lowerThreadsPriority(0), 0, "nice 0 changes nothing");
	});
});

describe("paced streams (lib/platform/paced-stream.ts)", () => {
	it("passes every byte in order, one chunk per turn of the event loop", async () => {
		const chunks = Array.from({ length: 40 }, (_, i) => Buffer.alloc(64 * 1024, i));
		const paced = pacedStream(Readable.from(chunks));
		let turns = 0;
		let ticking = true;
		const tick = () => {
			turns++;
			if (ticking) setImmediate(tick);
		};
		setImmediate(tick);
		const got: Buffer[] = [];
		for await (const c of paced) got.push(c as Buffer);
		ticking = false;
		assert.ok(Buffer.concat(got).equals(Buffer.concat(chunks)));
		assert.ok(turns >= chunks.length, `${turns} event-loop turns for ${chunks.length} chunks`);
	});

	it("an error of the source (the 413 size cut) reaches the reader with the same error", async () => {
		const src = new PassThrough();
		const paced = pacedStream(src);
		const cut = Object.assign(new Error("Payload too large"), { code: 413 });
		src.write(Buffer.from("first part"));
		setTimeout(() => src.destroy(cut), 10);
		const err = await (async () => {
			try {
				for await (const _ of paced) {
					// reading until the error
				}
			} catch (e) {
				return e;
			}
			return null;
		})();
		assert.equal(err, cut);
	});
});
