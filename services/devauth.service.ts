/**
 * `devauth`: the development identity provider (ARCHITECTURE §3, spec §5.5),
 * run only by the zero-setup start (no DATABASE_URL, no AUTH_JWKS_URL; then
 * `MSA_DEV_IDP=1` and the gateway mounts its two routes):
 *
 * | Route (gateway, no bearer)                  | Action        |
 * |---------------------------------------------|---------------|
 * | POST /auth/v1/token?grant_type=password     | devauth.token |
 * | GET  /auth/v1/.well-known/jwks.json         | devauth.jwks  |
 *
 * Keys: an RS256 key pair kept in `<dataDir>/dev-idp-key.json` (created on
 * first start, mode 0600) so tokens survive restarts. Users:
 * `config/dev-users.json` (override with `MSA_DEV_USERS_FILE`). Tokens carry
 * `sub`, `email`, `iss` ("msa-dev-idp"), `exp` (1 h) and
 * `app_metadata.{sender_id, role}` like production's (lib/devidp.ts).
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { TokenResponse } from "../lib/contracts";
import { createDevIdp, type DevIdp } from "../lib/devidp";
import { apiError } from "../lib/errors";
import { defineService } from "../lib/service";
import { dataDir } from "../lib/system";

/** Finds `config/dev-users.json`: `MSA_DEV_USERS_FILE`, else beside the sources (tsx) or the build (dist/). */
export function devUsersFile(): string {
	if (process.env.MSA_DEV_USERS_FILE) return resolve(process.env.MSA_DEV_USERS_FILE);
	const candidates = [
		resolve(__dirname, "../config/dev-users.json"),
		resolve(__dirname, "../../config/dev-users.json"),
		resolve("config/dev-users.json"),
	];
	return candidates.find((f) => existsSync(f)) ?? candidates[0];
}

/** A string param, else "" (HTTP params are untrusted). */
function text(v: unknown): string {
	return typeof v === "string" ? v : "";
}

/** State set in `started`. */
interface DevAuthVars {
	idp: DevIdp;
}

export default defineService<DevAuthVars>()({
	name: "devauth",

	actions: {
		/**
		 * Password login (§5.5). Params: query `grant_type` (must be `password`),
		 * body `{email, password}` (JSON or form; `username` accepted for `email`).
		 *
		 * Answers 200 `{access_token, refresh_token, expires_in, token_type:"bearer"}`
		 * (`expires_in` in seconds; `Cache-Control: no-store`).
		 * Errors: 400 `{error:"unsupported_grant_type", message}` (grant_type not
		 * `password`); 400 `{error:"invalid_request", message}` (email or password
		 * missing); 400 `{error:"invalid_grant", message:"Invalid login credentials"}`
		 * (unknown user or wrong password).
		 */
		token: {
			async handler(ctx): Promise<TokenResponse> {
				const p = ctx.params ?? {};
				if (p.grant_type !== "password") {
					throw apiError(400, "unsupported_grant_type", "grant_type must be password");
				}
				const email = typeof p.email === "string" ? p.email : text(p.username);
				const password = text(p.password);
				if (!email || !password) {
					throw apiError(400, "invalid_request", "email and password are required");
				}
				const token = await this.idp.login(email.trim(), password);
				if (!token) throw apiError(400, "invalid_grant", "Invalid login credentials");
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

	/** Loads (or creates) the signing key and the user list. */
	async started() {
		this.idp = await createDevIdp({
			keyFile: join(dataDir(), "dev-idp-key.json"),
			usersFile: devUsersFile(),
		});
		this.logger.info("Development identity provider ready (zero-setup only; never use in production)");
	},
});
