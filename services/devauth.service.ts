/**
 * `devauth`: the development identity provider (docs/ARCHITECTURE.md §3, spec
 * §5.5), run only by the zero-setup start (no DATABASE_URL, no AUTH_JWKS_URL;
 * then `MSA_DEV_IDP=1` and the gateway mounts its two routes):
 *
 * | Route (gateway, no bearer)                  | Action        |
 * |---------------------------------------------|---------------|
 * | POST /auth/v1/token?grant_type=password     | devauth.token |
 * | GET  /auth/v1/.well-known/jwks.json         | devauth.jwks  |
 *
 * Keys: an RS256 key pair kept in `<dataDir>/dev-idp-key.json` (created on
 * first start, mode 0600) so tokens survive restarts. Users:
 * `config/dev-users.json` (override with `MSA_DEV_USERS_FILE`). Tokens carry
 * `sub`, `email`, `iss` (`AUTH_ISSUER`, "msa-dev-idp" by default), `aud`
 * (`AUTH_AUDIENCE`, "merchant-shipping-api" by default: the zero-setup start
 * sets both, lib/platform/system.ts `zeroSetupAuth`), `exp` (1 h) and
 * `app_metadata.{sender_id, role}` like production's (lib/platform/devidp.ts).
 *
 * Login hardening (issue 12): throttled per client address and per username
 * (lib/platform/devidp.ts `LoginThrottle`, 30 and 10 attempts a minute; 429
 * `{error:"rate_limited", message}` + `Retry-After`); credentials are read
 * only as own string properties of the params (a body whose `__proto__` was
 * set, or whose fields are not strings, is 400 `invalid_request`); passwords
 * compared in constant time. The client address is `ctx.meta.client_address`
 * when the gateway passes it; without one, all such logins share one bucket.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { TokenResponse } from "../lib/contracts";
import { loadConfig, setting } from "../lib/platform/config";
import { createDevIdp, type DevIdp, LoginThrottle } from "../lib/platform/devidp";
import { fail } from "../lib/platform/errors";
import { defineService } from "../lib/platform/service";
import { dataDir } from "../lib/platform/system";

/** Finds `config/dev-users.json`: `MSA_DEV_USERS_FILE`, else beside the sources (tsx) or the build (dist/). */
export function devUsersFile(): string {
	const configured = setting("MSA_DEV_USERS_FILE");
	if (configured) return resolve(configured);
	const candidates = [
		resolve(__dirname, "../config/dev-users.json"),
		resolve(__dirname, "../../config/dev-users.json"),
		resolve("config/dev-users.json"),
	];
	return candidates.find((f) => existsSync(f)) ?? candidates[0];
}

/**
 * The own property `key` of `params` when it is a string; "" when absent.
 * Never reads the prototype chain (a JSON body with a `__proto__` key becomes
 * the merged params' prototype in moleculer-web).
 * @throws ApiError 400 `invalid_request` when present but not a string
 */
function ownText(params: object, key: string): string {
	if (!Object.hasOwn(params, key)) return "";
	const v: unknown = (params as Record<string, unknown>)[key];
	if (v === undefined) return "";
	if (typeof v !== "string") throw fail("invalid_request", { not_string: key });
	return v;
}

/** State set in `created` / `started`. */
interface DevAuthVars {
	idp: DevIdp;
	throttle: LoginThrottle;
}

export default defineService<DevAuthVars>()({
	name: "devauth",

	actions: {
		/**
		 * Password login (§5.5). Params: query `grant_type` (must be `password`),
		 * body `{email, password}` (JSON or form; `username` accepted for `email`),
		 * read as own string properties only. Meta: `client_address` (string,
		 * set by the gateway) keys the per-address throttle.
		 *
		 * Answers 200 `{access_token, refresh_token, expires_in, token_type:"bearer"}`
		 * (`expires_in` in seconds; `Cache-Control: no-store`).
		 * Errors: 400 `{error:"unsupported_grant_type", message}` (grant_type not
		 * `password`); 400 `{error:"invalid_request", message}` (email or password
		 * missing or not a string, or params whose prototype was replaced through a
		 * `__proto__` key); 429 `{error:"rate_limited", message}` with
		 * `data.retry_after` → `Retry-After` (over 30 attempts a minute from the
		 * address or 10 for the username; counted before the password check);
		 * 400 `{error:"invalid_grant", message:"Invalid login credentials"}`
		 * (unknown user or wrong password).
		 */
		token: {
			async handler(ctx): Promise<TokenResponse> {
				const p: object = ctx.params ?? {};
				const proto: unknown = Object.getPrototypeOf(p);
				if (proto !== Object.prototype && proto !== null) {
					throw fail("invalid_request", "not_flat");
				}
				if (!Object.hasOwn(p, "grant_type") || (p as { grant_type?: unknown }).grant_type !== "password") {
					throw fail("unsupported_grant_type");
				}
				const email = ownText(p, "email") || ownText(p, "username");
				const password = ownText(p, "password");
				if (!email.trim() || !password) {
					throw fail("invalid_request", "missing");
				}
				const meta = ctx.meta as { client_address?: unknown };
				const address = typeof meta.client_address === "string" ? meta.client_address : "unknown";
				await this.throttle.attempt(address, email);
				const token = await this.idp.login(email.trim(), password);
				if (!token) throw fail("invalid_grant");
				ctx.meta.$responseHeaders = { "Cache-Control": "no-store", Pragma: "no-cache" };
				return token;
			},
		},

		/** The public JWKS `{keys:[RS256 JWK]}` (cacheable for 5 minutes). */
		jwks: {
			handler(ctx) {
				ctx.meta.$responseHeaders = { "Cache-Control": "public, max-age=300" };
				return this.idp.jwks;
			},
		},
	},

	/** A fresh login throttle per service instance. */
	created() {
		this.throttle = new LoginThrottle();
	},

	/**
	 * Loads (or creates) the signing key and the user list; tokens carry the
	 * configured `AUTH_ISSUER` / `AUTH_AUDIENCE` (else the dev defaults), so
	 * they always agree with what the gateway requires.
	 */
	async started() {
		const cfg = loadConfig();
		this.idp = await createDevIdp({
			keyFile: join(dataDir(), "dev-idp-key.json"),
			usersFile: devUsersFile(),
			issuer: cfg.authIssuer,
			audience: cfg.authAudience,
		});
		this.logger.info("Development identity provider ready (zero-setup only; never use in production)");
	},
});
