/**
 * The gateway's edge (issue 31; docs/decisions/0079-edge-text-rule.md),
 * through real HTTP on the gateway with fake services and the development IdP,
 * with every log entry of the broker captured:
 * - the edge text rule (lib/gateway/text-rule.ts): a control character or an
 *   unpaired surrogate in a query value or key, a path parameter, a JSON / form
 *   body value or key is 400 `validation_failed` with `details`, before any
 *   action (and before the token); TAB / LF / CR pass;
 * - bodies that do not decode: a `Content-Encoding` that does not match the
 *   bytes is 400 `invalid_body`, an unsupported encoding or a charset other
 *   than UTF-8 is 415 `unsupported_media_type`, on /v1, /auth/v1/token and the
 *   courier webhook route, and nothing is logged at error level;
 * - HEAD wherever GET is served: the GET's status and headers, no body.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { brotliCompressSync, deflateSync, gzipSync, zstdCompressSync } from "node:zlib";
import type { Context, ServiceBroker } from "moleculer";
import { type AccessLogPolicy, EVERY_REQUEST } from "../../../lib/gateway/http";
import {
	assertCleanText,
	isCleanText,
	MAX_TEXT_DETAILS,
	textViolations,
} from "../../../lib/gateway/text-rule";
import { documentsError } from "../../../lib/platform/errors";
import { captureLines } from "../../../lib/platform/stdout-sink";
import { zeroSetupAuth } from "../../../lib/platform/system";
import { skipContract } from "../../helpers/contract";
import { CaptureLogger } from "../../helpers/logs";
import { freePort } from "../../helpers/net";
import { type Answer, calls, FAKES, http, PDF, setEnv, startGateway } from "./setup";

/** The fakes, plus the courier push (webhook route) and the signed label link (link route). */
const EDGE_FAKES = [
	...FAKES.map((f) =>
		f.name === "booking"
			? {
					...f,
					actions: {
						...f.actions,
						courierPush: (ctx: Context<any>) => ({
							accepted: 0,
							bytes: Buffer.from(ctx.params.body, "base64").length,
						}),
					},
				}
			: f.name === "documents"
				? {
						...f,
						actions: {
							...f.actions,
							labelLink(ctx: Context<any, any>) {
								if (ctx.params.token !== "good") throw documentsError(404, "not found");
								ctx.meta.$responseType = "application/pdf";
								return PDF;
							},
						},
					}
				: f,
	),
];

const CONTROL = "must not contain control characters";

/** Compressors of the Content-Encodings body-parser reads. */
const ENCODERS: Record<string, (b: Buffer) => Buffer> = {
	gzip: gzipSync,
	deflate: deflateSync,
	br: brotliCompressSync,
	zstd: zstdCompressSync,
};

describe("gateway: the edge text rule (unit)", () => {
	it("names each offending string by its path; keys by their object; TAB/LF/CR and valid pairs pass", () => {
		assert.deepEqual(textViolations({ a: "ok\t\n\r😀", b: [1, null, true, { c: "x" }] }), []);
		assert.deepEqual(textViolations({ a: "\u0000", b: [{ c: "\u009f" }], "x y": { "\u0001": 1 } }), [
			`a: ${CONTROL}`,
			`b[0].c: ${CONTROL}`,
			`["x y"]: keys ${CONTROL}`,
		]);
		assert.deepEqual(textViolations("\ud800"), ["value: must not contain unpaired surrogates"]);
		assert.equal(isCleanText("a\u007fb"), false);
		assert.equal(isCleanText("\ud83d\ude00"), true);
		assert.equal(isCleanText("\ude00\ud83d"), false);
	});

	it("a key naming a built-in property of objects is refused at any depth (record 0128); its value is not walked", () => {
		const BUILT_IN =
			"keys must not name a built-in property of objects (toString, constructor, __proto__, …)";
		assert.deepEqual(textViolations(JSON.parse('{"channel":[{"toString":""}],"to":"9876543210"}')), [
			`channel[0]: ${BUILT_IN}`,
		]);
		assert.deepEqual(textViolations(JSON.parse('{"valueOf":1,"a":{"b":{"__proto__":{"x":1}}}}')), [
			`parameter names: ${BUILT_IN.slice("keys ".length)}`,
			`a.b: ${BUILT_IN}`,
		]);
		for (const k of ["constructor", "hasOwnProperty", "isPrototypeOf", "toLocaleString", "__defineGetter__"])
			assert.equal(textViolations({ o: { [k]: "\u0000" } }).length, 1, k);
		// a name that merely contains one, or differs in case, is an ordinary key
		assert.deepEqual(
			textViolations({ o: { to_string: "", ToString: "", my_constructor: "", proto: "" } }),
			[],
		);
	});

	it("lists at most MAX_TEXT_DETAILS entries, and walks any depth without recursion", () => {
		const many = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, "\u0000"]));
		assert.equal(textViolations(many).length, MAX_TEXT_DETAILS);
		let deep: unknown = "\u0000";
		for (let i = 0; i < 100_000; i++) deep = [deep];
		assert.equal(textViolations(deep).length, 1);
	});

	it("assertCleanText throws a 400 validation_failed GatewayError with details", () => {
		assert.doesNotThrow(() => assertCleanText({ a: "b" }));
		assert.throws(
			() => assertCleanText({ a: "\u0000", b: "\u0001" }),
			(e: any) =>
				e.code === 400 &&
				e.type === "validation_failed" &&
				e.message === "Validation failed" &&
				e.data.details.length === 2,
		);
	});
});

