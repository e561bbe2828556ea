/**
 * The SMTP e-mail provider (issue 29; lib/notifications/providers/smtp) against a real SMTP
 * server on 127.0.0.1 (the `smtp-server` package: random port, AUTH required, no STARTTLS):
 * what the server RECEIVED (envelope, headers, text and HTML parts; the golden fixture
 * test/fixtures/providers/smtp/shipped-en.json), and how its answers map: accepted → `sent`
 * with our Message-ID, a 5xx refusal of the recipient or data → `failed` with its words, 4xx /
 * connection / timeout / authentication failure → ProviderUnavailable, never with the password.
 * Settings are passed as an explicit env object; process.env is never touched.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";
import { smtpProvider } from "../../../lib/notifications/providers/smtp";
import { resultOf } from "../../../lib/notifications/providers/smtp/mapper";
import type { SmtpFailure } from "../../../lib/notifications/providers/smtp/proxy";
import {
	type OutboundMessage,
	type Provider,
	ProviderUnavailable,
	type SendResult,
} from "../../../lib/notifications/providers/types";

const USER = "msa-test";
/** URL-special characters on purpose: the URL carries it percent-encoded */
const PASSWORD = "S3cret-p@ss:w/rd#42";
const WRONG_PASSWORD = "Wr0ng-p@ss:w/rd#99";
const FROM = "updates@mail.shipfast.example";

const fixture = JSON.parse(
	readFileSync(join(__dirname, "../../fixtures/providers/smtp/shipped-en.json"), "utf8"),
) as {
	env: Record<string, string>;
	message: OutboundMessage;
	expected: {
		envelope: { from: string; to: string[] };
		headers: Record<string, string>;
		content_type: string;
		result: SendResult;
	};
};

/** One message as the server received it. */
interface Received {
	user: string | undefined;
	mailFrom: string;
	rcptTo: string[];
	raw: string;
}

/** A running test server. */
interface TestServer {
	port: number;
	received: Received[];
	/** recipients seen at RCPT TO (accepted or not) */
	rcpts: string[];
	close(): Promise<void>;
}

/** An error smtp-server answers with `code message`. */
function smtpError(code: number, message: string): Error {
	return Object.assign(new Error(message), { responseCode: code });
}

/**
 * Starts an SMTP server on 127.0.0.1 (random port) that requires AUTH as USER / PASSWORD over
 * plain TCP, refuses `nobody@…` with 550 and `later@…` with 450 at RCPT TO, and the data of a
 * message whose subject says `REFUSE-DATA` with 554.
 */
async function startServer(): Promise<TestServer> {
	const received: Received[] = [];
	const rcpts: string[] = [];
	const options: SMTPServerOptions = {
		secure: false,
		disabledCommands: ["STARTTLS"],
		allowInsecureAuth: true,
		authOptional: false,
		logger: false,
		onAuth(auth, _session, cb) {
			if (auth.username === USER && auth.password === PASSWORD) return cb(null, { user: USER });
			return cb(smtpError(535, "5.7.8 Authentication credentials invalid"));
		},
		onRcptTo(address, _session, cb) {
			rcpts.push(address.address);
			if (address.address.startsWith("nobody@"))
				return cb(smtpError(550, `5.1.1 <${address.address}>: Recipient address rejected: User unknown`));
			if (address.address.startsWith("later@"))
				return cb(smtpError(450, "4.2.0 Greylisted, please try again later"));
			return cb();
		},
		onData(stream, session, cb) {
			const chunks: Buffer[] = [];
			stream.on("data", (c: Buffer) => chunks.push(c));
			stream.on("end", () => {
				const raw = Buffer.concat(chunks).toString("utf8");
				if (/^Subject: .*REFUSE-DATA/m.test(raw))
					return cb(smtpError(554, "5.7.1 Message content rejected as spam"));
				received.push({
					user: session.user as string | undefined,
					mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
					rcptTo: session.envelope.rcptTo.map((r) => r.address),
					raw,
				});
				cb();
			});
		},
	};
	const server = new SMTPServer(options);
	server.on("error", () => {});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
	const address = server.server.address();
	if (!address || typeof address === "string") throw new Error("no port");
	return {
		port: address.port,
		received,
		rcpts,
		close: () => new Promise<void>((resolve) => server.close(() => resolve())),
	};
}

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
	const s = createServer();
	await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", () => resolve()));
	const address = s.address();
	if (!address || typeof address === "string") throw new Error("no port");
	await new Promise<void>((resolve) => s.close(() => resolve()));
	return address.port;
}

