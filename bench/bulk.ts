/**
 * Bulk upload benchmark (issue 10; printed figures, not a test): the system
 * split over NATS as Kubernetes deploys it, on a database and Redis prefix
 * of its own (removed afterwards), in five processes: the API path the
 * probes and the upload take (gateway, pincode, rates, warehouses), the
 * background consumers (webhooks, booking, billing, documents, ndr, simulator),
 * intake as msa-intake runs it (INTAKE_BULK_WORKER=off: takes the upload,
 * stores the file, answers the job's status) and the bulk worker as
 * msa-intake-bulk runs it (INTAKE_BULK_WORKER=only, the NODE_OPTIONS and
 * `args` of k8s/base/intake-bulk.yaml). All compiled, with the `start:prod`
 * V8 flags (the worker: its manifest's command line).
 * For a ~25 MB CSV (~85,000 rows) and a ~25 MB XLSX: upload through
 * POST /v1/intake/bulk (multipart) to `completed` (polling
 * GET /v1/intake/jobs/{id}), with
 *
 *   seconds        upload start → the job's `finished_at` (its status is
 *                  polled every BENCH_POLL_MS, default 1000: a merchant's
 *                  dashboard, not 10 polls a second on the API under test)
 *   rows/s         data rows / seconds
 *   worker RSS     peak RSS of the bulk worker process (VmHWM of
 *                  /proc/<pid>/status, read after each file; the process is
 *                  restarted between files); BENCH_RSS_TRACE=1 prints its RSS
 *                  every 250 ms
 *   serviceable    p50/p99 of GET /v1/shipping/serviceable while idle and
 *                  during the import, sent from a worker thread at a fixed
 *                  rate (BENCH_PROBE_RATE requests/s, default 200: an API
 *                  node's traffic, not its capacity), each latency counted
 *                  from the moment its request was due, so a stalled server
 *                  is not hidden by callers that stop sending (no
 *                  coordinated omission). One probe thread runs from
 *                  before the idle window to the end (a thread per window
 *                  counted its own start-up); "idle" counts the probes
 *                  due in a 10 s window after 3 s of warm-up (the first
 *                  two seconds' p99 is 47–60 ms: JIT), "during"
 *                  those due from the upload's start to the job's
 *                  `finished_at`. BENCH_PROBE_RATE=0: BENCH_PROBES
 *                  callers in a closed loop instead (saturation: the probes
 *                  then compete with the import for the CPU and the figure
 *                  measures the sharing). The probe uses node:http with
 *                  keep-alive (lighter on the shared CPU than fetch).
 *                  BENCH_SLOW_TRACE=1 lists the probes slower than
 *                  BENCH_SLOW_MS (default 50), as CLOCK_MONOTONIC seconds
 *                  when due:latency ms; BENCH_PERF_SCHED=<file> records
 *                  `perf sched` on the same clock for 4 s from 8 s into
 *                  each import (docs/decisions/0067-bulk-bench-method.md,
 *                  eighth session); BENCH_PROBE_LAG=1 prints how late the
 *                  probe thread's own 5 ms timer fired, worst per second (time
 *                  the client waited for a core: part of what it measures).
 *   CPU            BENCH_CPU=1: CPU seconds of each process during the
 *                  import (PostgreSQL and NATS: all their processes;
 *                  `pg:<application_name>`: PostgreSQL's backends of each
 *                  process, named by DB_APPLICATION_NAME)
 *   timeline       BENCH_TIMELINE=1: the probes' p99 per second of the idle
 *                  window and of the import (the upload's second apart from the parsing),
 *                  with the upload's start as epoch seconds (to line up
 *                  with BENCH_PROBE_LAG's seconds)
 *
 * Placement (bench/pods.ts): each process in a cgroup weighted by its
 * Deployments' CPU requests, as kubelet places pods; the bench and its probe
 * thread beside them, as clients on other machines. BENCH_PODS=0, or no
 * writable cpu cgroup, runs them all in the bench's one scheduling group.
 *
 * Targets (issue 10): CSV ≤ 15 s, XLSX ≤ 40 s, RSS ≤ 400 MB, API p99 during the
 * import ≤ 2× idle.
 *
 * Usage: npm run bench:bulk   (env: BENCH_CSV_ROWS=85000, BENCH_PROBE_RATE=200, BENCH_PROBES=4,
 *   BENCH_ONLY=csv|xlsx, INTAKE_BULK_BATCH, BENCH_INTAKE_NODE_OPTIONS to
 *   replace the manifest's NODE_OPTIONS, BENCH_CORE_NODE_OPTIONS for the API
 *   process, e.g. --cpu-prof)
 */
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import ExcelJS from "exceljs";
import { Client as PgClient } from "pg";
import { TEMPLATE_COLUMNS } from "../lib/contracts/http/intake-bulk-input";
import { TEMPLATE_EXAMPLE } from "../lib/intake/bulk/columns";
import { manifestArgs, manifestEnv } from "../test/chaos/rss";
import { warehouseBody } from "../test/helpers/fixtures";
import { client } from "../test/helpers/flow";
import { type StartedProcess, startProcess, waitReady } from "../test/helpers/processes";
import { benchEnvironment, cpuSeconds, natsUrl, pct, peakRssMb } from "./lib";
import { Pods, requestOf } from "./pods";

