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
import { join } from "node:path";
import {
	CallbackRejected,
	type CallbackRequest,
	type Provider,
} from "../../../lib/notifications/providers/types";
import {
	validSignature,
	WhatsAppCloudProvider,
	whatsAppCloudProvider,
	whatsAppSettings,
} from "../../../lib/notifications/providers/whatsapp_cloud";
import type { WireRequest } from "../../../lib/notifications/providers/whatsapp_cloud/proxy";
import {
	assertNoSecret,
	assertNotIndianMobiles,
	assertUnavailable,
	assertWireRequest,
	type CallbackFixture,
	captureOutput,
	closedBase,
	expectOutcome,
	type FixtureResponse,
	itMatchesSendFixtures,
	loadFixtures,
	Replay,
	type Seen,
	type SendFixture,
	sendAgainstEach,
} from "../../helpers/provider-replay";

const DIR = join(__dirname, "../../fixtures/providers/whatsapp_cloud");
const TOKEN = "EAAGm0PX4ZCpsBAtestTOKENq8w3ZBkLm7";
const APP_SECRET = "a1b2c3d4e5f60718293a4b5c6d7e8f90";
const VERIFY_TOKEN = "verify-Hq3Zp7Lm";

const { all: fixtures, sends, callbacks } = loadFixtures<SendFixture<WireRequest>>(DIR);

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
	const got = assertWireRequest(seen, want, TOKEN, label);
	assert.equal(got.headers.authorization, `Bearer ${TOKEN}`, `${label}: Authorization`);
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
	after(() => srv.stop());

	it("is the whatsapp provider whatsapp_cloud, with fixtures for send and the webhooks, each citing Meta's docs", () => {
		assert.equal(provider.name, "whatsapp_cloud");
		assert.equal(provider.channel, "whatsapp");
		assert.ok(sends.length >= 2, "send fixtures");
		assert.deepEqual(callbacks.map(([f]) => f).sort(), ["callback-messages", "callback-statuses"]);
		for (const [file, fx] of fixtures)
			assert.match(fx.source, /^https:\/\/developers\.facebook\.com\//, file);
	});

	itMatchesSendFixtures(sends, srv, (m) => provider.send(m), assertRequest);

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
		const fx = fixtures.get("send-shipped-en") as SendFixture;
		await assertNotIndianMobiles(srv, (m) => provider.send(m), fx.input, [
			"12345",
			"16315551181",
			"0000000000",
		]);
	});

	it("sends no components for a message without variables", async () => {
		const ok = (fixtures.get("send-shipped-en") as SendFixture).responses[0];
		srv.reset([ok]);
		const fx = fixtures.get("send-shipped-en") as SendFixture;
		assert.equal((await provider.send({ ...fx.input, event: "test", vars: {} })).status, "sent");
		assert.deepEqual(JSON.parse(srv.seen[0].raw).template, { name: "test", language: { code: "en" } });
	});

	it("a connection failure is ProviderUnavailable", async () => {
		const p = whatsAppCloudProvider(envOf(await closedBase()));
		await assertUnavailable(
			p.send((fixtures.get("send-shipped-en") as SendFixture).input),
			"WhatsApp POST /v21.0/106540352242922/messages: ECONNREFUSED",
		);
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
		const echo = (status: number, code: number) =>
			({
				name: `echo-${code}`,
				status,
				body: JSON.stringify({
					error: { message: `Invalid OAuth access token - ${TOKEN}`, code, error_data: { details: TOKEN } },
				}),
				expect: null,
			}) satisfies FixtureResponse;
		const lines = await captureOutput(async (c) => {
			const { note, noteErr } = c;
			const failures: FixtureResponse[] = [
				echo(400, 100),
				echo(400, 130429),
				echo(401, 190),
				echo(400, 2),
				{ name: "500", status: 500, body: `oops ${TOKEN}`, expect: null },
				{ name: "timeout", delay_ms: "timeout", expect: null },
			];
			await sendAgainstEach(srv, failures, sends, (m) => provider.send(m), c);
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
		});
		assertNoSecret(lines, 50, [TOKEN, APP_SECRET, VERIFY_TOKEN]);
	});
});
