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
import { join } from "node:path";
import { Msg91Provider, msg91Provider, msg91Settings } from "../../../lib/notifications/providers/msg91";
import type { WireRequest } from "../../../lib/notifications/providers/msg91/proxy";
import {
	CallbackRejected,
	type CallbackRequest,
	type Provider,
} from "../../../lib/notifications/providers/types";
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

const DIR = join(__dirname, "../../fixtures/providers/msg91");
const AUTH_KEY = "417263AbCdEf9Q7x2Lr9Vw6512ffa1P1";
const CALLBACK_TOKEN = "cb-token-Yt6pN3sK8wQ2";
const TEMPLATES = {
	"shipped.en": { template_id: "64f1c2a9d6fc05301b7a4e21", dlt_template_id: "1107169876543210001" },
	"delivered.hi": { template_id: "64f1c2a9d6fc05301b7a4e35", dlt_template_id: "1107169876543210042" },
};

const { all: fixtures, sends, callbacks } = loadFixtures(DIR);

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
	const got = assertWireRequest(seen, want, AUTH_KEY, label);
	assert.equal(got.headers.authkey, AUTH_KEY, `${label}: authkey header`);
	assert.equal(got.headers.authorization, undefined, label);
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
	after(() => srv.stop());

	it("is the sms provider msg91, with fixtures for send and both webhooks, each citing its doc", () => {
		assert.equal(provider.name, "msg91");
		assert.equal(provider.channel, "sms");
		assert.ok(sends.length >= 3, "send fixtures");
		assert.deepEqual(callbacks.map(([f]) => f).sort(), ["callback-delivery-report", "callback-inbound-sms"]);
		for (const [file, fx] of fixtures)
			assert.match(fx.source, /^https:\/\/(docs\.|control\.)?msg91\.com\//, file);
	});

	itMatchesSendFixtures(sends, srv, (m) => provider.send(m), assertRequest);

	for (const [file, fx] of callbacks) {
		for (const c of fx.cases) {
			it(`${file}: ${c.name}`, async () => {
				const query = { ...fx.input.query, token: CALLBACK_TOKEN };
				await expectOutcome(
					() => provider.parseCallback?.(post(c.body, c.headers ?? {}, query)),
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
					() => provider.parseCallback?.(post(body, dlr.headers ?? {}, q)),
					(err: Error) => err instanceof CallbackRejected && err.status === 401,
					JSON.stringify(q),
				);
			}
		}
		const noToken = msg91Provider(envOf(srv.base, { MSG91_CALLBACK_TOKEN: undefined }));
		for (const q of [{}, { token: "" }, { token: CALLBACK_TOKEN }] as Record<string, string>[]) {
			assert.throws(
				() => noToken.parseCallback?.(post(dlr.body, dlr.headers ?? {}, q)),
				(err: Error) => err instanceof CallbackRejected && err.status === 401,
				`unconfigured ${JSON.stringify(q)}`,
			);
		}
	});

	it("answers failed without a call for a number that is not an Indian mobile", async () => {
		const fx = fixtures.get("send-shipped-en") as SendFixture;
		await assertNotIndianMobiles(srv, (m) => provider.send(m), fx.input, [
			"12345",
			"5876543210",
			"447700900123",
		]);
	});

	it("a connection failure is ProviderUnavailable", async () => {
		const p = msg91Provider(envOf(await closedBase()));
		await assertUnavailable(
			p.send((fixtures.get("send-shipped-en") as SendFixture).input),
			/^MSG91 POST \/api\/v5\/flow\/: ECONNREFUSED$/,
		);
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
		const lines = await captureOutput(async (c) => {
			const { note, noteErr } = c;
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
			await sendAgainstEach(srv, echoes, sends, (m) => provider.send(m), c);
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
		});
		assertNoSecret(lines, 60, [AUTH_KEY, CALLBACK_TOKEN]);
	});
});
