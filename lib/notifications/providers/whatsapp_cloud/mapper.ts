/**
 * Mapper of the WhatsApp Business Cloud API connector: our {@link OutboundMessage} → a template
 * message request ({@link WireRequest}, exactly what the golden fixtures in
 * test/fixtures/providers/whatsapp_cloud hold), Graph API answers → {@link SendResult}, webhook
 * payloads → {@link DeliveryReport} / {@link InboundReply}. Pure functions; the proxy does the HTTP,
 * index.ts verifies signatures and tokens.
 *
 * Send (https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages,
 * https://developers.facebook.com/docs/whatsapp/cloud-api/guides/send-message-templates):
 * `POST /{version}/{phone_number_id}/messages`, `Authorization: Bearer <token>`, JSON
 * `{messaging_product: "whatsapp", recipient_type: "individual", to: "91XXXXXXXXXX", type: "template",
 * template: {name, language: {code: "en" | "hi"}, components: [{type: "body", parameters: [{type: "text", text}, …]}]}}`.
 * - Template name: `WHATSAPP_TEMPLATES[event]`, else the event's own name (`shipped`, …).
 * - Parameters: the message's `vars` in insertion order (lib/notifications/templates.ts TEMPLATE_VARS) fill
 *   `{{1}}`, `{{2}}`, …; an empty value is sent as `-` (the Cloud API refuses an empty text parameter).
 *   No vars → no `components`.
 * - Answer `messages[0].id` (the wamid) → `sent`. Graph API errors `{error: {code, message,
 *   error_data: {details}}}` (https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes):
 *   throttling (4, 80007, 130429, 131048, 131056) and transient ones (1, 2, 131000, 131016, 131057,
 *   133004) → {@link ProviderUnavailable}; HTTP 401 / code 0 / 190 → `failed` (access token refused);
 *   every other refusal (100 invalid parameter, 131026 undeliverable, 131047 re-engagement, 132000
 *   parameter count, 132001 template does not exist, …) → `failed` with Meta's words.
 *
 * Webhooks (https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status/,
 * …/messages/text/): `{object: "whatsapp_business_account", entry: [{changes: [{field: "messages", value}]}]}`;
 * `value.statuses[]` (`id`, `status` sent / delivered / read / failed, `timestamp` unix seconds,
 * `errors[]`) → reports (`read` counts as delivered; other statuses are skipped); `value.messages[]` of
 * type `text` (`text.body`) or `button` (a quick-reply tap, `button.text`) → replies, the sender's
 * `from` (`91XXXXXXXXXX`) normalised to 10 digits (non-Indian numbers are skipped).
 */
import { JSON_HEADERS } from "../http";
import {
	type CallbackContent,
	CallbackRejected,
	type DeliveryReport,
	type InboundReply,
	type OutboundMessage,
	ProviderUnavailable,
	type SendResult,
} from "../types";
import { indianMobile, isObj, type Obj, str } from "../values";
import { redact, type WireAnswer, type WireRequest } from "./proxy";
import type { WhatsAppSettings } from "./settings";

export { indianMobile } from "../values";

/** The headers of a send besides `Authorization`. */
export const SEND_HEADERS: Readonly<Record<string, string>> = JSON_HEADERS;

/** Graph API error codes of throttling: retried later (ProviderUnavailable). */
export const RATE_LIMIT_CODES: ReadonlySet<number> = new Set([4, 80007, 130429, 131048, 131056]);
/** Graph API error codes of a temporary failure at Meta: retried later (ProviderUnavailable). */
export const TRANSIENT_CODES: ReadonlySet<number> = new Set([1, 2, 131000, 131016, 131057, 133004]);
/** Graph API error codes of a refused access token. */
export const AUTH_CODES: ReadonlySet<number> = new Set([0, 190]);

/** The approved template name of an event: `templates[event]`, else the event's own name. */
export function templateName(event: string, templates: Readonly<Record<string, string>>): string {
	return Object.hasOwn(templates, event) ? templates[event] : event;
}

/**
 * The template message request of `m`, or the `failed` answer when it cannot be sent at all (not an
 * Indian mobile): nothing is sent then.
 */
export function toMessage(
	m: OutboundMessage,
	s: Pick<WhatsAppSettings, "version" | "phoneNumberId" | "templates">,
): { request: WireRequest } | { failed: SendResult } {
	const mobile = indianMobile(m.to);
	if (!mobile) return { failed: { status: "failed", error: "not an Indian mobile number" } };
	const parameters = Object.values(m.vars).map((v) => ({ type: "text", text: v.trim() ? v : "-" }));
	const template: Obj = { name: templateName(m.event, s.templates), language: { code: m.lang } };
	if (parameters.length) template.components = [{ type: "body", parameters }];
	return {
		request: {
			method: "POST",
			path: `/${s.version}/${s.phoneNumberId}/messages`,
			headers: { ...SEND_HEADERS },
			body: {
				messaging_product: "whatsapp",
				recipient_type: "individual",
				to: `91${mobile}`,
				type: "template",
				template,
			},
		},
	};
}

/** The Graph API error of an answer: code, words (`message` + `error_data.details`), or null. */
function graphError(o: unknown): { code: number | null; words: string } | null {
	if (!isObj(o) || !isObj(o.error)) return null;
	const e = o.error;
	const code = typeof e.code === "number" ? e.code : /^\d+$/.test(str(e.code)) ? Number(str(e.code)) : null;
	const message = str(e.message);
	const details = isObj(e.error_data) ? str(e.error_data.details) : "";
	const words = [message, details && details !== message ? details : ""].filter(Boolean).join(": ");
	return { code, words };
}

