/**
 * The gateway's own routes, one definition each (issue 26;
 * lib/platform/openapi/route.ts, docs/ARCHITECTURE.md §9): the API reference
 * (kind `docs`: the OpenAPI document and the reference page, issue 11; the
 * "action" is a handler name of lib/openapi/serve.ts) and the probes (kind
 * `probe`). None takes a bearer token (the document builder sets
 * `security: []` from the kind).
 */
import { json } from "../../platform/openapi/components";
import { defineRoutes } from "../../platform/openapi/route";
import type { JsonSchema } from "../../platform/openapi/types";

/** Files of the reference page, served under /docs/ (lib/openapi/serve.ts `DOCS_FILES`). */
export const DOCS_FILE_NAMES = [
	"swagger-ui.css",
	"swagger-ui-bundle.js",
	"favicon-32x32.png",
	"favicon-16x16.png",
	"init.js",
	"docs.css",
] as const;

const documentSchema: JsonSchema = {
	type: "object",
	description: "An OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.0).",
	required: ["openapi", "info", "paths"],
	properties: {
		openapi: { type: "string", const: "3.1.0" },
		info: { type: "object" },
		paths: { type: "object" },
		webhooks: { type: "object" },
		components: { type: "object" },
	},
};

const text = (description: string, mediaType: string) => ({
	description,
	content: { [mediaType]: { schema: { type: "string" } as JsonSchema } },
});

/** The gateway's routes, keyed by handler (docs) or action (probes). */
export const GATEWAY_ROUTES = defineRoutes({
	"openapi.document": {
		route: "GET /v1/openapi.json",
		kind: "docs",
		tag: "reference",
		operationId: "openapi.document",
		summary: "The OpenAPI 3.1 document of this API",
		description:
			"This document: every `/v1` route, its parameters, bodies and every answer, the §2.11 error envelope and the `/v1/documents/*` exceptions, and the merchant webhooks. Built once when the gateway starts from the schemas the services validate with. No bearer token. Cacheable: `Cache-Control: public, max-age=300` and a strong `ETag`; `If-None-Match` with it answers 304.",
		responses: {
			"200": {
				description: "The document.",
				headers: {
					ETag: {
						required: true,
						description: "strong validator of the document",
						schema: { type: "string" },
					},
					"Cache-Control": { description: "`public, max-age=300`", schema: { type: "string" } },
				},
				content: { "application/json": { schema: documentSchema } },
			},
			"304": {
				description: "`If-None-Match` carries the current `ETag`: the cached copy is current.",
				headers: { ETag: { required: true, schema: { type: "string" } } },
			},
		},
	},
	"openapi.page": {
		route: "GET /docs",
		kind: "docs",
		tag: "reference",
		operationId: "openapi.page",
		summary: "The API reference page",
		description:
			"A browsable reference of this document (Swagger UI, served from the npm package: no CDN, works offline). No bearer token. `Content-Security-Policy` allows scripts, styles, fonts and fetches from this origin only, nothing inline, no eval (images also `data:`: the renderer's icons).",
		responses: {
			"200": {
				...text("The HTML page.", "text/html"),
				headers: {
					"Content-Security-Policy": {
						required: true,
						description: "`default-src 'self'`; …",
						schema: { type: "string" },
					},
				},
			},
		},
	},
	"openapi.asset": {
		route: "GET /docs/:file",
		kind: "docs",
		tag: "reference",
		operationId: "openapi.asset",
		summary: "A script, stylesheet or icon of the reference page",
		description: "A file the reference page loads (a fixed list; anything else is 404). No bearer token.",
		path: {
			file: {
				description: "one of the page's files",
				schema: { type: "string", enum: [...DOCS_FILE_NAMES] },
			},
		},
		responses: {
			"200": {
				description: "The file (cacheable for a day).",
				content: {
					"text/css": { schema: { type: "string" } },
					"text/javascript": { schema: { type: "string" } },
					"image/png": { schema: { type: "string", contentMediaType: "image/png" } as JsonSchema },
				},
			},
		},
		errors: [{ code: "not_found", when: "not a file of the page" }],
	},
	"gateway.health": {
		route: "GET /health",
		kind: "probe",
		tag: "reference",
		operationId: "gateway.health",
		summary: "Liveness probe",
		description:
			"200 while this gateway process serves HTTP (docs/ARCHITECTURE.md §3). No bearer token; never rate-limited.",
		responses: {
			"200": json("Alive.", {
				type: "object",
				required: ["status"],
				properties: { status: { type: "string", const: "ok" } },
				additionalProperties: false,
			}),
		},
	},
	"gateway.ready": {
		route: "GET /ready",
		kind: "probe",
		tag: "reference",
		operationId: "gateway.ready",
		summary: "Readiness probe",
		description:
			"200 when every service behind a route of this deployment has an available endpoint (local or over NATS); 503 otherwise. Answered by this gateway node. No bearer token; never rate-limited.",
		responses: {
			"200": json("Ready.", {
				type: "object",
				required: ["status", "services"],
				properties: {
					status: { type: "string", const: "ready" },
					services: {
						type: "object",
						description: "service name → reachable",
						additionalProperties: { type: "boolean" },
					},
				},
				additionalProperties: false,
			}),
			"503": json(
				"Not ready: `not_ready` with the services still missing (or `transporter`); while this node's NATS link is down the probe itself is answered `service_unavailable` (every call fails fast then, this one included).",
				{
					oneOf: [
						{
							type: "object",
							required: ["error", "message", "missing"],
							properties: {
								error: { type: "string", const: "not_ready" },
								message: { type: "string" },
								missing: { type: "array", items: { type: "string" } },
							},
							additionalProperties: false,
						},
						{
							type: "object",
							required: ["error", "message"],
							properties: {
								error: { type: "string", const: "service_unavailable" },
								message: { type: "string" },
							},
							additionalProperties: true,
						},
					],
				},
			),
		},
	},
});
