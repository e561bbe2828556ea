/**
 * The booking outbox relay and the sweeper (docs/ARCHITECTURE.md §5
 * durability, points 1 and 3; spec §4.2): delivers committed outbox rows
 * (acknowledged `intake.applyBookingUpdate`, BullMQ add with jobId
 * `attempt-<id>`, acknowledged `rates.recordLaneOutcome`, acknowledged publish
 * of `shipment.status_changed` to its channel, lib/platform/channels.ts, acknowledged
 * `documents.captureCourierLabel` for a courier-issued label) and
 * re-enqueues attempts whose job is missing. Timings in milliseconds
 * (lib/booking/settings.ts); SQL in lib/booking/store.
 */
import type { Job } from "bullmq";
import type { ServiceBroker } from "moleculer";
import type { Sequelize } from "sequelize";
import { call, type LedgerEntryEvent, SHIPMENT_STATUS_CHANNEL } from "../contracts";
import { publishToChannel } from "../platform/channels";
import { coalesce, groupCommit } from "../platform/coalesce";
import { deliverRows } from "../platform/outbox";
import { getQueue } from "../platform/queue";
import { type BookingDeps, message, type OutboxBatch } from "./deps";
import { BACKOFF_JITTER, BOOKING_QUEUE, type BookingTimings, jobIdOf } from "./settings";
import { leaseOutbox, type OutboxRow, outboxDelivered, sweepCandidates } from "./store";
import { resolveUnsettled } from "./worker";

/** Outbox rows leased (and delivered concurrently) per relay round. */
const RELAY_BATCH = 50;

/** Resolves `p` or rejects after `ms` (the work itself is not cancelled). */
function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	return Promise.race([
		p,
		new Promise<T>((_, reject) => {
			timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
		}),
	]).finally(() => clearTimeout(timer));
}

/**
 * Outbox relay: leases up to {@link RELAY_BATCH} due undelivered rows (all,
 * or only `ids`) with `FOR UPDATE SKIP LOCKED`, delivers them concurrently
 * by acknowledged calls (each bounded by `callTimeoutMs`), marks the
 * acknowledged ones delivered (one UPDATE) and schedules the redelivery of
 * the others with backoff; repeats while full
 * batches come back. The lease (see {@link relayLeaseMs}) outlives
 * a round, so another relay never takes a row this one is still delivering;
 * a relay that dies leaves its rows to be re-leased when the lease ends.
 * Receivers are idempotent and ordered by (attempt_id, seq), so neither a
 * redelivery nor the order of deliveries within a round matters.
 *
 * With `ids` (rows just committed by this process) the lease and the
 * delivered mark go through `deps.outbox`, which coalesces them with the
 * other requests' ({@link outboxBatch}): one round trip each per batch of
 * concurrent bookings instead of one per booking.
 */
export async function relay(
	deps: BookingDeps,
	ids?: number[],
): Promise<{ delivered: number; failed: number }> {
	if (ids) {
		if (!ids.length) return { delivered: 0, failed: 0 };
		const mine = new Set(ids);
		const rows = (await deps.outbox.lease(ids)).filter((r) => mine.has(r.id));
		const { acked, failed } = await deliverBookingRows(deps, rows);
		await deps.outbox.delivered(acked);
		return { delivered: acked.length, failed };
	}
	const leaseMs = relayLeaseMs(deps.timings);
	let delivered = 0;
	let failed = 0;
	for (;;) {
		const rows = await leaseOutbox(deps.db, RELAY_BATCH, leaseMs);
		const round = await deliverBookingRows(deps, rows);
		failed += round.failed;
		// the round's acknowledged rows in one UPDATE (a relay dying before it only redelivers them)
		await outboxDelivered(deps.db, round.acked);
		delivered += round.acked.length;
		if (rows.length < RELAY_BATCH || deps.stopping()) break;
	}
	return { delivered, failed };
}

/** How long a leased outbox row stays invisible to other relays: 3 × `callTimeoutMs`, at least 30 s. */
export function relayLeaseMs(t: BookingTimings): number {
	return Math.max(30_000, 3 * t.callTimeoutMs);
}

/**
 * The coalesced outbox operations of one booking service instance (see
 * lib/platform/coalesce.ts): `lease(ids)` leases the due undelivered rows among the
 * ids of every concurrent caller in one statement (each caller keeps its
 * own); `delivered(ids)` marks acknowledged rows in one UPDATE;
 * `ledgerEntry(e)` sends the wallet movements of concurrent deliveries to
 * billing in one `billing.recordEntries` call (a failed call fails each of them:
 * each row is redelivered with its backoff).
 */
export function outboxBatch(db: Sequelize, t: BookingTimings, broker: ServiceBroker): OutboxBatch {
	return {
		lease: coalesce((ids: number[]) => leaseOutbox(db, ids.length, relayLeaseMs(t), ids)),
		delivered: coalesce((ids: number[]) => outboxDelivered(db, ids)),
		// the movements of concurrent deliveries in one billing call (idempotent there per attempt and kind)
		ledgerEntry: groupCommit(
			async (entries: LedgerEntryEvent[]): Promise<PromiseSettledResult<void>[]> => {
				await call(
					broker,
					"billing.recordEntries",
					{ entries },
					{
						timeout: t.callTimeoutMs,
						unavailable: false,
					},
				);
				return entries.map(() => ({ status: "fulfilled", value: undefined }));
			},
			{ maxItems: RELAY_BATCH },
		),
	};
}

