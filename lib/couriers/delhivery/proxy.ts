/**
 * HTTP proxy of the Delhivery connector: one `fetch` per call with an
 * `AbortSignal.timeout`, no retries (callers retry after a look-up).
 *
 * Errors: timeout, connection failure, 5xx, an HTML page or malformed JSON →
 * {@link CourierUnavailable} (outcome unknown). 401/403 → {@link CourierRefused}
 * (the token was refused: nothing happened at the courier). Other answers are
 * returned for the mapper. The token goes only into the `Authorization`
 * header: never into a URL, an error message or a log line.
 */

import { courierFetch, MAX_COURIER_ANSWER_BYTES } from "../http";
import { CourierRefused, CourierUnavailable } from "../types";
import type { DelhiverySettings } from "./settings";

/** A request as the mapper builds it (the golden fixtures' `request`). */
export interface WireRequest {
	method: "GET" | "POST";
	/** path below the base URL, e.g. `/api/cmu/create.json` */
	path: string;
	query: Record<string, string>;
	/** headers besides `Authorization` (lower-case names) */
	headers: Record<string, string>;
	/** JSON body, or form fields (`content-type` says which); null for GET */
	body: unknown;
}

/** An answer below 500, body as text. */
export interface WireAnswer {
	status: number;
	content_type: string;
	text: string;
	bytes: Buffer;
}

/** Most bytes read from one answer (the shared courier cap). */
export const MAX_ANSWER_BYTES = MAX_COURIER_ANSWER_BYTES;

/** The wire body of `req`: form fields are URL-encoded (object values as JSON), anything else JSON. */
export function encodeBody(req: WireRequest): string | undefined {
	if (req.body === null || req.body === undefined) return undefined;
	if (req.headers["content-type"] === "application/x-www-form-urlencoded") {
		const fields = req.body as Record<string, unknown>;
		const form = new URLSearchParams();
		for (const [k, v] of Object.entries(fields)) form.set(k, typeof v === "string" ? v : JSON.stringify(v));
		return form.toString();
	}
	return JSON.stringify(req.body);
}

/**
 * Performs `req` against `settings.baseUrl` (or against `absoluteUrl`
 * without the token, for a file link Delhivery hands out). Throws
 * CourierUnavailable / CourierRefused as the module says.
 */
export async function send(
	settings: DelhiverySettings,
	req: WireRequest,
	absoluteUrl?: string,
): Promise<WireAnswer> {
	const url = new URL(absoluteUrl ?? `${settings.baseUrl}${req.path}`);
	for (const [k, v] of Object.entries(req.query)) url.searchParams.set(k, v);
	const headers: Record<string, string> = { ...req.headers };
	if (!absoluteUrl) headers.authorization = `Token ${settings.token}`;
	const what = `Delhivery ${req.method} ${req.path}`;
	const { status, content_type, bytes } = await courierFetch(
		url,
		{ method: req.method, headers, body: encodeBody(req) },
		what,
		{ timeoutMs: settings.timeoutMs, maxBytes: MAX_ANSWER_BYTES },
	);
	const text = bytes.toString("utf8");
	if (status === 401 || status === 403) {
		throw new CourierRefused(`Delhivery refused the API token (HTTP ${status}): ${wordsOf(text)}`, "auth");
	}
	return { status, content_type, text, bytes };
}

/** The courier's words of an error answer: `detail` / `error` / `message` of a JSON body, else a short note. */
function wordsOf(text: string): string {
	try {
		const o = JSON.parse(text) as Record<string, unknown>;
		for (const k of ["detail", "error", "message"]) if (typeof o[k] === "string") return o[k] as string;
	} catch {
		/* not JSON */
	}
	return "no readable reason";
}

/**
 * The JSON of an answer. Throws CourierUnavailable for an HTML page, an
 * empty body or malformed JSON (the outcome is unknown).
 */
export function jsonOf(ans: WireAnswer, what: string): unknown {
	const t = ans.text.trim();
	if (!t || t.startsWith("<")) throw new CourierUnavailable(`${what}: HTTP ${ans.status} answer is not JSON`);
	try {
		return JSON.parse(t);
	} catch {
		throw new CourierUnavailable(`${what}: HTTP ${ans.status} answer is malformed JSON`);
	}
}
