/**
 * The OpenAPI 3.1 document (lib/openapi/index.ts, issue 11): valid against the
 * OpenAPI 3.1 schema (@seriousme/openapi-schema-validator), every `$ref`
 * resolves, every templated path parameter is declared, security follows the
 * route tables; and its serving: `GET /v1/openapi.json` (no auth, cacheable,
 * ETag/304) and `GET /docs` (no auth, Swagger UI from the package, CSP 'self',
 * no outside URL) on a real gateway.
 */
import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import type { OpenAPIV3_1 } from "openapi-types";
import { ROUTES } from "../../../lib/contracts/http";
import {
	LINK_ALIASES,
	OPS_ALIASES,
	PAGE_ALIASES,
	PROBE_ALIASES,
	WEBHOOK_ALIASES,
} from "../../../lib/gateway/routes";
import {
	buildDocument,
	createDocument,
	parseAliasKey,
	TAGS,
	toOpenApiPath,
} from "../../../lib/openapi/index";
import { operationOf } from "../../../lib/openapi/operation";
import { DOCS_CSP } from "../../../lib/openapi/serve";
import { useGateway } from "../gateway/setup";

type Op = OpenAPIV3_1.OperationObject;

/** Every operation of the document with its path and method. */
function operations(doc: OpenAPIV3_1.Document): Array<{ path: string; method: string; op: Op }> {
	const out: Array<{ path: string; method: string; op: Op }> = [];
	for (const [path, item] of Object.entries(doc.paths ?? {})) {
		for (const [method, op] of Object.entries(item ?? {})) {
			if (["get", "put", "post", "delete", "patch", "options", "head", "trace"].includes(method))
				out.push({ path, method, op: op as Op });
		}
	}
	return out;
}

/** Every `$ref` string in a value. */
function refs(v: unknown, out: string[] = []): string[] {
	if (Array.isArray(v)) for (const x of v) refs(x, out);
	else if (v && typeof v === "object") {
		for (const [k, x] of Object.entries(v)) {
			if (k === "$ref" && typeof x === "string") out.push(x);
			else refs(x, out);
		}
	}
	return out;
}

/** The value a local `#/…` JSON pointer points at, or undefined. */
function resolvePointer(doc: unknown, ref: string): unknown {
	if (!ref.startsWith("#/")) return undefined;
	let cur: unknown = doc;
	for (const raw of ref.slice(2).split("/")) {
		const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
		if (!cur || typeof cur !== "object" || !(key in cur)) return undefined;
		cur = (cur as Record<string, unknown>)[key];
	}
	return cur;
}