/**
 * Delivers leased `rows` concurrently (lib/platform/outbox.ts `deliverRows`):
 * a failed row is logged and its redelivery scheduled with backoff. Answers
 * the acknowledged ids and how many failed.
 */
function deliverBookingRows(
	deps: BookingDeps,
	rows: OutboxRow[],
): Promise<{ acked: number[]; failed: number }> {
	return deliverRows(deps.db, "booking", rows, (row) => deliver(deps, row), {
		backoffMs: deps.timings.relayBackoffMs,
		logger: deps.logger,
	});
}

/**
 * Delivers one outbox row; resolves only when acknowledged. A failure is
 * rethrown as it came (the relay logs it and redelivers the row later).
 */
export async function deliver(deps: BookingDeps, row: OutboxRow): Promise<void> {
	if (row.kind === "order_update") {
		await call(deps.broker, "intake.applyBookingUpdate", row.payload, {
			timeout: deps.timings.callTimeoutMs,
			unavailable: false,
		});
	} else if (row.kind === "enqueue_booking") {
		await enqueue(deps, Number(row.payload.attempt_id));
	} else if (row.kind === "lane_outcome") {
		// idempotent per attempt at rates (lib/booking/tracking.ts writes it on delivered / rto_delivered)
		await call(deps.broker, "rates.recordLaneOutcome", row.payload, {
			timeout: deps.timings.callTimeoutMs,
			unavailable: false,
		});
	} else if (row.kind === "status_event") {
		// acknowledged by the channel (JetStream / Redis); JetStream drops a re-publish of the same event_id
		await withTimeout(
			publishToChannel(deps.broker, SHIPMENT_STATUS_CHANNEL, row.payload, { msgId: row.payload.event_id }),
			deps.timings.callTimeoutMs,
			"shipment.status_changed publish",
		);
	} else if (row.kind === "courier_label") {
		// documents fetches the courier's label file and stores it (idempotent per AWB); a courier
		// failure rejects, so the row is redelivered with backoff
		await call(deps.broker, "documents.captureCourierLabel", row.payload, {
			timeout: deps.timings.callTimeoutMs,
			unavailable: false,
		});
	} else if (row.kind === "ledger_entry") {
		// billing owns the wallet; idempotent per (attempt_id, kind) there
		await deps.outbox.ledgerEntry(row.payload);
	} else if (row.kind === "credit_limit") {
		// billing keeps the newest version
		await call(deps.broker, "billing.applyCreditLimit", row.payload, {
			timeout: deps.timings.callTimeoutMs,
			unavailable: false,
		});
	} else {
		throw new Error(`unknown outbox kind ${(row as OutboxRow).kind}`);
	}
}

/** Adds the attempt's job (jobId `attempt-<id>`: BullMQ ignores a duplicate add). */
export async function enqueue(deps: BookingDeps, attempt_id: number): Promise<void> {
	const t = deps.timings;
	await withTimeout(
		getQueue(BOOKING_QUEUE).add(
			"book",
			{ attempt_id },
			{
				jobId: jobIdOf(attempt_id),
				attempts: t.jobAttempts,
				backoff: { type: "exponential", delay: t.backoffMs, jitter: BACKOFF_JITTER },
				removeOnComplete: true,
				removeOnFail: { age: 7 * 24 * 3600 },
			},
		),
		t.callTimeoutMs,
		"booking queue add",
	);
}

/** Delivers outbox rows `ids` now (logged, left to the relay on failure). */
export async function deliverNow(deps: BookingDeps, attempt_id: number, ids: number[] | null): Promise<void> {
	if (!ids?.length) return;
	try {
		await relay(deps, ids);
	} catch (err) {
		deps.logger.warn(`booking ${attempt_id}: outbox delivery deferred: ${message(err)}`);
	}
}

/**
 * Sweeper pass: first settles attempts unsettled for `unsettledMs`
 * ({@link resolveUnsettled}); then attempts queued for longer than
 * `sweepAfterMs` (or with a stale claim) whose job is missing, finished or
 * unknown get their job re-added under the same jobId.
 */
export async function sweepOnce(deps: BookingDeps): Promise<{ enqueued: number }> {
	const settled = await resolveUnsettled(deps);
	if (settled) deps.logger.info(`booking sweeper: settled ${settled} unsettled attempt(s) with the courier`);
	const ids = await sweepCandidates(deps.db, deps.timings.sweepAfterMs, deps.timings.claimStaleMs);
	let enqueued = 0;
	const q = getQueue(BOOKING_QUEUE);
	for (const id of ids) {
		let job: Job | undefined = await withTimeout(
			q.getJob(jobIdOf(id)),
			deps.timings.callTimeoutMs,
			"booking queue getJob",
		);
		if (job) {
			const st = await job.getState();
			if (st === "completed" || st === "failed" || st === "unknown") {
				await job.remove().catch(() => undefined);
				job = undefined;
			}
		}
		if (!job) {
			await enqueue(deps, id);
			enqueued++;
			deps.logger.info(`booking sweeper: re-enqueued attempt ${id}`);
		}
	}
	return { enqueued };
}
