/**
 * The merchant's requests on webhook endpoints behind the `webhooks` actions
 * (issue 11; spec §2.12, §4.8; docs/decisions/0044-merchant-webhooks.md):
 * create, list, read, update, delete, rotate the secret, the deliveries log,
 * redeliver, the test event, and the sweeper's pass. Plain functions over
 * {@link WebhooksDeps}, called with input the service has already parsed
 * (./api.ts); SQL in ./store.ts; delivery jobs in ./worker.ts.
 *
 * Errors (§2.11 envelope): 404 `webhook_not_found` / `delivery_not_found`
 * (missing and another account's are the same answer), 409
 * `webhook_limit_reached` / `webhook_disabled`, 422 `url_not_allowed`
 * (./ssrf.ts), 400 `validation_failed` (./api.ts).
 */
import { randomUUID } from "node:crypto";
import {
	WEBHOOK_TEST_TYPE,
	type WebhookDeliveryPage,
	type WebhookDeliveryView,
	type WebhookView,
	type WebhookWithSecret,
} from "../contracts";
import { fail } from "../platform/errors";
import {
	deliveryNotFound,
	deliveryViewOf,
	nextCursorOf,
	type parseCreate,
	parseDeliveryQuery,
	parseId,
	viewOf,
	webhookNotFound,
} from "./api";
import type { WebhooksDeps } from "./deps";
import { msgIdOf } from "./fanout";
import { newSecret, sealSecret } from "./secrets";
import { assertResolvable, checkUrlShape } from "./ssrf";
import {
	countEndpoints,
	deleteEndpoint,
	type EndpointPatch,
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
} from "./store";
import { enqueueDeliveries, jobMissing } from "./worker";

/** Pending deliveries looked at per sweeper pass. */
const SWEEP_BATCH = 500;

/** Account `sender`'s endpoint `id`. @throws 404 `webhook_not_found` */
async function ownEndpoint(deps: WebhooksDeps, sender: number, id: number): Promise<EndpointRow> {
	const e = await getEndpoint(deps.db, sender, id);
	if (!e) throw webhookNotFound();
	return e;
}

/**
 * Checks a receiver URL (shape, scheme, the addresses it resolves to) and
 * returns it normalised. @throws 400 `validation_failed` / 422 `url_not_allowed`
 */
async function checkUrl(deps: WebhooksDeps, raw: string): Promise<string> {
	const u = checkUrlShape(raw, deps.settings.sandbox);
	await assertResolvable(u, deps.settings.sandbox);
	return u.toString();
}

/**
 * Creates an enabled endpoint of account `sender` from the parsed create
 * body: the URL checked, the account's count checked against
 * `WEBHOOK_MAX_ENDPOINTS`, a new `whsec_…` secret sealed at rest.
 * → the endpoint with its secret in clear (shown only here and on rotation).
 * @throws 422 `url_not_allowed`; 409 `webhook_limit_reached`
 */
export async function createWebhook(
	deps: WebhooksDeps,
	sender: number,
	input: ReturnType<typeof parseCreate>,
): Promise<WebhookWithSecret> {
	const url = await checkUrl(deps, input.url);
	if ((await countEndpoints(deps.db, sender)) >= deps.settings.maxEndpoints) {
		throw fail("webhook_limit_reached", deps.settings.maxEndpoints);
	}
	const secret = newSecret();
	const row = await insertEndpoint(deps.db, {
		sender_id: sender,
		url,
		events: input.events,
		description: input.description,
		secret: sealSecret(secret),
	});
	return { ...viewOf(row), secret };
}

/** Account `sender`'s endpoints, oldest first, as `{data: WebhookView[]}` (never a secret). */
export async function listWebhooks(deps: WebhooksDeps, sender: number): Promise<{ data: WebhookView[] }> {
	return { data: (await listEndpoints(deps.db, sender)).map(viewOf) };
}

/** Account `sender`'s endpoint `id` as a {@link WebhookView}. @throws 404 `webhook_not_found` */
export async function getWebhook(deps: WebhooksDeps, sender: number, id: number): Promise<WebhookView> {
	return viewOf(await ownEndpoint(deps, sender, id));
}

/**
 * Applies the parsed PATCH `patch` to account `sender`'s endpoint `id` (a new
 * `url` checked first). → the endpoint's view.
 * @throws 422 `url_not_allowed`; 404 `webhook_not_found`
 */