/**
 * The {@link SendResult} of a send answer (see the module doc).
 * @throws ProviderUnavailable for throttling and transient Graph API errors, HTTP 408, and a 2xx
 *   without a message id (the outcome is unknown)
 */
export function parseSendAnswer(ans: WireAnswer, s: Pick<WhatsAppSettings, "token">): SendResult {
	const what = "WhatsApp POST /messages";
	let o: unknown = null;
	try {
		o = JSON.parse(ans.text);
	} catch {
		/* not JSON: decided below */
	}
	if (ans.status >= 200 && ans.status < 300) {
		const msgs = isObj(o) && Array.isArray(o.messages) ? o.messages : [];
		const id = isObj(msgs[0]) ? str(msgs[0].id) : "";
		if (id) return { status: "sent", provider_ref: id };
		throw new ProviderUnavailable(`${what}: HTTP ${ans.status} answer has no message id`);
	}
	const err = graphError(o);
	const code = err?.code ?? null;
	const words = err ? redact(err.words, s).slice(0, 500) : "";
	const tag = code !== null ? ` ${code}` : "";
	if (ans.status === 401 || (code !== null && AUTH_CODES.has(code)))
		return {
			status: "failed",
			error: `WhatsApp refused the access token (error${tag || ` HTTP ${ans.status}`})`,
		};
	if (code !== null && RATE_LIMIT_CODES.has(code))
		throw new ProviderUnavailable(`${what}: rate limited (error ${code}: ${words})`, ans.retryAfterMs);
	if (code !== null && TRANSIENT_CODES.has(code))
		throw new ProviderUnavailable(`${what}: temporary error ${code}: ${words}`, ans.retryAfterMs);
	if (ans.status === 408) throw new ProviderUnavailable(`${what}: HTTP 408`);
	if (err && words) return { status: "failed", error: `WhatsApp error${tag}: ${words}` };
	return { status: "failed", error: `WhatsApp refused the message (HTTP ${ans.status})` };
}

/** ISO-8601 UTC of a webhook `timestamp` (unix seconds, as text), or `now` when unreadable. */
export function unixTime(v: unknown, now: string): string {
	const t = str(v);
	return /^\d{1,12}$/.test(t) ? new Date(Number(t) * 1000).toISOString() : now;
}

/** Our report of one `value.statuses[]` entry, or null for a status that is not a delivery outcome. */
function reportOf(st: Obj, now: string): DeliveryReport | null {
	const id = str(st.id);
	if (!id) return null;
	const at = unixTime(st.timestamp, now);
	switch (str(st.status)) {
		case "sent":
			return { provider_ref: id, status: "sent", at, error: null };
		case "delivered":
		case "read":
			return { provider_ref: id, status: "delivered", at, error: null };
		case "failed": {
			const e = Array.isArray(st.errors) && isObj(st.errors[0]) ? st.errors[0] : {};
			const details = isObj(e.error_data) ? str(e.error_data.details) : "";
			const title = str(e.title) || str(e.message);
			const words = [str(e.code), title].filter(Boolean).join(" ");
			return {
				provider_ref: id,
				status: "failed",
				at,
				error: [words, details && details !== title ? details : ""].filter(Boolean).join(": ") || "failed",
			};
		}
		default:
			return null;
	}
}

/** Our reply of one `value.messages[]` entry (text or quick-reply button), or null. */
function replyOf(msg: Obj, now: string): InboundReply | null {
	const from = indianMobile(str(msg.from));
	const type = str(msg.type);
	const text =
		type === "text" && isObj(msg.text)
			? str(msg.text.body)
			: type === "button" && isObj(msg.button)
				? str(msg.button.text)
				: "";
	if (!from || !text) return null;
	return { from, text, at: unixTime(msg.timestamp, now) };
}

/**
 * The delivery reports and inbound replies of one webhook POST body (signature already verified). A
 * timestamp Meta leaves out is the receipt time (`now`).
 * @throws CallbackRejected 400 when the body is not JSON or not a `whatsapp_business_account` notification
 */
export function parseWebhook(body: Buffer, now = new Date().toISOString()): CallbackContent {
	let o: unknown;
	try {
		o = JSON.parse(body.toString("utf8"));
	} catch {
		throw new CallbackRejected("WhatsApp webhook body is not JSON", 400);
	}
	if (!isObj(o) || o.object !== "whatsapp_business_account" || !Array.isArray(o.entry))
		throw new CallbackRejected("not a WhatsApp Business Account webhook", 400);
	const reports: DeliveryReport[] = [];
	const replies: InboundReply[] = [];
	for (const entry of o.entry.filter(isObj)) {
		const changes = Array.isArray(entry.changes) ? entry.changes.filter(isObj) : [];
		for (const ch of changes) {
			if (!isObj(ch.value)) continue;
			const v = ch.value;
			for (const st of Array.isArray(v.statuses) ? v.statuses.filter(isObj) : []) {
				const r = reportOf(st, now);
				if (r) reports.push(r);
			}
			for (const msg of Array.isArray(v.messages) ? v.messages.filter(isObj) : []) {
				const r = replyOf(msg, now);
				if (r) replies.push(r);
			}
		}
	}
	return { reports, replies };
}
