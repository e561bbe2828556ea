/**
 * The error catalogue (lib/platform/errors/catalogue.ts, issue 26) is the only source
 * of error codes, statuses and messages:
 * - every entry is well formed, and `fail` builds each body shape;
 * - no module of lib/, services/ or mixins/ builds an error answer with a
 *   literal status/code/message outside lib/platform/errors/ (a grep over the sources);
 * - every catalogued code is described by the served OpenAPI document (or is
 *   marked `internal` with a reason), and every code an error response of the
 *   document names is catalogued.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { OpenAPIV3_1 } from "openapi-types";
import { answerFor, gatewayFail } from "../../../lib/gateway/errors";
import { buildDocument } from "../../../lib/openapi/index";
import {
	CATALOGUE,
	type CatalogueEntry,
	type ErrorCode,
	errorBodyOf,
	fail,
	failWith,
	TOKEN_FAILURES,
	validationFailed,
} from "../../../lib/platform/errors";

const ROOT = join(__dirname, "..", "..", "..");

/** Every .ts file under `dir`, recursively. */
function sources(dir: string): string[] {
	const out: string[] = [];
	for (const name of readdirSync(dir)) {
		const p = join(dir, name);
		if (statSync(p).isDirectory()) out.push(...sources(p));
		else if (p.endsWith(".ts")) out.push(p);
	}
	return out;
}

/**
 * Error constructions that bypass the catalogue: a status, code or message
 * written at the call site. `fail(code, …)` / `failWith` / `gatewayFail` take
 * a catalogued code (checked by the compiler), so they are not listed.
 */
