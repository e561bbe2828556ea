/**
 * `gateway`: the HTTP API (spec §4, §5, §2.11, §7; ARCHITECTURE §3, §6) on
 * moleculer-web 0.11, port `loadConfig().port`.
 *
 * ## Routes (explicit aliases only, `mappingPolicy: "restrict"`; table in lib/gateway/routes.ts)
 *
 * | Method and path                        | Action               | Auth   |
 * |----------------------------------------|----------------------|--------|
 * | GET    /v1/pincode/:pincode            | pincode.lookup       | bearer |
 * | GET    /v1/shipping/serviceable        | rates.serviceable    | bearer |
 * | POST   /v1/intake/order                | intake.createOrder   | bearer |
 * | POST   /v1/intake/reverse              | intake.createReverse | bearer |
 * | GET    /v1/orders/status               | intake.status        | bearer |
 * | POST   /v1/shipping/book               | booking.book         | bearer |
 * | GET    /v1/warehouses                  | warehouses.list      | bearer |
 * | POST   /v1/warehouses                  | warehouses.create    | bearer |
 * | PATCH  /v1/warehouses/:id              | warehouses.update    | bearer |
 * | DELETE /v1/warehouses/:id              | warehouses.remove    | bearer |
 * | GET    /v1/documents/label/:orderId    | documents.label (PDF)| bearer |
 * | GET    /health                         | gateway.health       | none   |
 * | GET    /ready                          | gateway.ready        | none   |
 * | POST   /auth/v1/token?grant_type=…     | devauth.token        | none (only with MSA_DEV_IDP=1) |
 * | GET    /auth/v1/.well-known/jwks.json  | devauth.jwks         | none (only with MSA_DEV_IDP=1) |
 *
 * Params: query-string and path params reach actions as STRINGS (a repeated
 * query key keeps its last value; no nested objects from the query); a JSON
 * body (any content type is parsed as JSON on /v1, limit 1 MB; it must be an
 * object) is merged in, then the query, then path params. `ctx.meta.user`
 * (an {@link AuthUser}) comes only from the verified bearer token; nothing in
 * the body or query can set it. `sender_id` in a body or query is passed
 * through to the service, which decides (ignore or 403).
 *
 * Order of checks on /v1: route match (404/405) → body parse (400/413) →
 * service available (503) → bearer token (401) → `checkAccess` with the
 * action's `access` key, read from the registry so it also works over NATS
 * (403 `Read-only role` / 403 `forbidden` with `cap`), before the handler runs.
 *
 * ## Error mapping (`settings.onError`, details in lib/gateway/errors.ts)
 *
 * - contract bodies (`ApiError`, including across NATS, the §5.6 401s, the §5
 *   403s, the documents exceptions) → their status and body verbatim;
 * - broker `ValidationError` (422) of the called action → 400 `validation_failed`
 *   with `details` (one raised by a nested internal call is a server bug → 500);
 * - malformed JSON → 400 `invalid_json`; body over 1 MB → 413 `payload_too_large`;
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
 * One structured JSON access-log line per request on stdout (method, path
 * without query, status, ms, request_id, sender_id; never tokens) when the
 * log level is info or finer.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Context, ServiceSchema } from "moleculer";
import ApiGateway from "moleculer-web";
import { type AuthUser, checkAccess, createVerifier, invalidToken } from "../lib/auth";
import { loadConfig } from "../lib/config";
import { ApiError } from "../lib/errors";
import { answerFor, GatewayError } from "../lib/gateway/errors";
import { accessLogLine, parseQuery, pathOf, requestIdOf } from "../lib/gateway/http";
import { API_ALIASES, actionsByService, DEV_IDP_ALIASES, PROBE_ALIASES } from "../lib/gateway/routes";
import { bearerToken, cachedVerifier } from "../lib/gateway/tokens";

/** The original moleculer-web methods our overrides delegate to. */
const Base = (ApiGateway as any).methods as Record<string, (...args: any[]) => any>;

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace"];

/** A request as moleculer-web decorates it. */
type GwRequest = IncomingMessage & {
	$ctx?: Context<any, any>;
	$action?: { name?: string; access?: Parameters<typeof checkAccess>[1] };
	$params?: Record<string, unknown>;
	$startTime?: [number, number];
	parsedUrl?: string;
	originalUrl?: string;
	body?: unknown;
};

