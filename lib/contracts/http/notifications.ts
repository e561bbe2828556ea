/**
 * The HTTP routes of the `notifications` service (issue 29;
 * docs/decisions/0108-buyer-tracking-page.md): the merchant's brand settings and the buyer's
 * pages — the tracking page behind its signed link, the AWB look-up, the page's font. One
 * definition each (lib/platform/openapi/route.ts).
 */
import type { ValidationSchema } from "fastest-validator";
import { json, queryParam } from "../../platform/openapi/components";
import { nullableStr, utc } from "../../platform/openapi/helpers";
import { defineRoutes } from "../../platform/openapi/route";
import type { JsonSchema, Response } from "../../platform/openapi/types";
import { PHONE_10_DIGITS } from "../../shared/fields";
import { LINK_TAG_LENGTH } from "../../shared/label-link";

/** Body of `PATCH /v1/settings/branding`, some or all of the fields; `null` clears a field (at least one: checked by the action). */
export const BRANDING_BODY = {
	$$strict: "remove",
	brand_name: { type: "string", trim: true, min: 1, max: 80, optional: true, nullable: true },
	logo_url: {
		type: "string",
		trim: true,
		max: 500,
		pattern: /^https:\/\/[^\s"'<>\\]+$/,
		optional: true,
		nullable: true,
		messages: { stringPattern: "must be an https URL" },
	},
	colour: {
		type: "string",
		pattern: /^#[0-9A-Fa-f]{6}$/,
		optional: true,
		nullable: true,
		messages: { stringPattern: "must be #RRGGBB" },
	},
	support_phone: {
		type: "string",
		trim: true,
		pattern: PHONE_10_DIGITS,
		optional: true,
		nullable: true,
		messages: { stringPattern: "must be 10 digits" },
	},
	support_email: { type: "email", max: 191, optional: true, nullable: true },
} as const satisfies ValidationSchema;

/** The brand (lib/contracts/notifications.ts `Branding`). */
const BRANDING: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: ["brand_name", "logo_url", "colour", "support_phone", "support_email", "updated_at"],
	properties: {
		brand_name: nullableStr("the page's heading; null: the neutral page"),
		logo_url: nullableStr("an https URL of the logo, shown at most 160 × 48 px"),
		colour: { type: ["string", "null"], pattern: "^#[0-9A-F]{6}$", description: "the accent colour" },
		support_phone: nullableStr("10 digits, a call link on the page"),
		support_email: nullableStr("a mail link on the page"),
		updated_at: utc("its last change; null when never set", true),
	},
};

const HHMM = {
	type: "string",
	pattern: /^([01][0-9]|2[0-3]):[0-5][0-9]$/,
	messages: { stringPattern: "must be HH:MM (IST)" },
} as const;
const ON_OFF = { type: "boolean", optional: true } as const;

/** Body of `PATCH /v1/settings/notifications`, some or all of the fields (at least one: checked by the action). */
export const PREFERENCES_BODY = {
	$$strict: "remove",
	channels: {
		type: "object",
		optional: true,
		strict: true,
		props: { sms: ON_OFF, whatsapp: ON_OFF, email: ON_OFF },
	},
	events: {
		type: "object",
		optional: true,
		strict: true,
		props: {
			shipped: ON_OFF,
			out_for_delivery: ON_OFF,
			delivered: ON_OFF,
			failed_delivery: ON_OFF,
			rto_initiated: ON_OFF,
		},
	},
	quiet_hours: {
		type: "object",
		optional: true,
		nullable: true,
		strict: true,
		props: { start: HHMM, end: HHMM },
	},
	language: { type: "enum", values: ["en", "hi"], optional: true },
	ndr_buyer_answers: { type: "enum", values: ["apply", "approve"], optional: true },
} as const satisfies ValidationSchema;

/** Body of `POST /v1/settings/notifications/test`. */
export const TEST_SEND_BODY = {
	$$strict: "remove",
	channel: { type: "enum", values: ["sms", "whatsapp", "email"] },
	to: { type: "string", trim: true, min: 3, max: 191 },
	lang: { type: "enum", values: ["en", "hi"], optional: true },
} as const satisfies ValidationSchema;

