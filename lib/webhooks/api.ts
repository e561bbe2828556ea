/**
 * The merchant's side of webhooks (issue 11;
 * docs/decisions/0044-merchant-webhooks.md): request bodies and queries
 * checked into typed inputs, rows turned into the API's views, the error codes
 * of the routes.
 *
 * Errors (§2.11 envelope): 400 `validation_failed` (with `details`), 400
 * `cursor: unrecognised shape`, 404 `webhook_not_found` / `delivery_not_found`
 * (missing and another account's are the same answer), 409
 * `webhook_limit_reached`, 422 `url_not_allowed` (./ssrf.ts).
 */
import {
	WEBHOOK_EVENT_TYPES,
	WEBHOOK_MAX_DESCRIPTION,
	type WebhookDeliveryView,
	type WebhookEventType,
	type WebhookView,
} from "../contracts";
import { type CursorPosition, decodeCursor, encodeCursor } from "../platform/cursor";
import { type ApiError, fail, validationFailed } from "../platform/errors";
import { isPlainObject, parsePositiveInt } from "../shared/fields";
import type { DeliveryRow, EndpointPatch, EndpointRow } from "./store";

/** 404 `webhook_not_found`. */
export function webhookNotFound(): ApiError {
	return fail("webhook_not_found");
}

/** 404 `delivery_not_found`. */
export function deliveryNotFound(): ApiError {
	return fail("delivery_not_found");
}

/** A path id: a positive integer, else the resource is not found (`notFound`). */
export function parseId(v: unknown, notFound: () => ApiError): number {
	const n = parsePositiveInt(v, { trim: true });
	if (n === null || n > Number.MAX_SAFE_INTEGER) throw notFound();
	return n;
}

/** Checks `events`: a non-empty array of known types (duplicates dropped), into `details`. */
function eventsOf(v: unknown, details: string[]): WebhookEventType[] | undefined {
	if (!Array.isArray(v) || !v.length) {
		details.push(`events: must be a non-empty array of event types (${WEBHOOK_EVENT_TYPES.join(", ")})`);
		return undefined;
	}
	const known = new Set<string>(WEBHOOK_EVENT_TYPES);
	const out: WebhookEventType[] = [];
	for (const [i, e] of v.entries()) {
		if (typeof e !== "string" || !known.has(e)) {
			details.push(
				`events[${i}]: unknown event type ${JSON.stringify(e)} (${WEBHOOK_EVENT_TYPES.join(", ")})`,
			);
		} else if (!out.includes(e as WebhookEventType)) out.push(e as WebhookEventType);
	}
	return out;
}

/** Checks `description`: a string of at most {@link WEBHOOK_MAX_DESCRIPTION} characters (trimmed; "" is null) or null. */
function descriptionOf(v: unknown, details: string[]): string | null {
	if (v === null || v === undefined) return null;
	if (typeof v !== "string") {
		details.push("description: must be a string or null");
		return null;
	}
	const t = v.trim();
	if (t.length > WEBHOOK_MAX_DESCRIPTION)
		details.push(`description: at most ${WEBHOOK_MAX_DESCRIPTION} characters`);
	return t || null;
}

/** Checks `url`: a non-empty string (its shape and address are ./ssrf.ts's). */
function urlOf(v: unknown, details: string[]): string | undefined {
	if (typeof v !== "string" || !v.trim()) {
		details.push("url: required, an https URL");
		return undefined;
	}
	return v.trim();
}

/** The create body `{url, events, description?}`. @throws ApiError 400 `validation_failed` */
export function parseCreate(params: unknown): {
	url: string;
	events: WebhookEventType[];
	description: string | null;
} {
	const b = isPlainObject(params) ? params : {};
	const details: string[] = [];
	const url = urlOf(b.url, details);
	const events = eventsOf(b.events, details);
	const description = descriptionOf(b.description, details);
	if (details.length || !url || !events) throw validationFailed(details);
	return { url, events, description };
}

/**
 * The PATCH body: one or more of `url`, `events`, `description`, `enabled`
 * (boolean); at least one. @throws ApiError 400 `validation_failed`
 */