describe("gateway: the edge (text rule, undecodable bodies, HEAD)", () => {
	skipContract("gateway mechanics on fake services", "success");
	const logs = new CaptureLogger();
	let broker: ServiceBroker;
	let base: string;
	let token: string;
	let restoreEnv: () => void;
	let dir: string;

	before(async () => {
		dir = mkdtempSync(join(tmpdir(), "msa-edge-"));
		restoreEnv = setEnv({
			PORT: String(await freePort()),
			AUTH_JWKS_URL: undefined,
			AUTH_ISSUER: undefined,
			AUTH_AUDIENCE: undefined,
			MSA_DEV_IDP: undefined,
			MSA_DATA_DIR: dir,
			MSA_DEV_USERS_FILE: resolve(__dirname, "../../../config/dev-users.json"),
			GATEWAY_ACCESS_LOG: "0",
		});
		assert.equal(zeroSetupAuth(process.env), true);
		({ broker, base } = await startGateway(EDGE_FAKES, { services: ["devauth", "gateway"], logger: logs }));
		const login = await http(base, "POST", "/auth/v1/token?grant_type=password", {
			body: { email: "merchant@example.com", password: "merchant-pass" },
		});
		assert.equal(login.status, 200, login.text);
		token = login.body.access_token;
	});

	after(async () => {
		await broker?.stop();
		restoreEnv?.();
		rmSync(dir, { recursive: true, force: true });
	});

	beforeEach(() => logs.clear());
	afterEach(function () {
		// no request of this file may log an error (a 500, a stack): every answer here is a 4xx or a success
		if (this.currentTest?.state === "passed") assert.deepEqual(logs.errors(), []);
	});

	/** Asserts a 400 validation_failed with exactly `details`. */
	function refused(a: Answer, details: string[]): void {
		assert.equal(a.status, 400, a.text);
		assert.equal(a.body.error, "validation_failed", a.text);
		assert.deepEqual(a.body.details, details);
		assert.equal(a.body.message, details.length === 1 ? details[0] : "Validation failed");
	}

	describe("the edge text rule", () => {
		it("a NUL or another control character in a query value is 400, before the action runs", async () => {
			const before = calls["intake.status"] ?? 0;
			for (const v of ["A%00B", "%01", "x%1B", "%7F", "%C2%85", "%C2%9F"]) {
				refused(await http(base, "GET", `/v1/orders/status?order_no=${v}`, { token }), [
					`order_no: ${CONTROL}`,
				]);
			}
			assert.equal(calls["intake.status"] ?? 0, before);
		});

		it("TAB, LF and CR pass; so do other Unicode text and a valid surrogate pair", async () => {
			const r = await http(
				base,
				"GET",
				`/v1/orders/status?order_no=${encodeURIComponent("a\tb\nc\r😀 é\u00a0")}`,
				{
					token,
				},
			);
			assert.equal(r.status, 200, r.text);
			assert.equal(r.body.params.order_no, "a\tb\nc\r😀 é\u00a0");
			const b = await http(base, "POST", "/v1/intake/order", {
				token,
				body: '{"comment":"line 1\\nline 2\\t\\ud83d\\ude00"}',
				headers: { "content-type": "application/json" },
			});
			assert.equal(b.status, 201, b.text);
			assert.equal(b.body.params.comment, "line 1\nline 2\t😀");
		});

		it("a control character in a query key, a path parameter", async () => {
			refused(await http(base, "GET", "/v1/orders/status?order_no=A&x%00y=1", { token }), [
				`parameter names: ${CONTROL}`,
			]);
			refused(await http(base, "GET", "/v1/pincode/1100%0001", { token }), [`pincode: ${CONTROL}`]);
			refused(await http(base, "PATCH", "/v1/warehouses/1%0A2%00", { token, body: {} }), [`id: ${CONTROL}`]);
		});

		it("a control character in a JSON body value or key, at any depth", async () => {
			const post = (body: string) =>
				http(base, "POST", "/v1/intake/order", {
					token,
					body,
					headers: { "content-type": "application/json" },
				});
			refused(await post('{"comment":"a\\u0000b"}'), [`comment: ${CONTROL}`]);
			refused(await post('{"receiver":{"name":"x\\u0001"}}'), [`receiver.name: ${CONTROL}`]);
			refused(await post('{"items":[{"n":"ok"},{"n":"\\u001f"}]}'), [`items[1].n: ${CONTROL}`]);
			refused(await post('{"a\\u0000b":1}'), [`parameter names: ${CONTROL}`]);
			refused(await post('{"order":{"\\u0000":1}}'), [`order: keys ${CONTROL}`]);
			refused(await post('{"tags":["ok","\\u0085"]}'), [`tags[1]: ${CONTROL}`]);
			refused(await post('{"a":"\\u0000","b":{"c":"\\u0007"}}'), [`a: ${CONTROL}`, `b.c: ${CONTROL}`]);
			// a key that is not a plain name is quoted in the path, never the offending value
			refused(await post('{"x y":{"z":"\\u0000"}}'), [`["x y"].z: ${CONTROL}`]);
		});

		it("an unpaired surrogate in a body value or key", async () => {
			const post = (body: string) =>
				http(base, "POST", "/v1/intake/order", {
					token,
					body,
					headers: { "content-type": "application/json" },
				});
			refused(await post('{"comment":"a\\ud800b"}'), ["comment: must not contain unpaired surrogates"]);
			refused(await post('{"comment":"\\udc00"}'), ["comment: must not contain unpaired surrogates"]);
			refused(await post('{"\\ud800":1}'), ["parameter names: must not contain unpaired surrogates"]);
		});

		it("is checked before the token: without one, a NUL is still 400", async () => {
			refused(await http(base, "GET", "/v1/orders/status?order_no=A%00B"), [`order_no: ${CONTROL}`]);
			refused(await http(base, "POST", "/v1/intake/order", { body: { comment: "\u0000" } }), [
				`comment: ${CONTROL}`,
			]);
		});

		it("under /v1/documents/ the 400 is the §7 {message} shape; the signed link stays a plain 404", async () => {
			const d = await http(base, "GET", "/v1/documents/label/1%002", { token });
			assert.equal(d.status, 400);
			assert.deepEqual(d.body, { message: `orderId: ${CONTROL}` });
			const l = await http(base, "GET", "/v1/documents/label/t/a%00b");
			assert.equal(l.status, 404);
			assert.equal(l.text, "Not found\n");
			assert.equal(l.headers.get("content-type"), "text/plain; charset=utf-8");
		});

		it("the docs route is unaffected", async () => {
			assert.equal((await http(base, "GET", "/v1/openapi.json?x=%00")).status, 200);
			const f = await http(base, "GET", "/docs/a%00b");
			assert.equal(f.status, 404);
			assert.equal(f.body.error, "not_found");
		});

		it("the dev IdP login: JSON and form bodies, and the query", async () => {
			const url = "/auth/v1/token?grant_type=password";
			refused(await http(base, "POST", url, { body: { email: "a\u0000@example.com", password: "x" } }), [
				`email: ${CONTROL}`,
			]);
			refused(
				await http(base, "POST", url, {
					body: "username=a%00b&password=x",
					headers: { "content-type": "application/x-www-form-urlencoded" },
				}),
				[`username: ${CONTROL}`],
			);
			refused(await http(base, "POST", "/auth/v1/token?grant_type=pass%00word", { body: {} }), [
				`grant_type: ${CONTROL}`,
			]);
		});
	});

	describe("bodies that do not decode: 400 / 415, never 500, nothing logged", () => {
		const json = Buffer.from('{"email":"merchant@example.com","password":"merchant-pass","comment":"x"}');
		const ROUTES = [
			{ path: "/v1/intake/order", auth: true, ok: 201 },
			{ path: "/auth/v1/token?grant_type=password", auth: false, ok: 200 },
			{ path: "/v1/tracking/webhooks/sbx-express", auth: false, ok: 200 },
		];
		const send = (path: string, body: Buffer, headers: Record<string, string>, auth: boolean) =>
			http(base, "POST", path, {
				body,
				headers: { "content-type": "application/json", ...headers },
				...(auth ? { token } : {}),
			});

		for (const r of ROUTES) {
			it(`${r.path}: each Content-Encoding whose bytes do not match is 400 invalid_body; matching bytes are read`, async () => {
				for (const [enc, encode] of Object.entries(ENCODERS)) {
					const packed = encode(json);
					const bad = [
						json,
						packed.subarray(0, Math.max(1, packed.length - 4)),
						Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3]),
						Buffer.alloc(0),
					];
					for (const body of bad) {
						for (const auth of [false, true]) {
							const a = await send(r.path, body, { "content-encoding": enc }, auth);
							assert.equal(a.status, 400, `${enc} ${body.length}: ${a.text}`);
							assert.equal(a.body.error, "invalid_body", `${enc}: ${a.text}`);
							assert.equal(typeof a.body.message, "string");
						}
					}
					const good = await send(r.path, packed, { "content-encoding": enc.toUpperCase() }, r.auth);
					assert.equal(good.status, r.ok, `${enc}: ${good.text}`);
				}
			});

			it(`${r.path}: an unsupported Content-Encoding is 415 unsupported_media_type`, async () => {
				for (const enc of ["bogus", "compress", "gzip, br", "x-gzip"]) {
					const a = await send(r.path, json, { "content-encoding": enc }, r.auth);
					assert.equal(a.status, 415, `${enc}: ${a.text}`);
					assert.equal(a.body.error, "unsupported_media_type");
				}
				const id = await send(r.path, json, { "content-encoding": "identity" }, r.auth);
				assert.equal(id.status, r.ok, id.text);
			});
		}

		for (const r of ROUTES.slice(0, 2)) {
			it(`${r.path}: a charset other than UTF-8 is 415 unsupported_media_type (JSON is UTF-8)`, async () => {
				const odd = Buffer.concat([Buffer.from(json.toString("utf16le")), Buffer.from([0x7b])]);
				for (const cs of [
					"utf-7",
					"utf-16",
					"utf-16le",
					"utf-16be",
					"utf-32",
					"latin1",
					"utf8",
					"bogus",
					"utf-8x",
				]) {
					for (const body of [json, Buffer.from(json.toString(), "utf16le"), odd]) {
						const a = await send(r.path, body, { "content-type": `application/json; charset=${cs}` }, r.auth);
						assert.equal(a.status, 415, `${cs}: ${a.text}`);
						assert.equal(a.body.error, "unsupported_media_type");
					}
				}
				for (const cs of ["utf-8", "UTF-8", '"utf-8"']) {
					const a = await send(r.path, json, { "content-type": `application/json; charset=${cs}` }, r.auth);
					assert.equal(a.status, r.ok, `${cs}: ${a.text}`);
				}
			});
		}

		it("/auth/v1/token: a form body that is not gzip is 400 invalid_body; a gzip form is read", async () => {
			const form = "username=merchant%40example.com&password=merchant-pass";
			const headers = { "content-type": "application/x-www-form-urlencoded", "content-encoding": "gzip" };
			const bad = await http(base, "POST", "/auth/v1/token?grant_type=password", { body: form, headers });
			assert.deepEqual([bad.status, bad.body.error], [400, "invalid_body"]);
			const good = await http(base, "POST", "/auth/v1/token?grant_type=password", {
				body: gzipSync(form),
				headers,
			});
			assert.equal(good.status, 200, good.text);
		});

		it("/auth/v1/token: a form body in another charset is 415 too", async () => {
			for (const cs of ["utf-7", "utf-16", "utf-32", "bogus"]) {
				const a = await http(base, "POST", "/auth/v1/token?grant_type=password", {
					body: "username=merchant%40example.com&password=merchant-pass",
					headers: { "content-type": `application/x-www-form-urlencoded; charset=${cs}` },
				});
				assert.equal(a.status, 415, `${cs}: ${a.text}`);
				assert.equal(a.body.error, "unsupported_media_type");
			}
		});

		it("the courier route keeps any charset (the raw bytes are signed): it reaches the action", async () => {
			const a = await send(
				"/v1/tracking/webhooks/sbx-express",
				json,
				{ "content-type": "application/json; charset=utf-32" },
				false,
			);
			assert.equal(a.status, 200, a.text);
			assert.equal(a.body.bytes, json.length);
		});
	});

	describe("HEAD wherever GET is served", () => {
		/** Asserts HEAD answers as GET: status, the headers that describe the body, no body. */
		async function sameAsGet(path: string, o: { token?: string; status?: number } = {}): Promise<Answer> {
			const get = await http(base, "GET", path, o);
			const head = await http(base, "HEAD", path, o);
			if (o.status !== undefined) assert.equal(get.status, o.status, `${path}: ${get.text}`);
			assert.equal(head.status, get.status, path);
			assert.equal(head.bytes.length, 0, path);
			for (const h of [
				"content-type",
				"content-length",
				"etag",
				"cache-control",
				"www-authenticate",
				"allow",
			]) {
				assert.equal(head.headers.get(h), get.headers.get(h), `${path}: ${h}`);
			}
			if (get.bytes.length > 0 && !get.headers.get("transfer-encoding")) {
				assert.equal(head.headers.get("content-length"), String(get.bytes.length), path);
			}
			assert.ok(head.headers.get("x-request-id"));
			return head;
		}

		it("probes, the OpenAPI document, the docs page and its assets", async () => {
			await sameAsGet("/health", { status: 200 });
			await sameAsGet("/ready", { status: 200 });
			await sameAsGet("/v1/openapi.json", { status: 200 });
			await sameAsGet("/docs", { status: 200 });
			await sameAsGet("/docs/swagger-ui.css", { status: 200 });
			await sameAsGet("/docs/nope.js", { status: 404 });
			await sameAsGet("/auth/v1/.well-known/jwks.json", { status: 200 });
		});

		it("bearer /v1 GET routes: JSON, PDF, errors; without a token the same 401", async () => {
			const before = calls["intake.status"] ?? 0;
			await sameAsGet("/v1/orders/status?order_no=A", { token, status: 200 });
			assert.equal(calls["intake.status"], before + 2, "HEAD calls the GET's action");
			await sameAsGet("/v1/orders/status?order_no=missing", { token, status: 404 });
			await sameAsGet("/v1/documents/label/7", { token, status: 200 });
			await sameAsGet("/v1/documents/label/404", { token, status: 404 });
			await sameAsGet("/v1/warehouses", { token, status: 200 });
			await sameAsGet("/v1/warehouses", { status: 401 });
			await sameAsGet("/v1/orders/status?order_no=A", { token: "not-a-token", status: 401 });
			await sameAsGet("/v1/orders/status?order_no=A%00", { token, status: 400 });
		});

		it("signed label links: the PDF, and the plain-text 404", async () => {
			await sameAsGet("/v1/documents/label/t/good", { status: 200 });
			const nf = await sameAsGet("/v1/documents/label/t/bad", { status: 404 });
			assert.equal(nf.headers.get("content-type"), "text/plain; charset=utf-8");
		});

		it("the access log records HEAD, with the GET's status", async () => {
			const gw = broker.getLocalService("gateway") as unknown as { accessLog?: AccessLogPolicy };
			const lines: string[] = [];
			gw.accessLog = EVERY_REQUEST;
			const release = captureLines((line) => lines.push(line));
			try {
				const h = await http(base, "HEAD", "/v1/orders/status?order_no=A", { token });
				assert.equal(h.status, 200);
				await new Promise((r) => setTimeout(r, 50));
			} finally {
				release();
				gw.accessLog = undefined;
			}
			const entry = lines.map((l) => JSON.parse(l)).find((e) => e.path === "/v1/orders/status");
			assert.equal(entry?.method, "HEAD", lines.join(""));
			assert.equal(entry?.status, 200);
		});

		it("405 and OPTIONS list HEAD wherever they list GET; HEAD on a POST-only path is 405", async () => {
			const d = await http(base, "DELETE", "/v1/orders/status", { token });
			assert.equal(d.status, 405);
			assert.deepEqual(d.headers.get("allow")?.split(", ").sort(), ["GET", "HEAD"]);
			const o = await http(base, "OPTIONS", "/v1/warehouses");
			assert.equal(o.status, 204);
			assert.deepEqual(o.headers.get("allow")?.split(", ").sort(), ["GET", "HEAD", "POST"]);
			const h = await http(base, "HEAD", "/v1/intake/order", { token });
			assert.equal(h.status, 405);
			assert.equal(h.headers.get("allow"), "POST");
			assert.equal(h.bytes.length, 0);
			await sameAsGet("/v1/no/such/route", { status: 404 });
		});
	});
});