const CHANNEL_NAMES = ["sms", "whatsapp", "email"] as const;
const EVENT_NAMES = ["shipped", "out_for_delivery", "delivered", "failed_delivery", "rto_initiated"] as const;
const flags = (keys: readonly string[], what: string): JsonSchema => ({
	type: "object",
	additionalProperties: false,
	required: [...keys],
	properties: Object.fromEntries(keys.map((k) => [k, { type: "boolean", description: `${what} \`${k}\`` }])),
});

/** The preferences (lib/contracts/notifications.ts `NotificationPreferences`). */
const PREFERENCES: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: ["channels", "events", "quiet_hours", "language", "ndr_buyer_answers", "providers", "updated_at"],
	properties: {
		channels: flags(CHANNEL_NAMES, "buyers are messaged on"),
		events: flags(EVENT_NAMES, "buyers are told about"),
		quiet_hours: {
			type: ["object", "null"],
			additionalProperties: false,
			required: ["start", "end"],
			description: "IST; a message made inside is `held` and sent at `end`; may span midnight; null: none",
			properties: {
				start: { type: "string", pattern: "^[0-2][0-9]:[0-5][0-9]$" },
				end: { type: "string", pattern: "^[0-2][0-9]:[0-5][0-9]$" },
			},
		},
		language: { type: "string", enum: ["en", "hi"], description: "the messages' language" },
		ndr_buyer_answers: {
			type: "string",
			enum: ["apply", "approve"],
			description:
				"`apply`: a buyer's answer on the tracking page to a failed delivery is sent to the courier at once (an NDR action `by: buyer`); `approve`: it is shown on the NDR row (`buyer_answer`) and waits for your own action",
		},
		providers: {
			type: "object",
			additionalProperties: false,
			required: [...CHANNEL_NAMES],
			description:
				"the provider each channel is configured with (`NOTIFY_<CHANNEL>_PROVIDER`); `sandbox` sends nothing",
			properties: Object.fromEntries(CHANNEL_NAMES.map((c) => [c, { type: "string" }])),
		},
		updated_at: utc("its last change; null when never set", true),
	},
};

/** One buyer message (lib/contracts/notifications.ts `MessageView`). */
export const MESSAGE: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: [
		"id",
		"order_id",
		"awb_number",
		"event",
		"channel",
		"lang",
		"recipient",
		"status",
		"provider",
		"provider_ref",
		"body",
		"error",
		"tries",
		"hold_until",
		"created_at",
		"sent_at",
		"delivered_at",
		"failed_at",
		"updated_at",
	],
	properties: {
		id: { type: "integer" },
		order_id: { type: ["integer", "null"], description: "null for a test send" },
		awb_number: nullableStr("null for a test send"),
		event: { type: "string", enum: [...EVENT_NAMES, "test"] },
		channel: { type: "string", enum: [...CHANNEL_NAMES] },
		lang: { type: "string", enum: ["en", "hi"] },
		recipient: { type: "string", description: "masked: `******1234`, `a***@example.com`" },
		status: {
			type: "string",
			enum: ["queued", "held", "sent", "delivered", "failed", "simulated", "suppressed"],
			description:
				"`queued`; `held` (quiet hours, until `hold_until`); `sent` (the provider accepted it); `delivered` / `failed` (only from the provider's delivery report, or its refusal, or after the last try); `simulated` (the sandbox: nothing left the system); `suppressed` (the buyer opted out)",
		},
		provider: nullableStr("`sandbox`, `msg91`, `whatsapp_cloud`, `smtp`; null before the first try"),
		provider_ref: nullableStr("the provider's message id"),
		body: { type: "string", description: "the text as sent (the e-mail's text part)" },
		error: nullableStr("the provider's words of a refusal or of the last failed try"),
		tries: { type: "integer", description: "tries at the provider so far" },
		hold_until: utc("held: when it will be sent", true),
		created_at: utc("recorded"),
		sent_at: utc("the provider accepted it", true),
		delivered_at: utc("the provider reported the delivery", true),
		failed_at: utc("it failed", true),
		updated_at: utc("its last change"),
	},
};