/** The settings of a provider talking to 127.0.0.1:`port` as `user` / `password`. */
function envFor(port: number, password = PASSWORD, user = USER): NodeJS.ProcessEnv {
	return {
		...fixture.env,
		SMTP_URL: `smtp://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}`,
	};
}

/** A copy of the fixture's message with `patch` applied. */
function message(patch: Partial<OutboundMessage> = {}): OutboundMessage {
	return { ...structuredClone(fixture.message), ...patch };
}

// --- a small reader of what the server received (mailparser is not installed) -------------------

/** Decodes RFC 2047 encoded-words (`=?UTF-8?B?…?=`, `=?UTF-8?Q?…?=`) of a header value. */
function decodeWords(value: string): string {
	return value
		.replace(/\?=\s+=\?/g, "?==?")
		.replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_all, _charset: string, enc: string, text: string) =>
			enc.toUpperCase() === "B"
				? Buffer.from(text, "base64").toString("utf8")
				: Buffer.from(
						text
							.replace(/_/g, " ")
							.replace(/=([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
						"latin1",
					).toString("utf8"),
		);
}

/** A MIME entity: its headers (lower-case names, unfolded, every occurrence) and body. */
interface Entity {
	headers: Map<string, string[]>;
	body: string;
}

/** Splits `raw` (CRLF lines) into its unfolded headers and its body. */
function entityOf(raw: string): Entity {
	const cut = raw.indexOf("\r\n\r\n");
	const head = cut < 0 ? raw : raw.slice(0, cut);
	const body = cut < 0 ? "" : raw.slice(cut + 4);
	const headers = new Map<string, string[]>();
	for (const line of head.replace(/\r\n(?=[ \t])/g, "").split("\r\n")) {
		const colon = line.indexOf(":");
		if (colon <= 0) continue;
		const name = line.slice(0, colon).trim().toLowerCase();
		headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
	}
	return { headers, body };
}

/** The one value of header `name` (fails when absent or repeated). */
function header(e: Entity, name: string): string {
	const values = e.headers.get(name) ?? [];
	assert.equal(values.length, 1, `exactly one ${name} header (got ${values.length})`);
	return values[0] as string;
}

/** The decoded body of a leaf entity (7bit, quoted-printable or base64; CRLF → LF). */
function decodedBody(e: Entity): string {
	const cte = (e.headers.get("content-transfer-encoding")?.[0] ?? "7bit").toLowerCase();
	let bytes: Buffer;
	if (cte === "base64") bytes = Buffer.from(e.body.replace(/\s+/g, ""), "base64");
	else if (cte === "quoted-printable")
		bytes = Buffer.from(
			e.body
				.replace(/=\r\n/g, "")
				.replace(/=([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
			"latin1",
		);
	else bytes = Buffer.from(e.body, "utf8");
	return bytes.toString("utf8").replace(/\r\n/g, "\n").replace(/\n$/, "");
}

/** The leaf parts of a message by content type (`text/plain`, `text/html`). */
function partsOf(e: Entity): Map<string, string> {
	const type = e.headers.get("content-type")?.[0] ?? "text/plain";
	const out = new Map<string, string>();
	const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
	if (/^multipart\//i.test(type) && boundary) {
		const sections = e.body.split(`--${boundary}`).slice(1, -1);
		for (const s of sections) {
			for (const [k, v] of partsOf(entityOf(s.replace(/^\r\n/, "").replace(/\r\n$/, "")))) out.set(k, v);
		}
		return out;
	}
	out.set(type.split(";")[0]?.trim().toLowerCase() ?? "", decodedBody(e));
	return out;
}

/** Awaits `p`, expecting a ProviderUnavailable; returns it. */
async function unavailable(p: Promise<unknown>): Promise<ProviderUnavailable> {
	try {
		await p;
	} catch (err) {
		assert.ok(err instanceof ProviderUnavailable, `ProviderUnavailable expected, got ${String(err)}`);
		return err;
	}
	assert.fail("ProviderUnavailable expected, the send resolved");
}

/** Fails when `text` carries the password (or the wrong one), as written or percent-encoded. */
function assertNoSecret(text: string): void {
	for (const secret of [PASSWORD, WRONG_PASSWORD]) {
		assert.ok(!text.includes(secret), `the password appears in: ${text}`);
		assert.ok(!text.includes(encodeURIComponent(secret)), `the encoded password appears in: ${text}`);
	}
}

describe("notifications: SMTP e-mail provider (nodemailer, against a real SMTP server)", () => {
	let server: TestServer;
	const providers: Provider[] = [];
	/** A provider for `env` (closed after the test). */
	const provider = (env: NodeJS.ProcessEnv): Provider => {
		const p = smtpProvider(env);
		providers.push(p);
		return p;
	};

	beforeEach(async () => {
		server = await startServer();
	});
	afterEach(async () => {
		for (const p of providers.splice(0)) await p.close?.();
		await server.close();
	});

	it("is named smtp on channel email, closes idempotently, and has no callbacks (SMTP has no delivery reports)", async () => {
		const p = provider(envFor(server.port));
		assert.equal(p.name, "smtp");
		assert.equal(p.channel, "email");
		assert.equal(p.parseCallback, undefined);
		await p.close?.();
		await p.close?.();
		await unavailable(p.send(message()));
		assert.equal(server.received.length, 0);
	});

	it("golden shipped-en: the server receives the fixture's envelope, headers, text and HTML; sent with our Message-ID", async () => {
		const p = provider(envFor(server.port));
		const result = await p.send(message());
		assert.deepEqual(result, fixture.expected.result);
		assert.equal(server.received.length, 1);
		const got = server.received[0] as Received;
		assert.equal(got.user, USER, "authenticated as the URL's user");
		assert.equal(got.mailFrom, fixture.expected.envelope.from);
		assert.deepEqual(got.rcptTo, fixture.expected.envelope.to);
		const e = entityOf(got.raw);
		for (const [name, value] of Object.entries(fixture.expected.headers))
			assert.equal(decodeWords(header(e, name)), value, `header ${name}`);
		assert.match(header(e, "content-type"), new RegExp(`^${fixture.expected.content_type};`));
		assert.match(header(e, "date"), /^\w{3}, \d{1,2} \w{3} \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}$/);
		assert.equal(e.headers.get("bcc"), undefined);
		const parts = partsOf(e);
		assert.equal(parts.get("text/plain"), fixture.message.text);
		assert.equal(parts.get("text/html"), fixture.message.html);
	});

	it("a retried send is the same message: the same Message-ID, derived from our id and SMTP_FROM's domain", async () => {
		const p = provider(envFor(server.port));
		const first = await p.send(message({ id: 77 }));
		const again = await p.send(message({ id: 77 }));
		const other = await p.send(message({ id: 78 }));
		assert.deepEqual(first, { status: "sent", provider_ref: "<msa-77@mail.shipfast.example>" });
		assert.deepEqual(again, first);
		assert.deepEqual(other, { status: "sent", provider_ref: "<msa-78@mail.shipfast.example>" });
		const ids = server.received.map((r) => header(entityOf(r.raw), "message-id"));
		assert.deepEqual(ids, [
			"<msa-77@mail.shipfast.example>",
			"<msa-77@mail.shipfast.example>",
			"<msa-78@mail.shipfast.example>",
		]);
	});

	it("From: the address alone without a brand name; a Hindi name encoded; CR/LF in the name inject no header", async () => {
		const p = provider(envFor(server.port));
		await p.send(message({ from_name: undefined, html: undefined, reply_to: undefined }));
		await p.send(message({ from_name: "आशा हैंडलूम्स", subject: "आपका ऑर्डर भेज दिया गया है" }));
		await p.send(
			message({ from_name: 'Evil\r\nBcc: victim@else.example\r\n"x', reply_to: "a@b.example, c@d.example" }),
		);
		const [plain, hindi, evil] = server.received.map((r) => entityOf(r.raw)) as [Entity, Entity, Entity];
		assert.equal(header(plain, "from"), FROM);
		assert.equal(plain.headers.get("reply-to"), undefined);
		assert.match(header(plain, "content-type"), /^text\/plain/, "no HTML part when none given");
		assert.deepEqual([...partsOf(plain).keys()], ["text/plain"]);
		assert.match(header(hindi, "from"), /^=\?UTF-8\?/i, "a non-ASCII name is an RFC 2047 encoded-word");
		assert.equal(decodeWords(header(hindi, "from")), `आशा हैंडलूम्स <${FROM}>`);
		assert.equal(decodeWords(header(hindi, "subject")), "आपका ऑर्डर भेज दिया गया है");
		assert.equal(header(evil, "from"), `"Evil Bcc: victim@else.example \\"x" <${FROM}>`);
		assert.equal(evil.headers.get("bcc"), undefined);
		assert.equal(evil.headers.get("reply-to"), undefined, "a Reply-To that is not one address is left out");
		assert.deepEqual(
			server.received.map((r) => r.rcptTo),
			[[fixture.message.to], [fixture.message.to], [fixture.message.to]],
		);
	});

	it("List-Unsubscribe: One-Click only for an HTTPS link (RFC 8058); none without a link or for a non-http one", async () => {
		const p = provider(envFor(server.port));
		const vars = fixture.message.vars;
		await p.send(message({ vars: { ...vars, optout_link: "http://track.shipfast.example/optout/x" } }));
		await p.send(message({ vars: { ...vars, optout_link: "" } }));
		await p.send(message({ vars: { ...vars, optout_link: "javascript:alert(1)" } }));
		const [http, none, bad] = server.received.map((r) => entityOf(r.raw)) as [Entity, Entity, Entity];
		assert.equal(header(http, "list-unsubscribe"), "<http://track.shipfast.example/optout/x>");
		assert.equal(http.headers.get("list-unsubscribe-post"), undefined);
		for (const e of [none, bad]) {
			assert.equal(e.headers.get("list-unsubscribe"), undefined);
			assert.equal(e.headers.get("list-unsubscribe-post"), undefined);
			assert.equal(header(e, "auto-submitted"), "auto-generated");
		}
	});

	it("a recipient the server refuses with 550 → failed with the server's words (nothing delivered)", async () => {
		const p = provider(envFor(server.port));
		const result = await p.send(message({ to: "nobody@buyer.example" }));
		assert.equal(result.status, "failed");
		assert.ok(result.status === "failed");
		assert.match(
			result.error,
			/^550 5\.1\.1 <nobody@buyer\.example>: Recipient address rejected: User unknown$/,
		);
		assert.deepEqual(server.rcpts, ["nobody@buyer.example"]);
		assert.equal(server.received.length, 0);
	});

	it("the message data refused with 554 → failed with the server's words", async () => {
		const p = provider(envFor(server.port));
		const result = await p.send(message({ subject: "REFUSE-DATA please" }));
		assert.deepEqual(result, { status: "failed", error: "554 5.7.1 Message content rejected as spam" });
	});

	it("a recipient deferred with 450 → ProviderUnavailable (retried), without the password", async () => {
		const p = provider(envFor(server.port));
		const err = await unavailable(p.send(message({ to: "later@buyer.example" })));
		assert.match(err.message, /450 4\.2\.0 Greylisted/);
		assertNoSecret(err.message);
		assert.equal(server.received.length, 0);
	});

	it("server down (a closed port) → ProviderUnavailable, without the password", async () => {
		const p = provider(envFor(await closedPort()));
		const err = await unavailable(p.send(message()));
		assert.match(err.message, /ECONNECTION|ESOCKET|ECONNREFUSED/);
		assertNoSecret(err.message);
	});

	it("a server that never greets → ProviderUnavailable after SMTP_TIMEOUT_MS", async () => {
		const sockets: Socket[] = [];
		const silent: Server = createServer((s) => sockets.push(s));
		await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", () => resolve()));
		const address = silent.address();
		if (!address || typeof address === "string") throw new Error("no port");
		try {
			const p = provider({ ...envFor(address.port), SMTP_TIMEOUT_MS: "300" });
			const started = Date.now();
			const err = await unavailable(p.send(message()));
			assert.ok(Date.now() - started < 5000, "gave up within the timeouts");
			assert.match(err.message, /ETIMEDOUT|timeout/i);
			assertNoSecret(err.message);
		} finally {
			for (const s of sockets) s.destroy();
			await new Promise<void>((resolve) => silent.close(() => resolve()));
		}
	});

	it("a wrong password (535) → ProviderUnavailable naming an authentication failure (a configuration error, retried), without either password", async () => {
		const p = provider(envFor(server.port, WRONG_PASSWORD));
		const err = await unavailable(p.send(message()));
		assert.match(
			err.message,
			/^SMTP authentication failed \(check the credentials of SMTP_URL\): 535 5\.7\.8/,
		);
		assertNoSecret(err.message);
		assertNoSecret(String(err.stack));
		assert.deepEqual(server.rcpts, [], "no recipient was offered");
		assert.equal(server.received.length, 0);
	});

	it("a recipient that is not one bare address → failed without contacting the server", async () => {
		const p = provider(envFor(server.port));
		for (const to of [
			"a@buyer.example, b@buyer.example",
			"Priya <p@buyer.example>",
			"p@buyer.example\r\nBcc: x@y.example",
			"no-at-sign",
		]) {
			const result = await p.send(message({ to }));
			assert.equal(result.status, "failed", to);
		}
		assert.deepEqual(await p.send(message({ subject: " " })), {
			status: "failed",
			error: "e-mail without a subject",
		});
		assert.deepEqual(server.rcpts, []);
	});

	it("constructing without SMTP_URL or SMTP_FROM throws; a bad SMTP_URL throws without repeating it", () => {
		assert.throws(() => smtpProvider({ SMTP_FROM: FROM }), /SMTP_URL is not set/);
		assert.throws(() => smtpProvider({ SMTP_URL: "smtp://u:p@127.0.0.1:2525" }), /SMTP_FROM is not set/);
		assert.throws(
			() => smtpProvider({ SMTP_URL: "smtp://u:p@127.0.0.1:2525", SMTP_FROM: '"Shop" <a@b.example>' }),
			/SMTP_FROM must be a bare address/,
		);
		for (const url of [
			`http://u:${PASSWORD}@mail.example`,
			`smtp://u:${PASSWORD}@`,
			`not a url ${PASSWORD}`,
		]) {
			assert.throws(
				() => smtpProvider({ SMTP_URL: url, SMTP_FROM: FROM }),
				(err: Error) => {
					assert.match(err.message, /^SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL/);
					assertNoSecret(err.message);
					return true;
				},
			);
		}
		assert.throws(() => smtpProvider({ ...envFor(25), SMTP_TIMEOUT_MS: "soon" }), /SMTP_TIMEOUT_MS must be/);
	});
});

describe("notifications: SMTP answer mapping (mapper resultOf)", () => {
	const m = message({ to: "priya@buyer.example" });
	const failure = (patch: Partial<SmtpFailure>): SmtpFailure => ({
		code: "EENVELOPE",
		responseCode: null,
		command: null,
		response: null,
		permanent: null,
		recipient: null,
		message: "failure",
		rejected: [],
		...patch,
	});
	const accepted = (accepted: string[], rejected: string[] = [], rejectedErrors: SmtpFailure[] = []) =>
		({
			ok: true,
			messageId: "<msa-1@x.example>",
			accepted,
			rejected,
			rejectedErrors,
			response: "250 2.0.0 Ok",
		}) as const;

	it("accepted (any case of the address) → sent with the Message-ID", () => {
		assert.deepEqual(resultOf(m, "<msa-1@x.example>", accepted(["Priya@Buyer.example"])), {
			status: "sent",
			provider_ref: "<msa-1@x.example>",
		});
	});

	it("the recipient among info.rejected: a 5xx → failed, a 4xx → ProviderUnavailable", () => {
		const r550 = failure({
			responseCode: 550,
			permanent: true,
			command: "RCPT TO",
			response: "550 no such user",
			recipient: m.to,
		});
		assert.deepEqual(resultOf(m, "<x>", accepted(["other@buyer.example"], [m.to], [r550])), {
			status: "failed",
			error: "550 no such user",
		});
		const r452 = { ...r550, responseCode: 452, permanent: false, response: "452 mailbox full" };
		assert.throws(() => resultOf(m, "<x>", accepted([], [m.to], [r452])), ProviderUnavailable);
		assert.throws(() => resultOf(m, "<x>", accepted([], [])), ProviderUnavailable);
	});

	it("503, a 5xx to MAIL FROM (our sender refused) or at the greeting, EDNS, EABORT, ENOAUTH → ProviderUnavailable", () => {
		for (const f of [
			failure({ responseCode: 503, permanent: false, command: "RCPT TO", response: "503 bad sequence" }),
			failure({
				responseCode: 553,
				permanent: true,
				command: "MAIL FROM",
				response: "553 sender not owned by user",
			}),
			failure({
				code: "EPROTOCOL",
				responseCode: 554,
				permanent: true,
				command: "CONN",
				response: "554 no service",
			}),
			failure({ code: "EDNS", command: "CONN", message: "getaddrinfo ENOTFOUND smtp.example" }),
			failure({ code: "EABORT", message: "Message sending aborted" }),
			failure({ code: "ENOAUTH", message: "Missing credentials" }),
		])
			assert.throws(
				() => resultOf(m, "<x>", { ok: false, failure: f }),
				ProviderUnavailable,
				JSON.stringify(f),
			);
	});
});
