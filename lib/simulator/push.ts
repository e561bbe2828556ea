/**
 * The sandbox couriers' scan push (as Delhivery pushes scans to a client's
 * webhook): when `SANDBOX_SCAN_PUSH_URL` is set, every scan emitted on demand
 * (`simulator.emitScan`, `POST /couriers/<code>/sandbox/scan`) is also POSTed
 * there as one {@link WirePushScan} JSON body, signed with
 * `x-sandbox-timestamp: <unix seconds>` and `x-sandbox-signature:
 * sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">` under
 * `SANDBOX_WEBHOOK_SECRET` (lib/couriers/sandbox/signature.ts); with no key
 * configured nothing is pushed (a warning; the poller finds the scan). `{courier}` in
 * the URL is replaced by the courier code, e.g.
 * `http://127.0.0.1:3000/v1/tracking/webhooks/{courier}`.
 *
 * Fire-and-forget: the push runs after the scan is stored, with a
 * {@link PUSH_TIMEOUT_MS} timeout; a failed push (unreachable, timeout,
 * non-2xx) is logged as a warning and not retried: the poller still finds the
 * scan through the track API.
 */
import type { Logger } from "moleculer";
import { sandboxWebhookSecret } from "../couriers/sandbox/settings";
import { signedPushHeaders } from "../couriers/sandbox/signature";
import type { WirePushScan } from "../couriers/sandbox/wire";
import { setting } from "../platform/config";

/** How long one push waits for the receiver's answer, ms. */
export const PUSH_TIMEOUT_MS = 2_000;

/** The push URL for `courierCode` (`{courier}` replaced), or null when `SANDBOX_SCAN_PUSH_URL` is unset or blank. */
export function pushUrlFor(courierCode: string, env: NodeJS.ProcessEnv = process.env): string | null {
	const tpl = setting("SANDBOX_SCAN_PUSH_URL", env);
	return tpl ? tpl.replaceAll("{courier}", encodeURIComponent(courierCode)) : null;
}

/**
 * POSTs `body` (JSON) to `url`, signed under `secret` at the current time. Resolves when the
 * receiver answered 2xx; rejects on a non-2xx answer, a connection failure or
 * no answer within `timeoutMs`.
 */
export async function pushScan(
	url: string,
	body: WirePushScan | WirePushScan[],
	secret: string,
	timeoutMs = PUSH_TIMEOUT_MS,
): Promise<void> {
	const raw = JSON.stringify(body);
	const res = await fetch(url, {
		method: "POST",
		headers: { "Content-Type": "application/json", ...signedPushHeaders(raw, secret) },
		body: raw,
		signal: AbortSignal.timeout(timeoutMs),
	});
	await res.arrayBuffer().catch(() => undefined);
	if (res.status < 200 || res.status >= 300) throw new Error(`HTTP ${res.status}`);
}

/**
 * Pushes `body` for `courierCode` when `SANDBOX_SCAN_PUSH_URL` is set, without
 * waiting (fire-and-forget); a failure is logged on `logger` as a warning.
 * Answers the promise of the push (resolved, never rejected) for tests, or
 * null when no push URL is set, or when no `SANDBOX_WEBHOOK_SECRET` is set
 * (nothing to sign with: a warning, no push).
 */
export function firePush(
	logger: Pick<Logger, "warn">,
	courierCode: string,
	body: WirePushScan,
): Promise<void> | null {
	const url = pushUrlFor(courierCode);
	if (!url) return null;
	const secret = sandboxWebhookSecret();
	if (!secret) {
		logger.warn(
			`simulator: scan of ${body.Shipment.AWB} not pushed: SANDBOX_WEBHOOK_SECRET is not set; the poller will find it`,
		);
		return null;
	}
	return pushScan(url, body, secret).catch((err: Error & { cause?: { code?: string } }) => {
		const why =
			err.name === "TimeoutError"
				? `no answer within ${PUSH_TIMEOUT_MS} ms`
				: (err.cause?.code ?? err.message);
		logger.warn(
			`simulator: scan push of ${body.Shipment.AWB} to ${url} failed (${why}); the poller will find it`,
		);
	});
}
