/** Request ids on log lines (lib/platform/logging.ts). */
import { strict as assert } from "node:assert";
import { Loggers, ServiceBroker } from "moleculer";
import {
	currentRequestId,
	jsonFormatter,
	RequestContextMiddleware,
	StdoutSinkLogger,
} from "../../lib/platform/logging";
import { captureLines } from "../../lib/platform/stdout-sink";
import brokerOptions from "../../moleculer.config";

describe("logging: request id on every log line", () => {
	let broker: ServiceBroker;
	const lines: string[] = [];
	before(async () => {
		broker = new ServiceBroker({
			logger: {
				type: "Console",
				options: { level: "info", formatter: jsonFormatter, colors: false },
			},
			middlewares: [RequestContextMiddleware as any],
		});
		broker.createService({
			name: "probe",
			actions: {
				outer(ctx) {
					this.logger.info("outer handled");
					return ctx.call("probe.inner");
				},
				async inner() {
					await new Promise((r) => setTimeout(r, 5));
					this.logger.info("inner handled");
					return currentRequestId();
				},
			},
		});
		await broker.start();
	});
	after(() => broker.stop());

	it("binds the caller's request id to nested calls and their log lines", async () => {
		const orig = console.log;
		console.log = (...a: unknown[]) => lines.push(a.join(" "));
		try {
			const [a, b] = await Promise.all([
				broker.call("probe.outer", {}, { requestID: "req-a" }),
				broker.call("probe.outer", {}, { requestID: "req-b" }),
			]);
			assert.equal(a, "req-a");
			assert.equal(b, "req-b");
		} finally {
			console.log = orig;
		}
		const parsed = lines.map((l) => JSON.parse(l)).filter((l) => /handled/.test(l.msg));
		assert.equal(parsed.length, 4);
		for (const l of parsed) assert.match(l.request_id, /^req-[ab]$/);
		assert.equal(parsed.filter((l) => l.request_id === "req-a").length, 2);
	});

	it("has no request id outside a call", () => {
		assert.equal(currentRequestId(), undefined);
	});
});

