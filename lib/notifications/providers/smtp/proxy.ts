/**
 * SMTP proxy of the e-mail provider: one pooled nodemailer transport (nodemailer's `SMTPPool`:
 * up to 5 connections, each reused for up to 100 messages, closed after idling) built from
 * `SMTP_URL`, with every wait bounded by `SMTP_TIMEOUT_MS` (connection, greeting, each answer,
 * DNS) and each send by {@link sendDeadlineMs} (a server trickling its answers, which no socket
 * timeout notices, or a wait in the pool's queue). No retries here: the notifications queue
 * retries after {@link ProviderUnavailable} (the mapper decides).
 *
 * The server's answer comes back as data ({@link SmtpAnswer}): the accepted / rejected
 * recipients, or the failure (nodemailer's error code, the SMTP reply code and words, the
 * command it answered). Every text taken from an error is scrubbed of the password of
 * `SMTP_URL` (as written and decoded) and of the URL itself: nothing here logs (nodemailer's
 * logger is off) and no error message carries a credential.
 */
import {
	createTransport,
	type SendMailOptions,
	type SMTPPoolSentMessageInfo,
	type Transporter,
} from "nodemailer";
import type { SmtpSettings } from "./settings";

/** A failure of one send, as nodemailer reported it (texts scrubbed of credentials). */
export interface SmtpFailure {
	/** nodemailer's error code (`EENVELOPE`, `EAUTH`, `ECONNECTION`, `ETIMEDOUT`, `ESOCKET`, `EDNS`, `EABORT`…), null when none */
	code: string | null;
	/** the SMTP reply code (e.g. 550, 450, 535), null when the server said nothing (connection errors) */
	responseCode: number | null;
	/** the SMTP command the reply answered (`RCPT TO`, `MAIL FROM`, `DATA`, `AUTH PLAIN`, `CONN`…), null when unknown */
	command: string | null;
	/** the server's reply line, e.g. `550 5.1.1 No such user`, null when none */
	response: string | null;
	/**
	 * nodemailer's verdict on the reply code (its `permanent`): true for 5xx except 503, false for
	 * 4xx / 503 (RFC 5321 §4.2.1: 5yz permanent, 4yz transient); null when there was no reply
	 */
	permanent: boolean | null;
	/** the recipient a per-recipient failure is about, null otherwise */
	recipient: string | null;
	/** nodemailer's message (scrubbed, one line, at most 500 characters) */
	message: string;
	/** per-recipient failures of a refused envelope (`rejectedErrors`), same shape */
	rejected: SmtpFailure[];
}

/** The answer to one send: accepted (possibly only in part) or failed. */
export type SmtpAnswer =
	| {
			ok: true;
			/** the Message-ID header value the message went out with (`<…>`) */
			messageId: string;
			/** envelope recipients the server accepted */
			accepted: string[];
			/** envelope recipients the server refused at RCPT TO, with their failures in `rejectedErrors` */
			rejected: string[];
			rejectedErrors: SmtpFailure[];
			/** the server's final answer to the message data, e.g. `250 2.0.0 Ok: queued` */
			response: string;
	  }
	| { ok: false; failure: SmtpFailure };

/** The SMTP connection of one provider. */
export interface SmtpProxy {
	/** Hands one message to the pool; never throws (a failure is an answer). */
	send(message: SendMailOptions): Promise<SmtpAnswer>;
	/** Closes the pool: idle connections at once, a connection delivering a message after it. Idempotent. */
	close(): Promise<void>;
}

/** Runs of C0 control characters and DEL (CR, LF among them). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is matched
const CONTROL_RUNS = /[\x00-\x1f\x7f]+/g;

/** Longest text kept of a server's or nodemailer's words. */
const MAX_WORDS = 500;

/** The whole-send deadline: connection + greeting + answers, four timeouts. */
export function sendDeadlineMs(s: SmtpSettings): number {
	return 4 * s.timeoutMs;
}

