/**
 * `gateway`: the HTTP API (spec §4, §5, §2.11, §7; docs/ARCHITECTURE.md §3,
 * §6) on moleculer-web 0.11, port `loadConfig().port`.
 *
 * ## Routes (explicit aliases only, `mappingPolicy: "restrict"`; table in lib/gateway/routes.ts)
 *
 * | Method and path                        | Action               | Auth   |
 * |----------------------------------------|----------------------|--------|
 * | GET    /v1/pincode/:pincode            | pincode.lookup       | bearer |
 * | GET    /v1/shipping/serviceable        | rates.serviceable    | bearer |
 * | POST   /v1/intake/order                | intake.createOrder   | bearer |
 * | POST   /v1/intake/reverse              | intake.createReverse | bearer |
 * | POST   /v1/intake/bulk                 | intake.bulkUpload    | bearer, multipart (route `upload`: the raw body streamed to intake, which parses it; lib/gateway/upload.ts) |
 * | GET    /v1/intake/bulk/template.:format, /v1/intake/jobs[/:id[/review[/:row/:decision]]] | intake.bulk* | bearer |
 * | GET    /v1/orders/status               | intake.status        | bearer |
 * | POST   /v1/shipping/book               | booking.book         | bearer |
 * | GET    /v1/warehouses                  | warehouses.list      | bearer |
 * | POST   /v1/warehouses                  | warehouses.create    | bearer |
 * | PATCH  /v1/warehouses/:id              | warehouses.update    | bearer |
 * | DELETE /v1/warehouses/:id              | warehouses.remove    | bearer |
 * | GET    /v1/documents/label/:orderId    | documents.label (PDF)| bearer |
 * | GET    /v1/documents/label/t/:token    | documents.labelLink  | none: the signed token is the credential (checked by documents) |
 * | POST   /v1/tracking/webhooks/:courier  | booking.courierPush  | none: the courier's signature on the raw body (checked by booking) |
 * | GET    /health                         | gateway.health       | none   |
 * | GET    /ready                          | gateway.ready        | none   |
 * | GET    /v1/openapi.json, /docs, /docs/:file | (function aliases, lib/openapi/serve.ts) | none: the OpenAPI document and the reference page (issue 11) |
 * | POST   /auth/v1/token?grant_type=…     | devauth.token        | none (only with MSA_DEV_IDP=1) |
 * | GET    /auth/v1/.well-known/jwks.json  | devauth.jwks         | none (only with MSA_DEV_IDP=1) |
 *
 * HEAD is served wherever GET is (RFC 9110; lib/gateway/head.ts): every `GET`
 * alias has a `HEAD` twin calling the same action through the same checks;
 * the answer is the GET's status and headers (`Content-Length` included), no body.
 *
 * Signed label links (`LINK_ALIASES`, route `links`; spec §4.4, §5 rule 7): no
 * bearer token, no body parsing; rate-limited per client address; a 400 or
 * 404 on the link path is answered `text/plain` "Not found" (§7), whatever
 * made it (bad token, unknown AWB, label never captured, undecodable path).
 *
 * ## Rate limits (lib/gateway/rate-limit.ts,
 * docs/decisions/0036-rate-limits.md)
 *
 * Per client address on the link route (`RATE_LIMIT_LINK_PER_MIN`, checked in
 * its `onBeforeCall`, before the action) and per account on every bearer /v1
 * route (`RATE_LIMIT_ACCOUNT_PER_MIN`, checked in `authorize` once the token
 * is verified, before the access rule); counters in Redis when `REDIS_URL` is
 * set (shared by every replica), else in process. Over a limit: 429
 * `{error:"rate_limited", message}` with `Retry-After` (seconds). Probes,
 * the dev IdP and courier webhooks are never limited. Every answer counted
 * against a limit (429s too) carries `RateLimit-Policy` and `RateLimit`
 * (draft-ietf-httpapi-ratelimit-headers).
 *
 * ## Idempotency keys (lib/gateway/idempotency.ts,
 * docs/decisions/0074-idempotency-keys.md)
 *
 * A POST on a bearer route with `Idempotency-Key` is claimed in `authorize`
 * (after the rate limit and access rule) in PostgreSQL (schema `idempotency`,
 * migrated in `started`); its answer is stored as it is written and replayed
 * (`Idempotent-Replayed: true`) by `answerError` on a retry; 400
 * `invalid_idempotency_key`, 409 `idempotency_key_in_use`, 422 `idempotency_key_reused`.
 *
 * Courier scan webhooks (`WEBHOOK_ALIASES`, route `webhooks`): no bearer
 * token and no JSON parsing: the body is kept RAW (any content type, 512 KB:
 * base64 in the action's params, it still fits NATS' 1 MB payload)
 * because the courier signs the exact bytes; the action receives `{courier,
 * body: <raw body, base64>, headers: <request headers, lower-cased, without
 * authorization / cookie>}` and answers errors in the same §2.11 envelope.
 *
 * Params: query-string and path params reach actions as STRINGS (a repeated
 * query key keeps its last value; no nested objects from the query); a JSON
 * body (any content type is parsed as JSON on /v1, limit 1 MB, nested at most
 * 32 levels (400 `body_too_deep`, checked on the raw text before parsing); it
 * must be an object; never read on GET / HEAD / DELETE) is merged in, then the
 * query, then path params; a key in both the query and the body is 400
 * `ambiguous_parameter` (issue 12: never merged silently); path params win.
 * Paths match exactly: case-sensitive, no trailing slash (else 404 `not_found`).
 * The HTTP server listens on `HOST` (default 0.0.0.0; 127.0.0.1 in the zero-setup start). `ctx.meta.user`
 * (an {@link AuthUser}) comes only from the verified bearer token; nothing in
 * the body or query can set it. `sender_id` in a body or query is passed
 * through to the service, which decides (ignore or 403).
 *
 * Order of checks on /v1: route match (404/405) → body parse (400/413/415) → query/body ambiguity (400) →
 * edge text rule on every string of the params (400 `validation_failed`, lib/gateway/text-rule.ts) →
 * service available (503) → bearer token (401) → account rate limit (429) → `checkAccess` with the
 * action's `access` key, read from the registry so it also works over NATS
 * (403 `Read-only role` / 403 `forbidden` with `cap`) → a POST's `Idempotency-Key` (400 / 409 / 422 /
 * replay), before the handler runs.
 *
 * ## Error mapping (`settings.onError`, details in lib/gateway/errors.ts)
 *
 * - contract bodies (`ApiError`, including across NATS, the §5.6 401s, the §5
 *   403s, the documents exceptions) → their status and body verbatim;
 * - broker `ValidationError` (422) of the called action → 400 `validation_failed`
 *   with `details` (one raised by a nested internal call is a server bug → 500);
 * - a string of the params (query, path, body: keys and values) with a control character other than
 *   TAB/LF/CR or an unpaired surrogate → 400 `validation_failed` with `details` (lib/gateway/text-rule.ts);
 * - a body whose bytes do not decode with its `Content-Encoding` → 400 `invalid_body`; an unsupported
 *   `Content-Encoding`, or a JSON body in a charset other than UTF-8 → 415 `unsupported_media_type`;
 * - malformed JSON → 400 `invalid_json`; nested deeper than 32 → 400 `body_too_deep`;
 *   a key in both query and body → 400 `ambiguous_parameter`; body over 1 MB → 413 `payload_too_large`;
 * - unknown route → 404 `{error:"not_found", message:"Route not found"}`;
 *   known path, other method → 405 `method_not_allowed` with `Allow`;
 *   `OPTIONS` on a known path → 204 with `Allow` (CORS is off);
 * - service not found / not available / timeout / NATS down → 503 `service_unavailable`;
 * - anything else → 500 `{error:"internal_error", message:"Internal error", request_id}`, logged with its stack server-side only.
 * - under /v1/documents/ the gateway's own 400/404 answers are `{message}` (§7 exception).
 *
 * ## Every response
 *
 * `x-request-id` (the incoming one when it is ≤ 64 chars of `[A-Za-z0-9._-]`,
 * else a new UUID; also the Moleculer `requestID` of every call made for the
 * request), `x-content-type-options: nosniff`, `cache-control: no-store`
 * (actions may override the latter). 401 answers carry `WWW-Authenticate: Bearer`.
 * A structured JSON access-log line on stdout (method, path without query,
 * status, ms, request_id, sender_id; never tokens) when the log level is info
 * or finer (`GATEWAY_ACCESS_LOG`, record 0127): by default for every request
 * that is not a GET / HEAD, every answer ≥ 400, every request of
 * `GATEWAY_ACCESS_LOG_SLOW_MS` or longer or left unfinished, every `/v1/ops/`
 * request, and 1 in `GATEWAY_ACCESS_LOG_SAMPLE` of the other (fast,
 * successful) reads, whose line carries `sampled: <that number>`;
 * `GATEWAY_ACCESS_LOG=1`: every request.
 *
 * ## moleculer-web hooks and the seven remaining overrides
 *
 * Everything above is done with moleculer-web 0.11's documented hooks:
 * `rootCallOptions` (request id, common headers, query parsing, `OPTIONS`
 * never matching an alias, a trailing slash matching none either, the
 * access-log line), route `aliases` with
 * `mappingPolicy: "restrict"`, `onBeforeCall` (body shape), the
 * `authenticate` / `authorize` methods, `encodeResponse` (a shared answer's
 * JSON made once, record 0117; a remote answer's JSON text written as it
 * came, record 0124), and `settings.onError` (every error
 * answer, including 404/405/204 for URLs that match no alias).
 *
 * Seven internal methods are overridden, because no hook reaches them.
 * moleculer-web is therefore pinned to exactly 0.11.0 (package.json) and
 * test/unit/gateway/upstream.spec.ts fails when an upgrade changes them:
 * - `errorHandler`: upstream logs every 5xx with its stack at error level
 *   before calling `onError` (a polled `/ready` 503 or a 503
 *   `service_unavailable` would log a stack each time); ours only calls
 *   `sendError`, and `onError` logs unexpected errors once, with the request id.
 * - `sendResponse`: upstream warns on every 201 without `ctx.meta.$location`;
 *   our creates answer 201 with the id in the body and no `Location` header
 *   (§4.1, §4.5), so ours calls upstream's with that warning silenced.
 * - `parseQueryString`: upstream parses the query with `qs` on every request
 *   and drops the result when `req.query` is set, which `rootCallOptions`
 *   always does; ours returns that `req.query` (issue 32, record 0115).
 * - `resolveAlias`: upstream tries every alias of the table in order until one matches; ours tries, in the same
 *   order, only those that can match the request's method and segment count (lib/gateway/alias-index.ts, record 0137).
 * - `createAlias`: upstream's, then the alias's `toString` (colours and padding for the debug log, which upstream
 *   builds for every request even when debug is off) is made once and kept (record 0137).
 * - `httpHandler`: upstream's, except that a request's root context runs moleculer-web's `rest` handler inside the
 *   broker's `ContextTracker`, `Tracing` and `Metrics` hooks only, not every `localAction` hook of the broker
 *   (lib/gateway/request-root.ts, record 0155); the route's action is called with all of them, as before.
 * - `routeHandler`: upstream's, except that a request whose route middlewares have nothing to do (no body parser, or
 *   a GET / HEAD / DELETE on a route whose parsers read no body of those methods) goes to `aliasHandler` without
 *   the promise upstream awaits to run them (lib/gateway/route-options.ts `middlewaresIdle`, record 0158).
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Context } from "moleculer";
import ApiGateway from "moleculer-web";
import type { CallMeta } from "../lib/contracts";
import { type IndexedAlias, resolveAliasIndexed } from "../lib/gateway/alias-index";
import { answerFor, gatewayFail } from "../lib/gateway/errors";
import { keepHeadLength } from "../lib/gateway/head";
import { heldAnswerBody, offerHeldAnswer } from "../lib/gateway/held-answers";
import {
	type AccessLogPolicy,
	accessLogLine,
	accessLogPolicy,
	accessLogWeight,
	isLabelLinkPath,
	parseQuery,
	pathOf,
	requestIdOf,
} from "../lib/gateway/http";
import { IdempotencyKeys, IdempotentReplay, wantsIdempotency } from "../lib/gateway/idempotency";
import { clientAddress, EdgeLimiter } from "../lib/gateway/rate-limit";
import { type RequestRoot, type RestService, requestContext, requestRoot } from "../lib/gateway/request-root";
import { gatewayRoutes, middlewaresIdle } from "../lib/gateway/route-options";
import { API_ALIASES, actionsByService, DEV_IDP_ALIASES, UPLOAD_ALIASES } from "../lib/gateway/routes";
import { bearerToken, type CachedVerifier, cachedVerifier } from "../lib/gateway/tokens";
import type { GwRequest, RouteOptions, WebRoute } from "../lib/gateway/web-types";
import { writePerTurn } from "../lib/gateway/write-per-turn";
import { answerTextOf } from "../lib/platform/answer-text";
import { type AuthUser, checkAccess, createVerifier, invalidToken } from "../lib/platform/auth";
import { loadConfig, setting } from "../lib/platform/config";
import { failWith } from "../lib/platform/errors";
import { defineService, type Mixin } from "../lib/platform/service";
import { answerBody } from "../lib/platform/shared-answers";
import { flushStdoutSink, writeLine } from "../lib/platform/stdout-sink";
import { transporterLinkUp } from "../moleculer.config";

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace"];

/** One alias of moleculer-web's alias table. */
interface WebAlias extends IndexedAlias {
	/** path-to-regexp matcher of the full path */
	re: RegExp;
}

