/**
 * Mapper of the MSG91 SMS connector: our {@link OutboundMessage} → MSG91's Flow API request
 * ({@link WireRequest}, exactly what the golden fixtures in test/fixtures/providers/msg91 hold), its
 * answers → {@link SendResult}, its webhooks → {@link DeliveryReport} / {@link InboundReply}. Pure
 * functions; the proxy does the HTTP, index.ts checks the callback token.
 *
 * Send (https://docs.msg91.com/sms/send-sms; https://control.msg91.com/apidoc/textsms/send-sms-flow.php):
 * `POST /api/v5/flow/`, header `authkey`, JSON
 * `{template_id, sender, short_url: "1", DLT_TE_ID, recipients: [{mobiles: "91XXXXXXXXXX", var1, var2, …}]}`.
 * - Variables: the message's `vars` in insertion order (lib/notifications/templates.ts TEMPLATE_VARS)
 *   become `var1`, `var2`, … — the MSG91 template must use `##var1##`, `##var2##`, … (names are
 *   case-sensitive at MSG91) in that order.
 * - TRAI DLT: `sender` is the DLT-registered header (`MSG91_SENDER`) and `DLT_TE_ID` the DLT content
 *   template id of the `<event>.<lang>` template (MSG91's name of the field in its send APIs).
 * - `short_url: "1"`: MSG91 shortens the tracking link (a DLT variable holds at most 30–40 characters,
 *   our signed tracking link is longer).
 * - Answer `{"message": "<request id>", "type": "success"}` → `sent` (provider_ref = request id);
 *   `{"message": "<words>", "type": "error"}` (HTTP 200 or 4xx; MSG91 also answers `msg` / `msg_type`)
 *   → `failed` with MSG91's words; HTTP 401 → `failed` (auth key refused); a 2xx we cannot read →
 *   {@link ProviderUnavailable} (the outcome is unknown).
 *
 * Callbacks:
 * - delivery reports (https://msg91.com/help/how-can-i-get-the-delivery-reports-on-my-webhook-url):
 *   v2 form field `data` = JSON text `[{"requestId", "report": [{"date", "number", "status", "desc",
 *   "failedReason"}]}]`; v3 flat JSON `{"requestId", "number", "status", "desc", "date"}` (one or a
 *   list); the "Webhook (New)" JSON `{"requestId", "status", "deliveryTime", "telNum", "failureReason"}`.
 *   Status 1 (DELIVERED) → delivered; 2 (FAILED), 9 (NDNC), 16 / 25 (REJECTED), 17 (BLOCKED) → failed;
 *   anything else → sent. Times `YYYY-MM-DD HH:mm:ss` are India time (IST, +05:30).
 * - inbound SMS (virtual number / keyword forwarding, https://msg91.com/help/virtual-number): a form or
 *   JSON body with the sender's mobile (`mobile` / `number` / `sender` / `from`) and the text
 *   (`message` / `content` / `text`), time in `date` / `receivedAt` / `timestamp`; the mobile is
 *   normalised to 10 digits (non-Indian numbers are skipped).
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
import type { Msg91Settings } from "./settings";

export { indianMobile } from "../values";

/** The Flow API path (MSG91's docs write it with the trailing slash). */
export const FLOW_PATH = "/api/v5/flow/";

/** The headers of a Flow API call besides `authkey`. */
export const FLOW_HEADERS: Readonly<Record<string, string>> = JSON_HEADERS;

/** The `MSG91_TEMPLATES` key of a message: `<event>.<lang>`. */
export function templateKey(m: Pick<OutboundMessage, "event" | "lang">): string {
	return `${m.event}.${m.lang}`;
}

/**
 * The Flow API request of message `m`, or the `failed` answer when it cannot be sent at all (no template
 * configured for its `<event>.<lang>`, not an Indian mobile): nothing is sent then.
 */
