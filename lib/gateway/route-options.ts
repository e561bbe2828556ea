/**
 * The gateway's routes as moleculer-web `addRoute` options
 * (services/gateway.service.ts `created` adds {@link gatewayRoutes} in
 * order), with their `onBeforeCall` hooks. Aliases come from ./routes.ts.
 *
 * Order matters: the probes route is first, because a URL matching no alias
 * is handed by moleculer-web to the first route, which has no body parser,
 * so an unknown route never parses a body before its 404/405.
 *
 * moleculer-web calls `onBeforeCall` with the gateway service as `this`:
 * {@link linkBeforeCall} uses it (the gateway's `limitLink` method); the
 * other hooks never read `this`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Context } from "moleculer";
import { DOCS_HANDLERS, documentBytes, matches } from "../openapi/serve";
import { ANSWER_BYTES, ANSWER_TEXT_META } from "../platform/answer-text";
import { gatewayFail } from "./errors";
import { withHead } from "./head";
import { verifyJsonDepth } from "./json-limits";
import { opsBeforeCall } from "./ops";
import { clientAddress } from "./rate-limit";
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
} from "./routes";
import { assertCleanText } from "./text-rule";
import { uploadParams } from "./upload";
import type { GwRequest, RouteOptions, WebRoute } from "./web-types";

/**
 * Alias matching of every route (issue 12): paths match exactly, case
 * included (`/V1/orders` is 404). A trailing slash is refused by
 * `beginRequest`, since moleculer-web drops it before matching.
 */
const ROUTE_MATCHING = { sensitive: true, trailing: false } as const;

/**
 * Throws 400 `ambiguous_parameter` when a key is given both in the query
 * string and in the JSON body (issue 12: moleculer-web would let the query
 * silently win). Path parameters are not checked: they name the resource and
 * always win over a body key of the same name.
 */
function refuseAmbiguous(req: GwRequest): void {
	const body = req.body;
	const query = req.query;
	if (body == null || typeof body !== "object" || !query) return;
	for (const k of Object.keys(query)) {
		if (Object.hasOwn(body, k)) {
			throw gatewayFail("ambiguous_parameter", k);
		}
	}
}

/**
 * `onBeforeCall` of the /v1 route: the JSON body must be an object (an array or
 * scalar is 400 `invalid_json`), a key may not be in both the query and the
 * body (400 `ambiguous_parameter`), a `__proto__` key in the body cannot
 * change the params object's prototype, and every string of the params (body,
 * query and path parameters merged: keys and values, at any depth) passes the
 * edge text rule (lib/gateway/text-rule.ts: 400 `validation_failed`).
 */
function checkBody(_ctx: Context, _route: unknown, req: GwRequest): void {
	const body = req.body;
	if (body != null && (typeof body !== "object" || Array.isArray(body))) {
		throw gatewayFail("invalid_json", "not_object");
	}
	refuseAmbiguous(req);
	const p = req.$params;
	if (p && Object.getPrototypeOf(p) !== Object.prototype) Object.setPrototypeOf(p, Object.prototype);
	assertCleanText(p);
}

/** Methods whose request body the API route never parses (nor merges into params): their input is the path and query. */
const BODYLESS_METHODS = new Set(["GET", "HEAD", "DELETE"]);

/** body-parser `type` of the API route: every content type is read as JSON, except on {@link BODYLESS_METHODS}. */
function readsBody(req: IncomingMessage): boolean {
	return !BODYLESS_METHODS.has(req.method ?? "GET");
}

/**
 * Whether the moleculer-web middlewares of `route` (its body parsers, then any `use`) have nothing to do for a
 * request of `method`: the route has no `use`, and either no body parser or only parsers whose `type` is
 * {@link readsBody}, which reads no body of a GET, HEAD or DELETE. body-parser would only set `req.body` to
 * `undefined` there; the gateway then routes the request without running them (services/gateway.service.ts
 * `routeHandler`, issue 32, docs/decisions/0158-idle-route-middlewares.md).
 */
export function middlewaresIdle(route: WebRoute, method: string | undefined): boolean {
	if (route.middlewares.length === 0) return true;
	if (!BODYLESS_METHODS.has(method ?? "GET")) return false;
	let idle = idleOnBodyless.get(route);
	if (idle === undefined) {
		idle = parsersOnly(route);
		idleOnBodyless.set(route, idle);
	}
	return idle;
}

/** Per route: whether its middlewares are only body parsers typed {@link readsBody} ({@link middlewaresIdle}). */
const idleOnBodyless = new WeakMap<WebRoute, boolean>();

