/**
 * Availability benchmark (issue 12; `npm run chaos`; printed figures, not a test):
 * every service group in its own process over a private NATS server, a load of
 * CHAOS_RATE (default 10) create + book flows per second through the
 * gateway(s), and, one after another with CHAOS_GAP_MS (default 5000) between
 * them, the faults: kill -9 booking, SIGTERM booking, kill -9 intake,
 * kill -9 gateway (when there are two), NATS down 2 s. Each killed process is
 * started again at once, as a supervisor would.
 *
 * Prints per fault: requests in its window, answered 5xx or dropped, the
 * longest wait, how long errors lasted, restart → ready and ready → first
 * fresh create + book acknowledged; then the API-level verdict (nothing
 * acknowledged lost or duplicated, every acknowledged booking booked with one AWB).
 *
 * Usage: npm run chaos   (env: CHAOS_REPLICAS=2 (processes per gateway/intake/booking
 *   group; 1 = one of each), CHAOS_RATE=10, CHAOS_GAP_MS=5000, CHAOS_FAULTS=comma list of
 *   booking,booking-term,intake,gateway,nats,kills (default all that apply), CHAOS_KILLS=0 (that many
 *   more kill -9, rotating over the booking and intake processes: the "ten kills" run is
 *   CHAOS_KILLS=10 CHAOS_FAULTS=kills), CHAOS_LOGLEVEL (the processes' LOGLEVEL, default warn); after the table it
 *   lists the failed requests and every log line of the processes that names one of them, a rescue or a timeout),
 *   CHAOS_COMPILED=1 (the compiled build, as production runs it, instead of tsx: a restart then costs the other
 *   processes far less CPU on a small machine),
 *   CHAOS_LOG_DIR (each process's stdout appended to <dir>/<key>.log, whole, instead of its last 100 KB in memory))
 */
import { existsSync, readFileSync } from "node:fs";
import { type ChaosCluster, formatFigures, type GroupSpec, startChaosCluster } from "../test/chaos/harness";
import { buildOnce } from "../test/helpers/processes";

const replicas = Number(process.env.CHAOS_REPLICAS || 2);
/** CHAOS_COMPILED=1: every process as production runs it (`start:prod`, compiled dist/), not under tsx */
const compiled = process.env.CHAOS_COMPILED === "1";
const rate = Number(process.env.CHAOS_RATE || 10);
const gap = Number(process.env.CHAOS_GAP_MS || 5000);
const kills = Number(process.env.CHAOS_KILLS || 0);
const wanted = (process.env.CHAOS_FAULTS || "booking,booking-term,intake,gateway,nats,kills").split(",");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const groups: GroupSpec[] = [
	{ name: "gateway", services: "gateway", replicas },
	{ name: "intake", services: "intake", replicas },
	{ name: "booking", services: "booking", replicas },
	{
		name: "core",
		services: "pincode,rates,warehouses,billing,ndr,webhooks,notifications,documents,simulator",
	},
];

async function run(c: ChaosCluster): Promise<void> {
	c.startLoad(rate);
	await sleep(gap);
	const steps: [string, () => Promise<unknown>][] = [
		["booking", () => c.fault("booking-0", "SIGKILL")],
		["booking-term", () => c.fault(`booking-${replicas - 1}`, "SIGTERM")],
		["intake", () => c.fault("intake-0", "SIGKILL")],
		["gateway", () => (replicas > 1 ? c.fault("gateway-1", "SIGKILL") : Promise.resolve())],
		["nats", () => c.natsRestart(2000)],
		[
			"kills",
			async () => {
				// CHAOS_KILLS more kill -9, rotating over the booking and intake processes
				const keys = ["booking", "intake"].flatMap((g) =>
					Array.from({ length: replicas }, (_, i) => `${g}-${i}`),
				);
				for (let i = 0; i < kills; i++) {
					await c.fault(keys[i % keys.length], "SIGKILL");
					await sleep(gap);
				}
			},
		],
	];
	for (const [name, step] of steps) {
		if (!wanted.includes(name) || (name === "gateway" && replicas < 2) || (name === "kills" && !kills))
			continue;
		await step();
		if (name !== "kills") await sleep(gap);
	}
	const loadEnd = Date.now();
	await c.stopLoad();
	console.log(
		`\nAvailability under faults: ${replicas} process(es) per gateway/intake/booking, ${rate} flows/s\n`,
	);
	console.log(formatFigures(c.figures(loadEnd)));
	// a booking job in flight on a killed process runs again after its BullMQ lock (BOOKING_LOCK_MS, 60 s)
	const v = await c.verdict(150_000);
	const all = c.requests.length;
	const failed = c.requests.filter((r) => r.status === 0 || r.status >= 500).length;
	const longest = Math.max(...c.requests.map((r) => r.end - r.start));
	console.log(
		`\nwhole run: ${all} requests, ${failed} 5xx/dropped (${((100 * failed) / all).toFixed(2)} %), longest wait ${(longest / 1000).toFixed(1)} s`,
	);
	console.log(
		`verdict: ${v.flows} flows, ${v.acknowledged} orders acknowledged, ${v.bookAcknowledged} bookings acknowledged, ` +
			`${v.lostOrDuplicated.length} lost/duplicated, ${v.notBooked.length} not booked, ${v.sharedAwbs.length} shared AWBs, ${v.unfinished} unfinished`,
	);
	for (const s of [...v.lostOrDuplicated, ...v.notBooked].slice(0, 10)) console.log(`  ${s}`);
	// each failed request: what it was, how long after the last fault before it, and what the processes said then
	const t0 = c.faults[0]?.at ?? 0;
	for (const r of c.requests.filter((x) => x.status === 0 || x.status >= 500).slice(0, 10)) {
		const f = [...c.faults].reverse().find((x) => x.at <= r.start);
		console.log(
			`  failed: ${r.kind} ${r.status} ${r.code ?? r.error ?? ""}, sent ${f ? `${r.start - f.at} ms after "${f.name}"` : `at +${r.start - t0} ms`}, answered after ${r.end - r.start} ms`,
		);
	}
	const failedIds = new Set(
		c.requests.filter((x) => (x.status === 0 || x.status >= 500) && x.requestId).map((x) => x.requestId),
	);
	const notes = [...c.members.values()].flatMap((m) =>
		(m.logFile && existsSync(m.logFile) ? readFileSync(m.logFile, "utf8") : m.proc.output())
			.split("\n")
			.filter(
				(l) => /sent again|is gone|timed out/i.test(l) || [...failedIds].some((id) => id && l.includes(id)),
			)
			.map((l) => `  ${m.key}: ${l.slice(0, 400)}`),
	);
	if (notes.length)
		console.log(
			`\nrescues and timeouts logged by the processes (${notes.length}):\n${notes.slice(-30).join("\n")}`,
		);
}

async function main(): Promise<void> {
	if (compiled) await buildOnce();
	const c = await startChaosCluster({
		groups,
		compiled,
		privateNats: true,
		env: process.env.CHAOS_LOGLEVEL ? { LOGLEVEL: process.env.CHAOS_LOGLEVEL } : {},
		logDir: process.env.CHAOS_LOG_DIR,
	});
	try {
		await run(c);
	} finally {
		await c.close();
	}
}

main().then(
	() => process.exit(0),
	(err) => {
		console.error(err);
		process.exit(1);
	},
);
