/**
 * The buyer-message provider interface (issue 29; docs/decisions/0109-buyer-messages.md): one
 * Karrio-style connector per provider under lib/notifications/providers/<name>/ (settings.ts
 * reads the environment, proxy.ts does the HTTP / SMTP call, mapper.ts turns our message into the
 * provider's request and its answers and callbacks into ours; index.ts builds the
 * {@link Provider}), with golden fixtures from the provider's documentation under
 * test/fixtures/providers/<name>/.
 *
 * The notifications service renders a message (lib/notifications/templates.ts), hands it to
 * the channel's provider and records the answer honestly:
 * - `sent`: the provider accepted it (its id in `provider_ref`); `delivered` / `failed` come
 *   later, only from the provider's delivery report ({@link Provider.parseCallback});
 * - `simulated`: nothing left the system (the sandbox);
 * - `failed` with `error`: the provider refused this message for good (a bad number, a
 *   template it does not know, an opted-out recipient): not retried;
 * - a thrown {@link ProviderUnavailable}: the outcome is unknown or transient (timeout,
 *   connection failure, 5xx, 429): the message is tried again with backoff (BullMQ), with the
 *   same message id as the provider's idempotency key where the provider has one.
 */

/** The channels a buyer can be messaged on, in the order views list them. */
export const MESSAGE_CHANNELS = ["sms", "whatsapp", "email"] as const;

/** A channel a buyer can be messaged on. */
export type MessageChannel = (typeof MESSAGE_CHANNELS)[number];

/** The events a buyer is told about (template keys), plus `test` (a merchant's test send). */
export type MessageEvent =
	| "shipped"
	| "out_for_delivery"
	| "delivered"
	| "failed_delivery"
	| "rto_initiated"
	| "test";

/** The languages of buyer messages. */
export type MessageLang = "en" | "hi";

/** One rendered buyer message, as a provider is asked to send it. */
export interface OutboundMessage {
	/** our message id: the provider's reference / idempotency key where it has one */
	id: number;
	channel: MessageChannel;
	/** sms, whatsapp: the buyer's Indian mobile as 10 digits (no +91); email: the address */
	to: string;
	lang: MessageLang;
	event: MessageEvent;
	/**
	 * the template's variables, in the template's order (providers with positional variables:
	 * MSG91's `var1…`, WhatsApp's `{{1}}…` use this order): e.g. `{brand, awb, courier, link}`
	 */
	vars: Record<string, string>;
	/** the rendered text (SMS body; the e-mail's text part; what the sandbox records) */
	text: string;
	/** email: subject line */
	subject?: string;
	/** email: the HTML part */
	html?: string;
	/** email: the merchant's brand name, the From's display name */
	from_name?: string;
	/** email: the merchant's support address, the Reply-To */
	reply_to?: string;
}

/** A provider's answer to a send (see the module doc). */
export type SendResult =
	| { status: "sent"; provider_ref: string }
	| { status: "simulated"; provider_ref: string }
	| { status: "failed"; error: string };

/**
 * Thrown by {@link Provider.send} when the outcome is unknown or the refusal transient (timeout,
 * connection failure, 5xx, 429, malformed answer): the message is retried. `retryAfterMs`: the
 * provider's `Retry-After`, when it gave one.
 */
export class ProviderUnavailable extends Error {
	constructor(
		message: string,
		readonly retryAfterMs?: number,
	) {
		super(message);
		this.name = "ProviderUnavailable";
	}
}

/**
 * Thrown by {@link Provider.parseCallback} for a callback that is not the provider's: a missing
 * or wrong signature / token, a body that is not the provider's format. The route answers 401
 * (signature) or 400 (format) and records nothing.
 */
export class CallbackRejected extends Error {
	constructor(
		message: string,
		readonly status: 400 | 401,
	) {
		super(message);
		this.name = "CallbackRejected";
	}
}

/** One delivery report from a provider's callback. Times ISO-8601 UTC. */
export interface DeliveryReport {
	/** the provider's message id, as {@link SendResult} `provider_ref` gave it */
	provider_ref: string;
	/** `delivered` to the handset / mailbox, or `failed` for good; `sent` (accepted onward) changes nothing of ours */
	status: "delivered" | "failed" | "sent";
	at: string;
	/** the provider's words for a failure, else null */
	error: string | null;
}

/** A message the buyer sent back (an inbound SMS or WhatsApp text): `STOP` opts out. */
export interface InboundReply {
	/** sms, whatsapp: the buyer's mobile as 10 digits */
	from: string;
	text: string;
	/** ISO-8601 UTC */
	at: string;
}

/** A provider's callback as the gateway hands it over (raw body: providers sign the exact bytes). */
export interface CallbackRequest {
	method: "GET" | "POST";
	/** lower-case header names */
	headers: Record<string, string>;
	query: Record<string, string>;
	/** the raw body bytes (empty for GET) */
	body: Buffer;
}

/** What a verified callback carried. `answer`: a body the provider expects back (WhatsApp's `hub.challenge`). */
export interface CallbackContent {
	reports: DeliveryReport[];
	replies: InboundReply[];
	answer?: string;
}

/** A buyer-message provider (one per channel is configured: `NOTIFY_<CHANNEL>_PROVIDER`). */
export interface Provider {
	/** the name recorded on each message, e.g. `msg91`, `whatsapp_cloud`, `smtp`, `sandbox` */
	readonly name: string;
	readonly channel: MessageChannel;
	/**
	 * Sends one message (see the module doc for the answers).
	 * @throws ProviderUnavailable when the outcome is unknown or the refusal transient
	 */
	send(m: OutboundMessage): Promise<SendResult>;
	/**
	 * Verifies (signature or token, constant-time) and parses one callback of this provider:
	 * delivery reports and inbound replies. Absent: the provider has no callbacks (SMTP, sandbox).
	 * @throws CallbackRejected
	 */
	parseCallback?(req: CallbackRequest): CallbackContent;
	/** Closes pooled connections (SMTP); called when the service stops. */
	close?(): Promise<void>;
}
