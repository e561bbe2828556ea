/**
 * Configuration in one module (lib/platform/config.ts; issue 26;
 * docs/decisions/0089-configuration-in-one-module.md), checked without servers:
 * - every declared variable parses its default, and a value outside what is
 *   allowed refuses with `NAME must be <allowed> (got "<value>")`;
 * - README.md "Configuration" and the module agree: the same variables, the
 *   same defaults where the README states one;
 * - no file outside lib/platform/config.ts reads a declared variable itself (test,
 *   bench and shell-script variables stay where they are).
 */
import { strict as assert } from "node:assert";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import {
	checkEnvironment,
	loadConfig,
	SETTINGS,
	type SettingName,
	type SettingSpec,
	setting,
} from "../../lib/platform/config";

const ROOT = join(__dirname, "../..");
const NAMES = Object.keys(SETTINGS) as SettingName[];
const spec = (n: SettingName): SettingSpec<unknown> => SETTINGS[n];

/** README.md's "Configuration" table: each row's variables (backticked in the first cell) and its "When unset" cell. */
function readmeRows(): { names: string[]; unset: string; line: string }[] {
	const readme = readFileSync(join(ROOT, "README.md"), "utf8");
	const start = readme.indexOf("\n## Configuration");
	assert.ok(start >= 0, 'README.md has a "## Configuration" section');
	const next = readme.indexOf("\n## ", start + 1);
	const section = readme.slice(start, next < 0 ? undefined : next);
	const rows: { names: string[]; unset: string; line: string }[] = [];
	for (const line of section.split("\n")) {
		if (!line.startsWith("|") || /^\|\s*-/.test(line) || /^\|\s*Variable\s*\|/.test(line)) continue;
		// cells split on "|" outside backticks (a cell may show `a|b`)
		const cells = line
			.slice(1, line.trimEnd().endsWith("|") ? line.trimEnd().length - 1 : undefined)
			.split(/\|(?=(?:[^`]*`[^`]*`)*[^`]*$)/)
			.map((c) => c.trim());
		const names = [...(cells[0] ?? "").matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]);
		rows.push({ names, unset: (cells[2] ?? "").replaceAll("`", ""), line });
	}
	return rows;
}

/** Source files that run in the product (not tests, benches or scripts). */
function productSources(): string[] {
	const out: string[] = [join(ROOT, "moleculer.config.ts")];
	const walk = (dir: string) => {
		for (const e of readdirSync(dir)) {
			const p = join(dir, e);
			if (statSync(p).isDirectory()) walk(p);
			else if (/\.(ts|js|mjs|cjs)$/.test(e)) out.push(p);
		}
	};
	for (const d of ["lib", "services", "mixins", "bin"]) walk(join(ROOT, d));
	return out;
}

describe("configuration in one module (lib/platform/config.ts)", () => {
	it("every declared variable has a meaning, its readers, what is allowed, and parses when unset", () => {
		assert.ok(NAMES.length >= 100, `${NAMES.length} variables`);
		for (const n of NAMES) {
			const s = spec(n);
			assert.match(n, /^[A-Z][A-Z0-9_]*$/);
			assert.ok(s.doc.length > 5, `${n}: doc`);
			assert.ok(s.readBy.length > 0, `${n}: readBy`);
			assert.ok(s.allowed.length > 0, `${n}: allowed`);
			assert.doesNotThrow(() => setting(n, {}), `${n} unset`);
			if (s.shownDefault !== undefined && s.shownDefault !== "")
				assert.ok(s.parse(undefined) !== undefined, `${n}: a shown default parses to a value`);
		}
		assert.doesNotThrow(() => checkEnvironment({}));
	});

	it("a wrong value refuses with the variable, its value and what is allowed; never a silent default", () => {
		const cases: [SettingName, string, string][] = [
			["WEBHOOK_MAX_ATTEMPTS", "abc", 'WEBHOOK_MAX_ATTEMPTS must be an integer from 1 to 50 (got "abc")'],
			["WEBHOOK_MAX_ATTEMPTS", "51", 'WEBHOOK_MAX_ATTEMPTS must be an integer from 1 to 50 (got "51")'],
			["BOOKING_CONCURRENCY", "0", 'BOOKING_CONCURRENCY must be an integer of at least 1 (got "0")'],
			[
				"BOOKING_LOCK_MS",
				"1e3",
				'BOOKING_LOCK_MS must be an integer from 1 to 2147483647 (milliseconds) (got "1e3")',
			],
			["PORT", "http", 'PORT must be an integer from 0 to 65535 (got "http")'],
			["CHANNELS_REPLICAS", "7", 'CHANNELS_REPLICAS must be an integer from 1 to 5 (got "7")'],
			["SANDBOX", "true", 'SANDBOX must be 1 or 0 (got "true")'],
			["LOGLEVEL", "verbose", 'LOGLEVEL must be fatal, error, warn, info, debug or trace (got "verbose")'],
			["DELHIVERY_OWN_LABEL", "no", 'DELHIVERY_OWN_LABEL must be true or false (got "no")'],
			["WEBHOOK_MAX_AGE_H", "-1", 'WEBHOOK_MAX_AGE_H must be a number greater than 0 (got "-1")'],
			["AUTH_JWKS_URL", "jwks.json", 'AUTH_JWKS_URL must be an http(s) URL (got "jwks.json")'],
			["SERVICES", "gateway,payments", "SERVICES must be a comma list of services (known: pincode,"],
			["GATEWAY_ACCESS_LOG", "off", 'GATEWAY_ACCESS_LOG must be sampled, 1 or 0 (got "off")'],
			// a secret's value is never echoed, only its length
			[
				"OPS_API_TOKEN",
				"short-secret",
				"OPS_API_TOKEN must be at least 32 characters (got a value of 12 characters)",
			],
		];
		for (const [n, v, msg] of cases)
			assert.throws(
				() => setting(n, { [n]: v }),
				(err: Error) => err.message.startsWith(msg),
				`${n}=${v}`,
			);
		// checkEnvironment names every wrong variable at once (the process start runs it first)
		assert.throws(
			() => checkEnvironment({ NDR_MAX_ATTEMPTS: "three", INTAKE_BULK_NICE: "40", PORT: "3000" }),
			(err: Error) =>
				/^invalid configuration:\n {2}/.test(err.message) &&
				err.message.includes('NDR_MAX_ATTEMPTS must be an integer of at least 1 (got "three")') &&
				err.message.includes('INTAKE_BULK_NICE must be an integer from 0 to 19 (got "40")') &&
				!err.message.includes("PORT"),
		);
	});

	it("values parse as before: trimmed numbers, blanks as unset, lists, switches, derived defaults", () => {
		assert.equal(setting("BOOKING_SWEEP_AFTER_MS", { BOOKING_SWEEP_AFTER_MS: "0" }), 0);
		assert.equal(setting("OUTBOX_RETENTION_HOURS", { OUTBOX_RETENTION_HOURS: " 24 " }), 24);
		assert.equal(setting("WEBHOOK_TIMEOUT_MS", { WEBHOOK_TIMEOUT_MS: "" }), 10_000);
		assert.equal(setting("WEBHOOK_MAX_AGE_H", { WEBHOOK_MAX_AGE_H: "0.5" }), 0.5);
		assert.equal(setting("METRICS_PORT", { METRICS_PORT: "off" }), null);
		assert.equal(setting("SANDBOX_SCAN_PUSH_URL", { SANDBOX_SCAN_PUSH_URL: "  " }), null, "blank: no push");
		assert.equal(setting("SANDBOX_SCAN_PUSH_URL", {}), undefined, "unset: the zero-setup start fills it");
		assert.deepEqual(setting("SANDBOX_OWN_LABEL_COURIERS", {}), ["sbx-lite"]);
		assert.deepEqual(setting("SANDBOX_OWN_LABEL_COURIERS", { SANDBOX_OWN_LABEL_COURIERS: "" }), []);
		assert.equal(setting("INTAKE_BULK_WORKER", { INTAKE_BULK_WORKER: " ONLY " }), "only");
		assert.equal(setting("LABEL_LINK_SECRET", { LABEL_LINK_SECRET: " s " }), " s ", "a secret as written");
		const c = loadConfig({ SANDBOX_COURIER_PORT: "4999", MSA_ZERO_SETUP: "1" });
		assert.equal(c.simulatorUrl, "http://127.0.0.1:4999");
		assert.equal(c.sandbox, true, "on in the zero-setup start unless SANDBOX says otherwise");
		assert.equal(loadConfig({ MSA_ZERO_SETUP: "1", SANDBOX: "0" }).sandbox, false);
	});

	it("reads process.env at each call (a test may change it between brokers)", () => {
		const saved = process.env.WEBHOOK_MAX_ENDPOINTS;
		try {
			process.env.WEBHOOK_MAX_ENDPOINTS = "3";
			assert.equal(setting("WEBHOOK_MAX_ENDPOINTS"), 3);
			process.env.WEBHOOK_MAX_ENDPOINTS = "4";
			assert.equal(setting("WEBHOOK_MAX_ENDPOINTS"), 4);
			delete process.env.WEBHOOK_MAX_ENDPOINTS;
			assert.equal(setting("WEBHOOK_MAX_ENDPOINTS"), 20);
		} finally {
			if (saved === undefined) delete process.env.WEBHOOK_MAX_ENDPOINTS;
			else process.env.WEBHOOK_MAX_ENDPOINTS = saved;
		}
	});

	it('README.md "Configuration" lists exactly the declared variables, with the same defaults', () => {
		const rows = readmeRows();
		const inReadme = new Map<string, { names: string[]; unset: string; line: string }>();
		for (const r of rows) for (const n of r.names) inReadme.set(n, r);
		const declared = new Set<string>(NAMES);
		assert.deepEqual(
			NAMES.filter((n) => !inReadme.has(n)),
			[],
			"declared in lib/platform/config.ts but missing from the README table",
		);
		assert.deepEqual(
			[...inReadme.keys()].filter((n) => !declared.has(n)),
			[],
			"in the README table but not declared in lib/platform/config.ts",
		);
		const wrong: string[] = [];
		for (const n of NAMES) {
			const shown = spec(n).shownDefault;
			if (shown === undefined || shown === "") continue;
			const row = inReadme.get(n);
			if (!row) continue;
			// several variables in one row: "a, b" or "a / b", in the order of the first cell
			const parts = row.names.length > 1 ? row.unset.split(/,\s+|\s+\/\s+/) : [row.unset];
			const cell =
				row.names.length > 1 && parts.length === row.names.length ? parts[row.names.indexOf(n)] : row.unset;
			if (!new RegExp(`^${shown.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}(?![\\w.])`).test(cell.trim()))
				wrong.push(`${n}: module ${shown}, README "${cell.trim()}"`);
		}
		assert.deepEqual(wrong, [], "defaults differ");
	});

	it("no file outside lib/platform/config.ts reads a declared variable itself", () => {
		const declared = new Set<string>(NAMES);
		const offences: string[] = [];
		for (const file of productSources()) {
			const rel = relative(ROOT, file);
			if (rel === join("lib", "platform", "config.ts")) continue;
			const lines = readFileSync(file, "utf8").split("\n");
			lines.forEach((line, i) => {
				const code = line.replace(/\/\/.*$/, "");
				if (/^\s*\*/.test(code)) return; // a doc comment
				// process.env[…] with a computed name: a read this test cannot see
				if (/process\.env\[/.test(code)) offences.push(`${rel}:${i + 1}: ${line.trim()}`);
				for (const m of code.matchAll(/\b(?:process\.)?env\.([A-Z][A-Z0-9_]*)\b(\s*=(?!=))?/g)) {
					// writing is allowed (the zero-setup start fills defaults into process.env)
					if (declared.has(m[1]) && !m[2]) offences.push(`${rel}:${i + 1}: ${line.trim()}`);
					if (!declared.has(m[1])) offences.push(`${rel}:${i + 1}: undeclared ${m[1]}`);
				}
			});
		}
		assert.deepEqual(offences, []);
	});
});