/**
 * The members moleculer-web 0.11.0 adds to this service and that it uses.
 * moleculer-web's own typings declare its schema as an untyped ServiceSchema,
 * so its mixin is cast to `Mixin<WebGateway>` below.
 */
interface WebGateway {
	/** the alias table (built by `addRoute`) */
	aliases: WebAlias[];
	/** the HTTP server (created in moleculer-web's `created`, listening after `started`) */
	server: Server;
	addRoute(route: RouteOptions): unknown;
	/** answers `err` through `settings.onError` */
	sendError(req: GwRequest, res: ServerResponse, err: unknown): void;
	/** answers 404 through `sendError` */
	send404(req: GwRequest, res: ServerResponse): void;
	/** logs the request line when the route logs (ours never do) */
	logRequest(req: GwRequest): void;
	/** calls the alias's action with `req.$params` and writes its answer; resolves `true` once written */
	aliasHandler(req: GwRequest, res: ServerResponse, alias: WebAlias): Promise<unknown>;
}

/** An alias moleculer-web's `resolveAlias` found for a request, with the path's parameters. */
interface FoundAlias {
	alias: WebAlias;
	params: Record<string, unknown>;
}

/** moleculer-web's own implementations of the overridden methods the overrides call (see file head). */
interface UpstreamMethods {
	sendResponse(this: unknown, req: GwRequest, res: ServerResponse, data: unknown, action: unknown): void;
	routeHandler(
		this: unknown,
		ctx: Context,
		route: WebRoute,
		req: GwRequest,
		res: ServerResponse,
		found?: FoundAlias,
	): Promise<unknown>;
	createAlias(this: unknown, route: unknown, path: unknown, action: unknown): { toString(): string };
}

