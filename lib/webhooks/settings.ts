/**
 * Settings of the webhooks service (issue 11; README "Configuration"),
 * read from the environment when the service is created (tests set them
 * first). Times in milliseconds unless the name says hours.
 */
import { loadConfig, setting } from "../platform/config";

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

/** The settings from the environment (declared in lib/platform/config.ts). @throws Error naming a variable whose value is not allowed */
export function webhookSettings(): WebhookSettings {
	return {
		// the runtime configuration's sandbox flag: SANDBOX=1, and the zero-setup start unless SANDBOX says otherwise
		sandbox: loadConfig().sandbox,
		concurrency: setting("WEBHOOK_CONCURRENCY"),
		endpointInflight: setting("WEBHOOK_ENDPOINT_INFLIGHT"),
		timeoutMs: setting("WEBHOOK_TIMEOUT_MS"),
		backoffMs: setting("WEBHOOK_BACKOFF_MS"),
		maxAttempts: setting("WEBHOOK_MAX_ATTEMPTS"),
		maxAgeH: setting("WEBHOOK_MAX_AGE_H"),
		previousSecretH: setting("WEBHOOK_PREVIOUS_SECRET_H"),
		orderHoldMs: setting("WEBHOOK_ORDER_HOLD_MS"),
		sweepMs: setting("WEBHOOK_SWEEP_MS"),
		responseCapBytes: setting("WEBHOOK_RESPONSE_CAP_BYTES"),
		maxEndpoints: setting("WEBHOOK_MAX_ENDPOINTS"),
		callTimeoutMs: setting("WEBHOOK_CALL_TIMEOUT_MS"),
	};
}
