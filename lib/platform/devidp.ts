/**
 * Development identity provider (docs/ARCHITECTURE.md §3): an RS256 key pair,
 * its JWKS, and password login for users listed in a local file, issuing
 * tokens shaped like production's (`app_metadata.sender_id`,
 * `app_metadata.role`).
 *
 * Used only by the zero-setup start and by tests (which need a real JWKS to
 * verify against). Never used when `AUTH_JWKS_URL` points elsewhere.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { dirname } from "node:path";
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from "jose";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import type { TokenResponse } from "../contracts/platform";
import type { Role } from "./auth";
import { type ApiError, fail } from "./errors";

/** `iss` of the development identity provider's tokens (the zero-setup start's `AUTH_ISSUER`). */
export const DEV_IDP_ISSUER = "msa-dev-idp";

/** `aud` of the development identity provider's tokens (the zero-setup start's `AUTH_AUDIENCE`). */
export const DEV_IDP_AUDIENCE = "merchant-shipping-api";

/** One login of the development users file (`config/dev-users.json`). */
export interface DevUser {
	email: string;
	password: string;
	sender_id: number;
	role: Role;
}

/** A development identity provider made by {@link createDevIdp}. */
export interface DevIdp {
	/** Public JWKS `{keys:[…]}`. */
	jwks: { keys: JWK[] };
	/** Issuer claim put in tokens (`iss`). */
	issuer: string;
	/** Audience claim put in tokens (`aud`). */
	audience: string;
	/**
	 * Signs a token with arbitrary claims (tests use it for bad tokens too).
	 * `iss` and `aud` are the provider's unless `claims` names them.
	 * `expiresIn` follows jose's `setExpirationTime`: a string is relative
	 * (`"1h"`, the default), a number is the absolute `exp` in epoch seconds;
	 * `noExp`, `noIss` and `noAud` omit `exp`, `iss` and `aud`.
	 */
	sign(
		claims: Record<string, unknown>,
		opts?: { expiresIn?: string | number; noExp?: boolean; noIss?: boolean; noAud?: boolean },
	): Promise<string>;
	/** Token for an account and role. */
	tokenFor(sender_id: number, role?: Role, sub?: string): Promise<string>;
	/**
	 * Password login; undefined when the credentials do not match a listed user.
	 * `email` matches case-insensitively; the password is compared in constant
	 * time (SHA-256 digests, also for an unknown user).
	 */
	login(email: string, password: string): Promise<TokenResponse | undefined>;
}

/** SHA-256 of a UTF-8 string (fixed length, for constant-time comparison). */
function digest(s: string): Buffer {
	return createHash("sha256").update(s, "utf8").digest();
}

/**
 * Creates the provider. With `keyFile`, the private key is kept there (created
 * on first start) so tokens survive restarts of the zero-setup system.
 * `issuer` / `audience` default to {@link DEV_IDP_ISSUER} / {@link DEV_IDP_AUDIENCE}.
 */
export async function createDevIdp(
	opts: { keyFile?: string; usersFile?: string; issuer?: string; audience?: string } = {},
): Promise<DevIdp> {
	let privateJwk: JWK;
	if (opts.keyFile && existsSync(opts.keyFile)) {
		privateJwk = JSON.parse(readFileSync(opts.keyFile, "utf8")) as JWK;
	} else {
		const { privateKey } = await generateKeyPair("RS256", { extractable: true, modulusLength: 2048 });
		privateJwk = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: "RS256", use: "sig" };
		if (opts.keyFile) {
			mkdirSync(dirname(opts.keyFile), { recursive: true });
			writeFileSync(opts.keyFile, JSON.stringify(privateJwk), { mode: 0o600 });
		}
	}
	const key = await importJWK(privateJwk, "RS256");
	const { d, p, q, dp, dq, qi, ...publicJwk } = privateJwk;
	const issuer = opts.issuer ?? DEV_IDP_ISSUER;
	const audience = opts.audience ?? DEV_IDP_AUDIENCE;
	const users: DevUser[] = opts.usersFile
		? (JSON.parse(readFileSync(opts.usersFile, "utf8")).users as DevUser[])
		: [];

	const sign: DevIdp["sign"] = async (claims, o = {}) => {
		let jwt = new SignJWT(claims)
			.setProtectedHeader({ alg: "RS256", kid: privateJwk.kid, typ: "JWT" })
			.setIssuedAt();
		if (!o.noExp) jwt = jwt.setExpirationTime(o.expiresIn ?? "1h");
		if (claims.iss === undefined && !o.noIss) jwt = jwt.setIssuer(issuer);
		if (claims.aud === undefined && !o.noAud) jwt = jwt.setAudience(audience);
		return jwt.sign(key);
	};
	const tokenFor: DevIdp["tokenFor"] = (sender_id, role = "merchant", sub = `user-${sender_id}-${role}`) =>
		sign({ sub, app_metadata: { sender_id, role } });

	return {
		jwks: { keys: [publicJwk] },
		issuer,
		audience,
		sign,
		tokenFor,
		async login(email, password) {
			if (typeof email !== "string" || typeof password !== "string") return undefined;
			const u = users.find((x) => x.email.toLowerCase() === email.toLowerCase());
			// always one comparison of equal-length digests: no timing difference by user or length
			const same = timingSafeEqual(digest(password), digest(u?.password ?? randomBytes(16).toString("hex")));
			if (!u || !same) return undefined;
			const access_token = await sign({
				sub: `dev-${u.email}`,
				email: u.email,
				app_metadata: { sender_id: u.sender_id, role: u.role },
			});
			return {
				access_token,
				refresh_token: randomBytes(24).toString("base64url"),
				expires_in: 3600,
				token_type: "bearer",
			};
		},
	};
}