const CSV_ROWS = Number(process.env.BENCH_CSV_ROWS || 85_000);
const PROBES = Number(process.env.BENCH_PROBES || 4);
const PROBE_RATE = Number(process.env.BENCH_PROBE_RATE ?? 200);
/** How often the job's status is polled (ms): a merchant's dashboard pace; the time comes from the job's finished_at. */
const POLL_MS = Number(process.env.BENCH_POLL_MS || 1000);
const LIMIT = 25 * 1024 * 1024;
const PINS = ["560038", "110001", "400001", "600001", "700001", "411001", "500001", "380001"];

/** Cells of data row `i` (distinct reference; long, varied address text so the file is realistic in size). */
function rowCells(run: string, i: number, pad: number): string[] {
	const noise = randomBytes(pad * 2)
		.toString("base64")
		.replace(/[+/=]/g, "x");
	return TEMPLATE_COLUMNS.map((c) => {
		switch (c) {
			case "customer_order_no":
				return `B${run}-${i}`;
			case "receiver_name":
				return `Customer ${i}`;
			case "receiver_address_1":
				return `${i}, ${noise.slice(0, pad)} Road, Indiranagar`;
			case "receiver_address_2":
				return `Block ${noise.slice(pad, pad * 2)}`;
			case "receiver_city":
			case "receiver_state":
			case "receiver_pincode":
				return TEMPLATE_EXAMPLE[c];
			case "receiver_mobile_no":
				return `9${String(100_000_000 + i).slice(-9)}`;
			default:
				return TEMPLATE_EXAMPLE[c];
		}
	});
}

/** A CSV of `rows` rows, padded so the file is just under 25 MB (address padding capped at the 255-character field limit). */
function makeCsv(run: string, rows: number): Buffer {
	const q = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
	const build = (pad: number) => {
		const out: string[] = [TEMPLATE_COLUMNS.join(",")];
		for (let i = 1; i <= rows; i++) out.push(rowCells(run, i, pad).map(q).join(","));
		return Buffer.from(`${out.join("\n")}\n`);
	};
	const target = LIMIT - 16 * 1024;
	let pad = 0;
	let bytes = build(pad);
	// each unit of pad adds two characters per row (address_1 and address_2); converge in a few passes
	for (let pass = 0; pass < 4 && bytes.length < target - rows; pass++) {
		pad = Math.min(230, pad + Math.floor((target - bytes.length) / rows / 2));
		bytes = build(pad);
		while (bytes.length > target && pad > 0) bytes = build(--pad);
		if (pad >= 230) break;
	}
	return bytes;
}

/** An XLSX of `rows` rows with `pad` noise per address (inline strings, as many exports write them). */
async function makeXlsx(run: string, rows: number, pad: number): Promise<Buffer> {
	const wb = new ExcelJS.Workbook();
	const ws = wb.addWorksheet("Orders");
	ws.addRow([...TEMPLATE_COLUMNS]);
	for (let i = 1; i <= rows; i++) ws.addRow(rowCells(run, i, pad));
	return Buffer.from(await wb.xlsx.writeBuffer({ useSharedStrings: false } as ExcelJS.XlsxWriteOptions));
}

