/**
 * The billing outbox relay (docs/ARCHITECTURE.md §5: state that crosses
 * services goes through the owner's outbox; docs/decisions/0102-cod-remittance.md):
 * delivers the `cod_status` rows a trigger writes with every COD status a
 * shipment takes (./migrations.ts 005) to `intake.applyCodStatuses`, one
 * acknowledged call per round of at most {@link RELAY_BATCH} rows, oldest
 * first. A row stays undelivered until intake acknowledges it; a failed round
 * is retried with backoff (lib/platform/outbox.ts). intake keeps the newest
 * version per AWB, so a redelivery or an out-of-order round changes nothing.
 * Rows are leased `FOR UPDATE SKIP LOCKED`, so several billing pods share the
 * work. Period: `BILLING_RELAY_MS` (1000).
 */
import { type Caller, type CodStatusUpdate, call } from "../contracts";
import { markOutboxDelivered, retryOutboxLater } from "../platform/outbox";
import type { BillingDeps } from "./deps";
import { leaseOutbox } from "./store";

/** Rows delivered per round (one `intake.applyCodStatuses` call). */
export const RELAY_BATCH = 200;

/** How long a leased row stays invisible to other relays (ms). */
const LEASE_MS = 30_000;

/** Timeout of one `intake.applyCodStatuses` call (ms). */
const CALL_TIMEOUT_MS = 10_000;

/** First redelivery delay of a failed round (ms; doubles per try, at most 60 s). */
const BACKOFF_MS = 1000;

/**
 * Delivers the due rows in rounds until none is left (or `stopping()`):
 * answers how many were delivered and how many failed (those are scheduled
 * again). Database errors are thrown.
 */
export async function relayOutbox(
	deps: BillingDeps,
	via: Caller,
	stopping: () => boolean = () => false,
): Promise<{ delivered: number; failed: number }> {
	let delivered = 0;
	let failed = 0;
	for (;;) {
		const rows = await leaseOutbox(deps.db, RELAY_BATCH, LEASE_MS);
		if (!rows.length) break;
		const items: CodStatusUpdate[] = rows.map((r) => r.payload);
		try {
			await call(via, "intake.applyCodStatuses", { items }, { timeout: CALL_TIMEOUT_MS, unavailable: false });
			await markOutboxDelivered(
				deps.db,
				"billing",
				rows.map((r) => r.id),
			);
			delivered += rows.length;
		} catch (err) {
			failed += rows.length;
			const msg = err instanceof Error ? err.message : String(err);
			deps.logger.warn(`billing outbox: ${rows.length} cod_status rows not delivered: ${msg}`);
			for (const r of rows) await retryOutboxLater(deps.db, "billing", r, msg, BACKOFF_MS);
			break;
		}
		if (rows.length < RELAY_BATCH || stopping()) break;
	}
	return { delivered, failed };
}
