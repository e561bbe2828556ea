/**
 * WhatsApp Business Cloud API provider: the buyer-message {@link Provider} interface
 * (lib/notifications/providers/types.ts) on Meta's published Cloud API
 * (https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages), Karrio-style: settings
 * from the environment (./settings.ts), HTTP in ./proxy.ts, shapes in ./mapper.ts; golden wire fixtures
 * in test/fixtures/providers/whatsapp_cloud. No retries here: the notifications queue retries a
 * ProviderUnavailable.
 *
 * Callbacks (https://developers.facebook.com/docs/graph-api/webhooks/getting-started):
 * - the subscription check `GET ?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…`: the token is
 *   compared with `WHATSAPP_VERIFY_TOKEN` in constant time; the answer body is `hub.challenge`;
 * - event notifications `POST` with `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body under
 *   the app secret>`, compared in constant time (`crypto.timingSafeEqual` on equal-length digests).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { sameSecret, WireProvider } from "../http";
import { type CallbackContent, CallbackRejected, type CallbackRequest, type Provider } from "../types";
import { parseSendAnswer, parseWebhook, toMessage } from "./mapper";
import { send } from "./proxy";
import { type WhatsAppSettings, whatsAppSettings } from "./settings";

export { sameSecret } from "../http";
export { indianMobile, parseSendAnswer, parseWebhook, templateName, toMessage } from "./mapper";
export { parseWhatsAppTemplates, type WhatsAppSettings, whatsAppSettings } from "./settings";

/** Header of the webhook signature (lower case, as CallbackRequest gives headers). */
export const SIGNATURE_HEADER = "x-hub-signature-256";

/**
 * Whether `header` is `sha256=<hex>` of the HMAC-SHA256 of `body` under `appSecret` (constant time;
 * an empty secret never verifies).
 */
export function validSignature(body: Buffer, header: string | undefined, appSecret: string): boolean {
	if (!appSecret || !header) return false;
	const m = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
	if (!m) return false;
	const want = createHmac("sha256", appSecret).update(body).digest();
	return timingSafeEqual(Buffer.from(m[1], "hex"), want);
}

/**
 * One WhatsApp Business phone number behind the {@link Provider} interface: `name` `whatsapp_cloud`,
 * channel `whatsapp`.
 *
 * `send(m)` sends an approved template message (mapper module doc: template name, language, parameter
 * order) and answers `sent` with the wamid, or `failed` (not an Indian mobile, a permanent Graph API
 * error, the access token refused); it throws ProviderUnavailable on a timeout, a network error, HTTP
 * 5xx / 429 / 408, a throttling or transient Graph API error, a 2xx without a message id.
 */
export class WhatsAppCloudProvider extends WireProvider<WhatsAppSettings> {
	/** @param settings the number's settings, see {@link whatsAppSettings} */
	constructor(settings: WhatsAppSettings) {
		super("whatsapp_cloud", "whatsapp", settings, { build: toMessage, post: send, parse: parseSendAnswer });
	}

	/**
	 * Answers the subscription check (GET: `answer` = `hub.challenge`) or verifies and parses an event
	 * notification (POST) into delivery reports and inbound replies.
	 * @throws CallbackRejected 401 for a wrong / missing verify token or signature, or when the verify
	 *   token / app secret is not configured; 400 for a check without a challenge or a body that is not
	 *   a WhatsApp Business Account notification
	 */
	parseCallback(req: CallbackRequest): CallbackContent {
		if (req.method === "GET") {
			const token = req.query["hub.verify_token"] ?? "";
			if (req.query["hub.mode"] !== "subscribe" || !sameSecret(token, this.settings.verifyToken))
				throw new CallbackRejected("WhatsApp subscription check: verify token is missing or wrong", 401);
			const challenge = req.query["hub.challenge"] ?? "";
			if (!challenge) throw new CallbackRejected("WhatsApp subscription check without hub.challenge", 400);
			return { reports: [], replies: [], answer: challenge };
		}
		if (!validSignature(req.body, req.headers[SIGNATURE_HEADER], this.settings.appSecret))
			throw new CallbackRejected("WhatsApp webhook signature is missing or wrong", 401);
		return parseWebhook(req.body);
	}
}

/**
 * Builds the WhatsApp Cloud API provider from the environment (`WHATSAPP_*`, see ./settings.ts).
 * @throws Error when `WHATSAPP_PHONE_NUMBER_ID` or `WHATSAPP_TOKEN` is missing, or a value is invalid
 */
export function whatsAppCloudProvider(env: NodeJS.ProcessEnv = process.env): Provider {
	return new WhatsAppCloudProvider(whatsAppSettings(env));
}
