/**
 * HTTP proxy of the Xpressbees connector: JSON calls with the global `fetch`, a
 * per-call timeout, and the login token Xpressbees requires (`POST
 * /api/users/login` answers a token that expires; every other call sends
 * `Authorization: Bearer <token>`).
 *
 * Token life: one token per (base URL, username), shared by every adapter of
 * the process, renewed `renewBeforeSeconds` before its JWT `exp` (or
 * `tokenTtlSeconds` after login when it has none); concurrent callers share one
 * login. A 401 answer drops the token, logs in again and retries the call once.
 *
 * Errors: a timeout, a connection failure, a 5xx answer, an answer that is not
 * JSON (HTML error page, malformed), a failed login or a second 401 throw
 * {@link CourierUnavailable} (outcome unknown / retry later). Any other JSON
 * answer is returned for the mapper. No message ever carries the token or the
 * password (they are masked should the courier echo them).
 */
import { decodeJwt } from "jose";
import { courierFetch } from "../http";
import { CourierUnavailable } from "../types";
import type { XpressbeesSettings } from "./settings";

/** Path of the login call. */
export const LOGIN_PATH = "/api/users/login";

/** A JSON request below the base URL. */
export interface XbRequest {
	method: "GET" | "POST";
	/** e.g. `/api/shipments2` */
	path: string;
	/** JSON body (POST) */
	json?: unknown;
}

/** A non-5xx JSON answer. */
export interface XbResponse {
	status: number;
	body: unknown;
}

interface CachedToken {
	token: string;
	/** ms since epoch after which the token is not used any more */
	renewAt: number;
}

const tokens = new Map<string, CachedToken>();
const logins = new Map<string, Promise<CachedToken>>();

const keyOf = (s: XpressbeesSettings) => `${s.baseUrl}\n${s.username}`;

/** Forgets every cached token (tests; a credentials change). */
export function forgetXpressbeesTokens(): void {
	tokens.clear();
	logins.clear();
}

/** `text` with the password and every cached token of `s` masked. */
export function redact(text: string, s: XpressbeesSettings): string {
	let out = text;
	const secrets = [s.password, tokens.get(keyOf(s))?.token].filter((x): x is string => !!x && x.length >= 4);
	for (const secret of secrets) out = out.split(secret).join("***");
	return out;
}

function requireConfigured(s: XpressbeesSettings): void {
	if (!s.baseUrl || !s.username || !s.password) {
		throw new Error(
			`courier ${s.courierCode}: XPRESSBEES_BASE_URL, XPRESSBEES_USERNAME and XPRESSBEES_PASSWORD must be set`,
		);
	}
}

/** One HTTP exchange; transport failures, 5xx and non-JSON answers throw CourierUnavailable. */
async function exchange(s: XpressbeesSettings, req: XbRequest, token: string | null): Promise<XbResponse> {
	const headers: Record<string, string> = { Accept: "application/json" };
	if (req.json !== undefined) headers["Content-Type"] = "application/json";
	if (token) headers.Authorization = `Bearer ${token}`;
	const what = `xpressbees ${req.method} ${req.path}`;
	const res = await courierFetch(
		`${s.baseUrl}${req.path}`,
		{ method: req.method, headers, body: req.json === undefined ? undefined : JSON.stringify(req.json) },
		what,
		{ timeoutMs: s.timeoutMs, redact: (m) => redact(m, s) },
	);
	const text = res.bytes.toString("utf8");
	let body: unknown;
	try {
		body = JSON.parse(text);
	} catch {
		throw new CourierUnavailable(`${what}: HTTP ${res.status}, answer is not JSON`);
	}
	return { status: res.status, body };
}

/** Logs in (`POST /api/users/login` `{email, password}` → `{status: true, data: "<token>"}`). */
async function login(s: XpressbeesSettings): Promise<CachedToken> {
	const res = await exchange(
		s,
		{ method: "POST", path: LOGIN_PATH, json: { email: s.username, password: s.password } },
		null,
	);
	const body = res.body as { status?: unknown; data?: unknown; message?: unknown } | null;
	if (res.status !== 200 || body?.status !== true || typeof body.data !== "string" || !body.data) {
		const msg = typeof body?.message === "string" ? body.message : `HTTP ${res.status}`;
		throw new CourierUnavailable(redact(`xpressbees login refused: ${msg}`, s));
	}
	const token = body.data;
	let expMs = Date.now() + s.tokenTtlSeconds * 1000;
	try {
		const exp = decodeJwt(token).exp;
		if (typeof exp === "number") expMs = exp * 1000;
	} catch {
		/* not a JWT: assumed lifetime */
	}
	const cached = { token, renewAt: expMs - s.renewBeforeSeconds * 1000 };
	tokens.set(keyOf(s), cached);
	s.logger.info(
		`xpressbees ${s.courierCode}: logged in as ${s.username}, token renewed after ${new Date(cached.renewAt).toISOString()}`,
	);
	return cached;
}

/** The cached token of `s`, logging in (once for concurrent callers) when absent or due for renewal. */
async function tokenOf(s: XpressbeesSettings): Promise<string> {
	const key = keyOf(s);
	const t = tokens.get(key);
	if (t && Date.now() < t.renewAt) return t.token;
	let p = logins.get(key);
	if (!p) {
		p = login(s).finally(() => logins.delete(key));
		logins.set(key, p);
	}
	return (await p).token;
}

/**
 * The account's current login token (logging in when none is cached or it is
 * due for renewal). Throws like {@link callXpressbees}.
 */
export async function xpressbeesToken(s: XpressbeesSettings): Promise<string> {
	requireConfigured(s);
	return tokenOf(s);
}

/**
 * Performs one authenticated call; on 401 logs in again and retries once.
 * Throws CourierUnavailable (see the module comment); an Error when the
 * account is not configured.
 */
export async function callXpressbees(s: XpressbeesSettings, req: XbRequest): Promise<XbResponse> {
	requireConfigured(s);
	const first = await exchange(s, req, await tokenOf(s));
	if (first.status !== 401) return first;
	s.logger.warn(`xpressbees ${s.courierCode}: ${req.method} ${req.path} answered 401, logging in again`);
	tokens.delete(keyOf(s));
	const second = await exchange(s, req, await tokenOf(s));
	if (second.status === 401) {
		throw new CourierUnavailable(`xpressbees ${req.method} ${req.path}: 401 again after a fresh login`);
	}
	return second;
}
