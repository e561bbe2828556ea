/**
 * `webhooks` service: merchants' webhook endpoints and the signed delivery of
 * the events other services publish (issue 11 "Webhooks"; docs/ARCHITECTURE.md
 * §1; docs/decisions/0044-merchant-webhooks.md). Owns the PostgreSQL
 * schema `webhooks` (endpoints, events, deliveries, order refs;
 * lib/webhooks/migrations.ts).
 *
 * - Public (gateway): `webhooks.create` POST /v1/webhooks, `webhooks.list`
 *   GET /v1/webhooks, `webhooks.get` / `webhooks.update` /
 *   `webhooks.remove` GET / PATCH / DELETE /v1/webhooks/{id},
 *   `webhooks.rotateSecret` POST /v1/webhooks/{id}/rotate-secret,
 *   `webhooks.deliveries` GET /v1/webhooks/{id}/deliveries,
 *   `webhooks.redeliver` POST /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver,
 *   `webhooks.test` POST /v1/webhooks/{id}/test. Reads: every authenticated
 *   role; writes: capability `orders.write` and not a read-only role.
 * - Events in: durable channels `merchant.events` and
 *   `shipment.status_changed` (group `webhooks`; lib/webhooks/fanout.ts).
 * - Delivery: BullMQ queue `webhooks` (lib/webhooks/worker.ts,
 *   lib/webhooks/deliver.ts), Standard Webhooks signatures
 *   (lib/webhooks/secrets.ts), SSRF-safe HTTP (lib/webhooks/ssrf.ts, http.ts);
 *   a sweeper every `WEBHOOK_SWEEP_MS` re-adds lost jobs (`webhooks.sweep`).
 *
 * The handlers parse and answer; the work is plain functions over
 * `WebhooksDeps` (lib/webhooks/deps.ts): lib/webhooks/requests.ts (the
 * actions and the sweeper's pass), fanout.ts (the channels), deliver.ts and
 * worker.ts (the attempts); SQL in lib/webhooks/store.ts. The service shape
 * every service follows: docs/ARCHITECTURE.md §1, docs/decisions/0091-service-shape.md.
 */

import { MERCHANT_EVENTS_CHANNEL, SHIPMENT_STATUS_CHANNEL } from "../lib/contracts";
import { WEBHOOKS_ROUTES } from "../lib/contracts/http/webhooks";
import { senderOf } from "../lib/platform/auth";
import { cursorSecretConfigured } from "../lib/platform/cursor";
import type { AnyWorker } from "../lib/platform/queue";
import { defineService } from "../lib/platform/service";
import { parseCreate, parseId, parsePatch, webhookNotFound } from "../lib/webhooks/api";
import { type DeliveryBatch, deliveryBatch, EndpointSlots } from "../lib/webhooks/deliver";
import type { WebhooksDeps } from "../lib/webhooks/deps";
import { incomingOfStatus, receive, receiveMerchantMessage } from "../lib/webhooks/fanout";
import { WEBHOOK_MIGRATIONS } from "../lib/webhooks/migrations";
import {
	createWebhook,
	deliveriesPage,
	getWebhook,
	listWebhooks,
	redeliver,
	removeWebhook,
	rotateWebhookSecret,
	sendTestEvent,
	sweepOnce,
	updateWebhook,
} from "../lib/webhooks/requests";
import { openSecret, sealSecret, secretKeyConfigured } from "../lib/webhooks/secrets";
import { type WebhookSettings, webhookSettings } from "../lib/webhooks/settings";
import { deliveryWorker } from "../lib/webhooks/worker";
import { DbMixin } from "../mixins/db.mixin";

/** State set in `created` / `started`. */
interface WebhooksVars {
	settings: WebhookSettings;
	/** attempts in flight per endpoint (this process) */
	slots: EndpointSlots;
	/** coalesced delivery reads and success marks (made in `started`: needs the db) */
	batch: DeliveryBatch;
	worker: AnyWorker | undefined;
	sweepTimer: NodeJS.Timeout | undefined;
	sweeping: Promise<unknown> | undefined;
	whStopping: boolean;
}