export async function updateWebhook(
	deps: WebhooksDeps,
	sender: number,
	id: number,
	patch: EndpointPatch,
): Promise<WebhookView> {
	if (patch.url !== undefined) patch.url = await checkUrl(deps, patch.url);
	const row = await updateEndpoint(deps.db, sender, id, patch);
	if (!row) throw webhookNotFound();
	return viewOf(row);
}

/** Deletes account `sender`'s endpoint `id` (its pending deliveries with it). @throws 404 `webhook_not_found` */
export async function removeWebhook(deps: WebhooksDeps, sender: number, id: number): Promise<void> {
	if (!(await deleteEndpoint(deps.db, sender, id))) throw webhookNotFound();
}

/**
 * Gives account `sender`'s endpoint `id` a new `whsec_…` secret; the old one
 * keeps signing for `WEBHOOK_PREVIOUS_SECRET_H` hours. → the endpoint with
 * its new secret in clear. @throws 404 `webhook_not_found`
 */
export async function rotateWebhookSecret(
	deps: WebhooksDeps,
	sender: number,
	id: number,
): Promise<WebhookWithSecret> {
	const secret = newSecret();
	const row = await rotateSecret(deps.db, sender, id, sealSecret(secret), deps.settings.previousSecretH);
	if (!row) throw webhookNotFound();
	return { ...viewOf(row), secret };
}

/**
 * One page of the deliveries log of account `sender`'s endpoint `id`, newest
 * first. `params` (the request's query: `limit`, `cursor`, `status`) is
 * checked after the endpoint is found, so a missing endpoint answers 404
 * whatever the query (one more row is read to know whether a next page exists).
 * @throws 404 `webhook_not_found`; 400 `validation_failed`, `cursor: unrecognised shape`
 */
export async function deliveriesPage(
	deps: WebhooksDeps,
	sender: number,
	id: number,
	params: unknown,
): Promise<WebhookDeliveryPage> {
	const ep = await ownEndpoint(deps, sender, id);
	const q = parseDeliveryQuery(params, sender, ep.id);
	const rows = await listDeliveries(deps.db, {
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
}

/**
 * Makes delivery `rawDeliveryId` (the path param, checked after the endpoint
 * is found) of account `sender`'s endpoint `id` pending again (same event and
 * `webhook-id`, a fresh retry schedule) and enqueues its job. → its view.
 * @throws 404 `webhook_not_found` / `delivery_not_found`; 409 `webhook_disabled`
 */
export async function redeliver(
	deps: WebhooksDeps,
	sender: number,
	id: number,
	rawDeliveryId: unknown,
): Promise<WebhookDeliveryView> {
	const ep = await ownEndpoint(deps, sender, id);
	const did = parseId(rawDeliveryId, deliveryNotFound);
	if (!ep.enabled) throw fail("webhook_disabled");
	const d = await resetForRedelivery(deps.db, sender, ep.id, did);
	if (!d) throw deliveryNotFound();
	await enqueueDeliveries([{ id: d.id, gen: d.gen }], deps.settings);
	return deliveryViewOf(d);
}

/**
 * Stores a `webhook.test` event (`data` `{endpoint_id, message}`) with one
 * delivery, to account `sender`'s endpoint `id` only, and enqueues its job.
 * → the delivery's view. @throws 404 `webhook_not_found`; 409 `webhook_disabled`
 */
export async function sendTestEvent(
	deps: WebhooksDeps,
	sender: number,
	id: number,
): Promise<WebhookDeliveryView> {
	const ep = await ownEndpoint(deps, sender, id);
	if (!ep.enabled) throw fail("webhook_disabled");
	const key = `${WEBHOOK_TEST_TYPE}:${randomUUID()}`;
	const d = await insertTestDelivery(
		deps.db,
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
	await enqueueDeliveries([{ id: d.id, gen: d.gen }], deps.settings);
	return deliveryViewOf(d);
}

/**
 * One sweeper pass: pending deliveries older than the sweep period (at least
 * 1 s; at most {@link SWEEP_BATCH} of them) whose job is missing get it again.
 * → how many jobs were re-added (logged when any).
 */
export async function sweepOnce(deps: WebhooksDeps): Promise<number> {
	const olderMs = Math.max(deps.settings.sweepMs, 1000);
	const candidates = await sweepCandidates(deps.db, olderMs, SWEEP_BATCH);
	const missing = [];
	for (const d of candidates) if (await jobMissing(d)) missing.push(d);
	await enqueueDeliveries(missing, deps.settings);
	if (missing.length) deps.logger.info(`webhooks sweeper: re-added ${missing.length} delivery job(s)`);
	return missing.length;
}
