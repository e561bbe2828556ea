/**
 * Runtime configuration: every environment variable this code base reads at
 * run time, declared, parsed and validated here (docs/ARCHITECTURE.md §2; issue 26;
 * docs/decisions/0089-configuration-in-one-module.md).
 *
 * - {@link SETTINGS} is the one table: per variable its type and allowed
 *   values (`allowed`, as an error message says it), its default, what it
 *   means and who reads it. README.md "Configuration" documents the same
 *   variables (test/unit/config.spec.ts checks that they agree).
 * - {@link setting} reads one variable, typed; a value outside what is allowed
 *   throws `NAME must be <allowed> (got "<value>")` (a secret's value is never
 *   repeated), never a silent default. Modules keep reading at the moment they
 *   read before (a service's `created()`, each use), only through here: nothing
 *   is read at import time except where a module did so already
 *   (`INTAKE_BULK_BATCH`, `INTAKE_BULK_READER_NICE`).
 * - {@link checkEnvironment} validates every declared variable at once: the
 *   process start runs it first (lib/platform/system.ts), so a wrong value stops the
 *   process before anything starts, whichever service would have read it.
 * - {@link loadConfig} is the typed view the start path and most services use.
 *
 * Not declared here (they stay where they are): test-only and bench-only
 * variables (`TEST_*`, `BENCH_*`, `MSA_TEST_*`, bench/*), variables of the
 * shell scripts (scripts/*.sh), and those read by Node.js or a library rather
 * than by this code (`NODE_OPTIONS`, `NODE_ENV`). test/unit/config.spec.ts
 * fails when a file outside this module reads a declared variable itself.
 *
 * `bin/start.ts` fills the zero-setup defaults (embedded PostgreSQL,
 * development identity provider, link secret, sandbox) into `process.env`
 * before any service starts (lib/platform/system.ts), so every service sees one
 * uniform configuration whether it runs alone in a pod or with all the others.
 */
import { envWrites, isWatchedEnv } from "./env-writes";

/** All services this code base can run, in start order. */
export const ALL_SERVICES = [
	"pincode",
	"rates",
	"warehouses",
	"intake",
	"booking",
	"billing",
	"documents",
	"ndr",
	"webhooks",
	"notifications",
	"simulator",
	"devauth",
	"gateway",
] as const;

export type ServiceName = (typeof ALL_SERVICES)[number];

/** Who reads a variable: a service, or `start` (every process: bin/start.ts, lib/platform/system.ts, moleculer.config.ts). */
export type Reader = ServiceName | "start";

/** Marks a raw value that is not allowed (see {@link SettingSpec.parse}). */
const INVALID: unique symbol = Symbol("invalid setting");
type Invalid = typeof INVALID;

/** One declared environment variable. */
export interface SettingSpec<T> {
	/** What it sets (one line; README.md "Configuration" says more). */
	readonly doc: string;
	/** The processes that read it. */
	readonly readBy: readonly Reader[];
	/** What is allowed, worded to follow "NAME must be": e.g. "an integer from 1 to 50". */
	readonly allowed: string;
	/** The default as README's "When unset" column states it; undefined when none or derived from other settings. */
	readonly shownDefault?: string;
	/** A secret: an error message never repeats its value. */
	readonly secret?: boolean;
	/** The value of `raw` (undefined: unset), or INVALID when `raw` is not allowed. */
	readonly parse: (raw: string | undefined) => T | Invalid;
}

/** Longest delay Node's timers take (2^31 − 1 ms, ~24.8 days); a longer one fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

interface Described {
	doc: string;
	readBy: readonly Reader[];
	secret?: boolean;
}

const isBlank = (raw: string | undefined): raw is undefined => raw === undefined || raw.trim() === "";

/** Integer text (optional sign, digits), as `Number` would read it, or NaN. */
function toInt(raw: string): number {
	const t = raw.trim();
	return /^[+-]?\d+$/.test(t) ? Number(t) : Number.NaN;
}

function rangeText(what: string, min: number, max: number): string {
	return max === Number.MAX_SAFE_INTEGER ? `${what} of at least ${min}` : `${what} from ${min} to ${max}`;
}

/** An integer in [min, max]; blank or unset → `dflt`. */
function integer(o: Described & { dflt: number; min: number; max?: number }): SettingSpec<number> {
	const max = o.max ?? Number.MAX_SAFE_INTEGER;
	return {
		...o,
		allowed: rangeText("an integer", o.min, max),
		shownDefault: String(o.dflt),
		parse: (raw) => {
			if (isBlank(raw)) return o.dflt;
			const n = toInt(raw);
			return Number.isSafeInteger(n) && n >= o.min && n <= max ? n : INVALID;
		},
	};
}

/** An integer in [min, max], or undefined when blank or unset (the reader derives a default). */
function optionalInteger(o: Described & { min: number; max?: number }): SettingSpec<number | undefined> {
	const max = o.max ?? Number.MAX_SAFE_INTEGER;
	return {
		...o,
		allowed: rangeText("an integer", o.min, max),
		parse: (raw) => {
			if (isBlank(raw)) return undefined;
			const n = toInt(raw);
			return Number.isSafeInteger(n) && n >= o.min && n <= max ? n : INVALID;
		},
	};
}

/** Milliseconds: an integer from `min` (default 1) to {@link MAX_TIMER_MS}; blank or unset → `dflt`. */
function ms(o: Described & { dflt: number; min?: number }): SettingSpec<number> {
	const spec = integer({ ...o, min: o.min ?? 1, max: MAX_TIMER_MS });
	return { ...spec, allowed: `${spec.allowed} (milliseconds)` };
}

/** A port number: an integer from `min` to 65535; blank or unset → `dflt`. */
function port(o: Described & { dflt: number; min?: number }): SettingSpec<number> {
	return integer({ ...o, min: o.min ?? 0, max: 65_535 });
}

