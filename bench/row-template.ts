/**
 * What pg's row template costs per statement, upstream's `Result#addFields` against lib/platform/pg-row-template.ts
 * (issue 32, docs/decisions/0149-pg-row-template.md; printed figures, not a test). For row descriptions of 5, 20,
 * 60 and 120 columns (text and int8 alternating, as pg-protocol hands them over), prints the µs per `addFields`
 * on a fresh Result (what every statement pays once, whether or not a row comes back) and per `parseRow` of one
 * row from the template it made (what every row pays), for each implementation, with the row template's ratio.
 * Each figure is the best of BENCH_ROUNDS (default 5) rounds of BENCH_ROW_CALLS (default 20000) calls.
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
type AddFields = typeof addFields;

/** Best µs per call of `fn` over the rounds. */
function best(fn: (i: number) => unknown): number {
	let min = Number.POSITIVE_INFINITY;
	let sink: unknown;
	for (let r = 0; r < rounds; r++) {
		const t = process.hrtime.bigint();
		for (let i = 0; i < calls; i++) sink = fn(i);
		min = Math.min(min, Number(process.hrtime.bigint() - t) / calls / 1000);
	}
	if (sink === Symbol.for("never")) console.log(sink);
	return min;
}

function main(): void {
	console.log(`pg Result#addFields and #parseRow, node ${process.version}, best of ${rounds} × ${calls}`);
	for (const width of [5, 20, 60, 120]) {
		const fields: FieldDescription[] = Array.from({ length: width }, (_, i) => ({
			name: `column_${i}`,
			dataTypeID: i % 2 ? 25 : 20,
			format: "text",
		}));
		const data = fields.map((_, i) => String(i));
		const line = (name: string, f: AddFields): [number, number] => {
			const made = best(() => {
				const r = new ResultClass();
				f.call(r as never, fields);
				return r;
			});
			const r = new ResultClass();
			f.call(r as never, fields);
			const row = best(() => r.parseRow(data));
			console.log(
				`${String(width).padStart(4)} columns  ${name.padEnd(12)} addFields ${made.toFixed(2).padStart(7)} µs   parseRow ${row.toFixed(2).padStart(6)} µs`,
			);
			return [made, row];
		};
		const [upMade] = line("upstream", upstreamAddFields);
		const [ourMade] = line("row template", addFields);
		console.log(
			`${" ".repeat(14)}addFields: the row template takes ${((100 * ourMade) / upMade).toFixed(0)} % of upstream's time`,
		);
	}
}

main();