describe("logging: the StdoutSink logger (info and below asynchronous, warn and above on stderr)", () => {
	it("writes info lines through the asynchronous stdout sink, warn and error to stderr at once, nothing below its level", async () => {
		const broker = new ServiceBroker({
			nodeID: "sink-test",
			logger: { type: "StdoutSink", options: { level: "info", formatter: jsonFormatter, colors: false } },
			middlewares: [RequestContextMiddleware as any],
		});
		broker.createService({
			name: "probe",
			actions: {
				speak() {
					this.logger.debug("too fine");
					this.logger.info("order created", { sender_id: 7 });
					this.logger.warn("courier slow");
					this.logger.error("courier down");
					return true;
				},
			},
		});
		const sink: string[] = [];
		const stderr: string[] = [];
		const release = captureLines((line) => sink.push(line));
		const write = process.stderr.write;
		process.stderr.write = ((chunk: string | Uint8Array) => {
			stderr.push(String(chunk));
			return true;
		}) as typeof process.stderr.write;
		try {
			await broker.start();
			await broker.call("probe.speak", {}, { requestID: "req-sink" });
		} finally {
			process.stderr.write = write;
			release();
			await broker.stop();
		}
		const mine = (lines: string[]) =>
			lines.filter((l) => l.includes('"mod":"probe"')).map((l) => JSON.parse(l) as Record<string, unknown>);
		const info = mine(sink).filter((l) => l.request_id !== undefined);
		assert.deepEqual(
			info.map((l) => [l.level, l.msg, l.request_id, l.sender_id]),
			[["info", "order created", "req-sink", 7]],
		);
		assert.ok(
			sink.every((l) => l.endsWith("\n")),
			"one line per write, newline-terminated",
		);
		assert.deepEqual(
			mine(stderr).map((l) => [l.level, l.msg]),
			[
				["warn", "courier slow"],
				["error", "courier down"],
			],
		);
		// the service's and the broker's own info lines (started, stopped) took the same way
		assert.ok(mine(sink).some((l) => l.msg === "Service 'probe' started."));
		assert.ok(sink.some((l) => l.includes('"mod":"broker"')));
		assert.ok(!stderr.some((l) => l.includes('"level":"info"')));
	});

	it("writes an object literal's fields as the line's fields; other objects and unwritable fields into msg", async () => {
		const broker = new ServiceBroker({
			nodeID: "fields-test",
			logger: { type: "StdoutSink", options: { level: "info", formatter: jsonFormatter, colors: false } },
			middlewares: [RequestContextMiddleware as any],
		});
		const cyclic: Record<string, unknown> = { a: 1 };
		cyclic.self = cyclic;
		class Point {
			constructor(readonly x: number) {}
		}
		broker.createService({
			name: "fields",
			actions: {
				speak() {
					this.logger.info(
						"order created",
						{ order_id: "o-1", changed: ["weight"], nested: { cod: true } },
						3,
					);
					this.logger.info("collides", { msg: "mine", level: "x", request_id: "forged", data: 1, ok: true });
					this.logger.info("two objects", { a: 1 }, { b: 2 });
					this.logger.info("failed", { err: Object.assign(new Error("courier down"), { code: "E_DOWN" }) });
					this.logger.info("a class instance", new Point(4));
					this.logger.info("unwritable", { big: 10n }, { cyclic });
					return true;
				},
			},
		});
		const sink: string[] = [];
		const release = captureLines((line) => sink.push(line));
		try {
			await broker.start();
			await broker.call("fields.speak", {}, { requestID: "req-fields" });
		} finally {
			release();
			await broker.stop();
		}
		const lines = sink
			.filter((l) => l.includes('"mod":"fields"') && l.includes("req-fields"))
			.map((l) => JSON.parse(l) as Record<string, unknown>);
		assert.equal(lines.length, 6);
		const [created, collides, two, failed, instance, unwritable] = lines;
		// fields after the line's own keys, the words in msg
		assert.deepEqual(Object.keys(created).slice(0, 3), ["ts", "level", "msg"]);
		assert.equal(created.msg, "order created 3");
		assert.equal(created.order_id, "o-1");
		assert.deepEqual(created.changed, ["weight"]);
		assert.deepEqual(created.nested, { cod: true });
		// a field named like a key of the line goes under data; the line's own keys stay
		assert.equal(collides.msg, "collides");
		assert.equal(collides.level, "info");
		assert.equal(collides.request_id, "req-fields");
		assert.equal(collides.ok, true);
		assert.deepEqual(collides.data, { msg: "mine", level: "x", request_id: "forged", data: 1 });
		assert.equal(two.a, 1);
		assert.equal(two.b, 2);
		// an Error field: name, message, code and stack
		const err = failed.err as Record<string, unknown>;
		assert.equal(err.name, "Error");
		assert.equal(err.message, "courier down");
		assert.equal(err.code, "E_DOWN");
		assert.match(String(err.stack), /courier down\n\s+at /);
		// not an object literal: printed into msg
		assert.equal(instance.msg, "a class instance Point { x: 4 }");
		// JSON cannot write a BigInt or a cycle: the whole call printed into msg, no field of it on the line
		assert.match(
			String(unwritable.msg),
			/^unwritable \{ big: 10n \} \{ cyclic: <ref \*1> \{ a: 1, self: \[Circular \*1\] \} \}$/,
		);
		assert.equal(unwritable.big, undefined);
		assert.equal(unwritable.cyclic, undefined);
		assert.equal(unwritable.request_id, "req-fields");
	});

	it("is the logger of the production broker options, with the JSON formatter", () => {
		const opts = brokerOptions() as { logger: { type: string; options: { formatter: unknown } } };
		assert.equal(opts.logger.type, "StdoutSink");
		assert.equal(opts.logger.options.formatter, jsonFormatter);
		assert.ok(new StdoutSinkLogger({}) instanceof Loggers.Formatted);
	});
});
