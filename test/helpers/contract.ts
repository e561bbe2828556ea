/**
 * Contract check of every HTTP answer the test suite receives (issue 11).
 *
 * `globalThis.fetch` is wrapped (once, when this module loads): every response
 * from the gateway (it carries `X-Request-ID`; the sandbox courier simulator
 * and test doubles do not) whose path is under `/v1/`, `/docs`, `/health` or
 * `/ready` is checked against the OpenAPI document (lib/openapi, built once):
 *
 * - (method, path) must match an operation; the status must be documented
 *   for it (an exact code, an `NXX` range or `default`);
 * - headers the response object marks `required` must be present;
 * - a response documented without content must have an empty body; else
 *   the media type (without parameters) must be one of its content keys, and
 *   a JSON body must validate against that schema (ajv, JSON Schema 2020-12
 *   with formats; compiled once per operation, status and media type);
 * - rules for requests the tests send to undocumented routes on purpose
 *   (docs/decisions/0043-openapi-document.md): a path matching no documented
 *   path must be answered 404 `not_found` (JSON `Error`; `{message}` under
 *   /v1/documents/; plain text under the signed-link prefix); a documented
 *   path with another method must be 405 `method_not_allowed` with `Allow`
 *   (204 with `Allow` for `OPTIONS`);
 * - a `HEAD` is checked as the `GET` of its path (RFC 9110: the gateway
 *   answers HEAD wherever it serves GET,
 *   docs/decisions/0079-edge-text-rule.md): the same documented statuses and
 *   required headers, and an empty body.
 *
 * Violations are collected per test and fail THAT test: a root `beforeEach`
 * (see {@link mochaHooks}, exported from test/helpers/global.ts) wraps the
 * test's function so that, after it ran, the checks of the responses it
 * received are awaited and any violation is thrown with the list. Responses
 * received in `before`/`beforeEach` hooks are reported by the next test,
 * those of `after` hooks by the root `afterAll` hook.
 *
 * `CONTRACT_CHECK=0` in the environment disables it; `CONTRACT_CHECK_REPORT=1`
 * prints, at the end of the run, how many answers were checked per
 * operation and status. A suite that runs the
 * gateway on fake services (whose answers are not the real ones) opts out
 * with {@link skipContract} inside its `describe` (`"success"`: its error
 * answers, made by the gateway, are still checked).
 */
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import type { Context, Func, Test } from "mocha";
import type { OpenAPIV3_1 } from "openapi-types";
import type * as OpenApiModule from "../../lib/openapi/index";

/** One HTTP exchange as the checker sees it. */
export interface Exchange {
	method: string;
	/** absolute URL (or just the path) */
	url: string;
	status: number;
	headers: Headers;
	/** the body's bytes (empty when there is none) */
	body: Uint8Array;
}

type Doc = OpenAPIV3_1.Document;
type ResponseObject = OpenAPIV3_1.ResponseObject;
type Json = Record<string, unknown>;

interface PathEntry {
	/** OpenAPI path, e.g. `/v1/orders/{id}` */
	template: string;
	re: RegExp;
	/** number of templated segments (fewer = more specific) */
	params: number;
	/** characters outside templates (more = more specific) */
	literal: number;
	item: Record<string, OpenAPIV3_1.OperationObject | undefined>;
}

const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const DOCUMENTS_PREFIX = "/v1/documents/";
const LINK_PREFIX = "/v1/documents/label/t";

