/**
 * Settings of the webhooks service (issue 11; README "Configuration"),
 * read from the environment when the service is created (tests set them
 * first). Times in milliseconds unless the name says hours.
 */
import { loadConfig } from "../config";

/** What the webhooks service is tuned by. */
export interface WebhookSettings {
	/** sandbox (`SANDBOX=1`, or the zero-setup start): http and loopback receivers allowed (nothing else relaxed) */
	sandbox: boolean;
	/** `WEBHOOK_CONCURRENCY` (100): deliveries in flight per process (BullMQ worker concurrency) */
	concurrency: number;
	/** `WEBHOOK_ENDPOINT_INFLIGHT` (10): deliveries in flight to one endpoint per process */
	endpointInflight: number;
	/** `WEBHOOK_TIMEOUT_MS` (10 000): one attempt's budget (connect, send, answer) */
	timeoutMs: number;
	/** `WEBHOOK_BACKOFF_MS` (20 000): base of the exponential backoff (BullMQ `exponential`, with jitter) */
	backoffMs: number;
	/** `WEBHOOK_MAX_ATTEMPTS` (13): attempts of one delivery (12 retries: ~23 h with the default base) */
	maxAttempts: number;
	/** `WEBHOOK_MAX_AGE_H` (24): a delivery older than this is given up at its next try */
	maxAgeH: number;
	/** `WEBHOOK_PREVIOUS_SECRET_H` (24): how long a rotated-out secret still signs */
	previousSecretH: number;
	/** `WEBHOOK_ORDER_HOLD_MS` (30 000): longest wait for a missing earlier status event of a shipment */
	orderHoldMs: number;
	/** `WEBHOOK_SWEEP_MS` (30 000): sweeper period (jobs lost with Redis re-added) */
	sweepMs: number;
	/** `WEBHOOK_RESPONSE_CAP_BYTES` (4096): response body bytes read and kept (owner only) */
	responseCapBytes: number;
	/** `WEBHOOK_MAX_ENDPOINTS` (20): endpoints per account */
	maxEndpoints: number;
	/** `WEBHOOK_CALL_TIMEOUT_MS` (5000): calls to other services (intake, for `order_no`) */
	callTimeoutMs: number;
}

/** A positive integer from `name`, else `dflt` (malformed refuses to start). */
function positive(name: string, dflt: number): number {
	const v = process.env[name];
	if (v === undefined || v.trim() === "") return dflt;
	const n = Number(v);
	if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number (got "${v}")`);
	return n;
}

/** The settings from the environment. @throws Error on a malformed value */
export function webhookSettings(): WebhookSettings {
	return {
		// the runtime configuration's sandbox flag: SANDBOX=1, and the zero-setup start unless SANDBOX says otherwise
		sandbox: loadConfig().sandbox,
		concurrency: Math.floor(positive("WEBHOOK_CONCURRENCY", 100)),
		endpointInflight: Math.floor(positive("WEBHOOK_ENDPOINT_INFLIGHT", 10)),
		timeoutMs: positive("WEBHOOK_TIMEOUT_MS", 10_000),
		backoffMs: positive("WEBHOOK_BACKOFF_MS", 20_000),
		maxAttempts: Math.floor(positive("WEBHOOK_MAX_ATTEMPTS", 13)),
		maxAgeH: positive("WEBHOOK_MAX_AGE_H", 24),
		previousSecretH: positive("WEBHOOK_PREVIOUS_SECRET_H", 24),
		orderHoldMs: positive("WEBHOOK_ORDER_HOLD_MS", 30_000),
		sweepMs: positive("WEBHOOK_SWEEP_MS", 30_000),
		responseCapBytes: Math.floor(positive("WEBHOOK_RESPONSE_CAP_BYTES", 4096)),
		maxEndpoints: Math.floor(positive("WEBHOOK_MAX_ENDPOINTS", 20)),
		callTimeoutMs: positive("WEBHOOK_CALL_TIMEOUT_MS", 5000),
	};
}
