/**
 * `notifications` service (issue 29; docs/decisions/0108-buyer-tracking-page.md): what a
 * merchant's buyers see. Owns the PostgreSQL schema `notifications` (lib/notifications/migrations.ts):
 * the brand of the tracking page. Buyer messages (SMS, WhatsApp, e-mail) come next here.
 *
 * Gateway-facing actions:
 * - `notifications.branding` GET /v1/settings/branding (any role),
 *   `notifications.setBranding` PATCH /v1/settings/branding (capability `settings.write`);
 * - the buyer's pages (gateway route kind `page`: no bearer token, rate-limited per client
 *   address): `notifications.trackingPage` GET /track/:token, `notifications.trackLookup`
 *   GET /track, `notifications.trackAsset` GET /track/assets/:file.
 *
 * The handlers parse and answer; the work is plain functions over `NotificationsDeps`
 * (lib/notifications/deps.ts): branding.ts, track.ts (pages), page.ts (HTML); SQL in store.ts.
 * The page reads the shipment from booking (`booking.shipmentByAwb`) and, for the AWB look-up,
 * the delivery phone from intake (`intake.getOrder`). Refuses to start without
 * `LABEL_LINK_SECRET` (the page tokens are signed with a key derived from it).
 */
import type { Context } from "moleculer";
import type { CallMeta, PageBody } from "../lib/contracts";
import { BRANDING_BODY, NOTIFICATIONS_ROUTES } from "../lib/contracts/http/notifications";
import { getBranding, setBranding } from "../lib/notifications/branding";
import type { NotificationsDeps } from "../lib/notifications/deps";
import { NOTIFICATIONS_MIGRATIONS } from "../lib/notifications/migrations";
import {
	forgetPage,
	type PageAnswer,
	trackAsset,
	trackingPage,
	trackLookup,
} from "../lib/notifications/track";
import { senderOf } from "../lib/platform/auth";
import { defineService } from "../lib/platform/service";
import { labelLinkConfigured } from "../lib/shared/label-link";
import { DbMixin } from "../mixins/db.mixin";

/** Hands a page answer to the gateway (status, media type, headers in meta). */
function answer(ctx: Context<unknown, CallMeta>, a: PageAnswer): PageBody {
	ctx.meta.$statusCode = a.status;
	ctx.meta.$responseType = a.type;
	ctx.meta.$responseHeaders = a.headers;
	return a.body;
}

/** The page params as the gateway's page route passes them (each a short string). */
const PAGE_PARAMS = {
	token: { type: "string", max: 200 },
	file: { type: "string", max: 100 },
	awb: { type: "string", max: 100 },
	phone_last4: { type: "string", max: 20 },
	lang: { type: "string", max: 10 },
	accept_language: { type: "string", max: 200 },
} as const;

export default defineService()({
	name: "notifications",
	mixins: [DbMixin("notifications", NOTIFICATIONS_MIGRATIONS)],
	settings: {},
	methods: {
		/** What lib/notifications needs of this service. */
		deps(): NotificationsDeps {
			return { db: this.db, broker: this.broker, logger: this.logger };
		},
	},
	actions: {
		/**
		 * GET /v1/settings/branding: the caller's brand `{brand_name, logo_url, colour,
		 * support_phone, support_email, updated_at}` (all null until set). Access: every
		 * authenticated role.
		 */
		branding: {
			access: NOTIFICATIONS_ROUTES["notifications.branding"].access,
			async handler(ctx) {
				return getBranding(this.deps(), senderOf(ctx));
			},
		},

		/**
		 * PATCH /v1/settings/branding: any subset of the brand's fields (null clears). → 200 the
		 * brand. Errors: 400 `validation_failed` (a field, `body: no updatable field`); 403
		 * (capability `settings.write`: merchant and merchant_admin).
		 */
		setBranding: {
			access: NOTIFICATIONS_ROUTES["notifications.setBranding"].access,
			params: BRANDING_BODY,
			async handler(ctx) {
				const { brand_name, logo_url, colour, support_phone, support_email } = ctx.params;
				return setBranding(this.deps(), senderOf(ctx), {
					brand_name,
					logo_url,
					colour,
					support_phone,
					support_email,
				});
			},
		},

		/**
		 * GET /track/:token: the buyer's tracking page (HTML, CSP without script, no-referrer,
		 * noindex); the 404 page for a bad token or a dead shipment. Errors: 503 (booking).
		 */
		trackingPage: {
			params: PAGE_PARAMS,
			async handler(ctx) {
				return answer(ctx, await trackingPage(this.deps(), ctx, ctx.params));
			},
		},

		/**
		 * GET /track?awb=&phone_last4=: the look-up form (200), its 400 for malformed input, 303 to
		 * the page on a match, the same 404 page for a wrong AWB or phone. Errors: 503.
		 */
		trackLookup: {
			params: PAGE_PARAMS,
			async handler(ctx) {
				return answer(ctx, await trackLookup(ctx, ctx.params));
			},
		},

		/** GET /track/assets/:file: the page's Devanagari font (a year's cache), or 404 plain text. */
		trackAsset: {
			params: PAGE_PARAMS,
			async handler(ctx) {
				return answer(ctx, await trackAsset(ctx.params));
			},
		},
	},
	events: {
		/** A shipment's status changed (booking's broadcast, best effort): its cached pages go. */
		"shipment.status_changed": {
			handler(ctx) {
				forgetPage(ctx.params.awb_number);
			},
		},
	},
	started() {
		if (!labelLinkConfigured()) {
			throw new Error("notifications: LABEL_LINK_SECRET is required (tracking page tokens are signed)");
		}
	},
});
