/**
 * The OpenAPI 3.1 document of the merchant shipping API (issue 11), built
 * from the route definitions (lib/contracts/http/<service>.ts, one per route;
 * lib/openapi/operation.ts turns each into its operation;
 * docs/decisions/0093-route-definitions.md) and served by the gateway at
 * `GET /v1/openapi.json` (lib/openapi/serve.ts). Operations are grouped by
 * the tags of {@link TAGS}, in that order; a definition whose tag is not
 * listed there fails the build. test/unit/openapi/coverage.spec.ts fails
 * when a served route is not in the document.
 *
 * What the builder adds on top of the operations (so the definitions stay
 * about their own answers):
 * - alias paths → OpenAPI paths (`:id` → `{id}`, `template.:format` →
 *   `template.{format}`, `t{/:token}` → `t/{token}`);
 * - `security: []` on every route of an unauthenticated kind (courier
 *   webhooks, signed links, probes, the API reference); bearer routes
 *   inherit the document's default `bearer` requirement;
 * - the answers the gateway itself may give on any route of a kind
 *   ({@link GATEWAY_RESPONSES}) when the operation does not document that
 *   status: 401 and 429 on bearer routes, 429 on signed links, 400
 *   (`invalid_json` …), 413 and 415 on routes with a JSON body, 415 on the
 *   courier push route (raw body), 400 `validation_failed` of the edge text
 *   rule on every bearer /v1 route, 500 on every route, 503 on every route
 *   served by another service;
 * - on every bearer POST (issue 25, lib/gateway/idempotency.ts): the
 *   `Idempotency-Key` header parameter, the `Idempotent-Replayed` header on
 *   its answers, 409 `idempotency_key_in_use` and 422 `idempotency_key_reused`
 *   (merged into the operation's own 409 / 422 when it has one);
 * - on every rate-limited route (bearer routes, signed links): the
 *   `RateLimit-Policy` and `RateLimit` headers on its answers.
 */
import type { OpenAPIV3_1 } from "openapi-types";
import { ROUTES } from "../contracts/http";
import { WEBHOOK_EVENT_DOCS } from "../contracts/http/webhooks";
import { DOCUMENTS_PREFIX } from "../gateway/routes";
import {
	components,
	GATEWAY_RESPONSES,
	type GatewayResponse,
	headerRef,
	IDEMPOTENCY_KEY_PARAM,
	ref,
	responseRef,
} from "../platform/openapi/components";
import type { RouteDefinition, RouteKind } from "../platform/openapi/route";
import type { Operation } from "../platform/openapi/types";
import { operationOf } from "./operation";
/** A tag of the document: an area of the API (Swagger UI groups operations by it). */
export interface Tag {
	name: string;
	/** what the area covers (spec sections) */
	description: string;
}

/** Every tag, in the order the reference lists them. */
export const TAGS: readonly Tag[] = [
	{
		name: "intake",
		description:
			"Creating orders one by one and in bulk, the orders read side and the unshipped queue (spec §2.1–§2.5, §4.1, §4.3).",
	},
	{
		name: "shipping",
		description:
			"Pincodes, serviceability and rates, booking and cancelling, courier rankings, the wallet, tracking (spec §2.4, §2.6–§2.8, §4.2, §4.3, §4.7).",
	},
	{
		name: "documents",
		description:
			"Labels, signed label links and handover manifests (spec §4.4; the §7 `/v1/documents/*` error exceptions).",
	},
	{ name: "warehouses", description: "Pickup and return warehouses (spec §2.9, §4.5)." },
	{ name: "ndr", description: "Failed deliveries and the merchant's actions on them (spec §2.10, §4.6)." },
	{
		name: "webhooks",
		description: "Merchant webhook endpoints and their deliveries (Standard Webhooks; issue 11).",
	},
	{
		name: "buyer",
		description:
			"What your buyers see (ours; docs/decisions/0108-buyer-tracking-page.md): the branded tracking page behind a signed link, the AWB look-up, and your brand's settings.",
	},
	{
		name: "ops",
		description:
			"The operator's routes (`/v1/ops/*`, the ops token, not a merchant's): couriers' COD remittance files (ours; docs/decisions/0103-ops-routes.md).",
	},
	{
		name: "reference",
		description: "This document, the API reference page and the liveness/readiness probes.",
	},
];

