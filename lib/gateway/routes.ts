/**
 * The gateway's HTTP route table (spec §4, docs/ARCHITECTURE.md §6: explicit
 * aliases only, `mappingPolicy: "restrict"`; no internal action is reachable
 * over HTTP unless listed here).
 *
 * Keys are `"<METHOD> <path>"` in moleculer-web / path-to-regexp 8 syntax
 * (`:name` is a path parameter, passed to the action as a STRING in
 * `ctx.params`); values are the exact action names, checked against the
 * contract (lib/contracts): an alias to a renamed or missing action fails the type check.
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

/** `legacy` without the entries whose action now has a definition (transition; they go with their area file). */
function withoutDefined<T extends Record<string, string>>(legacy: T): T {
	return Object.fromEntries(Object.entries(legacy).filter(([, a]) => !(a in ROUTES))) as T;
}

/** Bearer-authenticated public API (§4, §5). */
const LEGACY_API_ALIASES = {
	"GET /v1/pincode/:pincode": "pincode.lookup",
	"GET /v1/shipping/serviceable": "rates.serviceable",
	"POST /v1/intake/order": "intake.createOrder",
	"POST /v1/intake/reverse": "intake.createReverse",
	// bulk upload (issue 10): the upload itself is the multipart route (BULK_UPLOAD_ALIASES)
	"GET /v1/intake/bulk/template.:format": "intake.bulkTemplate",
	"GET /v1/intake/jobs": "intake.bulkJobs",
	"GET /v1/intake/jobs/:id": "intake.bulkJob",
	"GET /v1/intake/jobs/:id/review": "intake.bulkReview",
	/** the job's failed / review / rejected rows as a CSV in the template's layout (a stream) */
	"GET /v1/intake/jobs/:id/rows.csv": "intake.bulkRowsCsv",
	/** `:row` a row number or `all`; `:decision` approve | reject */
	"POST /v1/intake/jobs/:id/review/:row/:decision": "intake.bulkReviewDecide",
	"GET /v1/orders/status": "intake.status",
	// orders read side, unshipped queue, tracking (issue 7): literal /v1/orders/* paths stay before "/v1/orders/:id"
	"GET /v1/orders": "intake.listOrders",
	// unshipped queue (§4.3): literal paths, so before "GET /v1/orders/:id"
	"GET /v1/orders/unshipped": "intake.listUnshipped",
	"GET /v1/orders/unshipped/error-types": "intake.unshippedErrorTypes",
	"GET /v1/orders/unshipped/counts": "intake.unshippedCounts",
	"PATCH /v1/orders/unshipped/:id": "intake.editUnshipped",
	"POST /v1/orders/:id/hide": "intake.hideOrder",
	// tracking (§2.6, §4.3) and sandbox scan events (docs/ARCHITECTURE.md §4; 404 unless
	// SANDBOX=1)
	"GET /v1/orders/:id/tracking": "booking.tracking",
	"POST /v1/sandbox/orders/:order_id/events": "booking.sandboxEvent",
	/** After every literal `/v1/orders/<word>` path: the first matching alias wins (moleculer-web keeps this order). */
	"GET /v1/orders/:id": "intake.orderDetail",
	"POST /v1/shipping/book": "booking.book",
	"POST /v1/shipping/book/sync": "booking.bookSync",
	"POST /v1/shipping/cancel": "booking.cancel",
	/** NDR action at the courier (§4.2; issue 9): the ndr service */
	"POST /v1/shipping/ndr": "ndr.act",
	"GET /v1/shipping/couriers": "booking.couriers",
	"PATCH /v1/shipping/couriers/priority": "booking.setPriority",
	"GET /v1/wallet": "booking.wallet",
	// failed deliveries (§4.6; issue 9)
	"GET /v1/ndr": "ndr.list",
	"GET /v1/ndr/counts": "ndr.counts",
	"POST /v1/ndr/:id/comment": "ndr.comment",
	// merchant webhooks (issue 11): the webhooks service; writes need `orders.write`, reads any role
	"POST /v1/webhooks": "webhooks.create",
	"GET /v1/webhooks": "webhooks.list",
	"GET /v1/webhooks/:id": "webhooks.get",
	"PATCH /v1/webhooks/:id": "webhooks.update",
	"DELETE /v1/webhooks/:id": "webhooks.remove",
	"POST /v1/webhooks/:id/rotate-secret": "webhooks.rotateSecret",
	"GET /v1/webhooks/:id/deliveries": "webhooks.deliveries",
	"POST /v1/webhooks/:id/deliveries/:delivery_id/redeliver": "webhooks.redeliver",
	"POST /v1/webhooks/:id/test": "webhooks.test",
	"GET /v1/warehouses": "warehouses.list",
	"POST /v1/warehouses": "warehouses.create",
	"PATCH /v1/warehouses/:id": "warehouses.update",
	"DELETE /v1/warehouses/:id": "warehouses.remove",
	/** Binary answer: the action sets `ctx.meta.$responseType` / `$responseHeaders` and returns a Buffer. */
	"GET /v1/documents/label/:orderId": "documents.label",
	/** Bulk labels (§4.4): ONE PDF of up to 200 orders (binary answer, as above). */
	"POST /v1/documents/label": "documents.labels",
	/** Handover manifests (§4.4): binary answers with `x-manifest-no` / `x-manifest-count`. */
	"POST /v1/documents/manifest": "documents.manifest",
	"GET /v1/documents/manifest/:manifestNo": "documents.manifestCopy",
} as const satisfies Record<string, ActionName>;

