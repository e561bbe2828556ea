/**
 * The documents outbox relay (docs/ARCHITECTURE.md §5 durability; spec §3
 * manifest row): delivers the `mark_manifested` rows a manifest wrote in its
 * own transaction to `booking.markManifested` by acknowledged calls. A row
 * stays undelivered until booking acknowledges it; a failure is retried with
 * backoff (`relayBackoffMs` · 2^(tries−1), at most 60 s). `booking.markManifested`
 * is idempotent, so a redelivery (a relay that died after the call, before the
 * mark) moves nothing twice. Timings in milliseconds, from the environment:
 *
 * | env | meaning | default |
 * |---|---|---|
 * | `DOCUMENTS_RELAY_MS` | period of the outbox relay (each tick delivers the due rows) | 1000 |
 * | `DOCUMENTS_RELAY_BACKOFF_MS` | first redelivery delay of a failed row (doubles per try, at most 60 s) | 1000 |
 * | `DOCUMENTS_CALL_TIMEOUT_MS` | timeout of one `booking.markManifested` call | 5000 |
 */

import { call } from "../contracts";
import { settingsOf } from "../platform/config";
import { deliverRows } from "../platform/outbox";
import type { DocumentsDeps } from "./deps";
import { type DocumentsOutboxRow, documentsOutboxDelivered, leaseDocumentsOutbox } from "./manifest-store";

/** Relay timings (ms). */
export interface DocumentsRelayTimings {
	relayMs: number;
	relayBackoffMs: number;
	callTimeoutMs: number;
}

/**
 * The relay timings from `env` (see the module table; declared in lib/platform/config.ts).
 * @throws Error naming the variable when a value is not allowed
 */
export function documentsRelayTimings(env: NodeJS.ProcessEnv = process.env): DocumentsRelayTimings {
	return settingsOf(
		{
			relayMs: "DOCUMENTS_RELAY_MS",
			relayBackoffMs: "DOCUMENTS_RELAY_BACKOFF_MS",
			callTimeoutMs: "DOCUMENTS_CALL_TIMEOUT_MS",
		},
		env,
	);
}

/** What the relay needs from the documents service: its {@link DocumentsDeps} pieces, timings, the stop flag. */
export interface DocumentsRelayDeps extends Pick<DocumentsDeps, "db" | "broker" | "logger"> {
	timings: DocumentsRelayTimings;
	/** true once the service is stopping: a relay run ends after its round */
	stopping: () => boolean;
}

/** Rows leased per round. */
const RELAY_BATCH = 50;

/** How long a leased row stays invisible to other relays: 3 × the call timeout, at least 30 s. */
export function documentsLeaseMs(t: DocumentsRelayTimings): number {
	return Math.max(30_000, 3 * t.callTimeoutMs);
}

/**
 * Delivers due outbox rows (all, or only `ids`: rows this process just
 * committed) in rounds of {@link RELAY_BATCH}, concurrently within a round;
 * marks the acknowledged ones delivered and schedules the others. Answers
 * how many were delivered and how many failed. Database errors are thrown.
 */
export async function relayDocumentsOutbox(
	deps: DocumentsRelayDeps,
	ids?: number[],
): Promise<{ delivered: number; failed: number }> {
	if (ids && !ids.length) return { delivered: 0, failed: 0 };
	let delivered = 0;
	let failed = 0;
	for (;;) {
		const rows = await leaseDocumentsOutbox(deps.db, RELAY_BATCH, documentsLeaseMs(deps.timings), ids);
		const round = await deliverRows(deps.db, "documents", rows, (row) => deliver(deps, row), {
			backoffMs: deps.timings.relayBackoffMs,
			logger: deps.logger,
		});
		failed += round.failed;
		const acked = round.acked;
		await documentsOutboxDelivered(deps.db, acked);
		delivered += acked.length;
		if (ids || rows.length < RELAY_BATCH || deps.stopping()) break;
	}
	return { delivered, failed };
}

/** Delivers one row; resolves only when acknowledged (a failure is rethrown as it came). */
async function deliver(deps: DocumentsRelayDeps, row: DocumentsOutboxRow): Promise<void> {
	if (row.kind === "mark_manifested") {
		const p = row.payload;
		await call(
			deps.broker,
			"booking.markManifested",
			{
				sender_id: Number(p.sender_id),
				manifest_no: String(p.manifest_no),
				at: String(p.at),
				awb_numbers: Array.isArray(p.awb_numbers) ? p.awb_numbers.map(String) : [],
			},
			{ timeout: deps.timings.callTimeoutMs, unavailable: false },
		);
		return;
	}
	throw new Error(`unknown documents outbox kind ${String(row.kind)}`);
}

/**
 * The relay of one documents service instance: a periodic tick (every
 * `relayMs`; a run never overlaps the previous one) plus {@link kick} for the
 * rows a request just committed. Failures are logged; the rows stay in the
 * outbox for the next tick (here or on another instance). {@link stop} ends
 * the timer and waits for the runs in progress.
 */
export class ManifestRelay {
	private timer: NodeJS.Timeout | undefined;
	private ticking = false;
	private stopping = false;
	private readonly inflight = new Set<Promise<unknown>>();

	constructor(private readonly deps: Omit<DocumentsRelayDeps, "stopping">) {}

	private get relayDeps(): DocumentsRelayDeps {
		return { ...this.deps, stopping: () => this.stopping };
	}

	/** Runs `work` in the background (logged on failure, awaited by {@link stop}). */
	private background(what: string, work: () => Promise<unknown>): Promise<void> {
		const run: Promise<void> = work()
			.then(() => undefined)
			.catch((err) => this.deps.logger.warn(`${what}: ${err instanceof Error ? err.message : String(err)}`))
			.finally(() => this.inflight.delete(run));
		this.inflight.add(run);
		return run;
	}

	/** Starts the periodic relay. */
	start(): void {
		this.stopping = false;
		this.timer = setInterval(() => this.tick(), this.deps.timings.relayMs);
	}

	/** One periodic run, unless one is in progress or the relay is stopping. */
	tick(): void {
		if (this.stopping || this.ticking) return;
		this.ticking = true;
		void this.background("documents outbox relay", () => relayDocumentsOutbox(this.relayDeps)).finally(() => {
			this.ticking = false;
		});
	}

	/** Delivers rows `ids` (just committed) now, in the background; nothing once stopping. */
	kick(ids: number[]): void {
		if (!ids.length || this.stopping) return;
		void this.background("documents outbox relay", () => relayDocumentsOutbox(this.relayDeps, ids));
	}

	/** Delivers every due row now (ops, tests). */
	runOnce(): Promise<{ delivered: number; failed: number }> {
		return relayDocumentsOutbox(this.relayDeps);
	}

	/** Stops the timer and waits for the runs in progress. */
	async stop(): Promise<void> {
		this.stopping = true;
		if (this.timer) clearInterval(this.timer);
		this.timer = undefined;
		await Promise.allSettled([...this.inflight]);
	}
}