/** An XLSX just under 25 MB (size measured on a sample, then scaled). */
async function makeXlsx25(run: string): Promise<{ bytes: Buffer; rows: number }> {
	const pad = 90;
	const sample = await makeXlsx(run, 5_000, pad);
	let rows = Math.floor((5_000 * (LIMIT * 0.96)) / sample.length);
	let bytes = await makeXlsx(run, rows, pad);
	while (bytes.length > LIMIT - 16 * 1024) {
		rows = Math.floor(rows * 0.97);
		bytes = await makeXlsx(run, rows, pad);
	}
	return { bytes, rows };
}

/** Pids of the processes whose command name (`/proc/<pid>/comm`) is `name`. */
function pidsNamed(name: string): number[] {
	const out: number[] = [];
	for (const d of readdirSync("/proc")) {
		if (!/^\d+$/.test(d)) continue;
		try {
			if (readFileSync(`/proc/${d}/comm`, "utf8").trim() === name) out.push(Number(d));
		} catch {
			// ended meanwhile
		}
	}
	return out;
}

/** Current RSS (VmRSS) of a process in MB. */
function rssMb(pid: number): number {
	const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
	return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** Latencies of the probes (ms, ascending), with [epoch ms due, ms] per probe. */
type ProbeResult = number[] & { samples: [number, number][] };

/** The running probe ({@link startProbe}). */
interface Probe {
	/** The probes due in [`from`, `to`] (epoch ms) answered so far. @throws the first failed probe's error */
	window(from: number, to: number): Promise<ProbeResult>;
	/** The first failed probe's error, once one failed (the probe then stops). */
	failed(): Error | undefined;
	/** Stops the probe thread. */
	stop(): Promise<void>;
}

/**
 * Starts GET /v1/shipping/serviceable from bench/probe-thread.ts in a worker
 * thread, sending for the whole run (PROBE_RATE requests/s each timed from
 * when it was due, or with PROBE_RATE 0 PROBES callers in a closed loop);
 * the idle and import windows are cut from its samples by due time.
 */
function startProbe(base: string, token: string, cgroup: string | undefined): Probe {
	const worker = new Worker(
		`require("tsx/cjs"); require(${JSON.stringify(`${__dirname}/probe-thread.ts`)});`,
		{
			eval: true,
			workerData: { base, token, rate: PROBE_RATE, callers: PROBES, pins: PINS, cgroup },
		},
	);
	let failure: Error | undefined;
	const waiting: Array<{ resolve: (s: [number, number][]) => void; reject: (e: Error) => void }> = [];
	const fail = (e: Error) => {
		failure ??= e;
		for (const w of waiting.splice(0)) w.reject(failure);
	};
	worker.on("message", (m: { samples?: [number, number][]; error?: string }) =>
		m.error !== undefined ? fail(new Error(m.error)) : waiting.shift()?.resolve(m.samples ?? []),
	);
	worker.once("error", fail);
	const ask = (what: "report" | "stop") =>
		failure
			? Promise.reject(failure)
			: new Promise<[number, number][]>((resolve, reject) => {
					waiting.push({ resolve, reject });
					worker.postMessage(what);
				});
	return {
		async window(from, to) {
			const samples = (await ask("report")).filter(([due]) => due >= from && due <= to);
			return Object.assign(
				samples.map(([, ms]) => ms).sort((a, b) => a - b),
				{ samples },
			);
		},
		failed: () => failure,
		async stop() {
			await ask("stop").catch(() => undefined);
			await worker.terminate();
		},
	};
}

/** How the probes were sent, in words. */
const probeMode = () => (PROBE_RATE > 0 ? `${PROBE_RATE} requests/s` : `${PROBES} callers, closed loop`);

const f = (x: number, d = 1) => x.toFixed(d);

/** `<second>s <p99 ms>` of the probes due in each second from `t0Epoch` (epoch ms), for BENCH_TIMELINE. */
function timeline(samples: [number, number][], t0Epoch: number): string {
	const buckets: number[][] = [];
	for (const [due, ms] of samples) {
		const b = Math.max(0, Math.floor((due - t0Epoch) / 1000));
		buckets[b] ??= [];
		buckets[b].push(ms);
	}
	const p99 = (b: number[]) =>
		f(
			pct(
				b.sort((x, y) => x - y),
				99,
			),
		);
	return Array.from(buckets, (b, i) => `${i}s ${b ? p99(b) : "-"}`).join(", ");
}

async function main(): Promise<void> {
	const {
		run,
		base,
		idp,
		common: shared,
		cleanup,
	} = await benchEnvironment({
		INTAKE_BULK_BATCH: process.env.INTAKE_BULK_BATCH,
	});
	// MSA_V8_PRETENURING=on: V8's default allocation-site pretenuring in every process (moleculer.config.ts)
	const common = { ...shared, TRANSPORTER: natsUrl, MSA_V8_PRETENURING: process.env.MSA_V8_PRETENURING };
	// intake as its two Deployments run it, with their manifests' environment (test/chaos/rss.ts
	// manifestEnv): the bulk worker as k8s/base/intake-bulk.yaml says (INTAKE_BULK_WORKER=only, its
	// NODE_OPTIONS unless BENCH_INTAKE_NODE_OPTIONS, DB_APPLICATION_NAME); the upload served by
	// k8s/base/intake.yaml's process (INTAKE_BULK_WORKER=off)
	const bulkManifest = manifestEnv("intake-bulk");
	const workerEnv = {
		...bulkManifest,
		...common,
		NODEID: `bench-intake-bulk-${run}`,
		NODE_OPTIONS: process.env.BENCH_INTAKE_NODE_OPTIONS ?? bulkManifest.NODE_OPTIONS,
	};
	// the worker runs compiled, as in production (BENCH_TSX=1: through tsx, as `npm start` does)
	const compiled = process.env.BENCH_TSX !== "1";
	if (compiled) execFileSync("npx", ["tsc", "-p", "tsconfig.build.json"], { stdio: "inherit" });
	// The rest of the system in two processes, as production deploys it apart: the API path the probes
	// and the upload take (gateway, rates, pincode, warehouses), and the consumers in the background
	// (webhooks takes the import's 85,000 order.created events; booking, billing, documents, ndr, the simulator).
	const apiServices = ["gateway", "pincode", "rates", "warehouses"];
	const backServices = ["documents", "booking", "billing", "ndr", "webhooks", "notifications", "simulator"];
	const api = startProcess(
		{
			...common,
			SERVICES: apiServices.join(","),
			NODEID: `bench-api-${run}`,
			NODE_OPTIONS: process.env.BENCH_CORE_NODE_OPTIONS,
		},
		{ compiled },
	);
	const back = startProcess(
		{ ...common, SERVICES: backServices.join(","), NODEID: `bench-back-${run}` },
		{ compiled },
	);
	const intake = startProcess(
		{ ...manifestEnv("intake"), ...common, NODEID: `bench-intake-${run}` },
		{ compiled },
	);
	// the worker's command line as its Deployment gives it (k8s/base/intake-bulk.yaml `args`: its own semi-space)
	const workerArgs = manifestArgs("intake-bulk");
	let worker: StartedProcess = startProcess(workerEnv, { compiled, args: workerArgs });
	// each process in a cgroup weighted by its Deployments' CPU requests, as kubelet places pods; the
	// bench (the uploading merchant) and its probe thread (the other merchants) beside them (bench/pods.ts)
	const pods = new Pods(run);
	const bulkRequest = requestOf(["intake-bulk"]);
	pods.place("client", process.pid, 1000, false);
	pods.place("api", api.child.pid as number, requestOf(apiServices));
	pods.place("back", back.child.pid as number, requestOf(backServices));
	pods.place("intake", intake.child.pid as number, requestOf(["intake"]));
	pods.place("intake-bulk", worker.child.pid as number, bulkRequest);
	const probeCgroup = pods.threadGroup("probe");
	console.log(
		`processes: ${pods.mode}${pods.on && !probeCgroup ? " (the probe thread in the bench's)" : ""}`,
	);
	let prober: Probe | undefined;
	const close = async () => {
		await prober?.stop();
		await Promise.all([api.stop(), back.stop(), intake.stop(), worker.stop()]);
		pods.close();
		await cleanup();
	};
	try {
		await waitReady(base, [api, back, intake, worker], 90_000);
		const token = await idp.tokenFor(900_001);
		const merchant = client(base, token);
		const wh = await merchant.post("/v1/warehouses", warehouseBody({ warehouse_name: "Bench warehouse" }));
		if (wh.status !== 201) throw new Error(`warehouse: ${JSON.stringify(wh.body)}`);
		const warehouseId = wh.body.data.id as number;

		// idle API latency (warm the caches first)
		const probe = startProbe(base, token, probeCgroup);
		prober = probe;
		await sleep(3000);
		const idleFrom = Date.now();
		await sleep(10_000);
		const idle = await probe.window(idleFrom, idleFrom + 10_000);
		console.log(
			`serviceable idle: ${idle.length} requests, p50 ${f(pct(idle, 50))} ms, p99 ${f(pct(idle, 99))} ms (${probeMode()})`,
		);
		if (process.env.BENCH_TIMELINE)
			console.log(`serviceable idle p99 per second: ${timeline(idle.samples, idleFrom)}`);

		const files: Array<{ name: string; type: string; make: () => Promise<{ bytes: Buffer; rows: number }> }> =
			[
				{
					name: "orders.csv",
					type: "text/csv",
					make: async () => ({ bytes: makeCsv(run, CSV_ROWS), rows: CSV_ROWS }),
				},
				{
					name: "orders.xlsx",
					type: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
					make: () => makeXlsx25(`${run}x`),
				},
			].filter((x) => !process.env.BENCH_ONLY || x.name.endsWith(process.env.BENCH_ONLY));

		for (const file of files) {
			const { bytes, rows } = await file.make();
			// a fresh worker process per file: its peak RSS is this file's
			await worker.stop();
			worker = startProcess(workerEnv, { compiled, args: workerArgs });
			pods.place("intake-bulk", worker.child.pid as number, bulkRequest);
			await waitReady(base, [api, back, intake, worker], 90_000);
			await sleep(1500);
			const pid = worker.child.pid as number;
			const rssBefore = peakRssMb(pid);
			// BENCH_CPU=1: CPU seconds each process (PostgreSQL: all its processes) spends during the import
			const cpuOf = () => {
				const m: Record<string, number> = {
					api: cpuSeconds(api.child.pid as number),
					back: cpuSeconds(back.child.pid as number),
					intake: cpuSeconds(intake.child.pid as number),
					worker: cpuSeconds(pid),
					bench: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
				};
				m.postgres = pidsNamed("postgres").reduce((a, p) => a + cpuSeconds(p), 0);
				for (const [pgPid, app] of backends) m[`pg:${app}`] = (m[`pg:${app}`] ?? 0) + cpuSeconds(pgPid);
				m.nats = pidsNamed("nats-server").reduce((a, p) => a + cpuSeconds(p), 0);
				return m;
			};
			// BENCH_CPU=1: PostgreSQL backends by application_name (pid → name, looked up every 250 ms), so
			// their CPU can be told apart (lib/platform/config.ts dbApplicationName)
			const backends = new Map<number, string>();
			const pgClient = process.env.BENCH_CPU
				? new PgClient({ connectionString: shared.DATABASE_URL })
				: undefined;
			const seeBackends = async () => {
				if (!pgClient) return;
				const r = await pgClient.query(
					"SELECT pid, application_name FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
				);
				for (const row of r.rows) backends.set(row.pid, row.application_name || "other");
			};
			await pgClient?.connect();
			await seeBackends();
			const watcher = setInterval(() => void seeBackends().catch(() => undefined), 250);
			const cpu0 = process.env.BENCH_CPU ? cpuOf() : undefined;
			const t0 = performance.now();
			// BENCH_RSS_TRACE=1: the worker's RSS every 250 ms (seconds since upload start → MB)
			const trace: string[] = [];
			const tracer = process.env.BENCH_RSS_TRACE
				? setInterval(() => trace.push(`${f((performance.now() - t0) / 1000)}s ${f(rssMb(pid), 0)}`), 250)
				: undefined;
			// BENCH_PERF_SCHED=<file>: `perf sched record` of the whole machine for 4 s from 8 s into the import, with
			// CLOCK_MONOTONIC stamps (BENCH_SLOW_TRACE prints the slow probes on the same clock)
			const perfOut = process.env.BENCH_PERF_SCHED;
			const perfTimer = perfOut
				? setTimeout(() => {
						const args = ["sched", "record", "-k", "CLOCK_MONOTONIC", "-o", perfOut, "--", "sleep", "4"];
						const perf = spawn("perf", args, { stdio: "ignore" });
						perf.on("error", (e) => console.error(`perf sched: ${e.message}`));
						console.log(`perf sched recording to ${perfOut}`);
					}, 8000)
				: undefined;
			const form = new FormData();
			form.append("sender_address_id", String(warehouseId));
			form.append("import_file", new Blob([bytes], { type: file.type }), file.name);
			const up = await fetch(`${base}/v1/intake/bulk`, {
				method: "POST",
				headers: { authorization: `Bearer ${token}` },
				body: form,
			});
			const upBody = (await up.json()) as { job_id?: number };
			if (up.status !== 202 || !upBody.job_id) {
				throw new Error(`upload ${up.status}: ${JSON.stringify(upBody)}`);
			}
			const tUp = performance.now() - t0;
			const rssUpload = peakRssMb(pid);
			let job: Record<string, any> = {};
			for (;;) {
				const r = await merchant.get(`/v1/intake/jobs/${upBody.job_id}?limit=1`);
				job = r.body;
				if (job.status === "completed" || job.status === "failed") break;
				// a failed probe ends the run at once
				const probeFailure = probe.failed();
				if (probeFailure) throw probeFailure;
				await sleep(POLL_MS);
			}
			// the job's own finished_at (this machine's clock) ends the import, not the poll that saw it
			const t0Epoch = performance.timeOrigin + t0;
			const finishedEpoch = job.finished_at ? Date.parse(job.finished_at) : Date.now();
			const secs = (finishedEpoch - t0Epoch) / 1000;
			clearInterval(tracer);
			clearTimeout(perfTimer);
			if (trace.length) console.log(`worker RSS (MB) over time: ${trace.join(", ")}`);
			// the probes due during the import (upload start → finished_at), once those in flight answered
			await sleep(Math.max(0, finishedEpoch + 500 - Date.now()));
			const lat = await probe.window(t0Epoch, finishedEpoch);
			// BENCH_TIMELINE=1: p99 of the probes due in each second since the upload started
			if (process.env.BENCH_TIMELINE)
				console.log(
					`serviceable p99 per second (from epoch ${f(t0Epoch / 1000, 0)}; upload done at ${f(tUp / 1000)} s): ${timeline(lat.samples, t0Epoch)}`,
				);
			const rss = peakRssMb(pid);
			clearInterval(watcher);
			await pgClient?.end();
			if (cpu0) {
				const cpu1 = cpuOf();
				console.log(
					`CPU seconds during ${file.name}: ${Object.keys(cpu1)
						.map((k) => `${k} ${f(cpu1[k] - (cpu0[k] ?? 0))}`)
						.join(", ")} (wall ${f(secs)} s)`,
				);
			}
			const counts = Object.entries(job.counts ?? {}).map(([k, v]) => `${k} ${v}`);
			console.log(
				`${file.name}: ${f(bytes.length / 1048576)} MB, ${rows} rows → ${job.status}${job.error ? ` (${job.error})` : ""} in ${f(secs, 2)} s ` +
					`(upload ${f(tUp / 1000, 2)} s), ${f(rows / secs, 0)} rows/s; ${counts.join(", ")}; ` +
					`worker peak RSS ${f(rss, 0)} MB (at start ${f(rssBefore, 0)} MB, after the upload ${f(rssUpload, 0)} MB); ` +
					`serviceable during: ${lat.length} requests, p50 ${f(pct(lat, 50))} ms, p99 ${f(pct(lat, 99))} ms ` +
					`(${f(pct(lat, 99) / pct(idle, 99), 2)}× idle p99)`,
			);
		}
	} finally {
		await close();
	}
}

main().catch((e) => {
	console.error(e);
	process.exit(1);
});
