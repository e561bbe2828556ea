/**
 * The gateway's HTTP route tables (spec §4, docs/ARCHITECTURE.md §6: explicit
 * aliases only, `mappingPolicy: "restrict"`; no internal action is reachable
 * over HTTP unless listed here), built from the route definitions
 * (lib/contracts/http/<service>.ts; docs/decisions/0093-route-definitions.md):
 * one table per route kind, each served by its moleculer-web route
 * (lib/gateway/route-options.ts).
 *
 * Keys are `"<METHOD> <path>"` in moleculer-web / path-to-regexp 8 syntax
 * (`:name` is a path parameter, passed to the action as a STRING in
 * `ctx.params`); values are the action names, checked against the contract
 * (lib/contracts): a definition of a renamed or missing action fails the type check.
 */
import type { ActionName } from "../contracts";
import { ROUTES, type Routes } from "../contracts/http";
import type { RouteKind } from "../platform/openapi/route";

/** The table a definition goes to (`kind`, default `api`). */
type KindOf<D> = D extends { kind: infer K } ? K : "api";

/** The alias table of one kind derived from the route definitions: route key → action. */
export type AliasTable<K extends RouteKind> = {
	readonly [A in keyof Routes as KindOf<Routes[A]> extends K ? Routes[A]["route"] : never]: A;
};

/** Number of path parameters of an alias key. */
function paramCount(key: string): number {
	return (key.match(/:/g) ?? []).length;
}

/**
 * `table` with literal paths before parameters: entries sorted by their number
 * of path parameters, stable otherwise (moleculer-web takes the first alias that
 * matches, so `GET /v1/orders/unshipped` must come before `GET /v1/orders/:id`;
 * test/unit/gateway/routes.spec.ts checks no alias is shadowed by an earlier one).
 */
export function bySpecificity<T extends Record<string, string>>(table: T): T {
	const entries = Object.entries(table);
	const sorted = entries
		.map((e, i) => ({ e, i }))
		.sort((a, b) => paramCount(a.e[0]) - paramCount(b.e[0]) || a.i - b.i)
		.map(({ e }) => e);
	return Object.fromEntries(sorted) as T;
}

/** The alias table of `kind` built from {@link ROUTES}, literal paths first. */
export function aliasesOf<K extends RouteKind>(kind: K): AliasTable<K> {
	const table: Record<string, string> = {};
	for (const [action, def] of Object.entries(ROUTES) as [string, { route: string; kind?: RouteKind }][])
		if ((def.kind ?? "api") === kind) table[def.route] = action;
	return bySpecificity(table) as AliasTable<K>;
}

/** Bearer-authenticated public API (§4, §5): JSON bodies, the account rate limit, idempotency keys on POST. */
export const API_ALIASES = aliasesOf("api") satisfies Record<string, ActionName>;

/**
 * Multipart uploads (issue 10, issue 25): the bulk order upload, a weight
 * dispute's images, every definition of kind `upload`; bearer-authenticated,
 * served by the gateway's `upload` route (each a `stream` alias, no body
 * parser: the raw body is the action's `ctx.stream`, the params
 * `{query, content_type, path}`; the serving service parses the form with
 * lib/shared/multipart.ts, its parts in any order, its sizes counted while it
 * streams; lib/gateway/upload.ts, lib/intake/bulk/multipart.ts).
 */
export const UPLOAD_ALIASES = aliasesOf("upload") satisfies Record<string, ActionName>;

/**
 * Courier scan webhooks (ours; docs/decisions/0029-shipment-tracking.md): no
 * bearer token, each courier's own signature on the RAW body, checked by
 * booking. Served by the gateway's `webhooks` route (raw body parser; params
 * `{courier, body: base64, headers}`, see services/gateway.service.ts).
 */
export const WEBHOOK_ALIASES = aliasesOf("courier_push") satisfies Record<string, ActionName>;

/**
 * Signed label links (spec §4.4, §5 rule 7): no bearer token, the token in the
 * path is the credential (checked by documents). Served by the gateway's
 * `links` route, rate-limited per client address; its 400/404 answers are
 * plain text (§7). The token is optional in the pattern so an empty one
 * (`/v1/documents/label/t/`) is answered by the link action (404), not by the
 * bearer label route.
 */
export const LINK_ALIASES = aliasesOf("link") satisfies Record<string, ActionName>;

/**
 * The buyer's pages (issue 29; docs/decisions/0108-buyer-tracking-page.md): the tracking page
 * `/track/{token}` (a signed token in the path is the credential), the AWB look-up `/track` and
 * the page's font. No bearer token; served by the gateway's `pages` route, rate-limited per
 * client address as signed links; answers are HTML (the font: TrueType).
 */
export const PAGE_ALIASES = aliasesOf("page") satisfies Record<string, ActionName>;

/**
 * Ops routes (`/v1/ops/*`; docs/decisions/0103-ops-routes.md): the ops bearer
 * token `OPS_API_TOKEN`, not a merchant's JWT; JSON bodies of 10 MB at most.
 */
export const OPS_ALIASES = aliasesOf("ops") satisfies Record<string, ActionName>;

/** Unauthenticated probes (`/health`, `/ready`), always answered by the local gateway node. */
export const PROBE_ALIASES = aliasesOf("probe") satisfies Record<string, ActionName>;

/**
 * The API reference (issue 11; lib/openapi): the OpenAPI 3.1 document and the
 * browsable page with its assets, served by the gateway itself (function
 * aliases of its `docs` route, no action, no bearer token, no body). Values
 * name the handler in lib/openapi/serve.ts (`DOCS_HANDLERS`).
 */
export const DOCS_ALIASES = aliasesOf("docs");

/**
 * Development identity provider (zero-setup start only, env `MSA_DEV_IDP=1`;
 * docs/ARCHITECTURE.md §3, spec §5.5). No bearer token.
 */
export const DEV_IDP_ALIASES = aliasesOf("dev_idp") satisfies Record<string, ActionName>;

/** Path prefix whose gateway-made 400/404 answers use the §7 documents shape `{message}`. */
export const DOCUMENTS_PREFIX = "/v1/documents/";

/**
 * Groups the actions of an alias table by service name (the part before the
 * first dot), e.g. `{intake: ["intake.createOrder", …]}`. Used by `/ready`.
 */
export function actionsByService(...tables: Record<string, string>[]): Map<string, string[]> {
	const out = new Map<string, string[]>();
	for (const table of tables) {
		for (const action of Object.values(table)) {
			const svc = action.slice(0, action.indexOf("."));
			const list = out.get(svc) ?? [];
			if (!list.includes(action)) list.push(action);
			out.set(svc, list);
		}
	}
	return out;
}
