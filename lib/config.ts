/**
 * Runtime configuration contract (docs/ARCHITECTURE.md §2).
 *
 * Read lazily, never at import time, so tests can set the environment before a
 * service is created. `bin/start.ts` fills the zero-setup defaults (embedded
 * PostgreSQL, development identity provider, link secret, sandbox) into
 * `process.env` before any service starts, so every service sees one uniform
 * configuration whether it runs alone in a pod or with all the others.
 */

/** All services this code base can run, in start order. */
export const ALL_SERVICES = [
	"pincode",
	"rates",
	"warehouses",
	"intake",
	"booking",
	"documents",
	"ndr",
	"webhooks",
	"simulator",
	"devauth",
	"gateway",
] as const;

export type ServiceName = (typeof ALL_SERVICES)[number];

export interface RuntimeConfig {
	/** Gateway HTTP port. */
	port: number;
	/** postgres://… connection string (always set after bootstrap). */
	databaseUrl: string;
	/** Redis URL for BullMQ; undefined means BullMQ's PostgreSQL backend on `databaseUrl`. */
	redisUrl?: string;
	/** Prefix of every BullMQ key / queue (per test run in tests). */
	queuePrefix: string;
	/** Moleculer transporter, e.g. nats://127.0.0.1:4222; undefined means in-process. */
	transporter?: string;
	/** Services this process runs. */
	services: ServiceName[];
	/** JWKS URL of the identity provider (`AUTH_JWKS_URL`). */
	authJwksUrl?: string;
	/** Required `iss` of bearer tokens (`AUTH_ISSUER`); always set when `authJwksUrl` is and the gateway runs. */
	authIssuer?: string;
	/** Required `aud` of bearer tokens (`AUTH_AUDIENCE`); always set when `authJwksUrl` is and the gateway runs. */
	authAudience?: string;
	/** HMAC key of signed label links (signs and verifies; lib/label-link.ts). */
	labelLinkSecret?: string;
	/** Older link secrets still accepted when verifying (`LABEL_LINK_PREVIOUS_SECRETS`, comma list); never sign. */
	labelLinkPreviousSecrets: string[];
	/**
	 * `PUBLIC_BASE_URL`: the API's public origin (http/https, no query), without a trailing slash;
	 * when set, book/sync's `label_url` is absolute, else a path relative to the API base.
	 */
	publicBaseUrl?: string;
	/** Signed-link downloads per client address per minute at the edge (`RATE_LIMIT_LINK_PER_MIN`; 0 = off). */
	rateLimitLinkPerMin: number;
	/** Requests per account (sender_id) per minute on every bearer `/v1` route (`RATE_LIMIT_ACCOUNT_PER_MIN`; 0 = off). */
	rateLimitAccountPerMin: number;
	/**
	 * How long an `Idempotency-Key`'s stored answer is replayed, seconds
	 * (`IDEMPOTENCY_TTL_S`, default 86400 = 24 h; at least 1). lib/gateway/idempotency.ts.
	 */
	idempotencyTtlS: number;
	/**
	 * How long a key whose request is still running blocks a retry with 409
	 * (`IDEMPOTENCY_LOCK_S`, default 90 s: longer than the longest action timeout,
	 * 60 s); after it a retry takes the key over and runs again (a crashed gateway's key).
	 */
	idempotencyLockS: number;
	/** Largest answer body stored for replay, bytes (`IDEMPOTENCY_MAX_BODY_BYTES`, default 8 MiB). */
	idempotencyMaxBodyBytes: number;
	/**
	 * `TRUST_PROXY`: how many reverse proxies in front of the gateway append to
	 * `X-Forwarded-For` (0: the client address is the socket's peer address).
	 */
	trustProxy: number;
	/** Sandbox couriers, rate cards and /v1/sandbox/* routes. */
	sandbox: boolean;
	/** Port of the sandbox courier simulator's HTTP server. */
	simulatorPort: number;
	/** Base URL the sandbox courier adapter calls. */
	simulatorUrl: string;
	/** True when started with no DATABASE_URL (embedded PostgreSQL etc.). */
	zeroSetup: boolean;
	/** Moleculer namespace (isolates test runs sharing one NATS). */
	namespace: string;
	/** Pool size of each process's PostgreSQL pool. */
	dbPoolMax: number;
	/**
	 * `DB_APPLICATION_NAME`: the `application_name` of this process's
	 * PostgreSQL sessions (what `pg_stat_activity` shows ops); default
	 * `msa-<SERVICES joined by +>`, `msa-all` when SERVICES is unset; at most
	 * 63 bytes (PostgreSQL truncates longer names).
	 */
	dbApplicationName: string;
	/** Moleculer log level. */
	logLevel: string;
}

