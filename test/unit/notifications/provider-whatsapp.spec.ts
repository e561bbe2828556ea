/**
 * WhatsApp Business Cloud API provider against its golden wire fixtures
 * (test/fixtures/providers/whatsapp_cloud/*.json, shapes from Meta's documentation, each fixture citing
 * its `source`): a local HTTP server replays each recorded answer; the request the provider sends must
 * equal the fixture's (method, path, headers, body byte for byte, the token only in `Authorization`) and
 * the SendResult or thrown kind must equal `expect`. Webhooks: the documented status and message payloads,
 * signed here with the app secret (`X-Hub-Signature-256`), parse to the expected reports / replies; a
 * missing / wrong signature or an unconfigured secret is 401, a body that is not a WhatsApp notification
 * 400; the subscription check GET answers `hub.challenge` only for the right verify token. Plus: no
 * secret in any error.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import {
	CallbackRejected,
	type CallbackRequest,
	type OutboundMessage,
	type Provider,
	ProviderUnavailable,
} from "../../../lib/notifications/providers/types";
import {
	validSignature,
	WhatsAppCloudProvider,
	whatsAppCloudProvider,
	whatsAppSettings,
} from "../../../lib/notifications/providers/whatsapp_cloud";
import type { WireRequest } from "../../../lib/notifications/providers/whatsapp_cloud/proxy";

const DIR = join(__dirname, "../../fixtures/providers/whatsapp_cloud");
const TOKEN = "EAAGm0PX4ZCpsBAtestTOKENq8w3ZBkLm7";
const APP_SECRET = "a1b2c3d4e5f60718293a4b5c6d7e8f90";
const VERIFY_TOKEN = "verify-Hq3Zp7Lm";

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
	request: WireRequest;
	responses: FixtureResponse[];
}
interface CallbackCase {
	name: string;
	body: string;
	expect: unknown;
}
interface CallbackFixture {
	operation: "parseCallback";
	source: string;
	input: { method: "POST" };
	cases: CallbackCase[];
}
type Fixture = SendFixture | CallbackFixture;
interface Seen {
	method: string;
	path: string;
	url: string;
	query: Record<string, string>;
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

/** A replaying Graph API: answers queued responses in order (then `fallback`), records every request. */
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
				url: req.url ?? "",
				query: Object.fromEntries(url.searchParams),
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
		WHATSAPP_BASE_URL: base,
		WHATSAPP_API_VERSION: "v21.0",
		WHATSAPP_PHONE_NUMBER_ID: "106540352242922",
		WHATSAPP_TOKEN: TOKEN,
		WHATSAPP_APP_SECRET: APP_SECRET,
		WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
		WHATSAPP_TEMPLATES: JSON.stringify({ delivered: "order_delivered_v2" }),
		WHATSAPP_TIMEOUT_MS: "300",
		...extra,
	};
}

/** `sha256=<hex>` of `body` under `secret`, as Meta signs a webhook. */
function sign(body: string, secret = APP_SECRET): string {
	return `sha256=${createHmac("sha256", secret).update(body, "utf8").digest("hex")}`;
}

/** A webhook POST of `body` with signature header `signature` (none when undefined). */
function post(body: string, signature?: string): CallbackRequest {
	const headers: Record<string, string> = { "content-type": "application/json" };
	if (signature !== undefined) headers["x-hub-signature-256"] = signature;
	return { method: "POST", headers, query: {}, body: Buffer.from(body) };
}

/** The subscription check GET with `query`. */
function check(query: Record<string, string>): CallbackRequest {
	return { method: "GET", headers: {}, query, body: Buffer.alloc(0) };
}

