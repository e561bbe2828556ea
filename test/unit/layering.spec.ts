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
import { readdirSync, readFileSync, statSync } from "node:fs";
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
	// The hand-written OpenAPI paths reuse each service's validator schemas and bounds so the document and the
	// validators agree; they go when the document is derived from one route definition (issue 26).
	"openapi/paths/documents.ts -> documents/bulk":
		"OpenAPI reuses the validator schemas (until route definitions)",
	"openapi/paths/intake.ts -> intake/bulk/api":
		"OpenAPI reuses the validator schemas (until route definitions)",
	"openapi/paths/intake.ts -> intake/bulk/bounds":
		"OpenAPI reuses the validator schemas (until route definitions)",
	"openapi/paths/intake.ts -> intake/bulk/columns":
		"OpenAPI reuses the validator schemas (until route definitions)",
	"openapi/paths/intake.ts -> intake/bulk/export":
		"OpenAPI reuses the validator schemas (until route definitions)",
	"openapi/paths/intake.ts -> intake/bulk/xlsx":
		"OpenAPI reuses the validator schemas (until route definitions)",
	"openapi/paths/intake.ts -> intake/list": "OpenAPI reuses the validator schemas (until route definitions)",
	"openapi/paths/intake.ts -> intake/unshipped":
		"OpenAPI reuses the validator schemas (until route definitions)",
	"openapi/paths/intake.ts -> intake/validation":
		"OpenAPI reuses the validator schemas (until route definitions)",
	"openapi/paths/ndr.ts -> ndr/act-input": "OpenAPI reuses the validator schemas (until route definitions)",
	"openapi/paths/ndr.ts -> ndr/list": "OpenAPI reuses the validator schemas (until route definitions)",
	"openapi/paths/ndr.ts -> ndr/reasons": "OpenAPI reuses the validator schemas (until route definitions)",
	"openapi/paths/shipping.ts -> booking/couriers":
		"OpenAPI reuses the validator schemas (until route definitions)",
	"openapi/paths/shipping.ts -> booking/tracking":
		"OpenAPI reuses the validator schemas (until route definitions)",
	"openapi/paths/shipping.ts -> booking/wallet":
		"OpenAPI reuses the validator schemas (until route definitions)",
	"openapi/paths/shipping.ts -> rates/params":
		"OpenAPI reuses the validator schemas (until route definitions)",
	"openapi/paths/webhooks.ts -> webhooks/api":
		"OpenAPI reuses the validator schemas (until route definitions)",
	"openapi/paths/webhooks.ts -> webhooks/ssrf":
		"OpenAPI reuses the validator schemas (until route definitions)",
	// The warehouses contract's result types are the store's row shapes; they move into lib/contracts when the
	// warehouses rows stop being shared with its store.
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
function crossImports(): string[] {
	const found: string[] = [];
	for (const file of walk(LIB)) {
		const from = relative(LIB, file).split("\\").join("/");
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
		assert.ok(crossImports().length > 0, "the exceptions listed above are found, so the scan reads the tree");
	});
});
