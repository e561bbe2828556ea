/**
 * Mapper of the SMTP e-mail provider: our {@link OutboundMessage} → a nodemailer message
 * ({@link toMail}; the golden fixture test/fixtures/providers/smtp/shipped-en.json holds the
 * headers it makes), and the server's answer ({@link SmtpAnswer}) → our {@link SendResult}
 * ({@link resultOf}). Pure functions; the proxy does the SMTP.
 *
 * Answers (the notifications service records them, lib/notifications/providers/types.ts):
 * - the server accepted the recipient at RCPT TO and the data at the final `.` → `sent`, with
 *   `provider_ref` = our Message-ID. SMTP has no delivery reports (no callback): the message
 *   stays `sent`; a later bounce goes to the sender's mailbox, not to us.
 * - a permanent refusal of this message (a 5xx reply, except 503, to RCPT TO or to DATA / the
 *   message data: unknown mailbox, refused content) → `failed` with the server's words; not retried.
 * - everything else → {@link ProviderUnavailable} (retried with backoff): a 4xx or 503 reply
 *   (greylisting, a full mailbox, rate limits), connection, TLS, DNS and timeout errors
 *   (`ECONNECTION`, `ETIMEDOUT`, `ESOCKET`, `EDNS`, `ETLS`, the send deadline `EABORT`), a 5xx to
 *   MAIL FROM or before the envelope (the server refuses our sender `SMTP_FROM` or us: a
 *   configuration error, not the buyer's), and an answer naming neither recipient list.
 * - authentication failure (`EAUTH`, e.g. `535 5.7.8`; `ENOAUTH`, `EOAUTH2`) →
 *   {@link ProviderUnavailable} too, deliberately: it says nothing about the message or the
 *   buyer but that our `SMTP_URL` credentials are wrong, locked or rotated (or the server's
 *   authentication backend is down; some answer 535 then). Recording `failed` would lose every
 *   buyer message of the outage for good, each blaming nothing of its own; retried, they go out
 *   once the Secret is fixed, and the queue's attempts running out show the outage instead.
 */
import type { SendMailOptions } from "nodemailer";
import { type OutboundMessage, ProviderUnavailable, type SendResult } from "../types";
import type { SmtpAnswer, SmtpFailure } from "./proxy";
import { isBareAddress, type SmtpSettings } from "./settings";

/** The header value RFC 8058 §3.1 fixes for a one-click unsubscription (`List-Unsubscribe-Post`). */
export const ONE_CLICK = "List-Unsubscribe=One-Click";

/** C0 control characters and DEL (CR, LF among them). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is matched
const CONTROL_CHARS = /[\x00-\x1f\x7f]/g;

/** Longest From display name kept (characters); the rest is cut. */
const MAX_NAME = 100;

/** nodemailer codes of a failed login (lib/errors): our credentials, never the message. */
const AUTH_CODES = new Set(["EAUTH", "ENOAUTH", "EOAUTH2"]);

/** SMTP commands whose permanent refusal is about this message (its recipient or its data). */
const MESSAGE_COMMANDS = new Set(["RCPT TO", "DATA"]);

/**
 * Our Message-ID of message `id` (RFC 5322 §3.6.4 msg-id): `<msa-<id>@<domain of SMTP_FROM>>`.
 * Deterministic, so a retried send is the same message to the recipient's server and mailbox
 * (which may drop the duplicate) and to us (`provider_ref`).
 */
export function messageIdOf(id: number, s: SmtpSettings): string {
	return `<msa-${id}@${s.fromDomain}>`;
}

/**
 * The From display name of `fromName`: control characters (CR, LF: no header injection) become
 * spaces, runs of white space one space, trimmed, at most {@link MAX_NAME} characters; empty when
 * nothing is left (then From is the address alone). nodemailer quotes it as an RFC 5322
 * quoted-string (`"Acme \"Best\" Store"`) or, when not ASCII, encodes it (RFC 2047 encoded-word).
 */
export function displayNameOf(fromName: string | undefined): string {
	const t = (fromName ?? "").replace(CONTROL_CHARS, " ").replace(/\s+/g, " ").trim();
	return Array.from(t).slice(0, MAX_NAME).join("").trim();
}

/**
 * The opt-out link of `vars.optout_link` for `List-Unsubscribe` (RFC 2369): an absolute http(s)
 * URL, as WHATWG URL serialises it (spaces and `<`, `>` percent-encoded, so it cannot leave the
 * angle brackets); `oneClick` when it is HTTPS (RFC 8058 §3.1 allows One-Click only for an HTTPS
 * URI). Null when unset or not an http(s) URL (no header then).
 */
export function optoutOf(vars: Record<string, string>): { url: string; oneClick: boolean } | null {
	const raw = vars.optout_link?.trim();
	if (!raw) return null;
	let u: URL;
	try {
		u = new URL(raw);
	} catch {
		return null;
	}
	if (u.protocol !== "https:" && u.protocol !== "http:") return null;
	return { url: u.href, oneClick: u.protocol === "https:" };
}

/**
 * Why `m` cannot be sent by e-mail, or null when it can: not the `email` channel, `to` not one
 * bare address `local@domain` (a list, a display name or a line break would reach other
 * mailboxes), no subject. The provider answers `failed` with these words, sending nothing.
 */
