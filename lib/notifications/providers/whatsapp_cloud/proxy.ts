/**
 * HTTP proxy of the WhatsApp Cloud API connector: one global `fetch` per call with an
 * `AbortSignal.timeout` covering the headers and the body read, an answer size cap, no retries (the
 * notifications queue retries a {@link ProviderUnavailable} with backoff).
 *
 * Errors: timeout, connection failure, an answer over {@link MAX_ANSWER_BYTES}, HTTP 5xx or 429 →
 * {@link ProviderUnavailable} (with `Retry-After` when given). Any other answer is returned for the
 * mapper (the Graph API reports most refusals, rate limits included, as HTTP 400 with `error.code`).
 * The access token goes only into the `Authorization` header: never into a URL, an error message or a
 * log line (messages are passed through {@link redact} besides).
 */
import { ProviderUnavailable } from "../types";
import type { WhatsAppSettings } from "./settings";

/** A request as the mapper builds it (the golden fixtures' `request`). */
export interface WireRequest {
	method: "POST";
	/** path below the base URL, e.g. `/v21.0/106540352242922/messages` */
	path: string;
	/** headers besides `Authorization` (lower-case names) */
	headers: Record<string, string>;
	/** the JSON body */
	body: unknown;
}

/** An answer below 500 other than 429, body as UTF-8 text. */
export interface WireAnswer {
	status: number;
	text: string;
	/** `Retry-After` in ms, when the answer had one */
	retryAfterMs?: number;
}

/** Most bytes read from one Graph API answer (send answers are a few hundred bytes). */
export const MAX_ANSWER_BYTES = 256 * 1024;

/** `s` with every occurrence of the access token replaced by `[redacted]` (defence in depth for echoed words). */
export function redact(s: string, settings: Pick<WhatsAppSettings, "token">): string {
	return settings.token ? s.split(settings.token).join("[redacted]") : s;
}

/** Milliseconds of a `Retry-After` header (delta-seconds or an HTTP date), or undefined. */
export function retryAfterMs(h: string | null, now = Date.now()): number | undefined {
	if (!h) return undefined;
	const t = h.trim();
	if (/^\d+$/.test(t)) return Number(t) * 1000;
	const at = Date.parse(t);
	return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Performs `req` against `settings.baseUrl` with `Authorization: Bearer <token>`.
 * @throws ProviderUnavailable on a timeout, a network error, an oversized answer, HTTP 5xx or 429
 */
export async function send(settings: WhatsAppSettings, req: WireRequest): Promise<WireAnswer> {
	const url = `${settings.baseUrl}${req.path}`;
	const what = `WhatsApp ${req.method} ${req.path}`;
	let res: Response;
	let bytes: Buffer;
	try {
		res = await fetch(url, {
			method: req.method,
			headers: { ...req.headers, authorization: `Bearer ${settings.token}` },
			body: JSON.stringify(req.body),
			redirect: "error",
			signal: AbortSignal.timeout(settings.timeoutMs),
		});
		const declared = Number(res.headers.get("content-length"));
		if (declared > MAX_ANSWER_BYTES) {
			await res.body?.cancel();
			throw new ProviderUnavailable(`${what}: answer of ${declared} bytes is too large`);
		}
		bytes = Buffer.from(await res.arrayBuffer());
	} catch (err) {
		if (err instanceof ProviderUnavailable) throw err;
		const e = err as Error & { cause?: { code?: string } };
		if (e.name === "TimeoutError" || e.name === "AbortError")
			throw new ProviderUnavailable(`${what}: no answer within ${settings.timeoutMs} ms`);
		throw new ProviderUnavailable(redact(`${what}: ${e.cause?.code ?? e.message}`, settings));
	}
	if (bytes.length > MAX_ANSWER_BYTES)
		throw new ProviderUnavailable(`${what}: answer of ${bytes.length} bytes is too large`);
	const retry = retryAfterMs(res.headers.get("retry-after"));
	if (res.status === 429) throw new ProviderUnavailable(`${what}: HTTP 429 (rate limited)`, retry);
	if (res.status >= 500) throw new ProviderUnavailable(`${what}: HTTP ${res.status}`, retry);
	return { status: res.status, text: bytes.toString("utf8"), retryAfterMs: retry };
}