export const API_ALIASES = bySpecificity({
	...withoutDefined(LEGACY_API_ALIASES),
	...aliasesOf("api"),
}) satisfies Record<string, ActionName>;

/**
 * Bulk order upload (issue 10, issue 25): multipart, bearer-authenticated;
 * served by the gateway's `upload` route (a `stream` alias, no body parser:
 * the raw body is the action's `ctx.stream`; intake parses the form, its
 * parts in any order, the file cut at 25 MB → 413 `file_too_large`;
 * lib/gateway/upload.ts, lib/intake/bulk/multipart.ts).
 */
const LEGACY_BULK_UPLOAD_ALIASES = {
	"POST /v1/intake/bulk": "intake.bulkUpload",
} as const satisfies Record<string, ActionName>;

export const BULK_UPLOAD_ALIASES = bySpecificity({
	...withoutDefined(LEGACY_BULK_UPLOAD_ALIASES),
	...aliasesOf("upload"),
}) satisfies Record<string, ActionName>;

/** Path of the bulk upload (the gateway's `upload` route). */
export const BULK_UPLOAD_PATH = "/v1/intake/bulk";

/**
 * Courier scan webhooks (ours; docs/decisions/0029-shipment-tracking.md): no
 * bearer token, each courier's own signature on the RAW body, checked by
 * booking. Served by the gateway's `webhooks` route (raw body parser; params
 * `{courier, body: base64, headers}`, see services/gateway.service.ts).
 */
const LEGACY_WEBHOOK_ALIASES = {
	"POST /v1/tracking/webhooks/:courier": "booking.courierPush",
} as const satisfies Record<string, ActionName>;

export const WEBHOOK_ALIASES = bySpecificity({
	...withoutDefined(LEGACY_WEBHOOK_ALIASES),
	...aliasesOf("courier_push"),
}) satisfies Record<string, ActionName>;

/**
 * Signed label links (spec §4.4, §5 rule 7): no bearer token, the token in the
 * path is the credential (checked by documents). Served by the gateway's
 * `links` route, rate-limited per client address; its 400/404 answers are
 * plain text (§7). The token is optional in the pattern so an empty one
 * (`/v1/documents/label/t/`) is answered by the link action (404), not by the
 * bearer label route.
 */
const LEGACY_LINK_ALIASES = {
	"GET /v1/documents/label/t{/:token}": "documents.labelLink",
} as const satisfies Record<string, ActionName>;

export const LINK_ALIASES = bySpecificity({
	...withoutDefined(LEGACY_LINK_ALIASES),
	...aliasesOf("link"),
}) satisfies Record<string, ActionName>;

/** Unauthenticated probes, always answered by the local gateway node. */
const LEGACY_PROBE_ALIASES = {
	/** Liveness: 200 `{status:"ok"}`. */
	"GET /health": "gateway.health",
	/** Readiness: 200 `{status:"ready", services}` or 503 `{error:"not_ready", message, missing}`. */
	"GET /ready": "gateway.ready",
} as const satisfies Record<string, ActionName>;

export const PROBE_ALIASES = bySpecificity({
	...withoutDefined(LEGACY_PROBE_ALIASES),
	...aliasesOf("probe"),
}) satisfies Record<string, ActionName>;

/**
 * The API reference (issue 11; lib/openapi): the OpenAPI 3.1 document and the
 * browsable page with its assets, served by the gateway itself (function
 * aliases of its `docs` route, no action, no bearer token, no body). Values
 * name the handler in lib/openapi/serve.ts (`DOCS_HANDLERS`).
 */
const LEGACY_DOCS_ALIASES = {
	/** The OpenAPI 3.1 document (JSON, cacheable, ETag). */
	"GET /v1/openapi.json": "openapi.document",
	/** The API reference page (Swagger UI, served offline from the npm package). */
	"GET /docs": "openapi.page",
	/** The page's scripts, styles and icons (a fixed list; anything else is 404). */
	"GET /docs/:file": "openapi.asset",
} as const;

export const DOCS_ALIASES = bySpecificity({
	...withoutDefined(LEGACY_DOCS_ALIASES),
	...aliasesOf("docs"),
}) satisfies Record<string, string>;

/**
 * Development identity provider (zero-setup start only, env `MSA_DEV_IDP=1`;
 * docs/ARCHITECTURE.md §3, spec §5.5). No bearer token.
 */
const LEGACY_DEV_IDP_ALIASES = {
	/** `?grant_type=password`, JSON or form body `{email|username, password}`. */
	"POST /auth/v1/token": "devauth.token",
	"GET /auth/v1/.well-known/jwks.json": "devauth.jwks",
} as const satisfies Record<string, ActionName>;

export const DEV_IDP_ALIASES = bySpecificity({
	...withoutDefined(LEGACY_DEV_IDP_ALIASES),
	...aliasesOf("dev_idp"),
}) satisfies Record<string, ActionName>;

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