/** Whether `route`'s middlewares are its body parsers only (no `use`), each typed {@link readsBody}. */
function parsersOnly(route: WebRoute): boolean {
	const opts = route.opts;
	if (opts.use?.length || opts.bodyParsers === false) return false;
	let parsers = 0;
	for (const p of Object.values(opts.bodyParsers)) {
		if (p === false) continue;
		if (p === null || typeof p !== "object" || (p as { type?: unknown }).type !== readsBody) return false;
		parsers++;
	}
	// anything more than the parsers (a service-wide `use`) runs as upstream runs it
	return route.middlewares.length === parsers;
}

/**
 * `onBeforeCall` of the development identity provider's route: the query/body
 * ambiguity rule and the edge text rule of {@link checkBody}, and `ctx.meta.client_address` (the
 * client address as the rate limits read it, `TRUST_PROXY` hops) for the
 * login's per-address throttle.
 */
function devIdpBeforeCall(trustProxy: number): (ctx: Context, route: unknown, req: GwRequest) => void {
	return (ctx: Context, _route: unknown, req: GwRequest): void => {
		refuseAmbiguous(req);
		// keys named like Object.prototype's properties are the token route's own 400 invalid_request (OAuth's
		// words, RFC 6749 §5.2): it reads only own string properties (services/devauth.service.ts; record 0128)
		assertCleanText(req.$params, { builtInKeys: false });
		// the login is throttled per client address too (services/devauth.service.ts)
		(ctx.meta as { client_address?: string }).client_address = clientAddress(req, trustProxy);
	};
}

/**
 * `onBeforeCall` of the signed push route (`mergeParams: false`, raw body
 * parser): courier scan pushes and message providers' callbacks. The action's
 * params become the path's parameters (`courier`, `provider`) as strings, plus
 * `{body, headers, query}`: the raw body bytes as base64 (the signature
 * covers them exactly; an absent body is empty), the request headers
 * (lower-cased by node; repeated ones joined with ", "; never `authorization`
 * or `cookie`) and the query string's single values (500 characters at most).
 */
function webhookParams(_ctx: Context, _route: unknown, req: GwRequest): void {
	const path = (req.$params as { params?: Record<string, unknown> } | undefined)?.params;
	const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
	const headers: Record<string, string> = {};
	for (const [k, v] of Object.entries(req.headers)) {
		if (v === undefined || k === "authorization" || k === "cookie") continue;
		headers[k] = Array.isArray(v) ? v.join(", ") : v;
	}
	const query: Record<string, string> = {};
	for (const [k, v] of Object.entries((req.query ?? {}) as Record<string, unknown>))
		if (typeof v === "string") query[k] = v.slice(0, 500);
	const named: Record<string, string> = {};
	for (const [k, v] of Object.entries(path ?? {})) named[k] = String(v);
	req.$params = {
		...named,
		body: raw.toString("base64"),
		headers,
		query,
	};
}

/** The gateway method the signed-link route's hook calls (moleculer-web calls it with the service as `this`). */
interface LinkHookTarget {
	limitLink(req: GwRequest, res: ServerResponse): Promise<void>;
}

/**
 * `onBeforeCall` of the signed-link route (`mergeParams: false`; moleculer-web
 * calls it with the service as `this`): the action's params become `{token}`,
 * the path's token only (a `?token=` query can never stand in for it; "" when
 * absent), then the download is counted (the `limitLink` method).
 */
function linkBeforeCall(
	this: LinkHookTarget,
	_ctx: Context,
	_route: unknown,
	req: GwRequest,
	res: ServerResponse,
): Promise<void> {
	const path = (req.$params as { params?: Record<string, unknown> } | undefined)?.params;
	req.$params = { token: typeof path?.token === "string" ? path.token : "" };
	return this.limitLink(req, res);
}

/**
 * What every route shares: mounted at `/` (aliases carry full paths),
 * explicit aliases only, exact path matching ({@link ROUTE_MATCHING}), no
 * moleculer-web request log (the gateway writes its own access log).
 */
const EVERY_ROUTE = {
	path: "/",
	mappingPolicy: "restrict",
	pathToRegexpOptions: ROUTE_MATCHING,
	logging: false,
} as const;

