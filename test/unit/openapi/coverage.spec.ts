/**
 * Every gateway route is described, and every description is a route (issue
 * 11, issue 26): the alias keys of the route tables (lib/gateway/routes.ts)
 * equal the routes of the documented definitions (lib/contracts/http/, one
 * per route; docs/decisions/0093-route-definitions.md), and each is in the
 * built document. The development identity provider (DEV_IDP_ALIASES) is not
 * part of the merchant API and is excluded (docs/decisions/0043-openapi-document.md).
 */
import assert from "node:assert/strict";
import { ROUTES as DEFINITIONS } from "../../../lib/contracts/http";
import {
	API_ALIASES,
	DEV_IDP_ALIASES,
	DOCS_ALIASES,
	LINK_ALIASES,
	OPS_ALIASES,
	PAGE_ALIASES,
	PROBE_ALIASES,
	UPLOAD_ALIASES,
	WEBHOOK_ALIASES,
} from "../../../lib/gateway/routes";
import { buildDocument, parseAliasKey } from "../../../lib/openapi/index";
import type { RouteDefinition } from "../../../lib/platform/openapi/route";

/** Routes described: those of the documented definitions. */
function describedKeys(): string[] {
	return (Object.values(DEFINITIONS) as RouteDefinition[])
		.filter((d) => d.documented !== false)
		.map((d) => d.route);
}

/** The routes that must be described. */
const ROUTES = [
	API_ALIASES,
	UPLOAD_ALIASES,
	WEBHOOK_ALIASES,
	LINK_ALIASES,
	PAGE_ALIASES,
	DOCS_ALIASES,
	PROBE_ALIASES,
	OPS_ALIASES,
].flatMap((t) => Object.keys(t));

/** `{covered, missing, extra}` of a route list against a list of described keys. */
function coverage(routes: string[], described: string[]): { missing: string[]; extra: string[] } {
	const r = new Set(routes);
	const d = new Set(described);
	return {
		missing: routes.filter((k) => !d.has(k)).sort(),
		extra: described.filter((k) => !r.has(k)).sort(),
	};
}

describe("openapi: every route is described, every description is a route", () => {
	it("coverage() reports a route without a description and a description without a route", () => {
		assert.deepEqual(coverage(["GET /a", "POST /b"], ["GET /a", "GET /c"]), {
			missing: ["POST /b"],
			extra: ["GET /c"],
		});
	});

	it("the alias keys of the route tables equal the routes of the documented definitions", () => {
		const described = describedKeys();
		const { missing, extra } = coverage(ROUTES, described);
		assert.deepEqual(
			{ missing, extra },
			{ missing: [], extra: [] },
			`routes without a description (give them a definition in lib/contracts/http/): ${missing.join(", ") || "none"}; descriptions without a route: ${extra.join(", ") || "none"}`,
		);
	});

	it("no route is described twice, and the dev IdP is not described", () => {
		const described = describedKeys();
		assert.deepEqual(
			described.filter((k, i) => described.indexOf(k) !== i),
			[],
		);
		for (const k of Object.keys(DEV_IDP_ALIASES)) assert.ok(!described.includes(k), k);
	});

	it("every route is in the built document under its OpenAPI path and method", () => {
		const doc = buildDocument();
		for (const key of ROUTES) {
			const { method, path } = parseAliasKey(key);
			const item = doc.paths?.[path] as Record<string, unknown> | undefined;
			assert.ok(item?.[method], `${key} → ${method.toUpperCase()} ${path} missing from the document`);
		}
	});
});