export function refusalOf(m: OutboundMessage): string | null {
	if (m.channel !== "email") return `the SMTP provider sends e-mail only (got channel ${m.channel})`;
	if (!isBareAddress(m.to)) return "invalid recipient address (one bare address local@domain expected)";
	if (!m.subject?.trim()) return "e-mail without a subject";
	return null;
}

/**
 * The nodemailer message of `m` (check {@link refusalOf} first):
 * - `From: "<from_name>" <SMTP_FROM>` ({@link displayNameOf}; the address alone without a name),
 *   envelope sender `SMTP_FROM`, envelope recipient `m.to` only (set explicitly: nothing parsed
 *   from headers can add a recipient);
 * - `To: m.to`; `Reply-To: m.reply_to` when it is one bare address (else left out rather than
 *   handed to an address parser); `Subject: m.subject`;
 * - the text part `m.text`, and the HTML part `m.html` when given (multipart/alternative);
 * - `Message-ID` {@link messageIdOf};
 * - `List-Unsubscribe: <optout_link>` (RFC 2369) when `vars.optout_link` is an http(s) URL,
 *   plus `List-Unsubscribe-Post: List-Unsubscribe=One-Click` when it is HTTPS (RFC 8058);
 * - `Auto-Submitted: auto-generated` (RFC 3834: no auto-replies to it).
 * nodemailer encodes every value (RFC 2047 for non-ASCII, CR/LF never start a new header).
 */
export function toMail(m: OutboundMessage, s: SmtpSettings): SendMailOptions {
	const name = displayNameOf(m.from_name);
	const optout = optoutOf(m.vars);
	const headers: Record<string, string> = { "Auto-Submitted": "auto-generated" };
	if (optout?.oneClick) headers["List-Unsubscribe-Post"] = ONE_CLICK;
	const mail: SendMailOptions = {
		from: name ? { name, address: s.from } : s.from,
		to: m.to,
		subject: m.subject,
		text: m.text,
		messageId: messageIdOf(m.id, s),
		headers,
		envelope: { from: s.from, to: [m.to] },
	};
	if (m.reply_to && isBareAddress(m.reply_to.trim())) mail.replyTo = m.reply_to.trim();
	if (m.html) mail.html = m.html;
	if (optout) mail.list = { unsubscribe: optout.url };
	return mail;
}

/** The words of a failure: the server's reply when it gave one, else nodemailer's message. */
function wordsOf(f: SmtpFailure): string {
	return f.response ?? f.message;
}

/** What the SMTP failure `f` is, as a sentence (for ProviderUnavailable). */
function unavailableWords(f: SmtpFailure): string {
	const what = [f.code, f.command ? `at ${f.command}` : null].filter(Boolean).join(" ");
	return `SMTP ${what || "error"}: ${wordsOf(f)}`;
}

/** Whether `a` names recipient `to` (addresses compared without case: hosts are case-insensitive, and no server we use distinguishes local parts by case). */
function sameAddress(a: string, to: string): boolean {
	return a.trim().toLowerCase() === to.trim().toLowerCase();
}

/**
 * The result of a failed send: `failed` for a permanent refusal of this message, else throws
 * (see the module doc). For a refused envelope, the recipient's own failure decides.
 * @throws ProviderUnavailable
 */
export function resultOfFailure(m: OutboundMessage, f: SmtpFailure): SendResult {
	if (f.code && AUTH_CODES.has(f.code))
		throw new ProviderUnavailable(
			`SMTP authentication failed (check the credentials of SMTP_URL): ${wordsOf(f)}`,
		);
	const mine = f.rejected.find((r) => r.recipient !== null && sameAddress(r.recipient, m.to));
	const decisive = mine ?? f;
	if (
		decisive.permanent === true &&
		decisive.responseCode !== null &&
		decisive.command !== null &&
		MESSAGE_COMMANDS.has(decisive.command)
	)
		return { status: "failed", error: wordsOf(decisive) };
	throw new ProviderUnavailable(unavailableWords(decisive));
}

/**
 * The {@link SendResult} of the server's answer to message `m` sent with Message-ID `messageId`:
 * `sent` when the recipient is among the accepted (`provider_ref` = `messageId`); when among the
 * rejected, as {@link resultOfFailure} of its failure; a failed send as {@link resultOfFailure}.
 * @throws ProviderUnavailable when the outcome is unknown or the refusal transient
 */
export function resultOf(m: OutboundMessage, messageId: string, answer: SmtpAnswer): SendResult {
	if (!answer.ok) return resultOfFailure(m, answer.failure);
	if (answer.accepted.some((a) => sameAddress(a, m.to))) return { status: "sent", provider_ref: messageId };
	if (answer.rejected.some((a) => sameAddress(a, m.to))) {
		const mine = answer.rejectedErrors.find((r) => r.recipient !== null && sameAddress(r.recipient, m.to));
		if (mine) return resultOfFailure(m, mine);
		throw new ProviderUnavailable(`SMTP server rejected ${m.to} without a reason: ${answer.response}`);
	}
	throw new ProviderUnavailable(
		`SMTP answer names neither accepted nor rejected recipient: ${answer.response}`,
	);
}