/** Asserts `seen` is exactly `want` (raw body bytes and parsed JSON) and carries the token only in `Authorization`. */
function assertRequest(seen: Seen | undefined, want: WireRequest, label: string): void {
	assert.ok(seen, `${label}: no request sent`);
	assert.equal(seen.method, want.method, label);
	assert.equal(seen.path, want.path, label);
	assert.deepEqual(seen.query, {}, `${label}: no query string`);
	assert.ok(!seen.url.includes(TOKEN), `${label}: token in the URL`);
	for (const [k, v] of Object.entries(want.headers))
		assert.equal(seen.headers[k], v, `${label}: header ${k}`);
	assert.equal(seen.headers.authorization, `Bearer ${TOKEN}`, `${label}: Authorization`);
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

/** Asserts `run` throws CallbackRejected with `status`. */
function rejects(run: () => unknown, status: 400 | 401, label: string): void {
	assert.throws(run, (err: Error) => err instanceof CallbackRejected && err.status === status, label);
}

describe("WhatsApp Cloud API provider: golden wire fixtures", function () {
	this.timeout(15_000);
	const srv = new Replay();
	let provider: Provider;

	before(async () => {
		await srv.start();
		provider = whatsAppCloudProvider(envOf(srv.base));
	});
	after(() => {
		srv.server.closeAllConnections();
		srv.server.close();
	});

	it("is the whatsapp provider whatsapp_cloud, with fixtures for send and the webhooks, each citing Meta's docs", () => {
		assert.equal(provider.name, "whatsapp_cloud");
		assert.equal(provider.channel, "whatsapp");
		assert.ok(sends.length >= 2, "send fixtures");
		assert.deepEqual(callbacks.map(([f]) => f).sort(), ["callback-messages", "callback-statuses"]);
		for (const [file, fx] of fixtures)
			assert.match(fx.source, /^https:\/\/developers\.facebook\.com\//, file);
	});

	for (const [file, fx] of sends) {
		for (const r of fx.responses) {
			it(`${file}: ${r.name}`, async () => {
				srv.reset([r]);
				await expectOutcome(() => provider.send(fx.input), r.expect, `${file}/${r.name}`);
				assertRequest(srv.seen[0], fx.request, `${file}/${r.name}`);
				assert.equal(srv.seen.length, 1, "no retries inside the provider");
			});
		}
	}

	for (const [file, fx] of callbacks) {
		for (const c of fx.cases) {
			it(`${file}: ${c.name} (signed)`, async () => {
				await expectOutcome(
					() => provider.parseCallback?.(post(c.body, sign(c.body))),
					c.expect,
					`${file}/${c.name}`,
				);
			});
		}
	}

	it("a webhook with a missing, wrong or foreign signature is refused 401 before its body is read", () => {
		const body = (fixtures.get("callback-statuses") as CallbackFixture).cases[0].body;
		const good = sign(body);
		const flipped = good.replace(/.$/, (c) => (c === "0" ? "1" : "0"));
		const bad = [
			undefined,
			"",
			good.slice("sha256=".length),
			`sha1=${good.slice("sha256=".length)}`,
			flipped,
			`${good}00`,
			sign(body, "another-app-secret"),
			sign(`${body} `),
			"sha256=zz",
		];
		for (const sig of bad) rejects(() => provider.parseCallback?.(post(body, sig)), 401, String(sig));
		rejects(() => provider.parseCallback?.(post(`${body} `, good)), 401, "body changed after signing");
		rejects(
			() => provider.parseCallback?.(post("not json {", sign("{}"))),
			401,
			"garbage with a foreign signature",
		);
		assert.ok(
			validSignature(Buffer.from(body), good.toUpperCase().replace("SHA256=", "sha256="), APP_SECRET),
		);
		const noSecret = whatsAppCloudProvider(envOf(srv.base, { WHATSAPP_APP_SECRET: undefined }));
		for (const sig of [good, sign(body, "")])
			rejects(() => noSecret.parseCallback?.(post(body, sig)), 401, `no secret configured, ${sig}`);
	});

	it("the subscription check answers hub.challenge for the right verify token only", () => {
		const ok = { "hub.mode": "subscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "1158201444" };
		assert.deepEqual(provider.parseCallback?.(check(ok)), { reports: [], replies: [], answer: "1158201444" });
		rejects(
			() => provider.parseCallback?.(check({ ...ok, "hub.verify_token": "verify-Hq3Zp7Lx" })),
			401,
			"wrong",
		);
		rejects(() => provider.parseCallback?.(check({ ...ok, "hub.verify_token": "" })), 401, "empty");
		rejects(
			() => provider.parseCallback?.(check({ "hub.mode": "subscribe", "hub.challenge": "1" })),
			401,
			"missing",
		);
		rejects(() => provider.parseCallback?.(check({ ...ok, "hub.mode": "unsubscribe" })), 401, "mode");
		rejects(() => provider.parseCallback?.(check({ ...ok, "hub.challenge": "" })), 400, "no challenge");
		const noToken = whatsAppCloudProvider(envOf(srv.base, { WHATSAPP_VERIFY_TOKEN: undefined }));
		rejects(
			() => noToken.parseCallback?.(check({ ...ok, "hub.verify_token": "" })),
			401,
			"unconfigured, empty",
		);
		rejects(() => noToken.parseCallback?.(check(ok)), 401, "unconfigured");
	});

	it("answers failed without a call for a number that is not an Indian mobile", async () => {
		srv.reset([]);
		const fx = fixtures.get("send-shipped-en") as SendFixture;
		for (const to of ["12345", "16315551181", "0000000000"]) {
			assert.deepEqual(await provider.send({ ...fx.input, to }), {
				status: "failed",
				error: "not an Indian mobile number",
			});
		}
		assert.equal(srv.seen.length, 0);
	});

	it("sends no components for a message without variables", async () => {
		const ok = (fixtures.get("send-shipped-en") as SendFixture).responses[0];
		srv.reset([ok]);
		const fx = fixtures.get("send-shipped-en") as SendFixture;
		assert.equal((await provider.send({ ...fx.input, event: "test", vars: {} })).status, "sent");
		assert.deepEqual(JSON.parse(srv.seen[0].raw).template, { name: "test", language: { code: "en" } });
	});

	it("a connection failure is ProviderUnavailable", async () => {
		const dead = createServer();
		await new Promise<void>((r) => dead.listen(0, "127.0.0.1", r));
		const port = (dead.address() as AddressInfo).port;
		await new Promise<void>((r) => dead.close(() => r()));
		const p = whatsAppCloudProvider(envOf(`http://127.0.0.1:${port}`));
		await assert.rejects(p.send((fixtures.get("send-shipped-en") as SendFixture).input), (err: Error) => {
			assert.ok(err instanceof ProviderUnavailable);
			assert.equal(err.message, "WhatsApp POST /v21.0/106540352242922/messages: ECONNREFUSED");
			return true;
		});
	});

	it("refuses to build without phone number id or token, or with unreadable templates", () => {
		const base = envOf(srv.base);
		assert.throws(
			() => whatsAppCloudProvider({ ...base, WHATSAPP_PHONE_NUMBER_ID: undefined }),
			/WHATSAPP_PHONE_NUMBER_ID is not set/,
		);
		assert.throws(() => whatsAppCloudProvider({ ...base, WHATSAPP_TOKEN: "" }), /WHATSAPP_TOKEN is not set/);
		assert.throws(
			() => whatsAppCloudProvider({ ...base, WHATSAPP_TEMPLATES: "{" }),
			/WHATSAPP_TEMPLATES is not valid JSON/,
		);
		assert.throws(
			() => whatsAppCloudProvider({ ...base, WHATSAPP_TEMPLATES: '{"shipped": "Order Shipped"}' }),
			/WHATSAPP_TEMPLATES: "shipped" needs a template name/,
		);
		assert.throws(
			() => whatsAppCloudProvider({ ...base, WHATSAPP_API_VERSION: "21" }),
			/WHATSAPP_API_VERSION/,
		);
		assert.throws(
			() => whatsAppCloudProvider({ ...base, WHATSAPP_PHONE_NUMBER_ID: "../x" }),
			/must be digits/,
		);
	});

	it("reads its settings only from the env object given, with Meta's defaults", () => {
		const s = whatsAppSettings({ WHATSAPP_PHONE_NUMBER_ID: "106540352242922", WHATSAPP_TOKEN: TOKEN });
		assert.deepEqual(s, {
			baseUrl: "https://graph.facebook.com",
			version: "v21.0",
			phoneNumberId: "106540352242922",
			token: TOKEN,
			appSecret: "",
			verifyToken: "",
			templates: {},
			timeoutMs: 10_000,
		});
		assert.equal(new WhatsAppCloudProvider(s).settings.baseUrl, "https://graph.facebook.com");
	});

	it("never puts the access token, app secret or verify token into an error, a result or a log line", async () => {
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
		const echo = (status: number, code: number) =>
			({
				name: `echo-${code}`,
				status,
				body: JSON.stringify({
					error: { message: `Invalid OAuth access token - ${TOKEN}`, code, error_data: { details: TOKEN } },
				}),
				expect: null,
			}) satisfies FixtureResponse;
		try {
			const failures: FixtureResponse[] = [
				echo(400, 100),
				echo(400, 130429),
				echo(401, 190),
				echo(400, 2),
				{ name: "500", status: 500, body: `oops ${TOKEN}`, expect: null },
				{ name: "timeout", delay_ms: "timeout", expect: null },
			];
			for (const f of [...failures, ...sends.flatMap(([, fx]) => fx.responses)]) {
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
			for (const sig of [undefined, "sha256=00", sign("{", "x")])
				for (const body of ["", "{", '{"object":"page"}']) {
					try {
						note(provider.parseCallback?.(post(body, sig)));
					} catch (err) {
						noteErr(err);
					}
				}
			for (const q of [
				{ "hub.mode": "subscribe", "hub.verify_token": "nope", "hub.challenge": "1" },
				{},
			] as Record<string, string>[]) {
				try {
					note(provider.parseCallback?.(check(q)));
				} catch (err) {
					noteErr(err);
				}
			}
			try {
				whatsAppCloudProvider(envOf(srv.base, { WHATSAPP_TEMPLATES: JSON.stringify({ shipped: TOKEN }) }));
			} catch (err) {
				noteErr(err);
			}
		} finally {
			srv.fallback = null;
			process.stdout.write = out;
			process.stderr.write = errw;
			Object.assign(console, con);
		}
		assert.ok(lines.length > 50, `${lines.length} lines`);
		assert.ok(
			lines.some((l) => l.includes("[redacted]")),
			"echoed tokens are redacted",
		);
		for (const l of lines)
			for (const secret of [TOKEN, APP_SECRET, VERIFY_TOKEN])
				assert.ok(!l.includes(secret), `secret printed: ${l.slice(0, 300)}`);
	});
});
