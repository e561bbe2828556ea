/**
 * Where a route's CPU goes (issue 32): starts the system as bench/run.ts does
 * (one process, production defaults on) under `node --cpu-prof`, loads one
 * route with the load generator bench/run.ts uses (bench/wrk.ts: wrk when installed, else autocannon;
 * BENCH_CONNECTIONS, BENCH_DURATION), so the CPU per request is the one the bench's table prints, stops the system
 * and prints the profile's self time (samples of the load's window only) by package / our folder and the top
 * functions, plus the PostgreSQL statements and Redis commands the route ran
 * per request (pg_stat_statements is not needed: the counts come from
 * `pg_stat_database.xact_commit + xact_rollback` and Redis `INFO commandstats`
 * before and after).
 *
 * Usage: npx tsx bench/profile.ts <route>   where <route> is one of
 *   pincode | serviceable | status | detail | list | create
 * With BENCH_SPLIT=1 the system runs split over NATS and each process's profile is printed (in start order:
 * the gateway's first). Profiles are written to BENCH_PROFILE_DIR (default /tmp/msa-profile); BENCH_SYSTEM_ENV (JSON)
 * overrides the system's environment (e.g. one production default off); BENCH_PROFILE=0
 * measures without the profiler; BENCH_PROFILE_TOP sets how many functions are listed (30); BENCH_ACCOUNTS=n has the
 * list read by n accounts in turn, 60 orders each (bench/run.ts reads it with 20), instead of one.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import IORedis from "ioredis";
import { Client } from "pg";
import { orderBody, warehouseBody } from "../test/helpers/fixtures";
import { client } from "../test/helpers/flow";
import { cpuMeter, envFromJson, postgresCpuMeter, productionDefaults, startSystem } from "./lib";
import { generateLoad, loadgen, type WrkRequest } from "./wrk";

const duration = Number(process.env.BENCH_DURATION || 10);
const connections = Number(process.env.BENCH_CONNECTIONS || 50);
const dir = process.env.BENCH_PROFILE_DIR || "/tmp/msa-profile";

/** A node of a V8 .cpuprofile. */
interface ProfileNode {
	id: number;
	callFrame: { functionName: string; url: string; lineNumber: number };
	children?: number[];
}

/** A V8 .cpuprofile: sample timestamps are `startTime` + the running sum of `timeDeltas` (µs). */
interface Profile {
	nodes: ProfileNode[];
	samples: number[];
	timeDeltas: number[];
	startTime: number;
	endTime: number;
}

/**
 * Self milliseconds per node id of the samples taken in [from, to] (µs, the
 * profile's own clock): the load's window, so the start (compiling, seeding)
 * and the stop are not counted against the route.
 */
function selfTimes(p: Profile, from: number, to: number): Map<number, number> {
	const out = new Map<number, number>();
	let t = p.startTime;
	p.samples.forEach((id, i) => {
		const dt = p.timeDeltas[i] ?? 0;
		t += dt;
		if (t < from || t > to) return;
		out.set(id, (out.get(id) ?? 0) + dt / 1000);
	});
	return out;
}

/** The package (node_modules/<name>) or our folder (lib/<x>, services) of a script URL. */
function ownerOf(url: string): string {
	if (!url) return "(native / GC / idle)";
	const nm = url.lastIndexOf("node_modules/");
	if (nm >= 0) {
		const rest = url.slice(nm + "node_modules/".length).split("/");
		return rest[0].startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0];
	}
	const m = /\/(lib\/[^/]+|services|mixins|bin)\//.exec(url);
	if (m) return m[1];
	if (url.startsWith("node:")) return "node:";
	return url;
}

/** Prints the top rows of a tally, with percentages of `total`. */
function top(title: string, tally: Map<string, number>, total: number, n: number): void {
	console.log(`\n${title}`);
	for (const [k, ms] of [...tally].sort((a, b) => b[1] - a[1]).slice(0, n))
		console.log(`${((100 * ms) / total).toFixed(1).padStart(6)} %  ${ms.toFixed(0).padStart(7)} ms  ${k}`);
}

