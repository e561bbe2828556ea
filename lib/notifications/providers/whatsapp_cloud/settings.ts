/**
 * Settings of the WhatsApp Business Cloud API connector (Karrio-style: settings, proxy, mapper;
 * lib/notifications/providers/types.ts). Read from the environment when the provider is built
 * (lib/platform/config.ts declares every variable).
 *
 * Environment:
 * - `WHATSAPP_BASE_URL` → Graph API base URL (default `https://graph.facebook.com`)
 * - `WHATSAPP_API_VERSION` → Graph API version (default `v21.0`)
 * - `WHATSAPP_PHONE_NUMBER_ID` → the business phone number id messages are sent from
 * - `WHATSAPP_TOKEN` → access token, sent only as `Authorization: Bearer …` (a Secret)
 * - `WHATSAPP_APP_SECRET` → the Meta app secret keying the webhooks' `X-Hub-Signature-256`;
 *   unset → every webhook POST is refused (401)
 * - `WHATSAPP_VERIFY_TOKEN` → the token of the webhook subscription check (`hub.verify_token`);
 *   unset → every check is refused (401)
 * - `WHATSAPP_TEMPLATES` → approved template names by event, JSON `{"<event>": "<name>"}`; an event
 *   without an entry uses its own name (`shipped`, `out_for_delivery`, …). One name serves both
 *   languages: the template must be approved in `en` and `hi`.
 * - `WHATSAPP_TIMEOUT_MS` → per-call timeout in ms (default 10000)
 */
import { setting } from "../../../platform/config";
import { jsonObjectSetting } from "../values";

/** Meta's Graph API host (https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages). */
export const WHATSAPP_DEFAULT_BASE_URL = "https://graph.facebook.com";

/** Connection settings of one WhatsApp Business phone number. */
export interface WhatsAppSettings {
	/** Graph API base URL without trailing slash */
	baseUrl: string;
	/** Graph API version, e.g. `v21.0` */
	version: string;
	/** business phone number id */
	phoneNumberId: string;
	/** access token (never logged) */
	token: string;
	/** app secret of the webhook signatures (never logged); empty → every webhook POST is refused */
	appSecret: string;
	/** `hub.verify_token` of the subscription check (never logged); empty → every check is refused */
	verifyToken: string;
	/** approved template names by event (absent → the event's name) */
	templates: Readonly<Record<string, string>>;
	/** per-call timeout, ms */
	timeoutMs: number;
}

/**
 * Parses `WHATSAPP_TEMPLATES`: a JSON object of event → approved template name (Meta's names are
 * lower-case letters, digits and underscores).
 * @throws Error naming the variable and the offending key (never a value) when it is not allowed
 */
export function parseWhatsAppTemplates(raw: string): Record<string, string> {
	const parsed = jsonObjectSetting(raw, "WHATSAPP_TEMPLATES", '{"<event>": "<approved template name>"}');
	const out: Record<string, string> = {};
	for (const [event, name] of Object.entries(parsed)) {
		if (typeof name !== "string" || !/^[a-z0-9_]{1,512}$/.test(name))
			throw new Error(
				`WHATSAPP_TEMPLATES: "${event}" needs a template name of lower-case letters, digits and _`,
			);
		out[event] = name;
	}
	return out;
}

/**
 * Builds the WhatsApp Cloud API settings from `env` (read only through `setting()` of lib/platform/config.ts).
 * @throws Error when `WHATSAPP_PHONE_NUMBER_ID` or `WHATSAPP_TOKEN` is missing, or `WHATSAPP_TEMPLATES`
 *   or another value is not allowed (the message never holds a secret)
 */
export function whatsAppSettings(env: NodeJS.ProcessEnv = process.env): WhatsAppSettings {
	const phoneNumberId = setting("WHATSAPP_PHONE_NUMBER_ID", env);
	if (!phoneNumberId) throw new Error("WHATSAPP_PHONE_NUMBER_ID is not set");
	if (!/^\d+$/.test(phoneNumberId)) throw new Error("WHATSAPP_PHONE_NUMBER_ID must be digits");
	const token = setting("WHATSAPP_TOKEN", env);
	if (!token) throw new Error("WHATSAPP_TOKEN is not set");
	const version = setting("WHATSAPP_API_VERSION", env);
	if (!/^v\d+\.\d+$/.test(version))
		throw new Error(`WHATSAPP_API_VERSION must look like v21.0 (got "${version}")`);
	const rawTemplates = setting("WHATSAPP_TEMPLATES", env);
	return {
		baseUrl: (setting("WHATSAPP_BASE_URL", env) ?? WHATSAPP_DEFAULT_BASE_URL).replace(/\/+$/, ""),
		version,
		phoneNumberId,
		token,
		appSecret: setting("WHATSAPP_APP_SECRET", env) ?? "",
		verifyToken: setting("WHATSAPP_VERIFY_TOKEN", env) ?? "",
		templates: rawTemplates ? parseWhatsAppTemplates(rawTemplates) : {},
		timeoutMs: setting("WHATSAPP_TIMEOUT_MS", env),
	};
}
