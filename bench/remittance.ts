/**
 * A courier's COD remittance file reconciled (issue 27; `npm run
 * bench:remittance`; printed figures, not a test): migrates the billing
 * schema of a fresh database, records BENCH_REMITTANCE_LINES (default
 * 10,000) collected COD shipments, builds the file a courier would send for
 * them (every 50th line with a short amount, every 100th an unknown AWB), and
 * reconciles it through `lib/billing/remittance.ts` as the
 * `billing.reconcileRemittance` action does: prints the wall time, the
 * process's peak RSS during it (and above what the process held before) and
 * the counts. Target (issue 27): ≤ 5 s and ≤ 200 MB.
 */
import { stringify } from "csv-stringify/sync";
import { BILLING_MIGRATIONS } from "../lib/billing/migrations";
import { reconcileRemittance } from "../lib/billing/remittance";
import { exec, getSequelize, migrate } from "../lib/platform/db";
import { benchEnvironment, peakRssMb, resetPeakRss } from "./lib";

const lines = Number(process.env.BENCH_REMITTANCE_LINES || 10_000);

async function main(): Promise<void> {
	const env = await benchEnvironment();
	Object.assign(process.env, env.common);
	try {
		const db = getSequelize();
		await migrate(db, "billing", BILLING_MIGRATIONS);
		// collected COD shipments, ₹100.00 + n paise each
		await exec(
			db,
			`INSERT INTO billing.shipments (awb_number, sender_id, order_id, logistic_id, payment_mode, cod_amount_paise,
				cod_status, status_seq, collected_at)
			 SELECT 'BR' || g, 900001 + g % 20, g, 1, 'cod', 10000 + g, 'collected', 6, now()
			 FROM generate_series(1, $1::int) g`,
			[lines],
		);
		const rows = Array.from({ length: lines }, (_, i) => {
			const g = i + 1;
			const paise = 10_000 + g - (g % 50 === 0 ? 100 : 0);
			return [
				g % 100 === 0 ? `UNKNOWN${g}` : `BR${g}`,
				(paise / 100).toFixed(2),
				"REM-BENCH-1",
				"2026-11-20",
			];
		});
		const csv = stringify(rows, {
			header: true,
			columns: ["awb_number", "amount", "remittance_reference", "remittance_date"],
		});
		// the phase's own peak: what the process held before (Node, tsx, the modules, the file) is the base
		global.gc?.();
		resetPeakRss(process.pid);
		const base = peakRssMb(process.pid);
		const t0 = process.hrtime.bigint();
		const report = await reconcileRemittance(
			{ db, logger: { warn: () => undefined, debug: () => undefined } as never },
			csv,
			1,
		);
		const s = Number(process.hrtime.bigint() - t0) / 1e9;
		const peak = peakRssMb(process.pid);
		console.log(
			`remittance file of ${lines} lines (${(Buffer.byteLength(csv) / 1e6).toFixed(2)} MB), node ${process.version}: ` +
				`${s.toFixed(2)} s, peak RSS ${peak.toFixed(0)} MB (${(peak - base).toFixed(0)} MB above the ${base.toFixed(0)} MB before it); matched ${report.matched} (₹${report.matched_amount}), ` +
				`exceptions ${report.exceptions} (${[...new Set(report.exception_lines.map((e) => e.kind))].join(", ")})`,
		);
		console.log(
			`target: <= 5 s and <= 200 MB for the reconciliation (above the process before it): ${s <= 5 && peak - base <= 200 ? "met" : "MISSED"}`,
		);
	} finally {
		await getSequelize()
			.close()
			.catch(() => undefined);
		await env.cleanup();
	}
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