export function parsePatch(params: unknown): EndpointPatch {
	const b = isPlainObject(params) ? params : {};
	const details: string[] = [];
	const p: EndpointPatch = {};
	if (b.url !== undefined) p.url = urlOf(b.url, details);
	if (b.events !== undefined) p.events = eventsOf(b.events, details);
	if (b.description !== undefined) p.description = descriptionOf(b.description, details);
	if (b.enabled !== undefined) {
		if (typeof b.enabled !== "boolean") details.push("enabled: must be true or false");
		else p.enabled = b.enabled;
	}
	if (!details.length && !Object.keys(p).length)
		details.push("body: give at least one of url, events, description, enabled");
	if (details.length) throw validationFailed(details);
	return p;
}

/** ISO-8601 UTC of a time (null stays null). */
function iso(d: Date | string | null): string | null {
	return d === null ? null : new Date(d).toISOString();
}

/** The API view of an endpoint (never its secrets). */
export function viewOf(r: EndpointRow): WebhookView {
	return {
		id: r.id,
		url: r.url,
		events: r.events as WebhookEventType[],
		description: r.description,
		enabled: r.enabled,
		disabled_reason: r.disabled_reason,
		disabled_at: iso(r.disabled_at),
		created_at: iso(r.created_at) as string,
		updated_at: iso(r.updated_at) as string,
	};
}

/** The log's view of a delivery. */
export function deliveryViewOf(d: DeliveryRow): WebhookDeliveryView {
	return {
		id: d.id,
		message_id: d.msg_id,
		event_type: d.type,
		order_id: d.order_id,
		status: d.status,
		attempt: d.attempts,
		status_code: d.status_code,
		latency_ms: d.latency_ms,
		error: d.error,
		last_attempt_at: iso(d.last_attempt_at),
		next_retry_at: d.status === "pending" ? iso(d.next_retry_at) : null,
		delivered_at: iso(d.delivered_at),
		created_at: iso(d.created_at) as string,
	};
}

/** Cursor kind of the deliveries log. */
const CURSOR_KIND = "webhook-deliveries";

/** The delivery statuses the log filters on. */
const STATUSES = ["pending", "delivered", "failed"] as const;

/** A checked log query. */
export interface DeliveryQuery {
	limit: number;
	before_id: number | null;
	status: (typeof STATUSES)[number] | null;
}

/**
 * `GET /v1/webhooks/{id}/deliveries` query: `limit` (1–1000, default 50),
 * `cursor` (ours, for this account, endpoint and status filter), `status`
 * (pending, delivered, failed).
 * @throws ApiError 400 `validation_failed`, `cursor: unrecognised shape`
 */
export function parseDeliveryQuery(params: unknown, sender_id: number, endpoint_id: number): DeliveryQuery {
	const q = isPlainObject(params) ? params : {};
	const details: string[] = [];
	let limit = 50;
	if (q.limit !== undefined) {
		const n = parsePositiveInt(q.limit, { trim: true });
		if (n === null || n > 1000) details.push("limit: must be an integer from 1 to 1000");
		else limit = n;
	}
	let status: DeliveryQuery["status"] = null;
	if (q.status !== undefined) {
		if (typeof q.status !== "string" || !(STATUSES as readonly string[]).includes(q.status))
			details.push(`status: one of ${STATUSES.join(", ")}`);
		else status = q.status as DeliveryQuery["status"];
	}
	if (details.length) throw validationFailed(details);
	let before_id: number | null = null;
	if (q.cursor !== undefined && q.cursor !== "") {
		const accept = (p: CursorPosition): p is CursorPosition =>
			p.s === sender_id && p.e === endpoint_id && (p.f ?? null) === status && typeof p.id === "number";
		before_id = Number(decodeCursor(CURSOR_KIND, q.cursor, accept).id);
	}
	return { limit, before_id, status };
}

/** The next page's cursor after a page ending at `lastId` (null when no more). */
export function nextCursorOf(
	sender_id: number,
	endpoint_id: number,
	q: DeliveryQuery,
	lastId: number | undefined,
	more: boolean,
): string | null {
	if (!more || lastId === undefined) return null;
	return encodeCursor(CURSOR_KIND, { s: sender_id, e: endpoint_id, f: q.status, id: lastId });
}