/** A number greater than 0 (fractions allowed); blank or unset → `dflt`. */
function positive(o: Described & { dflt: number }): SettingSpec<number> {
	return {
		...o,
		allowed: "a number greater than 0",
		shownDefault: String(o.dflt),
		parse: (raw) => {
			if (isBlank(raw)) return o.dflt;
			const t = raw.trim();
			const n = /^[+]?(\d+\.?\d*|\.\d+)$/.test(t) ? Number(t) : Number.NaN;
			return Number.isFinite(n) && n > 0 ? n : INVALID;
		},
	};
}

/** Text, trimmed unless `keepSpaces` (secrets and passwords are taken as written); undefined when blank or unset. */
function text(o: Described & { keepSpaces?: boolean }): SettingSpec<string | undefined> {
	return {
		...o,
		allowed: "any text",
		parse: (raw) => {
			if (raw === undefined || raw === "") return undefined;
			if (o.keepSpaces) return raw;
			const t = raw.trim();
			return t === "" ? undefined : t;
		},
	};
}

/** Text, trimmed; blank or unset → `dflt`. */
function textOr(o: Described & { dflt: string; shown?: string }): SettingSpec<string> {
	return {
		...o,
		allowed: "any text",
		shownDefault: o.shown ?? o.dflt,
		parse: (raw) => (isBlank(raw) ? o.dflt : raw.trim()),
	};
}

/** One of `values` (trimmed; case-insensitive when `anyCase`); blank or unset → `dflt`. */
function oneOf<const V extends string>(
	values: readonly V[],
	o: Described & { dflt: V; anyCase?: boolean },
): SettingSpec<V> {
	return {
		...o,
		allowed:
			values.length === 2
				? `${values[0]} or ${values[1]}`
				: `${values.slice(0, -1).join(", ")} or ${values.at(-1)}`,
		shownDefault: o.dflt,
		parse: (raw) => {
			if (isBlank(raw)) return o.dflt;
			const t = o.anyCase ? raw.trim().toLowerCase() : raw.trim();
			return (values as readonly string[]).includes(t) ? (t as V) : INVALID;
		},
	};
}

/** A switch written `1` (on) or `0` (off); blank or unset → undefined (the reader decides). */
function switch01(o: Described): SettingSpec<boolean | undefined> {
	return {
		...o,
		allowed: "1 or 0",
		parse: (raw) => {
			if (isBlank(raw)) return undefined;
			const t = raw.trim();
			return t === "1" ? true : t === "0" ? false : INVALID;
		},
	};
}

/** An http(s) URL (trimmed, as written); undefined when blank or unset. */
function httpUrl(o: Described & { extra?: string }): SettingSpec<string | undefined> {
	return {
		...o,
		allowed: `an http(s) URL${o.extra ?? ""}`,
		parse: (raw) => {
			if (isBlank(raw)) return undefined;
			const t = raw.trim();
			return isHttpUrl(t) ? t : INVALID;
		},
	};
}

function isHttpUrl(t: string): boolean {
	try {
		const u = new URL(t);
		return u.protocol === "http:" || u.protocol === "https:";
	} catch {
		return false;
	}
}

/** A spec with its own parse (and wording of what is allowed). */
function custom<T>(
	o: Described & { allowed: string; shownDefault?: string; parse: (raw: string | undefined) => T | Invalid },
): SettingSpec<T> {
	return o;
}

/** The services that call courier adapters (lib/couriers: rates, registrations, bookings, labels, NDR acts). */
const COURIER_CALLERS: readonly Reader[] = ["rates", "warehouses", "booking", "documents", "ndr"];
/** The services owning an outbox (lib/platform/outbox.ts). */
const OUTBOX_OWNERS: readonly Reader[] = ["booking", "documents", "intake", "ndr"];
/** Moleculer's log levels. */
const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace"] as const;

