/**
 * `notifications` service (issue 29; docs/decisions/0108-buyer-tracking-page.md): what a
 * merchant's buyers see and hear. Owns the PostgreSQL schema `notifications`
 * (lib/notifications/migrations.ts): the brand of the tracking page, the buyer messages (SMS,
 * WhatsApp, e-mail; docs/decisions/0109-buyer-messages.md), the accounts' message preferences,
 * the buyers' opt-outs.
 *
 * Gateway-facing actions:
 * - `notifications.branding` GET /v1/settings/branding (any role),
 *   `notifications.setBranding` PATCH /v1/settings/branding (capability `settings.write`);
 * - the buyer's pages (gateway route kind `page`: no bearer token, rate-limited per client
 *   address): `notifications.trackingPage` GET /track/:token, `notifications.trackLookup`
 *   GET /track, `notifications.trackAsset` GET /track/assets/:file.
 *   `notifications.stopPage` / `notifications.stop` GET / POST /track/:token/stop (opt-out),
 *   `notifications.answerNdr` POST /track/:token/ndr (a failed delivery answered by the buyer);
 * - `notifications.preferences` / `notifications.setPreferences` GET / PATCH
 *   /v1/settings/notifications, `notifications.testSend` POST /v1/settings/notifications/test
 *   (capability `settings.write`), `notifications.orderMessages` GET /v1/orders/:id/notifications;
 * - `notifications.callback` / `notifications.callbackCheck` POST / GET
 *   /v1/notifications/callbacks/:provider (the provider's signature or token).
 *
 * Buyer messages come from the durable `shipment.status_changed` channel (consumer group
 * `notifications`, lib/notifications/dispatch.ts) and are sent by the BullMQ queue
 * `notify-send` (`notifications.sendMessage`, retried with backoff); a sweep every minute re-adds
 * jobs of messages left pending. Internal: `notifications.ndrMessages` (ndr's list),
 * `notifications.sweep` (ops, tests).
 *
 * The handlers parse and answer; the work is plain functions over `NotificationsDeps`
 * (lib/notifications/deps.ts): branding.ts, track.ts (pages), page.ts (HTML); SQL in store.ts.
 * The page reads the shipment from booking (`booking.shipmentByAwb`) and, for the AWB look-up,
 * the delivery phone from intake (`intake.getOrder`). Refuses to start without
 * `LABEL_LINK_SECRET` (the page tokens are signed with a key derived from it).
 */
import type { Context } from "moleculer";
import { type CallMeta, type PageBody, SHIPMENT_STATUS_CHANNEL } from "../lib/contracts";
import {
	BRANDING_BODY,
	NOTIFICATIONS_ROUTES,
	PREFERENCES_BODY,
	TEST_SEND_BODY,
} from "../lib/contracts/http/notifications";
import { getBranding, setBranding } from "../lib/notifications/branding";
import type { NotificationsDeps } from "../lib/notifications/deps";
import {
	handleCallback,
	messageView,
	onStatusChange,
	orderMessages,
	SEND_QUEUE,
	sendMessage,
	sweepPending,
	testSend,
} from "../lib/notifications/dispatch";
import { latestFailedDelivery } from "../lib/notifications/message-store";
import { NOTIFICATIONS_MIGRATIONS } from "../lib/notifications/migrations";
import { changePreferences, preferencesOf, preferencesView } from "../lib/notifications/preferences";
import { checkProviders, closeProviders } from "../lib/notifications/providers";
import { CallbackRejected } from "../lib/notifications/providers/types";
import {
	answerNdr,
	forgetPage,
	type PageAnswer,
	stopPage,
	trackAsset,
	trackingPage,
	trackLookup,
} from "../lib/notifications/track";
import { senderOf } from "../lib/platform/auth";
import { fail, failWith, validationFailed } from "../lib/platform/errors";
import { defineService } from "../lib/platform/service";
import { parsePositiveInt } from "../lib/shared/fields";
import { labelLinkConfigured } from "../lib/shared/label-link";
import { DbMixin } from "../mixins/db.mixin";
import { WorkerMixin } from "../mixins/worker.mixin";

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
	form: { type: "record", key: { type: "string" }, value: { type: "string" }, optional: true },
	method: { type: "string", max: 10, optional: true },
} as const;

/** The params of a provider callback as the gateway's push route passes them. */
const CALLBACK_PARAMS = {
	provider: { type: "string", max: 40 },
	body: { type: "string" },
	headers: { type: "record", key: { type: "string" }, value: { type: "string" } },
	query: { type: "record", key: { type: "string" }, value: { type: "string" } },
} as const;