function escapeRe(s: string): string {
	return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function isRef(v: unknown): v is OpenAPIV3_1.ReferenceObject {
	return typeof v === "object" && v !== null && typeof (v as { $ref?: unknown }).$ref === "string";
}

/** Media type of a Content-Type header, lower-cased, without parameters. */
function mediaType(contentType: string | null): string {
	return (contentType ?? "").split(";")[0].trim().toLowerCase();
}

function isJsonMedia(mt: string): boolean {
	return mt === "application/json" || mt.endsWith("+json");
}

/** `#/components/schemas/X` → `urn:msa:schema:X` in a deep copy (ajv resolves those by $id). */
function rewriteRefs(v: unknown): unknown {
	if (Array.isArray(v)) return v.map(rewriteRefs);
	if (typeof v !== "object" || v === null) return v;
	const out: Json = {};
	for (const [k, x] of Object.entries(v)) {
		if (k === "$ref" && typeof x === "string" && x.startsWith("#/components/schemas/"))
			out[k] = `urn:msa:schema:${x.slice("#/components/schemas/".length)}`;
		else out[k] = rewriteRefs(x);
	}
	return out;
}

/**
 * Checks HTTP exchanges against an OpenAPI 3.1 document (see the module
 * comment for the rules). Validators are compiled lazily and cached.
 */
export class ContractChecker {
	private readonly paths: PathEntry[];
	private readonly ajv: Ajv2020;
	private readonly validators = new Map<string, ValidateFunction>();

	/** @param doc the document (refs limited to `#/components/schemas/*` and `#/components/responses/*`) */
	constructor(private readonly doc: Doc) {
		this.paths = Object.entries(doc.paths ?? {}).map(([template, item]) => {
			const parts = template.split(/\{[^}]+\}/);
			return {
				template,
				re: new RegExp(`^${parts.map(escapeRe).join("[^/]+")}$`),
				params: parts.length - 1,
				literal: parts.join("").length,
				item: (item ?? {}) as PathEntry["item"],
			};
		});
		// most specific first: literal paths win over templated ones (as the gateway orders its aliases)
		this.paths.sort((a, b) => a.params - b.params || b.literal - a.literal);
		this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
		addFormats(this.ajv);
		this.ajv.addVocabulary(["discriminator", "xml", "externalDocs", "example"]);
		for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) {
			this.ajv.addSchema({ ...(rewriteRefs(schema) as Json), $id: `urn:msa:schema:${name}` });
		}
	}

	/** The operation for `method` and `path`, or which rule applies when there is none. */
	private find(
		method: string,
		path: string,
	): { op: OpenAPIV3_1.OperationObject; template: string } | { known: string[] } {
		const m = method.toLowerCase();
		const matching = this.paths.filter((p) => p.re.test(path));
		for (const p of matching) {
			const op = p.item[m];
			if (op && HTTP_METHODS.includes(m)) return { op, template: p.template };
		}
		const known = new Set<string>();
		for (const p of matching) for (const k of HTTP_METHODS) if (p.item[k]) known.add(k.toUpperCase());
		return { known: [...known] };
	}

	private resolveResponse(r: ResponseObject | OpenAPIV3_1.ReferenceObject): ResponseObject | undefined {
		if (!isRef(r)) return r;
		const prefix = "#/components/responses/";
		if (!r.$ref.startsWith(prefix)) return undefined;
		const target = this.doc.components?.responses?.[r.$ref.slice(prefix.length)];
		return target === undefined ? undefined : this.resolveResponse(target);
	}

	private validator(key: string, schema: unknown): ValidateFunction {
		let v = this.validators.get(key);
		if (!v) {
			v = this.ajv.compile(rewriteRefs(schema ?? {}) as Json);
			this.validators.set(key, v);
		}
		return v;
	}

	/** Checks a body against a response object (headers, media type, JSON schema); returns violations. */
	private checkAgainst(key: string, response: ResponseObject, ex: Exchange): string[] {
		const out: string[] = [];
		for (const [name, h] of Object.entries(response.headers ?? {})) {
			if (!isRef(h) && h.required && !ex.headers.has(name)) out.push(`required header ${name} is missing`);
		}
		// a response to HEAD: the GET's headers, never a body
		if (ex.method.toUpperCase() === "HEAD") {
			if (ex.body.length > 0) out.push(`HEAD answered with a body of ${ex.body.length} bytes`);
			return out;
		}
		const content = response.content;
		if (!content || Object.keys(content).length === 0) {
			if (ex.body.length > 0) out.push(`documented without a body, got ${ex.body.length} bytes`);
			return out;
		}
		const mt = mediaType(ex.headers.get("content-type"));
		const media =
			content[mt] ??
			content[`${mt.split("/")[0]}/*`] ??
			content["*/*"] ??
			// a JSON answer documented as `application/json` may be sent as `application/problem+json` etc. only if documented
			undefined;
		if (!media) {
			out.push(
				`content type "${mt || "(none)"}" is not documented (documented: ${Object.keys(content).join(", ")})`,
			);
			return out;
		}
		if (!isJsonMedia(mt) || media.schema === undefined) return out;
		let parsed: unknown;
		try {
			parsed = JSON.parse(Buffer.from(ex.body).toString("utf8"));
		} catch {
			out.push("body is not valid JSON");
			return out;
		}
		const validate = this.validator(`${key} ${mt}`, media.schema);
		if (!validate(parsed)) {
			for (const e of validate.errors ?? []) {
				const extra = e.keyword === "additionalProperties" ? ` (${String(e.params.additionalProperty)})` : "";
				out.push(`body${e.instancePath || ""} ${e.message ?? e.keyword}${extra}`);
			}
		}
		return out;
	}

	/** Exchanges checked so far, by `METHOD <OpenAPI path> status` (`(no operation) METHOD status` for answers matching no operation). */
	readonly seen = new Map<string, number>();

	/**
	 * Checks one exchange; returns the violations (empty when it conforms).
	 * Each starts with `METHOD path status:`.
	 */
	check(ex: Exchange): string[] {
		// the gateway routes paths exactly (issue 12): `/a/b/` is not `/a/b`, `/A/b` is not `/a/b`
		const path = new URL(ex.url, "http://localhost").pathname;
		const method = ex.method.toUpperCase();
		const head = `${method} ${path} ${ex.status}:`;
		const found = this.find(method === "HEAD" ? "GET" : method, path);
		const seenKey =
			"op" in found ? `${method} ${found.template} ${ex.status}` : `(no operation) ${method} ${ex.status}`;
		this.seen.set(seenKey, (this.seen.get(seenKey) ?? 0) + 1);
		if ("known" in found) {
			if (found.known.length === 0) {
				// no documented path: only the gateway's "route not found" is allowed
				if (ex.status !== 404) return [`${head} undocumented route (no path of the document matches)`];
				if (path.startsWith(LINK_PREFIX) && mediaType(ex.headers.get("content-type")) === "text/plain")
					return [];
				const schema = path.startsWith(DOCUMENTS_PREFIX) ? "DocumentsError" : "Error";
				const r: ResponseObject = {
					description: "route not found",
					content: { "application/json": { schema: { $ref: `#/components/schemas/${schema}` } } },
				};
				return this.checkAgainst(`unrouted ${schema}`, r, ex).map((v) => `${head} ${v}`);
			}
			// documented path, other method: 405 with Allow (204 for OPTIONS)
			const allow = ex.headers.get("allow");
			if (method === "OPTIONS" && ex.status === 204) return allow ? [] : [`${head} 204 without Allow`];
			if (ex.status !== 405)
				return [`${head} method not documented for this path (documented: ${found.known.join(", ")})`];
			const out = allow ? [] : ["405 without Allow"];
			const r = this.resolveResponse({ $ref: "#/components/responses/MethodNotAllowed" }) ?? {
				description: "405",
				content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
			};
			return [...out, ...this.checkAgainst("405", r, ex)].map((v) => `${head} ${v}`);
		}
		const responses = found.op.responses ?? {};
		const status = String(ex.status);
		// the document lists 500 (a client must know its shape), but no test on real services may ever receive one
		// (bad input gets its 4xx envelope, never a 500); suites on fake services (skipContract "success") provoke
		// it on purpose to test the gateway's 500 envelope
		if (ex.status === 500 && suspended.success === 0)
			return [`${head} 500 received: every answer a test provokes must be a documented 4xx/2xx`];
		const declared = responses[status] ?? responses[`${status[0]}XX`] ?? responses.default;
		if (!declared) {
			return [
				`${head} status ${status} is not documented for ${method} ${found.template} (documented: ${Object.keys(responses).join(", ")})`,
			];
		}
		const response = this.resolveResponse(declared);
		if (!response)
			return [`${head} response reference ${(declared as { $ref: string }).$ref} does not resolve`];
		return this.checkAgainst(`${method} ${found.template} ${status}`, response, ex).map(
			(v) => `${head} ${v} (${method} ${found.template})`,
		);
	}
}

