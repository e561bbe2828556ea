/**
 * The repository's Dockerfile read with `dockerfile-ast` (the parser of the
 * VS Code Docker extension) into build stages, for test/unit/ops/dockerfile.spec.ts
 * and scripts/image-smoke.sh (which replays the runtime stage without Docker).
 *
 * CLI (used by image-smoke.sh): `tsx scripts/dockerfile-stages.ts <what> [Dockerfile]`, printing JSON:
 *   - `copies <stage>`: that stage's COPY instructions `[{from, sources, dest}]`
 *   - `healthcheck`: the last stage's HEALTHCHECK command (exec form) as an argv array
 *   - `cmd`: the last stage's ENTRYPOINT + CMD as one argv array
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { DockerfileParser, type Instruction, ModifiableInstruction } from "dockerfile-ast";

/** One instruction: upper-case keyword, its words (without flags), the text after the keyword. */
export interface Step {
	keyword: string;
	args: string[];
	/** Arguments as written (flags excluded), line continuations joined. */
	text: string;
	/** Flags as `name=value` (or `name`), e.g. `from=build`, `start-period=60s`. */
	flags: string[];
	/** The value of a `--from=` flag (COPY), else null. */
	from: string | null;
	/** The exec-form (JSON array) arguments of CMD / ENTRYPOINT / HEALTHCHECK CMD, else null. */
	exec: string[] | null;
}

/** One build stage: `FROM <image> AS <name>` and the instructions up to the next FROM. */
export interface Stage {
	/** `AS` name, or the stage's index as a string when unnamed. */
	name: string;
	/** Image reference as written, e.g. `node:24-slim`. */
	image: string;
	imageName: string | null;
	imageTag: string | null;
	steps: Step[];
}

/** Exec-form arguments of an instruction's text (`["a","b"]`, after `CMD` for HEALTHCHECK), else null. */
function execForm(keyword: string, text: string): string[] | null {
	let t = text.trim();
	if (keyword === "HEALTHCHECK") {
		const m = /(?:^|\s)CMD\s+([\s\S]*)$/.exec(t);
		if (!m) return null;
		t = m[1].trim();
	}
	if (!t.startsWith("[")) return null;
	try {
		const v: unknown = JSON.parse(t);
		return Array.isArray(v) && v.every((x) => typeof x === "string") ? (v as string[]) : null;
	} catch {
		return null;
	}
}

function toStep(i: Instruction): Step {
	const keyword = i.getKeyword().toUpperCase();
	const text = (i.getArgumentsContent() ?? "").replace(/\\\r?\n/g, " ");
	const args = i.getArguments().map((a) => a.getValue());
	const flags = i instanceof ModifiableInstruction ? i.getFlags() : [];
	const from = flags.find((f) => f.getName() === "from")?.getValue() ?? null;
	return {
		keyword,
		args,
		text,
		flags: flags.map((f) => (f.getValue() === null ? f.getName() : `${f.getName()}=${f.getValue()}`)),
		from,
		exec: execForm(keyword, text),
	};
}

/**
 * Parses Dockerfile text into its stages (instructions before the first FROM,
 * i.e. global ARGs, are dropped).
 * @throws Error when the text has no FROM
 */
export function parseStages(text: string): Stage[] {
	const df = DockerfileParser.parse(text);
	const stages: Stage[] = [];
	for (const i of df.getInstructions()) {
		const step = toStep(i);
		if (step.keyword === "FROM") {
			const from = df.getFROMs().find((f) => f.getRange().start.line === i.getRange().start.line);
			stages.push({
				name: from?.getBuildStage() ?? String(stages.length),
				image: from?.getImage() ?? step.args[0],
				imageName: from?.getImageName() ?? null,
				imageTag: from?.getImageTag() ?? null,
				steps: [],
			});
		} else stages.at(-1)?.steps.push(step);
	}
	if (!stages.length) throw new Error("Dockerfile has no FROM");
	return stages;
}

/** Reads and parses a Dockerfile (default: the repository's). */
export function readStages(file = resolve(__dirname, "../Dockerfile")): Stage[] {
	return parseStages(readFileSync(file, "utf8"));
}

/** COPY instructions of a stage: `--from` stage (or null: the build context), sources, destination. */
export function copies(stage: Stage): { from: string | null; sources: string[]; dest: string }[] {
	return stage.steps
		.filter((s) => s.keyword === "COPY")
		.map((s) => {
			const words = s.exec ?? s.args;
			return { from: s.from, sources: words.slice(0, -1), dest: words[words.length - 1] };
		});
}

/** The command a stage's container runs: ENTRYPOINT (exec form) followed by CMD (exec form). */
export function containerCommand(stage: Stage): string[] {
	const last = (k: string) => stage.steps.filter((s) => s.keyword === k).at(-1);
	return [...(last("ENTRYPOINT")?.exec ?? []), ...(last("CMD")?.exec ?? [])];
}

if (require.main === module) {
	const [what, arg, file] = process.argv.slice(2);
	const stages = readStages(what === "copies" ? file : arg);
	const runtime = stages[stages.length - 1];
	let out: unknown;
	if (what === "copies") {
		const st = stages.find((s) => s.name === arg);
		if (!st) throw new Error(`no stage ${arg}`);
		out = copies(st);
	} else if (what === "healthcheck")
		out = runtime.steps.filter((s) => s.keyword === "HEALTHCHECK").at(-1)?.exec ?? null;
	else if (what === "cmd") out = containerCommand(runtime);
	else throw new Error("usage: dockerfile-stages.ts copies <stage> | healthcheck | cmd [Dockerfile]");
	process.stdout.write(`${JSON.stringify(out)}\n`);
}
