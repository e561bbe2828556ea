/**
 * What the HTTP connectors of buyer messages (./msg91, ./whatsapp_cloud) share: the wire shapes their
 * mappers build and read ({@link WireRequest}, {@link WireAnswer}), ONE `fetch` wrapper their proxies call
 * ({@link fetchWire}), the `Retry-After` reading, the redaction of a connector's secret from any text,
 * the constant-time comparison of callback tokens ({@link sameSecret}), and the send pipeline of a
 * connector's provider ({@link WireProvider}: mapper → proxy → mapper).
 *
 * {@link fetchWire}: one global `fetch` per call with an `AbortSignal.timeout` covering the headers and the
 * body read, redirects refused (`redirect: "error"`: the auth header never follows a redirect), an answer
 * size cap, no retries (the notifications queue retries a {@link ProviderUnavailable} with backoff).
 * Timeout, connection failure, an answer over the cap, HTTP 5xx or 429 → {@link ProviderUnavailable} (with
 * the provider's `Retry-After` when given); any other answer is returned for the mapper. The connector's
 * secret is redacted from every error message.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import {
	type MessageChannel,
	type OutboundMessage,
	type Provider,
	ProviderUnavailable,
	type SendResult,
} from "./types";

/** A request as a connector's mapper builds it (the golden fixtures' `request`). */
export interface WireRequest {
	method: "POST";
	/** path below the base URL, e.g. `/api/v5/flow/` or `/v21.0/106540352242922/messages` */
	path: string;
	/** headers besides the auth header (lower-case names) */
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

/** Most bytes read from one provider answer (send answers are a few hundred bytes). */
export const MAX_ANSWER_BYTES = 256 * 1024;

/** The headers of a JSON call besides the auth header. */
export const JSON_HEADERS: Readonly<Record<string, string>> = {
	accept: "application/json",
	"content-type": "application/json",
};

/** `text` with every occurrence of `secret` replaced by `[redacted]` (an empty secret changes nothing). */
export function redact(text: string, secret: string): string {
	return secret ? text.split(secret).join("[redacted]") : text;
}

/** Milliseconds of a `Retry-After` header (delta-seconds or an HTTP date, relative to `now`), or undefined. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
	if (!header) return undefined;
	const t = header.trim();
	if (/^\d+$/.test(t)) return Number(t) * 1000;
	const at = Date.parse(t);
	return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Key of the constant-time comparisons (random per process: digests of equal inputs are equal, nothing else leaks). */
const COMPARE_KEY = randomBytes(32);

/**
 * Whether `given` equals `expected`, in time independent of where they differ (HMAC-SHA256 digests under a
 * per-process random key, compared with `crypto.timingSafeEqual`). An empty `expected` never matches.
 */
export function sameSecret(given: string, expected: string): boolean {
	if (!expected) return false;
	const a = createHmac("sha256", COMPARE_KEY).update(given, "utf8").digest();
	const b = createHmac("sha256", COMPARE_KEY).update(expected, "utf8").digest();
	return timingSafeEqual(a, b);
}

/** How a connector's proxy calls {@link fetchWire}. */
export interface WireCall {
	/** names the call in error messages, e.g. `MSG91 POST /api/v5/flow/` */
	what: string;
	/** the auth header (lower-case name → value), added to the request's own headers */
	auth: Readonly<Record<string, string>>;
	/** the credential redacted from every error message */
	secret: string;
	/** the whole exchange, ms */
	timeoutMs: number;
}

/**
 * Performs `req` at `url` (its headers plus `call.auth`, its body as JSON; see the module doc).
 * @throws ProviderUnavailable on a timeout, a network error, an oversized answer, HTTP 5xx or 429
 */
export async function fetchWire(url: string, req: WireRequest, call: WireCall): Promise<WireAnswer> {
	const { what, secret, timeoutMs } = call;
	const unavailable = (words: string, retry?: number) =>
		new ProviderUnavailable(redact(`${what}: ${words}`, secret), retry);
	let res: Response;
	let bytes: Buffer;
	try {
		res = await fetch(url, {
			method: req.method,
			headers: { ...req.headers, ...call.auth },
			body: JSON.stringify(req.body),
			redirect: "error",
			signal: AbortSignal.timeout(timeoutMs),
		});
		const declared = Number(res.headers.get("content-length"));
		if (declared > MAX_ANSWER_BYTES) {
			await res.body?.cancel();
			throw unavailable(`answer of ${declared} bytes is too large`);
		}
		bytes = Buffer.from(await res.arrayBuffer());
	} catch (err) {
		if (err instanceof ProviderUnavailable) throw err;
		const e = err as Error & { cause?: { code?: string } };
		if (e.name === "TimeoutError" || e.name === "AbortError")
			throw unavailable(`no answer within ${timeoutMs} ms`);
		throw unavailable(e.cause?.code ?? e.message);
	}
	if (bytes.length > MAX_ANSWER_BYTES) throw unavailable(`answer of ${bytes.length} bytes is too large`);
	const retry = retryAfterMs(res.headers.get("retry-after"));
	if (res.status === 429) throw unavailable("HTTP 429 (rate limited)", retry);
	if (res.status >= 500) throw unavailable(`HTTP ${res.status}`, retry);
	return { status: res.status, text: bytes.toString("utf8"), retryAfterMs: retry };
}

/** The three steps of an HTTP connector's send, each a pure mapper function or its proxy. */
export interface WireSteps<S> {
	/** our message → the provider's request, or the `failed` answer when it cannot be sent at all */
	build(m: OutboundMessage, s: S): { request: WireRequest } | { failed: SendResult };
	/** performs the request (the connector's proxy, over {@link fetchWire}) */
	post(s: S, req: WireRequest): Promise<WireAnswer>;
	/** the provider's answer → our result (may throw ProviderUnavailable) */
	parse(ans: WireAnswer, s: S): SendResult;
}

/**
 * A provider on an HTTP connector: `send` builds the request (a message that cannot be sent is answered
 * `failed` without a call), performs it and parses the answer. Subclasses add `parseCallback`.
 */
export class WireProvider<S> implements Provider {
	/** the connector's steps (an ES private field: the provider's own keys stay name, channel, settings) */
	readonly #steps: WireSteps<S>;

	/**
	 * @param name the name recorded on each message
	 * @param channel the channel it sends on
	 * @param settings the connector's settings
	 * @param steps the connector's mapper and proxy functions
	 */
	constructor(
		readonly name: string,
		readonly channel: MessageChannel,
		readonly settings: S,
		steps: WireSteps<S>,
	) {
		this.#steps = steps;
	}

	/**
	 * Sends `m` through the connector's steps (see {@link WireSteps}).
	 * @throws ProviderUnavailable when the outcome is unknown or the refusal transient
	 */
	async send(m: OutboundMessage): Promise<SendResult> {
		const built = this.#steps.build(m, this.settings);
		if ("failed" in built) return built.failed;
		const ans = await this.#steps.post(this.settings, built.request);
		return this.#steps.parse(ans, this.settings);
	}
}
