/**
 * What pg's row template costs per statement, upstream's `Result#addFields` against lib/platform/pg-row-template.ts
 * (issue 32, docs/decisions/0149-pg-row-template.md; printed figures, not a test). For row descriptions of 5, 20,
 * 60 and 120 columns (int4 and text alternating), each statement as pg receives it: a new Result, the column names
 * read afresh from bytes (pg-protocol makes new strings from every message), `addFields`, then one row parsed
 * from the template (`parseRow`). Prints the CPU µs per statement for each implementation and the row template's
 * share of upstream's; each figure is the best of BENCH_ROUNDS (default 5) rounds of BENCH_ROW_CALLS (default
 * 20000) statements.
 *
 * Usage: npm run bench:row-template
 */
import pg from "pg";
import { addFields, type FieldDescription, upstreamAddFields } from "../lib/platform/pg-row-template";

const rounds = Number(process.env.BENCH_ROUNDS || 5);
const calls = Number(process.env.BENCH_ROW_CALLS || 20_000);

/** The parts of pg's Result used here. */
interface BenchResult {
	parseRow(rowData: unknown[]): Record<string, unknown>;
}
const ResultClass = (pg as unknown as { Result: new () => BenchResult }).Result;

/** Best CPU µs per call of `fn` over the rounds. */
function best(fn: () => unknown): number {
	let min = Number.POSITIVE_INFINITY;
	let sink: unknown;
	for (let r = 0; r < rounds; r++) {
		const t = process.cpuUsage();
		for (let i = 0; i < calls; i++) sink = fn();
		const used = process.cpuUsage(t);
		min = Math.min(min, (used.user + used.system) / calls);
	}
	if (sink === Symbol.for("never")) console.log(sink);
	return min;
}

function main(): void {
	console.log(
		`pg Result#addFields + one parseRow per statement, node ${process.version}, best of ${rounds} × ${calls}`,
	);
	for (const width of [5, 20, 60, 120]) {
		const names = Array.from({ length: width }, (_, i) => Buffer.from(`column_name_${i}`));
		const data = names.map((_, i) => String(i));
		/** the statement's row description as pg-protocol hands it over: names read from bytes */
		const described = (): FieldDescription[] =>
			names.map((b, i) => ({
				name: b.toString("utf8", 0, b.length),
				dataTypeID: i % 2 ? 25 : 23,
				format: "text",
			}));
		const statement = (f: typeof addFields) => () => {
			const r = new ResultClass();
			f.call(r as never, described());
			return r.parseRow(data);
		};
		const up = best(statement(upstreamAddFields));
		const ours = best(statement(addFields));
		console.log(
			`${String(width).padStart(4)} columns  upstream ${up.toFixed(2).padStart(7)} µs   row template ${ours.toFixed(2).padStart(7)} µs   (${((100 * ours) / up).toFixed(0)} % of upstream's)`,
		);
	}
}

main();
