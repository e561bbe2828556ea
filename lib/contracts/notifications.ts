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
}

/** What the gateway's page route passes (lib/gateway/route-options.ts `pageBeforeCall`): short strings, "" when absent. */
export interface PageParams {
	token: string;
	file: string;
	awb: string;
	phone_last4: string;
	lang: string;
	accept_language: string;
}

export type NotificationsEvents = Record<never, never>;
