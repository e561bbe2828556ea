/**
 * The container image's rules (issue 13), read from the Dockerfile with a real
 * parser (dockerfile-ast, via scripts/dockerfile-stages.ts): multi-stage on the
 * official Node 24 slim base, production dependencies only in the runtime
 * stage, compiled JavaScript (never tsx) started with start:prod's V8 flags
 * under tini, a non-root user, a HEALTHCHECK on /ready, NODE_ENV=production,
 * EXPOSE; and that what the compiled code reads at run time is in the image.
 * scripts/image-smoke.sh proves the same runtime stage actually starts.
 */
import { strict as assert } from "node:assert";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import {
	containerCommand,
	copies,
	parseStages,
	readStages,
	type Stage,
} from "../../../scripts/dockerfile-stages";

const root = resolve(__dirname, "../../..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
	scripts: Record<string, string>;
	dependencies: Record<string, string>;
	devDependencies: Record<string, string>;
};

/** Every .ts file under `dir` (recursive). */
function tsFiles(dir: string): string[] {
	return readdirSync(dir).flatMap((n) => {
		const p = join(dir, n);
		return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith(".ts") ? [p] : [];
	});
}

/** Package name of a bare module specifier (`@a/b/c` → `@a/b`, `x/y` → `x`), null for relative / node: ones. */
function packageOf(spec: string): string | null {
	if (spec.startsWith(".") || spec.startsWith("node:") || spec.startsWith("/")) return null;
	const parts = spec.split("/");
	return spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/**
 * Modules a source file loads at run time: value imports (not `import type`),
 * `export … from`, `require("x")` and `import("x")` outside template literals.
 */
function runtimeImports(src: string): string[] {
	const code = src
		.replace(/\/\*[\s\S]*?\*\//g, "")
		.replace(/^\s*\/\/.*$/gm, "")
		.replace(/`(?:\\[\s\S]|[^`\\])*`/g, "``");
	const out: string[] = [];
	for (const m of code.matchAll(/^\s*(?:import|export)\s+(?!type\s)([^;]*?)\s+from\s+"([^"]+)"/gm)) {
		// `import { type A, type B } from` loads nothing either
		if (/^\{\s*(?:type\s+\w+\s*,?\s*)+\}$/.test(m[1].trim())) continue;
		out.push(m[2]);
	}
	for (const m of code.matchAll(/^\s*import\s+"([^"]+)"/gm)) out.push(m[1]);
	for (const m of code.matchAll(/\b(?:require|import)\(\s*"([^"]+)"\s*\)/g)) out.push(m[1]);
	return out;
}

/** The RUN lines of a stage, as written. */
const runs = (s: Stage) => s.steps.filter((x) => x.keyword === "RUN").map((x) => x.text);

describe("Dockerfile (container image rules, issue 13)", () => {
	const stages = readStages();
	const build = stages[0];
	const runtime = stages[stages.length - 1];

	it("is multi-stage, every stage on the official Node 24 slim image pinned by tag", () => {
		assert.ok(stages.length >= 2, "a build stage and a runtime stage");
		for (const s of stages) {
			assert.equal(s.imageName, "node", `stage ${s.name}: ${s.image}`);
			assert.equal(s.imageTag, "24-slim", `stage ${s.name}: ${s.image}`);
		}
		assert.notEqual(build.name, runtime.name);
	});

	it("build stage: npm ci of the whole lock, then npm run build (tsc → dist/)", () => {
		const r = runs(build);
		const ci = r.findIndex((t) => /\bnpm ci\b/.test(t));
		const b = r.findIndex((t) => /\bnpm run build\b/.test(t));
		assert.ok(ci >= 0 && b > ci, r.join("\n"));
		assert.ok(!/--omit=dev/.test(r[ci]), "the build needs the dev dependencies (typescript)");
		assert.match(
			pkg.scripts.build,
			/^node -e "require\('node:fs'\).rmSync\('dist',\{recursive:true,force:true\}\)" && tsc -p tsconfig\.build\.json$/,
		);
		// everything tsconfig.build.json compiles is in the build context, plus the JSON lib/ imports
		const tsb = JSON.parse(readFileSync(join(root, "tsconfig.build.json"), "utf8")) as { include: string[] };
		const copied = copies(build).flatMap((c) => c.sources);
		for (const p of [
			...tsb.include.map((x) => (existsSync(join(root, x)) ? x : `${x}.ts`)),
			"data",
			"tsconfig.json",
		])
			assert.ok(
				copied.includes(p) || copied.includes(p.replace(/\.ts$/, "") + ".ts"),
				`build stage copies ${p}`,
			);
	});

	it("runtime stage: production dependencies only, dist/ from the build stage, the config the code reads", () => {
		const r = runs(runtime);
		const ci = r.filter((t) => /\bnpm (ci|install|i)\b/.test(t));
		assert.equal(ci.length, 1, r.join("\n"));
		assert.match(ci[0], /\bnpm ci\b[^&;]*--omit=dev/);
		assert.ok(!r.some((t) => /\bnpm run build\b|\btsc\b/.test(t)), "no compiler in the runtime stage");
		const c = copies(runtime);
		assert.ok(
			c.some((x) => x.from === build.name && x.sources.includes("/app/dist")),
			JSON.stringify(c),
		);
		assert.ok(
			c.some((x) => x.from === null && x.sources.includes("config")),
			"config/dev-users.json (devauth)",
		);
		assert.ok(existsSync(join(root, "config/dev-users.json")));
		assert.ok(
			!c.some((x) => x.from === null && x.sources.some((s) => /^(lib|services|bin|mixins)$/.test(s))),
		);
	});

	it("runtime stage: tini as PID 1 running `node <start:prod flags> dist/bin/start.js`, never tsx", () => {
		const cmd = containerCommand(runtime);
		assert.deepEqual(cmd.slice(0, 2), ["/usr/bin/tini", "--"]);
		assert.ok(
			runs(runtime).some((t) => /apt-get install[^&]*\btini\b/.test(t)),
			"tini installed from Debian",
		);
		const prod = pkg.scripts["start:prod"].trim().split(/\s+/);
		assert.deepEqual(cmd.slice(2), prod, "the command line of npm run start:prod");
		assert.equal(prod[prod.length - 1], "dist/bin/start.js");
		assert.ok(!cmd.some((w) => /tsx|\.ts$/.test(w)), cmd.join(" "));
		// shell form would put /bin/sh, not tini/node, in front of the process and swallow SIGTERM
		for (const k of ["ENTRYPOINT", "CMD"])
			for (const s of runtime.steps.filter((x) => x.keyword === k)) assert.ok(s.exec, `${k} in exec form`);
	});

	it("runtime stage: runs as the image's non-root `node` user, NODE_ENV=production, EXPOSE", () => {
		const users = runtime.steps.filter((s) => s.keyword === "USER");
		assert.ok(users.length, "USER set");
		const u = users[users.length - 1].args[0];
		assert.ok(!/^(root|0)(:|$)/.test(u), `USER ${u}`);
		assert.equal(u, "node");
		// nothing runs as root after USER except what the image declares later (no USER root back)
		assert.ok(
			runtime.steps.findIndex((s) => s.keyword === "USER") >
				runtime.steps.findIndex((s) => s.keyword === "RUN"),
		);
		assert.ok(
			runtime.steps.some((s) => s.keyword === "ENV" && /\bNODE_ENV=production\b/.test(s.text)),
			"ENV NODE_ENV=production",
		);
		const exposed = runtime.steps.filter((s) => s.keyword === "EXPOSE").flatMap((s) => s.args);
		for (const p of ["3000", "9100"]) assert.ok(exposed.includes(p), `EXPOSE ${p}`);
	});

	it("runtime stage: HEALTHCHECK asks /ready of PORT (gateway) or HEALTH_PORT, with node (no curl in slim)", () => {
		const hc = runtime.steps.filter((s) => s.keyword === "HEALTHCHECK");
		assert.equal(hc.length, 1);
		const argv = hc[0].exec;
		assert.ok(argv, "exec form");
		assert.equal(argv[0], "node");
		const js = argv.slice(1).join(" ");
		assert.match(js, /\/ready/);
		assert.match(js, /HEALTH_PORT/);
		assert.match(js, /\bPORT\b/);
		assert.ok(
			hc[0].flags.some((f) => f.startsWith("start-period=")),
			`a start period covers the first migrations: ${hc[0].flags}`,
		);
	});

	it("production dependencies are enough for dist/: no source file loads a dev dependency at run time", () => {
		assert.ok(!pkg.dependencies.tsx, "tsx is a dev dependency (npm start / tests only)");
		const dev = new Set(Object.keys(pkg.devDependencies));
		const offenders: string[] = [];
		for (const dir of ["bin", "lib", "mixins", "services"])
			for (const f of tsFiles(join(root, dir)))
				for (const spec of runtimeImports(readFileSync(f, "utf8"))) {
					const p = packageOf(spec);
					if (p && dev.has(p) && !pkg.dependencies[p]) offenders.push(`${f.slice(root.length + 1)}: ${spec}`);
				}
		for (const spec of runtimeImports(readFileSync(join(root, "moleculer.config.ts"), "utf8"))) {
			const p = packageOf(spec);
			if (p && dev.has(p)) offenders.push(`moleculer.config.ts: ${spec}`);
		}
		assert.deepEqual(offenders, []);
	});

	it("the import scan and the stage parser catch what they are meant to (self-check)", () => {
		assert.deepEqual(
			runtimeImports(
				'import { x } from "tsx";\nimport type { Y } from "ajv";\nconst t = `require("tsx/cjs")`;',
			),
			["tsx"],
		);
		assert.deepEqual(runtimeImports('const m = require("yaml");'), ["yaml"]);
		const bad = parseStages("FROM node:24 AS b\nRUN npm ci\nCMD npm start\n");
		assert.equal(bad.length, 1);
		assert.equal(bad[0].imageTag, "24");
		assert.equal(containerCommand(bad[0]).length, 0, "shell-form CMD is not exec form");
	});

	it(".dockerignore keeps node_modules, dist, state and tooling out of the build context", () => {
		const lines = readFileSync(join(root, ".dockerignore"), "utf8")
			.split("\n")
			.map((l) => l.trim())
			.filter((l) => l && !l.startsWith("#"));
		for (const p of ["node_modules", "dist", ".data", ".ci-node", ".git", "test", ".env"])
			assert.ok(lines.includes(p), `.dockerignore lists ${p}`);
		// …but never what the Dockerfile copies from the context
		const fromContext = stages.flatMap((s) =>
			copies(s)
				.filter((c) => c.from === null)
				.flatMap((c) => c.sources),
		);
		for (const s of fromContext) assert.ok(!lines.includes(s), `${s} is copied, so not ignored`);
	});
});