// ---------------------------------------------------------------------------
// fetch wrapper and mocha root hooks
// ---------------------------------------------------------------------------

/** True unless `CONTRACT_CHECK=0`. */
export function contractCheckEnabled(): boolean {
	return process.env.CONTRACT_CHECK !== "0";
}

/** Paths whose responses are checked. */
export function inScope(path: string): boolean {
	return (
		path.startsWith("/v1/") ||
		path === "/docs" ||
		path.startsWith("/docs/") ||
		path === "/health" ||
		path === "/ready"
	);
}

interface Pending {
	/** title of the test running when the response arrived (undefined: a hook) */
	owner: string | undefined;
	done: Promise<string[]>;
}

let checker: ContractChecker | undefined;
let pending: Pending[] = [];
let currentTest: string | undefined;
/** Suites in progress that opted out of every check / of the checks of answers below 400. */
const suspended = { all: 0, success: 0 };
/** How long a response body may take to finish before the check gives up on it (ms). */
const BODY_TIMEOUT_MS = 10_000;

/**
 * The checker on the built document (created on first use; the document's
 * modules are loaded then, not when mocha starts, so a broken area file fails
 * the tests that receive responses, not the loading of every spec).
 */
export async function sharedChecker(): Promise<ContractChecker> {
	if (!checker) {
		const openapi: typeof OpenApiModule = require("../../lib/openapi/index");
		checker = new ContractChecker(openapi.buildDocument());
	}
	return checker;
}

