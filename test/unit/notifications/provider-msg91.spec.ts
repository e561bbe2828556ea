/**
 * MSG91 SMS provider against its golden wire fixtures (test/fixtures/providers/msg91/*.json, shapes from
 * MSG91's documentation, each fixture citing its `source`): a local HTTP server replays each recorded
 * answer; the request the provider sends must equal the fixture's (method, path, headers, body byte for
 * byte, the auth key only in header `authkey`) and the SendResult or thrown kind must equal `expect`.
 * Callbacks: the documented delivery-report bodies and inbound SMS parse to the expected reports / replies
 * with the right `?token=`; a missing / wrong / unconfigured token is 401, a body not MSG91's is 400.
 * Plus: the refusal to build without auth key, sender or templates, and no secret in any error.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Msg91Provider, msg91Provider, msg91Settings } from "../../../lib/notifications/providers/msg91";
import type { WireRequest } from "../../../lib/notifications/providers/msg91/proxy";
import {
	CallbackRejected,
	type CallbackRequest,
	type OutboundMessage,
	type Provider,
	ProviderUnavailable,
} from "../../../lib/notifications/providers/types";

const DIR = join(__dirname, "../../fixtures/providers/msg91");
const AUTH_KEY = "417263AbCdEf9Q7x2Lr9Vw6512ffa1P1";
const CALLBACK_TOKEN = "cb-token-Yt6pN3sK8wQ2";
const TEMPLATES = {
	"shipped.en": { template_id: "64f1c2a9d6fc05301b7a4e21", dlt_template_id: "1107169876543210001" },
	"delivered.hi": { template_id: "64f1c2a9d6fc05301b7a4e35", dlt_template_id: "1107169876543210042" },
};

interface FixtureResponse {
	name: string;
	status?: number;
	delay_ms?: "timeout";
	headers?: Record<string, string>;
	body?: string;
	expect: unknown;
}
interface SendFixture {
	operation: "send";
	source: string;
	input: OutboundMessage;
	request: WireRequest | null;
	responses: FixtureResponse[];
}
interface CallbackCase {
	name: string;
	headers: Record<string, string>;
	body: string;
	expect: unknown;
}
interface CallbackFixture {
	operation: "parseCallback";
	source: string;
	input: { method: "GET" | "POST"; query: Record<string, string> };
	cases: CallbackCase[];
}
type Fixture = SendFixture | CallbackFixture;
interface Seen {
	method: string;
	path: string;
	query: Record<string, string>;
	url: string;
	headers: IncomingMessage["headers"];
	raw: string;
}

const fixtures = new Map<string, Fixture>(
	readdirSync(DIR)
		.filter((f) => f.endsWith(".json"))
		.map((f) => [f.replace(/\.json$/, ""), JSON.parse(readFileSync(join(DIR, f), "utf8")) as Fixture]),
);
const sends = [...fixtures].filter((e): e is [string, SendFixture] => e[1].operation === "send");
const callbacks = [...fixtures].filter(
	(e): e is [string, CallbackFixture] => e[1].operation === "parseCallback",
);

/** A replaying MSG91: answers queued responses in order (then `fallback`), records every request. */
class Replay {
	server!: Server;
	base = "";
	queue: FixtureResponse[] = [];
	seen: Seen[] = [];
	fallback: FixtureResponse | null = null;

	async start(): Promise<void> {
		this.server = createServer((req, res) => this.handle(req, res));
		await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
		this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
	}
	reset(queue: FixtureResponse[]): void {
		this.queue = [...queue];
		this.seen = [];
		this.server.closeAllConnections();
	}
	private handle(req: IncomingMessage, res: ServerResponse): void {
		const chunks: Buffer[] = [];
		req.on("data", (c: Buffer) => chunks.push(c));
		req.on("end", () => {
			const url = new URL(req.url ?? "/", this.base);
			this.seen.push({
				method: req.method ?? "",
				path: url.pathname,
				query: Object.fromEntries(url.searchParams),
				url: req.url ?? "",
				headers: req.headers,
				raw: Buffer.concat(chunks).toString("utf8"),
			});
			const r = this.queue.shift() ?? this.fallback;
			if (!r) {
				res.writeHead(599).end();
				return;
			}
			if (r.delay_ms === "timeout") return; // never answers
			res.writeHead(r.status ?? 200, r.headers ?? {}).end(r.body ?? "");
		});
	}
}