/** HTTP methods an alias key may start with (lower-cased they key the path item). */
const METHODS = ["GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"] as const;
type Method = Lowercase<(typeof METHODS)[number]>;

/**
 * Converts a moleculer-web / path-to-regexp 8 alias path to an OpenAPI path:
 * `:name` → `{name}`, an optional segment `{/:name}` → `/{name}`.
 * e.g. `/v1/intake/bulk/template.:format` → `/v1/intake/bulk/template.{format}`,
 * `/v1/documents/label/t{/:token}` → `/v1/documents/label/t/{token}`.
 * @throws Error on wildcards (`*`) or other optional groups, which have no OpenAPI form.
 */
export function toOpenApiPath(aliasPath: string): string {
	const out = aliasPath
		.replace(/\{\/:([A-Za-z_][A-Za-z0-9_]*)\}/g, "/{$1}")
		.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");
	if (/[*]|\{[^}]*[^A-Za-z0-9_}][^}]*\}/.test(out))
		throw new Error(`no OpenAPI form for alias path ${aliasPath}`);
	return out;
}

/**
 * Splits an alias key (`"GET /v1/orders/:id"`) into its method (lower case)
 * and its OpenAPI path (`/v1/orders/{id}`).
 * @throws Error when the key does not start with an HTTP method and a path.
 */
export function parseAliasKey(key: string): { method: Method; path: string } {
	const m = /^([A-Z]+)\s+(\/\S*)$/.exec(key.trim());
	if (!m || !(METHODS as readonly string[]).includes(m[1])) throw new Error(`not an alias key: ${key}`);
	return { method: m[1].toLowerCase() as Method, path: toOpenApiPath(m[2]) };
}

/** What the gateway does on a route of a kind, for the answers it adds ({@link withGatewayResponses}). */
interface RouteTraits {
	bearer: boolean;
	/** the ops token (`/v1/ops/*`, docs/decisions/0103-ops-routes.md): 401 without it, no rate limit */
	ops: boolean;
	/** answered by the gateway itself (probes, the API reference): never 503 */
	ownHandler: boolean;
	/** the gateway parses a JSON body (400 invalid_json…, 413, 415) */
	jsonBody: boolean;
	/** the gateway reads a raw body (courier pushes: 415 for an unsupported Content-Encoding) */
	rawBody: boolean;
	/** the edge text rule applies to its params (400 validation_failed; lib/gateway/text-rule.ts) */
	textRule: boolean;
	/** rate-limited per client address (signed links, the buyer's pages) */
	linkLimited: boolean;
}

/** The traits of a route of kind `kind` reached by `method` (lib/gateway/route-options.ts builds each kind's route). */
function traitsOf(kind: RouteKind, method: string): RouteTraits {
	const api = kind === "api";
	const writes = method === "POST" || method === "PATCH" || method === "PUT";
	return {
		bearer: api || kind === "upload",
		ops: kind === "ops",
		ownHandler: kind === "probe" || kind === "docs",
		jsonBody: (api || kind === "ops") && writes,
		rawBody: kind === "courier_push",
		textRule: api,
		linkLimited: kind === "link" || kind === "page",
	};
}

/** A response of an operation (inline or a `$ref` to a shared one). */
type AnyResponse = OpenAPIV3_1.ResponseObject | OpenAPIV3_1.ReferenceObject;

/**
 * The operation's own 409 / 422 with the gateway's idempotency answer merged
 * in: the description says both, the JSON schema accepts either body.
 */
