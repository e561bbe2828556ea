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
import { settingsOf } from "../platform/config";

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

/**
 * Reads {@link BookingTimings} from `env` (declared in lib/platform/config.ts).
 * @throws Error naming the variable when a value is not allowed
 */
export function bookingTimings(env: NodeJS.ProcessEnv = process.env): BookingTimings {
	return settingsOf(
		{
			jobAttempts: "BOOKING_JOB_ATTEMPTS",
			backoffMs: "BOOKING_BACKOFF_MS",
			relayMs: "BOOKING_RELAY_MS",
			relayBackoffMs: "BOOKING_RELAY_BACKOFF_MS",
			sweepMs: "BOOKING_SWEEP_MS",
			sweepAfterMs: "BOOKING_SWEEP_AFTER_MS",
			claimStaleMs: "BOOKING_CLAIM_STALE_MS",
			callTimeoutMs: "BOOKING_CALL_TIMEOUT_MS",
			syncBudgetMs: "BOOKING_SYNC_BUDGET_MS",
			unsettledMs: "BOOKING_UNSETTLED_MS",
			trackMs: "BOOKING_TRACK_MS",
			trackIntervalMs: "BOOKING_TRACK_INTERVAL_MS",
		},
		env,
	);
}

/** BullMQ queue of booking jobs. */
export const BOOKING_QUEUE = "booking";

/** BullMQ job id of an attempt (dedupes adds). */
export function jobIdOf(attempt_id: number | string): string {
	return `attempt-${attempt_id}`;
}
