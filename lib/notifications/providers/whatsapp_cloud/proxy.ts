/**
 * HTTP proxy of the WhatsApp Cloud API connector over the shared {@link fetchWire} (../http.ts): one
 * `fetch` per call with a timeout covering the headers and the body read, redirects refused, an answer
 * size cap, no retries (the notifications queue retries a `ProviderUnavailable` with backoff).
 *
 * Errors: timeout, connection failure, an answer over {@link MAX_ANSWER_BYTES}, HTTP 5xx or 429 →
 * `ProviderUnavailable` (with `Retry-After` when given). Any other answer is returned for the
 * mapper (the Graph API reports most refusals, rate limits included, as HTTP 400 with `error.code`).
 * The access token goes only into the `Authorization` header: never into a URL, an error message or a
 * log line (messages are passed through {@link redact} besides).
 */
import { fetchWire, redact as redactSecret, type WireAnswer, type WireRequest } from "../http";
import type { WhatsAppSettings } from "./settings";

export { MAX_ANSWER_BYTES, retryAfterMs, type WireAnswer, type WireRequest } from "../http";

/** `s` with every occurrence of the access token replaced by `[redacted]` (defence in depth for echoed words). */
export function redact(s: string, settings: Pick<WhatsAppSettings, "token">): string {
	return redactSecret(s, settings.token);
}

/**
 * Performs `req` against `settings.baseUrl` with `Authorization: Bearer <token>`.
 * @throws ProviderUnavailable on a timeout, a network error, an oversized answer, HTTP 5xx or 429
 */
export function send(settings: WhatsAppSettings, req: WireRequest): Promise<WireAnswer> {
	const what = `WhatsApp ${req.method} ${req.path}`;
	const auth = { authorization: `Bearer ${settings.token}` };
	return fetchWire(`${settings.baseUrl}${req.path}`, req, {
		what,
		auth,
		secret: settings.token,
		timeoutMs: settings.timeoutMs,
	});
}
