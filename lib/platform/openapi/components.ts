/**
 * Shared parts of the OpenAPI 3.1 document (issue 11): the §2.11 error
 * envelope, the §7 `/v1/documents/*` exceptions, the bearer security scheme,
 * and small builders every route definition (lib/contracts/http/*.ts) uses
 * so that responses look alike.
 */
import type { OpenAPIV3_1 } from "openapi-types";
import { CATALOGUE, type ErrorCode } from "../errors/catalogue";
import type { JsonSchema, Parameter, Response } from "./types";

/** `$ref` to a schema of {@link components}. */
export function ref(name: string): OpenAPIV3_1.ReferenceObject {
	return { $ref: `#/components/schemas/${name}` };
}

/** `$ref` to a header of {@link components}. */
export function headerRef(
	name: "IdempotentReplayed" | "RateLimit" | "RateLimitPolicy",
): OpenAPIV3_1.ReferenceObject {
	return { $ref: `#/components/headers/${name}` };
}

/** `$ref` to the `Idempotency-Key` parameter (lib/openapi/index.ts adds it to every bearer POST). */
export const IDEMPOTENCY_KEY_PARAM: OpenAPIV3_1.ReferenceObject = {
	$ref: "#/components/parameters/IdempotencyKey",
};

/** Reusable components: schemas, the bearer security scheme, the idempotency and rate-limit headers. */
export const components: OpenAPIV3_1.ComponentsObject = {
	parameters: {
		IdempotencyKey: {
			name: "Idempotency-Key",
			in: "header",
			required: false,
			description: [
				"Makes this POST safe to retry (Stripe's semantics; docs/decisions/0074-idempotency-keys.md): 1 to 255 printable ASCII",
				"characters (else 400 `invalid_idempotency_key`), e.g. a UUID per logical operation. The first answer (status,",
				"headers such as `Content-Type`, `Location`, `x-manifest-no`, and body, PDFs included) is stored per account",
				"(the token's `sender_id`) and key for 24 hours, and a retry with the same key gets it back byte for byte with",
				"`Idempotent-Replayed: true`, without running again. Stored too: a 4xx or 500 the request caused. Not stored",
				"(the key is released, a retry runs again): answers carrying `Retry-After` (429, 503, a 409 asking to retry",
				"shortly) and bodies over 8 MiB. The same key with another method, path, query or body: 422",
				"`idempotency_key_reused`. While the first request with a key is still running: 409 `idempotency_key_in_use`",
				"with `Retry-After: 1` (after 90 s without an answer the key is taken over and the request runs again). On the",
				"bulk upload (multipart) only the method, path and query are compared, not the file. Ignored on other methods.",
			].join(" "),
			schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7e]+$" },
		},
	},
	headers: {
		IdempotentReplayed: header(
			"`true` when this answer is the stored answer of an earlier request with the same `Idempotency-Key` (nothing ran again); absent otherwise.",
			{ type: "string", const: "true" },
		),
		RateLimitPolicy: header(
			'The limit counted against (draft-ietf-httpapi-ratelimit-headers, structured field): `"account";q=<RATE_LIMIT_ACCOUNT_PER_MIN>;w=60` on bearer routes, `"address";q=<RATE_LIMIT_LINK_PER_MIN>;w=60` on signed links (quota `q` requests per window of `w` seconds). On every answer counted against the limit (not on 401s, nor on bodies refused before the token is read).',
			{ type: "string", examples: ['"account";q=3000;w=60'] },
		),
		RateLimit: header(
			'What is left of the limit (draft-ietf-httpapi-ratelimit-headers): `"<policy>";r=<requests left in this window>;t=<seconds until the window ends>`; `r=0` on a 429.',
			{ type: "string", examples: ['"account";r=2999;t=42'] },
		),
	},
	securitySchemes: {
		bearer: {
			type: "http",
			scheme: "bearer",
			bearerFormat: "JWT",
			description:
				"RS256 JWT from the identity provider (spec §5): `sender_id` (the merchant account) and `role` claims.",
		},
		opsToken: {
			type: "http",
			scheme: "bearer",
			description:
				"The operator's token `OPS_API_TOKEN` (ours, docs/decisions/0103-ops-routes.md): the `/v1/ops/*` routes only; a merchant's JWT is refused there.",
		},
	},
	schemas: {
		Error: {
			type: "object",
			description:
				"Error envelope (spec §2.11, §7): `error` is the stable machine code clients match on; `message` is human text that may change; `details` lists one entry per failing field when a validator rejected the body.",
			required: ["error", "message"],
			properties: {
				error: { type: "string", description: "stable machine code (spec §7)" },
				message: { type: "string", description: "human-readable text; may change" },
				details: { type: "array", items: { type: "string" }, description: "one entry per failing field" },
			},
			additionalProperties: true,
		},
		DocumentsError: {
			type: "object",
			description: "`/v1/documents/*` 400 and 404 answers (spec §7 exception): `{message}`, no `error` key.",
			required: ["message"],
			properties: { message: { type: "string" } },
			additionalProperties: true,
		},
		AuthError: {
			type: "object",
			description:
				'401 answer (spec §5.6): `{error:"Authentication required"}` (no or malformed bearer token) or `{error:"Invalid or expired token", code}` (codes: token_expired, token_invalid, token_claims, account_missing, role_unknown, jwks_unavailable). No `message`.',
			required: ["error"],
			properties: {
				error: { type: "string", enum: ["Authentication required", "Invalid or expired token"] },
				code: { type: "string", description: "why the token was refused" },
			},
			additionalProperties: false,
		},
		InternalError: {
			type: "object",
			description:
				'500 answer (spec §2.11, §7): `{error:"internal_error", message:"Internal error", request_id}`; quote `request_id` (also the `X-Request-ID` response header) when reporting it. Never a stack trace.',
			required: ["error", "message"],
			properties: {
				error: { type: "string", const: "internal_error" },
				message: { type: "string" },
				request_id: { type: "string", description: "the request's id (`X-Request-ID`)" },
			},
			additionalProperties: true,
		},
		DocumentsConflict: {
			type: "object",
			description: "`/v1/documents/*` 409 answers (spec §7 exception): `{code, message}`.",
			required: ["code", "message"],
			properties: { code: { type: "string" }, message: { type: "string" } },
			additionalProperties: true,
		},
	},
};