/** Instance state of the gateway. */
interface GatewayVars {
	/** Verifies a bearer token into an AuthUser (cached); undefined without AUTH_JWKS_URL. */
	verifyToken?: (token: string) => Promise<AuthUser>;
	/** Services (→ their aliased actions) that must be reachable for `/ready`. */
	requiredActions: Map<string, string[]>;
	/** Write access-log lines. */
	accessLog: boolean;
	/** The service with a logger whose `warn` is a no-op (see `sendResponse`). */
	quietSelf: unknown;
	/** moleculer-web state */
	aliases: Array<{ method: string; re: RegExp }>;
	server: import("node:http").Server;
	addRoute(route: Record<string, unknown>): unknown;
	sendError(req: GwRequest, res: ServerResponse, err: unknown): void;
	logAccess(req: GwRequest, res: ServerResponse): void;
	allowedMethods(path: string): string[];
}

/** Path of a request without its query string (moleculer-web's `parsedUrl` once it has parsed the URL). */
function requestPath(req: GwRequest): string {
	return req.parsedUrl ?? pathOf(req.originalUrl ?? req.url);
}

/**
 * `onBeforeCall` of the /v1 route: the JSON body must be an object (an array or
 * scalar is 400 `invalid_json`), and a `__proto__` key in the body cannot
 * change the params object's prototype.
 */
function checkBody(_ctx: Context, _route: unknown, req: GwRequest): void {
	const body = req.body;
	if (body != null && (typeof body !== "object" || Array.isArray(body))) {
		throw new GatewayError(400, "invalid_json", "Request body must be a JSON object");
	}
	const p = req.$params;
	if (p && Object.getPrototypeOf(p) !== Object.prototype) Object.setPrototypeOf(p, Object.prototype);
}

