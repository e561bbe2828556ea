/**
 * Settings of the Delhivery B2C connector (Karrio-style: settings, proxy,
 * mapper). Read from the environment when an adapter is built, never from code:
 * the base URL differs between staging and production, the token is a Secret.
 *
 * Environment:
 * - `DELHIVERY_BASE_URL` → API base URL, no default (staging in the dev overlay only), e.g. `https://staging-express.delhivery.com`
 * - `DELHIVERY_TOKEN` → API token, sent as `Authorization: Token <token>` (never logged)
 * - `DELHIVERY_TIMEOUT_MS` → per-call timeout in ms (default 10000)
 * - `DELHIVERY_WEBHOOK_TOKEN` → shared token Delhivery sends in header `x-delhivery-token` on pushed scans
 * - `DELHIVERY_OWN_LABEL` → `false` when the account does not use Delhivery's packing slip (default true)
 * - `DELHIVERY_RATE_LIMIT` / `DELHIVERY_RATE_WINDOW_MS` → rate API calls per window (default 40 per 60000 ms)
 * - `DELHIVERY_RATE_CACHE_MS` → how long a rate answer is reused for the same query (default 60000)
 */
import { setting } from "../../platform/config";

/** Connection settings of one Delhivery account. */
export interface DelhiverySettings {
	/** our courier code (e.g. `delhivery-surface`) */
	courierCode: string;
	/** API base URL without trailing slash */
	baseUrl: string;
	/** API token (never logged) */
	token: string;
	/** per-call timeout, ms */
	timeoutMs: number;
	/** shared token of pushed scans (never logged); empty → every push is refused */
	webhookToken: string;
	/** whether labels are Delhivery's packing slips */
	ownLabel: boolean;
	/** rate API calls allowed per {@link DelhiverySettings.rateWindowMs} */
	rateLimit: number;
	/** rate limit window, ms */
	rateWindowMs: number;
	/** rate answer cache lifetime, ms */
	rateCacheMs: number;
}

/**
 * Builds the settings of courier `courierCode` from the environment.
 * Throws an Error when `DELHIVERY_BASE_URL` or `DELHIVERY_TOKEN` is missing, or a
 * value is not allowed (lib/platform/config.ts).
 */
export function delhiverySettings(
	courierCode: string,
	env: NodeJS.ProcessEnv = process.env,
): DelhiverySettings {
	const baseUrl = (setting("DELHIVERY_BASE_URL", env) ?? "").replace(/\/+$/, "");
	if (!baseUrl) throw new Error("DELHIVERY_BASE_URL is not set");
	const token = setting("DELHIVERY_TOKEN", env);
	if (!token) throw new Error("DELHIVERY_TOKEN is not set");
	return {
		courierCode,
		baseUrl,
		token,
		timeoutMs: setting("DELHIVERY_TIMEOUT_MS", env),
		webhookToken: setting("DELHIVERY_WEBHOOK_TOKEN", env) ?? "",
		ownLabel: setting("DELHIVERY_OWN_LABEL", env),
		rateLimit: setting("DELHIVERY_RATE_LIMIT", env),
		rateWindowMs: setting("DELHIVERY_RATE_WINDOW_MS", env),
		rateCacheMs: setting("DELHIVERY_RATE_CACHE_MS", env),
	};
}
