/**
 * HTTP handlers of the API reference (issue 11; routes `DOCS_ALIASES` of
 * lib/gateway/routes.ts, mounted by the gateway as function aliases of its
 * `docs` route, no bearer token):
 *
 * - `GET /v1/openapi.json`: the document of lib/openapi/index.ts, serialised
 *   once; `Cache-Control: public, max-age=300`, a strong `ETag`, 304 on a
 *   matching `If-None-Match`.
 * - `GET /docs`: an HTML page running Swagger UI (npm `swagger-ui-dist`) on
 *   that document. Everything it loads comes from this origin (no CDN: the
 *   page works offline); its `Content-Security-Policy` allows scripts,
 *   styles, fonts and fetches from 'self' only, no inline script or style,
 *   no eval; images also `data:` (Swagger UI's stylesheet draws its icons as
 *   data: SVGs). Checked in a headless Chromium: the page renders every
 *   operation and expands them with no CSP violation
 *   (docs/decisions/0043-openapi-document.md).
 * - `GET /docs/:file`: the page's files from a fixed list ({@link DOCS_FILES}),
 *   read from the package once; anything else is 404 `not_found`.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { dirname, join } from "node:path";
import type { DOCS_FILE_NAMES } from "../contracts/http/gateway";
import { gatewayFail } from "../gateway/errors";
import type { DOCS_ALIASES } from "../gateway/routes";
import { buildDocument } from "./index";

/** The page's Content-Security-Policy (see the module comment). */
export const DOCS_CSP = [
	"default-src 'self'",
	"script-src 'self'",
	"style-src 'self'",
	"img-src 'self' data:",
	"font-src 'self'",
	"connect-src 'self'",
	"object-src 'none'",
	"base-uri 'none'",
	"form-action 'none'",
	"frame-ancestors 'none'",
].join("; ");

/** Cache lifetime of the document (s). */
const DOCUMENT_MAX_AGE = 300;
/** Cache lifetime of the page's static files (s). */
const ASSET_MAX_AGE = 86_400;

/** The request as moleculer-web hands it to a function alias (path params in `$params`). */
export interface DocsRequest extends IncomingMessage {
	$params?: Record<string, unknown>;
}

/** A moleculer-web function alias: answers `res` itself, or calls `next(err)` for the gateway's error answer. */
export type DocsHandler = (req: DocsRequest, res: ServerResponse, next: (err?: unknown) => void) => void;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Merchant Shipping API 1.0.0 — reference</title>
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="/docs/favicon-16x16.png" sizes="16x16">
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="stylesheet" href="/docs/docs.css">
</head>
<body>
<noscript>This reference needs JavaScript. The document itself: <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

/** Runs Swagger UI on the document; no validator badge (it would call an outside service). */
const INIT_JS = `"use strict";
window.addEventListener("load", function () {
	window.ui = SwaggerUIBundle({
		url: "/v1/openapi.json",
		dom_id: "#swagger-ui",
		deepLinking: true,
		validatorUrl: null,
		presets: [SwaggerUIBundle.presets.apis],
		layout: "BaseLayout",
		docExpansion: "list",
		defaultModelsExpandDepth: 0,
		persistAuthorization: false,
	});
});
`;

const DOCS_CSS = "body { margin: 0; background: #fafafa; }\n";

/** One static file of the page. */
interface StaticFile {
	type: string;
	body: () => Buffer;
}