export default {
	name: "gateway",
	mixins: [ApiGateway as any],

	settings: {
		/** Replaced by `loadConfig().port` in `created`. */
		port: 3000,
		path: "/",
		/** Routes are added in `created` (configuration is read there, not at import). */
		routes: null as unknown as [],
		logRequest: null,
		logResponse: null,
		logRequestParams: null,
		logResponseData: null,
		log4XXResponses: false,
		logRouteRegistration: "debug",
		optimizeOrder: true,

		/**
		 * Per request, before anything else: picks the request id (sane incoming
		 * `x-request-id` or a new UUID) as the root context's `requestID`, and
		 * sets the headers every response carries.
		 */
		rootCallOptions(options: Record<string, unknown>, req: IncomingMessage, res: ServerResponse): void {
			const id = requestIdOf(req.headers["x-request-id"]);
			options.requestID = id;
			res.setHeader("X-Request-ID", id);
			res.setHeader("X-Content-Type-Options", "nosniff");
			res.setHeader("Cache-Control", "no-store");
		},

		/**
		 * Global error handler: answers the status and body of
		 * `answerFor(err)` (see file head). Never sends a stack trace; logs
		 * unexpected (500) errors with the request id.
		 */
		onError(this: any, req: GwRequest, res: ServerResponse, err: unknown): void {
			const ctx = req.$ctx;
			const requestId = ctx?.requestID ?? String(res.getHeader("x-request-id") ?? "");
			const path = requestPath(req);
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
			if (answer.status === 401) {
				res.setHeader("WWW-Authenticate", answer.body.code ? 'Bearer error="invalid_token"' : "Bearer");
			}
			const payload = JSON.stringify(answer.body);
			res.statusCode = answer.status;
			res.setHeader("Content-Type", "application/json; charset=utf-8");
			res.setHeader("Content-Length", Buffer.byteLength(payload));
			res.end(payload);
		},
	},

	actions: {
		/** Route management actions of moleculer-web are not exposed (routes are fixed). */
		addRoute: false,
		removeRoute: false,
		listAliases: false,

		/** Liveness (`GET /health`, no auth): 200 `{status:"ok"}` while the process serves HTTP. */
		health: {
			handler(): { status: "ok" } {
				return { status: "ok" };
			},
		},

		/**
		 * Readiness (`GET /ready`, no auth): 200 `{status:"ready", services:{<name>: true}}`
		 * when every service behind an alias of this deployment has an available
		 * endpoint in the registry (local or over NATS); else 503
		 * `{error:"not_ready", message, missing:[service…]}`.
		 */
		ready: {
			handler(this: any): { status: "ready"; services: Record<string, boolean> } {
				const services: Record<string, boolean> = {};
				const missing: string[] = [];
				for (const [svc, actions] of this.requiredActions as Map<string, string[]>) {
					const ok = actions.every(
						(a) => this.broker.registry.getActionEndpoints(a)?.hasAvailable() === true,
					);
					services[svc] = ok;
					if (!ok) missing.push(svc);
				}
				if (missing.length > 0) {
					throw new ApiError(503, {
						error: "not_ready",
						message: `Waiting for: ${missing.join(", ")}`,
						missing,
					});
				}
				return { status: "ready", services };
			},
		},
	},

	methods: {
		/**
		 * moleculer-web `authentication` hook of the /v1 route: returns the
		 * {@link AuthUser} of the verified bearer token (becomes `ctx.meta.user`).
		 * Throws 401 `{error:"Authentication required"}` (no / malformed header)
		 * or 401 `{error:"Invalid or expired token", code}` (§5.6).
		 */
		async authenticate(this: any, _ctx: Context, _route: unknown, req: GwRequest): Promise<AuthUser> {
			const token = bearerToken(req.headers.authorization);
			if (!this.verifyToken) throw invalidToken("jwks_unavailable");
			return this.verifyToken(token);
		},

		/**
		 * moleculer-web `authorization` hook: applies the target action's
		 * `access` rule (lib/auth.ts `checkAccess`) before the handler runs:
		 * 403 `Read-only role`, 403 `forbidden` with `cap`.
		 */
		authorize(ctx: Context<unknown, { user?: AuthUser }>, _route: unknown, req: GwRequest): void {
			checkAccess(ctx.meta.user, req.$action?.access);
		},

		/** Replaces moleculer-web's handler (which logs stacks of 5xx): everything goes to `onError`. */
		errorHandler(this: any, req: GwRequest, res: ServerResponse, err: unknown): void {
			this.sendError(req, res, err);
		},

		/**
		 * Only alias matches are handled; a URL matching no alias never runs a
		 * route's middlewares (no body parsing for unknown routes) and gets 404/405.
		 */
		routeHandler(
			this: any,
			ctx: Context,
			route: unknown,
			req: GwRequest,
			res: ServerResponse,
			found?: unknown,
		) {
			if (!found) return null;
			return Base.routeHandler.call(this, ctx, route, req, res, found);
		},

		/** Like moleculer-web's, but a request without a method (OPTIONS) matches no alias. */
		resolveAlias(this: any, url: string, method?: string) {
			if (typeof method !== "string") return false;
			return Base.resolveAlias.call(this, url, method);
		},

		/** Methods (e.g. `["GET","POST"]`) of the aliases matching `path`; empty for an unknown path. */
		allowedMethods(this: any, path: string): string[] {
			const out: string[] = [];
			for (const a of this.aliases as Array<{ method: string; re: RegExp }>) {
				if (a.re.test(path) && !out.includes(a.method)) out.push(a.method);
			}
			return out;
		},

		/**
		 * Not routed: 405 `method_not_allowed` (with `Allow`) when the path exists
		 * for other methods, 204 + `Allow` for OPTIONS, else 404 `not_found`.
		 */
		send404(this: any, req: GwRequest, res: ServerResponse): void {
			const path = requestPath(req);
			const allowed = this.allowedMethods(path) as string[];
			if (allowed.length > 0) {
				res.setHeader("Allow", allowed.join(", "));
				if (req.method === "OPTIONS") {
					res.statusCode = 204;
					res.end();
					return;
				}
				this.sendError(
					req,
					res,
					new GatewayError(405, "method_not_allowed", `Method ${req.method} is not allowed on ${path}`),
				);
				return;
			}
			this.sendError(req, res, new GatewayError(404, "not_found", "Route not found"));
		},

		/**
		 * moleculer-web's `sendResponse`, except that a 201 without
		 * `ctx.meta.$location` (our creates answer 201 with the id in the body,
		 * no Location, §4.1/§4.5) does not log a warning on every request.
		 */
		sendResponse(this: any, req: GwRequest, res: ServerResponse, data: unknown, action: unknown): void {
			const meta = req.$ctx?.meta;
			if (meta && meta.$statusCode === 201 && !meta.$location) {
				Base.sendResponse.call(this.quietSelf, req, res, data, action);
				return;
			}
			Base.sendResponse.call(this, req, res, data, action);
		},

		/** Query strings as flat string maps (lib/gateway/http.ts `parseQuery`) instead of `qs`. */
		parseQueryString(req: IncomingMessage): { query: Record<string, string>; url: string } {
			const url = req.url ?? "/";
			const i = url.indexOf("?", 1);
			if (i === -1) return { query: {}, url };
			return { query: parseQuery(url.slice(i + 1)), url: url.slice(0, i) };
		},

		/**
		 * Node HTTP handler: moleculer-web's, plus one access-log line when the
		 * answer is written. `OPTIONS` never resolves to an action.
		 */
		async httpHandler(this: any, req: GwRequest, res: ServerResponse, next?: unknown): Promise<void> {
			if (req.method === "OPTIONS") delete req.headers["access-control-request-method"];
			await Base.httpHandler.call(this, req, res, next);
			if (this.accessLog) this.logAccess(req, res);
		},

		/** Writes the access-log line of a request (stdout, JSON). */
		logAccess(this: any, req: GwRequest, res: ServerResponse): void {
			const d = process.hrtime(req.$startTime);
			const ctx = req.$ctx;
			process.stdout.write(
				accessLogLine({
					nodeID: this.broker.nodeID,
					ns: this.broker.namespace,
					method: req.method,
					path: requestPath(req),
					status: res.statusCode,
					ms: Math.round((d[0] * 1e3 + d[1] / 1e6) * 10) / 10,
					request_id: ctx?.requestID ?? undefined,
					sender_id: (ctx?.meta?.user as AuthUser | undefined)?.sender_id,
				}),
			);
		},
	},

	/**
	 * Reads the configuration (port, JWKS, dev IdP switch, log level), builds
	 * the cached token verifier (jose fetches keys lazily on first use) and
	 * mounts the routes.
	 */
	created(this: any) {
		const cfg = loadConfig();
		this.settings.port = cfg.port;
		const devIdp = process.env.MSA_DEV_IDP === "1";
		const loggerOpt = this.broker.options.logger;
		const level = typeof loggerOpt?.options?.level === "string" ? loggerOpt.options.level : cfg.logLevel;
		this.accessLog =
			loggerOpt !== false &&
			loggerOpt != null &&
			process.env.GATEWAY_ACCESS_LOG !== "0" &&
			LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf("info");
		this.verifyToken = cfg.authJwksUrl
			? cachedVerifier(
					createVerifier({ jwksUrl: cfg.authJwksUrl, issuer: cfg.authIssuer, audience: cfg.authAudience }),
				)
			: undefined;
		// `this` seen by sendResponse for 201s: same service, warn() silenced.
		this.quietSelf = Object.create(this, {
			logger: { value: { ...this.logger, warn: () => undefined } },
		});
		this.requiredActions = actionsByService(API_ALIASES, ...(devIdp ? [DEV_IDP_ALIASES] : []));

		this.addRoute({
			name: "probes",
			path: "/",
			aliases: PROBE_ALIASES,
			mappingPolicy: "restrict",
			bodyParsers: false,
			logging: false,
			// Probes must describe THIS gateway node, never another one.
			callOptions: { nodeID: this.broker.nodeID },
		});
		if (devIdp) {
			this.addRoute({
				name: "devauth",
				path: "/",
				aliases: DEV_IDP_ALIASES,
				mappingPolicy: "restrict",
				bodyParsers: { json: { limit: "64kb" }, urlencoded: { extended: false, limit: "64kb" } },
				logging: false,
			});
		}
		this.addRoute({
			name: "api",
			path: "/",
			aliases: API_ALIASES,
			mappingPolicy: "restrict",
			authentication: true,
			authorization: true,
			// The API is JSON only: any request body is parsed as JSON (a form body is 400 invalid_json).
			bodyParsers: { json: { limit: "1mb", type: () => true } },
			onBeforeCall: checkBody,
			logging: false,
		});
	},

	/** Refuses to run without an identity provider (ARCHITECTURE §2: never fall back to development keys). */
	started(this: any) {
		if (!this.verifyToken) {
			throw new Error("gateway: AUTH_JWKS_URL is required (no identity provider configured)");
		}
	},
} satisfies ServiceSchema<any, any, GatewayVars>;
