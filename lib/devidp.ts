/**
 * Development identity provider (ARCHITECTURE §3): an RS256 key pair, its JWKS,
 * and password login for users listed in a local file, issuing tokens shaped
 * like production's (`app_metadata.sender_id`, `app_metadata.role`).
 *
 * Used only by the zero-setup start and by tests (which need a real JWKS to
 * verify against). Never used when `AUTH_JWKS_URL` points elsewhere.
 */
import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { dirname } from "node:path";
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from "jose";
import type { Role } from "./auth";
import type { TokenResponse } from "./contracts/platform";

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
	/** Issuer claim put in tokens. */
	issuer: string;
	/**
	 * Signs a token with arbitrary claims (tests use it for bad tokens too).
	 * `expiresIn` follows jose's `setExpirationTime`: a string is relative
	 * (`"1h"`, the default), a number is the absolute `exp` in epoch seconds;
	 * `noExp` omits `exp`.
	 */
	sign(
		claims: Record<string, unknown>,
		opts?: { expiresIn?: string | number; noExp?: boolean },
	): Promise<string>;
	/** Token for an account and role. */
	tokenFor(sender_id: number, role?: Role, sub?: string): Promise<string>;
	/** Password login; undefined when the credentials do not match a listed user. */
	login(email: string, password: string): Promise<TokenResponse | undefined>;
}

/**
 * Creates the provider. With `keyFile`, the private key is kept there (created
 * on first start) so tokens survive restarts of the zero-setup system.
 */
export async function createDevIdp(
	opts: { keyFile?: string; usersFile?: string; issuer?: string } = {},
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
	const issuer = opts.issuer ?? "msa-dev-idp";
	const users: DevUser[] = opts.usersFile
		? (JSON.parse(readFileSync(opts.usersFile, "utf8")).users as DevUser[])
		: [];

	const sign: DevIdp["sign"] = async (claims, o = {}) => {
		let jwt = new SignJWT(claims)
			.setProtectedHeader({ alg: "RS256", kid: privateJwk.kid, typ: "JWT" })
			.setIssuedAt();
		if (!o.noExp) jwt = jwt.setExpirationTime(o.expiresIn ?? "1h");
		if (claims.iss === undefined) jwt = jwt.setIssuer(issuer);
		return jwt.sign(key);
	};
	const tokenFor: DevIdp["tokenFor"] = (sender_id, role = "merchant", sub = `user-${sender_id}-${role}`) =>
		sign({ sub, app_metadata: { sender_id, role } });

	return {
		jwks: { keys: [publicJwk] },
		issuer,
		sign,
		tokenFor,
		async login(email, password) {
			const u = users.find((x) => x.email.toLowerCase() === String(email).toLowerCase());
			const a = Buffer.from(String(password ?? ""));
			const b = Buffer.from(u?.password ?? randomBytes(16).toString("hex"));
			if (!u || a.length !== b.length || !timingSafeEqual(a, b)) return undefined;
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
