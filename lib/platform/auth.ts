/**
 * Identity, roles and capabilities (spec §5, docs/ARCHITECTURE.md §3).
 *
 * The account (`app_metadata.sender_id`) and role come from the verified token
 * only. Verification: jose, RS256 only, `exp`, `sub`, `iss` and `aud` required
 * (`AUTH_ISSUER` / `AUTH_AUDIENCE`: lib/platform/config.ts refuses to start a gateway
 * without them), 30 s clock tolerance, keys from `AUTH_JWKS_URL`. Claims are
 * read strictly, never coerced (see {@link claimsUser}).
 */

import { createRemoteJWKSet, type JWTPayload, errors as joseErrors, jwtVerify } from "jose";
import type { Context, Middleware } from "moleculer";
import { type ApiError, fail, failWith, type TokenFailure } from "./errors";

/**
 * Capabilities (spec §5; `billing.write`, ours: accept or dispute a weight
 * discrepancy, docs/decisions/0105-weight-discrepancies.md; `settings.write`, ours: the
 * brand of the buyer's tracking page, docs/decisions/0108-buyer-tracking-page.md, held by
 * merchant and merchant_admin only).
 */
export const CAPABILITIES = [
	"orders.write",
	"courier.rank",
	"warehouses.write",
	"ndr.act",
	"billing.write",
	"settings.write",
] as const;
export type Capability = (typeof CAPABILITIES)[number];

export const ROLES = [
	"merchant",
	"merchant_admin",
	"merchant_ops",
	"merchant_finance",
	"merchant_support",
	"merchant_staff",
] as const;
export type Role = (typeof ROLES)[number];

/** Capabilities per role (spec §5 table; §4.6: `merchant_support` holds `ndr.act`). */
export const ROLE_CAPS: Record<Role, readonly Capability[]> = {
	merchant: CAPABILITIES,
	merchant_admin: CAPABILITIES,
	merchant_ops: CAPABILITIES.filter((c) => c !== "settings.write"),
	merchant_finance: [],
	merchant_support: ["ndr.act"],
	merchant_staff: [],
};

/** Roles that may only read (spec §5). */
export const READ_ONLY_ROLES: readonly Role[] = ["merchant_finance", "merchant_support", "merchant_staff"];

/** The caller, as put in `ctx.meta.user` by the gateway (or by an internal caller). */
export interface AuthUser {
	/** Account id: positive integer from `app_metadata.sender_id`. */
	sender_id: number;
	role: Role;
	sub: string;
	email?: string;
	caps: Capability[];
	read_only: boolean;
}

/** Builds an {@link AuthUser} for a sender and role (also used by internal callers and tests). */
export function userFor(
	sender_id: number,
	role: Role = "merchant",
	sub = `sender-${sender_id}`,
	email?: string,
): AuthUser {
	return {
		sender_id,
		role,
		sub,
		email,
		caps: [...ROLE_CAPS[role]],
		read_only: READ_ONLY_ROLES.includes(role),
	};
}

/** 401 `{error:"Authentication required"}` (spec §5.6). */
export function authRequired(): ApiError {
	return fail("Authentication required");
}

/** 401 `{error:"Invalid or expired token", code}` (spec §5.6). Codes: token_expired, token_invalid, token_claims, account_missing, role_unknown, jwks_unavailable. */
export function invalidToken(code: TokenFailure): ApiError {
	return failWith("Invalid or expired token", { code }, code);
}

/** 403 `{error:"Read-only role"}` (spec §5 rule 1). */
export function readOnlyRole(): ApiError {
	return fail("Read-only role");
}

/** 403 `{error:"forbidden", cap, message}` (spec §5 rule 2). */
export function forbidden(cap: Capability | string): ApiError {
	return failWith("forbidden", { cap }, cap);
}

/**
 * True when verification failed because the key set could not be obtained
 * (the identity provider's fault, not the token's): jose's fetch timeout, a
 * network failure (`TypeError` from fetch), a non-200 or non-JSON JWKS answer
 * (the generic `JOSEError`, thrown only by the JWKS fetch) or a malformed key set.
 */