/** The probes route (`/health`, `/ready`): no body, no log, always answered by THIS gateway node (`nodeID`). */
function probesRoute(nodeID: string): RouteOptions {
	return {
		...EVERY_ROUTE,
		name: "probes",
		aliases: withHead(PROBE_ALIASES),
		bodyParsers: false,
		// Probes must describe THIS gateway node, never another one.
		callOptions: { nodeID },
	};
}

/**
 * The API reference route (issue 11, lib/openapi/serve.ts): function aliases
 * served by this node itself, no auth, no body. The document is built and
 * serialised now, so a broken description fails the start, not a request.
 */
function docsRoute(): RouteOptions {
	documentBytes();
	return {
		...EVERY_ROUTE,
		name: "docs",
		aliases: withHead(
			Object.fromEntries(Object.entries(DOCS_ALIASES).map(([key, handler]) => [key, DOCS_HANDLERS[handler]])),
		),
		bodyParsers: false,
	};
}

/** The development identity provider's route (only with `MSA_DEV_IDP=1`): JSON or form bodies of 64 KB at most. */
function devIdpRoute(trustProxy: number): RouteOptions {
	return {
		...EVERY_ROUTE,
		name: "devauth",
		aliases: withHead(DEV_IDP_ALIASES),
		bodyParsers: {
			json: { limit: "64kb", verify: verifyJsonDepth() },
			urlencoded: { extended: false, limit: "64kb" },
		},
		onBeforeCall: devIdpBeforeCall(trustProxy),
	};
}

/** The courier webhook route: no bearer, the raw body kept for the courier's signature ({@link webhookParams}). */
function webhooksRoute(): RouteOptions {
	return {
		...EVERY_ROUTE,
		name: "webhooks",
		aliases: withHead(WEBHOOK_ALIASES),
		mergeParams: false,
		// couriers sign the exact bytes: keep the body raw, whatever its content type (512 KB:
		// passed base64 to booking, it stays under NATS' 1 MB message size)
		bodyParsers: { raw: { type: () => true, limit: "512kb" } },
		onBeforeCall: webhookParams,
	};
}

/** The signed label link route: no bearer, no body, the token from the path only ({@link linkBeforeCall}). */
function linksRoute(): RouteOptions {
	return {
		...EVERY_ROUTE,
		name: "links",
		aliases: withHead(LINK_ALIASES),
		// GET only, nothing to parse; the action gets `{token}` from the path only (linkBeforeCall)
		mergeParams: false,
		bodyParsers: false,
		onBeforeCall: linkBeforeCall,
	};
}

/** A query value as one short string ("" when absent, repeated or not text; at most `max` characters kept). */
function queryText(v: unknown, max: number): string {
	return typeof v === "string" ? v.slice(0, max) : "";
}

/**
 * `onBeforeCall` of the buyer's pages (issue 29; `mergeParams: false`): the action's params are
 * exactly `{token, file, awb, phone_last4, lang, accept_language, form, method}` — the path's
 * `token` and `file`, the query's `awb`, `phone_last4` and `lang`, the `Accept-Language` header
 * — each a short string ("" when absent), a POST's form fields (at most 20, each a string of at
 * most 500 characters) and the method; then the request is counted per client address as a signed
 * link's (the `limitLink` method).
 */
function pageBeforeCall(
	this: LinkHookTarget,
	_ctx: Context,
	_route: unknown,
	req: GwRequest,
	res: ServerResponse,
): Promise<void> {
	const path = (req.$params as { params?: Record<string, unknown> } | undefined)?.params;
	const query = (req.query ?? {}) as Record<string, unknown>;
	const form: Record<string, string> = {};
	const body = req.body;
	if (req.method === "POST" && body && typeof body === "object" && !Buffer.isBuffer(body))
		for (const [k, v] of Object.entries(body as Record<string, unknown>).slice(0, 20))
			if (typeof v === "string") form[k.slice(0, 40)] = v.slice(0, 500);
	req.$params = {
		token: queryText(path?.token, 200),
		file: queryText(path?.file, 100),
		awb: queryText(query.awb, 100),
		phone_last4: queryText(query.phone_last4, 20),
		lang: queryText(query.lang, 10),
		accept_language: queryText(req.headers["accept-language"], 200),
		form,
		method: req.method === "POST" ? "POST" : "GET",
	};
	return this.limitLink(req, res);
}

/** The buyer's pages: no bearer; a POST's form (URL-encoded, 8 KB at most); params from {@link pageBeforeCall}. */
function pagesRoute(): RouteOptions {
	return {
		...EVERY_ROUTE,
		name: "pages",
		aliases: withHead(PAGE_ALIASES),
		mergeParams: false,
		bodyParsers: { urlencoded: { extended: false, limit: "8kb" } },
		onBeforeCall: pageBeforeCall,
	};
}

