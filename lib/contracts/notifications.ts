/**
 * Contract of the `notifications` service (issue 29; docs/decisions/0108-buyer-tracking-page.md):
 * what a merchant's buyers see — the brand of the tracking page, the page itself behind its
 * signed link, the AWB look-up.
 */
import type { RouteParams } from "../platform/openapi/route";
import type { NOTIFICATIONS_ROUTES } from "./http/notifications";

/** The notifications route definitions (lib/contracts/http/notifications.ts). */
type Routes = typeof NOTIFICATIONS_ROUTES;

/**
 * A merchant's brand on the buyer tracking page (`GET/PATCH /v1/settings/branding`). Every
 * field null until set (the neutral page); `colour` `#RRGGBB` upper case; `updated_at` UTC.
 */
export interface Branding {
	/** shown as the page's heading and the logo's text */
	brand_name: string | null;
	/** an https URL of the logo image, shown at most 160 × 48 px */
	logo_url: string | null;
	/** the page's accent colour, `#RRGGBB` */
	colour: string | null;
	/** 10 digits, shown as a call link */
	support_phone: string | null;
	support_email: string | null;
	updated_at: string | null;
}

/** The channels of buyer messages. */
export type BuyerChannel = "sms" | "whatsapp" | "email";

/** The buyer events (`GET/PATCH /v1/settings/notifications` `events`). */
export type BuyerEventName =
	| "shipped"
	| "out_for_delivery"
	| "delivered"
	| "failed_delivery"
	| "rto_initiated";

/**
 * An account's buyer-message preferences (`GET/PATCH /v1/settings/notifications`; issue 29,
 * docs/decisions/0109-buyer-messages.md). `quiet_hours` IST `HH:MM`; `updated_at` UTC, null until set.
 */
export interface NotificationPreferences {
	channels: Record<BuyerChannel, boolean>;
	events: Record<BuyerEventName, boolean>;
	/** messages made inside are held until `end` (IST); a window may span midnight */
	quiet_hours: { start: string; end: string } | null;
	language: "en" | "hi";
	/** `apply`: a buyer's answer to a failed delivery goes to the courier at once; `approve`: it waits for you */
	ndr_buyer_answers: "apply" | "approve";
	/** the provider each channel is configured with (`NOTIFY_<CHANNEL>_PROVIDER`), e.g. `sandbox`, `msg91` */
	providers: Record<BuyerChannel, string>;
	updated_at: string | null;
}

/** Body of `PATCH /v1/settings/notifications` (validated by the route's schema). */
export interface PreferencesPatch {
	/** a missing (or null) key keeps its value */
	channels?: Partial<Record<BuyerChannel, boolean | null>>;
	events?: Partial<Record<BuyerEventName, boolean | null>>;
	quiet_hours?: { start: string; end: string } | null;
	language?: "en" | "hi";
	ndr_buyer_answers?: "apply" | "approve";
}

/**
 * One buyer message (`GET /v1/orders/{id}/notifications`, the test send). `status`: `queued`,
 * `held` (quiet hours, until `hold_until`), `sent` (the provider accepted it), `delivered` /
 * `failed` (the provider's delivery report, or a refusal), `simulated` (sandbox: nothing sent),
 * `suppressed` (the buyer opted out). The recipient is masked. Times ISO-8601 UTC.
 */
export interface MessageView {
	id: number;
	order_id: number | null;
	awb_number: string | null;
	event: BuyerEventName | "test";
	channel: BuyerChannel;
	lang: "en" | "hi";
	recipient: string;
	status: "queued" | "held" | "sent" | "delivered" | "failed" | "simulated" | "suppressed";
	provider: string | null;
	provider_ref: string | null;
	/** the text as sent (SMS, WhatsApp) or the e-mail's text part */
	body: string;
	error: string | null;
	/** tries at the provider so far */
	tries: number;
	hold_until: string | null;
	created_at: string;
	sent_at: string | null;
	delivered_at: string | null;
	failed_at: string | null;
	updated_at: string;
}