function methodOf(input: Parameters<typeof fetch>[0], init: Parameters<typeof fetch>[1]): string {
	if (init?.method) return init.method;
	if (typeof input === "object" && input !== null && "method" in input) return input.method;
	return "GET";
}

async function readWithTimeout(res: Response): Promise<Uint8Array | undefined> {
	let timer: NodeJS.Timeout | undefined;
	const timeout = new Promise<undefined>((resolve) => {
		timer = setTimeout(() => resolve(undefined), BODY_TIMEOUT_MS);
		timer.unref();
	});
	try {
		return await Promise.race([res.arrayBuffer().then((b) => new Uint8Array(b)), timeout]);
	} finally {
		clearTimeout(timer);
	}
}

/** Starts the check of one response (from a clone; the caller still reads the original). */
function observe(method: string, res: Response): void {
	let path: string;
	try {
		path = new URL(res.url).pathname;
	} catch {
		return;
	}
	if (suspended.all > 0 || (suspended.success > 0 && res.status < 400)) return;
	if (!inScope(path) || !res.headers.has("x-request-id")) return;
	const copy = res.clone();
	const owner = currentTest;
	const done = (async (): Promise<string[]> => {
		const body = await readWithTimeout(copy).catch(() => new Uint8Array());
		if (body === undefined)
			return [`${method} ${path} ${res.status}: body not complete within ${BODY_TIMEOUT_MS} ms`];
		return (await sharedChecker()).check({
			method,
			url: res.url,
			status: res.status,
			headers: res.headers,
			body,
		});
	})().catch((err: unknown) => [`${method} ${path} ${res.status}: checker failed: ${String(err)}`]);
	pending.push({ owner, done });
}