async function main(): Promise<void> {
	const route = process.argv[2] ?? "status";
	rmSync(dir, { recursive: true, force: true });
	mkdirSync(dir, { recursive: true });
	const sys = await startSystem({
		...(await productionDefaults()),
		...(process.env.BENCH_PROFILE === "0" ? {} : { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${dir}` }),
		// e.g. BENCH_SYSTEM_ENV='{"RATE_LIMIT_ACCOUNT_PER_MIN":"0"}' to weigh one default
		...envFromJson("BENCH_SYSTEM_ENV"),
	});
	let requests = 0;
	let loadStart = 0;
	let loadEnd = 0;
	const pg = new Client({ connectionString: sys.databaseUrl });
	const redis = new IORedis(process.env.TEST_REDIS_URL || "redis://127.0.0.1:6379");
	try {
		await pg.connect();
		const auth = { authorization: `Bearer ${sys.token}` };
		const nos: string[] = [];
		const ids: number[] = [];
		for (let i = 0; i < 60; i++) {
			const no = `PROF-${sys.run}-${i}`;
			const r = await sys.api.post("/v1/intake/order", orderBody(sys.warehouseId, no));
			nos.push(no);
			ids.push(r.body.order_id as number);
		}
		// BENCH_ACCOUNTS=n: the list is read by n accounts in turn (60 orders each), as bench/run.ts reads it
		const listAuths = [auth];
		for (let a = 1; a < Number(process.env.BENCH_ACCOUNTS || 1); a++) {
			const token = await sys.tokenFor(900_001 + a);
			const c = client(sys.base, token);
			const wh = await c.post("/v1/warehouses", warehouseBody());
			for (let i = 0; i < 60; i++)
				await c.post("/v1/intake/order", orderBody(wh.body.data.id as number, `PROF-${sys.run}-${a}-${i}`));
			listAuths.push({ authorization: `Bearer ${token}` });
		}
		const get = (path: string): WrkRequest => ({ method: "GET", path, headers: auth });
		const paths: Record<string, () => WrkRequest[]> = {
			pincode: () => [get("/v1/pincode/560001")],
			serviceable: () => [
				get(
					"/v1/shipping/serviceable?from_pin=110001&to_pin=560001&physical_weight=0.8&order_type=1&collectable_amount=1499",
				),
			],
			status: () => nos.map((no) => get(`/v1/orders/status?order_no=${no}`)),
			detail: () => ids.map((id) => get(`/v1/orders/${id}`)),
			list: () =>
				listAuths.map((headers): WrkRequest => ({ method: "GET", path: "/v1/orders?limit=50", headers })),
			create: () => [
				{
					method: "POST",
					path: "/v1/intake/order",
					headers: { ...auth, "content-type": "application/json" },
					// {{n}}: a number unique to the request (bench/wrk.ts), so each create is a new order
					body: JSON.stringify(orderBody(sys.warehouseId, `PROF-C-${sys.run}-{{n}}`)),
				},
			],
		};
		const make = paths[route];
		if (!make) throw new Error(`route: one of ${Object.keys(paths).join(", ")}`);
		const xacts = async () =>
			Number(
				(
					await pg.query(
						"SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()",
					)
				).rows[0].n,
			);
		const redisCalls = async () =>
			[...(await redis.info("commandstats")).matchAll(/calls=(\d+)/g)].reduce((s, m) => s + Number(m[1]), 0);
		// the servers' own CPU (same host): PostgreSQL's processes (bench/lib.ts postgresCpuMeter) and Redis's INFO cpu
		const redisCpu = async () =>
			[...(await redis.info("cpu")).matchAll(/used_cpu_(?:sys|user):([\d.]+)/g)].reduce(
				(s, m) => s + Number(m[1]),
				0,
			);
		const x0 = await xacts();
		const r0 = await redisCalls();
		const pgCpu = await postgresCpuMeter(pg);
		const redisCpu0 = await redisCpu();
		const systemCpu = cpuMeter(sys.pids);
		loadStart = Date.now();
		const r = await generateLoad({ url: sys.base, connections, durationS: duration, requests: make() });
		requests = r.total;
		loadEnd = Date.now();
		const cpu = systemCpu();
		const pgUsed = pgCpu();
		const redisUsed = (await redisCpu()) - redisCpu0;
		await new Promise((ok) => setTimeout(ok, 1500)); // pg_stat_database is updated by the backends lazily
		const x1 = await xacts();
		const r1 = await redisCalls();
		console.log(
			`${route} (${loadgen}): ${(requests / ((loadEnd - loadStart) / 1000)).toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.bad} not 2xx/3xx; system CPU ${((1e6 * cpu) / requests).toFixed(0)} µs per request`,
		);
		console.log(
			`per request: ${((x1 - x0) / requests).toFixed(2)} PostgreSQL transactions (statements outside a transaction count one each, the whole run's background work included), ${((r1 - r0) / requests).toFixed(2)} Redis commands (every client of this Redis counted)`,
		);
		console.log(
			`servers' CPU per request: PostgreSQL ${((1e6 * pgUsed) / requests).toFixed(0)} µs, Redis ${((1e6 * redisUsed) / requests).toFixed(0)} µs`,
		);
	} finally {
		await pg.end();
		redis.disconnect();
		await sys.close();
	}
	// the profile ends when the process exits, just before close() resolves
	const exited = Date.now();
	if (process.env.BENCH_PROFILE === "0") return;
	const files = readdirSync(dir)
		.filter((f) => f.endsWith(".cpuprofile"))
		.sort();
	if (!files.length) throw new Error(`no profile in ${dir}`);
	// split: one profile per process, in the order the processes started (file names carry the pid)
	for (const file of files) {
		if (files.length > 1) console.log(`\n=== ${file}`);
		printProfile(JSON.parse(readFileSync(join(dir, file), "utf8")) as Profile, requests, {
			loadStart,
			loadEnd,
			exited,
		});
	}
}

/** Prints a profile's self time in the load's window (wall-clock ms of its start, end and the process's exit). */
function printProfile(
	prof: Profile,
	requests: number,
	at: { loadStart: number; loadEnd: number; exited: number },
): void {
	const self = selfTimes(
		prof,
		prof.endTime - (at.exited - at.loadStart) * 1000,
		prof.endTime - (at.exited - at.loadEnd) * 1000,
	);
	const byId = new Map(prof.nodes.map((n) => [n.id, n]));
	const owners = new Map<string, number>();
	const fns = new Map<string, number>();
	let total = 0;
	for (const [id, ms] of self) {
		const n = byId.get(id);
		if (!n) continue;
		const name = n.callFrame.functionName || "(anonymous)";
		if (name === "(idle)") continue;
		total += ms;
		const owner = ownerOf(n.callFrame.url);
		owners.set(owner, (owners.get(owner) ?? 0) + ms);
		const key = `${name}  ${owner === "moleculer" ? n.callFrame.url.slice(n.callFrame.url.indexOf("moleculer/") + 10) : owner}:${n.callFrame.lineNumber + 1}`;
		fns.set(key, (fns.get(key) ?? 0) + ms);
	}
	console.log(
		`busy CPU during the load ${total.toFixed(0)} ms over ${requests} requests: ${((1000 * total) / requests).toFixed(0)} µs per request`,
	);
	top("self time by package / folder", owners, total, 25);
	top("top functions (self time)", fns, total, Number(process.env.BENCH_PROFILE_TOP || 30));
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
