/**
 * OpenAPI descriptions of the API reference routes (DOCS_ALIASES: the
 * document and the reference page, issue 11) and of the probes
 * (PROBE_ALIASES). None of them takes a bearer token (lib/openapi/index.ts
 * sets `security: []` from the route tables). The development identity
 * provider (DEV_IDP_ALIASES, zero-setup only) is not part of the merchant
 * API and is not described (docs/decisions/0043-openapi-document.md).
 */
import { errors, json, pathParam } from "../../platform/openapi/components";
import type { AreaPaths, JsonSchema } from "../../platform/openapi/types";

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

/** Operations of the API reference and the probes, keyed by alias key. */
export const paths: AreaPaths = {
	"GET /v1/openapi.json": {
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
	"GET /docs": {
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
	"GET /docs/:file": {
		operationId: "openapi.asset",
		summary: "A script, stylesheet or icon of the reference page",
		parameters: [
			pathParam("file", "one of the page's files", { type: "string", enum: [...DOCS_FILE_NAMES] }),
		],
		responses: {
			"200": {
				description: "The file (cacheable for a day).",
				content: {
					"text/css": { schema: { type: "string" } },
					"text/javascript": { schema: { type: "string" } },
					"image/png": { schema: { type: "string", contentMediaType: "image/png" } as JsonSchema },
				},
			},
			...errors({ 404: "`not_found`: not a file of the page" }),
		},
	},
	"GET /health": {
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
	"GET /ready": {
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
};
