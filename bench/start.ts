/**
 * Where a restart goes (issue 30; `npm run bench:start`; printed figures, not
 * a test): builds `dist/`, starts every Deployment of k8s/base in its own
 * compiled process as production runs it (`start:prod` or the manifest's
 * args and environment; test/chaos/rss.ts `deploymentGroups`) over the real
 * NATS, PostgreSQL and Redis, then kills each of START_SERVICES (default
 * booking,intake,rates,warehouses,gateway) with SIGKILL and starts it again at
 * once, as a supervisor would. Prints per restart:
 *
 * - restart → `/ready` 200 (its gateway's, or its HEALTH_PORT probe's);
 * - the process's own phases (its `start phases` log line,
 *   lib/platform/system.ts `startPhasesLine`): module load before
 *   `startSystem`, configuration, service modules loaded, NATS connected
 *   (Moleculer's connect, subscriptions and discovery), services started
 *   (migrations check, pools, BullMQ workers, channel consumers), ready
 *   (queue-group subscriptions, probes);
 * - restart → the first create + book through the gateway answered 202
 *   (services on that path only).
 *
 * Usage: npm run bench:start   (env: START_SERVICES)
 */
import { type ChaosCluster, startChaosCluster } from "../test/chaos/harness";
import { deploymentGroups } from "../test/chaos/rss";
import { orderBody } from "../test/helpers/fixtures";
import { client } from "../test/helpers/flow";
import { buildOnce } from "../test/helpers/processes";

const wanted = (process.env.START_SERVICES || "booking,intake,rates,warehouses,gateway").split(",");
/** The services a create + book goes through (their restart is measured to the first 202). */
const ON_BOOK_PATH = new Set(["gateway", "intake", "booking", "rates", "warehouses", "pincode"]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Creates an order and books it, retrying every 50 ms; resolves when the booking answered 202. */
async function firstBooking(c: ChaosCluster, ref: string): Promise<number> {
	const api = client(c.gateways()[0].probe, c.token);
	for (;;) {
		const o = await api.post("/v1/intake/order", orderBody(c.warehouseId, ref)).catch(() => undefined);
		const id = o?.body?.order_id;
		if (typeof id === "number") {
			const b = await api.post("/v1/shipping/book", { order_id: id }).catch(() => undefined);
			if (b?.status === 202 || b?.status === 409) return Date.now();
		}
		await sleep(50);
	}
}

async function main(): Promise<void> {
	await buildOnce();
	const c = await startChaosCluster({
		groups: deploymentGroups(),
		compiled: true,
		env: { LOGLEVEL: "info" },
	});
	const rows: string[] = [];
	try {
		// settled: the first minute's sweeps and syncs out of the way
		await sleep(3000);
		for (const name of wanted) {
			const key = `${name}-0`;
			if (!c.members.has(key)) continue;
			const rec = await c.fault(key, "SIGKILL");
			const restarted = rec.restartedAt ?? rec.at;
			const first = ON_BOOK_PATH.has(name) ? await firstBooking(c, `ST-${name}-${Date.now()}`) : undefined;
			const m = c.members.get(key);
			const line = m?.proc
				.output()
				.split("\n")
				.find((l) => l.includes("start phases"));
			const phases = line ? (JSON.parse(line) as { msg: string }).msg : "(no start phases line)";
			rows.push(
				`${name.padEnd(12)} ${`${(rec.readyAt ?? restarted) - restarted}`.padStart(8)} ${
					first === undefined ? "       –" : `${first - restarted}`.padStart(8)
				}   ${phases.replace(/^start phases \(ms\): /, "")}`,
			);
		}
	} finally {
		await c.close();
	}
	console.log(
		`\nRestart of each process with SIGKILL, started again at once (compiled, node ${process.version}); ms\n`,
	);
	console.log("service      →ready  →1st book   the process's own phases (ms since it began)");
	for (const r of rows) console.log(r);
}

main().then(
	() => process.exit(0),
	(err) => {
		console.error(err);
		process.exit(1);
	},
);