export default defineService<WebhooksVars>()({
	name: "webhooks",
	mixins: [DbMixin("webhooks", WEBHOOK_MIGRATIONS)],
	methods: {
		/** What lib/webhooks needs of this service. */
		deps(): WebhooksDeps {
			return {
				db: this.db,
				broker: this.broker,
				settings: this.settings,
				logger: this.logger,
				slots: this.slots,
				batch: this.batch,
			};
		},
	},
	actions: {
		/**
		 * POST /v1/webhooks (issue 11): body `{url, events: [event type…],
		 * description?}` (events: lib/contracts/webhooks.ts WEBHOOK_EVENT_TYPES, e.g.
		 * order.created, order.booked, order.booking_failed, order.cancelled,
		 * shipment.status_changed, ndr.opened, ndr.closed; description ≤ 255
		 * characters). 201
		 * {@link WebhookWithSecret}: the endpoint, enabled, with its `whsec_…`
		 * signing secret (shown only here and on rotation).
		 * Access: capability `orders.write`, read-only roles 403.
		 * Errors: 400 `validation_failed`; 409 `webhook_limit_reached` (more
		 * than `WEBHOOK_MAX_ENDPOINTS`, 20); 422 `url_not_allowed` (not https
		 * outside the sandbox, credentials, a loopback / private / link-local /
		 * metadata address or a name resolving to one, a name that does not resolve).
		 */
		create: {
			access: WEBHOOKS_ROUTES["webhooks.create"].access,
			async handler(ctx) {
				const sender = senderOf(ctx);
				const created = await createWebhook(this.deps(), sender, parseCreate(ctx.params));
				ctx.meta.$statusCode = 201;
				return created;
			},
		},

		/** GET /v1/webhooks: 200 `{data: [WebhookView…]}`, the caller's endpoints oldest first (never a secret). Access: every role. */
		list: {
			access: WEBHOOKS_ROUTES["webhooks.list"].access,
			async handler(ctx) {
				return listWebhooks(this.deps(), senderOf(ctx));
			},
		},

		/** GET /v1/webhooks/{id}: 200 {@link WebhookView}. Errors: 404 `webhook_not_found`. Access: every role. */
		get: {
			access: WEBHOOKS_ROUTES["webhooks.get"].access,
			async handler(ctx) {
				const sender = senderOf(ctx);
				return getWebhook(this.deps(), sender, parseId(ctx.params.id, webhookNotFound));
			},
		},

		/**
		 * PATCH /v1/webhooks/{id}: one or more of `url`, `events`, `description`,
		 * `enabled` (true re-enables a disabled endpoint and clears its reason).
		 * 200 {@link WebhookView}. Access: `orders.write`.
		 * Errors: 400 `validation_failed`; 404 `webhook_not_found`; 422 `url_not_allowed`.
		 */
		update: {
			access: WEBHOOKS_ROUTES["webhooks.update"].access,
			async handler(ctx) {
				const sender = senderOf(ctx);
				const id = parseId(ctx.params.id, webhookNotFound);
				return updateWebhook(this.deps(), sender, id, parsePatch(ctx.params));
			},
		},

		/**
		 * DELETE /v1/webhooks/{id}: 200 `{id, deleted: true}`; its pending
		 * deliveries are dropped. Access: `orders.write`. Errors: 404 `webhook_not_found`.
		 */
		remove: {
			access: WEBHOOKS_ROUTES["webhooks.remove"].access,
			async handler(ctx) {
				const id = parseId(ctx.params.id, webhookNotFound);
				await removeWebhook(this.deps(), senderOf(ctx), id);
				return { id, deleted: true };
			},
		},

		/**
		 * POST /v1/webhooks/{id}/rotate-secret: a new `whsec_…` secret; the old
		 * one keeps signing (a second signature in `webhook-signature`) for
		 * `WEBHOOK_PREVIOUS_SECRET_H` (24) hours. 200 {@link WebhookWithSecret}.
		 * Access: `orders.write`. Errors: 404 `webhook_not_found`.
		 */
		rotateSecret: {
			access: WEBHOOKS_ROUTES["webhooks.rotateSecret"].access,
			async handler(ctx) {
				const sender = senderOf(ctx);
				return rotateWebhookSecret(this.deps(), sender, parseId(ctx.params.id, webhookNotFound));
			},
		},

		/**
		 * GET /v1/webhooks/{id}/deliveries (§2.12, §4.8): query `limit` (1–1000,
		 * default 50), `cursor`, `status` (pending, delivered, failed). 200
		 * {@link WebhookDeliveryPage}, newest first: event type, message id,
		 * attempt count, last status code, latency (ms), error, next retry.
		 * Access: every role. Errors: 400 `validation_failed`, `cursor:
		 * unrecognised shape`; 404 `webhook_not_found`.
		 */
		deliveries: {
			access: WEBHOOKS_ROUTES["webhooks.deliveries"].access,
			async handler(ctx) {
				const sender = senderOf(ctx);
				const id = parseId(ctx.params.id, webhookNotFound);
				return deliveriesPage(this.deps(), sender, id, ctx.params);
			},
		},

		/**
		 * POST /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver: the
		 * delivery is pending again (same event and `webhook-id`, a fresh retry
		 * schedule). 202 {@link WebhookDeliveryView}. Access: `orders.write`.
		 * Errors: 404 `webhook_not_found`, `delivery_not_found`; 409
		 * `webhook_disabled` (re-enable the endpoint first).
		 */
		redeliver: {
			access: WEBHOOKS_ROUTES["webhooks.redeliver"].access,
			async handler(ctx) {
				const sender = senderOf(ctx);
				const id = parseId(ctx.params.id, webhookNotFound);
				const d = await redeliver(this.deps(), sender, id, ctx.params.delivery_id);
				ctx.meta.$statusCode = 202;
				return d;
			},
		},

		/**
		 * POST /v1/webhooks/{id}/test: sends a `webhook.test` event (`data`
		 * `{endpoint_id, message}`) to this endpoint only, signed like every
		 * other. 202 {@link WebhookDeliveryView}. Access: `orders.write`.
		 * Errors: 404 `webhook_not_found`; 409 `webhook_disabled`.
		 */
		test: {
			access: WEBHOOKS_ROUTES["webhooks.test"].access,
			async handler(ctx) {
				const sender = senderOf(ctx);
				const d = await sendTestEvent(this.deps(), sender, parseId(ctx.params.id, webhookNotFound));
				ctx.meta.$statusCode = 202;
				return d;
			},
		},

		/** Ops / tests: one sweeper pass → `{requeued}`. Not aliased over HTTP. */
		sweep: {
			async handler() {
				return { requeued: await sweepOnce(this.deps()) };
			},
		},
	},
	channels: {
		[MERCHANT_EVENTS_CHANNEL]: {
			group: "webhooks",
			maxInFlight: 50,
			/**
			 * A publisher's batch of events, or one event (at-least-once): each stored and fanned out once; the events of
			 * accounts without an enabled endpoint dropped before they are converted.
			 */
			async handler(payload) {
				await receiveMerchantMessage(this.deps(), payload);
			},
		},
		[SHIPMENT_STATUS_CHANNEL]: {
			group: "webhooks",
			maxInFlight: 50,
			/** One shipment status change (at-least-once): stored and fanned out once. */
			async handler(payload) {
				await receive(this.deps(), incomingOfStatus(payload));
			},
		},
	},
	created() {
		this.settings = webhookSettings();
		this.slots = new EndpointSlots(this.settings.endpointInflight);
		this.worker = undefined;
		this.sweepTimer = undefined;
		this.sweeping = undefined;
		this.whStopping = false;
	},
	/** Refuses to run without a cursor secret or a secret key; starts the delivery worker and the sweeper. */
	async started() {
		if (!cursorSecretConfigured())
			throw new Error("webhooks: CURSOR_SECRET or LABEL_LINK_SECRET is required (signed page cursors)");
		if (!secretKeyConfigured())
			throw new Error("webhooks: WEBHOOK_SECRET_KEY or LABEL_LINK_SECRET is required (secrets at rest)");
		openSecret(sealSecret("whsec_check"));
		this.whStopping = false;
		this.batch = deliveryBatch(this.db, this.settings.orderHoldMs);
		const worker = deliveryWorker(this.deps());
		worker.on("error", (err: Error) => this.logger.warn(`webhooks worker: ${err.message}`));
		this.worker = worker;
		const runWhenReady = async () => {
			while (!this.broker.started && !this.whStopping) await new Promise((r) => setTimeout(r, 50));
			if (!this.whStopping)
				worker.run().catch((e: Error) => this.logger.error(`webhooks worker stopped: ${e.message}`));
		};
		void runWhenReady();
		this.sweepTimer = setInterval(() => {
			if (this.sweeping) return;
			this.sweeping = sweepOnce(this.deps())
				.catch((err: Error) => this.logger.warn(`webhooks sweeper: ${err.message}`))
				.finally(() => {
					this.sweeping = undefined;
				});
		}, this.settings.sweepMs);
	},
	async stopped() {
		this.whStopping = true;
		if (this.sweepTimer) clearInterval(this.sweepTimer);
		this.sweepTimer = undefined;
		await this.sweeping;
		await this.worker?.close().catch(() => undefined);
		this.worker = undefined;
	},
});
