/**
 * A client generated from the SERVED OpenAPI document works first time
 * (issue 25): the system runs in this process (every service on one broker
 * over real NATS, PostgreSQL, Redis, the sandbox courier, a development IdP);
 * `GET /v1/openapi.json` is turned into TypeScript types by openapi-typescript;
 * the typical-flow client (generated-client/flow.mts, openapi-fetch over those
 * types) is type-checked by the project's TypeScript 7 `tsc` (strict) and then
 * run with tsx against the server. A route, parameter or field that drifted
 * from the document breaks the build; generated-client/drift.mts proves it
 * does (one compiler error per drifted line, none elsewhere).
 * docs/decisions/0072-generated-client-test.md.
 */

import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { ALL_SERVICES } from "../../lib/platform/config";
import { newSender } from "../helpers/broker";
import { useCluster } from "../helpers/cluster";

const run = promisify(execFile);
const ROOT = join(__dirname, "..", "..");
const TEMPLATES = join(__dirname, "generated-client");
/** The project's own compiler (TypeScript 7, native), not one of a dependency. */
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");
const TSX = join(ROOT, "node_modules", "tsx", "dist", "cli.mjs");

/** Outcome of a child process: its exit code and output (never throws on a non-zero exit). */
async function exec(
	file: string,
	args: string[],
	opts: { cwd: string; env?: NodeJS.ProcessEnv; timeout: number },
): Promise<{ code: number; stdout: string; stderr: string }> {
	try {
		const { stdout, stderr } = await run(file, args, { ...opts, maxBuffer: 16 * 1024 * 1024 });
		return { code: 0, stdout, stderr };
	} catch (err: any) {
		if (typeof err.code !== "number") throw err;
		return { code: err.code, stdout: err.stdout ?? "", stderr: err.stderr ?? "" };
	}
}

/** Writes a strict `tsconfig.<name>.json` in `dir` compiling `file` alone (Node types, no DOM). */
function tsconfigFor(dir: string, name: string, file: string): string {
	const path = join(dir, `tsconfig.${name}.json`);
	writeFileSync(
		path,
		JSON.stringify({
			compilerOptions: {
				target: "es2023",
				lib: ["es2023"],
				module: "nodenext",
				moduleResolution: "nodenext",
				strict: true,
				noEmit: true,
				// the generated schema.d.ts and the packages' declarations are checked too
				skipLibCheck: false,
				types: ["node"],
			},
			files: [file],
		}),
	);
	return path;
}

/** Runs `tsc -p <project>` with the project's TypeScript; answers its exit code and diagnostics. */
function tsc(dir: string, project: string) {
	return exec(process.execPath, [TSC, "-p", project, "--pretty", "false"], { cwd: dir, timeout: 30_000 });
}

describe("e2e: a client generated from the served OpenAPI document", function () {
	this.timeout(60_000);
	const c = useCluster(
		"genclient",
		// every service but the development IdP (the cluster mints its own tokens), on one broker
		[ALL_SERVICES.filter((s) => s !== "devauth")],
		["gateway", "pincode", "rates", "warehouses", "intake", "booking", "documents"],
	);
	let dir = "";

	before(async () => {
		dir = mkdtempSync(join(tmpdir(), "msa-genclient-"));
		const res = await fetch(`${c.base}/v1/openapi.json`);
		assert.equal(res.status, 200);
		assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
		const served = await res.text();
		writeFileSync(join(dir, "openapi.json"), served);
		// an ES module (its CommonJS build ships no declarations)
		const { default: openapiTS } = await import("openapi-typescript");
		writeFileSync(join(dir, "schema.d.ts"), await openapiTS(JSON.parse(served), { silent: true }));
		copyFileSync(join(TEMPLATES, "flow.mts"), join(dir, "flow.mts"));
		copyFileSync(join(TEMPLATES, "drift.mts"), join(dir, "drift.mts"));
		// openapi-fetch, tsx and @types/node resolve from the project's dependencies
		symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
	});

	after(() => {
		if (dir) rmSync(dir, { recursive: true, force: true });
	});

	it("generates types with every route of the document", () => {
		const doc = JSON.parse(readFileSync(join(dir, "openapi.json"), "utf8")) as {
			paths: Record<string, unknown>;
		};
		const schema = readFileSync(join(dir, "schema.d.ts"), "utf8");
		const missing = Object.keys(doc.paths).filter((p) => !schema.includes(`${JSON.stringify(p)}: {`));
		assert.deepEqual(missing, []);
	});

	it("type-checks the typical-flow client against the generated types (tsc, strict)", async () => {
		const r = await tsc(dir, tsconfigFor(dir, "flow", "flow.mts"));
		assert.equal(r.code, 0, `tsc failed on flow.mts:\n${r.stdout}${r.stderr}`);
	});

	it("runs the client against the server: each step answers its documented success, the label is a PDF", async () => {
		const token = await c.idp.tokenFor(newSender(), "merchant_ops");
		const r = await exec(process.execPath, [TSX, "flow.mts"], {
			cwd: dir,
			env: { PATH: process.env.PATH, MSA_BASE_URL: c.base, MSA_TOKEN: token },
			timeout: 45_000,
		});
		assert.equal(r.code, 0, `flow.mts failed:\n${r.stderr}${r.stdout}`);
		const report = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
		assert.ok(Number.isInteger(report.warehouse_id) && report.warehouse_id > 0);
		assert.ok(report.quotes >= 1 && report.cheapest_total > 0);
		assert.ok(Number.isInteger(report.order_id) && report.order_id > 0);
		assert.equal(report.deduped_order_id, report.order_id, "the same reference again answers the same order");
		assert.equal(report.booking_status, "queued");
		assert.equal(report.state, "booked");
		assert.match(report.awb_number, /^[A-Z0-9]{8,20}$/);
		assert.ok(report.courier);
		assert.equal(report.label_magic, "%PDF-");
		assert.ok(report.label_bytes > 1000);
	});

	it("fails the build on calls that drifted from the document: one error per drifted line, none elsewhere", async () => {
		const r = await tsc(dir, tsconfigFor(dir, "drift", "drift.mts"));
		assert.notEqual(r.code, 0, "tsc accepted drifted calls: the generated types are not checking anything");
		const source = readFileSync(join(dir, "drift.mts"), "utf8").split("\n");
		const expected = source.flatMap((line, i) => (line.includes("// DRIFT") ? [i + 1] : []));
		const reported = [
			...new Set([...r.stdout.matchAll(/^drift\.mts\((\d+),\d+\): error TS\d+/gm)].map((m) => +m[1])),
		];
		assert.ok(expected.length >= 5);
		assert.deepEqual(reported, expected, r.stdout);
	});
});