function int(v: string | undefined, dflt: number): number {
	const n = v === undefined || v === "" ? Number.NaN : Number(v);
	return Number.isInteger(n) ? n : dflt;
}

/** A non-negative integer setting; unset means `dflt`; anything else malformed refuses to start. */
function count(name: string, v: string | undefined, dflt: number): number {
	if (v === undefined || v.trim() === "") return dflt;
	const n = Number(v);
	if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer (got "${v}")`);
	return n;
}

/** `TRUST_PROXY`: unset, "", "0" or "false" → 0; "true" → 1; else a hop count. */
function trustProxy(v: string | undefined): number {
	const t = (v ?? "").trim().toLowerCase();
	if (t === "" || t === "false") return 0;
	if (t === "true") return 1;
	return count("TRUST_PROXY", t, 0);
}

/**
 * Parses `LABEL_LINK_PREVIOUS_SECRETS`: comma-separated, blanks trimmed,
 * empties and repeats dropped (a secret therefore cannot contain a comma).
 */
export function parsePreviousSecrets(raw: string | undefined): string[] {
	return [
		...new Set(
			(raw ?? "")
				.split(",")
				.map((s) => s.trim())
				.filter(Boolean),
		),
	];
}

/**
 * `PUBLIC_BASE_URL` checked: an http(s) URL with an optional path, no query,
 * fragment or credentials; trailing slashes dropped; undefined when unset.
 * @throws Error when malformed (the process refuses to start)
 */
export function parsePublicBaseUrl(v: string | undefined): string | undefined {
	const t = (v ?? "").trim();
	if (!t) return undefined;
	let u: URL;
	try {
		u = new URL(t);
	} catch {
		throw new Error(`PUBLIC_BASE_URL is not a URL (got "${t}")`);
	}
	if ((u.protocol !== "http:" && u.protocol !== "https:") || u.search || u.hash || u.username || u.password)
		throw new Error(
			`PUBLIC_BASE_URL must be an http(s) URL without query, fragment or credentials (got "${t}")`,
		);
	return t.replace(/\/+$/, "");
}

/** A string setting, trimmed; undefined when unset or blank. */
function text(v: string | undefined): string | undefined {
	const t = (v ?? "").trim();
	return t === "" ? undefined : t;
}

/**
 * Refuses (throws) a process running the gateway with `AUTH_JWKS_URL` but
 * without `AUTH_ISSUER` or `AUTH_AUDIENCE` (docs/ARCHITECTURE.md §2, issue
 * 12): tokens of any issuer or audience sharing the key set would otherwise be
 * accepted. The zero-setup start sets both to its development identity
 * provider's own values before reading the configuration (lib/system.ts).
 * @throws Error naming the missing variables
 */
export function checkAuthConfig(
	cfg: Pick<RuntimeConfig, "services" | "authJwksUrl" | "authIssuer" | "authAudience">,
): void {
	if (!cfg.authJwksUrl || !cfg.services.includes("gateway")) return;
	const missing = [
		...(cfg.authIssuer ? [] : ["AUTH_ISSUER"]),
		...(cfg.authAudience ? [] : ["AUTH_AUDIENCE"]),
	];
	if (missing.length)
		throw new Error(
			`${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} required with AUTH_JWKS_URL: bearer tokens must name this API's issuer (iss) and audience (aud)`,
		);
}

