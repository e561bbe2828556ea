/**
 * Resident memory per service (issue 13; `npm run bench:rss`; printed figures,
 * not a test): builds the compiled JavaScript (`tsc -p tsconfig.build.json`),
 * starts each Deployment of k8s/base in its own process as production runs
 * it (`start:prod`, its manifest's environment: intake and intake-bulk apart)
 * over the real NATS, PostgreSQL and Redis, and reads each
 * process's VmRSS (/proc/<pid>/status):
 *
 * - at rest: RSS_REST_S (default 10) seconds after the processes started;
 * - under load: the highest value sampled every 250 ms while the typical flow
 *   (warehouse → quote → order → book → status → label) runs RSS_RATE
 *   (default 3) times a second for RSS_LOAD_S (default 10) seconds.
 *
 * Prints one row per service with the memory request and limit of its
 * manifest (k8s/base/<service>.yaml, the simulator's in k8s/overlays/dev/)
 * and the margin between the request and the measured peak. Exits 1 when a
 * peak exceeds its request. The same check runs in CI (test/e2e/split.spec.ts).
 *
 * Usage: npm run bench:rss   (env: RSS_REST_S, RSS_RATE, RSS_LOAD_S)
 */
import { startChaosCluster } from "../test/chaos/harness";
import { compareWithManifests, deploymentGroups, formatRssTable, RssSampler } from "../test/chaos/rss";
import { typicalFlow } from "../test/helpers/flow";
import { buildOnce } from "../test/helpers/processes";

const restS = Number(process.env.RSS_REST_S || 10);
const rate = Number(process.env.RSS_RATE || 3);
const loadS = Number(process.env.RSS_LOAD_S || 10);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<number> {
	await buildOnce();
	const t0 = Date.now();
	const c = await startChaosCluster({
		groups: deploymentGroups(),
		compiled: true,
	});
	try {
		const sampler = new RssSampler(c);
		await sleep(Math.max(0, t0 + restS * 1000 - Date.now()));
		sampler.rest();
		const base = c.gateways()[0].probe;
		sampler.start();
		const flows: Promise<unknown>[] = [];
		let failed = 0;
		const n = Math.max(1, Math.round(rate * loadS));
		for (let i = 0; i < n; i++) {
			flows.push(
				typicalFlow(base, c.token).catch((err: unknown) => {
					failed++;
					if (failed === 1) console.error(`a typical flow failed: ${(err as Error).message}`);
				}),
			);
			await sleep(1000 / rate);
		}
		await Promise.all(flows);
		sampler.stop();
		const rows = compareWithManifests([...sampler.rows.values()]);
		console.log(
			`\nRSS (MiB, VmRSS) per service, each alone in its compiled process (node ${process.version}):` +
				` at rest ${restS} s after start; under load = peak during ${n} typical flows at ${rate}/s (${failed} failed)\n`,
		);
		console.log(formatRssTable(rows));
		const over = rows.filter((r) => r.over);
		if (over.length) console.log(`\nover the manifest's request: ${over.map((r) => r.service).join(", ")}`);
		return over.length || failed ? 1 : 0;
	} finally {
		await c.close();
	}
}

main().then(
	(code) => process.exit(code),
	(err) => {
		console.error(err);
		process.exit(1);
	},
);