describe("openapi: the document", () => {
	const doc = buildDocument();

	it("validates against the OpenAPI 3.1 schema", async () => {
		const v = new Validator();
		const res = await v.validate(structuredClone(doc) as unknown as Record<string, unknown>);
		assert.equal(res.valid, true, JSON.stringify(res.errors, null, 1));
		assert.equal(v.version, "3.1");
	});

	it("the validator rejects a broken document (the check can fail)", async () => {
		const broken = structuredClone(doc) as unknown as {
			paths: Record<string, Record<string, { responses: unknown }>>;
		};
		broken.paths["/health"].get.responses = { "200": { content: "not an object" } };
		assert.equal((await new Validator().validate(broken)).valid, false);
		const dangling = structuredClone(doc) as unknown as Record<string, unknown>;
		(dangling.paths as Record<string, unknown>)["/x"] = {
			get: { responses: { "200": { $ref: "#/components/responses/Nope" } } },
		};
		assert.equal((await new Validator().validate(dangling)).valid, false);
	});

	it("every $ref resolves", () => {
		const all = refs(doc);
		assert.ok(all.length > 0);
		const dangling = [...new Set(all)].filter((r) => resolvePointer(doc, r) === undefined);
		assert.deepEqual(dangling, []);
	});

	it("is openapi 3.1.0, interface version 1.0.0, bearer by default, served from /", () => {
		assert.equal(doc.openapi, "3.1.0");
		assert.equal(doc.info.version, "1.0.0");
		assert.match(String(doc.info.description), /§2\.11/);
		assert.deepEqual(doc.security, [{ bearer: [] }]);
		assert.deepEqual(doc.servers, [{ url: "/", description: "this deployment" }]);
		assert.ok(doc.components?.securitySchemes?.bearer);
	});

	it("every templated path parameter is declared (in: path, required), and no undeclared one", () => {
		const problems: string[] = [];
		for (const { path, method, op } of operations(doc)) {
			const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
			const declared = (op.parameters ?? [])
				.filter((p): p is OpenAPIV3_1.ParameterObject => !("$ref" in p) && p.in === "path")
				.map((p) => {
					if (p.required !== true) problems.push(`${method} ${path}: path parameter ${p.name} not required`);
					return p.name;
				})
				.sort();
			if (JSON.stringify(inPath) !== JSON.stringify(declared))
				problems.push(
					`${method.toUpperCase()} ${path}: path has {${inPath}}, parameters declare {${declared}}`,
				);
		}
		assert.deepEqual(problems, []);
	});

	it("operation ids are unique, and every operation documents a 2XX/3XX answer", () => {
		const ids = operations(doc).map((o) => o.op.operationId);
		assert.deepEqual(
			ids.filter((id, i) => id === undefined || ids.indexOf(id) !== i),
			[],
		);
		for (const { path, method, op } of operations(doc)) {
			assert.ok(
				Object.keys(op.responses ?? {}).some((s) => /^[23]/.test(s)),
				`${method} ${path} has no success answer`,
			);
		}
	});

	it("routes without a bearer token have security: [], ops routes the ops token and 401, bearer routes inherit it and answer 401/429", () => {
		const open = [
			...Object.keys(WEBHOOK_ALIASES),
			...Object.keys(LINK_ALIASES),
			...Object.keys(PAGE_ALIASES),
			...Object.keys(PROBE_ALIASES),
		];
		open.push("GET /v1/openapi.json", "GET /docs", "GET /docs/:file");
		const openOps = new Set(
			open.map((k) => {
				const { method, path } = parseAliasKey(k);
				return `${method} ${path}`;
			}),
		);
		const opsOps = new Set(
			Object.keys(OPS_ALIASES).map((k) => {
				const { method, path } = parseAliasKey(k);
				return `${method} ${path}`;
			}),
		);
		assert.ok(opsOps.size > 0, "the ops routes are documented");
		for (const { path, method, op } of operations(doc)) {
			if (openOps.has(`${method} ${path}`)) assert.deepEqual(op.security, [], `${method} ${path}`);
			else if (opsOps.has(`${method} ${path}`)) {
				assert.deepEqual(op.security, [{ opsToken: [] }], `${method} ${path}`);
				assert.ok(op.responses?.["401"], `${method} ${path}: 401`);
				assert.equal(op.responses?.["429"], undefined, `${method} ${path}: no merchant rate limit`);
			} else {
				assert.equal(op.security, undefined, `${method} ${path} must inherit the bearer requirement`);
				assert.ok(op.responses?.["401"] && op.responses["429"], `${method} ${path}: 401 and 429`);
			}
			assert.ok(op.responses?.["500"], `${method} ${path}: 500`);
		}
	});

	it("converts alias paths: :id, template.:format and the optional link token", () => {
		assert.equal(toOpenApiPath("/v1/orders/:id"), "/v1/orders/{id}");
		assert.equal(toOpenApiPath("/v1/intake/bulk/template.:format"), "/v1/intake/bulk/template.{format}");
		assert.equal(toOpenApiPath("/v1/documents/label/t{/:token}"), "/v1/documents/label/t/{token}");
		assert.equal(
			toOpenApiPath("/v1/intake/jobs/:id/review/:row/:decision"),
			"/v1/intake/jobs/{id}/review/{row}/{decision}",
		);
		assert.throws(() => toOpenApiPath("/v1/files/*rest"), /no OpenAPI form/);
		assert.throws(() => parseAliasKey("FETCH /v1/x"), /not an alias key/);
	});

	it("refuses an operation described twice, and keeps the gateway answers an operation documents itself", () => {
		const op = { responses: { "200": { description: "ok" } } };
		const def = {
			route: "GET /v1/x/:id",
			tag: "a",
			description: "x",
			path: { id: { description: "id" } },
			...op,
		};
		assert.throws(
			() => createDocument({ "x.one": def, "x.two": def }, [{ name: "a", description: "" }]),
			/defined twice/,
		);
		assert.throws(() => createDocument({ "x.one": def }, [{ name: "b", description: "" }]), /not in TAGS/);
		// a defined route (POST /v1/shipping/book documents its own 503 `rate_unavailable`)
		const own = operationOf("booking.book", ROUTES["booking.book"]).responses?.["503"];
		assert.ok(own && !("$ref" in own));
		const built = createDocument().paths?.["/v1/shipping/book"]?.post;
		// its own 503, with the headers every answer of a limited, idempotent POST carries (issue 25)
		assert.deepEqual(built?.responses?.["503"], {
			...own,
			headers: {
				"RateLimit-Policy": { $ref: "#/components/headers/RateLimitPolicy" },
				RateLimit: { $ref: "#/components/headers/RateLimit" },
				"Idempotent-Replayed": { $ref: "#/components/headers/IdempotentReplayed" },
			},
		});
		assert.deepEqual(built?.responses?.["413"], { $ref: "#/components/responses/PayloadTooLarge" });
		assert.deepEqual(built?.tags, ["shipping"]);
		assert.equal(built?.operationId, "booking_book");
	});

	it("every bearer POST takes Idempotency-Key and documents 409 / 422; every limited route the RateLimit headers (issue 25)", () => {
		const d = createDocument();
		const doc = d as unknown as {
			paths: Record<string, Record<string, { parameters?: unknown[]; responses: Record<string, any> }>>;
			components: Record<string, Record<string, any>>;
		};
		let posts = 0;
		for (const [path, item] of Object.entries(doc.paths)) {
			for (const [method, op] of Object.entries(item)) {
				// a merchant's bearer route inherits the document's security (the ops token is not idempotency-keyed)
				const bearer = !("security" in op);
				const keyed = (op.parameters ?? []).some(
					(p) => (p as { $ref?: string }).$ref === "#/components/parameters/IdempotencyKey",
				);
				assert.equal(keyed, method === "post" && bearer, `${method} ${path}: Idempotency-Key parameter`);
				if (!keyed) continue;
				posts++;
				for (const status of ["409", "422"]) {
					const r = op.responses[status];
					const text = r.$ref
						? doc.components.responses[r.$ref.split("/").pop()].description
						: (r.description as string);
					assert.match(
						text,
						status === "409" ? /idempotency_key_in_use/ : /idempotency_key_reused/,
						`${path} ${status}`,
					);
				}
				const ok = Object.entries(op.responses).find(([s]) => s.startsWith("2"))?.[1];
				assert.ok(ok?.headers?.["Idempotent-Replayed"], `${path}: Idempotent-Replayed on its success`);
				assert.ok(ok?.headers?.RateLimit && ok?.headers?.["RateLimit-Policy"], `${path}: RateLimit headers`);
			}
		}
		assert.ok(posts >= 15, `${posts} bearer POST operations`);
		const link = doc.paths["/v1/documents/label/t/{token}"].get.responses["200"];
		assert.ok(link.headers.RateLimit, "the signed link's answer documents RateLimit");
		assert.ok(doc.components.responses.RateLimited.headers.RateLimit, "429 documents RateLimit");
		assert.equal(doc.components.parameters.IdempotencyKey.in, "header");
	});

	it("TAGS names are unique", () => {
		const tags = TAGS.map((t) => t.name);
		assert.equal(new Set(tags).size, tags.length);
	});

	describe("served by the gateway", () => {
		const g = useGateway();

		it("GET /v1/openapi.json: no auth, JSON, cacheable with an ETag, 304 on If-None-Match", async () => {
			const res = await fetch(`${g.base}/v1/openapi.json`);
			assert.equal(res.status, 200);
			assert.match(String(res.headers.get("content-type")), /^application\/json/);
			assert.equal(res.headers.get("cache-control"), "public, max-age=300");
			const etag = res.headers.get("etag");
			assert.match(String(etag), /^"[A-Za-z0-9_-]+"$/);
			assert.deepEqual(await res.json(), JSON.parse(JSON.stringify(buildDocument())));
			const again = await fetch(`${g.base}/v1/openapi.json`, { headers: { "if-none-match": String(etag) } });
			assert.equal(again.status, 304);
			assert.equal(await again.text(), "");
			const other = await fetch(`${g.base}/v1/openapi.json`, { headers: { "if-none-match": '"other"' } });
			assert.equal(other.status, 200);
			await other.arrayBuffer();
		});

		it("GET /docs: an HTML page with a 'self'-only CSP that loads only same-origin files", async () => {
			const res = await fetch(`${g.base}/docs`);
			assert.equal(res.status, 200);
			assert.match(String(res.headers.get("content-type")), /^text\/html/);
			assert.equal(res.headers.get("content-security-policy"), DOCS_CSP);
			assert.match(DOCS_CSP, /default-src 'self'/);
			assert.match(DOCS_CSP, /script-src 'self'(;|$)/);
			assert.match(DOCS_CSP, /style-src 'self'(;|$)/);
			assert.doesNotMatch(DOCS_CSP, /https?:|unsafe-/);
			const html = await res.text();
			assert.doesNotMatch(html, /https?:\/\//, "no outside URL in the page");
			assert.doesNotMatch(html, /<script>(?!<\/script>)|<script[^>]*>[^<]+<\/script>/, "no inline script");
			assert.doesNotMatch(html, /<style|\sstyle="/, "no inline style");
			const srcs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
			assert.ok(srcs.includes("/docs/swagger-ui-bundle.js") && srcs.includes("/docs/init.js"));
			for (const src of srcs) {
				assert.match(src, /^\/(docs\/|v1\/openapi\.json$)/, src);
				const a = await fetch(`${g.base}${src}`);
				assert.equal(a.status, 200, src);
				await a.arrayBuffer();
			}
		});

		it("GET /docs/:file serves the package's files (JS, CSS) and the initializer points at the document", async () => {
			const js = await fetch(`${g.base}/docs/swagger-ui-bundle.js`);
			assert.equal(js.status, 200);
			assert.match(String(js.headers.get("content-type")), /^text\/javascript/);
			assert.match(String(js.headers.get("cache-control")), /public/);
			const body = await js.text();
			assert.ok(body.length > 100_000);
			assert.doesNotMatch(body.slice(-300), /sourceMappingURL/);
			const css = await fetch(`${g.base}/docs/swagger-ui.css`);
			assert.match(String(css.headers.get("content-type")), /^text\/css/);
			await css.arrayBuffer();
			const init = await (await fetch(`${g.base}/docs/init.js`)).text();
			assert.match(init, /url: "\/v1\/openapi\.json"/);
			assert.match(init, /validatorUrl: null/);
			assert.doesNotMatch(init, /https?:\/\//);
		});

		it("GET /docs/<anything else> is 404 not_found (no file of the package outside the list)", async () => {
			for (const name of ["package.json", "index.html", "swagger-ui-bundle.js.map", "..%2Fpackage.json"]) {
				const res = await fetch(`${g.base}/docs/${name}`);
				assert.equal(res.status, 404, name);
				assert.equal(((await res.json()) as { error: string }).error, "not_found");
			}
		});
	});
});
