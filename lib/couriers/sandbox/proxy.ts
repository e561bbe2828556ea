/**
 * HTTP proxy of the sandbox courier connector: real HTTP calls with the global
 * `fetch` and a per-call timeout (`AbortSignal.timeout`). Transport-level
 * outcomes are classified here; the mapper interprets the answers.
 *
 * Errors: a timeout, a connection failure or a 5xx answer throws
 * {@link CourierUnavailable} (outcome unknown: the caller must look the
 * reference up before retrying). Anything else is returned for the mapper.
 */
import { CourierUnavailable } from "../types";
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
export const MAX_ANSWER_BYTES = 5 * 1024 * 1024;

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
	let res: Response;
	let bytes: Buffer;
	try {
		// The signal covers the headers and the body read.
		res = await fetch(url, {
			method: req.method,
			headers,
			body,
			signal: AbortSignal.timeout(settings.timeoutMs),
		});
		const declared = Number(res.headers.get("content-length"));
		if (declared > MAX_ANSWER_BYTES) {
			await res.body?.cancel();
			throw new CourierUnavailable(`${what}: answer of ${declared} bytes is too large`);
		}
		bytes = Buffer.from(await res.arrayBuffer());
	} catch (err) {
		if (err instanceof CourierUnavailable) throw err;
		const e = err as Error & { cause?: { code?: string } };
		if (e.name === "TimeoutError" || e.name === "AbortError") {
			throw new CourierUnavailable(`${what}: no answer within ${settings.timeoutMs} ms`);
		}
		throw new CourierUnavailable(`${what}: ${e.cause?.code ?? e.message}`);
	}
	if (res.status >= 500) throw new CourierUnavailable(`${what}: HTTP ${res.status}`);
	if (bytes.length > MAX_ANSWER_BYTES)
		throw new CourierUnavailable(`${what}: answer of ${bytes.length} bytes is too large`);
	const content_type = (res.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
	return { status: res.status, content_type, bytes };
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