/**
 * `text` on one line (control characters → spaces), at most {@link MAX_WORDS} characters, with
 * every credential of `s` (the URL, the password as written and decoded) replaced by `***`.
 */
export function scrub(text: string, s: SmtpSettings): string {
	let t = text;
	for (const secret of [s.url, ...s.secrets].filter(Boolean).sort((a, b) => b.length - a.length))
		t = t.split(secret).join("***");
	t = t.replace(CONTROL_RUNS, " ").trim();
	return t.length > MAX_WORDS ? `${t.slice(0, MAX_WORDS - 1)}…` : t;
}

/** Loose view of the properties nodemailer puts on its errors (lib/errors NodemailerError). */
interface ErrorLike {
	message?: unknown;
	code?: unknown;
	responseCode?: unknown;
	command?: unknown;
	response?: unknown;
	permanent?: unknown;
	recipient?: unknown;
	rejectedErrors?: unknown;
}

/** An {@link SmtpFailure} of whatever nodemailer threw (anything not an Error: code null). */
export function failureOf(err: unknown, s: SmtpSettings): SmtpFailure {
	const e: ErrorLike =
		typeof err === "object" && err !== null ? (err as ErrorLike) : { message: String(err) };
	const responseCode =
		typeof e.responseCode === "number" && Number.isInteger(e.responseCode) ? e.responseCode : null;
	return {
		code: typeof e.code === "string" ? e.code : null,
		responseCode,
		command: typeof e.command === "string" ? e.command : null,
		response: typeof e.response === "string" ? scrub(e.response, s) : null,
		permanent:
			typeof e.permanent === "boolean"
				? e.permanent
				: responseCode === null
					? null
					: responseCode >= 500 && responseCode < 600 && responseCode !== 503,
		recipient: typeof e.recipient === "string" ? e.recipient : null,
		message: scrub(typeof e.message === "string" ? e.message : "unknown error", s),
		rejected: Array.isArray(e.rejectedErrors) ? e.rejectedErrors.map((r) => failureOf(r, s)) : [],
	};
}

/**
 * Builds the pooled transport of `s` (nodemailer `createTransport({pool: true, url})`: the URL's
 * scheme chooses TLS, its user and password the AUTH login, its query nodemailer's options).
 * File and URL access of message contents is disabled (messages carry text and HTML only).
 * Connects lazily, on the first send.
 */
export function smtpProxy(s: SmtpSettings): SmtpProxy {
	const transport: Transporter<SMTPPoolSentMessageInfo> = createTransport({
		pool: true,
		url: s.url,
		connectionTimeout: s.timeoutMs,
		greetingTimeout: s.timeoutMs,
		socketTimeout: s.timeoutMs,
		dnsTimeout: s.timeoutMs,
		disableFileAccess: true,
		disableUrlAccess: true,
		logger: false,
		debug: false,
	});
	// failures come back through each send's callback; an 'error' event without a listener
	// would end the process
	transport.on("error", () => {});
	let closed = false;
	return {
		async send(message) {
			if (closed) {
				return {
					ok: false,
					failure: {
						code: "ECLOSED",
						responseCode: null,
						command: null,
						response: null,
						permanent: null,
						recipient: null,
						message: "the SMTP provider is closed",
						rejected: [],
					},
				};
			}
			try {
				const info = await transport.sendMail({ ...message, signal: AbortSignal.timeout(sendDeadlineMs(s)) });
				const extra = info as { rejectedErrors?: unknown };
				return {
					ok: true,
					messageId: String(info.messageId ?? ""),
					accepted: (info.accepted ?? []).map(String),
					rejected: (info.rejected ?? []).map(String),
					rejectedErrors: Array.isArray(extra.rejectedErrors)
						? extra.rejectedErrors.map((r) => failureOf(r, s))
						: [],
					response: scrub(String(info.response ?? ""), s),
				};
			} catch (err) {
				return { ok: false, failure: failureOf(err, s) };
			}
		},
		async close() {
			if (closed) return;
			closed = true;
			transport.close();
		},
	};
}
