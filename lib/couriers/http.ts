/**
 * The transport step every courier proxy shares (docs/ARCHITECTURE.md §1,
 * Karrio's "proxy"): one `fetch` with a timeout covering the headers and the
 * body read, an answer size cap, and the two outcomes the adapter interface
 * knows for a transport failure. Anything the courier's wire format decides
 * (refusal words, JSON shapes, auth) stays in the courier's own proxy/mapper.
 */
import { CourierUnavailable } from "./types";

/** Largest courier answer read (bytes): label PDFs included. */
export const MAX_COURIER_ANSWER_BYTES = 5 * 1024 * 1024;

/** What came back: status, lower-cased media type without parameters, raw bytes. */
export interface CourierHttpAnswer {
	status: number;
	content_type: string;
	bytes: Buffer;
}

/**
 * Performs one HTTP exchange with a courier.
 * @param what names the call in error messages (e.g. `Delhivery POST /api/cmu/create.json`); never a secret
 * @param opts.timeoutMs whole exchange (ms); opts.maxBytes answer cap (default {@link MAX_COURIER_ANSWER_BYTES});
 *   opts.redact applied to messages that could echo a credential
 * @throws CourierUnavailable on a timeout, a network error, an answer over the cap, HTTP 5xx (outcome unknown:
 *   the caller looks the reference up before retrying a side-effecting call) or HTTP 429 (the courier limits its
 *   callers: nothing was done, the call is retried with backoff like any transient failure, never read as a refusal)
 */
export async function courierFetch(
	url: string | URL,
	init: { method: string; headers: Record<string, string>; body?: string },
	what: string,
	opts: { timeoutMs: number; maxBytes?: number; redact?: (s: string) => string },
): Promise<CourierHttpAnswer> {
	const max = opts.maxBytes ?? MAX_COURIER_ANSWER_BYTES;
	const redact = opts.redact ?? ((s: string) => s);
	let res: Response;
	let bytes: Buffer;
	try {
		res = await fetch(url, { ...init, signal: AbortSignal.timeout(opts.timeoutMs) });
		const declared = Number(res.headers.get("content-length"));
		if (declared > max) {
			await res.body?.cancel();
			throw new CourierUnavailable(`${what}: answer of ${declared} bytes is too large`);
		}
		bytes = Buffer.from(await res.arrayBuffer());
	} catch (err) {
		if (err instanceof CourierUnavailable) throw err;
		const e = err as Error & { cause?: { code?: string } };
		if (e.name === "TimeoutError" || e.name === "AbortError")
			throw new CourierUnavailable(`${what}: no answer within ${opts.timeoutMs} ms`);
		throw new CourierUnavailable(redact(`${what}: ${e.cause?.code ?? e.message}`));
	}
	if (res.status >= 500 || res.status === 429) throw new CourierUnavailable(`${what}: HTTP ${res.status}`);
	if (bytes.length > max)
		throw new CourierUnavailable(`${what}: answer of ${bytes.length} bytes is too large`);
	const content_type = (res.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
	return { status: res.status, content_type, bytes };
}
