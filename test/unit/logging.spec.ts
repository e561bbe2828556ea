/** Request ids on log lines (lib/platform/logging.ts). */
import { strict as assert } from "node:assert";
import { ServiceBroker } from "moleculer";
import { currentRequestId, jsonFormatter, RequestContextMiddleware } from "../../lib/platform/logging";

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
