/**
 * HTTP proxy of the MSG91 connector over the shared {@link fetchWire} (../http.ts): one `fetch` per call
 * with a timeout covering the headers and the body read, redirects refused, an answer size cap, no
 * retries (the notifications queue retries a `ProviderUnavailable` with backoff).
 *
 * Errors: timeout, connection failure, an answer over {@link MAX_ANSWER_BYTES}, HTTP 5xx or 429 →
 * `ProviderUnavailable` (with MSG91's `Retry-After` when given). Any other answer is returned
 * for the mapper. The auth key goes only into the `authkey` header: never into a URL, an error
 * message or a log line (messages are passed through {@link redact} besides).
 */
import { fetchWire, redact as redactSecret, type WireAnswer, type WireRequest } from "../http";
import type { Msg91Settings } from "./settings";

export { MAX_ANSWER_BYTES, retryAfterMs, type WireAnswer, type WireRequest } from "../http";

/** `s` with every occurrence of the auth key replaced by `[redacted]` (defence in depth for echoed words). */
export function redact(s: string, settings: Pick<Msg91Settings, "authKey">): string {
	return redactSecret(s, settings.authKey);
}

/**
 * Performs `req` against `settings.baseUrl` with header `authkey`.
 * @throws ProviderUnavailable on a timeout, a network error, an oversized answer, HTTP 5xx or 429
 */
export function send(settings: Msg91Settings, req: WireRequest): Promise<WireAnswer> {
	const what = `MSG91 ${req.method} ${req.path}`;
	const auth = { authkey: settings.authKey };
	return fetchWire(`${settings.baseUrl}${req.path}`, req, {
		what,
		auth,
		secret: settings.authKey,
		timeoutMs: settings.timeoutMs,
	});
}
