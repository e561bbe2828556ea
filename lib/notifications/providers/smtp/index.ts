/**
 * SMTP e-mail provider of buyer messages: the {@link Provider} interface
 * (lib/notifications/providers/types.ts) on SMTP submission with nodemailer's pooled transport.
 * Settings from the environment (./settings.ts), SMTP in ./proxy.ts, shapes and answers in
 * ./mapper.ts; golden fixture in test/fixtures/providers/smtp.
 *
 * Honest limits:
 * - SMTP has no delivery reports: `sent` means the submission server accepted the message for
 *   delivery, nothing more. There is no {@link Provider.parseCallback}, so a message stays
 *   `sent`; a later bounce (DSN) goes to the envelope sender `SMTP_FROM`'s mailbox, which this
 *   code does not read.
 * - A retried send (after {@link ProviderUnavailable}) may deliver twice when the first attempt
 *   was in fact accepted but the answer was lost; both copies carry the same Message-ID
 *   (`<msa-<id>@domain>`), which mailboxes may use to drop the duplicate. SMTP has no
 *   idempotency key beyond that.
 */
import type { OutboundMessage, Provider, SendResult } from "../types";
import { messageIdOf, refusalOf, resultOf, toMail } from "./mapper";
import { smtpProxy } from "./proxy";
import { smtpSettings } from "./settings";

export { type SmtpSettings, smtpSettings } from "./settings";

/**
 * Builds the SMTP provider (`name` `smtp`, channel `email`) from `env` (read through
 * lib/platform/config.ts `setting`). The pooled connection opens on the first send;
 * `close()` closes it (the notifications service calls it when it stops).
 *
 * `send(m)`: a message that cannot go by e-mail ({@link refusalOf}: wrong channel, not one bare
 * recipient address, no subject) → `failed` without contacting the server; otherwise the answer
 * as mapper `resultOf` says (accepted → `sent` with `provider_ref` = the Message-ID; a permanent
 * 5xx refusal of the recipient or data → `failed` with the server's words).
 * @throws Error when `SMTP_URL` or `SMTP_FROM` is missing or not allowed (message without the password)
 * @throws ProviderUnavailable (from `send`) for 4xx replies, connection / TLS / DNS errors,
 *   timeouts, authentication failures and sender refusals: the message is retried
 */
export function smtpProvider(env: NodeJS.ProcessEnv = process.env): Provider {
	const settings = smtpSettings(env);
	const proxy = smtpProxy(settings);
	return {
		name: "smtp",
		channel: "email",
		async send(m: OutboundMessage): Promise<SendResult> {
			const refusal = refusalOf(m);
			if (refusal) return { status: "failed", error: refusal };
			const answer = await proxy.send(toMail(m, settings));
			return resultOf(m, messageIdOf(m.id, settings), answer);
		},
		close: () => proxy.close(),
	};
}
