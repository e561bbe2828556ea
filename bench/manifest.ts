/**
 * Manifest benchmark (issue 8 "Benchmark"; printed figures, not a test):
 *
 *   render     the 200-row PDF alone (lib/documents/manifest.ts, in this
 *              process, after a warm-up): ms, CPU ms and bytes
 *   request    POST /v1/documents/manifest with 200 booked orders against the
 *              system started as in production (bench/lib.ts: one process, or
 *              split over NATS with BENCH_SPLIT=1): ms (client) and bytes per
 *              request, BENCH_MANIFESTS requests after one warm-up request,
 *              each over 200 orders of its own (an AWB is manifested once).
 *              Covers the gateway, 400 collaborator calls (intake, booking),
 *              the warehouse, the transaction and the PDF.
 *
 * Afterwards it waits for the documents outbox to reach booking
 * (booking.markManifested): how many shipments are `manifested`.
 * Target (issue 8, 2-core machine): a 200-row manifest < 500 ms.
 *
 * Usage: npm run bench:manifest   (env: BENCH_SPLIT=1, BENCH_MANIFESTS=5, BENCH_ROWS=200)
 * Creates and drops its own database and Redis prefix (bench/lib.ts).
 */
import { Client } from "pg";
import { type ManifestSection, renderManifest } from "../lib/documents/manifest";
import { orderBody } from "../test/helpers/fixtures";
import { type BenchSystem, pct, startSystem } from "./lib";

const manifests = Number(process.env.BENCH_MANIFESTS || 5);
const rows = Number(process.env.BENCH_ROWS || 200);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `work(i)` for i in 0..n-1 over `width` concurrent lanes. */
async function lanes(n: number, width: number, work: (i: number) => Promise<void>): Promise<void> {
	let next = 0;
	await Promise.all(
		Array.from({ length: Math.min(width, n) }, async () => {
			for (let i = next++; i < n; i = next++) await work(i);
		}),
	);
}

/** `ms` figures as `p50 … ms   max … ms`. */
function figures(ms: number[]): string {
	const s = [...ms].sort((a, b) => a - b);
	return `p50 ${pct(s, 50).toFixed(1).padStart(6)} ms   max ${(s.at(-1) ?? Number.NaN).toFixed(1).padStart(6)} ms`;
}

/**
 * The PDF alone: `rows` synthetic parcels in one section (one consignee in
 * seven in Devanagari); answers the printed figures (ms, CPU ms, bytes). Also
 * a case of bench/documents.ts (`npm run bench:documents`).
 */
export async function manifestRenderFigures(): Promise<string> {
	const section: ManifestSection = {
		manifest_no: "MF-20261121-000001",
		courier_name: "Sandbox Express",
		warehouse: {
			name: "Bench warehouse",
			lines: ["Plot 7, MIDC, Bhosari", "Pune, Maharashtra 411026"],
			phone: "9123456780",
		},
		created_at: new Date().toISOString(),
		parcels: Array.from({ length: rows }, (_, i) => ({
			awb_number: `7${String(100_000_000_000 + i)}`,
			order_no: `ORD-BENCH-${i}`,
			consignee_name: i % 7 === 0 ? "रवि कुमार" : "Ravi Kumar",
			pincode: "560001",
			weight_kg: 0.8,
			cod_amount: i % 2 ? 1499 : 0,
		})),
	};
	await renderManifest([section]); // warm-up (fonts, shaping caches)
	const ms: number[] = [];
	const cpu: number[] = [];
	let bytes = 0;
	for (let i = 0; i < 5; i++) {
		const c0 = process.cpuUsage();
		const t0 = performance.now();
		const pdf = await renderManifest([section]);
		ms.push(performance.now() - t0);
		const c = process.cpuUsage(c0);
		cpu.push((c.user + c.system) / 1000);
		bytes = pdf.byteLength;
	}
	const cpuP50 = pct(
		[...cpu].sort((a, b) => a - b),
		50,
	);
	return `${rows} rows  ${figures(ms)}   CPU p50 ${cpuP50.toFixed(1)} ms   ${(bytes / 1024).toFixed(0)} KiB`;
}

