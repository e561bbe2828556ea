/**
 * Property test (fast-check) of the gateway's edge over EVERY route of the
 * routes table (lib/gateway/routes.ts: the bearer API, the bulk upload, the
 * courier webhooks, signed links, probes, the API reference and the dev IdP;
 * issue 31 "a fuzz test … to every route, and asserts no 5xx"): path
 * parameters, query keys and values, JSON body keys and values carrying
 * control characters and unpaired surrogates; arbitrary body bytes under
 * every `Content-Encoding` (gzip, deflate, br, zstd, identity, bogus; the
 * bytes compressed with it or not) and `charset` (utf-8, utf-7, utf-16,
 * utf-16le, utf-32, latin1, bogus); GET routes also as HEAD; with and without
 * a valid bearer token. Every answer is < 500, every 4xx JSON answer is in
 * the §2.11 envelope (§7 `{message}` under /v1/documents/), and the gateway
 * logs no error. Real gateway and services over real NATS. A fixed seed per
 * route (fast-check still shrinks a failure); `FUZZ_EDGE_RUNS` runs per route.
 */
import { strict as assert } from "node:assert";
import { brotliCompressSync, deflateSync, gzipSync, zstdCompressSync } from "node:zlib";
import fc from "fast-check";
import {
	API_ALIASES,
	DEV_IDP_ALIASES,
	DOCS_ALIASES,
	LINK_ALIASES,
	PROBE_ALIASES,
	UPLOAD_ALIASES,
	WEBHOOK_ALIASES,
} from "../../../lib/gateway/routes";
import { buildDocument, parseAliasKey } from "../../../lib/openapi/index";
import { useWorld, type World, WRITE_ROUTES } from "./setup";

/** Runs per route (× 57 routes): keeps the file near 10 s. */
const RUNS = Number(process.env.FUZZ_EDGE_RUNS || 10);

/** Every alias of the gateway, as `METHOD /path`. */
const ROUTES = [
	API_ALIASES,
	UPLOAD_ALIASES,
	WEBHOOK_ALIASES,
	LINK_ALIASES,
	PROBE_ALIASES,
	DOCS_ALIASES,
	DEV_IDP_ALIASES,
].flatMap((t) => Object.keys(t));

/** Characters the edge refuses or must let through, and plain ones. */
const HOSTILE_UNITS = [
	..."\u0000\u0001\t\n\r\u000b\u001b\u001f\u007f\u0080\u0085\u009f\ud800\udfff a0%/.é😀",
];

/** Strings with control characters, lone surrogates, and plain text. */
const hostileString = fc.oneof(
	{
		weight: 3,
		arbitrary: fc.string({ unit: fc.constantFrom(...HOSTILE_UNITS), minLength: 1, maxLength: 12 }),
	},
	{ weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 12 }) },
	{
		weight: 2,
		arbitrary: fc.constantFrom("a\u0000b", "\u0000", "A\u0000B", "\ud800", "x\udc00", "ok", "", "__proto__"),
	},
);

/** The query parameters the OpenAPI document lists for the alias `key` (none for an undocumented route). */
function queryNames(key: string): string[] {
	try {
		const { method, path } = parseAliasKey(key);
		const op = (buildDocument().paths?.[path] as Record<string, { parameters?: unknown[] }> | undefined)?.[
			method
		];
		return (op?.parameters ?? [])
			.map((x) => x as { in?: string; name?: string })
			.filter((x) => x.in === "query" && typeof x.name === "string")
			.map((x) => x.name as string);
	} catch {
		return [];
	}
}

/** Percent-encodes every UTF-8 byte of `s` (a lone surrogate becomes U+FFFD's bytes, as any client's encoder). */
function pct(s: string): string {
	return [...Buffer.from(s, "utf8")].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");
}

/** A valid-looking value of each path parameter of the table. */
function paramValue(name: string, w: World): string {
	switch (name) {
		case "pincode":
			return "110001";
		case "format":
			return "csv";
		case "id":
		case "orderId":
		case "order_id":
			return String(w.order_id);
		case "courier":
			return "sbx-express";
		case "file":
			return "swagger-ui.css";
		case "row":
		case "delivery_id":
			return "1";
		case "decision":
			return "approve";
		default:
			return "x1";
	}
}

