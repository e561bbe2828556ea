/**
 * Settings of the MSG91 SMS connector (Karrio-style: settings, proxy, mapper; lib/notifications/providers/types.ts).
 * Read from the environment when the provider is built (lib/platform/config.ts declares every variable).
 *
 * Environment:
 * - `MSG91_BASE_URL` → API base URL (default `https://control.msg91.com`)
 * - `MSG91_AUTH_KEY` → auth key, sent only as header `authkey` (a Secret: never in a URL, an error or a log line)
 * - `MSG91_SENDER` → the DLT-registered sender header (6 letters), sent as `sender` on every send (TRAI DLT rules)
 * - `MSG91_TEMPLATES` → JSON `{"<event>.<lang>": {"template_id": "<MSG91 flow/template id>",
 *   "dlt_template_id": "<19-digit DLT content template id>"}}`, e.g. `{"shipped.en": {…}, "shipped.hi": {…}}`
 * - `MSG91_CALLBACK_TOKEN` → the token MSG91's delivery-report and inbound-SMS webhooks carry as `?token=`
 *   (MSG91 signs nothing); unset → every callback is refused (401)
 * - `MSG91_TIMEOUT_MS` → per-call timeout in ms (default 10000)
 */
import { setting } from "../../../platform/config";
import { jsonObjectSetting } from "../values";

/** MSG91's default API host (https://docs.msg91.com/sms/send-sms). */
export const MSG91_DEFAULT_BASE_URL = "https://control.msg91.com";

/** The MSG91 template of one `<event>.<lang>`: its flow/template id and the DLT content template id behind it. */
export interface Msg91Template {
	/** MSG91's template (flow) id, the Flow API's `template_id` */
	template_id: string;
	/** the TRAI DLT content template id registered for this text, sent as `DLT_TE_ID` */
	dlt_template_id: string;
}

/** Connection settings of one MSG91 account. */
export interface Msg91Settings {
	/** API base URL without trailing slash */
	baseUrl: string;
	/** auth key (header `authkey`; never logged) */
	authKey: string;
	/** DLT-registered sender header */
	sender: string;
	/** templates by `<event>.<lang>` (e.g. `shipped.hi`) */
	templates: Readonly<Record<string, Msg91Template>>;
	/** the webhooks' `?token=` (never logged); empty → every callback is refused */
	callbackToken: string;
	/** per-call timeout, ms */
	timeoutMs: number;
}

/**
 * Parses `MSG91_TEMPLATES` (see the module doc). Keys are `<event>.<lang>` (lang `en` or `hi`); each value
 * needs a non-empty `template_id` and `dlt_template_id` (strings or numbers, kept as strings).
 * @throws Error naming the variable and the offending key (never a value) when the JSON or a key is not allowed
 */
export function parseMsg91Templates(raw: string): Record<string, Msg91Template> {
	const parsed = jsonObjectSetting(
		raw,
		"MSG91_TEMPLATES",
		'{"<event>.<lang>": {template_id, dlt_template_id}}',
	);
	const out: Record<string, Msg91Template> = {};
	for (const [key, v] of Object.entries(parsed)) {
		if (!/^[a-z_]+\.(en|hi)$/.test(key))
			throw new Error(`MSG91_TEMPLATES: key "${key}" is not "<event>.<lang>" (lang en or hi)`);
		const o = (typeof v === "object" && v !== null ? v : {}) as Record<string, unknown>;
		const id = idOf(o.template_id);
		const dlt = idOf(o.dlt_template_id);
		if (!id || !dlt) throw new Error(`MSG91_TEMPLATES: "${key}" needs a template_id and a dlt_template_id`);
		out[key] = { template_id: id, dlt_template_id: dlt };
	}
	if (Object.keys(out).length === 0) throw new Error("MSG91_TEMPLATES has no template");
	return out;
}

function idOf(v: unknown): string {
	if (typeof v === "number" && Number.isSafeInteger(v)) return String(v);
	return typeof v === "string" ? v.trim() : "";
}

/**
 * Builds the MSG91 settings from `env` (read only through `setting()` of lib/platform/config.ts).
 * @throws Error when `MSG91_AUTH_KEY`, `MSG91_SENDER` or `MSG91_TEMPLATES` is missing, `MSG91_TEMPLATES`
 *   is not allowed ({@link parseMsg91Templates}) or a value is invalid (the message never holds a secret)
 */
export function msg91Settings(env: NodeJS.ProcessEnv = process.env): Msg91Settings {
	const authKey = setting("MSG91_AUTH_KEY", env);
	if (!authKey) throw new Error("MSG91_AUTH_KEY is not set");
	const sender = setting("MSG91_SENDER", env);
	if (!sender) throw new Error("MSG91_SENDER is not set (the DLT-registered sender header)");
	const rawTemplates = setting("MSG91_TEMPLATES", env);
	if (!rawTemplates)
		throw new Error("MSG91_TEMPLATES is not set (the flow and DLT template ids per event.lang)");
	return {
		baseUrl: (setting("MSG91_BASE_URL", env) ?? MSG91_DEFAULT_BASE_URL).replace(/\/+$/, ""),
		authKey,
		sender,
		templates: parseMsg91Templates(rawTemplates),
		callbackToken: setting("MSG91_CALLBACK_TOKEN", env) ?? "",
		timeoutMs: setting("MSG91_TIMEOUT_MS", env),
	};
}
