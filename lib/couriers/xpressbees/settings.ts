/**
 * Settings of the Xpressbees courier connector (Karrio-style: settings, proxy,
 * mapper). Read from the environment when an adapter is built; nothing here
 * has a default URL or credential in code (the dev overlay sets the staging URL).
 *
 * Environment:
 * - `XPRESSBEES_BASE_URL` → API base URL, e.g. `https://shipment.xpressbees.com` (no trailing slash needed)
 * - `XPRESSBEES_USERNAME` → the account's login e-mail (`POST /api/users/login` `email`)
 * - `XPRESSBEES_PASSWORD` → the account's password (never logged)
 * - `XPRESSBEES_TIMEOUT_MS` → per-call timeout in ms (default 10000)
 * - `XPRESSBEES_TOKEN_TTL_SECONDS` → lifetime assumed for a login token whose JWT carries no `exp` (default 3600)
 * - `XPRESSBEES_COURIER_ID` → Xpressbees service id sent as `courier_id` at booking and picked among rates
 *   (optional; absent: Xpressbees chooses at booking, the rate of the asked mode is picked by name)
 */
import { setting } from "../../platform/config";

/** Where the adapter may write a line (a Moleculer logger fits). Tokens and passwords never reach it. */
export interface XpressbeesLogger {
	info(msg: string): void;
	warn(msg: string): void;
}

/** Connection settings of one Xpressbees account. */
export interface XpressbeesSettings {
	/** API base URL without trailing slash; "" when not configured (calls then throw). */
	baseUrl: string;
	/** our courier code (couriers table `code`), for messages */
	courierCode: string;
	/** login e-mail */
	username: string;
	/** login password (never logged) */
	password: string;
	/** per-call timeout, ms */
	timeoutMs: number;
	/** assumed token lifetime, s, when the token is not a JWT with `exp` */
	tokenTtlSeconds: number;
	/** a token is renewed this many seconds before it expires */
	renewBeforeSeconds: number;
	/** Xpressbees service id (`courier_id`), or null */
	courierId: string | null;
	/** log sink (login / re-login lines only) */
	logger: XpressbeesLogger;
}

/** A logger that drops everything (the default: the adapter has nothing it must say). */
export const SILENT_LOGGER: XpressbeesLogger = { info: () => {}, warn: () => {} };

/** Builds the settings of courier `courierCode` from the environment (see the module comment for the variables). */
export function xpressbeesSettings(
	courierCode: string,
	env: NodeJS.ProcessEnv = process.env,
): XpressbeesSettings {
	return {
		baseUrl: (setting("XPRESSBEES_BASE_URL", env) ?? "").replace(/\/+$/, ""),
		courierCode,
		username: setting("XPRESSBEES_USERNAME", env) ?? "",
		password: setting("XPRESSBEES_PASSWORD", env) ?? "",
		timeoutMs: setting("XPRESSBEES_TIMEOUT_MS", env),
		tokenTtlSeconds: setting("XPRESSBEES_TOKEN_TTL_SECONDS", env),
		renewBeforeSeconds: 60,
		courierId: setting("XPRESSBEES_COURIER_ID", env) ?? null,
		logger: SILENT_LOGGER,
	};
}
