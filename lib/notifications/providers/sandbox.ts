/**
 * The sandbox provider (issue 29; docs/decisions/0109-buyer-messages.md): records and never
 * sends, for the zero-setup start and the tests. A message to a plausible recipient (an Indian
 * mobile of 10 digits starting 6–9 for SMS and WhatsApp, an address with one `@` and a dot after
 * it for e-mail) is `simulated` with `provider_ref` `sbx-<channel>-<id>`; anything else is
 * `failed` with the words a real provider would give. It never answers `sent`: a merchant must
 * not read a delivery that did not happen. It has no callbacks.
 */
import type { MessageChannel, OutboundMessage, Provider, SendResult } from "./types";

const MOBILE = /^[6-9]\d{9}$/;
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

/** The sandbox provider of one channel. */
export function sandboxProvider(channel: MessageChannel): Provider {
	return {
		name: "sandbox",
		channel,
		async send(m: OutboundMessage): Promise<SendResult> {
			const ok = channel === "email" ? EMAIL.test(m.to) : MOBILE.test(m.to);
			if (!ok)
				return {
					status: "failed",
					error: channel === "email" ? "not an e-mail address" : "no valid mobile number",
				};
			return { status: "simulated", provider_ref: `sbx-${channel}-${m.id}` };
		},
	};
}