export function toFlow(
	m: OutboundMessage,
	s: Pick<Msg91Settings, "sender" | "templates">,
): { request: WireRequest } | { failed: SendResult } {
	const key = templateKey(m);
	const tpl = Object.hasOwn(s.templates, key) ? s.templates[key] : undefined;
	if (!tpl)
		return {
			failed: { status: "failed", error: `MSG91 template for "${key}" is not configured (MSG91_TEMPLATES)` },
		};
	const mobile = indianMobile(m.to);
	if (!mobile) return { failed: { status: "failed", error: "not an Indian mobile number" } };
	const recipient: Record<string, string> = { mobiles: `91${mobile}` };
	Object.values(m.vars).forEach((v, i) => {
		recipient[`var${i + 1}`] = v;
	});
	return {
		request: {
			method: "POST",
			path: FLOW_PATH,
			headers: { ...FLOW_HEADERS },
			body: {
				template_id: tpl.template_id,
				sender: s.sender,
				short_url: "1",
				DLT_TE_ID: tpl.dlt_template_id,
				recipients: [recipient],
			},
		},
	};
}

/** MSG91's `type` / `msg_type` and `message` / `msg` of a JSON answer, or null when it is not one. */
function envelope(text: string): { type: string; message: string } | null {
	try {
		const o = JSON.parse(text) as unknown;
		if (!isObj(o)) return null;
		return { type: str(o.type ?? o.msg_type).toLowerCase(), message: str(o.message ?? o.msg) };
	} catch {
		return null;
	}
}

/**
 * The {@link SendResult} of a Flow API answer (see the module doc).
 * @throws ProviderUnavailable for a 2xx we cannot read (malformed, no request id) and HTTP 408
 */
export function parseFlowAnswer(ans: WireAnswer, s: Pick<Msg91Settings, "authKey">): SendResult {
	const env = envelope(ans.text.trim());
	const words = env ? redact(env.message, s).slice(0, 500) : "";
	if (ans.status === 401)
		return { status: "failed", error: `MSG91 refused the auth key (HTTP 401)${words ? `: ${words}` : ""}` };
	if (ans.status === 408) throw new ProviderUnavailable("MSG91 POST /api/v5/flow/: HTTP 408");
	if (ans.status >= 200 && ans.status < 300) {
		if (env?.type === "success" && env.message) return { status: "sent", provider_ref: env.message };
		if (env?.type === "error")
			return { status: "failed", error: `MSG91: ${words || "error without a reason"}` };
		throw new ProviderUnavailable(`MSG91 POST /api/v5/flow/: HTTP ${ans.status} answer is not readable`);
	}
	return {
		status: "failed",
		error: `MSG91 refused the message (HTTP ${ans.status})${words ? `: ${words}` : ""}`,
	};
}

/** Offset of India Standard Time, ms. */
const IST_MS = 5.5 * 3600_000;

/**
 * ISO-8601 UTC of an MSG91 time: `YYYY-MM-DD HH:mm:ss` (India time), unix seconds / ms, or an ISO text
 * with a zone; null when unreadable.
 */
export function msg91Time(v: unknown): string | null {
	const t = str(v);
	if (!t) return null;
	if (/^\d{9,10}$/.test(t)) return new Date(Number(t) * 1000).toISOString();
	if (/^\d{12,13}$/.test(t)) return new Date(Number(t)).toISOString();
	const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(t);
	if (m) {
		const utc = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +(m[6] ?? 0)) - IST_MS;
		return Number.isNaN(utc) ? null : new Date(utc).toISOString();
	}
	const at = Date.parse(t);
	return Number.isNaN(at) ? null : new Date(at).toISOString();
}

/** MSG91's DLR status codes (the help page's table): words of each failure. */
const FAILED_CODES: Readonly<Record<string, string>> = {
	"2": "FAILED",
	"9": "NDNC",
	"16": "REJECTED",
	"17": "BLOCKED",
	"25": "REJECTED",
};