/**
 * The upload route (bearer): every alias of {@link UPLOAD_ALIASES} (the bulk
 * upload, a weight dispute, …) as a `stream` alias, the raw multipart body
 * streamed to the serving service (./upload.ts).
 */
function uploadRoute(): RouteOptions {
	return {
		...EVERY_ROUTE,
		name: "upload",
		aliases: Object.fromEntries(
			Object.entries(UPLOAD_ALIASES).map(([key, action]: [string, string]) => [
				key,
				{ type: "stream", action } as const,
			]),
		),
		authentication: true,
		authorization: true,
		// the raw multipart body is streamed to the action's service, which parses it (parts in any order,
		// issue 25); params are `{query, content_type, path}` only (lib/gateway/upload.ts)
		mergeParams: false,
		bodyParsers: false,
		onBeforeCall: uploadParams,
	};
}

/**
 * `onAfterCall` of the /v1 route: conditional GET. An action that answers
 * with an `ETag` in `ctx.meta.$responseHeaders` (`GET /v1/shipping/edd`) gets
 * 304 and no body when the request's `If-None-Match` lists it; anything else
 * passes unchanged.
 */
export function conditionalGet(
	ctx: Context,
	_route: unknown,
	req: IncomingMessage,
	_res: unknown,
	data: unknown,
): unknown {
	const meta = ctx.meta as { $responseHeaders?: Record<string, string>; $statusCode?: number };
	const etag = meta.$responseHeaders?.ETag;
	const header = req.headers["if-none-match"];
	if (!etag || (req.method !== "GET" && req.method !== "HEAD") || !matches(header, etag)) return data;
	meta.$statusCode = 304;
	return null;
}

/**
 * The bearer /v1 API route: JSON bodies of 1 MB at most, checked by {@link checkBody}; its calls are marked so an
 * action on another node answers its JSON text (docs/decisions/0124-answer-text-over-nats.md).
 */
function apiRoute(): RouteOptions {
	return {
		...EVERY_ROUTE,
		name: "api",
		aliases: withHead(API_ALIASES),
		authentication: true,
		authorization: true,
		// The API is JSON only: any request body is parsed as JSON (a form body is 400 invalid_json);
		// nesting is checked on the raw text before parsing (lib/gateway/json-limits.ts: 400 body_too_deep)
		// bodies of GET / HEAD / DELETE are never read (their params come from the path and query only)
		bodyParsers: { json: { limit: "1mb", type: readsBody, verify: verifyJsonDepth() } },
		onBeforeCall: checkBody,
		onAfterCall: conditionalGet,
		// an action on another node answers with its answer's JSON text (lib/platform/answer-text.ts)
		callOptions: { meta: { [ANSWER_TEXT_META]: ANSWER_BYTES } },
	};
}

/**
 * The ops route (`/v1/ops/*`, ./ops.ts): the ops bearer token checked before
 * the call, JSON bodies of 10 MB at most (a courier's remittance file inside);
 * no merchant rate limit, no idempotency keys (its actions are idempotent by content).
 */
function opsRoute(): RouteOptions {
	return {
		...EVERY_ROUTE,
		name: "ops",
		aliases: withHead(OPS_ALIASES),
		bodyParsers: { json: { limit: "10mb", type: readsBody, verify: verifyJsonDepth() } },
		onBeforeCall: opsBeforeCall,
	};
}

/** What the gateway's routes depend on. */
export interface GatewayRouteContext {
	/** this gateway node's id (the probes answer for it) */
	nodeID: string;
	/** `MSA_DEV_IDP`: mount the development identity provider */
	devIdp: boolean;
	/** `TRUST_PROXY` hops (the dev IdP's per-address throttle) */
	trustProxy: number;
}

/**
 * Every route of the gateway, in the order `addRoute` must add them: probes
 * (first: see the module docs), docs, the dev IdP (only when on), webhooks,
 * links, pages, upload, ops, api. Builds the OpenAPI document (a broken one throws).
 */
export function gatewayRoutes(c: GatewayRouteContext): RouteOptions[] {
	return [
		probesRoute(c.nodeID),
		docsRoute(),
		...(c.devIdp ? [devIdpRoute(c.trustProxy)] : []),
		webhooksRoute(),
		linksRoute(),
		pagesRoute(),
		uploadRoute(),
		opsRoute(),
		apiRoute(),
	];
}