/** Headers of every buyer page (as a signed label link's: the URL is a credential). */
const PAGE_HEADERS = {
	"Content-Security-Policy": {
		description:
			"`default-src 'none'; style-src 'sha256-…'` (the page's one style block), `img-src https:`, `font-src 'self'`, `form-action 'self'`, `base-uri 'none'`, `frame-ancestors 'none'`: no script at all",
		required: true,
		schema: { type: "string" },
	},
	"Referrer-Policy": { description: "`no-referrer`", required: true, schema: { type: "string" } },
	"X-Robots-Tag": { description: "`noindex, nofollow`", required: true, schema: { type: "string" } },
	"Cache-Control": {
		description: "`private, max-age=60` on a page; `no-store` on a 404 or 400",
		required: true,
		schema: { type: "string" },
	},
} as const;

/** An HTML answer of a buyer page. */
function htmlPage(description: string): Response {
	return {
		description,
		headers: PAGE_HEADERS,
		content: { "text/html": { schema: { type: "string" } } },
	};
}

const NOT_FOUND_PAGE = htmlPage(
	"A plain page “Shipment not found” with the AWB look-up form: a bad token (malformed, tampered, another key), an AWB no live booking holds (cancelled, unknown), or an AWB and phone digits that do not match — the same page for each.",
);

const LANG_PARAMS = [
	queryParam("lang", "`en` or `hi`; else the first of `Accept-Language` that is one, else English", {
		type: "string",
		enum: ["en", "hi"],
	}),
];

