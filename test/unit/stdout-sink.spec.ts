/**
 * The asynchronous stdout of lib/platform/stdout-sink.ts (issue 32), in a
 * real child process writing to a real pipe: every line arrives whole and in
 * order, also those still queued when the process exits, and lines of the
 * synchronous console logger written meanwhile never split one.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { resolve } from "node:path";

const root = resolve(__dirname, "../..");

/** Runs `code` (TypeScript, through tsx) in a child; answers its stdout. */
function run(code: string): Promise<string> {
	return new Promise((ok, fail) => {
		const child = spawn(process.execPath, ["--require", "tsx/cjs", "-e", code], {
			cwd: root,
			stdio: ["ignore", "pipe", "inherit"],
		});
		let out = "";
		child.stdout.on("data", (d: Buffer) => {
			out += d.toString();
		});
		child.once("error", fail);
		child.once("exit", (c) => (c === 0 ? ok(out) : fail(new Error(`exit ${c}`))));
	});
}

describe("stdout sink: asynchronous, batched, atomic lines", function () {
	this.timeout(30_000);

	it("delivers every line whole and in order, the ones queued at exit included, between console lines", async () => {
		const out = await run(`
			const { writeLine } = require("./lib/platform/stdout-sink");
			for (let i = 0; i < 20000; i++) {
				writeLine(JSON.stringify({ n: i, pad: "x".repeat(i % 300) }) + "\\n");
				if (i % 1000 === 0) console.log(JSON.stringify({ console: i }));
			}
			process.exit(0);
		`);
		const lines = out.split("\n").filter(Boolean);
		const parsed = lines.map((l) => JSON.parse(l) as { n?: number; console?: number });
		const ours = parsed.filter((p) => p.n !== undefined).map((p) => p.n);
		assert.equal(ours.length, 20_000);
		assert.deepEqual(
			ours,
			[...ours].sort((a, b) => (a ?? 0) - (b ?? 0)),
		);
		assert.equal(parsed.filter((p) => p.console !== undefined).length, 20);
	});
});
