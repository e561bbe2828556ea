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

/** Body of `PATCH /v1/settings/branding`: any subset; `null` clears a field (at least one: checked by the action). */
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
			"Ours (docs/decisions/0108-buyer-tracking-page.md): any subset of `brand_name` (1–80 characters), `logo_url` (https), `colour` (`#RRGGBB`), `support_phone` (10 digits), `support_email`; `null` clears one. Pages already open show it within a minute. Capability `settings.write` (merchant, merchant_admin); other roles are refused.",
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
});