// moleculer-web's typings declare its schema as a bare ServiceSchema (methods
// typed `any`); these casts state what it is at run time (checked by
// test/unit/gateway/upstream.spec.ts against the pinned version).
const WebMixin = ApiGateway as Mixin<WebGateway>;
const upstream = (ApiGateway as unknown as { methods: UpstreamMethods }).methods;
const { NotFoundError } = ApiGateway.Errors;

/** Instance state of the gateway (set in `created`). */
interface GatewayVars {
	/** Verifies a bearer token into an AuthUser (cached); undefined without AUTH_JWKS_URL. */
	verifyToken?: CachedVerifier;
	/** Services (→ their aliased actions) that must be reachable for `/ready`. */
	requiredActions: Map<string, string[]>;
	/** Which requests get an access-log line (read per request); undefined: none. */
	accessLog?: AccessLogPolicy;
	/** The service with a logger whose `warn` is a no-op (see `sendResponse`). */
	quietSelf: unknown;
	/** The edge rate limits (per address on signed links, per account on bearer /v1 routes). */
	limiter: EdgeLimiter;
	/** Idempotency keys of POSTs on the bearer routes (lib/gateway/idempotency.ts; schema `idempotency`). */
	idempotency: IdempotencyKeys;
	/** `TRUST_PROXY`: reverse proxies appending to X-Forwarded-For (0: the socket's address). */
	trustProxy: number;
	/** moleculer-web's HTTP server (set by the mixin). */
	server?: Server;
	/** True once the graceful stop began (see `beginShutdown`). */
	shuttingDown: boolean;
	/** Resolves once the listener closed and every connection ended (set by `beginShutdown`). */
	serverClosed?: Promise<void>;
	/** The root of every request: moleculer-web's `rest` handler in the request hooks (made in `created`). */
	requestRoot: RequestRoot;
}

