/**
 * Documents benchmark (issue 8 "Benchmark"; printed figures, not a test):
 * label rendering in this process (lib/documents/label.ts, bulk.ts), after a
 * warm-up, as the documents service does it:
 *
 *   label            one 4 × 6 inch label (Latin, COD ₹): ms per render (p50, p99), bytes
 *   label CPU        process.cpuUsage() around BENCH_LABELS single renders: CPU ms per label
 *   label, scripts   one label whose consignee and return address mix the eight Indian
 *                    scripts (each run shaped with its own Noto face): ms, CPU ms, bytes
 *   bulk 200         ONE 200-page PDF (lib/documents/bulk.ts renderBulkLabels, distinct
 *                    consignees, 3 warehouses): ms per document, bytes
 *   bulk 200 mixed   the same with one label in four in an Indian script: ms, bytes
 *
 * Targets (issue 8, 2-core machine): 200 labels < 500 ms and < 1.5 MB; one
 * label < 10 ms of CPU.
 *
 * More cases (courier-issued labels, …) go in {@link CASES}: each is a name and
 * an async function answering the figures it printed.
 *
 * Usage: npm run bench:documents   (env: BENCH_LABELS=300 single renders,
 *   BENCH_BULK=5 bulk documents per case)
 */
import { type BulkLabel, renderBulkLabels } from "../lib/documents/bulk";
import { warmLabelFonts } from "../lib/documents/font";
import { type LabelData, renderLabel } from "../lib/documents/label";
import { manifestRenderFigures } from "./manifest";

const singles = Number(process.env.BENCH_LABELS || 300);
const bulks = Number(process.env.BENCH_BULK || 5);

/** Percentile `p` (0–100) of sorted `xs`. */
function pct(xs: number[], p: number): number {
	const s = [...xs].sort((a, b) => a - b);
	return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
}

const NAMES = ["Ram Kumar", "Priya Sharma", "Arjun Mehta", "Fatima Shaikh", "Joseph D'Souza", "Lakshmi Iyer"];
const SCRIPT_NAMES = [
	"रवि शर्मा",
	"সুমন বন্দ্যোপাধ্যায়",
	"ਗੁਰਪ੍ਰੀਤ ਸਿੰਘ",
	"કિરણ પટેલ",
	"ரவி குமார்",
	"వెంకట రమణ",
	"ಮಂಜುನಾಥ ಗೌಡ",
	"അനിൽ കുമാർ",
];

/** A realistic label: `i` varies the consignee, AWB and order; `scripts` puts Indian scripts in it. */
function label(i: number, scripts = false): LabelData {
	const name = scripts ? `Ravi ${SCRIPT_NAMES[i % SCRIPT_NAMES.length]}` : `${NAMES[i % NAMES.length]} ${i}`;
	const wh = i % 3;
	return {
		awb_number: `7${String(100_000 + i).padStart(12, "0")}`,
		courier_name: "Sandbox Express",
		routing_code: "BLR/KOR",
		direction: "forward",
		payment: i % 2 ? "COD" : "PREPAID",
		cod_amount: i % 2 ? 1499.5 + i : 0,
		declared_value: 1499 + i,
		weight_kg: 0.75,
		dimensions_cm: { length: 30, width: 20, height: 10 },
		product_name: "Cotton kurta, blue, size M",
		product_sku: `KRT-BL-${i}`,
		order_no: `SHOP-${10_000 + i}`,
		order_id: 500_000 + i,
		order_date: "2026-11-21T06:30:00.000Z",
		ship_to: {
			name,
			lines: scripts
				? [`${i} ${SCRIPT_NAMES[(i + 3) % SCRIPT_NAMES.length]} Nagar, 4th Cross`, "Near City Hospital"]
				: [`Flat ${i}B, Shanti Apartments, 4th Cross Road`, "Near City Hospital"],
			city: "Bengaluru",
			state: "Karnataka",
			pincode: "560001",
			phone: "9876543210",
		},
		from: {
			name: `Acme Fulfilment ${wh}`,
			lines: ["Plot 7, MIDC Industrial Area", "Bhosari"],
			city: "Pune",
			state: "Maharashtra",
			pincode: "411026",
			phone: "9123456780",
			contact: scripts ? "सीता राव" : "Sita Rao",
		},
		seller: { name: `Acme Fulfilment ${wh}`, gstin: "27AAPFU0939F1ZV" },
	};
}

/** ms of each of `n` runs of `work` (after the caller's warm-up). */
async function timed(n: number, work: () => Promise<unknown>): Promise<number[]> {
	const out: number[] = [];
	for (let i = 0; i < n; i++) {
		const t0 = performance.now();
		await work();
		out.push(performance.now() - t0);
	}
	return out;
}

/** CPU ms (user + system) per run of `n` runs of `work`. */
async function cpuPer(n: number, work: (i: number) => Promise<unknown>): Promise<number> {
	const c0 = process.cpuUsage();
	for (let i = 0; i < n; i++) await work(i);
	const c = process.cpuUsage(c0);
	return (c.user + c.system) / 1000 / n;
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;
const ms = (x: number) => `${x.toFixed(1)} ms`;

/** One label, Latin or scripts: time, CPU, bytes. */
async function single(scripts: boolean): Promise<string> {
	for (let i = 0; i < 30; i++) await renderLabel(label(i, scripts)); // warm-up (JIT, caches)
	const bytes = (await renderLabel(label(1, scripts))).length;
	const times = await timed(singles, () => renderLabel(label(7, scripts)));
	const cpu = await cpuPer(singles, (i) => renderLabel(label(i, scripts)));
	return `p50 ${ms(pct(times, 50))}   p99 ${ms(pct(times, 99))}   CPU ${ms(cpu)} per label   ${kb(bytes)}`;
}

/** A 200-page bulk document: time per document, bytes. */
async function bulk(scriptsEvery: number): Promise<string> {
	const labels: BulkLabel[] = Array.from({ length: 200 }, (_, i) => ({
		kind: "generated" as const,
		key: { order_id: 500_000 + i, sender_id: 1, awb_number: `7${i}`, logistic_id: 1 },
		data: label(i, scriptsEvery > 0 && i % scriptsEvery === 0),
	}));
	await renderBulkLabels(labels); // warm-up
	const bytes = (await renderBulkLabels(labels)).length;
	const times = await timed(bulks, () => renderBulkLabels(labels));
	const cpu = await cpuPer(1, () => renderBulkLabels(labels));
	return `p50 ${ms(pct(times, 50))}   max ${ms(Math.max(...times))}   CPU ${ms(cpu)}   ${kb(bytes)}`;
}

/** The benchmark's cases, in print order (extend here). */
export const CASES: Array<{ name: string; run: () => Promise<string> }> = [
	{ name: "label", run: () => single(false) },
	{ name: "label, scripts", run: () => single(true) },
	{ name: "bulk 200", run: () => bulk(0) },
	{ name: "bulk 200 mixed", run: () => bulk(4) },
	// the 200-row manifest PDF alone (bench/manifest.ts; `npm run bench:manifest` times the whole request)
	{ name: "manifest 200", run: manifestRenderFigures },
];

async function main(): Promise<void> {
	const t0 = performance.now();
	warmLabelFonts();
	console.log(`fonts warmed in ${ms(performance.now() - t0)} (service start)`);
	console.log(`targets: bulk 200 < 500 ms and < 1.5 MB; one label < 10 ms CPU`);
	for (const c of CASES) console.log(`${c.name.padEnd(16)} ${await c.run()}`);
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