function isJwksFailure(err: unknown): boolean {
	return (
		err instanceof joseErrors.JWKSTimeout ||
		err instanceof joseErrors.JWKSInvalid ||
		(err as { code?: unknown })?.code === joseErrors.JOSEError.code ||
		(err as Error)?.name === "TypeError"
	);
}

/** Options of {@link createVerifier}. */
export interface VerifierOptions {
	/** JWKS URL of the identity provider (`AUTH_JWKS_URL`). */
	jwksUrl: string;
	/**
	 * Required `iss` (`AUTH_ISSUER`). Optional here only for unit tests of the
	 * verifier itself: every gateway gets one (lib/platform/config.ts `loadConfig`
	 * refuses a configuration with `AUTH_JWKS_URL` but no issuer or audience).
	 */
	issuer?: string;
	/** Required `aud` (`AUTH_AUDIENCE`; a token's `aud` array must contain it). Same note as `issuer`. */
	audience?: string;
}

/** Leeway (seconds) of jose's `exp` / `nbf` / `iat` checks, for clock skew with the identity provider. */
export const CLOCK_TOLERANCE_S = 30;

/** A canonical decimal account id: no sign, no leading zero, no exponent, hex, blanks or fraction. */
const SENDER_ID_RE = /^[1-9]\d*$/;

/**
 * Reads `app_metadata.sender_id` strictly: a positive safe-integer JSON number,
 * or a string of decimal digits without leading zero naming one (`"1001"`).
 * Nothing is coerced: `"0x3e9"`, `"1e3"`, `" 1001"`, `true`, `[1001]`,
 * `{}`, `0`, `-5`, `1.5` and integers above 2^53−1 are refused.
 * @returns the account id; `undefined` when the claim is absent (or null)
 * @throws ApiError 401 `token_claims` when the claim is present but malformed
 */
export function senderClaim(v: unknown): number | undefined {
	if (v === undefined || v === null) return undefined;
	if (typeof v === "number" && Number.isSafeInteger(v) && v > 0) return v;
	if (typeof v === "string" && SENDER_ID_RE.test(v)) {
		const n = Number(v);
		if (Number.isSafeInteger(n)) return n;
	}
	throw invalidToken("token_claims");
}

/**
 * Reads `app_metadata.role` strictly: a string naming one of {@link ROLES}.
 * @returns the role; `undefined` when absent (or null) or an unknown string
 * @throws ApiError 401 `token_claims` when present but not a string
 */
export function roleClaim(v: unknown): Role | undefined {
	if (v === undefined || v === null) return undefined;
	if (typeof v !== "string") throw invalidToken("token_claims");
	return (ROLES as readonly string[]).includes(v) ? (v as Role) : undefined;
}

/**
 * The {@link AuthUser} of a verified token's payload (spec §5 rule 3:
 * account and role from `app_metadata` only).
 *
 * | Claim                                   | Refused with (401 §5.6 `code`) |
 * |-----------------------------------------|--------------------------------|
 * | `app_metadata` present, not an object    | `token_claims`                 |
 * | `sender_id` absent / null                | `account_missing`              |
 * | `sender_id` malformed ({@link senderClaim}) | `token_claims`              |
 * | `role` not a string                      | `token_claims`                 |
 * | `role` absent or not a known role        | `role_unknown`                 |
 * | `sub` not a non-empty string             | `token_claims`                 |
 *
 * `email` is kept only when it is a string.
 * @throws ApiError 401 `{error:"Invalid or expired token", code}`
 */
export function claimsUser(payload: JWTPayload): AuthUser {
	const raw: unknown = payload.app_metadata;
	if (raw !== undefined && (raw === null || typeof raw !== "object" || Array.isArray(raw)))
		throw invalidToken("token_claims");
	// own properties only: a claim never comes from Object.prototype
	const own = (k: string): unknown =>
		raw !== undefined && Object.hasOwn(raw, k) ? (raw as Record<string, unknown>)[k] : undefined;
	const sender = senderClaim(own("sender_id"));
	if (sender === undefined) throw invalidToken("account_missing");
	const role = roleClaim(own("role"));
	if (role === undefined) throw invalidToken("role_unknown");
	if (typeof payload.sub !== "string" || payload.sub === "") throw invalidToken("token_claims");
	return userFor(sender, role, payload.sub, typeof payload.email === "string" ? payload.email : undefined);
}

