/**
 * The gateway's upload route (spec §4.1; issue 25;
 * docs/decisions/0073-bulk-parts-any-order.md): every route definition of
 * kind `upload` (lib/gateway/routes.ts `UPLOAD_ALIASES`: the bulk order upload
 * `POST /v1/intake/bulk`, a weight dispute `POST /v1/weight-discrepancies/:id/dispute`, …).
 * Each alias is a moleculer-web `stream` alias without body parser and with
 * `mergeParams: false`: the raw multipart body becomes the action's
 * `ctx.stream` (over NATS it crosses in chunks, never buffered by the gateway)
 * and the serving service parses it (lib/shared/multipart.ts
 * `readMultipartForm`), so the form's parts may come in any order.
 * moleculer-web's `multipart` alias is not used: it calls the action as soon
 * as the file part starts, with only the fields sent before it.
 */
import type { IncomingMessage } from "node:http";
import type { UploadParams } from "../contracts";

/** The request as moleculer-web decorates it on a `mergeParams: false` route. */
type UploadRequest = IncomingMessage & {
	/** `{body, query, params}` before this hook (`params`: the alias's path parameters); the action's params after it */
	$params?: unknown;
	/** the query string parsed by the gateway's `beginRequest` (flat strings) */
	query?: Record<string, string>;
};

/**
 * The alias's path parameters as flat strings: moleculer-web puts them, decoded,
 * in `req.$params.params` on a `mergeParams: false` route (a repeated
 * parameter is an array of segments: joined with "/"); a parameter absent
 * from the URL (optional) is left out.
 */
function pathParams($params: unknown): Record<string, string> {
	const matched = ($params as { params?: unknown } | null | undefined)?.params;
	if (matched == null || typeof matched !== "object") return {};
	const out: Array<[string, string]> = [];
	for (const [k, v] of Object.entries(matched)) {
		if (typeof v === "string") out.push([k, v]);
		else if (Array.isArray(v)) out.push([k, v.map(String).join("/")]);
	}
	return Object.fromEntries(out);
}

/**
 * `onBeforeCall` of the upload route: the action's params become
 * {@link UploadParams} `{query, content_type, path}`: the query string
 * (flat strings, as on every route), the request's `Content-Type` header (the
 * multipart boundary; "" when absent) and the alias's path parameters (flat
 * strings; `{}` when the path has none). Nothing of the body is read here, and
 * no query key can stand in for `content_type` or `path` (nor for a path
 * parameter): each comes from its own place only.
 */
export function uploadParams(_ctx: unknown, _route: unknown, req: UploadRequest): void {
	const params: UploadParams = {
		query: { ...(req.query ?? {}) },
		content_type: req.headers["content-type"] ?? "",
		path: pathParams(req.$params),
	};
	req.$params = params;
}
