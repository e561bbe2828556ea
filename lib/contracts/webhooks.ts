/**
 * Contract of the `webhooks` service (issue 11 "Webhooks";
 * docs/decisions/0044-merchant-webhooks.md): merchants' endpoints
 * (subscriptions), the deliveries log, and the events other services publish
 * to it through their outboxes (the durable channel `merchant.events`, plus
 * booking's `shipment.status_changed`: ./channels.ts). Times ISO-8601 UTC,
 * latencies ms.
 */
import type { RouteParams } from "../platform/openapi/route";
import type { WEBHOOKS_ROUTES } from "./http/webhooks";

/** The webhook route definitions (lib/contracts/http/webhooks.ts). */
type Routes = typeof WEBHOOKS_ROUTES;

/** Event types a merchant can subscribe to (Standard Webhooks `type`). */
export const WEBHOOK_EVENT_TYPES = [
	"order.created",
	"order.booked",
	"order.booking_failed",
	"order.cancelled",
	"shipment.status_changed",
	"ndr.opened",
	"ndr.closed",
	"weight_discrepancy.opened",
	"cod.exception",
	"remittance.paid",
	"pickup.missed",
] as const;

/** One subscribable event type. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The type of the event `POST /v1/webhooks/{id}/test` sends (to that endpoint only; not subscribable). */
export const WEBHOOK_TEST_TYPE = "webhook.test";

/** Longest endpoint `description` (characters, after trimming; lib/webhooks/api.ts `parseCreate` / `parsePatch`). */
export const WEBHOOK_MAX_DESCRIPTION = 255;

/** Longest receiver `url` accepted (characters; lib/webhooks/ssrf.ts, 422 `url_not_allowed` beyond). */
export const WEBHOOK_MAX_URL_LENGTH = 2048;

/**
 * A merchant event as the publishers' outboxes write it (intake: order.created;
 * booking: order.booked / order.booking_failed / order.cancelled; ndr: ndr.opened / ndr.closed).
 * `event_id` is stable per event (`<type>:<id>`): a redelivery of the channel
 * message, or a re-publish of the outbox row, carries the same one.
 */
export interface MerchantEvent {
	event_id: string;
	type: Exclude<WebhookEventType, "shipment.status_changed">;
	sender_id: number;
	/** the order it is about; null for an account-level event (`remittance.paid`: a payout of many orders) */
	order_id: number | null;
	/** when it happened (ISO-8601 or PostgreSQL timestamptz text) */
	occurred_at: string;
	/** the webhook's `data` (`order_id` added when the event has one; `order_no` when the publisher knows it) */
	data: Record<string, unknown>;
}

/**
 * One message of channel `merchant.events`: the events of one relay round of
 * a publisher's outbox (lib/platform/merchant-events-outbox.ts), oldest first. The consumer
 * also takes a lone {@link MerchantEvent} (what publishers sent before
 * batching; a rolling deploy may leave some in the stream).
 */
export interface MerchantEventBatch {
	events: MerchantEvent[];
}

/** An endpoint as the API shows it (the secret never, except {@link WebhookWithSecret}). */
export interface WebhookView {
	id: number;
	url: string;
	events: WebhookEventType[];
	description: string | null;
	enabled: boolean;
	/** why the endpoint was disabled (continuous failure, or the merchant's PATCH), else null */
	disabled_reason: string | null;
	disabled_at: string | null;
	created_at: string;
	updated_at: string;
}

/** 201 of create, 200 of rotate-secret: the view plus the `whsec_…` signing secret (shown only there). */
export interface WebhookWithSecret extends WebhookView {
	secret: string;
}

/** One delivery of the log (`GET /v1/webhooks/{id}/deliveries`). */
export interface WebhookDeliveryView {
	id: number;
	/** the Standard Webhooks `webhook-id` (same on every attempt and on a redelivery) */
	message_id: string;
	event_type: string;
	order_id: number | null;
	/** `pending` (to be tried or retried), `delivered` (a 2xx), `failed` (gave up) */
	status: "pending" | "delivered" | "failed";
	/** attempts made so far */
	attempt: number;
	/** HTTP status of the last attempt, null when it got no answer (timeout, refused address, …) */
	status_code: number | null;
	/** ms of the last attempt */
	latency_ms: number | null;
	/** the last attempt's error (our words), else null */
	error: string | null;
	last_attempt_at: string | null;
	/** when the next retry is due (pending after a failed attempt), else null */
	next_retry_at: string | null;
	delivered_at: string | null;
	created_at: string;
}

/** §2.12 page of deliveries. */
export interface WebhookDeliveryPage {
	data: WebhookDeliveryView[];
	pagination: { mode: "cursor"; limit: number; nextCursor: string | null };
}

/** Result of the internal `webhooks.sweep` (ops): deliveries whose job was re-added. */
export interface WebhookSweepResult {
	requeued: number;
}

/** Actions of the webhooks service. */
export interface WebhooksActions {
	/** POST /v1/webhooks: 201 {@link WebhookWithSecret}. */
	"webhooks.create": { params: RouteParams<Routes["webhooks.create"]>; result: WebhookWithSecret };
	/** GET /v1/webhooks: the caller's endpoints, oldest first. */
	"webhooks.list": { params: RouteParams<Routes["webhooks.list"]>; result: { data: WebhookView[] } };
	/** GET /v1/webhooks/{id}. */
	"webhooks.get": { params: RouteParams<Routes["webhooks.get"]>; result: WebhookView };
	/** PATCH /v1/webhooks/{id}: url, events, description, enabled. */
	"webhooks.update": { params: RouteParams<Routes["webhooks.update"]>; result: WebhookView };
	/** DELETE /v1/webhooks/{id}: `{id, deleted: true}`. */
	"webhooks.remove": {
		params: RouteParams<Routes["webhooks.remove"]>;
		result: { id: number; deleted: true };
	};
	/** POST /v1/webhooks/{id}/rotate-secret: the new secret; the old one still signs for 24 h. */
	"webhooks.rotateSecret": {
		params: RouteParams<Routes["webhooks.rotateSecret"]>;
		result: WebhookWithSecret;
	};
	/** GET /v1/webhooks/{id}/deliveries: cursor-paged, newest first. */
	"webhooks.deliveries": { params: RouteParams<Routes["webhooks.deliveries"]>; result: WebhookDeliveryPage };
	/** POST /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver: 202 the delivery, pending again. */
	"webhooks.redeliver": { params: RouteParams<Routes["webhooks.redeliver"]>; result: WebhookDeliveryView };
	/** POST /v1/webhooks/{id}/test: 202 the delivery of a `webhook.test` event. */
	"webhooks.test": { params: RouteParams<Routes["webhooks.test"]>; result: WebhookDeliveryView };
	/** Ops / tests: re-adds the jobs of pending deliveries whose job is missing (also on a timer). */
	"webhooks.sweep": { params: Record<string, never>; result: WebhookSweepResult };
}

/** The webhooks service emits no Moleculer events. */
export type WebhooksEvents = Record<never, never>;
