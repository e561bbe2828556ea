/**
 * What one remote call costs (issue 32; printed figures, not a test): a broker in this process calls a trivial
 * action hosted by a broker in a child process, over the NATS of `TEST_NATS_URL`, from BENCH_CONNECTIONS (50)
 * concurrent loops for BENCH_DURATION (5) s after a 2 s warm-up. Two configurations, each in the same run:
 *
 *   anchor   Moleculer's defaults (JSON serializer, balancer, no logger, no metrics), as b-nats's brokers
 *   ours     the production broker options (moleculer.config.ts: CBOR, queue groups, every middleware, metrics on)
 *
 * For each: calls/s and the CPU per call of the caller and of the callee (/proc). The difference between the
 * two rows is what our broker options add to every hop of the split topology (the middlewares, the serializer,
 * the queue groups, metrics), without HTTP.
 *
 * Usage: npm run bench:hop   (env: TEST_NATS_URL, BENCH_DURATION, BENCH_CONNECTIONS)
 */
import { fork } from "node:child_process";
import { type BrokerOptions, ServiceBroker } from "moleculer";
import { loadConfig } from "../lib/platform/config";
import brokerOptions from "../moleculer.config";
import { freePort } from "../test/helpers/net";
import { cpuMeter, natsUrl } from "./lib";

const duration = Number(process.env.BENCH_DURATION || 5);
const connections = Number(process.env.BENCH_CONNECTIONS || 50);

/** Broker options of configuration `cfg` for node `nodeID` in namespace `ns` (metrics, when on, on `metricsPort`). */
function optionsOf(cfg: string, nodeID: string, ns: string, metricsPort: string): BrokerOptions {
	if (cfg === "anchor")
		return {
			nodeID,
			namespace: ns,
			transporter: { type: "NATS", options: { url: natsUrl } },
			logger: false,
			metrics: false,
			tracing: false,
		};
	// process-wide: the metrics reporter reads METRICS_PORT from the environment itself
	Object.assign(process.env, {
		TRANSPORTER: natsUrl,
		NAMESPACE: ns,
		LOGLEVEL: "warn",
		METRICS_PORT: metricsPort,
	});
	return brokerOptions(loadConfig(), { nodeID });
}

/** The child's side: hosts `hop.ping` until told to stop. */
async function callee(): Promise<void> {
	const b = new ServiceBroker(
		optionsOf(
			process.env.HOP_CFG ?? "ours",
			"hop-callee",
			process.env.HOP_NS ?? "",
			process.env.HOP_METRICS ?? "0",
		),
	);
	b.createService({
		name: "hop",
		actions: {
			ping(ctx) {
				const user = ctx.meta.user as { sender_id?: number } | undefined;
				return { ok: true, sender_id: user?.sender_id ?? null };
			},
		},
	});
	await b.start();
	process.send?.("ready");
	process.once("message", async () => {
		await b.stop();
		process.exit(0);
	});
}

/** One configuration: a callee process, a caller here, the load; prints its line. */
async function measure(cfg: string): Promise<void> {
	const ns = `hop-${cfg}-${process.pid}-${Date.now().toString(36)}`;
	const child = fork(__filename, [], {
		env: {
			...process.env,
			HOP_ROLE: "callee",
			HOP_CFG: cfg,
			HOP_NS: ns,
			HOP_METRICS: String(await freePort()),
		},
		execArgv: ["--require", "tsx/cjs"],
	});
	await new Promise((r) => child.once("message", r));
	const b = new ServiceBroker(optionsOf(cfg, "hop-caller", ns, String(await freePort())));
	await b.start();
	try {
		await b.waitForServices(["hop"], 20_000);
		const meta = { user: { sender_id: 900001, role: "merchant", caps: ["orders.write"], read_only: false } };
		const load = async (ms: number): Promise<number> => {
			let n = 0;
			const end = Date.now() + ms;
			await Promise.all(
				Array.from({ length: connections }, async () => {
					while (Date.now() < end) {
						await b.call("hop.ping", {}, { meta: { ...meta } });
						n++;
					}
				}),
			);
			return n;
		};
		await load(2000);
		const mine = cpuMeter([process.pid]);
		const theirs = cpuMeter([child.pid as number]);
		const t0 = Date.now();
		const n = await load(duration * 1000);
		const s = (Date.now() - t0) / 1000;
		const per = (cpu: number) => `${String(Math.round((cpu * 1e6) / n)).padStart(4)} µs`;
		console.log(
			`${cfg.padEnd(7)} ${String(Math.round(n / s)).padStart(7)} calls/s   CPU per call: caller ${per(mine())}, callee ${per(theirs())}`,
		);
	} finally {
		child.send("stop");
		await b.stop();
		await new Promise((r) => child.once("exit", r));
	}
}

async function main(): Promise<void> {
	if (process.env.HOP_ROLE === "callee") return callee();
	console.log(
		`remote call over NATS, ${connections} concurrent loops, ${duration} s per line, node ${process.version}`,
	);
	for (const cfg of ["anchor", "ours"]) await measure(cfg);
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
