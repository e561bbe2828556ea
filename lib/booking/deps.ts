/**
 * What the booking worker, relay and request modules (lib/booking/worker.ts,
 * relay.ts, request.ts) need from the `booking` service: built once per call
 * by the service's `deps()` method, so the modules are plain functions.
 */
import type { Logger, ServiceBroker } from "moleculer";
import type { Sequelize } from "sequelize";
import type { CallOptions, LedgerEntryEvent } from "../contracts";
import type { UnreachableCode } from "../platform/errors";
import type { BookingTimings } from "./settings";
import type { OutboxRow } from "./store";

/** The outbox operations a relay of just-committed rows shares with concurrent ones (lib/booking/relay.ts `outboxBatch`). */
export interface OutboxBatch {
	/** leases the due undelivered rows among `ids` (with other callers' ids: keep your own) */
	lease(ids: number[]): Promise<OutboxRow[]>;
	/** marks acknowledged rows `ids` delivered */
	delivered(ids: number[]): Promise<void>;
	/** records one wallet movement at billing, in one call with those of concurrent deliveries */
	ledgerEntry(entry: LedgerEntryEvent): Promise<void>;
}

/** The booking service's pieces the booking modules use. */
export interface BookingDeps {
	/** the `booking` schema's connection (SQL only through lib/booking/store) */
	db: Sequelize;
	/** the broker: `call` made outside a request (relay, sweeper, late settlements) */
	broker: ServiceBroker;
	/** timings in milliseconds (lib/booking/settings.ts) */
	timings: BookingTimings;
	logger: Logger;
	/** options of a call to another service: timeout `callTimeoutMs`, the 503 code a failure becomes */
	callOptions(unavailable?: UnreachableCode): CallOptions;
	/** coalesced lease and delivered marks of just-committed outbox rows (one per service instance) */
	outbox: OutboxBatch;
	/** relays freshly committed outbox rows `ids` without waiting (nothing once stopping) */
	finish(ids: number[] | null): void;
	/** runs `work` in the background: failures are logged, the service's `stopped` waits for it */
	background(what: string, work: () => Promise<unknown>): Promise<void>;
	/** true once the service is stopping (relay rounds end, nothing new starts) */
	stopping(): boolean;
}

/** The message of a thrown value (plain words for logs and failure reasons). */
export function message(err: unknown): string {
	return (err as Error)?.message ?? String(err);
}