function mergeIdempotencyAnswer(own: AnyResponse, name: GatewayResponse): AnyResponse {
	if ("$ref" in own) return own;
	const gw = GATEWAY_RESPONSES[name] as OpenAPIV3_1.ResponseObject;
	const schema = own.content?.["application/json"]?.schema;
	return {
		...own,
		description: `${own.description} Also ${gw.description}`,
		...(name === "IdempotencyKeyInUse"
			? {
					headers: {
						...(own.headers ?? {}),
						"Retry-After": { description: "seconds to wait", schema: { type: "integer" } },
					},
				}
			: {}),
		content: {
			...(own.content ?? {}),
			"application/json": { schema: schema ? { anyOf: [schema, ref("Error")] } : ref("Error") },
		},
	};
}

/** `response` with `headers` added (a `$ref` response, shared by other routes, is left as it is). */
function withHeaders(
	response: AnyResponse,
	headers: Record<string, OpenAPIV3_1.ReferenceObject>,
): AnyResponse {
	if ("$ref" in response) return response;
	return { ...response, headers: { ...(response.headers ?? {}), ...headers } };
}

/** Adds the gateway's own answers the operation does not document itself (see the module comment). */
function withGatewayResponses(op: Operation, key: string, path: string, kind: RouteKind): Operation {
	const r = traitsOf(kind, key.slice(0, key.indexOf(" ")));
	const responses: Record<string, AnyResponse> = {
		...(op.responses ?? {}),
	};
	const add = (status: string, name: GatewayResponse) => {
		if (!(status in responses)) responses[status] = responseRef(name);
	};
	const idempotent = r.bearer && key.startsWith("POST ");
	const limited = r.bearer || r.linkLimited;
	const extraHeaders: Record<string, OpenAPIV3_1.ReferenceObject> = {};
	if (limited) {
		extraHeaders["RateLimit-Policy"] = headerRef("RateLimitPolicy");
		extraHeaders.RateLimit = headerRef("RateLimit");
	}
	if (idempotent) {
		extraHeaders["Idempotent-Replayed"] = headerRef("IdempotentReplayed");
		for (const [status, name] of [
			["409", "IdempotencyKeyInUse"],
			["422", "IdempotencyKeyReused"],
		] as const) {
			responses[status] =
				status in responses ? mergeIdempotencyAnswer(responses[status], name) : responseRef(name);
		}
	}
	if (limited || idempotent) {
		for (const [status, response] of Object.entries(responses))
			responses[status] = withHeaders(response, extraHeaders);
	}
	if (r.bearer) {
		add("401", "Unauthorized");
		add("429", "RateLimited");
	}
	if (r.ops) add("401", "Unauthorized");
	if (r.linkLimited) add("429", "RateLimited");
	if (r.jsonBody) {
		add("400", path.startsWith(DOCUMENTS_PREFIX) ? "InvalidBodyDocuments" : "InvalidBody");
		add("413", "PayloadTooLarge");
		add("415", "UnsupportedMediaType");
	}
	if (r.rawBody) add("415", "UnsupportedMediaType");
	// a query key can be sent to any route of the API: the edge text rule may refuse it
	if (r.textRule) add("400", path.startsWith(DOCUMENTS_PREFIX) ? "InvalidBodyDocuments" : "InvalidText");
	add("500", "InternalError");
	if (!r.ownHandler) add("503", "ServiceUnavailable");
	const out: Operation = { ...op, responses };
	if (idempotent) out.parameters = [...(op.parameters ?? []), IDEMPOTENCY_KEY_PARAM];
	if (r.bearer) delete out.security;
	else out.security = r.ops ? [{ opsToken: [] }] : [];
	return out;
}

/**
 * Builds the document from `routes` (default every definition; uncached: use {@link buildDocument}).
 * @throws Error when two routes have the same method and path, a tag is not in {@link TAGS}, or a route key is malformed.
 */
