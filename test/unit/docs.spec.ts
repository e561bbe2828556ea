/**
 * The documents the code cites (issue 26): every decision record a file cites
 * (`docs/decisions/NNNN-slug.md`) exists, every `docs/ARCHITECTURE.md §N` names
 * a section docs/ARCHITECTURE.md has (`## §N …`), nothing cites the retired
 * single-file decision log or the design card's sections (the card's name and
 * a section, without `docs/…md`), and the index docs/decisions/README.md lists exactly
 * the record files, numbered 0001… without gaps, each under its own title.
 * Reads files only: no server, no database.
 */
import { strict as assert } from "node:assert";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const ROOT = join(__dirname, "..", "..");
const DECISIONS_DIR = join(ROOT, "docs", "decisions");
const ARCHITECTURE = join(ROOT, "docs", "ARCHITECTURE.md");
/** The retired log's file name, spelt in two parts so this file does not cite it. */
const OLD_LOG = ["DECISIONS", "md"].join(".");
/** The three-line pointer left where the old log was: the one file allowed to name it. */
const OLD_LOG_POINTER = `docs/${OLD_LOG}`;

/** A citation of a design card section: the card's name, a space, `§` (spelt in parts, so this file is not one). */
const CARD_SECTION = new RegExp(`(?<![\\w./-])${"ARCHITECTURE"} ${"§"}`);

/** Where citations live: source, tests, benchmarks, manifests, scripts, docs. */
const SCAN = [
	"lib",
	"services",
	"mixins",
	"bin",
	"test",
	"bench",
	"k8s",
	"scripts",
	"docs",
	"data",
	"config",
];
const SCAN_FILES = ["moleculer.config.ts", "README.md", "Dockerfile", "package.json", ".ci/run"];
const TEXT = /\.(ts|mts|js|mjs|json|md|ya?ml|sh)$/;

/** Every text file to scan, as paths relative to the repository root. */
function filesToScan(): string[] {
	const out: string[] = [];
	const walk = (dir: string): void => {
		for (const name of readdirSync(dir)) {
			if (name === "node_modules" || name.startsWith(".")) continue;
			const p = join(dir, name);
			if (statSync(p).isDirectory()) walk(p);
			else if (TEXT.test(name)) out.push(relative(ROOT, p));
		}
	};
	for (const d of SCAN) if (existsSync(join(ROOT, d))) walk(join(ROOT, d));
	for (const f of SCAN_FILES) if (existsSync(join(ROOT, f))) out.push(f);
	return out;
}

/** The record files: `NNNN-slug.md`. */
function recordFiles(): string[] {
	return readdirSync(DECISIONS_DIR)
		.filter((f) => /^\d{4}-[a-z0-9-]+\.md$/.test(f))
		.sort();
}

