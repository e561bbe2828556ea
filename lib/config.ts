/**
 * Runtime configuration contract (ARCHITECTURE §2).
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
	/** JWKS URL of the identity provider. */
	authJwksUrl?: string;
	authIssuer?: string;
	authAudience?: string;
	/** HMAC key of signed label links. */
	labelLinkSecret?: string;
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
	/** Moleculer log level. */
	logLevel: string;
}

function int(v: string | undefined, dflt: number): number {
	const n = v === undefined || v === "" ? Number.NaN : Number(v);
	return Number.isInteger(n) ? n : dflt;
}

/**
 * Parses the environment into a {@link RuntimeConfig}. Throws when a setting is
 * malformed (e.g. an unknown service name in `SERVICES`).
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
	return {
		port: int(env.PORT, 3000),
		databaseUrl: env.DATABASE_URL ?? "",
		redisUrl: env.REDIS_URL || undefined,
		queuePrefix: env.QUEUE_PREFIX || "msa",
		transporter: env.TRANSPORTER || undefined,
		services: services.length ? (services as ServiceName[]) : ALL_SERVICES.filter((s) => s !== "devauth"),
		authJwksUrl: env.AUTH_JWKS_URL || undefined,
		authIssuer: env.AUTH_ISSUER || undefined,
		authAudience: env.AUTH_AUDIENCE || undefined,
		labelLinkSecret: env.LABEL_LINK_SECRET || undefined,
		sandbox: sandboxEnv === undefined || sandboxEnv === "" ? zeroSetup : sandboxEnv === "1",
		simulatorPort,
		simulatorUrl: env.SANDBOX_COURIER_URL || `http://127.0.0.1:${simulatorPort}`,
		zeroSetup,
		namespace: env.NAMESPACE ?? "",
		dbPoolMax: int(env.DB_POOL_MAX, 10),
		logLevel: env.LOGLEVEL || "info",
	};
}