/** What `notifications.callback` answers the gateway (a provider's callback). */
export interface CallbackAnswer {
	reports: number;
	updated: number;
	opted_out: number;
}

/** An HTML (or font) answer of a buyer page: the gateway writes `body` with the action's meta headers. */
export type PageBody = string | Buffer;

export interface NotificationsActions {
	/** GET /v1/settings/branding: the caller's brand. */
	"notifications.branding": { params: RouteParams<Routes["notifications.branding"]>; result: Branding };
	/** PATCH /v1/settings/branding: changes any subset (null clears). */
	"notifications.setBranding": { params: RouteParams<Routes["notifications.setBranding"]>; result: Branding };
	/** GET /track/:token: the buyer's tracking page (HTML; 404 page for a bad token or a dead shipment). */
	"notifications.trackingPage": { params: PageParams; result: PageBody };
	/** GET /track: the AWB look-up form, or a redirect to the page when the AWB and phone digits match. */
	"notifications.trackLookup": { params: PageParams; result: PageBody };
	/** GET /track/assets/:file: the page's Devanagari font. */
	"notifications.trackAsset": { params: PageParams; result: PageBody };
	/** GET /track/:token/stop: the opt-out page (one button). */
	"notifications.stopPage": { params: PageParams; result: PageBody };
	/** POST /track/:token/stop: the shipment's buyer contacts opted out of the merchant's messages. */
	"notifications.stop": { params: PageParams; result: PageBody };
	/** POST /track/:token/ndr: the buyer's answer to a failed delivery (a form post). */
	"notifications.answerNdr": { params: PageParams; result: PageBody };
	/** GET /v1/settings/notifications. */
	"notifications.preferences": {
		params: RouteParams<Routes["notifications.preferences"]>;
		result: NotificationPreferences;
	};
	/** PATCH /v1/settings/notifications. */
	"notifications.setPreferences": {
		params: RouteParams<Routes["notifications.setPreferences"]>;
		result: NotificationPreferences;
	};
	/** POST /v1/settings/notifications/test: a test message now. */
	"notifications.testSend": { params: RouteParams<Routes["notifications.testSend"]>; result: MessageView };
	/** GET /v1/orders/:id/notifications: the order's buyer messages. */
	"notifications.orderMessages": {
		params: RouteParams<Routes["notifications.orderMessages"]>;
		result: { order_id: number; messages: MessageView[] };
	};
	/** POST /v1/notifications/callbacks/:provider: a provider's signed callback (raw body, base64). */
	"notifications.callback": { params: CallbackParams; result: CallbackAnswer };
	/** GET /v1/notifications/callbacks/:provider: a provider's subscription check (the challenge as text). */
	"notifications.callbackCheck": { params: CallbackParams; result: string };
	/** Worker of BullMQ queue `notify-send`: sends one message. */
	"notifications.sendMessage": { params: { id: number }; result: { id: number; status: string } };
	/** Internal (ndr's list): the newest failed-delivery message of each AWB. */
	"notifications.ndrMessages": {
		params: { sender_id: number; awb_numbers: string[] };
		result: Record<string, MessageView>;
	};
	/** Ops / tests: re-adds the jobs of pending messages now. */
	"notifications.sweep": { params: Record<string, never>; result: { enqueued: number } };
}

/** What the gateway's push route passes a provider callback (lib/gateway/route-options.ts `webhookParams`). */
export interface CallbackParams {
	provider: string;
	/** the raw body, base64 */
	body: string;
	/** lower-case names; no Authorization or Cookie */
	headers: Record<string, string>;
	/** the query string's single values */
	query: Record<string, string>;
}

/** What the gateway's page route passes (lib/gateway/route-options.ts `pageBeforeCall`): short strings, "" when absent. */
export interface PageParams {
	token: string;
	file: string;
	awb: string;
	phone_last4: string;
	lang: string;
	accept_language: string;
	/** POST pages: the form's fields (`application/x-www-form-urlencoded`, each a short string); {} for GET */
	form: Record<string, string>;
	/** `GET` or `POST` */
	method: string;
}

export type NotificationsEvents = Record<never, never>;