function packageFile(name: string, stripSourceMap = false): () => Buffer {
	let bytes: Buffer | undefined;
	return () => {
		if (!bytes) {
			const dir = dirname(require.resolve("swagger-ui-dist/package.json"));
			const raw = readFileSync(join(dir, name));
			// the source maps are not served: drop the pointer so browsers do not ask for them
			bytes = stripSourceMap
				? Buffer.from(raw.toString("utf8").replace(/\n\/[/*]# sourceMappingURL=\S+(\s*\*\/)?\s*$/, "\n"))
				: raw;
		}
		return bytes;
	};
}

/** The files under /docs/ (name → content type and bytes), the same list as the document's `DOCS_FILE_NAMES`. */
export const DOCS_FILES: Record<(typeof DOCS_FILE_NAMES)[number], StaticFile> = {
	"swagger-ui.css": { type: "text/css; charset=utf-8", body: packageFile("swagger-ui.css", true) },
	"swagger-ui-bundle.js": {
		type: "text/javascript; charset=utf-8",
		body: packageFile("swagger-ui-bundle.js", true),
	},
	"favicon-32x32.png": { type: "image/png", body: packageFile("favicon-32x32.png") },
	"favicon-16x16.png": { type: "image/png", body: packageFile("favicon-16x16.png") },
	"init.js": { type: "text/javascript; charset=utf-8", body: () => Buffer.from(INIT_JS) },
	"docs.css": { type: "text/css; charset=utf-8", body: () => Buffer.from(DOCS_CSS) },
};

function isDocsFile(name: string): name is (typeof DOCS_FILE_NAMES)[number] {
	return Object.hasOwn(DOCS_FILES, name);
}

let serialised: { body: Buffer; etag: string } | undefined;

/** The document as sent (serialised once) and its strong ETag. */
export function documentBytes(): { body: Buffer; etag: string } {
	if (!serialised) {
		const body = Buffer.from(JSON.stringify(buildDocument()));
		serialised = { body, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 32)}"` };
	}
	return serialised;
}

function send(
	res: ServerResponse,
	status: number,
	type: string,
	body: Buffer,
	headers: Record<string, string>,
): void {
	res.statusCode = status;
	for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
	res.setHeader("Content-Type", type);
	res.setHeader("Content-Length", body.length);
	res.end(body);
}

/** True when an `If-None-Match` header lists `etag` (or is `*`); weak and strong forms compare equal. */
export function matches(ifNoneMatch: string | undefined, etag: string): boolean {
	if (!ifNoneMatch) return false;
	return ifNoneMatch
		.split(",")
		.map((s) => s.trim().replace(/^W\//, ""))
		.some((s) => s === etag || s === "*");
}

/** `GET /v1/openapi.json`: the document, cacheable (see the module comment). */
const serveDocument: DocsHandler = (req, res) => {
	const { body, etag } = documentBytes();
	const cache = { "Cache-Control": `public, max-age=${DOCUMENT_MAX_AGE}`, ETag: etag };
	if (matches(req.headers["if-none-match"], etag)) {
		res.statusCode = 304;
		for (const [k, v] of Object.entries(cache)) res.setHeader(k, v);
		res.end();
		return;
	}
	send(res, 200, "application/json; charset=utf-8", body, cache);
};

/** `GET /docs`: the reference page. */
const servePage: DocsHandler = (_req, res) => {
	send(res, 200, "text/html; charset=utf-8", Buffer.from(PAGE), {
		"Content-Security-Policy": DOCS_CSP,
		"Cache-Control": "no-cache",
		"Referrer-Policy": "no-referrer",
	});
};

/** `GET /docs/:file`: one of {@link DOCS_FILES}; else `next(404 not_found)`. */
const serveAsset: DocsHandler = (req, res, next) => {
	const name = String(req.$params?.file ?? "");
	if (!isDocsFile(name)) {
		next(gatewayFail("not_found"));
		return;
	}
	const file = DOCS_FILES[name];
	send(res, 200, file.type, file.body(), { "Cache-Control": `public, max-age=${ASSET_MAX_AGE}` });
};

/** Handler of each `DOCS_ALIASES` value. */
export const DOCS_HANDLERS: Record<(typeof DOCS_ALIASES)[keyof typeof DOCS_ALIASES], DocsHandler> = {
	"openapi.document": serveDocument,
	"openapi.page": servePage,
	"openapi.asset": serveAsset,
};
