/**
 * MSG91 SMS provider: the buyer-message {@link Provider} interface (lib/notifications/providers/types.ts)
 * on MSG91's published Flow API (https://docs.msg91.com/sms/send-sms), Karrio-style: settings from the
 * environment (./settings.ts), HTTP in ./proxy.ts, shapes in ./mapper.ts; golden wire fixtures in
 * test/fixtures/providers/msg91. No retries here: the notifications queue retries a ProviderUnavailable.
 *
 * Callbacks: MSG91 signs nothing, so its delivery-report and inbound-SMS webhooks are configured with
 * `?token=<MSG91_CALLBACK_TOKEN>` in their URL; the token is compared in constant time (HMAC digests
 * under a per-process random key, `crypto.timingSafeEqual`).
 */
import { sameSecret, WireProvider } from "../http";
import { type CallbackContent, CallbackRejected, type CallbackRequest, type Provider } from "../types";
import { parseCallbackBody, parseFlowAnswer, toFlow } from "./mapper";
import { send } from "./proxy";
import { type Msg91Settings, msg91Settings } from "./settings";

export { sameSecret } from "../http";
export { indianMobile, msg91Time, parseCallbackBody, parseFlowAnswer, templateKey, toFlow } from "./mapper";
export { type Msg91Settings, type Msg91Template, msg91Settings, parseMsg91Templates } from "./settings";

/**
 * One MSG91 account behind the {@link Provider} interface: `name` `msg91`, channel `sms`.
 *
 * `send(m)` sends through the Flow API (mapper module doc: request shape, var1… order, DLT fields) and
 * answers `sent` with MSG91's request id, or `failed` (template not configured, not an Indian mobile,
 * MSG91's refusal words, HTTP 401 auth key refused); it throws ProviderUnavailable on a timeout, a network
 * error, HTTP 5xx / 429 / 408, a malformed 2xx answer.
 */
export class Msg91Provider extends WireProvider<Msg91Settings> {
	/** @param settings the account's settings, see {@link msg91Settings} */
	constructor(settings: Msg91Settings) {
		super("msg91", "sms", settings, { build: toFlow, post: send, parse: parseFlowAnswer });
	}

	/**
	 * Verifies `?token=` (constant time) and parses an MSG91 delivery-report or inbound-SMS webhook
	 * (GET with the fields in the query is accepted too).
	 * @throws CallbackRejected 401 when the token is missing, wrong or not configured; 400 when the body
	 *   is not MSG91's format
	 */
	parseCallback(req: CallbackRequest): CallbackContent {
		const token = req.query.token ?? "";
		if (!this.settings.callbackToken || !token || !sameSecret(token, this.settings.callbackToken))
			throw new CallbackRejected("MSG91 callback token is missing or wrong", 401);
		if (req.method === "GET") {
			const fields: Record<string, string> = { ...req.query };
			delete fields.token;
			return parseCallbackBody(
				Buffer.from(new URLSearchParams(fields).toString()),
				"application/x-www-form-urlencoded",
			);
		}
		return parseCallbackBody(req.body, req.headers["content-type"] ?? "");
	}
}

/**
 * Builds the MSG91 provider from the environment (`MSG91_*`, see ./settings.ts).
 * @throws Error when `MSG91_AUTH_KEY`, `MSG91_SENDER` or `MSG91_TEMPLATES` is missing or invalid
 */
export function msg91Provider(env: NodeJS.ProcessEnv = process.env): Provider {
	return new Msg91Provider(msg91Settings(env));
}
