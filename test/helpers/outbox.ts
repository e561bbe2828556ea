/**
 * What a publishing service's event outbox holds (`<schema>.event_outbox`, lib/platform/merchant-events-outbox.ts),
 * read straight from PostgreSQL by the specs of the triggers and statements that write it.
 */
import { getSequelize, select } from "../../lib/platform/db";
import type { EventOutboxSchema } from "../../lib/platform/merchant-events-outbox";

/**
 * The merchant events of type `type` in `schema`'s event outbox whose top-level `key` (`sender_id` or `order_id`)
 * is `value`, oldest row first, each as the relay publishes it (`{event_id, type, sender_id, order_id, occurred_at,
 * data}`).
 */
export async function outboxEvents(
	schema: EventOutboxSchema,
	type: string,
	key: "sender_id" | "order_id",
	value: number,
): Promise<any[]> {
	const rows = await select<{ event: any }>(
		getSequelize(),
		`SELECT event FROM ${schema}.event_outbox WHERE event->>'type' = $1 AND (event->>'${key}')::bigint = $2 ORDER BY id`,
		[type, value],
	);
	return rows.map((r) => r.event);
}