/**
 * Path of a request as the client sent it, without its query string (never
 * moleculer-web's `parsedUrl`, which drops a trailing slash, nor the path an
 * inexact request is rerouted to by `beginRequest`).
 */
function requestPath(req: GwRequest): string {
	return pathOf(req.originalUrl ?? req.url);
}

/** Where `beginRequest` sends a request whose path has a trailing slash: a URL no alias matches (→ 404 `not_found`). */
const UNROUTABLE_URL = "/";

/**
 * True when the broker's logger writes info lines: it is on, and its level
 * (`loggerOpt.options.level`, else `fallback`) is info or finer.
 */
function logsInfo(loggerOpt: unknown, fallback: string): boolean {
	if (loggerOpt === false || loggerOpt == null) return false;
	const level = (loggerOpt as { options?: { level?: unknown } }).options?.level;
	return LOG_LEVELS.indexOf(typeof level === "string" ? level : fallback) >= LOG_LEVELS.indexOf("info");
}

/** The gateway's own methods that its moleculer-web settings hooks call. */
interface HookTarget {
	beginRequest(options: { requestID?: string }, req: GwRequest, res: ServerResponse): void;
	answerError(req: GwRequest, res: ServerResponse, err: unknown): void;
}

/**
 * `settings.rootCallOptions`, run first for every request (moleculer-web calls
 * it with the service as `this`): see the `beginRequest` method.
 */
function rootCallOptions(
	this: HookTarget,
	options: { requestID?: string },
	req: GwRequest,
	res: ServerResponse,
): void {
	this.beginRequest(options, req, res);
}

/**
 * `settings.onError`, the global error handler (moleculer-web calls it with
 * the service as `this`): see the `answerError` method.
 */
function onError(this: HookTarget, req: GwRequest, res: ServerResponse, err: unknown): void {
	this.answerError(req, res, err);
}

/**
 * The `error` listener of a response routed past its idle middlewares (the gateway's `routeHandler`): an error the
 * response emits while it is being made is the request's error, answered by the gateway's `errorHandler` (which cuts
 * a response already begun), as upstream's route promise did with it; once the response has finished or closed it is
 * ignored, as that settled promise ignored it. Without a listener the response's `emit` would throw it.
 */
function responseError(this: ServerResponse, err: Error): void {
	if (this.writableFinished || this.destroyed) return;
	const res = this as ServerResponse & {
		$service?: { errorHandler(req: GwRequest, res: ServerResponse, e: unknown): void };
	};
	res.$service?.errorHandler(this.req as GwRequest, this, err);
}

