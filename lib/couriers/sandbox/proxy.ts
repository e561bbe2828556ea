/**
 * HTTP proxy of the sandbox courier connector: real HTTP calls with the global
 * `fetch` and a per-call timeout (`AbortSignal.timeout`). Transport-level
 * outcomes are classified here; the mapper interprets the answers.
 *
 * Errors: a timeout, a connection failure or a 5xx answer throws
 * {@link CourierUnavailable} (outcome unknown: the caller must look the
 * reference up before retrying). Anything else is returned for the mapper.
 */

import { courierFetch, MAX_COURIER_ANSWER_BYTES } from "../http";
import type { SandboxSettings } from "./settings";

/** A non-5xx answer of the courier. `body` is parsed JSON when it parses, else the raw text. */
export interface ProxyResponse {
	status: number;
	body: unknown;
}

export interface ProxyRequest {
	method: "GET" | "POST";
	/** Path below `/couriers/<code>`, e.g. `/api/cmu/create.json`. */
	path: string;
	query?: Record<string, string>;
	/** URL-encoded form body (`application/x-www-form-urlencoded`). */
	form?: Record<string, string>;
	/** JSON body. */
	json?: unknown;
}

/** A non-5xx answer of the courier as bytes (label files). */
export interface ProxyFileResponse {
	status: number;
	/** media type of the answer, parameters dropped, lower case; "" when absent */
	content_type: string;
	bytes: Buffer;
}

/** Most bytes read from one answer (a label file is a few kB; anything bigger is not a label). */
export const MAX_ANSWER_BYTES = MAX_COURIER_ANSWER_BYTES;

/**
 * Performs one call against the simulator as courier `settings.courierCode`
 * and answers the raw bytes (5xx, timeouts and connection failures throw
 * CourierUnavailable; an answer over {@link MAX_ANSWER_BYTES} too).
 */
export async function callCourierFile(
	settings: SandboxSettings,
	req: ProxyRequest,
	accept = "application/json",
): Promise<ProxyFileResponse> {
	const url = new URL(`${settings.baseUrl}/couriers/${encodeURIComponent(settings.courierCode)}${req.path}`);
	for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, v);
	const headers: Record<string, string> = {
		Authorization: `Token ${settings.token}`,
		Accept: accept,
	};
	let body: string | undefined;
	if (req.form) {
		headers["Content-Type"] = "application/x-www-form-urlencoded";
		body = new URLSearchParams(req.form).toString();
	} else if (req.json !== undefined) {
		headers["Content-Type"] = "application/json";
		body = JSON.stringify(req.json);
	}
	const what = `${settings.courierCode} ${req.method} ${req.path}`;
	return courierFetch(url, { method: req.method, headers, body }, what, {
		timeoutMs: settings.timeoutMs,
		maxBytes: MAX_ANSWER_BYTES,
	});
}

/** Performs one call against the simulator as courier `settings.courierCode`. */
export async function callCourier(settings: SandboxSettings, req: ProxyRequest): Promise<ProxyResponse> {
	const res = await callCourierFile(settings, req);
	const text = res.bytes.toString("utf8");
	let parsed: unknown = text;
	try {
		parsed = text ? JSON.parse(text) : null;
	} catch {
		/* keep the text */
	}
	return { status: res.status, body: parsed };
}