export const NOTIFICATIONS_ROUTES = defineRoutes({
	"notifications.branding": {
		route: "GET /v1/settings/branding",
		access: { auth: true },
		tag: "buyer",
		operationId: "settings_branding",
		summary: "Your brand on the buyer's tracking page",
		description:
			"Ours (issue 29; docs/decisions/0108-buyer-tracking-page.md): the name, logo, colour and support contacts the tracking page shows your buyers; every field null until set. Any authenticated role.",
		responses: { "200": json("The brand.", BRANDING) },
	},
	"notifications.setBranding": {
		route: "PATCH /v1/settings/branding",
		access: { writes: true, capability: "settings.write" },
		tag: "buyer",
		operationId: "settings_setBranding",
		summary: "Change your brand on the buyer's tracking page",
		description:
			"Ours (docs/decisions/0108-buyer-tracking-page.md). Some or all of `brand_name` (1–80 characters), `logo_url` (https), `colour` (`#RRGGBB`), `support_phone` (10 digits), `support_email`; `null` clears one. Pages already open show it within a minute. Capability `settings.write` (merchant, merchant_admin); other roles are refused.",
		body: BRANDING_BODY,
		responses: { "200": json("The brand after the change.", BRANDING) },
		errors: [
			{
				code: "validation_failed",
				when: "with `details`: a field malformed, a control character in `brand_name`, or `body: no updatable field`",
			},
		],
	},
	"notifications.trackLookup": {
		route: "GET /track",
		kind: "page",
		tag: "buyer",
		operationId: "track_lookup",
		summary: "The buyer's look-up by AWB",
		description:
			"Ours (docs/decisions/0108-buyer-tracking-page.md), for a buyer who has only the AWB: without `awb` the look-up form; with `awb` and `phone_last4` (the last 4 digits of the delivery phone) that match a live shipment, 303 to its tracking page; otherwise the same 404 page for a wrong AWB and a wrong phone. No Authorization header. Rate-limited per client address (`RATE_LIMIT_LINK_PER_MIN`).",
		queryParams: [
			queryParam("awb", "the AWB"),
			queryParam("phone_last4", "the last 4 digits of the delivery phone", {
				type: "string",
				pattern: "^[0-9]{4}$",
			}),
			...LANG_PARAMS,
		],
		responses: {
			"200": htmlPage("The look-up form."),
			"303": {
				description: "The AWB and the phone digits match: the shipment's tracking page.",
				headers: {
					Location: { description: "`/track/{token}`", required: true, schema: { type: "string" } },
				},
			},
			"400": htmlPage(
				"The look-up form with what is malformed (`awb` not an AWB, `phone_last4` not 4 digits).",
			),
			"404": NOT_FOUND_PAGE,
		},
		errors: [{ code: "service_unavailable", when: "the shipment could not be read; retry" }],
	},
	"notifications.trackAsset": {
		route: "GET /track/assets/:file",
		kind: "page",
		tag: "buyer",
		operationId: "track_asset",
		summary: "The tracking page's font",
		description:
			"Noto Sans Devanagari (SIL Open Font License), so Hindi pages render on every phone; cached for a year. Any other file: 404.",
		path: { file: { description: "`noto-sans-devanagari-400.ttf` or `noto-sans-devanagari-700.ttf`" } },
		responses: {
			"200": {
				description: "The font.",
				headers: {
					"Cache-Control": {
						description: "`public, max-age=31536000, immutable`",
						required: true,
						schema: { type: "string" },
					},
				},
				content: { "font/ttf": { schema: { type: "string", contentMediaType: "font/ttf" } } },
			},
			"404": {
				description: "Not a file of the page.",
				content: { "text/plain": { schema: { type: "string" } } },
			},
		},
	},
	"notifications.trackingPage": {
		route: "GET /track/:token",
		kind: "page",
		tag: "buyer",
		operationId: "track_page",
		summary: "The buyer's tracking page",
		description: `Ours (issue 29; docs/decisions/0108-buyer-tracking-page.md): a server-rendered HTML page (no script) of a live shipment, in English or Hindi: your brand, the status and its history (IST), the promised delivery date, the courier and the AWB — nothing else about the buyer. No Authorization header: the token \`{awb}.{hmac}\` (${LINK_TAG_LENGTH} base64url characters of HMAC-SHA256 under the label-link secrets, with its own key) is the credential; it is the order's \`tracking_page_url\`. Rate-limited per client address.`,
		path: { token: { description: "`{awb}.{hmac}`" } },
		queryParams: [...LANG_PARAMS],
		responses: { "200": htmlPage("The page."), "404": NOT_FOUND_PAGE },
		errors: [{ code: "service_unavailable", when: "the shipment could not be read; retry" }],
	},
	"notifications.stopPage": {
		route: "GET /track/:token/stop",
		kind: "page",
		tag: "buyer",
		operationId: "track_stopPage",
		summary: "The buyer's opt-out page",
		description:
			"Ours (issue 29; docs/decisions/0109-buyer-messages.md): the link at the end of every buyer message. A page with one button; nothing changes until it is pressed (a link preview or a mail scanner opening the URL opts nobody out).",
		path: { token: { description: "`{awb}.{hmac}`, the tracking page's token" } },
		queryParams: [...LANG_PARAMS],
		responses: { "200": htmlPage("The opt-out page."), "404": NOT_FOUND_PAGE },
		errors: [{ code: "service_unavailable", when: "the shipment could not be read; retry" }],
	},
	"notifications.stop": {
		route: "POST /track/:token/stop",
		kind: "page",
		tag: "buyer",
		operationId: "track_stop",
		summary: "Opt the buyer out of this merchant's messages",
		description:
			"Ours (docs/decisions/0109-buyer-messages.md): the shipment's delivery phone and e-mail get no more messages from this merchant (SMS, WhatsApp, e-mail; messages still queued or held become `suppressed`). Other merchants' messages are not affected. Answers a page saying so. A form post (`application/x-www-form-urlencoded`), no fields needed.",
		path: { token: { description: "`{awb}.{hmac}`" } },
		queryParams: [...LANG_PARAMS],
		responses: { "200": htmlPage("Done: no more messages from this merchant."), "404": NOT_FOUND_PAGE },
		errors: [{ code: "service_unavailable", when: "the shipment could not be read; retry" }],
	},
	"notifications.answerNdr": {
		route: "POST /track/:token/ndr",
		kind: "page",
		tag: "buyer",
		operationId: "track_answerNdr",
		summary: "The buyer's answer to a failed delivery",
		description:
			"Ours (issue 29; docs/decisions/0110-buyer-ndr-answers.md): the form the tracking page shows while the shipment's NDR case waits for an answer (`application/x-www-form-urlencoded`): `attempt` (the attempt the page showed), `choice` `reattempt` with `date` (one of the listed days: tomorrow to 6 days ahead, IST, within the courier's window, delivery days only), `update` with `address_1` (3–255 characters), `landmark` (≤ 255) and/or `phone` (an Indian mobile; the pincode cannot change), or `decline`. The answer becomes the NDR action (`DEFER_DLV`, `EDIT_DETAILS`, or the case to RTO) through the path of `POST /v1/shipping/ndr`, recorded `by: buyer`; with the merchant's `ndr_buyer_answers: approve` it waits on the NDR row (`buyer_answer`) instead. One answer per attempt. Answers 303 to the page, which says what was done.",
		path: { token: { description: "`{awb}.{hmac}`" } },
		queryParams: [...LANG_PARAMS],
		responses: {
			"303": {
				description: "Taken (or nothing left to answer): the tracking page, which says what was done.",
				headers: {
					Location: { description: "`/track/{token}?lang=…`", required: true, schema: { type: "string" } },
				},
			},
			"400": htmlPage("The page with the form again and what is wrong."),
			"404": NOT_FOUND_PAGE,
			"409": htmlPage("A newer delivery attempt failed since the page was shown: the form for it."),
		},
		errors: [
			{
				code: "service_unavailable",
				when: "the shipment could not be read; retry. When only the answer could not be sent (ndr or the courier unreachable), the 503 is the page with the form (HTML), to send again",
			},
		],
	},
	"notifications.preferences": {
		route: "GET /v1/settings/notifications",
		access: { auth: true },
		tag: "buyer",
		operationId: "settings_notifications",
		summary: "Your buyer-message preferences",
		description:
			"Ours (issue 29; docs/decisions/0109-buyer-messages.md): which channels and events reach your buyers, quiet hours (IST), the language, what happens to a buyer's answer to a failed delivery, and which provider each channel uses. Defaults: SMS and e-mail on, WhatsApp off, every event on, no quiet hours, English, `apply`. Any authenticated role.",
		responses: { "200": json("The preferences.", PREFERENCES) },
	},
	"notifications.setPreferences": {
		route: "PATCH /v1/settings/notifications",
		access: { writes: true, capability: "settings.write" },
		tag: "buyer",
		operationId: "settings_setNotifications",
		summary: "Change your buyer-message preferences",
		description:
			"Ours (docs/decisions/0109-buyer-messages.md). Some or all of `channels` and `events` (partial maps of booleans), `quiet_hours` (`{start, end}` IST `HH:MM`, different; null: none), `language` (`en`, `hi`), `ndr_buyer_answers` (`apply`, `approve`). Applies to messages made after it. Capability `settings.write` (merchant, merchant_admin).",
		body: PREFERENCES_BODY,
		responses: { "200": json("The preferences after the change.", PREFERENCES) },
		errors: [
			{
				code: "validation_failed",
				when: "with `details`: a field malformed or unknown, `quiet_hours: start and end must differ`, or `body: no updatable field`",
			},
		],
	},
	"notifications.testSend": {
		route: "POST /v1/settings/notifications/test",
		access: { writes: true, capability: "settings.write" },
		tag: "buyer",
		operationId: "settings_testNotification",
		summary: "Send yourself a test message",
		description:
			"Ours (docs/decisions/0109-buyer-messages.md): the `test` message to `to` (an Indian mobile for `sms` / `whatsapp`, an address for `email`) now, through the channel's configured provider, whatever the channel switches and quiet hours say (an opted-out contact stays `suppressed`). The message is recorded before it is sent; the answer is its state after one try (`simulated` with the sandbox). At most 20 per hour per account.",
		body: TEST_SEND_BODY,
		responses: { "201": json("The message after its first try.", MESSAGE) },
		errors: [
			{
				code: "validation_failed",
				when: "with `details`: `channel` not one of the three, `to` not a contact of that channel",
			},
			"too_many_test_messages",
		],
	},
	"notifications.orderMessages": {
		route: "GET /v1/orders/:id/notifications",
		access: { auth: true },
		tag: "buyer",
		operationId: "orders_notifications",
		summary: "The buyer messages of an order",
		description:
			"Ours (issue 29; docs/decisions/0109-buyer-messages.md): every message sent (or held, suppressed, simulated) to the order's buyer, oldest first, with its state; recipients masked. Any authenticated role.",
		path: {
			id: {
				description: "the order's `order_id`",
				schema: { type: "string", pattern: "^[1-9][0-9]{0,15}$" },
			},
		},
		responses: {
			"200": json("The order's messages.", {
				type: "object",
				additionalProperties: false,
				required: ["order_id", "messages"],
				properties: { order_id: { type: "integer" }, messages: { type: "array", items: MESSAGE } },
			}),
		},
		errors: [
			{ code: "validation_failed", when: "`id` not a positive integer" },
			{ code: "order not found", when: "no such order on the account" },
			{ code: "service_unavailable", when: "intake could not be asked; retry" },
		],
	},
	"notifications.callback": {
		route: "POST /v1/notifications/callbacks/:provider",
		kind: "courier_push",
		tag: "buyer",
		operationId: "notifications_callback",
		summary: "A message provider's delivery report or buyer reply",
		description:
			"Ours (issue 29; docs/decisions/0109-buyer-messages.md): where a provider pushes delivery reports (a `sent` message becomes `delivered` or `failed`) and buyer replies (`STOP` opts the number out for every merchant that messaged it). No bearer token: `whatsapp_cloud` signs the raw body (`X-Hub-Signature-256: sha256=<HMAC-SHA256 under WHATSAPP_APP_SECRET>`); `msg91` signs nothing, so its webhook URL carries `?token=` (`MSG91_CALLBACK_TOKEN`). A provider that is not configured is 404; a bad signature or token 401; a body not in the provider's format 400. Never rate-limited.",
		path: {
			provider: { description: "`msg91` or `whatsapp_cloud`", schema: { type: "string", maxLength: 40 } },
		},
		queryParams: [queryParam("token", "`msg91`: the callback token")],
		requestBody: {
			required: true,
			description: "The provider's own webhook format, byte for byte.",
			content: { "application/json": { schema: { type: "object" } } },
		},
		responses: {
			"200": json("Applied.", {
				type: "object",
				additionalProperties: false,
				required: ["reports", "updated", "opted_out"],
				properties: {
					reports: { type: "integer", description: "delivery reports in the callback" },
					updated: { type: "integer", description: "messages whose state changed" },
					opted_out: { type: "integer", description: "opt-outs recorded" },
				},
			}),
		},
		errors: [
			{ code: "not found", when: "no such provider is configured" },
			{ code: "invalid_signature", when: "the signature or token is missing or wrong" },
			{ code: "validation_failed", when: "the body is not the provider's format" },
		],
	},
	"notifications.callbackCheck": {
		route: "GET /v1/notifications/callbacks/:provider",
		kind: "courier_push",
		tag: "buyer",
		operationId: "notifications_callbackCheck",
		summary: "A message provider's subscription check",
		description:
			"Ours (docs/decisions/0109-buyer-messages.md): WhatsApp's webhook verification: with `hub.mode=subscribe` and `hub.verify_token` equal to `WHATSAPP_VERIFY_TOKEN`, answers `hub.challenge` as text; a wrong token is 401.",
		path: { provider: { description: "`whatsapp_cloud`", schema: { type: "string", maxLength: 40 } } },
		queryParams: [
			queryParam("hub.mode", "`subscribe`"),
			queryParam("hub.verify_token", "the verify token"),
			queryParam("hub.challenge", "echoed back"),
		],
		responses: {
			"200": { description: "The challenge.", content: { "text/plain": { schema: { type: "string" } } } },
		},
		errors: [
			{ code: "not found", when: "no such provider is configured" },
			{ code: "invalid_signature", when: "the verify token is missing or wrong" },
		],
	},
});