/** Names of the path parameters of an alias path (`:name`, `{/:name}`). */
function paramNames(path: string): string[] {
	return [...path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]);
}

/** One request the property sends. */
interface Probe {
	method: string;
	auth: boolean;
	/** per path parameter: a hostile value, or null for a valid one */
	params: (string | null)[];
	query: [string, string][];
	/** null: no body; else a JSON value (edited base body) or raw bytes */
	body: null | { json: unknown } | { bytes: Uint8Array };
	encoding: null | { name: string; compress: boolean };
	charset: string | null;
	contentType: string;
}

const ENCODERS: Record<string, (b: Buffer) => Buffer> = {
	gzip: gzipSync,
	deflate: deflateSync,
	br: brotliCompressSync,
	zstd: zstdCompressSync,
};

/** Short text, plain or with the characters the edge lets through (TAB, LF, accents, an emoji). */
const plainish = fc.string({ unit: fc.constantFrom(..."a0 -é😀\t\n"), maxLength: 6 });

/** A string that always holds a character the edge refuses (what must never reach a service). */
const refusedString = fc
	.tuple(
		plainish,
		fc.constantFrom("\u0000", "\u0001", "\u001b", "\u007f", "\u0085", "\ud800", "\udfff"),
		plainish,
	)
	.map(([a, c, b]) => a + c + b);

/** Any hostile string: refused for sure, or arbitrary. */
const anyString = fc.oneof(refusedString, hostileString);

/** What one run attacks (the rest of the request stays plausible). */
type Target = "query" | "path" | "body" | "key" | "encoding" | "charset" | "mix";

/** The base body with a refused string as a value (top level or nested in an array). */
function bodyValueEdit(base: Record<string, unknown>): fc.Arbitrary<unknown> {
	const keys = Object.keys(base).length > 0 ? Object.keys(base) : ["comment"];
	return fc
		.tuple(fc.constantFrom(...keys), refusedString, fc.boolean())
		.map(([k, v, nest]) => ({ ...base, [k]: nest ? { x: [v] } : v }));
}

/** The base body with a refused string as a key (top level or nested). */
function bodyKeyEdit(base: Record<string, unknown>): fc.Arbitrary<unknown> {
	const keys = Object.keys(base).length > 0 ? Object.keys(base) : ["comment"];
	return fc
		.tuple(fc.constantFrom(...keys), refusedString, fc.jsonValue({ maxDepth: 1 }), fc.boolean())
		.map(([k, bad, v, nest]) => (nest ? { ...base, [k]: { [bad]: v } } : { ...base, [bad]: v }));
}

/** The arbitrary request for the alias `key`: one {@link Target} per run. */
function probeFor(key: string, w: World): fc.Arbitrary<Probe> {
	const [method, path] = key.split(" ");
	const base = WRITE_ROUTES.find((r) => r.key === key)?.body(w) ?? {};
	const hasBody = method !== "GET";
	const params = paramNames(path);
	const names = queryNames(key);
	const targets: Target[] = hasBody
		? ["query", "path", "body", "key", "encoding", "charset", "mix"]
		: ["query", "query", "path", "mix"];
	const plausible = fc.constant({ json: base } as Probe["body"]);
	return fc.constantFrom(...targets).chain((target) =>
		fc.record({
			method: method === "GET" ? fc.constantFrom("GET", "GET", "GET", "HEAD") : fc.constant(method),
			auth: fc.constantFrom(true, true, true, false),
			params: fc.tuple(
				...params.map(() =>
					target === "path" ? refusedString : target === "mix" ? fc.option(anyString) : fc.constant(null),
				),
			),
			query:
				target === "query" || (target === "path" && params.length === 0)
					? fc.oneof(
							fc.tuple(...[...names, "q"].map((n) => fc.tuple(fc.constant(n), refusedString))),
							fc.tuple(fc.tuple(refusedString, plainish)),
						)
					: target === "mix"
						? fc.array(fc.tuple(fc.oneof(fc.constantFrom(...names, "q"), anyString), anyString), {
								maxLength: 2,
							})
						: fc.constant([] as [string, string][]),
			body: !hasBody
				? fc.constant(null)
				: target === "body"
					? bodyValueEdit(base).map((json) => ({ json }))
					: target === "key"
						? bodyKeyEdit(base).map((json) => ({ json }))
						: target === "encoding" || target === "mix"
							? fc.oneof(
									plausible,
									fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ bytes })),
									fc.constant(null),
								)
							: plausible,
			encoding:
				target === "encoding" || target === "mix"
					? fc.option(
							fc.record({
								name: fc.constantFrom("gzip", "deflate", "br", "zstd", "identity", "bogus"),
								compress: fc.boolean(),
							}),
							{ freq: target === "mix" ? 2 : 100 },
						)
					: fc.constant(null),
			charset:
				target === "charset" || target === "mix"
					? fc.option(fc.constantFrom("utf-8", "utf-7", "utf-16", "utf-16le", "utf-32", "latin1", "bogus"), {
							freq: target === "mix" ? 2 : 100,
						})
					: fc.constant(null),
			contentType:
				target === "mix"
					? fc.constantFrom(
							"application/json",
							"application/x-www-form-urlencoded",
							"text/plain",
							"multipart/form-data; boundary=x",
						)
					: fc.constant("application/json"),
		}),
	) as fc.Arbitrary<Probe>;
}

