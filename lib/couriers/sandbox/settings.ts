/**
 * Settings of the sandbox courier connector (Karrio-style: settings, proxy,
 * mapper). Read lazily from the runtime configuration so a test can set the
 * environment before the first call.
 *
 * Environment:
 * - `SANDBOX_COURIER_URL` / `SANDBOX_COURIER_PORT` → base URL (lib/platform/config.ts `simulatorUrl`)
 * - `SANDBOX_COURIER_TIMEOUT_MS` → per-call timeout in ms (default 5000)
 * - `SANDBOX_COURIER_TOKEN` → API token sent as `Authorization: Token <token>` (default `sandbox-token`)
 * - `SANDBOX_WEBHOOK_SECRET` → HMAC key of pushed scans (the simulator signs with it, the
 *   adapter's `verifyPush` checks it). No default: unset, every push is refused and the simulator
 *   pushes nothing; the zero-setup start generates one per installation (lib/platform/system.ts, kept in
 *   `<data dir>/sandbox-webhook-secret`); booking and a pushing simulator refuse to start with
 *   `SANDBOX=1` and no key ({@link requireSandboxWebhookSecret}).
 * - `SANDBOX_OWN_LABEL_COURIERS` → comma-separated courier codes that issue their own label file
 *   (Delhivery's packing slip, `GET /api/p/packing_slip?wbns=`); default `sbx-lite`; `none` for no
 *   courier. The simulator serves packing slips for these codes only, the adapter's `issuesOwnLabel`
 *   answers from the same list.
 */
import { loadConfig, setting } from "../../platform/config";

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
	/** HMAC-SHA256 key of pushed scan bodies, "" when none is configured (every push refused; never logged). */
	webhookSecret: string;
	/** Whether this courier account issues its own label file (packing slip). */
	ownLabel: boolean;
}

/** Default API token of the sandbox courier accounts (the simulator accepts the same default). */
export const DEFAULT_SANDBOX_TOKEN = setting("SANDBOX_COURIER_TOKEN", {});

/** The API token the simulator expects and the adapter sends. */
export function sandboxToken(env: NodeJS.ProcessEnv = process.env): string {
	return setting("SANDBOX_COURIER_TOKEN", env);
}

/**
 * The key pushed scan bodies are signed with: `SANDBOX_WEBHOOK_SECRET`
 * trimmed, or "" when unset or blank (no default: a published default would
 * let anyone forge scans; docs/decisions/0078-sandbox-scan-signatures.md).
 */
export function sandboxWebhookSecret(env: NodeJS.ProcessEnv = process.env): string {
	return setting("SANDBOX_WEBHOOK_SECRET", env) ?? "";
}

/**
 * Refuses (throws) to start `service` (booking, or the simulator when it
 * pushes) with the sandbox on (`loadConfig().sandbox`) and no
 * `SANDBOX_WEBHOOK_SECRET`: the sandbox couriers' pushes could not be signed
 * or checked. The zero-setup start sets one before any service starts
 * (lib/platform/system.ts); other deployments set it in their shared configuration.
 * @throws Error naming the variable
 */
export function requireSandboxWebhookSecret(service: string, env: NodeJS.ProcessEnv = process.env): void {
	if (!loadConfig(env).sandbox || sandboxWebhookSecret(env)) return;
	throw new Error(
		`${service}: SANDBOX_WEBHOOK_SECRET is required with SANDBOX=1 (the key signing the sandbox couriers' scan pushes; the same value in every process)`,
	);
}

/** Couriers issuing their own label file when `SANDBOX_OWN_LABEL_COURIERS` is unset. */
export const DEFAULT_SANDBOX_OWN_LABEL_COURIERS: readonly string[] = setting(
	"SANDBOX_OWN_LABEL_COURIERS",
	{},
);

/**
 * The sandbox courier codes that issue their own label file:
 * `SANDBOX_OWN_LABEL_COURIERS` (comma-separated; `none` or empty → no courier),
 * else {@link DEFAULT_SANDBOX_OWN_LABEL_COURIERS}.
 */
export function sandboxOwnLabelCouriers(env: NodeJS.ProcessEnv = process.env): string[] {
	return [...setting("SANDBOX_OWN_LABEL_COURIERS", env)];
}

/** Builds the settings of courier `courierCode` from the environment. */
export function sandboxSettings(courierCode: string, env: NodeJS.ProcessEnv = process.env): SandboxSettings {
	const cfg = loadConfig(env);
	return {
		baseUrl: cfg.simulatorUrl.replace(/\/+$/, ""),
		courierCode,
		token: sandboxToken(env),
		timeoutMs: setting("SANDBOX_COURIER_TIMEOUT_MS", env),
		webhookSecret: sandboxWebhookSecret(env),
		ownLabel: sandboxOwnLabelCouriers(env).includes(courierCode),
	};
}
