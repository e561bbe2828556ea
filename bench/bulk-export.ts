/**
 * Rows export benchmark (issue 10; docs/decisions/0040-bulk-rows-export.md;
 * printed figures, not a test): the worst case a merchant can make, a 25 MB
 * CSV whose every row fails (a pincode column filled with a bad value), then
 * `GET /v1/intake/jobs/{id}/rows.csv` of all of them.
 *
 *   import     upload → `completed` (BENCH_ROWS rows, every one `failed` with
 *              its cells kept): seconds
 *   export     the download through the gateway: time to the first byte and
 *              to the last, MB, rows/s, and the peak RSS each process of the
 *              system gained during the download (VmHWM reset before it), so
 *              streaming is seen to keep memory flat
 *
 * The system runs as bench/lib.ts starts it (one process; BENCH_SPLIT=1: the
 * gateway and intake in two processes over NATS, the export crossing as a
 * stream). Every exported record is counted and its `outcome` checked.
 *
 * Usage: npm run bench:bulk-export   (env: BENCH_SPLIT=1, BENCH_ROWS=85000)
 * Creates and drops its own database and Redis prefix (bench/lib.ts).
 */
import { parse } from "csv-parse";
import { TEMPLATE_COLUMNS } from "../lib/contracts/http/intake-bulk-input";
import { TEMPLATE_EXAMPLE } from "../lib/intake/bulk/columns";
import { peakRssMb, resetPeakRss, startSystem } from "./lib";

const ROWS = Number(process.env.BENCH_ROWS || 85_000);
const f = (n: number, d = 1) => n.toFixed(d);

/** A CSV of `rows` rows, each with the bad pincode `12`, padded to just under the 25 MB upload limit. */
function failingCsv(run: string, rows: number): Buffer {
	const limit = 25 * 1024 * 1024 - 16 * 1024;
	let pad = 120;
	let out = csvOf(run, rows, pad);
	while (out.length > limit && pad > 0) out = csvOf(run, rows, --pad);
	return out;
}

/** {@link failingCsv} with `pad` characters of padding in each address line. */
function csvOf(run: string, rows: number, padding: number): Buffer {
	const pad = "x".repeat(padding);
	const out = [TEMPLATE_COLUMNS.join(",")];
	for (let i = 1; i <= rows; i++)
		out.push(
			TEMPLATE_COLUMNS.map((c) => {
				if (c === "customer_order_no") return `E${run}-${i}`;
				if (c === "receiver_pincode") return "12";
				if (c === "receiver_address_1") return `${i} ${pad} Road Indiranagar`;
				if (c === "receiver_address_2") return `Block ${pad}`;
				return TEMPLATE_EXAMPLE[c].replace(/,/g, " ");
			}).join(","),
		);
	return Buffer.from(`${out.join("\n")}\n`);
}

async function main(): Promise<void> {
	const sys = await startSystem();
	try {
		console.log(`system: ${sys.mode}`);
		const bytes = failingCsv(sys.run, ROWS);
		const t0 = performance.now();
		const form = new FormData();
		form.append("sender_address_id", String(sys.warehouseId));
		form.append("import_file", new Blob([bytes], { type: "text/csv" }), "failing.csv");
		const up = await fetch(`${sys.base}/v1/intake/bulk`, {
			method: "POST",
			headers: { authorization: `Bearer ${sys.token}` },
			body: form,
		});
		const { job_id } = (await up.json()) as { job_id: number };
		if (up.status !== 202) throw new Error(`upload ${up.status}`);
		let job: { status: string; counts: { failed: number } };
		for (;;) {
			job = (await sys.api.get(`/v1/intake/jobs/${job_id}?limit=1`)).body;
			if (job.status === "completed" || job.status === "failed") break;
			await new Promise((r) => setTimeout(r, 500));
		}
		if (job.counts.failed !== ROWS) throw new Error(`expected ${ROWS} failed rows: ${JSON.stringify(job)}`);
		console.log(
			`import: ${f(bytes.length / 1048576)} MB, ${ROWS} rows, all failed, in ${f((performance.now() - t0) / 1000)} s`,
		);

		await new Promise((r) => setTimeout(r, 1000));
		// after the reset the peak is the RSS at rest
		for (const pid of sys.pids) resetPeakRss(pid);
		const before = sys.pids.map(peakRssMb);
		const t1 = performance.now();
		const res = await fetch(`${sys.base}/v1/intake/jobs/${job_id}/rows.csv`, {
			headers: { authorization: `Bearer ${sys.token}` },
		});
		if (res.status !== 200 || !res.body) throw new Error(`export ${res.status}: ${await res.text()}`);
		let firstByte = Number.NaN;
		let size = 0;
		let records = 0;
		const parser = parse({ bom: true, columns: true });
		const counted = (async () => {
			for await (const rec of parser as AsyncIterable<Record<string, string>>) {
				if (rec.outcome !== "failed") throw new Error(`row ${rec.row_no}: outcome ${rec.outcome}`);
				records++;
			}
		})();
		for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
			if (!size) firstByte = performance.now() - t1;
			size += chunk.length;
			if (!parser.write(chunk)) await new Promise((r) => parser.once("drain", r));
		}
		parser.end();
		await counted;
		const secs = (performance.now() - t1) / 1000;
		if (records !== ROWS) throw new Error(`exported ${records} records, expected ${ROWS}`);
		const gained = sys.pids.map((pid, i) => peakRssMb(pid) - before[i]);
		console.log(
			`export: ${records} rows, ${f(size / 1048576)} MB, first byte ${f(firstByte, 0)} ms, all in ${f(secs, 2)} s ` +
				`(${f(records / secs, 0)} rows/s); peak RSS gained during the download: ${gained
					.map((g, i) => `process ${i + 1} +${f(g, 0)} MB (at rest ${f(before[i], 0)} MB)`)
					.join(", ")}`,
		);
	} finally {
		await sys.close();
	}
}

main().catch((e) => {
	console.error(e);
	process.exit(1);
});
