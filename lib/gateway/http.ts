/**
 * Small per-request helpers of the gateway: request ids, query strings and the
 * structured access-log line. Kept allocation-light (hot path).
 */
import { randomUUID } from "node:crypto";

/** A client-supplied request id is kept only when it is 1–64 chars of `[A-Za-z0-9._-]`. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The request id of a call: the incoming `x-request-id` header when it is a
 * sane token, else a fresh UUID v4. Used as the Moleculer `requestID` and
 * answered in the `x-request-id` response header.
 */
export function requestIdOf(header: string | string[] | undefined): string {
	return typeof header === "string" && SANE_REQUEST_ID.test(header) ? header : randomUUID();
}

/** Path part of a request URL (no query string). */
export function pathOf(url: string | undefined): string {
	if (!url) return "/";
	const q = url.indexOf("?");
	return q === -1 ? url : url.slice(0, q);
}

/**
 * Parses a query string into a flat object of STRING values (the gateway
 * passes query parameters to actions as strings). A repeated key keeps its
 * last value; bracket syntax (`a[b]=1`) is not expanded, so no nested objects
 * or arrays reach a service from the query string.
 */
export function parseQuery(qs: string): Record<string, string> {
	const out: Record<string, string> = {};
	if (qs.length === 0) return out;
	for (const [k, v] of new URLSearchParams(qs)) {
		if (k === "__proto__" || k === "constructor" || k === "prototype") continue;
		out[k] = v;
	}
	return out;
}

/** Fields of one access-log line. */
export interface AccessLogFields {
	nodeID: string;
	/** Moleculer namespace */
	ns: string;
	method: string | undefined;
	path: string;
	status: number;
	/** wall time in ms, 0.1 ms resolution */
	ms: number;
	request_id: string | undefined;
	sender_id: number | undefined;
	/** set on a line written by the sample: it stands for this many fast successful reads (absent otherwise) */
	sampled?: number;
}

/**
 * One structured JSON access-log line (same top-level keys as Moleculer's
 * `json` log formatter: ts, level, msg, nodeID, ns, mod). Never contains tokens,
 * query strings or bodies.
 */
export function accessLogLine(f: AccessLogFields): string {
	return (
		JSON.stringify({
			ts: Date.now(),
			level: "info",
			msg: "request",
			nodeID: f.nodeID,
			ns: f.ns,
			mod: "gateway",
			method: f.method,
			path: f.path,
			status: f.status,
			ms: f.ms,
			request_id: f.request_id,
			sender_id: f.sender_id ?? null,
			sampled: f.sampled,
		}) + "\n"
	);
}

/** `/v1/documents/label/t` and everything under it (matched case-sensitively, as the gateway matches aliases). */
const LABEL_LINK_PATH = /^\/v1\/documents\/label\/t(?:\/|$)/;

/** True when `path` (no query string) is a signed label link path (spec §4.4; plain-text 404s, §7). */
export function isLabelLinkPath(path: string): boolean {
	return LABEL_LINK_PATH.test(path);
}

/**
 * Which requests get an access-log line (`GATEWAY_ACCESS_LOG`, `GATEWAY_ACCESS_LOG_SAMPLE`,
 * `GATEWAY_ACCESS_LOG_SLOW_MS`; issue 32, docs/decisions/0127-sampled-access-log.md).
 */
export interface AccessLogPolicy {
	/** 1 in this many fast successful reads is written (1: every request) */
	sampleEvery: number;
	/** a request that took this long (ms, wall time) or longer is always written */
	slowMs: number;
}

/** The policy of `GATEWAY_ACCESS_LOG=1`: a line for every request. */
export const EVERY_REQUEST: AccessLogPolicy = { sampleEvery: 1, slowMs: 0 };

/**
 * The access-log policy of the settings (record 0127): `GATEWAY_ACCESS_LOG` `0` → none (undefined), `1` →
 * {@link EVERY_REQUEST}, `sampled` → 1 in `sampleEvery` (`GATEWAY_ACCESS_LOG_SAMPLE`) of the fast successful reads,
 * every request of `slowMs` (`GATEWAY_ACCESS_LOG_SLOW_MS`) or longer. The gateway also needs its log level at info
 * or finer to write any line.
 */
export function accessLogPolicy(
	mode: "sampled" | "1" | "0",
	sampleEvery: number,
	slowMs: number,
): AccessLogPolicy | undefined {
	if (mode === "0") return undefined;
	return mode === "1" ? EVERY_REQUEST : { sampleEvery, slowMs };
}

/** Paths whose every request is logged whatever the policy: the ops routes act across accounts (record 0103). */
const ALWAYS_LOGGED_PATH = /^\/v1\/ops\//;

/** What {@link accessLogWeight} weighs of a finished (or cut-off) request. */
export interface AccessLogRequest {
	method: string | undefined;
	/** path without the query string */
	path: string;
	status: number;
	/** wall time, ms */
	ms: number;
	/** false when the answer was not completely written (the client went away first) */
	finished: boolean;
}

/**
 * Whether the request gets its access-log line, and how: `0` no line; `1` a line that is always written (every
 * request that is not a GET or HEAD, every answer with a status of 400 or more, every request of `policy.slowMs` or
 * longer, every request whose answer was not completely written, every request under `/v1/ops/` (ops act across
 * accounts, record 0103), and every request when `policy.sampleEvery` is 1); `policy.sampleEvery` (> 1) a line
 * written by the sample: every other request (a fast successful GET or HEAD) is written with probability
 * 1 / `sampleEvery`, chosen by `random()` (uniform in [0, 1)) so that no periodic pattern of clients (e.g. accounts
 * taking turns) is always or never sampled. Record 0127.
 */
export function accessLogWeight(
	policy: AccessLogPolicy,
	r: AccessLogRequest,
	random: () => number = Math.random,
): number {
	const every = policy.sampleEvery;
	if (
		every <= 1 ||
		r.status >= 400 ||
		r.ms >= policy.slowMs ||
		!r.finished ||
		(r.method !== "GET" && r.method !== "HEAD") ||
		ALWAYS_LOGGED_PATH.test(r.path)
	)
		return 1;
	return random() * every < 1 ? every : 0;
}
