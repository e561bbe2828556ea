/**
 * Bearer-token handling for the gateway (spec §5): header parsing and a small
 * cache of verified tokens in front of `createVerifier` (lib/platform/auth.ts).
 *
 * The cache keeps a verified token's {@link AuthUser} (frozen, so no caller can
 * alter a shared entry) until the earlier of the token's `exp` and `maxAgeMs`
 * (60 s by default), so a client reusing one token costs one RS256
 * verification per minute instead of one per request. Failures are never
 * cached. Trade-off, documented: a key withdrawn from the JWKS stops
 * accepting already-cached tokens only after at most `maxAgeMs`.
 */
import { type AuthUser, authRequired } from "../platform/auth";

/** RFC 6750 `Bearer <b64token>` (scheme case-insensitive). */
const BEARER_RE = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * Extracts the token from an `Authorization` header value.
 * Throws 401 `{error:"Authentication required"}` when the header is absent or
 * not a well-formed bearer credential (§5.6).
 */
export function bearerToken(header: string | string[] | undefined): string {
	if (typeof header !== "string" || header.length === 0) throw authRequired();
	const m = BEARER_RE.exec(header);
	if (!m) throw authRequired();
	return m[1];
}

/** Options of {@link cachedVerifier}. */
export interface TokenCacheOptions {
	/** Most entries kept (oldest evicted first). Default 10,000. */
	maxEntries?: number;
	/** Longest time (ms) a verified token is trusted without re-verification. Default 60,000. */
	maxAgeMs?: number;
	/** Clock (ms since epoch), for tests. */
	now?: () => number;
}

interface Entry {
	user: AuthUser;
	/** ms since epoch after which the entry is stale */
	until: number;
}

/** Reads `exp` (seconds) from a verified JWT's payload; undefined when absent or unreadable. */
function expOf(token: string): number | undefined {
	const a = token.indexOf(".");
	const b = token.indexOf(".", a + 1);
	if (a < 0 || b < 0) return undefined;
	try {
		const payload = JSON.parse(Buffer.from(token.slice(a + 1, b), "base64url").toString("utf8"));
		return typeof payload?.exp === "number" ? payload.exp : undefined;
	} catch {
		return undefined;
	}
}

/** A verifier with a cache of successful verifications ({@link cachedVerifier}). */
export interface CachedVerifier {
	/** The user of bearer token `token` (§5.6 401 errors from the verifier). */
	(token: string): Promise<AuthUser>;
	/**
	 * The user of an `Authorization` header value: a header seen before answers its cached user without parsing
	 * it again; otherwise {@link bearerToken} (401 `Authentication required` when absent or malformed) and the
	 * verifier.
	 */
	forHeader(header: string | string[] | undefined): Promise<AuthUser>;
}

/** Characters of a credential's end that key the cache (the signature's last bytes: distinct per token). */
const TAIL = 32;

/**
 * Wraps a verifier (token → AuthUser, throwing the §5.6 401 errors) with a
 * bounded cache of successful verifications. The returned users are frozen.
 *
 * Entries are keyed by the last {@link TAIL} characters of the credential (the token, or the whole header for
 * `forHeader`) and hold the credential itself: a hit needs the exact same string (one comparison), so a forged
 * token sharing a tail is verified afresh, and a long credential is not hashed whole on every request (issue 32).
 * Two credentials with the same tail take turns in one entry.
 */
export function cachedVerifier(
	verify: (token: string) => Promise<AuthUser>,
	opts: TokenCacheOptions = {},
): CachedVerifier {
	const maxEntries = opts.maxEntries ?? 10_000;
	const maxAgeMs = opts.maxAgeMs ?? 60_000;
	const now = opts.now ?? Date.now;
	const cache = new Map<string, Entry & { credential: string }>();
	const tailOf = (credential: string) => (credential.length > TAIL ? credential.slice(-TAIL) : credential);
	const cached = (credential: string, t: number): AuthUser | undefined => {
		const key = tailOf(credential);
		const hit = cache.get(key);
		if (hit === undefined || hit.credential !== credential) return undefined;
		if (hit.until > t) return hit.user;
		cache.delete(key);
		return undefined;
	};
	const verifyAndKeep = async (credential: string, token: string, t: number): Promise<AuthUser> => {
		const user = await verify(token);
		Object.freeze(user.caps);
		Object.freeze(user);
		const exp = expOf(token);
		const until = Math.min(exp === undefined ? t : exp * 1000, t + maxAgeMs);
		if (until > t) {
			const key = tailOf(credential);
			if (!cache.has(key) && cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
			cache.set(key, { user, until, credential });
		}
		return user;
	};
	const byToken = async (token: string): Promise<AuthUser> => {
		const t = now();
		return cached(token, t) ?? verifyAndKeep(token, token, t);
	};
	const forHeader = async (header: string | string[] | undefined): Promise<AuthUser> => {
		const t = now();
		if (typeof header === "string") {
			const user = cached(header, t);
			if (user) return user;
		}
		// 401 unless the header is one well-formed bearer credential, so from here on it is a string
		const token = bearerToken(header);
		return verifyAndKeep(header as string, token, t);
	};
	return Object.assign(byToken, { forHeader });
}