/**
 * Parses the environment into a {@link RuntimeConfig}. Throws when a setting is
 * malformed (e.g. an unknown service name in `SERVICES`), and when a process
 * running the gateway names `AUTH_JWKS_URL` without `AUTH_ISSUER` and
 * `AUTH_AUDIENCE` ({@link checkAuthConfig}).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): RuntimeConfig {
	const services = (env.SERVICES ?? "")
		.split(",")
		.map((s) => s.trim())
		.filter(Boolean);
	for (const s of services) {
		if (!(ALL_SERVICES as readonly string[]).includes(s)) {
			throw new Error(`SERVICES names an unknown service "${s}" (known: ${ALL_SERVICES.join(", ")})`);
		}
	}
	const zeroSetup = env.MSA_ZERO_SETUP === "1";
	const simulatorPort = int(env.SANDBOX_COURIER_PORT, 4010);
	const sandboxEnv = env.SANDBOX;
	const cfg: RuntimeConfig = {
		port: int(env.PORT, 3000),
		databaseUrl: env.DATABASE_URL ?? "",
		redisUrl: env.REDIS_URL || undefined,
		queuePrefix: env.QUEUE_PREFIX || "msa",
		transporter: env.TRANSPORTER || undefined,
		services: services.length ? (services as ServiceName[]) : ALL_SERVICES.filter((s) => s !== "devauth"),
		authJwksUrl: env.AUTH_JWKS_URL || undefined,
		authIssuer: text(env.AUTH_ISSUER),
		authAudience: text(env.AUTH_AUDIENCE),
		labelLinkSecret: env.LABEL_LINK_SECRET || undefined,
		labelLinkPreviousSecrets: parsePreviousSecrets(env.LABEL_LINK_PREVIOUS_SECRETS),
		publicBaseUrl: parsePublicBaseUrl(env.PUBLIC_BASE_URL),
		rateLimitLinkPerMin: count("RATE_LIMIT_LINK_PER_MIN", env.RATE_LIMIT_LINK_PER_MIN, 120),
		rateLimitAccountPerMin: count("RATE_LIMIT_ACCOUNT_PER_MIN", env.RATE_LIMIT_ACCOUNT_PER_MIN, 3000),
		trustProxy: trustProxy(env.TRUST_PROXY),
		idempotencyTtlS: Math.max(1, count("IDEMPOTENCY_TTL_S", env.IDEMPOTENCY_TTL_S, 86_400)),
		idempotencyLockS: Math.max(1, count("IDEMPOTENCY_LOCK_S", env.IDEMPOTENCY_LOCK_S, 90)),
		idempotencyMaxBodyBytes: count("IDEMPOTENCY_MAX_BODY_BYTES", env.IDEMPOTENCY_MAX_BODY_BYTES, 8 << 20),
		sandbox: sandboxEnv === undefined || sandboxEnv === "" ? zeroSetup : sandboxEnv === "1",
		simulatorPort,
		simulatorUrl: env.SANDBOX_COURIER_URL || `http://127.0.0.1:${simulatorPort}`,
		zeroSetup,
		namespace: env.NAMESPACE ?? "",
		dbPoolMax: int(env.DB_POOL_MAX, 10),
		dbApplicationName: (
			text(env.DB_APPLICATION_NAME) ?? `msa-${services.length ? services.join("+") : "all"}`
		).slice(0, 63),
		logLevel: env.LOGLEVEL || "info",
	};
	checkAuthConfig(cfg);
	return cfg;
}

/** Code of the sandbox courier that is the real Delhivery adapter pointed at the simulator (lib/rates/seed.ts). */
export const SANDBOX_DELHIVERY_CODE = "sbx-delhivery";

/**
 * Settings overrides of the Delhivery adapter for the sandbox courier
 * {@link SANDBOX_DELHIVERY_CODE} (zero setup: no Delhivery account needed):
 * base URL `<simulatorUrl>/delhivery` (the simulator's Delhivery protocol,
 * lib/simulator/delhivery.ts) and the simulator's sandbox token
 * (`SANDBOX_COURIER_TOKEN`, default `sandbox-token`). Undefined for any other
 * courier code, which keeps `DELHIVERY_BASE_URL` / `DELHIVERY_TOKEN`.
 */
export function sandboxDelhiveryOverrides(
	courierCode: string,
	env: NodeJS.ProcessEnv = process.env,
): { baseUrl: string; token: string } | undefined {
	if (courierCode !== SANDBOX_DELHIVERY_CODE) return undefined;
	return {
		baseUrl: `${loadConfig(env).simulatorUrl.replace(/\/+$/, "")}/delhivery`,
		token: env.SANDBOX_COURIER_TOKEN || "sandbox-token",
	};
}