const originalFetch = globalThis.fetch;
let installed = false;

/** Wraps `globalThis.fetch` (idempotent; a no-op with `CONTRACT_CHECK=0`). */
export function installFetchCheck(): void {
	if (installed || !contractCheckEnabled()) return;
	installed = true;
	const wrapped: typeof fetch = async (input, init) => {
		const res = await originalFetch(input, init);
		observe(methodOf(input, init).toUpperCase(), res);
		return res;
	};
	globalThis.fetch = wrapped;
}

/** Awaits the pending checks and returns their violations (each prefixed with where it was seen), clearing them. */
export async function drainViolations(): Promise<string[]> {
	const taken = pending;
	pending = [];
	const out: string[] = [];
	for (const p of taken) {
		for (const v of await p.done) {
			out.push(p.owner === undefined ? `${v} [received in a hook]` : v);
		}
	}
	return out;
}

/** The error a test fails with. */
function violationError(violations: string[]): Error {
	const err = new Error(
		`OpenAPI contract violated by ${violations.length} response(s) (lib/openapi; CONTRACT_CHECK=0 disables):\n  - ${violations.join("\n  - ")}`,
	);
	err.name = "ContractViolation";
	return err;
}

/** Wraps a test's function so that it fails with the contract violations of the responses it received. */
function wrapTest(test: Test): void {
	const fn = test.fn;
	if (!fn || (fn as { __contract?: boolean }).__contract) return;
	const title = test.parent ? test.fullTitle() : test.title;
	const after = async () => {
		currentTest = undefined;
		const v = await drainViolations();
		if (v.length) throw violationError(v);
	};
	let wrapped: Func;
	if (fn.length >= 1) {
		wrapped = function (this: Context, done: (err?: unknown) => void) {
			currentTest = title;
			const cb = (err?: unknown) => {
				if (err) {
					currentTest = undefined;
					done(err);
					return;
				}
				after().then(() => done(), done);
			};
			return (fn as (this: Context, done: (err?: unknown) => void) => unknown).call(this, cb);
		} as Func;
	} else {
		wrapped = async function (this: Context) {
			currentTest = title;
			try {
				await (fn as (this: Context) => unknown).call(this);
			} catch (err) {
				currentTest = undefined;
				throw err;
			}
			await after();
		};
	}
	(wrapped as { __contract?: boolean }).__contract = true;
	test.fn = wrapped;
}

/**
 * Opt-out for the suite it is called in (inside `describe`, before its
 * other hooks): while it runs, responses are not checked (`scope: "all"`),
 * or only answers with a status below 400 are not (`scope: "success"`: for
 * suites whose services are fakes, so the gateway's own error answers are
 * still checked). Say why in `reason`.
 */
export function skipContract(reason: string, scope: "all" | "success" = "all"): void {
	if (!reason) throw new Error("skipContract needs a reason");
	before(() => {
		suspended[scope]++;
	});
	after(() => {
		suspended[scope]--;
	});
}

/**
 * Mocha root hooks (exported as `mochaHooks` by test/helpers/global.ts):
 * installs the fetch wrapper, wraps each test (see the module comment) and
 * fails the run's end for violations received in `after` hooks.
 */
export const mochaHooks = {
	beforeAll(): void {
		installFetchCheck();
	},
	beforeEach(this: Context): void {
		if (!contractCheckEnabled()) return;
		const t = this.currentTest;
		if (t) wrapTest(t);
	},
	async afterAll(): Promise<void> {
		if (!contractCheckEnabled()) return;
		const v = await drainViolations();
		if (process.env.CONTRACT_CHECK_REPORT === "1" && checker) {
			const lines = [...checker.seen.entries()].sort().map(([k, n]) => `  ${String(n).padStart(5)}  ${k}`);
			process.stderr.write(
				`contract check: responses checked by operation and status\n${lines.join("\n")}\n`,
			);
		}
		if (v.length) throw violationError(v);
	},
};