/** Our report status and error of an MSG91 DLR `status` (code or words) and `desc` / failure reason. */
function statusOf(status: string, desc: string, reason: string): Pick<DeliveryReport, "status" | "error"> {
	const words = (desc || (/^\d+$/.test(status) ? "" : status)).toUpperCase();
	const failure = (w: string) => ({ status: "failed" as const, error: reason ? `${w}: ${reason}` : w });
	if (status === "1") return { status: "delivered", error: null };
	if (Object.hasOwn(FAILED_CODES, status)) return failure(words || FAILED_CODES[status]);
	if (/^\d+$/.test(status) || !words) return { status: "sent", error: null };
	if (words.startsWith("DELIVERED")) return { status: "delivered", error: null };
	if (/FAIL|REJECT|BLOCK|NDNC|UNDELIV|EXPIRED|INVALID/.test(words)) return failure(words);
	return { status: "sent", error: null };
}

/** One delivery report of a DLR entry (`report` of v2, or a flat v3 / new-webhook object). */
function reportOf(requestId: string, r: Obj, now: string): DeliveryReport | null {
	if (!requestId) return null;
	const st = statusOf(str(r.status), str(r.desc ?? r.description), str(r.failedReason ?? r.failureReason));
	const at = msg91Time(r.date ?? r.deliveryTime ?? r.requestedAt ?? r.ts) ?? now;
	return { provider_ref: requestId, ...st, at };
}

/** The reports of one v2 item `{requestId, report: [...]}` or a flat v3 / new-webhook object. */
function reportsOfItem(o: Obj, now: string): DeliveryReport[] {
	const id = str(o.requestId ?? o.request_id);
	if (Array.isArray(o.report)) return o.report.filter(isObj).flatMap((r) => reportOf(id, r, now) ?? []);
	const one = reportOf(id, o, now);
	return one ? [one] : [];
}

/** An inbound SMS of a flat object without a request id, or null. */
function replyOf(o: Obj, now: string): InboundReply | null {
	if (str(o.requestId ?? o.request_id)) return null;
	const from = indianMobile(str(o.mobile ?? o.number ?? o.sender ?? o.from ?? o.msisdn));
	const text = str(o.message ?? o.content ?? o.text ?? o.sms);
	if (!from || !text) return null;
	return {
		from,
		text,
		at: msg91Time(o.date ?? o.receivedAt ?? o.received_at ?? o.timestamp ?? o.time) ?? now,
	};
}

/** The JSON or form fields of a callback body (form when the content type says so or it is not JSON). */
function decode(body: Buffer, contentType: string): unknown {
	const text = body.toString("utf8").trim();
	if (!text) throw new CallbackRejected("MSG91 callback body is empty", 400);
	const looksJson = text.startsWith("{") || text.startsWith("[");
	if (contentType.includes("application/x-www-form-urlencoded") || !looksJson) {
		if (contentType.includes("json")) throw new CallbackRejected("MSG91 callback body is not JSON", 400);
		return Object.fromEntries(new URLSearchParams(text));
	}
	try {
		return JSON.parse(text);
	} catch {
		throw new CallbackRejected("MSG91 callback body is not JSON", 400);
	}
}

/**
 * The delivery reports and inbound replies of one MSG91 webhook body (token already checked). A time
 * MSG91 leaves out is the receipt time (`now`).
 * @throws CallbackRejected 400 for an empty or unparseable body, or one that is neither an MSG91
 *   delivery report nor an inbound SMS
 */
export function parseCallbackBody(
	body: Buffer,
	contentType: string,
	now = new Date().toISOString(),
): CallbackContent {
	let doc = decode(body, contentType.toLowerCase());
	if (isObj(doc) && doc.data !== undefined && !doc.requestId) {
		const d = doc.data;
		if (typeof d === "string") {
			try {
				doc = JSON.parse(d);
			} catch {
				throw new CallbackRejected("MSG91 delivery report: `data` is not JSON", 400);
			}
		} else doc = d;
	}
	const items = (Array.isArray(doc) ? doc : [doc]).filter(isObj);
	const reports = items.flatMap((o) => reportsOfItem(o, now));
	const replies = items.flatMap((o) => replyOf(o, now) ?? []);
	if (reports.length === 0 && replies.length === 0)
		throw new CallbackRejected("not an MSG91 delivery report or inbound SMS", 400);
	return { reports, replies };
}