/** The environment of a provider against `base` (an object: process.env is never touched). */
function envOf(base: string, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
	return {
		MSG91_BASE_URL: base,
		MSG91_AUTH_KEY: AUTH_KEY,
		MSG91_SENDER: "ACMETR",
		MSG91_TEMPLATES: JSON.stringify(TEMPLATES),
		MSG91_CALLBACK_TOKEN: CALLBACK_TOKEN,
		MSG91_TIMEOUT_MS: "300",
		...extra,
	};
}

/** Asserts `seen` is exactly `want` (raw body bytes and parsed JSON) and carries the key only in `authkey`. */
function assertRequest(seen: Seen | undefined, want: WireRequest, label: string): void {
	assert.ok(seen, `${label}: no request sent`);
	assert.equal(seen.method, want.method, label);
	assert.equal(seen.path, want.path, label);
	assert.deepEqual(seen.query, {}, `${label}: no query string`);
	assert.ok(!seen.url.includes(AUTH_KEY), `${label}: auth key in the URL`);
	for (const [k, v] of Object.entries(want.headers))
		assert.equal(seen.headers[k], v, `${label}: header ${k}`);
	assert.equal(seen.headers.authkey, AUTH_KEY, `${label}: authkey header`);
	assert.equal(seen.headers.authorization, undefined, label);
	assert.equal(seen.raw, JSON.stringify(want.body), `${label}: body bytes`);
	assert.deepEqual(JSON.parse(seen.raw), want.body, `${label}: JSON body`);
}

/** Asserts `run()` gives `expect`, or throws the kind (name, instance, status / message / retryAfterMs) it names. */
async function expectOutcome(run: () => unknown, expect: unknown, label: string): Promise<void> {
	const e = expect as { throws?: string; message?: string; status?: number; retryAfterMs?: number } | null;
	if (e && typeof e === "object" && "throws" in e) {
		await assert.rejects(
			async () => run(),
			(err: Error) => {
				assert.equal(err.name, e.throws, `${label}: ${err.name} ${err.message}`);
				if (e.throws === "ProviderUnavailable") assert.ok(err instanceof ProviderUnavailable, label);
				if (e.throws === "CallbackRejected") {
					assert.ok(err instanceof CallbackRejected, label);
					assert.equal(err.status, e.status, `${label}: status`);
				}
				if (e.message !== undefined) assert.equal(err.message, e.message, label);
				if (e.retryAfterMs !== undefined)
					assert.equal((err as ProviderUnavailable).retryAfterMs, e.retryAfterMs, `${label}: retryAfterMs`);
				return true;
			},
			label,
		);
		return;
	}
	assert.deepEqual(await run(), expect, label);
}

/** A POST callback with `body`, `headers` and `query`. */
function post(body: string, headers: Record<string, string>, query: Record<string, string>): CallbackRequest {
	return { method: "POST", headers, query, body: Buffer.from(body) };
}

