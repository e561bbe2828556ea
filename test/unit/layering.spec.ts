/**
 * Layering of lib/ (issue 26; docs/decisions/0092-platform-layering.md;
 * docs/ARCHITECTURE.md §1 "Layers of lib/"): a service's own modules
 * (`lib/<service>/`) import only their own service, the platform
 * (`lib/platform/`), the shared domain rules (`lib/shared/`), the contracts
 * (`lib/contracts/`) and the courier library (`lib/couriers/`); never another
 * service's modules. The layers themselves import no service. Each exception
 * standing today is listed in {@link EXCEPTIONS} with its reason, and an
 * exception that no longer happens fails too, so the list only shrinks.
 * Reads files only (a regex over `from "…"`, `import("…")` and `require("…")`):
 * no server, no database.
 */
import { strict as assert } from "node:assert";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, posix, relative } from "node:path";

const ROOT = join(__dirname, "..", "..");
const LIB = join(ROOT, "lib");

/** Folders of lib/ every service may import: they import no service folder themselves. */
const LAYERS = new Set(["platform", "shared", "contracts", "couriers"]);

/**
 * Folders that belong to one service although they are named otherwise: the
 * OpenAPI document is the gateway's (it serves it), so lib/openapi and
 * lib/gateway are one unit.
 */
const UNIT: Record<string, string> = { openapi: "gateway" };

/**
 * Imports across services standing today, `importer -> imported` (lib-relative,
 * no extension), each with its reason. Remove a line when its import goes.
 */
const EXCEPTIONS: Record<string, string> = {
	// none: the OpenAPI document is built from the route definitions in lib/contracts/http (issue 26), and the
	// warehouses contract holds its own row types
};

/** Every .ts file under `dir`, recursively. */
function walk(dir: string): string[] {
	return readdirSync(dir).flatMap((name) => {
		const path = join(dir, name);
		if (statSync(path).isDirectory()) return walk(path);
		return name.endsWith(".ts") ? [path] : [];
	});
}

/** The unit a lib-relative path belongs to: its first folder (mapped by {@link UNIT}); undefined for files at the top. */
function unitOf(libPath: string): string | undefined {
	const parts = libPath.split("/");
	if (parts.length < 2) return undefined;
	return UNIT[parts[0]] ?? parts[0];
}

/** The relative module specifiers a source file imports (static, dynamic, require, re-export). */
function specifiers(src: string): string[] {
	const re = /(?:\bfrom|\bimport|\bimport\s*\(|\brequire\s*\()\s*["'](\.{1,2}\/[^"']+)["']/g;
	return [...src.matchAll(re)].map((m) => m[1]);
}

/** Every import from one unit of lib/ into another, as `importer -> imported` (lib-relative, no extension). */
function crossImports(lib = LIB): string[] {
	const found: string[] = [];
	for (const file of walk(lib)) {
		const from = relative(lib, file).split("\\").join("/");
		const fromUnit = unitOf(from);
		for (const spec of specifiers(readFileSync(file, "utf8"))) {
			const target = posix.normalize(posix.join(posix.dirname(from), spec));
			if (target.startsWith("..")) continue; // outside lib/ (services, mixins, data)
			const toUnit = unitOf(target);
			if (!toUnit || toUnit === fromUnit || (LAYERS.has(toUnit) && !LAYERS.has(fromUnit ?? ""))) continue;
			// A layer may import another layer, except that platform and shared import no courier code.
			if (fromUnit && LAYERS.has(fromUnit) && LAYERS.has(toUnit) && toUnit !== "couriers") continue;
			found.push(`${from} -> ${target}`);
		}
	}
	return [...new Set(found)].sort();
}

describe("layering of lib/ (issue 26): services import each other only through contracts", () => {
	it("lib/ has no modules at its top: each is in platform, shared, contracts or a service's folder", () => {
		const loose = readdirSync(LIB).filter((name) => !statSync(join(LIB, name)).isDirectory());
		assert.deepEqual(loose, []);
	});

	it("no lib/<service> module imports another service's modules, beyond the listed exceptions", () => {
		const unlisted = crossImports().filter((edge) => !(edge in EXCEPTIONS));
		assert.deepEqual(
			unlisted,
			[],
			"import through lib/contracts, or move the shared code to lib/platform or lib/shared",
		);
	});

	it("every listed exception still happens (a fixed one is removed from the list)", () => {
		const seen = new Set(crossImports());
		const stale = Object.keys(EXCEPTIONS).filter((edge) => !seen.has(edge));
		assert.deepEqual(stale, []);
	});

	it("the check sees imports (it would catch a cross-service import)", () => {
		assert.deepEqual(specifiers('import { x } from "../booking/store";\nconst y = require("./a");'), [
			"../booking/store",
			"./a",
		]);
		// a tree with one cross-service import, one import of a layer and one within a service
		const tmp = mkdtempSync(join(tmpdir(), "layering-"));
		try {
			for (const [file, src] of Object.entries({
				"booking/a.ts": 'import { x } from "../intake/store";\nimport { y } from "./b";',
				"booking/b.ts": 'import { z } from "../platform/db";',
				"intake/store.ts": "export const x = 1;",
			})) {
				mkdirSync(join(tmp, file, ".."), { recursive: true });
				writeFileSync(join(tmp, file), src);
			}
			assert.deepEqual(crossImports(tmp), ["booking/a.ts -> intake/store"]);
		} finally {
			rmSync(tmp, { recursive: true, force: true });
		}
	});
});
