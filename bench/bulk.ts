/**
 * Bulk upload benchmark (issue 10; printed figures, not a test): the system
 * split over NATS as in production, intake (the bulk worker) in its own
 * process so its memory is its own, on a database and Redis prefix of its
 * own (removed afterwards). For a ~25 MB CSV (~85,000 rows) and a ~25 MB
 * XLSX: upload through POST /v1/intake/bulk (multipart) to `completed`
 * (polling GET /v1/intake/jobs/{id}), with
 *
 *   seconds        upload start → job completed
 *   rows/s         data rows / seconds
 *   worker RSS     peak RSS of the intake process (VmHWM of /proc/<pid>/status,
 *                  read after each file; the process is restarted between files)
 *   serviceable    p50/p99 of GET /v1/shipping/serviceable (BENCH_PROBES
 *                  concurrent callers) while idle and during the import
 *
 * Targets (issue 10): CSV ≤ 15 s, XLSX ≤ 40 s, RSS ≤ 400 MB, API p99 during the
 * import ≤ 2× idle.
 *
 * The intake process runs as its pod does: compiled, with the `start:prod`
 * V8 flags and the `NODE_OPTIONS` of k8s/base/intake.yaml.
 *
 * Usage: npm run bench:bulk   (env: BENCH_CSV_ROWS=85000, BENCH_PROBES=4,
 *   BENCH_ONLY=csv|xlsx, INTAKE_BULK_BATCH, BENCH_INTAKE_NODE_OPTIONS to
 *   replace the manifest's NODE_OPTIONS)
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import ExcelJS from "exceljs";
import { TEMPLATE_COLUMNS, TEMPLATE_EXAMPLE } from "../lib/intake/bulk/columns";
import { warehouseBody } from "../test/helpers/fixtures";
import { client } from "../test/helpers/flow";
import { type StartedProcess, startProcess, waitReady } from "../test/helpers/processes";
import { K8S_DIR, readManifests } from "../test/unit/k8s/kustomize";
import { benchEnvironment, pct } from "./lib";

const natsUrl = process.env.TEST_NATS_URL || "nats://127.0.0.1:4222";
const CSV_ROWS = Number(process.env.BENCH_CSV_ROWS || 85_000);
const PROBES = Number(process.env.BENCH_PROBES || 4);
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

/** Peak RSS (VmHWM) of a process in MB. */
function peakRssMb(pid: number): number {
	const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
	return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** Latencies (ms) of GET /v1/shipping/serviceable from PROBES callers until `stop()` answers true. */
async function probe(base: string, token: string, stop: () => boolean): Promise<number[]> {
	const lat: number[] = [];
	let n = 0;
	const caller = async () => {
		while (!stop()) {
			const to = PINS[n++ % PINS.length];
			const t = performance.now();
			const r = await fetch(
				`${base}/v1/shipping/serviceable?from_pin=110001&to_pin=${to}&physical_weight=0.8&order_type=1&collectable_amount=1499`,
				{ headers: { authorization: `Bearer ${token}` } },
			);
			await r.arrayBuffer();
			if (r.status !== 200) throw new Error(`serviceable ${r.status}`);
			lat.push(performance.now() - t);
		}
	};
	await Promise.all(Array.from({ length: PROBES }, caller));
	return lat.sort((a, b) => a - b);
}

const f = (x: number, d = 1) => x.toFixed(d);

/** `NODE_OPTIONS` of the container of Deployment `name` in k8s/base (undefined when it sets none). */
function manifestNodeOptions(name: string): string | undefined {
	const objs = readManifests(`${K8S_DIR}/base/${name}.yaml`);
	const dep = objs.find((o) => o.kind === "Deployment") as
		| { spec: { template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } } }
		| undefined;
	return dep?.spec.template.spec.containers[0]?.env?.find((e) => e.name === "NODE_OPTIONS")?.value;
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
	const common = { ...shared, TRANSPORTER: natsUrl };
	// the intake pod's NODE_OPTIONS (k8s/base/intake.yaml), or BENCH_INTAKE_NODE_OPTIONS
	const intakeEnv = {
		...common,
		SERVICES: "intake",
		NODEID: `bench-intake-${run}`,
		NODE_OPTIONS: process.env.BENCH_INTAKE_NODE_OPTIONS ?? manifestNodeOptions("intake"),
	};
	const core = startProcess({
		...common,
		SERVICES: "gateway,documents,pincode,rates,warehouses,booking,ndr,webhooks,simulator",
		NODEID: `bench-core-${run}`,
	});
	// the worker runs compiled, as in production (BENCH_TSX=1: through tsx, as `npm start` does)
	const compiled = process.env.BENCH_TSX !== "1";
	if (compiled) execFileSync("npx", ["tsc", "-p", "tsconfig.build.json"], { stdio: "inherit" });
	let intake: StartedProcess = startProcess(intakeEnv, { compiled });
	const close = async () => {
		await Promise.all([core.stop(), intake.stop()]);
		await cleanup();
	};
	try {
		await waitReady(base, [core, intake], 90_000);
		const token = await idp.tokenFor(900_001);
		const api = client(base, token);
		const wh = await api.post("/v1/warehouses", warehouseBody({ warehouse_name: "Bench warehouse" }));
		if (wh.status !== 201) throw new Error(`warehouse: ${JSON.stringify(wh.body)}`);
		const warehouseId = wh.body.data.id as number;

		// idle API latency (warm the caches first)
		let until = Date.now() + 1000;
		await probe(base, token, () => Date.now() > until);
		until = Date.now() + 5000;
		const idle = await probe(base, token, () => Date.now() > until);
		console.log(
			`serviceable idle: ${idle.length} requests, p50 ${f(pct(idle, 50))} ms, p99 ${f(pct(idle, 99))} ms (${PROBES} callers)`,
		);

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
			await intake.stop();
			intake = startProcess(intakeEnv, { compiled });
			await waitReady(base, [core, intake], 90_000);
			await new Promise((r) => setTimeout(r, 1500));
			const pid = intake.child.pid as number;
			const rssBefore = peakRssMb(pid);
			let done = false;
			const during = probe(base, token, () => done);
			const t0 = performance.now();
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
				done = true;
				await during;
				throw new Error(`upload ${up.status}: ${JSON.stringify(upBody)}`);
			}
			const tUp = performance.now() - t0;
			const rssUpload = peakRssMb(pid);
			let job: Record<string, any> = {};
			for (;;) {
				const r = await api.get(`/v1/intake/jobs/${upBody.job_id}?limit=1`);
				job = r.body;
				if (job.status === "completed" || job.status === "failed") break;
				await new Promise((res) => setTimeout(res, 100));
			}
			const secs = (performance.now() - t0) / 1000;
			done = true;
			const lat = await during;
			const rss = peakRssMb(pid);
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
