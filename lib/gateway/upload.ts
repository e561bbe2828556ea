/**
 * The gateway's bulk upload route (`POST /v1/intake/bulk`, spec §4.1; issue 25;
 * docs/decisions/0073-bulk-parts-any-order.md). The route is a
 * moleculer-web `stream` alias without body parser and with `mergeParams:
 * false`: the raw multipart body becomes the action's `ctx.stream` (over NATS
 * it crosses in chunks, never buffered by the gateway) and intake parses it
 * (lib/intake/bulk/multipart.ts), so the form's parts may come in any order.
 * moleculer-web's `multipart` alias is not used: it calls the action as soon
 * as the file part starts, with only the fields sent before it.
 */
import type { IncomingMessage } from "node:http";
import type { BulkUploadParams } from "../contracts";

/** The request as moleculer-web decorates it on a `mergeParams: false` route. */
type UploadRequest = IncomingMessage & {
	/** `{body, query, params}` before this hook; the action's params after it */
	$params?: unknown;
	/** the query string parsed by the gateway's `beginRequest` (flat strings) */
	query?: Record<string, string>;
};

/**
 * `onBeforeCall` of the upload route: the action's params become
 * {@link BulkUploadParams} `{query, content_type}`: the query string (flat
 * strings, as on every route) and the request's `Content-Type` header (the
 * multipart boundary; "" when absent). Nothing of the body is read here, and
 * no query key can stand in for `content_type`.
 */
export function uploadParams(_ctx: unknown, _route: unknown, req: UploadRequest): void {
	const params: BulkUploadParams = {
		query: { ...(req.query ?? {}) },
		content_type: req.headers["content-type"] ?? "",
	};
	req.$params = params;
}
