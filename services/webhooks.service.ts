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
 */
import { randomUUID } from "node:crypto";
import { senderOf } from "../lib/auth";
import {
	MERCHANT_EVENTS_CHANNEL,
	SHIPMENT_STATUS_CHANNEL,
	WEBHOOK_TEST_TYPE,
	type WebhookDeliveryPage,
	type WebhookDeliveryView,
	type WebhookSweepResult,
	type WebhookView,
	type WebhookWithSecret,
} from "../lib/contracts";
import { cursorSecretConfigured } from "../lib/cursor";
import { fail } from "../lib/errors";
import type { AnyWorker } from "../lib/queue";
import { defineService } from "../lib/service";
import {
	deliveryNotFound,
	deliveryViewOf,
	nextCursorOf,
	parseCreate,
	parseDeliveryQuery,
	parseId,
	parsePatch,
	viewOf,
	webhookNotFound,
} from "../lib/webhooks/api";
import { type DeliverDeps, type DeliveryBatch, deliveryBatch, EndpointSlots } from "../lib/webhooks/deliver";
import { incomingOfMerchantMessage, incomingOfStatus, msgIdOf, receive } from "../lib/webhooks/fanout";
import { WEBHOOK_MIGRATIONS } from "../lib/webhooks/migrations";
import { newSecret, openSecret, sealSecret, secretKeyConfigured } from "../lib/webhooks/secrets";
import { type WebhookSettings, webhookSettings } from "../lib/webhooks/settings";
import { assertResolvable, checkUrlShape } from "../lib/webhooks/ssrf";
import {
	countEndpoints,
	deleteEndpoint,
	type EndpointRow,
	getEndpoint,
	insertEndpoint,
	insertTestDelivery,
	listDeliveries,
	listEndpoints,
	resetForRedelivery,
	rotateSecret,
	sweepCandidates,
	updateEndpoint,
} from "../lib/webhooks/store";
import { deliveryWorker, enqueueDeliveries, jobMissing } from "../lib/webhooks/worker";
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

/** Access of the write routes: capability `orders.write`, read-only roles refused first. */
const WRITE = { capability: "orders.write", writes: true } as const;
/** Access of the read routes: every authenticated role. */
const READ = { auth: true } as const;

/** Pending deliveries looked at per sweeper pass. */
const SWEEP_BATCH = 500;

