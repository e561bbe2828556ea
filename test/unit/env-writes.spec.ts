/**
 * Settings kept until the environment changes (lib/platform/env-writes.ts, lib/platform/config.ts `setting`; issue 32,
 * docs/decisions/0151-settings-kept-until-the-environment-changes.md): every way of writing `process.env` is counted,
 * so a setting read after it is the new value, and the watched `process.env` still behaves as Node's own object for
 * readers, spreads, child processes and worker threads.
 */
import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { Worker } from "node:worker_threads";
import { setting } from "../../lib/platform/config";
import { envWrites, isWatchedEnv } from "../../lib/platform/env-writes";

const NAME = "WEBHOOK_MAX_ENDPOINTS";

describe("settings kept until the environment changes (lib/platform/env-writes.ts)", () => {
	let saved: string | undefined;
	beforeEach(() => {
		saved = process.env[NAME];
		delete process.env[NAME];
	});
	afterEach(() => {
		if (saved === undefined) delete process.env[NAME];
		else process.env[NAME] = saved;
	});

	it("process.env is the watched one, and reading it counts no write", () => {
		assert.ok(isWatchedEnv(process.env));
		assert.equal(isWatchedEnv({ ...process.env }), false);
		const before = envWrites();
		assert.equal(setting(NAME), 20);
		assert.equal(setting(NAME), 20);
		void process.env.PATH;
		void Object.keys(process.env);
		assert.equal(envWrites(), before);
	});

	it("each way of writing a variable is seen by the next read of the setting", () => {
		assert.equal(setting(NAME), 20);
		process.env[NAME] = "3";
		assert.equal(setting(NAME), 3);
		Object.assign(process.env, { [NAME]: "4" });
		assert.equal(setting(NAME), 4);
		Object.defineProperty(process.env, NAME, {
			value: "5",
			writable: true,
			enumerable: true,
			configurable: true,
		});
		assert.equal(setting(NAME), 5);
		Reflect.set(process.env, NAME, "6");
		assert.equal(setting(NAME), 6);
		delete process.env[NAME];
		assert.equal(setting(NAME), 20);
	});

	it("a write of another variable, or of the same value, leaves the setting right", () => {
		process.env[NAME] = "7";
		assert.equal(setting(NAME), 7);
		const before = envWrites();
		process.env.MSA_TEST_ENV_WRITES_OTHER = "x";
		delete process.env.MSA_TEST_ENV_WRITES_OTHER;
		process.env[NAME] = "7";
		assert.equal(envWrites(), before + 3);
		assert.equal(setting(NAME), 7);
	});

	it("a value not allowed still refuses at each read, kept or not", () => {
		process.env[NAME] = "zero";
		assert.throws(() => setting(NAME), /WEBHOOK_MAX_ENDPOINTS must be/);
		assert.throws(() => setting(NAME), /WEBHOOK_MAX_ENDPOINTS must be/);
		process.env[NAME] = "2";
		assert.equal(setting(NAME), 2);
	});

	it("values are stored as Node stores them (strings), and spreads and key lists see them", () => {
		(process.env as Record<string, unknown>)[NAME] = 8;
		assert.equal(process.env[NAME], "8");
		assert.equal(setting(NAME), 8);
		assert.equal({ ...process.env }[NAME], "8");
		assert.ok(Object.keys(process.env).includes(NAME));
		assert.ok(NAME in process.env);
	});

	it("a child process and a worker thread are given the environment as written", async () => {
		process.env[NAME] = "9";
		const child = execFileSync(
			process.execPath,
			["-e", `process.stdout.write(String(process.env.${NAME}))`],
			{
				encoding: "utf8",
			},
		);
		assert.equal(child, "9");
		const fromWorker = await new Promise<unknown>((resolve, reject) => {
			const w = new Worker(
				`require("node:worker_threads").parentPort.postMessage(process.env.${NAME} ?? null)`,
				{ eval: true },
			);
			w.once("message", resolve);
			w.once("error", reject);
		});
		assert.equal(fromWorker, "9");
	});
});
