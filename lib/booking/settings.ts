/**
 * Timings of the booking service, read from the environment when the service
 * is created (so tests can shorten them). All values in milliseconds.
 *
 * | Variable | Meaning | Default |
 * |---|---|---|
 * | `BOOKING_JOB_ATTEMPTS` | BullMQ attempts per booking job | 6 |
 * | `BOOKING_BACKOFF_MS` | first retry delay (exponential: delay · 2^(n-1), minus up to {@link BACKOFF_JITTER} of it at random) | 2000 |
 * | `BOOKING_RELAY_MS` | outbox relay period | 1000 |
 * | `BOOKING_RELAY_BACKOFF_MS` | first redelivery delay of a failed outbox row (doubles, max 60 s) | 1000 |
 * | `BOOKING_SWEEP_MS` | sweeper period | 30000 |
 * | `BOOKING_SWEEP_AFTER_MS` | age after which a queued attempt without a job is re-enqueued | 20000 |
 * | `BOOKING_CLAIM_STALE_MS` | age after which another worker may take over a claim | 60000 |
 * | `BOOKING_CALL_TIMEOUT_MS` | timeout of calls to other services and of queue adds | 5000 |
 * | `BOOKING_SYNC_BUDGET_MS` | how long `POST /v1/shipping/book/sync` books inline before handing the attempt to the worker (202) | 25000 |
 * | `BOOKING_UNSETTLED_MS` | age of a queued/claimed attempt after which the sweeper settles it by asking the courier about its reference | 120000 |
 * | `BOOKING_TRACK_MS` | tracking poller period (lib/booking/tracking.ts): each tick leases the due open shipments and asks their couriers | 30000 |
 * | `BOOKING_TRACK_INTERVAL_MS` | how often one open shipment is asked again (a shipment is due this long after it was last leased) | 900000 |
 */

/** BullMQ backoff jitter: each retry delay is drawn from [delay · (1 − 0.5), delay]. */
export const BACKOFF_JITTER = 0.5;

export interface BookingTimings {
	jobAttempts: number;
	backoffMs: number;
	relayMs: number;
	relayBackoffMs: number;
	sweepMs: number;
	sweepAfterMs: number;
	claimStaleMs: number;
	callTimeoutMs: number;
	syncBudgetMs: number;
	unsettledMs: number;
	trackMs: number;
	trackIntervalMs: number;
}

function num(v: string | undefined, dflt: number, min = 1): number {
	const n = v === undefined || v === "" ? Number.NaN : Number(v);
	return Number.isInteger(n) && n >= min ? n : dflt;
}

/** Reads {@link BookingTimings} from `env`. */
export function bookingTimings(env: NodeJS.ProcessEnv = process.env): BookingTimings {
	return {
		jobAttempts: num(env.BOOKING_JOB_ATTEMPTS, 6),
		backoffMs: num(env.BOOKING_BACKOFF_MS, 2000),
		relayMs: num(env.BOOKING_RELAY_MS, 1000),
		relayBackoffMs: num(env.BOOKING_RELAY_BACKOFF_MS, 1000),
		sweepMs: num(env.BOOKING_SWEEP_MS, 30_000),
		sweepAfterMs: num(env.BOOKING_SWEEP_AFTER_MS, 20_000, 0),
		claimStaleMs: num(env.BOOKING_CLAIM_STALE_MS, 60_000),
		callTimeoutMs: num(env.BOOKING_CALL_TIMEOUT_MS, 5000),
		syncBudgetMs: num(env.BOOKING_SYNC_BUDGET_MS, 25_000),
		unsettledMs: num(env.BOOKING_UNSETTLED_MS, 120_000),
		trackMs: num(env.BOOKING_TRACK_MS, 30_000),
		trackIntervalMs: num(env.BOOKING_TRACK_INTERVAL_MS, 900_000),
	};
}

/** BullMQ queue of booking jobs. */
export const BOOKING_QUEUE = "booking";

/** BullMQ job id of an attempt (dedupes adds). */
export function jobIdOf(attempt_id: number | string): string {
	return `attempt-${attempt_id}`;
}