export default defineService<WebhooksVars>()({
	name: "webhooks",
	mixins: [DbMixin("webhooks", WEBHOOK_MIGRATIONS)],
	methods: {
		/** What lib/webhooks needs of this service. */
		deps(): DeliverDeps {
			return {
				db: this.db,
				broker: this.broker,
				settings: this.settings,
				logger: this.logger,
				slots: this.slots,
				batch: this.batch,
			};
		},

		/** The caller's endpoint `id` (path param), or 404 `webhook_not_found`. */
		async ownEndpoint(sender: number, rawId: unknown): Promise<EndpointRow> {
			const e = await getEndpoint(this.db, sender, parseId(rawId, webhookNotFound));
			if (!e) throw webhookNotFound();
			return e;
		},

		/** Checks a receiver URL (shape, scheme, addresses it resolves to). @throws 400 / 422 `url_not_allowed` */
		async checkUrl(raw: string): Promise<string> {
			const u = checkUrlShape(raw, this.settings.sandbox);
			await assertResolvable(u, this.settings.sandbox);
			return u.toString();
		},

		/** One sweeper pass: pending deliveries (older than the sweep period) whose job is missing get it again. */
		async sweepOnce(): Promise<number> {
			const olderMs = Math.max(this.settings.sweepMs, 1000);
			const candidates = await sweepCandidates(this.db, olderMs, SWEEP_BATCH);
			const missing = [];
			for (const d of candidates) if (await jobMissing(d)) missing.push(d);
			await enqueueDeliveries(missing, this.settings);
			if (missing.length) this.logger.info(`webhooks sweeper: re-added ${missing.length} delivery job(s)`);
			return missing.length;
		},
	},
	actions: {
		/**
		 * POST /v1/webhooks (issue 11): body `{url, events: [event type…],
		 * description?}` (events: order.created, order.booked,
		 * order.booking_failed, shipment.status_changed, ndr.opened,
		 * ndr.closed; description ≤ 255 characters). 201
		 * {@link WebhookWithSecret}: the endpoint, enabled, with its `whsec_…`
		 * signing secret (shown only here and on rotation).
		 * Access: capability `orders.write`, read-only roles 403.
		 * Errors: 400 `validation_failed`; 409 `webhook_limit_reached` (more
		 * than `WEBHOOK_MAX_ENDPOINTS`, 20); 422 `url_not_allowed` (not https
		 * outside the sandbox, credentials, a loopback / private / link-local /
		 * metadata address or a name resolving to one, a name that does not resolve).
		 */
		create: {
			access: WRITE,
			async handler(ctx): Promise<WebhookWithSecret> {
				const sender = senderOf(ctx);
				const input = parseCreate(ctx.params);
				const url = await this.checkUrl(input.url);
				if ((await countEndpoints(this.db, sender)) >= this.settings.maxEndpoints) {
					throw fail("webhook_limit_reached", this.settings.maxEndpoints);
				}
				const secret = newSecret();
				const row = await insertEndpoint(this.db, {
					sender_id: sender,
					url,
					events: input.events,
					description: input.description,
					secret: sealSecret(secret),
				});
				ctx.meta.$statusCode = 201;
				return { ...viewOf(row), secret };
			},
		},

		/** GET /v1/webhooks: 200 `{data: [WebhookView…]}`, the caller's endpoints oldest first (never a secret). Access: every role. */
		list: {
			access: READ,
			async handler(ctx): Promise<{ data: WebhookView[] }> {
				return { data: (await listEndpoints(this.db, senderOf(ctx))).map(viewOf) };
			},
		},

		/** GET /v1/webhooks/{id}: 200 {@link WebhookView}. Errors: 404 `webhook_not_found`. Access: every role. */
		get: {
			access: READ,
			async handler(ctx): Promise<WebhookView> {
				return viewOf(await this.ownEndpoint(senderOf(ctx), ctx.params.id));
			},
		},

		/**
		 * PATCH /v1/webhooks/{id}: one or more of `url`, `events`, `description`,
		 * `enabled` (true re-enables a disabled endpoint and clears its reason).
		 * 200 {@link WebhookView}. Access: `orders.write`.
		 * Errors: 400 `validation_failed`; 404 `webhook_not_found`; 422 `url_not_allowed`.
		 */
		update: {
			access: WRITE,
			async handler(ctx): Promise<WebhookView> {
				const sender = senderOf(ctx);
				const id = parseId(ctx.params.id, webhookNotFound);
				const patch = parsePatch(ctx.params);
				if (patch.url !== undefined) patch.url = await this.checkUrl(patch.url);
				const row = await updateEndpoint(this.db, sender, id, patch);
				if (!row) throw webhookNotFound();
				return viewOf(row);
			},
		},

		/**
		 * DELETE /v1/webhooks/{id}: 200 `{id, deleted: true}`; its pending
		 * deliveries are dropped. Access: `orders.write`. Errors: 404 `webhook_not_found`.
		 */
		remove: {
			access: WRITE,
			async handler(ctx): Promise<{ id: number; deleted: true }> {
				const id = parseId(ctx.params.id, webhookNotFound);
				if (!(await deleteEndpoint(this.db, senderOf(ctx), id))) throw webhookNotFound();
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
			access: WRITE,
			async handler(ctx): Promise<WebhookWithSecret> {
				const sender = senderOf(ctx);
				const id = parseId(ctx.params.id, webhookNotFound);
				const secret = newSecret();
				const row = await rotateSecret(
					this.db,
					sender,
					id,
					sealSecret(secret),
					this.settings.previousSecretH,
				);
				if (!row) throw webhookNotFound();
				return { ...viewOf(row), secret };
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
			access: READ,
			async handler(ctx): Promise<WebhookDeliveryPage> {
				const sender = senderOf(ctx);
				const ep = await this.ownEndpoint(sender, ctx.params.id);
				const q = parseDeliveryQuery(ctx.params, sender, ep.id);
				const rows = await listDeliveries(this.db, {
					sender_id: sender,
					endpoint_id: ep.id,
					before_id: q.before_id,
					take: q.limit + 1,
					status: q.status,
				});
				const more = rows.length > q.limit;
				const page = rows.slice(0, q.limit);
				return {
					data: page.map(deliveryViewOf),
					pagination: {
						mode: "cursor",
						limit: q.limit,
						nextCursor: nextCursorOf(sender, ep.id, q, page[page.length - 1]?.id, more),
					},
				};
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
			access: WRITE,
			async handler(ctx): Promise<WebhookDeliveryView> {
				const sender = senderOf(ctx);
				const ep = await this.ownEndpoint(sender, ctx.params.id);
				const did = parseId(ctx.params.delivery_id, deliveryNotFound);
				if (!ep.enabled) throw fail("webhook_disabled");
				const d = await resetForRedelivery(this.db, sender, ep.id, did);
				if (!d) throw deliveryNotFound();
				await enqueueDeliveries([{ id: d.id, gen: d.gen }], this.settings);
				ctx.meta.$statusCode = 202;
				return deliveryViewOf(d);
			},
		},

		/**
		 * POST /v1/webhooks/{id}/test: sends a `webhook.test` event (`data`
		 * `{endpoint_id, message}`) to this endpoint only, signed like every
		 * other. 202 {@link WebhookDeliveryView}. Access: `orders.write`.
		 * Errors: 404 `webhook_not_found`; 409 `webhook_disabled`.
		 */
		test: {
			access: WRITE,
			async handler(ctx): Promise<WebhookDeliveryView> {
				const sender = senderOf(ctx);
				const ep = await this.ownEndpoint(sender, ctx.params.id);
				if (!ep.enabled) throw fail("webhook_disabled");
				const key = `${WEBHOOK_TEST_TYPE}:${randomUUID()}`;
				const d = await insertTestDelivery(
					this.db,
					{
						key,
						msg_id: msgIdOf(key),
						sender_id: sender,
						type: WEBHOOK_TEST_TYPE,
						order_id: null,
						order_key: null,
						seq: null,
						occurred_at: new Date().toISOString(),
						data: { endpoint_id: ep.id, message: "Test event from the merchant shipping API" },
					},
					ep.id,
				);
				await enqueueDeliveries([{ id: d.id, gen: d.gen }], this.settings);
				ctx.meta.$statusCode = 202;
				return deliveryViewOf(d);
			},
		},

		/** Ops / tests: one sweeper pass → `{requeued}`. Not aliased over HTTP. */
		sweep: {
			async handler(): Promise<WebhookSweepResult> {
				return { requeued: await this.sweepOnce() };
			},
		},
	},
	channels: {
		[MERCHANT_EVENTS_CHANNEL]: {
			group: "webhooks",
			maxInFlight: 50,
			/** A publisher's batch of events, or one event (at-least-once): each stored and fanned out once. */
			async handler(payload) {
				await receive(this.deps(), ...incomingOfMerchantMessage(payload));
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
			this.sweeping = this.sweepOnce()
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