/** The URL, headers and body bytes of a probe. */
function requestOf(key: string, p: Probe, w: World): { url: string; init: RequestInit } {
	const path = key.split(" ")[1];
	let i = 0;
	const filled = path
		.replace(/\{\/:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => `/:${name}`)
		.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_m, name: string) => {
			const hostile = p.params[i++];
			return hostile === null ? paramValue(name, w) : pct(hostile);
		});
	const qs = p.query.map(([k, v]) => `${pct(k)}=${pct(v)}`).join("&");
	const headers: Record<string, string> = {};
	if (p.auth) headers.authorization = `Bearer ${w.token}`;
	let body: Buffer | undefined;
	if (p.body) {
		body = "json" in p.body ? Buffer.from(JSON.stringify(p.body.json) ?? "null") : Buffer.from(p.body.bytes);
		headers["content-type"] = p.charset ? `${p.contentType}; charset=${p.charset}` : p.contentType;
		if (p.encoding) {
			headers["content-encoding"] = p.encoding.name;
			const encode = ENCODERS[p.encoding.name];
			if (p.encoding.compress && encode) body = encode(body);
		}
	}
	return {
		url: `${w.base}${filled}${qs ? `?${qs}` : ""}`,
		init: { method: p.method, headers, body },
	};
}

describe("hardening: fuzz of every route's edge (no 5xx, envelope shape, nothing logged)", function () {
	this.timeout(180_000);
	const w: World = useWorld("hardening-fuzz-edge", { devIdp: true });
	const errors: unknown[][] = [];

	before(() => {
		const gw = w.cluster.brokers[0].getLocalService("gateway") as unknown as {
			logger: { error: (...a: unknown[]) => void };
		};
		gw.logger.error = (...a: unknown[]) => {
			errors.push(a);
		};
	});

	it("covers every alias of the routes table", () => {
		assert.ok(ROUTES.length >= 50, String(ROUTES.length));
		assert.ok(
			ROUTES.includes("POST /auth/v1/token") && ROUTES.includes("POST /v1/tracking/webhooks/:courier"),
		);
	});

	ROUTES.forEach((key, n) => {
		it(key, async () => {
			await fc.assert(
				fc.asyncProperty(probeFor(key, w), async (p) => {
					errors.length = 0;
					const { url, init } = requestOf(key, p, w);
					const r = await fetch(url, init);
					const text = await r.text();
					const where = `${init.method} ${url.slice(w.base.length, w.base.length + 120)}`;
					assert.ok(r.status < 500, `${where}: ${r.status} ${text.slice(0, 300)}`);
					assert.deepEqual(errors, [], `${where}: the gateway logged an error`);
					if (p.method === "HEAD") {
						assert.equal(text, "", `${where}: HEAD answered a body`);
						return;
					}
					if (r.status < 400 || !(r.headers.get("content-type") ?? "").startsWith("application/json")) return;
					const body = JSON.parse(text);
					// §5.6: a 401 is `{error}` (+ `code`), without `message`
					if (r.status !== 401)
						assert.equal(typeof body.message, "string", `${where}: ${text.slice(0, 300)}`);
					if (!url.includes("/v1/documents/")) assert.equal(typeof body.error, "string", text.slice(0, 300));
				}),
				{ numRuns: RUNS, seed: 31_000 + n },
			);
		});
	});
});