const BYPASSES: ReadonlyArray<[what: string, re: RegExp]> = [
	["new ApiError(…) (use fail/failWith)", /\bnew ApiError\s*\(/],
	["apiError(status, code, message) (use fail/failWith)", /\bapiError\s*\(/],
	["documentsError(…) (use fail with a documents.* entry)", /\bdocumentsError\s*\(/],
	["documentsConflict(…) (use fail/failWith)", /\bdocumentsConflict\s*\(/],
	["new GatewayError(<status>, …) (use gatewayFail)", /\bnew GatewayError\s*\(\s*\d/],
	["super(<status>, …) in an error class (take the catalogue status)", /\bsuper\s*\(\s*[1-5]\d\d\s*,/],
	// (a body quoted in a document text, "`{error:…}`", is not one)
	["an {error, message} body literal", /(?<!`)\{\s*error:\s*["'`][^"'`]*["'`]\s*,\s*message\s*:/],
	["an {error, message} JSON text", /["']\{\\?"error\\?":/],
];

/** Not our API's answers: the sandbox couriers speak their own wire format. */
const OUTSIDE = ["lib/platform/errors/", "lib/simulator/", "lib/couriers/"];

/** The bypasses in `text` (one line per hit: `<line>: <what>`); comments are skipped. */
function bypassesIn(text: string): string[] {
	const hits: string[] = [];
	const lines = text.split("\n");
	for (let i = 0; i < lines.length; i++) {
		const line = lines[i].trim();
		if (line.startsWith("*") || line.startsWith("//") || line.startsWith("/*")) continue;
		for (const [what, re] of BYPASSES) if (re.test(line)) hits.push(`${i + 1}: ${what}`);
	}
	return hits;
}

/** Backticked tokens of every description under `node`, and every string `const`/`enum` value. */
function documentedTokens(node: unknown, out = new Set<string>()): Set<string> {
	if (Array.isArray(node)) for (const x of node) documentedTokens(x, out);
	else if (node && typeof node === "object") {
		for (const [k, v] of Object.entries(node)) {
			if (k === "description" && typeof v === "string") {
				for (const m of v.matchAll(/`([^`]+)`/g)) out.add(m[1]);
			} else if (k === "const" && typeof v === "string") {
				out.add(v);
			} else if (k === "enum" && Array.isArray(v)) {
				for (const e of v) if (typeof e === "string") out.add(e);
			} else {
				documentedTokens(v, out);
			}
		}
	}
	return out;
}

/** Backticked tokens of the error responses (status ≥ 400, and the shared component responses). */
function errorResponseTokens(doc: OpenAPIV3_1.Document): Set<string> {
	const out = new Set<string>();
	const texts: string[] = [];
	for (const item of Object.values(doc.paths ?? {}))
		for (const op of Object.values(item ?? {}))
			if (op && typeof op === "object" && "responses" in op)
				for (const [status, r] of Object.entries(op.responses ?? {}))
					if (Number(status) >= 400 && "description" in r) texts.push(r.description ?? "");
	for (const r of Object.values(doc.components?.responses ?? {}))
		if ("description" in r) texts.push(r.description ?? "");
	for (const t of texts) for (const m of t.matchAll(/`([^`]+)`/g)) out.add(m[1]);
	return out;
}

/** A token shaped like a snake_case code (`lane_not_priced`). */
const CODE_SHAPE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/;

/**
 * snake_case tokens the error texts name that are NOT error codes: body fields,
 * parameters and state values. A new token here must really not be a code.
 */
const NOT_CODES = new Set([
	"already_manifested_order_ids",
	"awaiting_pickup",
	"awb_number",
	"brand_name",
	"credit_limit",
	"customer_order_no",
	"date_from",
	"deferred_date",
	"dropped_couriers",
	"error_type",
	"limit_bytes",
	"logistic_id",
	"logistic_ids",
	"manifest_nos",
	"next_pickup_date",
	"order_id",
	"order_ids",
	"phone_last4",
	"pickup_address_id",
	"request_id",
	"retry_after",
	"row_no",
	"schedule_pickup",
	"sender_address_id",
	"sender_id",
	"shipment_type",
	"warehouse_id",
]);

describe("error catalogue (lib/platform/errors/catalogue.ts)", () => {
	const entries = Object.entries(CATALOGUE) as Array<[ErrorCode, CatalogueEntry]>;

	it("holds well-formed entries: an error status, a description, a spec section", () => {
		assert.ok(entries.length > 50);
		for (const [code, e] of entries) {
			assert.ok(
				Number.isInteger(e.status) && e.status >= 400 && e.status <= 599,
				`${code}: status ${e.status}`,
			);
			assert.ok(e.description.trim().length > 0, `${code}: description`);
			assert.ok(e.spec.trim().length > 0, `${code}: spec`);
			assert.ok(typeof e.message === "string" || typeof e.message === "function", `${code}: message`);
			if (e.internal !== undefined)
				assert.ok(e.internal.trim().length > 0, `${code}: internal needs a reason`);
		}
	});

	it("builds each body shape with the catalogue's status and message", () => {
		assert.deepEqual(errorBodyOf(fail("webhook_disabled")), {
			status: 409,
			body: {
				error: "webhook_disabled",
				message: "The endpoint is disabled: enable it first (PATCH enabled: true)",
			},
		});
		assert.deepEqual(errorBodyOf(failWith("duplicate_logistic", { logistic_ids: [3] }, [3])), {
			status: 400,
			body: {
				error: "duplicate_logistic",
				message: "logistic_id 3 listed more than once",
				logistic_ids: [3],
			},
		});
		assert.deepEqual(errorBodyOf(failWith("forbidden", { cap: "ndr.act" }, "ndr.act"))?.body, {
			error: "forbidden",
			cap: "ndr.act",
			message: "This action needs the ndr.act capability",
		});
		assert.deepEqual(
			errorBodyOf(failWith("Invalid or expired token", { code: "token_expired" }, "token_expired")),
			{
				status: 401,
				body: { error: "Invalid or expired token", code: "token_expired" },
			},
		);
		assert.deepEqual(errorBodyOf(fail("not_ready_to_ship", "single")), {
			status: 409,
			body: { code: "not_ready_to_ship", message: "order is not booked yet" },
		});
		assert.deepEqual(errorBodyOf(fail("documents.orders_not_found", [4, 5])), {
			status: 404,
			body: { message: "orders not found: 4, 5" },
		});
		assert.deepEqual(errorBodyOf(validationFailed(["a: bad", "b: bad"]))?.body, {
			error: "validation_failed",
			message: "Validation failed",
			details: ["a: bad", "b: bad"],
		});
		const gw = answerFor(gatewayFail("method_not_allowed", "PUT", "/v1/orders"), "/v1/orders", "r");
		assert.deepEqual(gw, {
			status: 405,
			body: { error: "method_not_allowed", message: "Method PUT is not allowed on /v1/orders" },
			log: false,
		});
	});

	it("the bypass scan finds a literal error answer (the check below can fail)", () => {
		const sample = [
			'throw apiError(400, "x", "y");',
			"return new ApiError(409, body);",
			'next(new GatewayError(404, "not_found", "Route not found"));',
			'super(429, "rate_limited", "slow down");',
			'body: { error: "internal_error", message: "Internal error" },',
			`res.end('{"error":"not_found","message":"Route not found"}');`,
			'throw documentsError(404, "not found");',
			' * apiError(400, "in a comment") is fine',
			'throw fail("not found");',
		].join("\n");
		assert.deepEqual(
			bypassesIn(sample).map((h) => Number(h.split(":")[0])),
			[1, 2, 3, 4, 5, 6, 7],
		);
	});

	it("no error is built outside the catalogue in lib/, services/, mixins/", () => {
		const hits: string[] = [];
		for (const dir of ["lib", "services", "mixins"]) {
			for (const file of sources(join(ROOT, dir))) {
				const rel = relative(ROOT, file).split("\\").join("/");
				if (OUTSIDE.some((o) => rel.startsWith(o))) continue;
				for (const hit of bypassesIn(readFileSync(file, "utf8"))) hits.push(`${rel}:${hit}`);
			}
		}
		assert.deepEqual(hits, [], `errors built outside lib/platform/errors/catalogue.ts:\n${hits.join("\n")}`);
	});

	describe("and the served OpenAPI document", () => {
		const doc = buildDocument();

		it("documents every catalogued code (or the entry says why not)", () => {
			const tokens = documentedTokens(doc);
			const missing = entries
				.filter(([, e]) => e.internal === undefined && e.body !== "documents_message")
				.map(([code]) => code)
				.filter((code) => !tokens.has(code));
			assert.deepEqual(
				missing,
				[],
				`catalogued codes the OpenAPI document never names: ${missing.join(", ")}`,
			);
			const tokenCodes = Object.keys(TOKEN_FAILURES).filter((c) => !JSON.stringify(doc).includes(c));
			assert.deepEqual(tokenCodes, [], "401 `code` values the document does not list");
		});

		it("names only catalogued codes in its error responses", () => {
			const unknown = [...errorResponseTokens(doc)].filter(
				(t) => CODE_SHAPE.test(t) && !(t in CATALOGUE) && !NOT_CODES.has(t),
			);
			assert.deepEqual(
				unknown,
				[],
				`codes in error responses that the catalogue lacks (or add a field name to NOT_CODES): ${unknown.join(", ")}`,
			);
		});

		it("documents the messages of the /v1/documents/ {message} answers", () => {
			const text = JSON.stringify(doc);
			for (const phrase of ["not found", "orderId must be a positive integer", "max 200 orders per request"])
				assert.ok(text.includes(phrase), phrase);
		});
	});
});