/** Comma list, blanks trimmed, empties and repeats dropped (so an item cannot contain a comma). */
function commaList(raw: string | undefined): string[] {
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
 * Every environment variable read at run time, by name (see the module doc).
 * Adding one: an entry here, a row in README.md "Configuration", and
 * `setting("NAME")` where it is read (docs/ARCHITECTURE.md "Where to add …").
 */
export const SETTINGS = {
	// --- process, transport, database -------------------------------------------------------------
	PORT: port({
		dflt: 3000,
		doc: "gateway HTTP port (0: a free port the system picks)",
		readBy: ["gateway", "start"],
	}),
	HOST: text({
		doc: "listen address of the gateway, the simulator and the metrics endpoint (default: gateway 0.0.0.0, simulator 127.0.0.1, metrics every interface; the zero-setup start sets 127.0.0.1)",
		readBy: ["gateway", "simulator", "start"],
	}),
	DATABASE_URL: text({
		doc: "postgres://… connection string; unset: the zero-setup start (embedded PostgreSQL)",
		readBy: ["start"],
		secret: true,
		keepSpaces: true,
	}),
	REDIS_URL: text({
		doc: "Redis of BullMQ and of the gateway's rate-limit counters; unset: BullMQ's PostgreSQL backend",
		readBy: ["start"],
		secret: true,
		keepSpaces: true,
	}),
	QUEUE_PREFIX: textOr({ dflt: "msa", doc: "prefix of every BullMQ key / queue", readBy: ["start"] }),
	TRANSPORTER: text({ doc: "Moleculer transporter (NATS URL); unset: in-process", readBy: ["start"] }),
	CHANNELS_REPLICAS: integer({
		dflt: 1,
		min: 1,
		max: 5,
		doc: "replicas of each durable channel's JetStream stream",
		readBy: ["booking", "intake", "ndr", "webhooks"],
	}),
	NAMESPACE: textOr({ dflt: "", shown: "", doc: "Moleculer namespace", readBy: ["start"] }),
	NODEID: text({ doc: "Moleculer node id (default hostname-pid)", readBy: ["start"] }),
	SERVICES: custom<ServiceName[]>({
		allowed: `a comma list of services (known: ${ALL_SERVICES.join(", ")})`,
		doc: "services this process runs (default all but devauth)",
		readBy: ["start"],
		parse: (raw) => {
			const names = commaList(raw);
			return names.every((s) => (ALL_SERVICES as readonly string[]).includes(s))
				? (names as ServiceName[])
				: INVALID;
		},
	}),
	DB_POOL_MAX: integer({
		dflt: 10,
		min: 1,
		max: 1000,
		doc: "PostgreSQL pool size per process",
		readBy: ["start"],
	}),
	DB_APPLICATION_NAME: text({
		doc: "application_name of this process's PostgreSQL sessions (default msa-<SERVICES joined by +>)",
		readBy: ["start"],
	}),
	LOGLEVEL: oneOf(LOG_LEVELS, { dflt: "info", doc: "Moleculer log level", readBy: ["start"] }),
	HEALTH_PORT: optionalInteger({
		min: 0,
		max: 65_535,
		doc: "port of /live and /ready in pods without the gateway; unset: no probe server",
		readBy: ["start"],
	}),
	METRICS_PORT: custom<number | null>({
		allowed: 'a port number (1 to 65535), 0 or "off"',
		shownDefault: "9100",
		doc: "port of this process's Prometheus endpoint; 0 or off: metrics off (null)",
		readBy: ["start"],
		parse: (raw) => {
			const t = (raw ?? "").trim().toLowerCase();
			if (t === "") return 9100;
			if (t === "0" || t === "off") return null;
			const n = toInt(t);
			return Number.isInteger(n) && n >= 1 && n <= 65_535 ? n : INVALID;
		},
	}),
	METRICS_SAMPLE_MS: integer({
		dflt: 5000,
		min: 50,
		max: MAX_TIMER_MS,
		doc: "period of the sampled gauges (queue depth, outbox lag)",
		readBy: ["start"],
	}),
	OUTBOX_RETENTION_HOURS: integer({
		dflt: 168,
		min: 0,
		doc: "hours delivered outbox rows are kept (0: for ever)",
		readBy: OUTBOX_OWNERS,
	}),
	EVENT_OUTBOX_POLL_MS: ms({
		dflt: 1000,
		doc: "fallback poll of the event outboxes, read from the table's start",
		readBy: ["billing", "booking", "intake", "ndr", "warehouses"],
	}),
	EVENT_OUTBOX_PACE_MS: ms({
		dflt: 25,
		min: 0,
		doc: "least time between the starts of two passes of an event outbox relay (0: a pass per commit)",
		readBy: ["billing", "booking", "intake", "ndr", "warehouses"],
	}),
	MSA_V8_PRETENURING: oneOf(["on", "off"], {
		dflt: "off",
		doc: "on keeps V8's allocation-site pretenuring (benchmark comparison)",
		readBy: ["start"],
	}),

	// --- zero-setup start ---------------------------------------------------------------------------
	MSA_ZERO_SETUP: switch01({
		doc: "set to 1 by the zero-setup start (lib/platform/system.ts); not for operators",
		readBy: ["start"],
	}),
	MSA_DEV_IDP: switch01({
		doc: "set to 1 by the zero-setup start when the development identity provider runs; not for operators",
		readBy: ["gateway"],
	}),
	MSA_DATA_DIR: textOr({
		dflt: ".data",
		shown: "./.data",
		doc: "zero-setup state directory",
		readBy: ["start", "devauth"],
	}),
	MSA_DEV_USERS_FILE: text({
		doc: "users of the development identity provider (default config/dev-users.json)",
		readBy: ["devauth"],
	}),
	EMBEDDED_PG_PORT: port({
		dflt: 54329,
		min: 1,
		doc: "port of the zero-setup embedded PostgreSQL",
		readBy: ["start"],
	}),

	// --- identity, links, edge ----------------------------------------------------------------------
	AUTH_JWKS_URL: httpUrl({ doc: "JWKS of the identity provider", readBy: ["gateway", "start"] }),
	AUTH_ISSUER: text({ doc: "required iss of bearer tokens", readBy: ["gateway", "devauth", "start"] }),
	AUTH_AUDIENCE: text({ doc: "required aud of bearer tokens", readBy: ["gateway", "devauth", "start"] }),
	OPS_API_TOKEN: custom<string | undefined>({
		allowed: "at least 32 characters",
		doc: "bearer token of the ops routes /v1/ops/* (docs/decisions/0103-ops-routes.md); unset: every ops route answers 401",
		readBy: ["gateway"],
		secret: true,
		parse: (raw) => {
			if (raw === undefined || raw === "") return undefined;
			return raw.length >= 32 ? raw : INVALID;
		},
	}),
	LABEL_LINK_SECRET: text({
		doc: "HMAC key of signed label links",
		readBy: [
			"gateway",
			"documents",
			"booking",
			"billing",
			"intake",
			"webhooks",
			"ndr",
			"notifications",
			"start",
		],
		secret: true,
		keepSpaces: true,
	}),
	LABEL_LINK_PREVIOUS_SECRETS: custom<string[]>({
		allowed: "a comma list",
		secret: true,
		doc: "older link secrets still accepted when verifying",
		readBy: ["documents", "notifications"],
		parse: commaList,
	}),
	PUBLIC_BASE_URL: custom<string | undefined>({
		allowed: "an http(s) URL without query, fragment or credentials",
		doc: "the API's public base; label_url is absolute when set",
		readBy: ["booking", "intake"],
		parse: (raw) => {
			if (isBlank(raw)) return undefined;
			const t = raw.trim();
			if (!isHttpUrl(t)) return INVALID;
			const u = new URL(t);
			return u.search || u.hash || u.username || u.password ? INVALID : t.replace(/\/+$/, "");
		},
	}),
	CURSOR_SECRET: text({
		doc: "HMAC key of page cursors (default LABEL_LINK_SECRET)",
		readBy: ["billing", "intake", "ndr", "webhooks"],
		secret: true,
		keepSpaces: true,
	}),
	RATE_LIMIT_LINK_PER_MIN: integer({
		dflt: 120,
		min: 0,
		doc: "signed-link downloads per client address per minute (0 off)",
		readBy: ["gateway"],
	}),
	RATE_LIMIT_ACCOUNT_PER_MIN: integer({
		dflt: 3000,
		min: 0,
		doc: "requests per account per minute (0 off)",
		readBy: ["gateway"],
	}),
	IDEMPOTENCY_TTL_S: integer({
		dflt: 86_400,
		min: 1,
		doc: "seconds an Idempotency-Key's answer is replayed",
		readBy: ["gateway"],
	}),
	IDEMPOTENCY_LOCK_S: integer({
		dflt: 90,
		min: 1,
		doc: "seconds a running request holds its Idempotency-Key",
		readBy: ["gateway"],
	}),
	IDEMPOTENCY_MAX_BODY_BYTES: integer({
		dflt: 8 << 20,
		min: 0,
		doc: "largest answer body stored for replay, bytes",
		readBy: ["gateway"],
	}),
	TRUST_PROXY: custom<number>({
		allowed: 'a non-negative integer, "true" or "false"',
		shownDefault: "0",
		doc: "reverse proxies in front of the gateway appending to X-Forwarded-For",
		readBy: ["gateway"],
		parse: (raw) => {
			const t = (raw ?? "").trim().toLowerCase();
			if (t === "" || t === "false") return 0;
			if (t === "true") return 1;
			const n = toInt(t);
			return Number.isSafeInteger(n) && n >= 0 ? n : INVALID;
		},
	}),
	GATEWAY_ACCESS_LOG: oneOf(["sampled", "1", "0"], {
		dflt: "sampled",
		doc: "access-log lines: sampled (writes, errors, slow requests, a sample of the rest), 1 (every request), 0 (none)",
		readBy: ["gateway"],
	}),
	GATEWAY_ACCESS_LOG_SAMPLE: integer({
		dflt: 100,
		min: 1,
		doc: "sampled access log: 1 in this many fast successful GET / HEAD requests is logged",
		readBy: ["gateway"],
	}),
	GATEWAY_ACCESS_LOG_SLOW_MS: integer({
		dflt: 500,
		min: 0,
		doc: "sampled access log: a request taking this many ms or more is always logged",
		readBy: ["gateway"],
	}),

	GATEWAY_WRITE_PER_TURN: switch01({
		doc: "1: the gateway writes the answers made in the event-loop turn their request was read in together at its end (record 0150); 0: each at once (default 1)",
		readBy: ["gateway"],
	}),

	// --- sandbox and simulator ----------------------------------------------------------------------
	SANDBOX: switch01({
		doc: "1: sandbox couriers, rate cards and the simulator; 0: never (default: on in the zero-setup start)",
		readBy: ["start", "rates", "booking", "webhooks", "simulator", "gateway"],
	}),
	SANDBOX_COURIER_PORT: port({
		dflt: 4010,
		doc: "simulator listen port",
		readBy: ["simulator", ...COURIER_CALLERS],
	}),
	SANDBOX_COURIER_URL: httpUrl({
		doc: "URL the sandbox courier adapter calls (default http://127.0.0.1:<SANDBOX_COURIER_PORT>)",
		readBy: COURIER_CALLERS,
	}),
	SANDBOX_COURIER_TIMEOUT_MS: ms({
		dflt: 5000,
		doc: "sandbox adapter call timeout",
		readBy: ["simulator", ...COURIER_CALLERS],
	}),
	SANDBOX_COURIER_TOKEN: textOr({
		dflt: "sandbox-token",
		doc: "API token of the sandbox courier accounts",
		readBy: ["simulator", ...COURIER_CALLERS],
		secret: true,
	}),
	SANDBOX_COURIER_DELAY_MS: optionalInteger({
		min: 0,
		max: MAX_TIMER_MS,
		doc: "simulated courier think time before an AWB is issued (default random 100–300 ms)",
		readBy: ["simulator"],
	}),
	SANDBOX_COURIER_HANG_MS: optionalInteger({
		min: 1,
		max: MAX_TIMER_MS,
		doc: "how long a SIMULATE_TIMEOUT create holds its answer (default the adapter timeout + 3 s)",
		readBy: ["simulator"],
	}),
	SANDBOX_WEBHOOK_SECRET: text({
		doc: "HMAC key of the sandbox couriers' scan pushes",
		readBy: ["simulator", "booking", ...COURIER_CALLERS],
		secret: true,
	}),
	SANDBOX_OWN_LABEL_COURIERS: custom<readonly string[]>({
		allowed: "a comma list of courier codes, or none",
		shownDefault: "sbx-lite",
		doc: "sandbox courier codes that issue their own label file",
		readBy: ["simulator", ...COURIER_CALLERS],
		// unset: sbx-lite; blank or `none`: no courier
		parse: (raw) => (raw === undefined ? ["sbx-lite"] : commaList(raw).filter((c) => c !== "none")),
	}),
	SANDBOX_SCAN_PUSH_URL: custom<string | null | undefined>({
		allowed: "an http(s) URL ({courier} is replaced)",
		doc: "where the simulator pushes each scan; blank: no push (also in the zero-setup start)",
		readBy: ["simulator", "start"],
		parse: (raw) => {
			if (raw === undefined) return undefined;
			const t = raw.trim();
			if (t === "") return null;
			return isHttpUrl(t) ? t : INVALID;
		},
	}),

	// --- couriers -----------------------------------------------------------------------------------
	DELHIVERY_BASE_URL: httpUrl({ doc: "Delhivery B2C API base URL", readBy: COURIER_CALLERS }),
	DELHIVERY_TOKEN: text({ doc: "Delhivery API token", readBy: COURIER_CALLERS, secret: true }),
	DELHIVERY_TIMEOUT_MS: ms({ dflt: 10_000, doc: "Delhivery per-call timeout", readBy: COURIER_CALLERS }),
	DELHIVERY_WEBHOOK_TOKEN: text({
		doc: "shared token of Delhivery's scan pushes",
		readBy: ["booking", ...COURIER_CALLERS],
		secret: true,
	}),
	DELHIVERY_OWN_LABEL: custom<boolean>({
		allowed: "true or false",
		shownDefault: "true",
		doc: "false when Delhivery labels are drawn by us instead of its packing slip",
		readBy: COURIER_CALLERS,
		parse: (raw) => {
			const t = (raw ?? "").trim().toLowerCase();
			return t === "" || t === "true" ? true : t === "false" ? false : INVALID;
		},
	}),
	DELHIVERY_RATE_LIMIT: integer({
		dflt: 40,
		min: 1,
		doc: "Delhivery rate calls per window per process",
		readBy: ["rates"],
	}),
	DELHIVERY_RATE_WINDOW_MS: ms({ dflt: 60_000, doc: "Delhivery rate-limit window", readBy: ["rates"] }),
	DELHIVERY_RATE_CACHE_MS: ms({
		dflt: 60_000,
		doc: "how long a Delhivery rate answer is reused",
		readBy: ["rates"],
	}),
	XPRESSBEES_BASE_URL: httpUrl({ doc: "Xpressbees ship API base URL", readBy: COURIER_CALLERS }),
	XPRESSBEES_USERNAME: text({
		doc: "Xpressbees login",
		readBy: COURIER_CALLERS,
		secret: true,
		keepSpaces: true,
	}),
	XPRESSBEES_PASSWORD: text({
		doc: "Xpressbees password",
		readBy: COURIER_CALLERS,
		secret: true,
		keepSpaces: true,
	}),
	XPRESSBEES_TIMEOUT_MS: ms({ dflt: 10_000, doc: "Xpressbees call timeout", readBy: COURIER_CALLERS }),
	XPRESSBEES_TOKEN_TTL_SECONDS: integer({
		dflt: 3600,
		min: 1,
		doc: "lifetime assumed for an Xpressbees token without a JWT exp, seconds",
		readBy: COURIER_CALLERS,
	}),
	XPRESSBEES_COURIER_ID: text({ doc: "Xpressbees service id (courier_id)", readBy: COURIER_CALLERS }),

	// --- rates, warehouses, intake ------------------------------------------------------------------
	RATES_SERVICEABILITY_SYNC_MS: ms({
		dflt: 86_400_000,
		min: 0,
		doc: "interval of the courier pincode-serviceability sync (0 off)",
		readBy: ["rates"],
	}),
	WAREHOUSE_SWEEP_MS: ms({
		dflt: 30_000,
		doc: "courier-registration sweeper period",
		readBy: ["warehouses"],
	}),
	PICKUP_SWEEP_MS: ms({
		dflt: 60_000,
		doc: "pickup sweep period: requests the courier has not confirmed are sent again, collected ones become picked_up, past days without a pickup scan become missed",
		readBy: ["warehouses"],
	}),
	WAREHOUSE_REGISTRATION_STALE_MS: ms({
		dflt: 60_000,
		doc: "age of a pending registration the sweeper re-enqueues",
		readBy: ["warehouses"],
	}),
	TRACKING_URL_TEMPLATE: textOr({
		dflt: "https://track.example.com/?awb={awb}",
		doc: "buyer-facing tracking page of an AWB ({awb} replaced)",
		readBy: ["intake", "ndr"],
	}),
	INTAKE_WAREHOUSE_CACHE_MS: ms({
		dflt: 5000,
		min: 0,
		doc: "how long order creation trusts a positive warehouse look-up (0 off)",
		readBy: ["intake"],
	}),
	INTAKE_BULK_WORKER: oneOf(["on", "off", "only"], {
		dflt: "on",
		anyCase: true,
		doc: "an intake process's part in bulk files",
		readBy: ["intake"],
	}),
	INTAKE_BULK_CONCURRENCY: integer({
		dflt: 1,
		min: 1,
		doc: "bulk files one intake process works on at once",
		readBy: ["intake"],
	}),
	INTAKE_BULK_LOCK_MS: ms({ dflt: 60_000, doc: "BullMQ lock of a bulk job", readBy: ["intake"] }),
	INTAKE_BULK_BATCH: integer({
		dflt: 500,
		min: 1,
		doc: "rows per bulk batch (one transaction each); read when lib/intake/bulk/process.ts is loaded",
		readBy: ["intake"],
	}),
	INTAKE_BULK_NICE: integer({
		dflt: 10,
		min: 0,
		max: 19,
		doc: "nice value every thread of an INTAKE_BULK_WORKER=only process takes",
		readBy: ["intake"],
	}),
	INTAKE_BULK_READER_NICE: integer({
		dflt: 10,
		min: 0,
		max: 19,
		doc: "nice value of the bulk reader thread; read when lib/intake/bulk/reader-thread.ts is loaded",
		readBy: ["intake"],
	}),

	// --- booking ------------------------------------------------------------------------------------
	BOOKING_CONCURRENCY: integer({
		// a job waits on its courier most of its life: jobs in flight = bookings/s × job time (record 0154)
		dflt: 100,
		min: 1,
		doc: "booking jobs in flight per process",
		readBy: ["booking"],
	}),
	BOOKING_LOCK_MS: ms({ dflt: 60_000, doc: "BullMQ lock of a booking job", readBy: ["booking"] }),
	BOOKING_JOB_ATTEMPTS: integer({
		dflt: 6,
		min: 1,
		max: 50,
		doc: "tries of a booking job",
		readBy: ["booking"],
	}),
	BOOKING_BACKOFF_MS: ms({ dflt: 2000, doc: "first retry delay of a booking job", readBy: ["booking"] }),
	BOOKING_RELAY_MS: ms({ dflt: 1000, doc: "booking outbox relay period", readBy: ["booking"] }),
	BOOKING_RELAY_BACKOFF_MS: ms({
		dflt: 1000,
		doc: "first redelivery delay of a failed booking outbox row",
		readBy: ["booking"],
	}),
	BOOKING_SWEEP_MS: ms({ dflt: 30_000, doc: "booking sweeper period", readBy: ["booking"] }),
	BOOKING_SWEEP_AFTER_MS: ms({
		dflt: 20_000,
		min: 0,
		doc: "age after which a queued attempt without a job is re-enqueued",
		readBy: ["booking"],
	}),
	BOOKING_CLAIM_STALE_MS: ms({ dflt: 60_000, doc: "age after which a claim is stale", readBy: ["booking"] }),
	BOOKING_CALL_TIMEOUT_MS: ms({
		dflt: 5000,
		doc: "booking's call and queue-add timeout",
		readBy: ["booking"],
	}),
	BOOKING_SYNC_BUDGET_MS: ms({ dflt: 25_000, doc: "how long book/sync books inline", readBy: ["booking"] }),
	BOOKING_UNSETTLED_MS: ms({
		dflt: 120_000,
		doc: "age after which the sweeper settles an attempt by asking the courier",
		readBy: ["booking"],
	}),
	BOOKING_TRACK_MS: ms({ dflt: 30_000, doc: "tracking poller period", readBy: ["booking"] }),
	BOOKING_TRACK_INTERVAL_MS: ms({
		dflt: 900_000,
		doc: "how often one open shipment is asked again",
		readBy: ["booking"],
	}),

	// --- documents ----------------------------------------------------------------------------------
	DOCUMENTS_RELAY_MS: ms({
		dflt: 1000,
		min: 10,
		doc: "documents outbox relay period",
		readBy: ["documents"],
	}),
	DOCUMENTS_RELAY_BACKOFF_MS: ms({
		dflt: 1000,
		min: 0,
		doc: "first redelivery delay of a failed documents outbox row",
		readBy: ["documents"],
	}),
	DOCUMENTS_CALL_TIMEOUT_MS: ms({ dflt: 5000, doc: "documents relay call timeout", readBy: ["documents"] }),

	// --- ndr ----------------------------------------------------------------------------------------
	NDR_ACTION_DEADLINE_MS: ms({
		dflt: 86_400_000,
		doc: "how long a merchant has to act on a failed delivery",
		readBy: ["ndr"],
	}),
	BILLING_RELAY_MS: ms({
		dflt: 1000,
		min: 10,
		doc: "billing outbox relay period (COD statuses to intake)",
		readBy: ["billing"],
	}),
	BILLING_EARLY_COD_FEE_BP: integer({
		dflt: 150,
		min: 0,
		max: 1000,
		doc: "the early-COD fee in basis points of a payout's gross COD (150 = 1.5 %), for accounts that chose early COD",
		readBy: ["billing"],
	}),
	BILLING_PAYOUT_CHECK_MS: ms({
		dflt: 900_000,
		doc: "how often billing runs today's (IST) payout cycle for the accounts whose cycle days include today and auto-accepts weight discrepancies past their 7 days (idempotent)",
		readBy: ["billing"],
	}),
	NDR_POLICY_MS: ms({ dflt: 60_000, doc: "period of the ndr policy pass", readBy: ["ndr"] }),
	NDR_POLICY_RETRY_MS: ms({
		dflt: 3_600_000,
		doc: "delay before a refused automatic re-attempt is tried again",
		readBy: ["ndr"],
	}),
	NDR_MAX_ATTEMPTS: integer({ dflt: 3, min: 1, doc: "failed delivery attempts before RTO", readBy: ["ndr"] }),
	NDR_CALL_TIMEOUT_MS: ms({ dflt: 5000, doc: "timeout of the ndr service's calls", readBy: ["ndr"] }),
	NDR_ACT_POLL_MS: ms({
		dflt: 60_000,
		doc: "first poll of a sent act's outcome (then doubled)",
		readBy: ["ndr"],
	}),
	NDR_ACTION_ATTEMPTS: integer({
		dflt: 3,
		min: 1,
		doc: "NDR acts sent to an unreachable courier at most",
		readBy: ["ndr"],
	}),
	NDR_ACTION_BACKOFF_MS: ms({
		dflt: 500,
		min: 0,
		doc: "first backoff between NDR act tries",
		readBy: ["ndr"],
	}),

	// --- buyer notifications (issue 29; lib/notifications/providers) ----------------------------------
	NOTIFY_SMS_PROVIDER: oneOf(["sandbox", "msg91"], {
		dflt: "sandbox",
		doc: "provider of buyer SMS (sandbox: records `simulated`, sends nothing)",
		readBy: ["notifications"],
	}),
	NOTIFY_WHATSAPP_PROVIDER: oneOf(["sandbox", "whatsapp_cloud"], {
		dflt: "sandbox",
		doc: "provider of buyer WhatsApp messages (sandbox: records `simulated`, sends nothing)",
		readBy: ["notifications"],
	}),
	NOTIFY_EMAIL_PROVIDER: oneOf(["sandbox", "smtp"], {
		dflt: "sandbox",
		doc: "provider of buyer e-mail (sandbox: records `simulated`, sends nothing)",
		readBy: ["notifications"],
	}),
	NOTIFY_SEND_ATTEMPTS: integer({
		dflt: 6,
		min: 1,
		max: 20,
		doc: "tries of one buyer message at a provider that is unreachable or answers 5xx / 429",
		readBy: ["notifications"],
	}),
	NOTIFY_RETRY_MS: ms({
		dflt: 30_000,
		min: 10,
		doc: "first backoff between a buyer message's tries (doubling)",
		readBy: ["notifications"],
	}),
	MSG91_BASE_URL: httpUrl({
		doc: "MSG91 API base URL (default https://control.msg91.com)",
		readBy: ["notifications"],
	}),
	MSG91_AUTH_KEY: text({ doc: "MSG91 auth key (header `authkey`)", readBy: ["notifications"], secret: true }),
	MSG91_SENDER: text({ doc: "MSG91 DLT-registered sender header (6 letters)", readBy: ["notifications"] }),
	MSG91_TEMPLATES: text({
		doc: 'MSG91 flow templates: JSON `{"<event>.<lang>": {"template_id": …, "dlt_template_id": …}}`',
		readBy: ["notifications"],
	}),
	MSG91_CALLBACK_TOKEN: text({
		doc: "token MSG91's delivery-report and inbound-SMS webhooks carry (`?token=`)",
		readBy: ["notifications"],
		secret: true,
	}),
	MSG91_TIMEOUT_MS: ms({ dflt: 10_000, doc: "MSG91 per-call timeout", readBy: ["notifications"] }),
	WHATSAPP_BASE_URL: httpUrl({
		doc: "WhatsApp Cloud API base URL (default https://graph.facebook.com)",
		readBy: ["notifications"],
	}),
	WHATSAPP_API_VERSION: textOr({
		dflt: "v21.0",
		doc: "Graph API version of the WhatsApp Cloud API",
		readBy: ["notifications"],
	}),
	WHATSAPP_PHONE_NUMBER_ID: text({ doc: "WhatsApp Business phone number id", readBy: ["notifications"] }),
	WHATSAPP_TOKEN: text({ doc: "WhatsApp Cloud API access token", readBy: ["notifications"], secret: true }),
	WHATSAPP_APP_SECRET: text({
		doc: "Meta app secret: key of the webhooks' `X-Hub-Signature-256`",
		readBy: ["notifications"],
		secret: true,
		keepSpaces: true,
	}),
	WHATSAPP_VERIFY_TOKEN: text({
		doc: "token of the WhatsApp webhook's subscription check (`hub.verify_token`)",
		readBy: ["notifications"],
		secret: true,
	}),
	WHATSAPP_TEMPLATES: text({
		doc: 'approved WhatsApp template names: JSON `{"<event>": "<name>"}` (default the event\'s name)',
		readBy: ["notifications"],
	}),
	WHATSAPP_TIMEOUT_MS: ms({
		dflt: 10_000,
		doc: "WhatsApp Cloud API per-call timeout",
		readBy: ["notifications"],
	}),
	SMTP_URL: text({
		doc: "SMTP server of buyer e-mail, `smtp://user:pass@host:port` or `smtps://…`",
		readBy: ["notifications"],
		secret: true,
	}),
	SMTP_FROM: text({
		doc: "sender address of buyer e-mail (the brand name is its display name)",
		readBy: ["notifications"],
	}),
	SMTP_TIMEOUT_MS: ms({ dflt: 15_000, doc: "SMTP connection and answer timeout", readBy: ["notifications"] }),

	// --- webhooks -----------------------------------------------------------------------------------
	WEBHOOK_SECRET_KEY: text({
		doc: "key encrypting the endpoints' signing secrets at rest (default derived from LABEL_LINK_SECRET)",
		readBy: ["webhooks"],
		secret: true,
		keepSpaces: true,
	}),
	WEBHOOK_CONCURRENCY: integer({
		dflt: 100,
		min: 1,
		doc: "deliveries in flight per process",
		readBy: ["webhooks"],
	}),
	WEBHOOK_ENDPOINT_INFLIGHT: integer({
		dflt: 10,
		min: 1,
		doc: "deliveries in flight to one endpoint per process",
		readBy: ["webhooks"],
	}),
	WEBHOOK_TIMEOUT_MS: ms({ dflt: 10_000, doc: "budget of one delivery attempt", readBy: ["webhooks"] }),
	WEBHOOK_BACKOFF_MS: ms({ dflt: 20_000, doc: "first retry delay of a delivery", readBy: ["webhooks"] }),
	WEBHOOK_MAX_ATTEMPTS: integer({
		dflt: 13,
		min: 1,
		max: 50,
		doc: "attempts of a delivery",
		readBy: ["webhooks"],
	}),
	WEBHOOK_MAX_AGE_H: positive({
		dflt: 24,
		doc: "hours after which a delivery is given up",
		readBy: ["webhooks"],
	}),
	WEBHOOK_PREVIOUS_SECRET_H: positive({
		dflt: 24,
		doc: "hours a rotated-out secret still signs",
		readBy: ["webhooks"],
	}),
	WEBHOOK_ORDER_HOLD_MS: ms({
		dflt: 30_000,
		doc: "longest wait for a missing earlier status event",
		readBy: ["webhooks"],
	}),
	WEBHOOK_SWEEP_MS: ms({ dflt: 30_000, doc: "webhook sweeper period", readBy: ["webhooks"] }),
	WEBHOOK_LOCK_MS: ms({ dflt: 30_000, doc: "BullMQ lock of a delivery job", readBy: ["webhooks"] }),
	WEBHOOK_RESPONSE_CAP_BYTES: integer({
		dflt: 4096,
		min: 1,
		doc: "bytes of a receiver's answer read and kept",
		readBy: ["webhooks"],
	}),
	WEBHOOK_MAX_ENDPOINTS: integer({ dflt: 20, min: 1, doc: "endpoints per account", readBy: ["webhooks"] }),
	WEBHOOK_CALL_TIMEOUT_MS: ms({
		dflt: 5000,
		doc: "timeout of the webhooks service's calls",
		readBy: ["webhooks"],
	}),
} satisfies Record<string, SettingSpec<unknown>>;

/** A declared variable's name. */
export type SettingName = keyof typeof SETTINGS;
/** The parsed value of variable `N`. */
export type SettingValue<N extends SettingName> = Exclude<ReturnType<(typeof SETTINGS)[N]["parse"]>, Invalid>;

/** The message of a value `raw` of `name` that is not allowed (a secret's value is not repeated). */
function invalidMessage(name: SettingName, raw: string | undefined): string {
	const spec: SettingSpec<unknown> = SETTINGS[name];
	const got = spec.secret ? `got a value of ${String(raw).length} characters` : `got ${JSON.stringify(raw)}`;
	return `${name} must be ${spec.allowed} (${got})`;
}

/**
 * Parsed values of `process.env` by name, with the raw value they were parsed from and the count of environment
 * writes ({@link envWrites}) at which it was read (-1: read while `process.env` was not the watched one).
 */
const memo = new Map<string, { raw: string | undefined; value: unknown; writes: number }>();

/**
 * The value of environment variable `name` in `env` (`process.env` unless
 * given), parsed as {@link SETTINGS} declares it: its default when unset.
 * Current at each call: a value of `process.env` is parsed once per raw value and, while nothing has been written
 * to `process.env` since it was read, not even read again (./env-writes.ts; issue 32, record 0151).
 * @throws Error `NAME must be <allowed> (got "<value>")` when the value is not allowed
 */
export function setting<N extends SettingName>(
	name: N,
	env: NodeJS.ProcessEnv = process.env,
): SettingValue<N> {
	const own = env === process.env;
	if (!own) return parsed(name, env[name]) as SettingValue<N>;
	const m = memo.get(name);
	const writes = isWatchedEnv(env) ? envWrites() : -1;
	if (m !== undefined && writes >= 0 && m.writes === writes) return m.value as SettingValue<N>;
	const raw = env[name];
	if (m !== undefined && m.raw === raw) {
		m.writes = writes;
		return m.value as SettingValue<N>;
	}
	const value = parsed(name, raw);
	memo.set(name, { raw, value, writes });
	return value as SettingValue<N>;
}

/**
 * `raw` parsed as {@link SETTINGS} declares variable `name`.
 * @throws Error `NAME must be <allowed> (got "<value>")` when the value is not allowed
 */
function parsed(name: SettingName, raw: string | undefined): unknown {
	const spec: SettingSpec<unknown> = SETTINGS[name];
	const value = spec.parse(raw);
	if (value === INVALID) throw new Error(invalidMessage(name, raw));
	return value;
}

/**
 * Several settings at once, as an object: `settingsOf({relayMs: "DOCUMENTS_RELAY_MS"}, env)`
 * = `{relayMs: setting("DOCUMENTS_RELAY_MS", env)}`, each value typed as {@link SETTINGS} declares it.
 * @throws Error naming the first variable whose value is not allowed (as {@link setting})
 */
export function settingsOf<const M extends Record<string, SettingName>>(
	names: M,
	env: NodeJS.ProcessEnv = process.env,
): { -readonly [K in keyof M]: SettingValue<M[K]> } {
	const out: Record<string, unknown> = {};
	for (const [key, name] of Object.entries(names)) out[key] = setting(name, env);
	return out as { -readonly [K in keyof M]: SettingValue<M[K]> };
}

/**
 * Validates every declared variable of `env` at once (the process start,
 * lib/platform/system.ts, runs it before anything else).
 * @throws Error listing every variable whose value is not allowed, one per line
 */
export function checkEnvironment(env: NodeJS.ProcessEnv = process.env): void {
	const problems: string[] = [];
	for (const name of Object.keys(SETTINGS) as SettingName[]) {
		try {
			setting(name, env);
		} catch (err) {
			problems.push((err as Error).message);
		}
	}
	if (problems.length) throw new Error(`invalid configuration:\n  ${problems.join("\n  ")}`);
}

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
	/** HMAC key of signed label links (signs and verifies; lib/shared/label-link.ts). */
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

/**
 * Parses `LABEL_LINK_PREVIOUS_SECRETS`: comma-separated, blanks trimmed,
 * empties and repeats dropped (a secret therefore cannot contain a comma).
 */
export function parsePreviousSecrets(raw: string | undefined): string[] {
	return [...setting("LABEL_LINK_PREVIOUS_SECRETS", { LABEL_LINK_PREVIOUS_SECRETS: raw })];
}

/**
 * `PUBLIC_BASE_URL` checked: an http(s) URL with an optional path, no query,
 * fragment or credentials; trailing slashes dropped; undefined when unset.
 * @throws Error when malformed (the process refuses to start)
 */
export function parsePublicBaseUrl(v: string | undefined): string | undefined {
	return setting("PUBLIC_BASE_URL", { PUBLIC_BASE_URL: v });
}

/**
 * Refuses (throws) a process running the gateway with `AUTH_JWKS_URL` but
 * without `AUTH_ISSUER` or `AUTH_AUDIENCE` (docs/ARCHITECTURE.md §2, issue
 * 12): tokens of any issuer or audience sharing the key set would otherwise be
 * accepted. The zero-setup start sets both to its development identity
 * provider's own values before reading the configuration (lib/platform/system.ts).
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
 * Parses the environment into a {@link RuntimeConfig} (each field through
 * {@link setting}). Throws when a setting it reads is malformed (e.g. an
 * unknown service name in `SERVICES`), and when a process
 * running the gateway names `AUTH_JWKS_URL` without `AUTH_ISSUER` and
 * `AUTH_AUDIENCE` ({@link checkAuthConfig}).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): RuntimeConfig {
	const services = setting("SERVICES", env);
	const zeroSetup = setting("MSA_ZERO_SETUP", env) === true;
	const simulatorPort = setting("SANDBOX_COURIER_PORT", env);
	const cfg: RuntimeConfig = {
		port: setting("PORT", env),
		databaseUrl: setting("DATABASE_URL", env) ?? "",
		redisUrl: setting("REDIS_URL", env),
		queuePrefix: setting("QUEUE_PREFIX", env),
		transporter: setting("TRANSPORTER", env),
		services: services.length ? [...services] : ALL_SERVICES.filter((s) => s !== "devauth"),
		authJwksUrl: setting("AUTH_JWKS_URL", env),
		authIssuer: setting("AUTH_ISSUER", env),
		authAudience: setting("AUTH_AUDIENCE", env),
		labelLinkSecret: setting("LABEL_LINK_SECRET", env),
		labelLinkPreviousSecrets: [...setting("LABEL_LINK_PREVIOUS_SECRETS", env)],
		publicBaseUrl: setting("PUBLIC_BASE_URL", env),
		rateLimitLinkPerMin: setting("RATE_LIMIT_LINK_PER_MIN", env),
		rateLimitAccountPerMin: setting("RATE_LIMIT_ACCOUNT_PER_MIN", env),
		trustProxy: setting("TRUST_PROXY", env),
		idempotencyTtlS: setting("IDEMPOTENCY_TTL_S", env),
		idempotencyLockS: setting("IDEMPOTENCY_LOCK_S", env),
		idempotencyMaxBodyBytes: setting("IDEMPOTENCY_MAX_BODY_BYTES", env),
		sandbox: setting("SANDBOX", env) ?? zeroSetup,
		simulatorPort,
		simulatorUrl: setting("SANDBOX_COURIER_URL", env) ?? `http://127.0.0.1:${simulatorPort}`,
		zeroSetup,
		namespace: setting("NAMESPACE", env),
		dbPoolMax: setting("DB_POOL_MAX", env),
		dbApplicationName: (
			setting("DB_APPLICATION_NAME", env) ?? `msa-${services.length ? services.join("+") : "all"}`
		).slice(0, 63),
		logLevel: setting("LOGLEVEL", env),
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
		token: setting("SANDBOX_COURIER_TOKEN", env),
	};
}
