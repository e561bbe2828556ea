/**
 * The configured provider of each channel (issue 29; docs/decisions/0109-buyer-messages.md):
 * `NOTIFY_SMS_PROVIDER` (`sandbox`, `msg91`), `NOTIFY_WHATSAPP_PROVIDER` (`sandbox`,
 * `whatsapp_cloud`), `NOTIFY_EMAIL_PROVIDER` (`sandbox`, `smtp`). Built once per process on first
 * use; a real provider's missing setting fails the service's start ({@link checkProviders}).
 */
import { setting } from "../../platform/config";
import { msg91Provider } from "./msg91";
import { sandboxProvider } from "./sandbox";
import { smtpProvider } from "./smtp";
import { MESSAGE_CHANNELS, type MessageChannel, type Provider } from "./types";
import { whatsAppCloudProvider } from "./whatsapp_cloud";

const built = new Map<MessageChannel, Provider>();

/** Builds the provider a channel is configured with. @throws Error when its settings are incomplete */
function build(channel: MessageChannel): Provider {
	if (channel === "sms" && setting("NOTIFY_SMS_PROVIDER") === "msg91") return msg91Provider();
	if (channel === "whatsapp" && setting("NOTIFY_WHATSAPP_PROVIDER") === "whatsapp_cloud")
		return whatsAppCloudProvider();
	if (channel === "email" && setting("NOTIFY_EMAIL_PROVIDER") === "smtp") return smtpProvider();
	return sandboxProvider(channel);
}

/** The provider of `channel` (built on first use). @throws Error when its settings are incomplete */
export function providerFor(channel: MessageChannel): Provider {
	let p = built.get(channel);
	if (!p) {
		p = build(channel);
		built.set(channel, p);
	}
	return p;
}

/** The configured provider named `name` that takes callbacks, or undefined (sandbox and unconfigured names). */
export function providerNamed(name: string): Provider | undefined {
	for (const c of MESSAGE_CHANNELS) {
		const p = providerFor(c);
		if (p.name === name && p.name !== "sandbox") return p;
	}
	return undefined;
}

/** Builds every channel's provider now, so a missing setting stops the start. @throws Error */
export function checkProviders(): void {
	for (const c of MESSAGE_CHANNELS) providerFor(c);
}

/** Closes the providers' connections and forgets them (the service stops). */
export async function closeProviders(): Promise<void> {
	const all = [...built.values()];
	built.clear();
	await Promise.all(all.map((p) => p.close?.()));
}

/** The configured provider names (for the preferences view). */
export function providerSettings(): Record<MessageChannel, string> {
	return {
		sms: setting("NOTIFY_SMS_PROVIDER"),
		whatsapp: setting("NOTIFY_WHATSAPP_PROVIDER"),
		email: setting("NOTIFY_EMAIL_PROVIDER"),
	};
}
