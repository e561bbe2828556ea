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
			info.map((l) => [l.level, l.msg, l.request_id]),
			[["info", "order created { sender_id: 7 }", "req-sink"]],
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

	it("is the logger of the production broker options, with the JSON formatter", () => {
		const opts = brokerOptions() as { logger: { type: string; options: { formatter: unknown } } };
		assert.equal(opts.logger.type, "StdoutSink");
		assert.equal(opts.logger.options.formatter, jsonFormatter);
		assert.ok(new StdoutSinkLogger({}) instanceof Loggers.Formatted);
	});
});
