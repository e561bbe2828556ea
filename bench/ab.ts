/**
 * A/B of one route between two configurations of the system, side by side (issue 32, docs/decisions/0098): both
 * systems are started as bench/profile.ts starts one (one process, production defaults on, its own database and
 * Redis prefix), then loaded in turns, slice by slice, in the order A B B A A B …, so a drift of the machine's speed
 * weighs on both alike. Prints each slice and, per side, the rate (2xx per second) and the CPU its process spent per
 * request; then the median over the rounds of B's rate and CPU as a share of A's in the same round.
 *
 * Usage: npx tsx bench/ab.ts <route>   (npm run bench:ab -- <route>) where <route> is one of
 *   pincode | edd | serviceable | status | detail | list | create
 * env: BENCH_A_ENV and BENCH_B_ENV (JSON, the environment each system adds, e.g. '{"GATEWAY_ACCESS_LOG":"0"}'),
 * BENCH_B_ROOT (B runs the build of another checkout, e.g. `git worktree add /tmp/b <commit>` with `npm run build`
 * there: two commits side by side),
 * BENCH_ROUNDS (rounds of one A and one B slice, default 6), BENCH_SLICE (seconds per slice, default 3),
 * BENCH_CONNECTIONS (default 50), BENCH_START=BA (start B's system first). The load comes from wrk when installed,
 * else autocannon (as bench/run.ts). The order the two systems are started in was seen to favour the one started
 * second by a few percent with both sides alike (an A/A run): weigh a lever by both start orders, or beside an A/A run.
 */
import { orderBody } from "../test/helpers/fixtures";
import { median } from "../test/helpers/gc";
import { type BenchSystem, cpuMeter, envFromJson, productionDefaults, startSystem } from "./lib";
import { generateLoad, loadgen, type WrkRequest } from "./wrk";

const rounds = Number(process.env.BENCH_ROUNDS || 6);
const slice = Number(process.env.BENCH_SLICE || 3);
const connections = Number(process.env.BENCH_CONNECTIONS || 50);

/** One slice's figures: 2xx per second and the system's CPU per answer (µs). */
interface Slice {
	rps: number;
	cpuUs: number;
}

/** The requests of `route` against `sys` (60 orders of its account made first for the order routes). */
async function requestsOf(route: string, sys: BenchSystem): Promise<WrkRequest[]> {
	const headers = { authorization: `Bearer ${sys.token}` };
	const nos: string[] = [];
	const ids: number[] = [];
	if (route === "status" || route === "detail" || route === "list")
		for (let i = 0; i < 60; i++) {
			const no = `AB-${sys.run}-${i}`;
			const r = await sys.api.post("/v1/intake/order", orderBody(sys.warehouseId, no));
			if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
			nos.push(no);
			ids.push(r.body.order_id as number);
		}
	const get = (path: string): WrkRequest => ({ method: "GET", path, headers });
	switch (route) {
		case "pincode":
			return [get("/v1/pincode/560001")];
		case "edd":
			return [get("/v1/shipping/edd?from_pin=110001&to_pin=560001&payment_mode=cod")];
		case "serviceable":
			return [
				get(
					"/v1/shipping/serviceable?from_pin=110001&to_pin=560001&physical_weight=0.8&order_type=1&collectable_amount=1499",
				),
			];
		case "status":
			return nos.map((no) => get(`/v1/orders/status?order_no=${no}`));
		case "detail":
			return ids.map((id) => get(`/v1/orders/${id}`));
		case "list":
			return [get("/v1/orders?limit=50")];
		case "create":
			return [
				{
					method: "POST",
					path: "/v1/intake/order",
					headers: { ...headers, "content-type": "application/json" },
					body: JSON.stringify(orderBody(sys.warehouseId, `AB-C-${sys.run}-{{n}}`)),
				},
			];
		default:
			throw new Error(`route: one of pincode, edd, serviceable, status, detail, list, create (not ${route})`);
	}
}

/** Loads `sys` with `list` for `seconds`; answers the slice's figures. */
async function load(sys: BenchSystem, list: WrkRequest[], seconds: number): Promise<Slice> {
	const cpu = cpuMeter(sys.pids);
	const { total, bad } = await generateLoad({
		url: sys.base,
		connections,
		durationS: seconds,
		requests: list,
	});
	const used = cpu();
	if (bad) throw new Error(`${bad} of ${total} answers were not 2xx`);
	return { rps: total / seconds, cpuUs: total ? (1e6 * used) / total : 0 };
}

/** `x` (a ratio) as a percentage, e.g. "102.9 %". */
const share = (x: number) => `${(100 * x).toFixed(1)} %`;

async function main(): Promise<void> {
	const route = process.argv[2] ?? "pincode";
	const production = async (side: string) => ({
		...(await productionDefaults()),
		...envFromJson(`BENCH_${side}_ENV`),
	});
	// BENCH_B_ROOT: B runs another checkout's build (e.g. a git worktree of an earlier commit, built there)
	const rootOf = (side: "A" | "B") => ({
		root: side === "B" ? process.env.BENCH_B_ROOT || undefined : undefined,
	});
	const bFirst = process.env.BENCH_START === "BA";
	const [firstSide, secondSide] = bFirst ? (["B", "A"] as const) : (["A", "B"] as const);
	const first = await startSystem(await production(firstSide), rootOf(firstSide));
	let second: BenchSystem | undefined;
	try {
		second = await startSystem(await production(secondSide), rootOf(secondSide));
		const [a, b] = bFirst ? [second, first] : [first, second];
		const lists = { A: await requestsOf(route, a), B: await requestsOf(route, b) };
		const systems = { A: a, B: b };
		console.log(
			`${route}: ${rounds} rounds of ${slice} s per side, ${connections} connections, load ${loadgen}; A ${process.env.BENCH_A_ENV || "{}"}, B ${process.env.BENCH_B_ENV || "{}"}${process.env.BENCH_B_ROOT ? ` running ${process.env.BENCH_B_ROOT}` : ""}; ${bFirst ? "B" : "A"} started first`,
		);
		for (const side of ["A", "B"] as const) await load(systems[side], lists[side], 2); // warm-up
		const got: Record<"A" | "B", Slice[]> = { A: [], B: [] };
		for (let r = 0; r < rounds; r++) {
			const order = r % 2 === 0 ? (["A", "B"] as const) : (["B", "A"] as const);
			for (const side of order) got[side].push(await load(systems[side], lists[side], slice));
			console.log(
				`  round ${r + 1}: A ${got.A[r].rps.toFixed(0)}/s ${got.A[r].cpuUs.toFixed(0)} µs   B ${got.B[r].rps.toFixed(0)}/s ${got.B[r].cpuUs.toFixed(0)} µs`,
			);
		}
		for (const side of ["A", "B"] as const) {
			const s = got[side];
			console.log(
				`${side}: ${(s.reduce((n, x) => n + x.rps, 0) / s.length).toFixed(0)} req/s, ${median(s.map((x) => x.cpuUs)).toFixed(1)} µs CPU per request (median slice)`,
			);
		}
		const rate = median(got.B.map((x, i) => x.rps / got.A[i].rps));
		const cpu = median(got.B.map((x, i) => x.cpuUs / got.A[i].cpuUs));
		console.log(`B / A, median of rounds: rate ${share(rate)}, CPU per request ${share(cpu)}`);
	} finally {
		await second?.close();
		await first.close();
	}
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
