/**
 * The identity provider of a test gateway: a real development IdP
 * (lib/platform/devidp.ts) whose JWKS is served over HTTP on 127.0.0.1, and the
 * gateway's environment pointing at it (`AUTH_JWKS_URL`, `AUTH_ISSUER`,
 * `AUTH_AUDIENCE`, `PORT=0`, no `MSA_DEV_IDP`), so tokens are verified as in
 * production: fetched keys, issuer and audience checked.
 *
 * One setup for every spec that starts a gateway in-process; the child
 * process systems build their environment with test/helpers/processes.ts
 * `childSystem`.
 */
import type { Server } from "node:http";
import type { Role } from "../../lib/platform/auth";
import { createDevIdp, type DevIdp, serveJwks } from "../../lib/platform/devidp";
import { setEnv } from "./env";

/** A started IdP with the gateway environment set; {@link stop} closes and restores. */
export interface StartedDevIdp {
	idp: DevIdp;
	/** the served JWKS, `http://127.0.0.1:<port>/.well-known/jwks.json` */
	url: string;
	server: Server;
	/** closes the JWKS server and restores the environment */
	stop(): void;
}

/**
 * Creates an IdP, serves its JWKS and sets the gateway environment (plus
 * `env` on top: `undefined` deletes a key) in `process.env`.
 */
export async function startDevIdp(env: Record<string, string | undefined> = {}): Promise<StartedDevIdp> {
	const idp = await createDevIdp();
	const { url, server } = await serveJwks(idp);
	const restore = setEnv({
		AUTH_JWKS_URL: url,
		AUTH_ISSUER: idp.issuer,
		AUTH_AUDIENCE: idp.audience,
		PORT: "0",
		MSA_DEV_IDP: undefined,
		...env,
	});
	return {
		idp,
		url,
		server,
		stop() {
			server.close();
			restore();
		},
	};
}

/** What {@link useDevIdp} gives a spec (filled in by its `before` hook). */
export interface DevIdpUnderTest {
	/** the provider (signs any claims: `idp.sign`) */
	idp: DevIdp;
	/** the served JWKS URL */
	url: string;
	/** a bearer token of `sender` with `role` (default merchant) */
	tokenFor(sender: number, role?: Role): Promise<string>;
}

/**
 * Registers mocha hooks in the calling `describe`: `before` starts the IdP
 * and sets the gateway environment (`env` on top), `after` closes it and
 * restores the environment. Call it before the hooks that create the
 * gateway (it reads its configuration when created).
 */
export function useDevIdp(env: Record<string, string | undefined> = {}): DevIdpUnderTest {
	let started: StartedDevIdp | undefined;
	const out: DevIdpUnderTest = {
		idp: undefined as unknown as DevIdp,
		url: "",
		tokenFor: (sender, role) => out.idp.tokenFor(sender, role),
	};
	before(async () => {
		started = await startDevIdp(env);
		out.idp = started.idp;
		out.url = started.url;
	});
	after(() => {
		started?.stop();
		started = undefined;
	});
	return out;
}
