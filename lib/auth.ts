/**
 * Identity, roles and capabilities (spec §5, ARCHITECTURE §3).
 *
 * The account (`app_metadata.sender_id`) and role come from the verified token
 * only. Verification: jose, RS256 only, `exp` and `sub` required, issuer and
 * audience when configured, keys from `AUTH_JWKS_URL`.
 */

import { createRemoteJWKSet, type JWTPayload, errors as joseErrors, jwtVerify } from "jose";
import type { Context, Middleware } from "moleculer";
import { ApiError } from "./errors";

export const CAPABILITIES = ["orders.write", "courier.rank", "warehouses.write", "ndr.act"] as const;
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
	merchant_ops: CAPABILITIES,
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
	return new ApiError(401, { error: "Authentication required" }, "Authentication required");
}

/** 401 `{error:"Invalid or expired token", code}` (spec §5.6). Codes: token_expired, token_invalid, token_claims, account_missing, role_unknown, jwks_unavailable. */
export function invalidToken(code: string): ApiError {
	return new ApiError(401, { error: "Invalid or expired token", code }, `Invalid or expired token (${code})`);
}

/** 403 `{error:"Read-only role"}` (spec §5 rule 1). */
export function readOnlyRole(): ApiError {
	return new ApiError(403, { error: "Read-only role", message: "Read-only roles cannot change orders" });
}

/** 403 `{error:"forbidden", cap, message}` (spec §5 rule 2). */
export function forbidden(
	cap: Capability | string,
	message = `This action needs the ${cap} capability`,
): ApiError {
	return new ApiError(403, { error: "forbidden", cap, message });
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

export interface VerifierOptions {
	jwksUrl: string;
	issuer?: string;
	audience?: string;
}

/**
 * Returns a function verifying a bearer token into an {@link AuthUser}.
 * Throws {@link ApiError} 401 with the §5.6 bodies.
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
			}));
		} catch (err) {
			if (err instanceof joseErrors.JWTExpired) throw invalidToken("token_expired");
			if (err instanceof joseErrors.JWTClaimValidationFailed) throw invalidToken("token_claims");
			if (isJwksFailure(err)) throw invalidToken("jwks_unavailable");
			throw invalidToken("token_invalid");
		}
		const meta = (payload.app_metadata ?? {}) as { sender_id?: unknown; role?: unknown };
		const sender = Number(meta.sender_id);
		if (!Number.isSafeInteger(sender) || sender <= 0) throw invalidToken("account_missing");
		const role = String(meta.role ?? "");
		if (!(ROLES as readonly string[]).includes(role)) throw invalidToken("role_unknown");
		return userFor(
			sender,
			role as Role,
			String(payload.sub),
			typeof payload.email === "string" ? payload.email : undefined,
		);
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
		/** Access rule (lib/auth.ts). */
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