/** Serves `jwks` at `/.well-known/jwks.json` on 127.0.0.1:`port` (0 = any). Used by tests. */
export async function serveJwks(idp: DevIdp, port = 0): Promise<{ url: string; server: Server }> {
	const server = createServer((_req, res) => {
		res.setHeader("content-type", "application/json");
		res.end(JSON.stringify(idp.jwks));
	});
	await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
	const addr = server.address() as { port: number };
	return { url: `http://127.0.0.1:${addr.port}/.well-known/jwks.json`, server };
}

/** Limits of {@link LoginThrottle}: attempts per window, per client address and per username. */
export interface LoginLimits {
	/** login attempts per client address per window */
	perAddress: number;
	/** login attempts per username (e-mail, case-insensitive) per window */
	perUser: number;
	/** window, seconds (fixed, from a key's first attempt) */
	windowS: number;
}

/** Default limits of the development identity provider's login (docs/decisions/0045-tokens-dev-idp.md, issue 12). */
export const DEV_LOGIN_LIMITS: LoginLimits = { perAddress: 30, perUser: 10, windowS: 60 };

/**
 * 429 `{error:"rate_limited", message}` of the login route; `data.retry_after`
 * (whole seconds, ≥ 1) becomes the `Retry-After` header at the gateway.
 */
export function loginThrottled(retryAfter: number): ApiError {
	const err = fail("rate_limited", "login", retryAfter);
	err.data = { ...err.data, retry_after: retryAfter };
	return err;
}

/**
 * Throttles password logins of the development identity provider, in process
 * (it runs only in the zero-setup start, one process): every attempt that
 * reaches the credential check counts against its client address and its
 * username, successful or not, with `rate-limiter-flexible` fixed windows.
 */
export class LoginThrottle {
	private readonly byAddress: RateLimiterMemory;
	private readonly byUser: RateLimiterMemory;

	/** @param limits attempts per address / per username per window (default {@link DEV_LOGIN_LIMITS}) */
	constructor(limits: LoginLimits = DEV_LOGIN_LIMITS) {
		this.byAddress = new RateLimiterMemory({
			keyPrefix: "login-addr",
			points: limits.perAddress,
			duration: limits.windowS,
		});
		this.byUser = new RateLimiterMemory({
			keyPrefix: "login-user",
			points: limits.perUser,
			duration: limits.windowS,
		});
	}

	/**
	 * Counts one attempt of `username` (trimmed, lower-cased; at most 320
	 * characters kept) from `address`.
	 * @throws ApiError 429 `rate_limited` with `data.retry_after` (seconds) over either limit
	 */
	async attempt(address: string, username: string): Promise<void> {
		const user = username.trim().toLowerCase().slice(0, 320);
		try {
			await this.byAddress.consume(address);
			await this.byUser.consume(user);
		} catch (res) {
			if (res instanceof RateLimiterRes)
				throw loginThrottled(Math.max(1, Math.ceil(res.msBeforeNext / 1000)));
			throw res;
		}
	}
}
