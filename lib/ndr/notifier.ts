/**
 * Buyer notifications of NDR cases (issue 9;
 * docs/decisions/0038-ndr-cases.md): when a case opens, the buyer is told the
 * delivery failed and how to reschedule.
 *
 * The `ndr` service records a notification row (`queued`) in the transaction
 * that opens the case, then hands it to a {@link Notifier} and records what
 * the notifier answered (`sent` / `delivered` / `failed` from a provider,
 * `simulated` from the sandbox, with times). A
 * notification left `queued` (the process died between the two) is handed
 * over again by the next policy pass, so the buyer is notified at least once.
 *
 * How a real provider plugs in: implement {@link Notifier} (e.g. an SMS or
 * WhatsApp Business API client: `send` submits the template message and
 * answers `sent` with the provider's message id in `provider_ref`; the
 * provider's delivery receipts, pushed to a webhook, become `delivered` /
 * `failed` updates of the row found by `provider_ref`), and return it from
 * {@link notifierFor} for its `NDR_NOTIFIER` value. Nothing else changes.
 *
 * A recorded status says what really happened
 * (docs/decisions/0081-truthful-ndr-notifications.md): `delivered` only when a
 * provider reported the delivery; the sandbox, which sends nothing, records
 * `simulated`.
 */
import { setting } from "../platform/config";

/** Channels a buyer can be notified on. */
export type NotificationChannel = "sms" | "whatsapp";

/** What a notifier is asked to send. */
export interface NotificationRequest {
	/** our notification id (idempotency key at the provider) */
	id: number;
	channel: NotificationChannel;
	/** template name, e.g. `ndr_attempt_failed` */
	template: string;
	/** the buyer's phone (10 digits), or null when the order has none usable */
	to: string | null;
	/** template variables */
	vars: Record<string, string>;
}

/** What a notifier can answer (the stored `ndr.notifications.status` besides `queued`). */
export type NotificationOutcomeStatus = "sent" | "delivered" | "failed" | "simulated";

/** A notifier's answer. Times ISO-8601 UTC. */
export interface NotificationOutcome {
	/**
	 * `sent` (a provider accepted it), `delivered` (a provider reported the
	 * delivery: never answered by a notifier that sends nothing), `failed`,
	 * `simulated` (nothing was sent: the sandbox)
	 */
	status: NotificationOutcomeStatus;
	provider: string;
	provider_ref: string | null;
	sent_at: string | null;
	delivered_at: string | null;
	failed_at: string | null;
	/** why it failed (status `failed`) */
	error: string | null;
}

/** Sends buyer notifications (one implementation per provider). */
export interface Notifier {
	/** the provider's name, recorded on each notification */
	readonly name: string;
	/** Submits one notification; never throws for a refusal (answers `failed`); throws when it cannot tell (retried later). */
	send(req: NotificationRequest, now: Date): Promise<NotificationOutcome>;
}

/** Template of the notification sent when a case opens. */
export const NDR_OPENED_TEMPLATE = "ndr_attempt_failed";

/**
 * The sandbox notifier: records and never sends. A buyer phone of 10 digits
 * starting 6–9 (an Indian mobile number) is `simulated` at once (nothing
 * left the system: no `sent_at`, no `delivered_at`; `provider_ref`
 * `sbx-<id>`), anything else `failed` ("no valid mobile number", which any
 * provider would refuse too), so both outcomes can be seen in the sandbox. It
 * never answers `sent` or `delivered`: a merchant must not read a delivery
 * that did not happen.
 */
export class SandboxNotifier implements Notifier {
	readonly name = "sandbox";
	async send(req: NotificationRequest, now: Date): Promise<NotificationOutcome> {
		const at = now.toISOString();
		const ok = !!req.to && /^[6-9]\d{9}$/.test(req.to);
		return ok
			? {
					status: "simulated",
					provider: this.name,
					provider_ref: `sbx-${req.id}`,
					sent_at: null,
					delivered_at: null,
					failed_at: null,
					error: null,
				}
			: {
					status: "failed",
					provider: this.name,
					provider_ref: null,
					sent_at: null,
					delivered_at: null,
					failed_at: at,
					error: "no valid mobile number",
				};
	}
}

/**
 * The notifier for `NDR_NOTIFIER` (only `sandbox`, the default, exists).
 * @throws Error for an unknown value (refuses to start)
 */
export function notifierFor(name: string = setting("NDR_NOTIFIER")): Notifier {
	if (name === "sandbox") return new SandboxNotifier();
	throw new Error(`NDR_NOTIFIER "${name}" is not a known notifier (known: sandbox)`);
}

/** The buyer's phone as 10 digits (a +91 / 0 prefix and separators dropped), or null. */
export function buyerPhone(raw: string | null | undefined): string | null {
	const d = String(raw ?? "").replace(/\D/g, "");
	const ten =
		d.length === 12 && d.startsWith("91")
			? d.slice(2)
			: d.length === 11 && d.startsWith("0")
				? d.slice(1)
				: d;
	return ten.length === 10 ? ten : null;
}
