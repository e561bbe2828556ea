/**
 * The gateway's alias tables built from the route definitions (issue 26;
 * lib/gateway/routes.ts, docs/decisions/0093-route-definitions.md): every
 * definition is served by its table, and no alias is shadowed by an earlier
 * one of the same method (moleculer-web takes the first alias that matches,
 * with path-to-regexp 8 as it does).
 */
import assert from "node:assert/strict";
import { match } from "path-to-regexp";
import { ROUTES } from "../../../lib/contracts/http";
import {
	API_ALIASES,
	bySpecificity,
	DEV_IDP_ALIASES,
	DOCS_ALIASES,
	LINK_ALIASES,
	OPS_ALIASES,
	PAGE_ALIASES,
	PROBE_ALIASES,
	UPLOAD_ALIASES,
	WEBHOOK_ALIASES,
} from "../../../lib/gateway/routes";
import type { RouteDefinition, RouteKind } from "../../../lib/platform/openapi/route";

const TABLES: Record<RouteKind, Record<string, string>> = {
	api: API_ALIASES,
	upload: UPLOAD_ALIASES,
	courier_push: WEBHOOK_ALIASES,
	link: LINK_ALIASES,
	page: PAGE_ALIASES,
	probe: PROBE_ALIASES,
	docs: DOCS_ALIASES,
	dev_idp: DEV_IDP_ALIASES,
	ops: OPS_ALIASES,
};

/** A concrete path an alias matches: each `:name` replaced by a value no literal segment uses. */
function samplePath(aliasPath: string): string {
	return aliasPath.replace(/\{\/:([A-Za-z_]\w*)\}/g, "/x1").replace(/:([A-Za-z_]\w*)/g, "x1");
}

/** The first alias of `table` (in its order) matching `method` and `path`. */
function firstMatch(table: Record<string, string>, method: string, path: string): string | undefined {
	return Object.keys(table).find((key) => {
		const [m, p] = key.split(" ");
		return m === method && match(p, { decode: decodeURIComponent })(path) !== false;
	});
}

describe("gateway alias tables from the route definitions", () => {
	it("each definition is in its kind's table, under its route key, naming its action", () => {
		for (const [action, def] of Object.entries(ROUTES) as [string, RouteDefinition][])
			assert.equal(TABLES[def.kind ?? "api"][def.route], action, def.route);
	});

	it("no alias is shadowed by an earlier alias of its table", () => {
		for (const table of Object.values(TABLES))
			for (const key of Object.keys(table)) {
				const [method, path] = key.split(" ");
				assert.equal(firstMatch(table, method, samplePath(path)), key);
			}
	});

	it("bySpecificity puts literal paths first and keeps the order otherwise (the check would catch a shadow)", () => {
		const shadowing = { "GET /v1/orders/:id": "a", "GET /v1/orders/unshipped": "b", "GET /v1/x": "c" };
		assert.equal(firstMatch(shadowing, "GET", "/v1/orders/unshipped"), "GET /v1/orders/:id");
		const sorted = bySpecificity(shadowing);
		assert.deepEqual(Object.keys(sorted), ["GET /v1/orders/unshipped", "GET /v1/x", "GET /v1/orders/:id"]);
		assert.equal(firstMatch(sorted, "GET", "/v1/orders/unshipped"), "GET /v1/orders/unshipped");
	});
});
