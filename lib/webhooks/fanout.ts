/**
 * Events in (issue 11; docs/decisions/0044-merchant-webhooks.md): the durable
 * channels `merchant.events` (the publishers' event outboxes) and
 * `shipment.status_changed` (booking's outbox), consumer group `webhooks`,
 * at-least-once. Each event is stored once (its `key`), with one delivery
 * per enabled endpoint of the account subscribed to its type, in one
 * statement (./store.ts `fanOut`); the new deliveries' jobs are then added.
 * A redelivered message stores nothing and adds no job; a crash between the
 * commit and the add is repaired by the sweeper (pending deliveries whose job
 * is missing get it again).
 */
import { createHash } from "node:crypto";
import type { MerchantEvent, MerchantEventBatch, ShipmentStatusChanged } from "../contracts";
import { bookedTrackingPageUrl } from "../shared/label-link";
import type { DeliverDeps } from "./deliver";
import { fanOutMany, type IncomingEvent, sendersWithEndpoints } from "./store";
import { enqueueDeliveries } from "./worker";

/** The Standard Webhooks message id of an event key: `msg_` + 26 base32 characters of its SHA-256 (stable). */
export function msgIdOf(key: string): string {
	const h = createHash("sha256").update(key).digest();
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
	let bits = 0;
	let value = 0;
	let out = "";
	for (const byte of h) {
		value = (value << 8) | byte;
		bits += 8;
		while (bits >= 5 && out.length < 26) {
			out += alphabet[(value >>> (bits - 5)) & 31];
			bits -= 5;
		}
	}
	return `msg_${out}`;
}

/** A timestamp as ISO-8601 UTC (PostgreSQL's jsonb text of a timestamptz included); now when unreadable. */
function isoOf(t: string): string {
	const d = new Date(t);
	return Number.isNaN(d.getTime()) ? new Date().toISOString() : d.toISOString();
}

/**
 * `data` with the buyer's tracking page link (issue 29; lib/shared/label-link.ts
 * `bookedTrackingPageUrl`) added to an `order.booked` or a `shipment.status_changed` of a
 * live shipment whose AWB can be signed; other events unchanged.
 */
function withTrackingPage(type: string, data: Record<string, unknown>): Record<string, unknown> {
	if (type !== "order.booked" && type !== "shipment.status_changed") return data;
	const url = bookedTrackingPageUrl("booked", typeof data.awb_number === "string" ? data.awb_number : null);
	if (url) data.tracking_page_url = url;
	return data;
}

/** A publisher's event as the fan-out stores it (`order_id` null for an account-level event). */
export function incomingOfMerchant(e: MerchantEvent): IncomingEvent {
	return {
		key: e.event_id,
		msg_id: msgIdOf(e.event_id),
		sender_id: Number(e.sender_id),
		type: e.type,
		order_id: e.order_id === null || e.order_id === undefined ? null : Number(e.order_id),
		order_key: null,
		seq: null,
		occurred_at: isoOf(e.occurred_at),
		// an account-level event (no order: `remittance.paid`) carries no order_id
		data: withTrackingPage(
			e.type,
			e.order_id === null || e.order_id === undefined
				? { ...e.data }
				: { ...e.data, order_id: Number(e.order_id) },
		),
	};
}

/**
 * A `shipment.status_changed` as the fan-out stores it: ordered per
 * shipment (`shp:<attempt id>`, the event id's first part) by `seq`; `data`
 * `{order_id, awb_number, logistic_id, status, status_name, status_at,
 * manifest_no?, courier_status?, remarks?}` (`order_no`, `courier` added
 * from what the service knows of the order).
 */
export function incomingOfStatus(e: ShipmentStatusChanged): IncomingEvent {
	const key = `shipment.status_changed:${e.event_id}`;
	const data: Record<string, unknown> = {
		order_id: e.order_id,
		awb_number: e.awb_number,
		logistic_id: e.logistic_id,
		status: e.status,
		status_name: e.status_name,
		status_at: isoOf(e.status_at),
	};
	if (e.status !== "cancelled") withTrackingPage("shipment.status_changed", data);
	if (e.manifest_no) data.manifest_no = e.manifest_no;
	if (e.courier_status !== undefined) data.courier_status = e.courier_status;
	if (e.remarks !== undefined) data.remarks = e.remarks;
	return {
		key,
		msg_id: msgIdOf(key),
		sender_id: e.sender_id,
		type: "shipment.status_changed",
		order_id: e.order_id,
		order_key: `shp:${String(e.event_id).split("-")[0]}`,
		seq: e.seq,
		occurred_at: isoOf(e.status_at),
		data,
	};
}

/**
 * The events of one `merchant.events` message, oldest first: a publisher's
 * {@link MerchantEventBatch}, or a lone {@link MerchantEvent} (sent before
 * publishers batched).
 */
function merchantEventsOf(m: MerchantEvent | MerchantEventBatch): MerchantEvent[] {
	return "events" in m && Array.isArray(m.events) ? m.events : [m as MerchantEvent];
}

/**
 * {@link receive} for one `merchant.events` message: the events of accounts without an enabled endpoint are dropped
 * before they are converted (their message id and timestamp are never computed), the others converted by
 * {@link incomingOfMerchant}, stored and fanned out. Answers the number of new deliveries.
 * @throws on a database failure (the channel redelivers the whole message)
 */
export async function receiveMerchantMessage(
	deps: DeliverDeps,
	m: MerchantEvent | MerchantEventBatch,
): Promise<number> {
	return receiveKept(deps, merchantEventsOf(m), (e) => Number(e.sender_id), incomingOfMerchant);
}

/**
 * Stores the events of accounts that have an enabled endpoint
 * (store.ts `sendersWithEndpoints`; the others' are dropped, no statement) in
 * order (store.ts `fanOutMany`: one statement per run of distinct orders, so a
 * later event of the same order sees what an earlier one stored), fans them
 * out and adds the jobs. Answers the number of new deliveries. A redelivered message stores
 * nothing twice (events are unique by key).
 * @throws on a database failure (the channel redelivers the whole message)
 */
export async function receive(deps: DeliverDeps, ...all: IncomingEvent[]): Promise<number> {
	return receiveKept(
		deps,
		all,
		(e) => e.sender_id,
		(e) => e,
	);
}

/**
 * {@link receive} over events of any form: `senderOf` names each event's account, and only the events of accounts
 * with an enabled endpoint are converted by `toIncoming`, stored and fanned out.
 */
async function receiveKept<E>(
	deps: DeliverDeps,
	all: E[],
	senderOf: (e: E) => number,
	toIncoming: (e: E) => IncomingEvent,
): Promise<number> {
	// an account without an enabled endpoint has nothing to deliver and needs no order reference kept: a
	// delivery whose event misses its order's number (or a status event its courier) asks intake at send time
	const keep = await sendersWithEndpoints(deps.db, [...new Set(all.map(senderOf))]);
	const events = all.filter((e) => keep.has(senderOf(e))).map(toIncoming);
	if (!events.length) return 0;
	const created = await fanOutMany(deps.db, events);
	try {
		await enqueueDeliveries(created, deps.settings);
	} catch (err) {
		// committed: the sweeper adds the missing jobs
		const what = events.length === 1 ? events[0]?.key : `${events.length} events`;
		deps.logger.warn(
			`webhooks: ${created.length} job(s) of ${what} not added (the sweeper will): ${(err as Error).message}`,
		);
	}
	return created.length;
}
