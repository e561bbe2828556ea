/**
 * Settings of the sandbox courier connector (Karrio-style: settings, proxy,
 * mapper). Read lazily from the runtime configuration so a test can set the
 * environment before the first call.
 *
 * Environment:
 * - `SANDBOX_COURIER_URL` / `SANDBOX_COURIER_PORT` → base URL (lib/config.ts `simulatorUrl`)
 * - `SANDBOX_COURIER_TIMEOUT_MS` → per-call timeout in ms (default 5000)
 * - `SANDBOX_COURIER_TOKEN` → API token sent as `Authorization: Token <token>` (default `sandbox-token`)
 * - `SANDBOX_WEBHOOK_SECRET` → HMAC secret of pushed scans (default `sandbox-webhook-secret`; the
 *   simulator signs with it, the adapter's `verifyPush` checks it)
 * - `SANDBOX_OWN_LABEL_COURIERS` → comma-separated courier codes that issue their own label file
 *   (Delhivery's packing slip, `GET /api/p/packing_slip?wbns=`); default `sbx-lite`; `none` for no
 *   courier. The simulator serves packing slips for these codes only, the adapter's `issuesOwnLabel`
 *   answers from the same list.
 */
import { loadConfig } from "../../config";

/** Connection settings of one sandbox courier account. */
export interface SandboxSettings {
	/** Simulator base URL, e.g. `http://127.0.0.1:4010` (no trailing slash). */
	baseUrl: string;
	/** The simulator's courier code (`sbx-express`, `sbx-surface`, `sbx-reverse`, `sbx-lite`). */
	courierCode: string;
	/** API token (never logged). */
	token: string;
	/** Per-call timeout in ms. */
	timeoutMs: number;
	/** HMAC-SHA256 secret of pushed scan bodies (never logged). */
	webhookSecret: string;
	/** Whether this courier account issues its own label file (packing slip). */
	ownLabel: boolean;
}

/** Default API token of the sandbox courier accounts (the simulator accepts the same default). */
export const DEFAULT_SANDBOX_TOKEN = "sandbox-token";

/** The API token the simulator expects and the adapter sends. */
export function sandboxToken(env: NodeJS.ProcessEnv = process.env): string {
	return env.SANDBOX_COURIER_TOKEN || DEFAULT_SANDBOX_TOKEN;
}

/** Default secret of pushed scans (the simulator signs with the same default). */
export const DEFAULT_SANDBOX_WEBHOOK_SECRET = "sandbox-webhook-secret";

/** The secret pushed scan bodies are signed with (`SANDBOX_WEBHOOK_SECRET`, else the default). */
export function sandboxWebhookSecret(env: NodeJS.ProcessEnv = process.env): string {
	return env.SANDBOX_WEBHOOK_SECRET || DEFAULT_SANDBOX_WEBHOOK_SECRET;
}

/** Couriers issuing their own label file when `SANDBOX_OWN_LABEL_COURIERS` is unset. */
export const DEFAULT_SANDBOX_OWN_LABEL_COURIERS: readonly string[] = ["sbx-lite"];

/**
 * The sandbox courier codes that issue their own label file:
 * `SANDBOX_OWN_LABEL_COURIERS` (comma-separated; `none` or empty → no courier),
 * else {@link DEFAULT_SANDBOX_OWN_LABEL_COURIERS}.
 */
export function sandboxOwnLabelCouriers(env: NodeJS.ProcessEnv = process.env): string[] {
	const raw = env.SANDBOX_OWN_LABEL_COURIERS;
	if (raw === undefined) return [...DEFAULT_SANDBOX_OWN_LABEL_COURIERS];
	return raw
		.split(",")
		.map((c) => c.trim())
		.filter((c) => c && c !== "none");
}

/** Builds the settings of courier `courierCode` from the environment. */
export function sandboxSettings(courierCode: string, env: NodeJS.ProcessEnv = process.env): SandboxSettings {
	const cfg = loadConfig(env);
	const t = Number(env.SANDBOX_COURIER_TIMEOUT_MS);
	return {
		baseUrl: cfg.simulatorUrl.replace(/\/+$/, ""),
		courierCode,
		token: sandboxToken(env),
		timeoutMs: Number.isInteger(t) && t > 0 ? t : 5000,
		webhookSecret: sandboxWebhookSecret(env),
		ownLabel: sandboxOwnLabelCouriers(env).includes(courierCode),
	};
}