/** Creates and books `n` orders (20 concurrent requests each); answers their ids once all are booked. */
async function bookedOrders(sys: BenchSystem, db: Client, n: number): Promise<number[]> {
	const ids: number[] = new Array(n);
	await lanes(n, 20, async (i) => {
		const r = await sys.api.post("/v1/intake/order", orderBody(sys.warehouseId, `MF-${sys.run}-${i}`));
		if (r.status !== 201) throw new Error(`order: ${r.status} ${JSON.stringify(r.body)}`);
		ids[i] = r.body.order_id;
	});
	await lanes(n, 20, async (i) => {
		const r = await sys.api.post("/v1/shipping/book", { order_id: ids[i] });
		if (r.status !== 202) throw new Error(`book: ${r.status} ${JSON.stringify(r.body)}`);
	});
	const end = Date.now() + 120_000;
	for (;;) {
		const { rows: r } = await db.query<{ booked: string; failed: string }>(
			`SELECT count(*) FILTER (WHERE state = 'booked') AS booked, count(*) FILTER (WHERE state = 'failed') AS failed
			FROM booking.attempts WHERE order_id = ANY($1::bigint[])`,
			[ids],
		);
		if (Number(r[0].failed)) throw new Error(`${r[0].failed} bookings failed`);
		if (Number(r[0].booked) >= n) return ids;
		if (Date.now() > end) throw new Error(`only ${r[0].booked}/${n} booked after 120 s`);
		await sleep(200);
	}
}

async function main(): Promise<void> {
	console.log(`render   ${await manifestRenderFigures()}`);
	const sys = await startSystem({ SANDBOX_COURIER_DELAY_MS: "0" });
	const db = new Client({ connectionString: sys.databaseUrl });
	await db.connect();
	try {
		console.log(`system   ${sys.mode}; booking ${(manifests + 1) * rows} orders…`);
		const ids = await bookedOrders(sys, db, (manifests + 1) * rows);
		const ms: number[] = [];
		const sizes: number[] = [];
		let sections = 0;
		for (let m = 0; m <= manifests; m++) {
			const batch = ids.slice(m * rows, (m + 1) * rows);
			const t0 = performance.now();
			const r = await sys.api.post("/v1/documents/manifest", { order_ids: batch });
			const took = performance.now() - t0;
			if (r.status !== 200 || !r.bytes) throw new Error(`manifest: ${r.status} ${JSON.stringify(r.body)}`);
			if (Number(r.headers.get("x-manifest-count")) !== batch.length) throw new Error("x-manifest-count");
			sections = (r.headers.get("x-manifest-no") ?? "").split(",").length;
			if (m === 0) continue; // warm-up
			ms.push(took);
			sizes.push(r.bytes.length);
		}
		console.log(
			`request  ${rows} orders  ${figures(ms)}   ${(Math.max(...sizes) / 1024).toFixed(0)} KiB   (${sections} section(s), ${manifests} requests)   target < 500 ms`,
		);
		// the outbox reaches booking (booking.markManifested): shipments moved to manifested
		const end = Date.now() + 30_000;
		let moved = 0;
		while (Date.now() < end) {
			const { rows: r } = await db.query<{ n: string }>(
				"SELECT count(*) AS n FROM booking.attempts WHERE order_id = ANY($1::bigint[]) AND shipment_status = 'manifested'",
				[ids],
			);
			moved = Number(r[0].n);
			if (moved >= ids.length) break;
			await sleep(250);
		}
		console.log(`outbox   ${moved}/${ids.length} shipments manifested at booking`);
	} finally {
		await db.end();
		await sys.close();
	}
}

if (require.main === module) {
	main().catch((err) => {
		console.error(err);
		process.exit(1);
	});
}