/**
 * Returns a function verifying a bearer token into an {@link AuthUser}:
 * jose `jwtVerify` with RS256 only, `exp` and `sub` required, `iss` and `aud`
 * required and checked when configured, {@link CLOCK_TOLERANCE_S} leeway;
 * then {@link claimsUser}.
 * Throws {@link ApiError} 401 with the §5.6 bodies: `token_expired`,
 * `token_claims` (missing / wrong `iss`, `aud`, `exp`, `sub`; malformed
 * `app_metadata`), `account_missing`, `role_unknown`, `jwks_unavailable`,
 * `token_invalid` (anything else: signature, algorithm, format).
 */
export function createVerifier(opts: VerifierOptions): (token: string) => Promise<AuthUser> {
	const jwks = createRemoteJWKSet(new URL(opts.jwksUrl), { timeoutDuration: 5000, cooldownDuration: 30_000 });
	return async (token: string) => {
		let payload: JWTPayload;
		try {
			({ payload } = await jwtVerify(token, jwks, {
				algorithms: ["RS256"],
				issuer: opts.issuer,
				audience: opts.audience,
				requiredClaims: ["exp", "sub"],
				clockTolerance: CLOCK_TOLERANCE_S,
			}));
		} catch (err) {
			if (err instanceof joseErrors.JWTExpired) throw invalidToken("token_expired");
			if (err instanceof joseErrors.JWTClaimValidationFailed) throw invalidToken("token_claims");
			if (isJwksFailure(err)) throw invalidToken("jwks_unavailable");
			throw invalidToken("token_invalid");
		}
		return claimsUser(payload);
	};
}

/**
 * Per-action access rules, declared on the action schema and enforced both at
 * the gateway (before the handler) and in the service by {@link PermissionsMiddleware}.
 */
export interface ActionAccess {
	/** Needs an authenticated merchant in `ctx.meta.user`. */
	auth?: boolean;
	/** Read-only roles get 403 `Read-only role` (order ingestion and other writes). */
	writes?: boolean;
	/** Capability required (403 forbidden with `cap`). */
	capability?: Capability;
}

declare module "moleculer" {
	interface ActionSchema {
		/** Access rule (lib/platform/auth.ts). */
		access?: ActionAccess;
		/** Per-action call timeout (ms). */
		timeout?: number;
	}
}

/** True when `user` names an account (a positive safe-integer `sender_id`). */
function hasAccount(user: AuthUser | undefined): user is AuthUser {
	return !!user && Number.isSafeInteger(user.sender_id) && user.sender_id > 0;
}

/** Checks `user` against `access`; throws the §5 errors. */
export function checkAccess(user: AuthUser | undefined, access: ActionAccess | undefined): void {
	if (!access) return;
	if ((access.auth || access.writes || access.capability) && !hasAccount(user)) throw authRequired();
	if (!user) return;
	if (access.writes && READ_ONLY_ROLES.includes(user.role)) throw readOnlyRole();
	if (access.capability && !(ROLE_CAPS[user.role] ?? []).includes(access.capability))
		throw forbidden(access.capability);
}

/**
 * Moleculer middleware enforcing `action.access` inside every service, so an
 * internal caller over NATS is held to the same rules as the gateway.
 */
export const PermissionsMiddleware = {
	name: "Permissions",
	localAction(next: (ctx: Context) => unknown, action: { access?: ActionAccess }) {
		const access = action.access;
		if (!access) return next;
		return function checkPermissions(ctx: Context) {
			checkAccess(userOf(ctx), access);
			return next(ctx);
		};
	},
} satisfies Middleware;

/** The {@link AuthUser} a context's meta carries, if any. */
function userOf(ctx: { meta?: object | null }): AuthUser | undefined {
	return (ctx.meta as { user?: AuthUser } | null | undefined)?.user;
}

/** The caller's account id; throws 401 when the context carries none. */
export function senderOf(ctx: { meta?: object | null }): number {
	const u = userOf(ctx);
	if (!hasAccount(u)) throw authRequired();
	return u.sender_id;
}