/** How often the sweep re-adds jobs of messages left pending (ms). */
const SWEEP_MS = 60_000;

/** The service's own members. */
interface NotificationsVars {
	/** the pending-message sweep's timer */
	sweeper?: NodeJS.Timeout;
}

export default defineService<NotificationsVars>()({
	name: "notifications",
	mixins: [
		DbMixin("notifications", NOTIFICATIONS_MIGRATIONS),
		WorkerMixin([{ queue: SEND_QUEUE, action: "notifications.sendMessage", concurrency: 8 }]),
	],
	settings: {},
	methods: {
		/** What lib/notifications needs of this service. */
		deps(): NotificationsDeps {
			return { db: this.db, broker: this.broker, logger: this.logger };
		},

		/**
		 * A provider callback through lib/notifications/dispatch.ts `handleCallback`, its
		 * rejections as the API's errors (401 `invalid_signature`, 400 `validation_failed`).
		 */
		async callbackOf(
			p: { provider: string; body: string; headers: Record<string, string>; query: Record<string, string> },
			method: "GET" | "POST",
		) {
			try {
				return await handleCallback(this.deps(), p.provider, {
					method,
					headers: p.headers,
					query: p.query,
					body: Buffer.from(p.body, "base64"),
				});
			} catch (err) {
				if (!(err instanceof CallbackRejected)) throw err;
				if (err.status === 401) throw fail("invalid_signature");
				throw validationFailed([`body: ${err.message}`]);
			}
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
		 * PATCH /v1/settings/branding, some or all of the brand's fields (null clears). → 200 the
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

		/** GET /track/:token/stop: the opt-out question and its button (changes nothing); the 404 page. Errors: 503. */
		stopPage: {
			params: PAGE_PARAMS,
			async handler(ctx) {
				return answer(ctx, await stopPage(this.deps(), ctx, { ...ctx.params, method: "GET" }));
			},
		},

		/**
		 * POST /track/:token/stop: the shipment's delivery phone and e-mail opted out of its
		 * merchant's messages (pending ones suppressed); the confirmation page, or the 404 page.
		 * Errors: 503.
		 */
		stop: {
			params: PAGE_PARAMS,
			async handler(ctx) {
				return answer(ctx, await stopPage(this.deps(), ctx, { ...ctx.params, method: "POST" }));
			},
		},

		/**
		 * POST /track/:token/ndr: the buyer's answer to a failed delivery (lib/notifications/track.ts
		 * `answerNdr`): 303 to the page; the form again (400 / 409 / 503); the 404 page. Errors: 503.
		 */
		answerNdr: {
			params: PAGE_PARAMS,
			async handler(ctx) {
				return answer(ctx, await answerNdr(this.deps(), ctx, { ...ctx.params, method: "POST" }));
			},
		},

		/**
		 * GET /v1/settings/notifications: the caller's buyer-message preferences
		 * (lib/notifications/preferences.ts; the defaults until changed). Any authenticated role.
		 */
		preferences: {
			access: NOTIFICATIONS_ROUTES["notifications.preferences"].access,
			async handler(ctx) {
				return preferencesView(await preferencesOf(this.deps(), senderOf(ctx)));
			},
		},

		/**
		 * PATCH /v1/settings/notifications, some or all of channels, events, quiet hours (IST),
		 * language, ndr_buyer_answers. → 200 the preferences. Errors: 400 `validation_failed`;
		 * 403 (capability `settings.write`).
		 */
		setPreferences: {
			access: NOTIFICATIONS_ROUTES["notifications.setPreferences"].access,
			params: PREFERENCES_BODY,
			async handler(ctx) {
				const { channels, events, quiet_hours, language, ndr_buyer_answers } = ctx.params;
				return changePreferences(this.deps(), senderOf(ctx), {
					channels: channels ?? undefined,
					events: events ?? undefined,
					quiet_hours,
					language: language ?? undefined,
					ndr_buyer_answers: ndr_buyer_answers ?? undefined,
				});
			},
		},

		/**
		 * POST /v1/settings/notifications/test `{channel, to, lang?}`: the test message now
		 * (recorded first). → 201 the message after one try. Errors: 400 `validation_failed`;
		 * 429 `too_many_test_messages` (20 an hour); 403 (capability `settings.write`).
		 */
		testSend: {
			access: NOTIFICATIONS_ROUTES["notifications.testSend"].access,
			params: TEST_SEND_BODY,
			async handler(ctx) {
				ctx.meta.$statusCode = 201;
				const { channel, to, lang } = ctx.params;
				return testSend(this.deps(), senderOf(ctx), channel, to, lang ?? undefined);
			},
		},

		/**
		 * GET /v1/orders/:id/notifications: the order's buyer messages, oldest first. Errors: 400
		 * `validation_failed` (`id`); 404 `order not found`; 503 (intake).
		 */
		orderMessages: {
			access: NOTIFICATIONS_ROUTES["notifications.orderMessages"].access,
			async handler(ctx) {
				const id = parsePositiveInt((ctx.params as { id?: unknown }).id, { trim: false });
				if (id === null)
					throw failWith("validation_failed", { field: "id", details: ["id: must be a positive integer"] }, [
						"id: must be a positive integer",
					]);
				return orderMessages(this.deps(), ctx, senderOf(ctx), id);
			},
		},

		/**
		 * POST /v1/notifications/callbacks/:provider: a provider's delivery reports and buyer
		 * replies, verified by the provider's signature or token. → `{reports, updated,
		 * opted_out}`. Errors: 404 `not found` (provider not configured); 401
		 * `invalid_signature`; 400 `validation_failed` (not the provider's format).
		 */
		callback: {
			params: CALLBACK_PARAMS,
			async handler(ctx) {
				const { reports, updated, opted_out } = await this.callbackOf(ctx.params, "POST");
				return { reports, updated, opted_out };
			},
		},

		/**
		 * GET /v1/notifications/callbacks/:provider: the provider's subscription check (WhatsApp's
		 * `hub.challenge`), answered as text. Errors: as `callback`.
		 */
		callbackCheck: {
			params: CALLBACK_PARAMS,
			async handler(ctx) {
				const out = await this.callbackOf(ctx.params, "GET");
				ctx.meta.$responseType = "text/plain; charset=utf-8";
				return out.answer ?? "";
			},
		},

		/**
		 * Worker of BullMQ queue `notify-send` (at-least-once, idempotent): sends message `id`
		 * (lib/notifications/dispatch.ts `sendMessage`). Throws when the provider could not tell
		 * and tries remain (BullMQ retries with backoff). Not aliased over HTTP.
		 */
		sendMessage: {
			params: { id: { type: "number", integer: true, positive: true, convert: true } },
			async handler(ctx) {
				const job = (ctx.meta as { job?: { attemptsMade?: number } }).job;
				return sendMessage(this.deps(), ctx.params.id, job?.attemptsMade ?? 0);
			},
		},

		/**
		 * Internal (ndr's list, issue 29): `{sender_id, awb_numbers (≤ 200)}` → the newest
		 * `failed_delivery` message of each AWB that has one, by AWB. Not aliased over HTTP.
		 */
		ndrMessages: {
			params: {
				sender_id: { type: "number", integer: true, positive: true },
				awb_numbers: { type: "array", items: { type: "string", max: 100 }, max: 200 },
			},
			async handler(ctx) {
				const rows = await latestFailedDelivery(this.db, ctx.params.sender_id, ctx.params.awb_numbers);
				return Object.fromEntries(rows.map((r) => [String(r.awb_number), messageView(r)]));
			},
		},

		/** Ops / tests: re-adds the jobs of every message pending now → `{enqueued}`. Not aliased. */
		sweep: {
			async handler() {
				return { enqueued: await sweepPending(this.deps(), 0) };
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
	channels: {
		[SHIPMENT_STATUS_CHANNEL]: {
			group: "notifications",
			/** One status change (at-least-once; lib/notifications/dispatch.ts); a throw makes the channel redeliver it. */
			async handler(payload) {
				await onStatusChange(this.deps(), this.broker, payload);
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
		/** A booked shipment was cancelled (booking's broadcast, best effort): its cached pages go (record 0159). */
		"shipment.cancelled": {
			handler(ctx) {
				forgetPage(ctx.params.awb_number);
			},
		},
	},
	started() {
		if (!labelLinkConfigured()) {
			throw new Error("notifications: LABEL_LINK_SECRET is required (tracking page tokens are signed)");
		}
		checkProviders();
		this.sweeper = setInterval(() => {
			sweepPending(this.deps()).catch((err: Error) =>
				this.logger.warn(`notifications sweep: ${err.message}`),
			);
		}, SWEEP_MS);
	},
	async stopped() {
		if (this.sweeper) clearInterval(this.sweeper);
		this.sweeper = undefined;
		await closeProviders();
	},
});