/**
 * "`<code>`: <description>" of a catalogued error (lib/platform/errors/catalogue.ts),
 * the form every error response text uses; `description` replaces the
 * catalogue's one-line text when a route says more.
 */
export function documented(code: ErrorCode, description: string = CATALOGUE[code].description): string {
	return `\`${code}\`: ${description}`;
}

/**
 * §2.11 error responses of catalogued codes, keyed by each code's catalogue
 * status (codes of one status joined with "; "), e.g.
 * `documentedErrors(["webhook_disabled", "webhook_not_found"])`.
 */
export function documentedErrors(codes: readonly ErrorCode[]): Record<string, Response> {
	const byStatus: Record<number, string[]> = {};
	for (const code of codes) {
		const status = CATALOGUE[code].status;
		byStatus[status] = [...(byStatus[status] ?? []), documented(code)];
	}
	return errors(Object.fromEntries(Object.entries(byStatus).map(([s, texts]) => [s, texts.join("; ")])));
}

/** `$ref` to a response of {@link components} (`GATEWAY_RESPONSES`). */
export function responseRef(name: GatewayResponse): OpenAPIV3_1.ReferenceObject {
	return { $ref: `#/components/responses/${name}` };
}

/**
 * Answers the gateway itself gives on any route of a kind (services/gateway.service.ts
 * "Error mapping", lib/gateway/errors.ts): lib/openapi/index.ts adds them to every
 * operation that does not document that status itself (see
 * docs/decisions/0043-openapi-document.md).
 */
export const GATEWAY_RESPONSES = {
	InvalidBody: json(
		"The request body could not be used (spec §2.11, §7): `invalid_json` (malformed JSON, or not a JSON object), `body_too_deep` (objects/arrays nested deeper than 32 levels, refused before parsing), `ambiguous_parameter` (a key given both in the query string and in the body), `invalid_body` (unreadable, or bytes that do not decode with the declared `Content-Encoding`), `bad_request` (undecodable path parameter), `validation_failed` (a string with a control character other than TAB/LF/CR or an unpaired surrogate, in the body, query or path: `details` names each field, e.g. `comment: must not contain control characters`).",
		ref("Error"),
	),
	InvalidText: json(
		"`validation_failed` (the gateway's edge text rule, before anything else runs): a query value or key, a path parameter or a body string contains a control character other than TAB, LF and CR, or an unpaired surrogate; `details` names each field (`order_no: must not contain control characters`, `parameter names: must not contain control characters`). Also `bad_request` (undecodable path parameter).",
		ref("Error"),
	),
	InvalidBodyDocuments: json(
		"The request body or a path parameter could not be used (malformed JSON, nested deeper than 32 levels, a key in both the query and the body, a body that does not decode with its `Content-Encoding`, undecodable path parameter, a string with a control character other than TAB/LF/CR or an unpaired surrogate); under /v1/documents/ the gateway answers `{message}` (spec §7 exception).",
		ref("DocumentsError"),
	),
	Unauthorized: {
		description:
			'Missing, malformed, expired or invalid bearer token (spec §5.6): `{error:"Authentication required"}` or `{error:"Invalid or expired token", code}`; carries `WWW-Authenticate: Bearer`.',
		headers: {
			"WWW-Authenticate": {
				description: '`Bearer` or `Bearer error="invalid_token"`',
				schema: { type: "string" },
			},
		},
		content: { "application/json": { schema: ref("AuthError") } },
	},
	PayloadTooLarge: json(documented("payload_too_large"), ref("Error")),
	UnsupportedMediaType: json(documented("unsupported_media_type"), ref("Error")),
	RateLimited: {
		description:
			"`rate_limited` (docs/decisions/0036-rate-limits.md): over the per-account limit of bearer routes, or the per-address limit of signed links; retry after `Retry-After` seconds.",
		headers: {
			"Retry-After": {
				required: true,
				description: "seconds to wait",
				schema: { type: "integer", minimum: 0 },
			},
			"RateLimit-Policy": headerRef("RateLimitPolicy"),
			RateLimit: headerRef("RateLimit"),
		},
		content: { "application/json": { schema: ref("Error") } },
	},
	InternalError: json("Unexpected server error (logged with the request id).", ref("InternalError")),
	ServiceUnavailable: {
		description: documented("service_unavailable"),
		headers: {
			"Retry-After": {
				description: "seconds to wait before retrying",
				schema: { type: "integer", minimum: 0 },
			},
		},
		content: { "application/json": { schema: ref("Error") } },
	},
	IdempotencyKeyInUse: {
		description: documented("idempotency_key_in_use"),
		headers: {
			"Retry-After": {
				required: true,
				description: "seconds to wait (1)",
				schema: { type: "integer", minimum: 0 },
			},
		},
		content: { "application/json": { schema: ref("Error") } },
	},
	IdempotencyKeyReused: json(documented("idempotency_key_reused"), ref("Error")),
	RouteNotFound: json(
		'`not_found` "Route not found": no route has this path; paths match exactly (case-sensitive, no trailing slash; `{message}` under /v1/documents/).',
		ref("Error"),
	),
	MethodNotAllowed: {
		description: documented("method_not_allowed"),
		headers: { Allow: { required: true, schema: { type: "string" } } },
		content: { "application/json": { schema: ref("Error") } },
	},
} satisfies Record<string, Response>;