export default defineService<GatewayVars>()({
	name: "gateway",
	hiddenActions: ["addRoute", "removeRoute", "listAliases"],
	mixins: [WebMixin],

	settings: {
		/** Replaced by `loadConfig().port` in `created`. */
		port: 3000,
		/** Replaced in `created` by `HOST` (default 0.0.0.0; the zero-setup start sets 127.0.0.1). */
		ip: "0.0.0.0",
		path: "/",
		/** Routes are added in `created` (configuration is read there); `[]` would add a catch-all route. */
		routes: null,
		logRequest: null,
		logResponse: null,
		logRequestParams: null,
		logResponseData: null,
		log4XXResponses: false,
		logRouteRegistration: "debug",
		optimizeOrder: true,

		rootCallOptions,
		onError,
	},

	methods: {
		/**
		 * Called by the system's `stop()` (lib/platform/system.ts) before the broker stops:
		 * the listener closes (new connections are refused: the load balancer /
		 * Service sends them to another gateway) and every answer from then on
		 * says `Connection: close`, so clients open their next request on a new
		 * connection elsewhere; open connections are not dropped (`closeListener`).
		 */
		beginShutdown(): void {
			if (this.shuttingDown) return;
			this.shuttingDown = true;
			this.serverClosed = this.closeListener();
		},

		/**
		 * Stops accepting connections without dropping the open ones: Node's
		 * `server.close()` also closes every idle connection at once, and a
		 * client sending on one at that instant, or that had just connected
		 * and not yet sent, got a socket error instead of an answer
		 * (test/e2e/split.spec.ts, SIGTERM of a gateway under load). Here a
		 * request on an open connection is still answered (with `Connection:
		 * close`), idle ones close on their clients' side (they close before
		 * the keep-alive timeout the server announces), and whatever is still
		 * open after the server's keep-alive timeout + 1 s is closed. Resolves
		 * when every connection has closed.
		 */
		closeListener(): Promise<void> {
			const server = this.server;
			if (!server?.listening) return Promise.resolve();
			return new Promise<void>((resolve) => {
				const timer = setTimeout(
					() => server.closeAllConnections(),
					(server.keepAliveTimeout || 5000) + 1000,
				);
				const closeIdle = server.closeIdleConnections;
				server.closeIdleConnections = () => undefined;
				server.close(() => {
					clearTimeout(timer);
					resolve();
				});
				server.closeIdleConnections = closeIdle;
			});
		},

		/**
		 * moleculer-web `authenticate` hook of the /v1 route: returns the
		 * {@link AuthUser} of the verified bearer token (becomes `ctx.meta.user`).
		 * Throws 401 `{error:"Authentication required"}` (no / malformed header)
		 * or 401 `{error:"Invalid or expired token", code}` (§5.6).
		 */
		async authenticate(_ctx: Context, _route: unknown, req: GwRequest): Promise<AuthUser> {
			if (!this.verifyToken) {
				bearerToken(req.headers.authorization);
				throw invalidToken("jwks_unavailable");
			}
			return this.verifyToken.forHeader(req.headers.authorization);
		},

		/**
		 * moleculer-web `authorize` hook: counts the request against the
		 * account's rate limit (429; `RateLimit` headers on every answer), applies
		 * the target action's `access` rule (lib/platform/auth.ts `checkAccess`) before
		 * the handler runs: 403 `Read-only role`, 403 `forbidden` with `cap`;
		 * then claims a POST's `Idempotency-Key` (lib/gateway/idempotency.ts:
		 * 400 / 409 / 422, or the stored answer replayed). A read then names the answer bytes this gateway holds for
		 * it (lib/gateway/held-answers.ts, docs/decisions/0133-held-answers.md).
		 */
		async authorize(
			ctx: Context<unknown, CallMeta>,
			_route: unknown,
			req: GwRequest,
			res: ServerResponse,
		): Promise<void> {
			const user = ctx.meta.user;
			if (user) await this.limiter.account(user.sender_id, res);
			checkAccess(user, req.$action?.access);
			if (user && wantsIdempotency(req)) await this.idempotency.begin(req, res, user.sender_id);
			offerHeldAnswer(ctx, req);
		},

		/**
		 * `onBeforeCall` of the signed-link route: counts the download against its
		 * client address (lib/gateway/rate-limit.ts `clientAddress`, `TRUST_PROXY`);
		 * throws 429 `rate_limited` over `RATE_LIMIT_LINK_PER_MIN`.
		 */
		async limitLink(req: GwRequest, res: ServerResponse): Promise<void> {
			await this.limiter.link(clientAddress(req, this.trustProxy), res);
		},

		/**
		 * `rootCallOptions`, run first for every request: picks the request id
		 * (sane incoming `x-request-id` or a new UUID) as the root context's
		 * `requestID`; sets the headers every response carries; parses the
		 * query string into flat strings (`parseQuery`, kept by moleculer-web
		 * as `req.query`); makes a path with a trailing slash match no alias
		 * (404 `not_found`; `/v1/orders/` is not `/v1/orders`); makes `OPTIONS` match no alias (moleculer-web would
		 * route it as its `Access-Control-Request-Method`, or as GET without
		 * one; CORS is off), so it is answered by `answerError`; and registers
		 * the access-log line for when the answer is written.
		 */
		beginRequest(options: { requestID?: string }, req: GwRequest, res: ServerResponse): void {
			const id = requestIdOf(req.headers["x-request-id"]);
			options.requestID = id;
			res.setHeader("X-Request-ID", id);
			res.setHeader("X-Content-Type-Options", "nosniff");
			res.setHeader("Cache-Control", "no-store");
			const url = req.url ?? "/";
			const q = url.indexOf("?", 1);
			req.query = q === -1 ? {} : parseQuery(url.slice(q + 1));
			// exact routing (issue 12): moleculer-web drops a trailing slash before matching, so a
			// path ending in "/" is rerouted to a URL no alias matches (404); logs keep the real path
			const path = q === -1 ? url : url.slice(0, q);
			if (path.length > 1 && path.endsWith("/")) {
				req.originalUrl = url;
				req.url = UNROUTABLE_URL;
			}
			if (req.method === "OPTIONS") req.headers["access-control-request-method"] = "OPTIONS";
			// HEAD is routed by the `HEAD` twins of the GET aliases (lib/gateway/head.ts); it keeps the GET's Content-Length
			if (req.method === "HEAD") keepHeadLength(res);
			// a response emits "close" once: after "finish" when its answer was written, alone when it was cut off
			if (this.accessLog) res.on("close", () => this.logAccess(req, res));
		},

		/**
		 * `settings.onError`: answers the status and body of `answerFor(err)`
		 * (see file head). A URL that matched no alias (moleculer-web's
		 * NotFoundError) is 405 `method_not_allowed` with `Allow` when the path
		 * exists for other methods, 204 + `Allow` for OPTIONS there, else 404
		 * `not_found`. Never sends a stack trace; logs unexpected (500) errors
		 * with the request id. 401 answers carry `WWW-Authenticate`.
		 */
		answerError(req: GwRequest, res: ServerResponse, err: unknown): void {
			// an Idempotency-Key holding this request's answer (lib/gateway/idempotency.ts): written as stored
			if (err instanceof IdempotentReplay) {
				err.write(res);
				return;
			}
			const ctx = req.$ctx;
			const requestId = ctx?.requestID ?? String(res.getHeader("x-request-id") ?? "");
			const path = requestPath(req);
			if (err instanceof NotFoundError && req.$alias === undefined) {
				const allowed = this.allowedMethods(path);
				if (allowed.length > 0 && !res.headersSent) {
					res.setHeader("Allow", allowed.join(", "));
					if (req.method === "OPTIONS") {
						res.statusCode = 204;
						res.end();
						return;
					}
					err = gatewayFail("method_not_allowed", String(req.method), path);
				}
			}
			const answer = answerFor(err, path, requestId, req.$action?.name);
			if (answer.log) {
				const e = err as Error | undefined;
				this.logger.error("Unhandled error answered 500", {
					request_id: requestId,
					method: req.method,
					path,
					name: e?.name,
					message: e?.message,
					stack: e?.stack,
				});
			}
			if (res.headersSent) {
				if (!res.writableEnded) res.destroy();
				return;
			}
			if (!res.hasHeader("x-request-id") && requestId) res.setHeader("X-Request-ID", requestId);
			if (isLabelLinkPath(path) && (answer.status === 400 || answer.status === 404)) {
				// §7: the signed link answers a plain-text 404 for anything it cannot serve
				const text = "Not found\n";
				res.statusCode = 404;
				res.setHeader("Content-Type", "text/plain; charset=utf-8");
				res.setHeader("Cache-Control", "private, no-store");
				res.setHeader("Referrer-Policy", "no-referrer");
				res.setHeader("Content-Length", Buffer.byteLength(text));
				res.end(text);
				return;
			}
			const retryAfter = (err as { data?: { retry_after?: unknown } } | null)?.data?.retry_after;
			// an error that says when to retry (`data.retry_after`, seconds: 429 rate_limited, 409
			// carrier_label_missing while a courier's label is being captured) answers it as Retry-After
			if (typeof retryAfter === "number") res.setHeader("Retry-After", String(retryAfter));
			// nothing can serve the request right now (service_unavailable, rate_unavailable, cancel_unavailable, …):
			// fail fast and say when to retry (issue 12)
			else if (answer.status === 503) res.setHeader("Retry-After", "1");
			if (answer.status === 401) {
				res.setHeader("WWW-Authenticate", answer.body.code ? 'Bearer error="invalid_token"' : "Bearer");
			}
			const payload = JSON.stringify(answer.body);
			res.statusCode = answer.status;
			res.setHeader("Content-Type", "application/json; charset=utf-8");
			res.setHeader("Content-Length", Buffer.byteLength(payload));
			res.end(payload);
		},

		/** Methods (e.g. `["GET","POST"]`) of the aliases matching `path`; empty for an unknown path. */
		allowedMethods(path: string): string[] {
			const out: string[] = [];
			for (const a of this.aliases) {
				if (a.re.test(path) && !out.includes(a.method)) out.push(a.method);
			}
			return out;
		},

		/**
		 * OVERRIDE of moleculer-web's `errorHandler(req, res, err)` (pinned, see
		 * file head): no stack logging here; everything goes to `onError`.
		 */
		errorHandler(req: GwRequest, res: ServerResponse, err: unknown): void {
			this.sendError(req, res, err);
		},

		/**
		 * OVERRIDE of moleculer-web's `parseQueryString(req)` (pinned, see file head): the path split off at the
		 * first `?` after the first character, as upstream does, with the query `beginRequest` has already parsed
		 * (`req.query`, flat strings) instead of a second parse with `qs` whose result upstream would drop (it keeps
		 * a `req.query` already set). Without a `req.query` it parses as `beginRequest` does. Issue 32,
		 * docs/decisions/0115-query-parsed-once.md.
		 */
		parseQueryString(req: GwRequest): { query: Record<string, unknown>; url: string } {
			const url = req.url ?? "/";
			const q = url.indexOf("?", 1);
			if (q === -1) return { query: req.query ?? {}, url };
			return { query: req.query ?? parseQuery(url.slice(q + 1)), url: url.slice(0, q) };
		},

		/**
		 * moleculer-web's `encodeResponse(req, res, data)` hook (its CHANGELOG: "You can overwrite it"): the JSON of
		 * an answer. An answer an action on another node sent as its JSON text (lib/platform/answer-text.ts,
		 * docs/decisions/0124-answer-text-over-nats.md) is that text; otherwise the JSON is made once for an answer
		 * an action shares between requests (kept quotes, EDD answers: lib/platform/shared-answers.ts
		 * `answerJson`), each time for any other. Issue 32, docs/decisions/0117-shared-answer-json.md. An answer that
		 * names the bytes this gateway holds for the request is those bytes (lib/gateway/held-answers.ts,
		 * docs/decisions/0133-held-answers.md).
		 */
		encodeResponse(req: GwRequest, _res: ServerResponse, data: unknown): string | Uint8Array {
			return heldAnswerBody(req, data) ?? answerTextOf(data) ?? answerBody(data);
		},

		/**
		 * OVERRIDE of moleculer-web's `httpHandler(req, res, next)` (pinned, see file head), the HTTP server's
		 * handler: upstream's, except that the request's root context runs moleculer-web's `rest` handler inside
		 * the request hooks only (lib/gateway/request-root.ts, record 0155) instead of calling `this.actions.rest`,
		 * which wraps it in every `localAction` hook of the broker. The same fields are set on `req` / `res`, the
		 * call options are `rootCallOptions`' (`beginRequest` sets the request id; upstream's start value from
		 * `x-correlation-id` / `x-request-id` would be replaced there), an unrouted request is answered 404 and an
		 * error goes to `errorHandler`, as upstream does. Upstream's CORS and static-asset branches for an unrouted
		 * request are left out: the gateway configures neither (CORS is off, file head).
		 */
		async httpHandler(req: GwRequest, res: ServerResponse, next?: unknown): Promise<void> {
			const r = req as GwRequest & { $startTime?: [number, number]; $service?: unknown; $next?: unknown };
			r.$startTime = process.hrtime();
			r.$service = this;
			r.$next = next;
			const w = res as ServerResponse & { $service?: unknown; locals?: Record<string, unknown> };
			w.$service = this;
			w.locals = w.locals || {};
			const options: { requestID?: string } = {};
			this.beginRequest(options, req, res);
			try {
				const root = this.requestRoot;
				const result = await root.handler(requestContext(this.broker, root, { req, res }, options));
				if (result == null) this.send404(req, res);
			} catch (err) {
				this.errorHandler(req, res, err);
			}
		},

		/**
		 * OVERRIDE of moleculer-web's `routeHandler(ctx, route, req, res, foundAlias)` (pinned, see file head):
		 * upstream's, except that a request whose route middlewares have nothing to do for it
		 * (lib/gateway/route-options.ts `middlewaresIdle`: a route without body parsers, or a GET / HEAD / DELETE on a
		 * route whose parsers read no body of those methods) does not run them. Upstream runs them through a promise
		 * it awaits (`composeThen`), inside a promise settled by three `once` listeners on the response, even when
		 * none has anything to do; on a light read that was a tenth or more of its CPU (issue 32,
		 * docs/decisions/0158-idle-route-middlewares.md). The rest is upstream's, in its order: `req.$route` /
		 * `res.$route`, the request log call, `req.body` set as body-parser sets it on a request it does not read,
		 * the params merged (query, then the path's: no body was read; or `{body, query, params}` when `mergeParams`
		 * is false), `req.$params`, `req.$alias`; then the alias handler's promise is returned as it is (it settles when the
		 * answer is written or failed). One shared `error` listener ({@link responseError}) sends an error the
		 * response emits meanwhile to `errorHandler`, as upstream's promise did. Upstream's debug line naming the
		 * alias is not written. A request that matched no alias, a route with CORS, and a request its middlewares
		 * may read are upstream's.
		 */
		routeHandler(
			ctx: Context,
			route: WebRoute,
			req: GwRequest,
			res: ServerResponse,
			found?: FoundAlias,
		): Promise<unknown> {
			if (found === undefined || route.cors || !middlewaresIdle(route, req.method))
				return upstream.routeHandler.call(this, ctx, route, req, res, found);
			const r = req as GwRequest & { $route?: WebRoute };
			(res as ServerResponse & { $route?: WebRoute }).$route = r.$route = route;
			this.logRequest(req);
			try {
				// upstream's promise turned a response error into the request's error: so does this listener
				res.on("error", responseError);
				if (route.middlewares.length > 0 && !("body" in req)) req.body = undefined;
				const alias = found.alias;
				let params: Record<string, unknown>;
				if (route.opts.mergeParams === false)
					params = { body: req.body, query: req.query, params: found.params };
				// no middleware read a body here: upstream's merge of body, query and path params is query and path
				else params = Object.assign({}, req.query, found.params);
				req.$params = params;
				req.$alias = alias;
				return this.aliasHandler(req, res, alias);
			} catch (err) {
				return Promise.reject(err);
			}
		},

		/**
		 * OVERRIDE of moleculer-web's `resolveAlias(url, method)` (pinned, see file head): the same answer (`{ alias,
		 * params }` of the first alias in the table's order matching the method and `url`, else `false`), trying only
		 * the aliases that can match the method and the number of segments (lib/gateway/alias-index.ts, record 0137).
		 */
		resolveAlias(
			url: string,
			method?: string,
		): { alias: IndexedAlias; params: Record<string, unknown> } | false {
			return resolveAliasIndexed(this.aliases, url, method);
		},

		/**
		 * OVERRIDE of moleculer-web's `createAlias(route, path, action)` (pinned, see file head): upstream's alias,
		 * whose `toString` (the coloured line upstream's `routeHandler` builds for its debug log on every request, debug
		 * on or off) is made once and kept (record 0137).
		 */
		createAlias(route: unknown, path: unknown, action: unknown): { toString(): string } {
			const alias = upstream.createAlias.call(this, route, path, action);
			const text = alias.toString();
			alias.toString = () => text;
			return alias;
		},

		/**
		 * OVERRIDE of moleculer-web's `sendResponse(req, res, data, action)`
		 * (pinned, see file head): upstream's, except that a 201 without
		 * `ctx.meta.$location` does not log a warning on every request, and a
		 * HEAD is answered as its GET (upstream would `res.end()` before
		 * encoding: no `Content-Length`, and a stream answer never consumed);
		 * Node drops the body of a response to HEAD (lib/gateway/head.ts).
		 */
		sendResponse(req: GwRequest, res: ServerResponse, data: unknown, action: unknown): void {
			const meta = req.$ctx?.meta;
			const quiet = meta?.$statusCode === 201 && !meta.$location;
			const head = req.method === "HEAD";
			if (head) req.method = "GET";
			try {
				upstream.sendResponse.call(quiet ? this.quietSelf : this, req, res, data, action);
			} finally {
				if (head) req.method = "HEAD";
			}
		},

		/**
		 * Queues the access-log line of a request for stdout (JSON; never tokens,
		 * queries or bodies), written asynchronously (lib/platform/stdout-sink.ts),
		 * when the access-log policy takes it (lib/gateway/http.ts `accessLogWeight`:
		 * every write, error, slow or unfinished request and every ops request; 1 in
		 * `sampleEvery` of the other GET / HEAD requests, whose line says
		 * `sampled: <sampleEvery>`).
		 */
		logAccess(req: GwRequest, res: ServerResponse): void {
			const policy = this.accessLog;
			if (!policy) return;
			const d = process.hrtime(req.$startTime);
			const ms = Math.round((d[0] * 1e3 + d[1] / 1e6) * 10) / 10;
			const path = requestPath(req);
			const status = res.statusCode;
			const weight = accessLogWeight(policy, {
				method: req.method,
				path,
				status,
				ms,
				finished: res.writableFinished,
			});
			if (weight === 0) return;
			const ctx = req.$ctx;
			writeLine(
				accessLogLine({
					nodeID: this.broker.nodeID,
					ns: this.broker.namespace,
					method: req.method,
					path,
					status,
					ms,
					request_id: ctx?.requestID ?? undefined,
					sender_id: ctx?.meta?.user?.sender_id,
					sampled: weight > 1 ? weight : undefined,
				}),
			);
		},
	},
	actions: {
		/** Liveness (`GET /health`, no auth): 200 `{status:"ok"}` while the process serves HTTP. */
		health: {
			handler() {
				return { status: "ok" };
			},
		},

		/**
		 * Readiness (`GET /ready`, no auth): 200 `{status:"ready", services:{<name>: true}}`
		 * when every service behind an alias of this deployment has an available
		 * endpoint in the registry (local or over NATS) and this node's NATS link
		 * is up; else 503 `{error:"not_ready", message, missing:[service… or
		 * "transporter"]}`.
		 */
		ready: {
			handler() {
				const services: Record<string, boolean> = {};
				const missing: string[] = [];
				for (const [svc, actions] of this.requiredActions) {
					const ok = actions.every(
						(a) => this.broker.registry.getActionEndpoints(a)?.hasAvailable() === true,
					);
					services[svc] = ok;
					if (!ok) missing.push(svc);
				}
				// this node's own NATS link (and its queue-group subscriptions): a registry remembered from before
				// a disconnect is not a way to serve
				if (!transporterLinkUp(this.broker)) missing.push("transporter");
				if (missing.length > 0) {
					throw failWith("not_ready", { missing }, missing);
				}
				return { status: "ready", services };
			},
		},
	},

	/**
	 * Reads the configuration (port, JWKS, dev IdP switch, log level), builds
	 * the cached token verifier (jose fetches keys lazily on first use) and
	 * mounts the routes (lib/gateway/route-options.ts `gatewayRoutes`; the
	 * probes route first: a URL matching no alias is handed by moleculer-web
	 * to the first route, which has no body parser, so an unknown route never
	 * parses a body before its 404/405).
	 */
	created() {
		// the request root (record 0155), as Moleculer wraps actions: at creation; a Moleculer or moleculer-web that
		// no longer fits fails here, not at a request
		this.requestRoot = requestRoot(this as unknown as RestService);
		const cfg = loadConfig();
		this.settings.port = cfg.port;
		// listen address: `HOST`; the zero-setup start sets 127.0.0.1 (lib/platform/system.ts), else every interface
		this.settings.ip = setting("HOST") ?? "0.0.0.0";
		const devIdp = setting("MSA_DEV_IDP") === true;
		// the access log (record 0127): at info or finer only
		this.accessLog = logsInfo(this.broker.options.logger, cfg.logLevel)
			? accessLogPolicy(
					setting("GATEWAY_ACCESS_LOG"),
					setting("GATEWAY_ACCESS_LOG_SAMPLE"),
					setting("GATEWAY_ACCESS_LOG_SLOW_MS"),
				)
			: undefined;
		this.trustProxy = cfg.trustProxy;
		this.limiter = new EdgeLimiter(
			{
				linkPerMin: cfg.rateLimitLinkPerMin,
				accountPerMin: cfg.rateLimitAccountPerMin,
				redisUrl: cfg.redisUrl,
				prefix: cfg.queuePrefix,
			},
			this.logger,
		);
		this.idempotency = new IdempotencyKeys(
			{ ttlS: cfg.idempotencyTtlS, lockS: cfg.idempotencyLockS, maxBodyBytes: cfg.idempotencyMaxBodyBytes },
			this.logger,
		);
		this.verifyToken = cfg.authJwksUrl
			? cachedVerifier(
					createVerifier({ jwksUrl: cfg.authJwksUrl, issuer: cfg.authIssuer, audience: cfg.authAudience }),
				)
			: undefined;
		// `this` seen by sendResponse for 201s: same service, warn() silenced.
		this.quietSelf = Object.create(this, {
			logger: { value: { ...this.logger, warn: () => undefined } },
		});
		// the webhook route's action (booking.courierPush) lives in booking, and the link route's
		// (documents.labelLink) in documents, both already required by API_ALIASES
		this.requiredActions = actionsByService(
			API_ALIASES,
			UPLOAD_ALIASES,
			...(devIdp ? [DEV_IDP_ALIASES] : []),
		);

		// answers made in the turn their request was read in are written together at its end (record 0150)
		if (setting("GATEWAY_WRITE_PER_TURN") !== false && this.server) writePerTurn(this.server);

		// probes first, then docs, dev IdP, webhooks, links, upload, api (lib/gateway/route-options.ts)
		for (const route of gatewayRoutes({ nodeID: this.broker.nodeID, devIdp, trustProxy: this.trustProxy }))
			this.addRoute(route);
	},

	/**
	 * Refuses to run without an identity provider (docs/ARCHITECTURE.md §2:
	 * never fall back to development keys); connects the rate limiter to Redis
	 * (a failure only logs: it limits in process meanwhile); migrates schema
	 * `idempotency` (fails the start when PostgreSQL is unreachable).
	 */
	async started() {
		if (!this.verifyToken) {
			throw new Error("gateway: AUTH_JWKS_URL is required (no identity provider configured)");
		}
		this.shuttingDown = false;
		// once the graceful stop began, keep-alive connections close after their answer (see beginShutdown)
		this.server?.on("request", (_req: IncomingMessage, res: ServerResponse) => {
			if (this.shuttingDown) res.setHeader("Connection", "close");
		});
		await this.limiter.start();
		// schema `idempotency` (the gateway's only tables: lib/gateway/migrations.ts) and its hourly purge
		await this.idempotency.start();
	},

	/**
	 * Runs before moleculer-web's own `stopped()` (which would close the
	 * server, idle connections included): after a graceful stop, waits for
	 * the connections to end (`closeListener`); then closes the rate limiter's
	 * Redis connection and writes the access-log lines still queued.
	 */
	async stopped() {
		await this.serverClosed;
		await this.limiter?.stop();
		this.idempotency?.stop();
		flushStdoutSink();
	},
});