describe("MSG91 SMS provider: golden wire fixtures", function () {
	this.timeout(15_000);
	const srv = new Replay();
	let provider: Provider;

	before(async () => {
		await srv.start();
		provider = msg91Provider(envOf(srv.base));
	});
	after(() => {
		srv.server.closeAllConnections();
		srv.server.close();
	});

	it("is the sms provider msg91, with fixtures for send and both webhooks, each citing its doc", () => {
		assert.equal(provider.name, "msg91");
		assert.equal(provider.channel, "sms");
		assert.ok(sends.length >= 3, "send fixtures");
		assert.deepEqual(callbacks.map(([f]) => f).sort(), ["callback-delivery-report", "callback-inbound-sms"]);
		for (const [file, fx] of fixtures)
			assert.match(fx.source, /^https:\/\/(docs\.|control\.)?msg91\.com\//, file);
	});

	for (const [file, fx] of sends) {
		for (const r of fx.responses) {
			it(`${file}: ${r.name}`, async () => {
				srv.reset([r]);
				await expectOutcome(() => provider.send(fx.input), r.expect, `${file}/${r.name}`);
				if (fx.request === null) {
					assert.equal(srv.seen.length, 0, "nothing is sent");
					return;
				}
				assertRequest(srv.seen[0], fx.request, `${file}/${r.name}`);
				assert.equal(srv.seen.length, 1, "no retries inside the provider");
			});
		}
	}

	for (const [file, fx] of callbacks) {
		for (const c of fx.cases) {
			it(`${file}: ${c.name}`, async () => {
				const query = { ...fx.input.query, token: CALLBACK_TOKEN };
				await expectOutcome(
					() => provider.parseCallback?.(post(c.body, c.headers, query)),
					c.expect,
					`${file}/${c.name}`,
				);
			});
		}
	}

	it("an inbound SMS forwarded as a GET with its fields in the query parses too", () => {
		const got = provider.parseCallback?.({
			method: "GET",
			headers: {},
			query: { token: CALLBACK_TOKEN, number: "919876543210", message: "stop", date: "2024-05-22 10:15:00" },
			body: Buffer.alloc(0),
		});
		assert.deepEqual(got, {
			reports: [],
			replies: [{ from: "9876543210", text: "stop", at: "2024-05-22T04:45:00.000Z" }],
		});
	});

	it("a callback with a missing, wrong or unconfigured token is refused 401 before its body is read", () => {
		const dlr = (fixtures.get("callback-delivery-report") as CallbackFixture).cases[0];
		const wrongSameLength = CALLBACK_TOKEN.replace(/.$/, (c) => (c === "x" ? "y" : "x"));
		const queries: Record<string, string>[] = [
			{},
			{ token: "" },
			{ token: wrongSameLength },
			{ token: `${CALLBACK_TOKEN}x` },
			{ token: CALLBACK_TOKEN.toUpperCase() },
			{ Token: CALLBACK_TOKEN },
		];
		for (const q of queries) {
			for (const body of [dlr.body, "not a body at all {"]) {
				assert.throws(
					() => provider.parseCallback?.(post(body, dlr.headers, q)),
					(err: Error) => err instanceof CallbackRejected && err.status === 401,
					JSON.stringify(q),
				);
			}
		}
		const noToken = msg91Provider(envOf(srv.base, { MSG91_CALLBACK_TOKEN: undefined }));
		for (const q of [{}, { token: "" }, { token: CALLBACK_TOKEN }] as Record<string, string>[]) {
			assert.throws(
				() => noToken.parseCallback?.(post(dlr.body, dlr.headers, q)),
				(err: Error) => err instanceof CallbackRejected && err.status === 401,
				`unconfigured ${JSON.stringify(q)}`,
			);
		}
	});

	it("answers failed without a call for a number that is not an Indian mobile", async () => {
		srv.reset([]);
		const fx = fixtures.get("send-shipped-en") as SendFixture;
		for (const to of ["12345", "5876543210", "447700900123"]) {
			assert.deepEqual(await provider.send({ ...fx.input, to }), {
				status: "failed",
				error: "not an Indian mobile number",
			});
		}
		assert.equal(srv.seen.length, 0);
	});

	it("a connection failure is ProviderUnavailable", async () => {
		const dead = createServer();
		await new Promise<void>((r) => dead.listen(0, "127.0.0.1", r));
		const port = (dead.address() as AddressInfo).port;
		await new Promise<void>((r) => dead.close(() => r()));
		const p = msg91Provider(envOf(`http://127.0.0.1:${port}`));
		await assert.rejects(p.send((fixtures.get("send-shipped-en") as SendFixture).input), (err: Error) => {
			assert.ok(err instanceof ProviderUnavailable);
			assert.match(err.message, /^MSG91 POST \/api\/v5\/flow\/: ECONNREFUSED$/);
			return true;
		});
	});

	it("refuses to build without auth key, sender or templates, or with unreadable templates", () => {
		const base = envOf(srv.base);
		assert.throws(() => msg91Provider({ ...base, MSG91_AUTH_KEY: undefined }), /MSG91_AUTH_KEY is not set/);
		assert.throws(() => msg91Provider({ ...base, MSG91_AUTH_KEY: "" }), /MSG91_AUTH_KEY is not set/);
		assert.throws(() => msg91Provider({ ...base, MSG91_SENDER: "  " }), /MSG91_SENDER is not set/);
		assert.throws(() => msg91Provider({ ...base, MSG91_TEMPLATES: undefined }), /MSG91_TEMPLATES is not set/);
		assert.throws(
			() => msg91Provider({ ...base, MSG91_TEMPLATES: "{shipped" }),
			/MSG91_TEMPLATES is not valid JSON/,
		);
		assert.throws(() => msg91Provider({ ...base, MSG91_TEMPLATES: "{}" }), /MSG91_TEMPLATES has no template/);
		assert.throws(
			() =>
				msg91Provider({ ...base, MSG91_TEMPLATES: JSON.stringify({ "shipped.en": { template_id: "x" } }) }),
			/"shipped.en" needs a template_id and a dlt_template_id/,
		);
		assert.throws(
			() => msg91Provider({ ...base, MSG91_TEMPLATES: JSON.stringify({ shipped: TEMPLATES["shipped.en"] }) }),
			/key "shipped" is not "<event>.<lang>"/,
		);
		assert.throws(() => msg91Provider({ ...base, MSG91_BASE_URL: "ftp://x" }), /MSG91_BASE_URL must be/);
	});

	it("reads its settings only from the env object given, with MSG91's defaults", () => {
		const s = msg91Settings({
			MSG91_AUTH_KEY: AUTH_KEY,
			MSG91_SENDER: "ACMETR",
			MSG91_TEMPLATES: JSON.stringify({
				"test.en": { template_id: "t1", dlt_template_id: 1107169876543210 },
			}),
		});
		assert.deepEqual(s, {
			baseUrl: "https://control.msg91.com",
			authKey: AUTH_KEY,
			sender: "ACMETR",
			templates: { "test.en": { template_id: "t1", dlt_template_id: "1107169876543210" } },
			callbackToken: "",
			timeoutMs: 10_000,
		});
		assert.equal(new Msg91Provider(s).settings.baseUrl, "https://control.msg91.com");
	});

	it("never puts the auth key or the callback token into an error, a result or a log line", async () => {
		const lines: string[] = [];
		const out = process.stdout.write.bind(process.stdout);
		const errw = process.stderr.write.bind(process.stderr);
		const con = {
			log: console.log,
			warn: console.warn,
			error: console.error,
			info: console.info,
			debug: console.debug,
		};
		const grab = (...a: unknown[]) => {
			lines.push(a.map(String).join(" "));
		};
		process.stdout.write = ((c: string | Uint8Array) => {
			lines.push(String(c));
			return true;
		}) as typeof process.stdout.write;
		process.stderr.write = ((c: string | Uint8Array) => {
			lines.push(String(c));
			return true;
		}) as typeof process.stderr.write;
		Object.assign(console, { log: grab, warn: grab, error: grab, info: grab, debug: grab });
		const note = (v: unknown) => lines.push(JSON.stringify(v));
		const noteErr = (err: unknown) => {
			const e = err as Error;
			lines.push(`${e.name}: ${e.message} ${e.stack ?? ""} ${JSON.stringify(e)}`);
		};
		try {
			const echoes: FixtureResponse[] = [
				{
					name: "400-echo",
					status: 400,
					body: `{"message":"authkey ${AUTH_KEY} is invalid","type":"error"}`,
					expect: null,
				},
				{
					name: "401-echo",
					status: 401,
					body: `{"message":"bad key ${AUTH_KEY}","type":"error"}`,
					expect: null,
				},
				{
					name: "200-echo",
					status: 200,
					body: `{"msg":"${AUTH_KEY} blocked","msg_type":"error"}`,
					expect: null,
				},
				{ name: "500", status: 500, body: `oops ${AUTH_KEY}`, expect: null },
				{ name: "timeout", delay_ms: "timeout", expect: null },
			];
			for (const f of [...echoes, ...sends.flatMap(([, fx]) => fx.responses)]) {
				srv.reset([]);
				srv.fallback = f;
				for (const [, fx] of sends) {
					try {
						note(await provider.send(fx.input));
					} catch (err) {
						noteErr(err);
					}
				}
			}
			for (const q of [{}, { token: "wrong" }, { token: CALLBACK_TOKEN }] as Record<string, string>[])
				for (const body of ["", "{", "data=%5B", '{"event":"ping"}']) {
					try {
						note(provider.parseCallback?.(post(body, { "content-type": "application/json" }, q)));
					} catch (err) {
						noteErr(err);
					}
				}
			for (const env of [{ MSG91_AUTH_KEY: undefined }, { MSG91_TEMPLATES: `{"x": "${AUTH_KEY}"}` }]) {
				try {
					msg91Provider(envOf(srv.base, env));
				} catch (err) {
					noteErr(err);
				}
			}
		} finally {
			srv.fallback = null;
			process.stdout.write = out;
			process.stderr.write = errw;
			Object.assign(console, con);
		}
		assert.ok(lines.length > 60, `${lines.length} lines`);
		assert.ok(
			lines.some((l) => l.includes("[redacted]")),
			"echoed keys are redacted",
		);
		for (const l of lines) {
			assert.ok(!l.includes(AUTH_KEY), `auth key printed: ${l.slice(0, 300)}`);
			assert.ok(!l.includes(CALLBACK_TOKEN), `callback token printed: ${l.slice(0, 300)}`);
		}
	});
});