/** Name of a response of {@link GATEWAY_RESPONSES}. */
export type GatewayResponse = keyof typeof GATEWAY_RESPONSES;

/** A JSON (`application/json`) response with `schema`. */
export function json(description: string, schema: JsonSchema | OpenAPIV3_1.ReferenceObject): Response {
	return { description, content: { "application/json": { schema } } };
}

/**
 * A 200 CSV attachment (our exports: bulk rows, payouts): `Content-Disposition`
 * naming the file (`fileName`, written as the header's value pattern) and a
 * UTF-8 body with a byte-order mark and CRLF lines, `record` saying what one
 * record after the header row is.
 */
export function csvAttachment(description: string, fileName: string, record: string): Response {
	return {
		description,
		headers: {
			"Content-Disposition": {
				description: `\`attachment; filename="${fileName}"\``,
				schema: { type: "string" },
			},
		},
		content: {
			"text/csv": {
				schema: {
					type: "string",
					contentMediaType: "text/csv",
					description: `UTF-8 with a byte-order mark, CRLF lines; the header row, then one record per ${record}.`,
				},
			},
		},
	};
}

/**
 * Error responses in the §2.11 envelope, e.g. `errors({400: "validation_failed: …", 404: "order not found"})`:
 * the text says which `error` codes the status carries and when.
 */
export function errors(byStatus: Record<number, string>): Record<string, Response> {
	const out: Record<string, Response> = {};
	for (const [status, description] of Object.entries(byStatus)) out[status] = json(description, ref("Error"));
	return out;
}

/** The 401/403 answers every bearer route shares (spec §5, §7). */
export const authErrors: Record<string, Response> = {
	"401": json(
		'missing, expired or invalid bearer token (spec §5.6): `{error:"Authentication required"}` or `{error:"Invalid or expired token", code}`',
		ref("AuthError"),
	),
	...errors({
		403: "the token's role may not do this (read-only roles on writes: `Read-only role`; `forbidden` with `cap`)",
	}),
};

/** openapi-types types a 3.1 parameter's schema with the 3.0 schema type; the shapes are the same here. */
function asParamSchema(schema: JsonSchema): Parameter["schema"] {
	return schema as Parameter["schema"];
}

/**
 * A response header object (`required` when the answer always carries it);
 * openapi-types types a 3.1 header's schema with the 3.0 schema type, hence the cast.
 */
export function header(
	description: string,
	schema: JsonSchema = { type: "string" },
	required = false,
): OpenAPIV3_1.HeaderObject {
	return { description, required, schema: schema as OpenAPIV3_1.HeaderObject["schema"] };
}

/**
 * Schema of a path id the spec types as an integer (spec §4 tables: `orderId`,
 * order, job, warehouse and NDR `id`; ours too: webhook endpoint, sandbox scan
 * `order_id`): a positive integer, at most 2^53 − 1.
 * On the wire it is the decimal digits (no sign, no leading zero); a generated
 * client passes the `order_id` (number) it was given as it is.
 */
export const ID_PATH_SCHEMA: JsonSchema = { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER };

/** A path parameter. */
export function pathParam(
	name: string,
	description: string,
	schema: JsonSchema = { type: "string" },
): Parameter {
	return { name, in: "path", required: true, description, schema: asParamSchema(schema) };
}

/** A query parameter (optional unless `required`). */
export function queryParam(
	name: string,
	description: string,
	schema: JsonSchema = { type: "string" },
	required = false,
): Parameter {
	return { name, in: "query", required, description, schema: asParamSchema(schema) };
}
