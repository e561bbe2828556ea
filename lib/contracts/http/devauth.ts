/**
 * The routes of the development identity provider (`devauth`; zero-setup
 * start only, `MSA_DEV_IDP=1`; docs/ARCHITECTURE.md §3, spec §5.5), one
 * definition each (issue 26; lib/platform/openapi/route.ts). They are served
 * without a bearer token and are not part of the merchant API, so they are
 * not in the OpenAPI document (`documented: false`;
 * docs/decisions/0043-openapi-document.md).
 */
import { defineRoutes } from "../../platform/openapi/route";

/** The dev IdP's routes, keyed by action. */
export const DEVAUTH_ROUTES = defineRoutes({
	"devauth.token": {
		route: "POST /auth/v1/token",
		kind: "dev_idp",
		documented: false,
		tag: "reference",
		description:
			"`?grant_type=password`, a JSON or form body `{email|username, password}` → `{access_token, token_type, expires_in}` (RS256, 1 h).",
		responses: {},
	},
	"devauth.jwks": {
		route: "GET /auth/v1/.well-known/jwks.json",
		kind: "dev_idp",
		documented: false,
		tag: "reference",
		description: "The dev IdP's public key set (JWKS) the gateway verifies tokens with.",
		responses: {},
	},
});