/** Section numbers of docs/ARCHITECTURE.md (`## §N …` headings). */
function architectureSections(): Set<number> {
	const text = readFileSync(ARCHITECTURE, "utf8");
	return new Set([...text.matchAll(/^## §(\d+) /gm)].map((m) => Number(m[1])));
}

/** A line break inside a comment (`\n * `, `\n// `, `\n# `) or plain whitespace. */
const GAP = String.raw`(?:\s*\n[ \t]*(?:\*|\/\/|#)?[ \t]*|[ \t]+)`;

/**
 * The section numbers cited by each `docs/ARCHITECTURE.md §N` of `text`:
 * `§2`, `§2, §3`, `§1 and §4`, `§1–§6` (a range counts every number in it).
 * A number without its own `§` ("§5 durability, points 2, 3") is not a section.
 */
function citedSections(text: string): number[] {
	const out: number[] = [];
	const cite = new RegExp(String.raw`docs/ARCHITECTURE\.md${GAP}§(\d+)`, "g");
	for (const m of text.matchAll(cite)) {
		let last = Number(m[1]);
		out.push(last);
		let rest = text.slice((m.index ?? 0) + m[0].length);
		for (;;) {
			const more = new RegExp(String.raw`^${GAP}?(,|–|-|and)${GAP}?§(\d+)`).exec(rest);
			if (!more) break;
			const n = Number(more[2]);
			if (more[1] === "–" || more[1] === "-") for (let k = last + 1; k < n; k++) out.push(k);
			out.push(n);
			last = n;
			rest = rest.slice(more[0].length);
		}
	}
	return out;
}

describe("docs: the decision records and the architecture the code cites", () => {
	const files = filesToScan();
	const records = new Set(recordFiles());
	const sections = architectureSections();

	it("docs/ARCHITECTURE.md has numbered sections §1… without gaps", () => {
		const nums = [...sections].sort((a, b) => a - b);
		assert.ok(nums.length >= 6, `only ${nums.length} sections`);
		assert.deepEqual(
			nums,
			nums.map((_, i) => i + 1),
		);
	});

	it("every cited decision record exists", () => {
		const missing: string[] = [];
		for (const f of files) {
			const text = readFileSync(join(ROOT, f), "utf8");
			for (const m of text.matchAll(/docs\/decisions\/(\d{4}-[A-Za-z0-9_-]+\.md)/g))
				if (!records.has(m[1])) missing.push(`${f}: docs/decisions/${m[1]}`);
			// relative links between records and from the docs folder
			if (f.startsWith("docs/"))
				for (const m of text.matchAll(/\]\((?:decisions\/)?(\d{4}-[A-Za-z0-9_-]+\.md)\)/g))
					if (!records.has(m[1])) missing.push(`${f}: ${m[1]}`);
		}
		assert.deepEqual(missing, [], `citations of decision records that do not exist:\n${missing.join("\n")}`);
	});

	it("every cited docs/ARCHITECTURE.md section exists", () => {
		const missing: string[] = [];
		for (const f of files) {
			const text = readFileSync(join(ROOT, f), "utf8");
			for (const n of citedSections(text)) if (!sections.has(n)) missing.push(`${f}: §${n}`);
		}
		assert.deepEqual(
			missing,
			[],
			`citations of sections docs/ARCHITECTURE.md does not have:\n${missing.join("\n")}`,
		);
	});

	it("nothing cites the retired decision log or the design card's sections", () => {
		const stale: string[] = [];
		for (const f of files) {
			if (f === OLD_LOG_POINTER) continue;
			const lines = readFileSync(join(ROOT, f), "utf8").split("\n");
			lines.forEach((line, i) => {
				if (line.includes(OLD_LOG)) stale.push(`${f}:${i + 1}: ${line.trim()}`);
				if (CARD_SECTION.test(line)) stale.push(`${f}:${i + 1}: ${line.trim()}`);
			});
		}
		assert.deepEqual(stale, [], `old citations (run the citation rewrite):\n${stale.join("\n")}`);
	});

	it("docs/decisions/README.md lists exactly the record files, in order, under their titles", () => {
		const index = readFileSync(join(DECISIONS_DIR, "README.md"), "utf8");
		const rows = [...index.matchAll(/^\| (\d{4}) \| \[(.+?)\]\((\d{4}-[a-z0-9-]+\.md)\) \|/gm)].map((m) => ({
			n: m[1],
			title: m[2].replace(/\\\|/g, "|"),
			file: m[3],
		}));
		const files = [...records];
		assert.deepEqual(
			rows.map((r) => r.file),
			files,
			"the index's rows and the record files differ (add or remove a row)",
		);
		rows.forEach((r, i) => {
			assert.equal(r.n, String(i + 1).padStart(4, "0"), `row ${i + 1}: numbers must run 0001… without gaps`);
			assert.equal(r.file.slice(0, 4), r.n, `${r.file}: listed as ${r.n}`);
			const head = readFileSync(join(DECISIONS_DIR, r.file), "utf8").split("\n")[0];
			assert.equal(head, `# ${r.n}. ${r.title}`, `${r.file}: its title and the index's differ`);
		});
	});

	it("every record has the MADR parts: status, context, decision, consequences", () => {
		const incomplete: string[] = [];
		for (const f of records) {
			const text = readFileSync(join(DECISIONS_DIR, f), "utf8");
			for (const part of [/^- Status: /m, /^## Context$/m, /^## Decision$/m, /^## Consequences$/m])
				if (!part.test(text)) incomplete.push(`${f}: ${part.source}`);
		}
		assert.deepEqual(incomplete, [], incomplete.join("\n"));
	});

	it("reads ranges and lists of sections, not the numbers after them", () => {
		assert.deepEqual(citedSections("(docs/ARCHITECTURE.md §2, §3)"), [2, 3]);
		assert.deepEqual(citedSections("docs/ARCHITECTURE.md §1–§4"), [1, 2, 3, 4]);
		assert.deepEqual(citedSections("docs/ARCHITECTURE.md §5 durability, points 2, 3, 4 and 5"), [5]);
		assert.deepEqual(citedSections(" * start, docs/ARCHITECTURE.md\n * §3) and x"), [3]);
		assert.deepEqual(citedSections("docs/ARCHITECTURE.md §1 and §4"), [1, 4]);
	});
});
