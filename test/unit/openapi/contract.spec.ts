/**
 * The contract checker itself (test/helpers/contract.ts, issue 11): an
 * undocumented status, an extra field in a strict schema, a wrong type, a
 * wrong content type, a missing required header, an undocumented route are
 * reported; conforming answers are not; the fetch wrapper reports responses
 * of the gateway (X-Request-ID) only and makes the test that saw them fail.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Context, Test } from "mocha";
import type { OpenAPIV3_1 } from "openapi-types";
import { ContractChecker, drainViolations, type Exchange, mochaHooks } from "../../helpers/contract";

const doc: OpenAPIV3_1.Document = {
	openapi: "3.1.0",
	info: { title: "t", version: "1" },
	paths: {
		"/v1/things/{id}": {
			get: {
				responses: {
					"200": {
						description: "strict",
						headers: { ETag: { required: true, schema: { type: "string" } } },
						content: {
							"application/json": {
								schema: {
									type: "object",
									required: ["id", "name"],
									properties: {
										id: { type: "integer" },
										name: { type: "string" },
										at: { type: "string", format: "date-time" },
									},
									additionalProperties: false,
								},
							},
						},
					},
					"404": { $ref: "#/components/responses/NotFound" },
				},
			},
		},
		"/v1/things/special": {
			post: { responses: { "204": { description: "no body" } } },
		},
		"/v1/pdf": {
			get: { responses: { "200": { description: "pdf", content: { "application/pdf": {} } } } },
		},
	},
	components: {
		schemas: {
			Error: {
				type: "object",
				required: ["error", "message"],
				properties: { error: { type: "string" }, message: { type: "string" } },
			},
			DocumentsError: { type: "object", required: ["message"], properties: { message: { type: "string" } } },
		},
		responses: {
			NotFound: {
				description: "nf",
				content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
			},
			MethodNotAllowed: {
				description: "405",
				headers: { Allow: { required: true, schema: { type: "string" } } },
				content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
			},
		},
	},
};

const checker = new ContractChecker(doc);

function ex(
	method: string,
	url: string,
	status: number,
	body: unknown,
	headers: Record<string, string> = {},
	type = "application/json; charset=utf-8",
): Exchange {
	const bytes =
		body === undefined
			? new Uint8Array()
			: Buffer.from(typeof body === "string" ? body : JSON.stringify(body));
	return { method, url, status, headers: new Headers({ "content-type": type, ...headers }), body: bytes };
}

const OK = { id: 1, name: "a", at: "2025-01-01T00:00:00Z" };

describe("openapi: the contract checker", () => {
	it("accepts a conforming answer, including a $ref'd error response", () => {
		assert.deepEqual(checker.check(ex("GET", "http://h/v1/things/7", 200, OK, { etag: '"x"' })), []);
		assert.deepEqual(
			checker.check(ex("GET", "/v1/things/7", 404, { error: "not_found", message: "no" })),
			[],
		);
		assert.deepEqual(checker.check(ex("POST", "/v1/things/special", 204, undefined, {}, "")), []);
		assert.deepEqual(checker.check(ex("GET", "/v1/pdf", 200, "%PDF-1.7", {}, "application/pdf")), []);
	});

	it("reports an undocumented status", () => {
		const v = checker.check(ex("GET", "/v1/things/7", 409, { error: "conflict", message: "x" }));
		assert.equal(v.length, 1);
		assert.match(v[0], /status 409 is not documented for GET \/v1\/things\/\{id\}/);
	});

	it("reports an extra field in a strict schema, a wrong type and a bad format", () => {
		const v = checker.check(
			ex("GET", "/v1/things/7", 200, { id: "1", name: "a", at: "yesterday", secret: 1 }, { etag: '"x"' }),
		);
		assert.ok(
			v.some((m) => /must NOT have additional properties \(secret\)/.test(m)),
			v.join("\n"),
		);
		assert.ok(
			v.some((m) => /body\/id must be integer/.test(m)),
			v.join("\n"),
		);
		assert.ok(
			v.some((m) => /body\/at must match format "date-time"/.test(m)),
			v.join("\n"),
		);
	});

	it("reports a missing required field, a missing required header, a wrong content type, a non-JSON body", () => {
		assert.ok(
			checker.check(ex("GET", "/v1/things/7", 200, { id: 1 }, { etag: "e" })).some((m) => /name/.test(m)),
		);
		assert.ok(checker.check(ex("GET", "/v1/things/7", 200, OK)).some((m) => /required header ETag/.test(m)));
		assert.ok(
			checker
				.check(ex("GET", "/v1/things/7", 200, "<p>", { etag: "e" }, "text/html"))
				.some((m) => /content type "text\/html" is not documented/.test(m)),
		);
		assert.ok(
			checker
				.check(ex("GET", "/v1/things/7", 200, "{oops", { etag: "e" }))
				.some((m) => /not valid JSON/.test(m)),
		);
		assert.ok(
			checker
				.check(ex("POST", "/v1/things/special", 204, "x", {}, "text/plain"))
				.some((m) => /documented without a body/.test(m)),
		);
	});

	it("matches paths exactly, as the gateway routes them (issue 12): a trailing slash or other case is no documented path", () => {
		assert.match(checker.check(ex("GET", "/v1/things/7/", 200, OK, { etag: "e" }))[0], /undocumented route/);
		assert.match(checker.check(ex("GET", "/V1/things/7", 200, OK, { etag: "e" }))[0], /undocumented route/);
		assert.deepEqual(
			checker.check(ex("GET", "/v1/things/7/", 404, { error: "not_found", message: "Route not found" })),
			[],
		);
	});

	it("prefers a literal path over a templated one", () => {
		// POST exists only on the literal path: found there, not a 405 of /v1/things/{id}
		assert.deepEqual(checker.check(ex("POST", "/v1/things/special", 204, undefined, {}, "")), []);
	});

	it("undocumented routes: only 404 not_found passes; other methods of a documented path need 405 + Allow", () => {
		assert.deepEqual(
			checker.check(ex("GET", "/v1/nope", 404, { error: "not_found", message: "Route not found" })),
			[],
		);
		assert.match(checker.check(ex("GET", "/v1/nope", 200, {}))[0], /undocumented route/);
		assert.ok(
			checker.check(ex("GET", "/v1/nope", 404, { nope: 1 })).some((m) => /required property/.test(m)),
		);
		assert.deepEqual(checker.check(ex("GET", "/v1/documents/zzz", 404, { message: "Route not found" })), []);
		assert.deepEqual(
			checker.check(
				ex("DELETE", "/v1/things/7", 405, { error: "method_not_allowed", message: "m" }, { allow: "GET" }),
			),
			[],
		);
		assert.ok(
			checker
				.check(ex("DELETE", "/v1/things/7", 405, { error: "method_not_allowed", message: "m" }))
				.some((m) => /Allow/.test(m)),
		);
		assert.match(checker.check(ex("DELETE", "/v1/things/7", 200, {}))[0], /method not documented/);
		assert.deepEqual(checker.check(ex("OPTIONS", "/v1/things/7", 204, undefined, { allow: "GET" }, "")), []);
	});

	describe("the fetch wrapper and the per-test failure", () => {
		let server: Server;
		let base: string;
		before(async () => {
			// answers like the gateway (X-Request-ID) but off contract: /health with an extra field
			server = createServer((req, res) => {
				if (req.url === "/health") res.setHeader("X-Request-ID", "r1");
				res.setHeader("Content-Type", "application/json");
				res.end(JSON.stringify({ status: "ok", extra: true }));
			});
			await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
			base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
		});
		after(() => {
			server.close();
		});

		it("records a violation for a gateway answer, leaves other servers alone, and the caller still reads the body", async () => {
			const res = await fetch(`${base}/health`);
			assert.deepEqual(await res.json(), { status: "ok", extra: true });
			const other = await fetch(`${base}/ready`); // no X-Request-ID: not the gateway, not checked
			await other.arrayBuffer();
			const v = await drainViolations();
			assert.equal(v.length, 1, v.join("\n"));
			assert.match(v[0], /GET \/health 200: body must NOT have additional properties \(extra\)/);
		});

		it("a test that received an off-contract answer fails with the list; one that did not passes", async () => {
			const failing = new Test("receives an off-contract answer", async () => {
				const r = await fetch(`${base}/health`);
				await r.text();
			});
			const passing = new Test("receives nothing", async () => undefined);
			const run = (t: Test) =>
				new Promise<unknown>((resolve) => {
					mochaHooks.beforeEach.call({ currentTest: t } as unknown as Context);
					t.run((err) => resolve(err));
				});
			const err = (await run(failing)) as Error | undefined;
			assert.equal(err?.name, "ContractViolation");
			assert.match(String(err?.message), /additional properties \(extra\)/);
			assert.equal(await run(passing), undefined);
			assert.deepEqual(await drainViolations(), []);
		});
	});
});
