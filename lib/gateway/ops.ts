/**
 * The ops routes' credential (docs/decisions/0103-ops-routes.md): `/v1/ops/*`
 * takes `Authorization: Bearer <OPS_API_TOKEN>`, the operator's own token,
 * not a merchant's JWT — ops act across accounts, which no merchant role may.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Context } from "moleculer";
import { invalidToken } from "../platform/auth";
import { setting } from "../platform/config";
import { bearerToken } from "./tokens";
import type { GwRequest } from "./web-types";

/** SHA-256 of a token: equal-length digests for a constant-time comparison. */
const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * True when `presented` is the configured ops token (constant time).
 * @returns false when no token is configured: every ops call is refused
 */
function isOpsToken(presented: string, configured: string | undefined = setting("OPS_API_TOKEN")): boolean {
	if (!configured) return false;
	return timingSafeEqual(digest(presented), digest(configured));
}

/**
 * moleculer-web `onBeforeCall` of the ops route: checks the bearer token
 * before anything reaches the action.
 * @throws 401 `Authentication required` (no or malformed `Authorization`);
 *   401 `Invalid or expired token` code `token_invalid` (not the ops token, or none configured)
 */
export function opsBeforeCall(_ctx: Context, _route: unknown, req: GwRequest): void {
	if (!isOpsToken(bearerToken(req.headers.authorization))) throw invalidToken("token_invalid");
}