export function createDocument(
	routes: Readonly<Record<string, RouteDefinition>> = ROUTES,
	tags: readonly Tag[] = TAGS,
): OpenAPIV3_1.Document {
	const paths: Record<string, Partial<Record<Method, Operation>>> = {};
	const seen = new Map<string, string>();
	for (const [action, def] of Object.entries(routes)) {
		if (def.documented === false) continue;
		if (!tags.some((t) => t.name === def.tag)) throw new Error(`${def.route}: tag ${def.tag} is not in TAGS`);
		const { method, path } = parseAliasKey(def.route);
		const id = `${method} ${path}`;
		if (seen.has(id)) throw new Error(`${def.route} is defined twice (${seen.get(id)} and ${action})`);
		seen.set(id, action);
		const item = paths[path] ?? {};
		item[method] = withGatewayResponses(operationOf(action, def), def.route, path, def.kind ?? "api");
		paths[path] = item;
	}
	// openapi-types types a 3.1 path item as an intersection with the 3.0 one, which a 3.1
	// operation (3.1 schemas) does not satisfy; the shapes are the 3.1 ones
	const sorted: Record<string, Partial<Record<Method, Operation>>> = {};
	for (const p of Object.keys(paths).sort()) sorted[p] = paths[p];
	const webhooks = WEBHOOK_EVENT_DOCS;
	return {
		openapi: "3.1.0",
		jsonSchemaDialect: "https://spec.openapis.org/oas/3.1/dialect/base",
		info: {
			title: "Merchant Shipping API",
			version: "1.0.0",
			summary:
				"Indian parcel shipping for merchants: orders, rates, courier booking, labels, manifests, tracking, NDR.",
			description: [
				"Interface version 1.0.0 of the Merchant Shipping API specification (`merchant-shipping-api.md`).",
				"Sections cited in this document: §2 resources and their fields (§2.11 error envelope, §2.12 pagination envelope),",
				"§3 states and transitions, §4 endpoints (§4.1 create orders … §4.8 pagination rules), §5 authentication and roles,",
				"§6 events, §7 errors (and the `/v1/documents/*` exceptions), §8 limits, §9 versioning.",
				"",
				"Every request is authenticated with a bearer JWT (§5) except where an operation says `security: []`.",
				"Every response carries `X-Request-ID` (the request's id, echoed from a sane incoming one) and",
				"`X-Content-Type-Options: nosniff`. Units: weights in kg, dimensions in cm, money in rupees,",
				"dates as India Standard Time (IST) calendar days unless a field says otherwise, timestamps ISO-8601.",
				"",
				"Text: every string of the query, the path and a JSON body (values and keys, at any depth) must be Unicode text",
				"without control characters other than TAB, LF and CR, and without unpaired surrogates, and no key may name a",
				"property every JavaScript object inherits (`toString`, `valueOf`, `constructor`, `__proto__`, …); otherwise the gateway",
				'answers 400 `validation_failed` before anything else runs (`details`: `"comment: must not contain control characters"`).',
				"JSON bodies are UTF-8 (a `charset` other than `utf-8` is 415 `unsupported_media_type`); a body may be sent with",
				"`Content-Encoding` gzip, deflate, br or zstd (another encoding is 415; bytes that do not decode are 400 `invalid_body`).",
				"",
				"HEAD: every GET operation also answers HEAD (RFC 9110) with the GET's status and headers and no body.",
			].join("\n"),
		},
		servers: [{ url: "/", description: "this deployment" }],
		security: [{ bearer: [] }],
		tags: tags.map((t) => ({ name: t.name, description: t.description })),
		paths: sorted as OpenAPIV3_1.PathsObject,
		webhooks,
		components: { ...components, responses: { ...components.responses, ...GATEWAY_RESPONSES } },
	};
}

let cached: OpenAPIV3_1.Document | undefined;

/**
 * The OpenAPI 3.1 document (openapi "3.1.0", info.version "1.0.0" = interface
 * 1.0.0), built on first call and cached for the life of the process. Treat
 * it as read-only. See {@link createDocument}.
 */
export function buildDocument(): OpenAPIV3_1.Document {
	cached ??= createDocument();
	return cached;
}
