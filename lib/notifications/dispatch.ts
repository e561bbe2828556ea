/**
 * Buyer messages (issue 29; docs/decisions/0109-buyer-messages.md): from a shipment's status
 * change to a recorded, sent message with an honest state.
 *
 * 1. {@link onStatusChange} (the durable `shipment.status_changed` channel, consumer group
 *    `notifications`, at-least-once) maps the status to a buyer event — `picked_up` or
 *    `in_transit` → `shipped` (once per shipment), `out_for_delivery` (each time),
 *    `delivered` (once), `undelivered` → `failed_delivery` (each attempt, with the tracking
 *    page's answer form), `rto_initiated` (once) — and records one message per enabled channel
 *    the buyer has a contact for, unique per (event key, channel), so a redelivered event makes
 *    no second message. A message starts `suppressed` (the contact opted out), `held` (quiet
 *    hours: sent at their end) or `queued`. An event more than a day old, or older than one
 *    already messaged for the shipment, makes none.
 * 2. Each queued or held message is a BullMQ job (`notify-send`, job id `msg-<id>`, delayed to
 *    the end of quiet hours); {@link sendMessage} hands it to the channel's provider and records
 *    `sent` / `simulated` / `failed`. A provider that cannot tell (timeout, 5xx, 429) throws and
 *    BullMQ tries again with exponential backoff (`NOTIFY_SEND_ATTEMPTS`, `NOTIFY_RETRY_MS`);
 *    after the last try the message is `failed`. A sweep re-adds jobs of messages left pending
 *    (the job lost with Redis).
 * 3. {@link handleCallback}: a provider's signed callback — delivery reports move `sent` to
 *    `delivered` / `failed`; a `STOP` reply opts the number out.
 */
import { randomUUID } from "node:crypto";
import type { Caller, MessageView, ShipmentStatusChanged } from "../contracts";
import { call } from "../contracts";
import { setting } from "../platform/config";
import { fail, validationFailed } from "../platform/errors";
import { getQueue } from "../platform/queue";
import { signTrackingToken, TRACKING_PAGE_PREFIX } from "../shared/label-link";
import { CALL_OPTIONS, type NotificationsDeps } from "./deps";
import {
	applyReport,
	insertMessage,
	isOptedOut,
	latestSeq,
	type MessageRow,
	messageById,
	messagesOfOrder,
	noteTry,
	optOut,
	pendingMessages,
	settleMessage,
	testSendsSince,
} from "./message-store";
import { dayLabel } from "./page";
import { holdUntil, preferencesOf } from "./preferences";
import { providerFor, providerNamed } from "./providers";
import {
	type CallbackRequest,
	type MessageChannel,
	type MessageEvent,
	type MessageLang,
	ProviderUnavailable,
} from "./providers/types";
import { indianMobile } from "./providers/values";
import { brandOf } from "./store";
import { type MessageVars, NO_BRAND, renderEmailHtml, renderMessage, TEMPLATE_VARS } from "./templates";

/** Test messages an account may send per hour. */
export const TEST_SENDS_PER_HOUR = 20;

/** The BullMQ queue of buyer message sends. */
export const SEND_QUEUE = "notify-send";

/** A status change older than this makes no message (a backfill, a stream replayed late). */
export const MAX_EVENT_AGE_MS = 24 * 3600_000;

/** Each status that tells the buyer something: its event, and whether it is told once per shipment. */
const EVENT_OF: Partial<Record<string, { event: MessageEvent; once: boolean }>> = {
	picked_up: { event: "shipped", once: true },
	in_transit: { event: "shipped", once: true },
	out_for_delivery: { event: "out_for_delivery", once: false },
	delivered: { event: "delivered", once: true },
	undelivered: { event: "failed_delivery", once: false },
	rto_initiated: { event: "rto_initiated", once: true },
};

/** The public origin of links in messages: `PUBLIC_BASE_URL`, else this gateway on localhost. */
export function linkBase(): string {
	return setting("PUBLIC_BASE_URL") ?? `http://localhost:${setting("PORT")}`;
}

/** The absolute tracking page URL of an AWB (and, with `suffix`, a page below it). */
export function pageLink(awb: string, suffix = ""): string {
	return `${linkBase()}${TRACKING_PAGE_PREFIX}${signTrackingToken(awb)}${suffix}`;
}

/** The buyer's phone as 10 digits (an Indian mobile; a +91 / 0 prefix and separators dropped), or null. */
export function mobileOf(raw: string | null | undefined): string | null {
	return indianMobile(raw);
}

/** The buyer's contact on `channel` from the order's consignee, or null. */
function contactOf(
	channel: MessageChannel,
	c: { phone?: string | null; email?: string | null },
): string | null {
	if (channel === "email") {
		const e = String(c.email ?? "")
			.trim()
			.toLowerCase();
		return e.includes("@") ? e : null;
	}
	return mobileOf(c.phone);
}

/** Adds (or re-adds: same job id) a message's send job, delayed to its `hold_until`. */
export async function enqueueSend(row: Pick<MessageRow, "id" | "hold_until">): Promise<void> {
	const delay = row.hold_until ? Math.max(0, new Date(row.hold_until).getTime() - Date.now()) : 0;
	await getQueue(SEND_QUEUE).add(
		"send",
		{ id: row.id },
		{
			jobId: `msg-${row.id}`,
			delay,
			attempts: setting("NOTIFY_SEND_ATTEMPTS"),
			backoff: { type: "exponential", delay: setting("NOTIFY_RETRY_MS") },
			removeOnComplete: true,
			removeOnFail: 1000,
		},
	);
}

/** What {@link onStatusChange} did, for logs and tests. */
export interface StatusOutcome {
	event: MessageEvent | null;
	/** messages recorded now (a redelivery records none) */
	created: number;
	/** why none was made, when none was */
	skipped?: "no_event" | "stale" | "event_off" | "older_than_sent" | "no_order";
}

/**
 * Applies one `shipment.status_changed` event (see the module doc).
 * @throws when the database, the queue, intake or booking fails (the channel redelivers the event)
 */
export async function onStatusChange(
	deps: NotificationsDeps,
	via: Caller,
	e: ShipmentStatusChanged,
	now = new Date(),
): Promise<StatusOutcome> {
	const map = EVENT_OF[e.status];
	if (!map) return { event: null, created: 0, skipped: "no_event" };
	const { event } = map;
	if (now.getTime() - new Date(e.status_at).getTime() > MAX_EVENT_AGE_MS)
		return { event, created: 0, skipped: "stale" };
	const prefs = await preferencesOf(deps, e.sender_id);
	if (!prefs.events.includes(event)) return { event, created: 0, skipped: "event_off" };
	if ((await latestSeq(deps.db, e.awb_number)) > e.seq)
		return { event, created: 0, skipped: "older_than_sent" };
	const key = { sender_id: e.sender_id, order_id: e.order_id };
	const [order, shipment, brand] = await Promise.all([
		call(via, "intake.getOrder", key, CALL_OPTIONS),
		call(via, "booking.shipmentByAwb", { awb_number: e.awb_number, scan_limit: 1 }, CALL_OPTIONS),
		brandOf(deps.db, e.sender_id),
	]);
	if (!order) return { event, created: 0, skipped: "no_order" };
	const lang = prefs.language;
	const vars: MessageVars = {
		brand: brand.brand_name ?? NO_BRAND[lang],
		order_no: order.customer_order_no,
		awb: e.awb_number,
		courier: shipment?.courier_name ?? "",
		link: pageLink(e.awb_number),
		edd: shipment?.edd ? dayLabel(lang, shipment.edd) : "",
		support: brand.support_phone ?? brand.support_email ?? "",
	};
	const rendered = renderMessage(event, lang, vars);
	const hold = holdUntil(prefs, now);
	let created = 0;
	for (const channel of prefs.channels as MessageChannel[]) {
		const to = contactOf(channel, order.consignee);
		if (!to) continue;
		const suppressed = await isOptedOut(deps.db, e.sender_id, to);
		const { row, created: isNew } = await insertMessage(deps.db, {
			sender_id: e.sender_id,
			order_id: e.order_id,
			awb_number: e.awb_number,
			event,
			event_key: map.once ? `${e.awb_number}:${event}` : `${e.awb_number}:${event}:${e.event_id}`,
			seq: e.seq,
			channel,
			lang,
			recipient: to,
			vars: rendered.vars,
			body: rendered.text,
			subject: rendered.subject,
			status: suppressed ? "suppressed" : hold ? "held" : "queued",
			hold_until: suppressed ? null : hold,
		});
		if (isNew) created++;
		if (row.status === "queued" || row.status === "held") await enqueueSend(row);
	}
	return { event, created };
}

/** What one send job did. */
export interface SendOutcome {
	id: number;
	status: MessageRow["status"] | "missing";
}

/**
 * Sends one queued or held message through its channel's provider and records the answer
 * (`sent`, `simulated`, `failed`; `suppressed` when the contact opted out meanwhile). A message
 * settled already is left alone (a job run twice sends once).
 * @param attemptsMade the job's earlier tries (BullMQ `attemptsMade`)
 * @throws ProviderUnavailable when the provider could not tell and tries remain (BullMQ retries)
 */
export async function sendMessage(
	deps: NotificationsDeps,
	id: number,
	attemptsMade: number,
): Promise<SendOutcome> {
	const row = await messageById(deps.db, id);
	if (!row) return { id, status: "missing" };
	if (row.status !== "queued" && row.status !== "held") return { id, status: row.status };
	if (row.hold_until && new Date(row.hold_until).getTime() > Date.now() + 1000)
		return { id, status: row.status };
	if (await isOptedOut(deps.db, row.sender_id, row.recipient)) {
		await settleMessage(deps.db, id, { status: "suppressed" });
		return { id, status: "suppressed" };
	}
	const provider = providerFor(row.channel);
	try {
		const r = await provider.send(await outboundOf(deps, row));
		await settleMessage(
			deps.db,
			id,
			r.status === "failed"
				? { status: "failed", provider: provider.name, error: r.error.slice(0, 500) }
				: { status: r.status, provider: provider.name, provider_ref: r.provider_ref },
		);
		return { id, status: r.status };
	} catch (err) {
		if (!(err instanceof ProviderUnavailable)) throw err;
		const words = err.message.slice(0, 400);
		if (attemptsMade + 1 >= setting("NOTIFY_SEND_ATTEMPTS")) {
			await settleMessage(deps.db, id, {
				status: "failed",
				provider: provider.name,
				error: `provider unavailable after ${attemptsMade + 1} tries: ${words}`,
			});
			return { id, status: "failed" };
		}
		await noteTry(deps.db, id, provider.name, words);
		throw err;
	}
}

/** The provider's view of a stored message (e-mail: HTML with the brand, the opt-out link). */
async function outboundOf(deps: NotificationsDeps, row: MessageRow) {
	const base = {
		id: row.id,
		channel: row.channel,
		to: row.recipient,
		lang: row.lang,
		event: row.event,
		// jsonb keeps no key order: the template's order again (positional providers number them)
		vars: Object.fromEntries(TEMPLATE_VARS[row.event].map((k) => [k, row.vars[k] ?? ""])),
		text: row.body,
	};
	if (row.channel !== "email") return base;
	const brand = await brandOf(deps.db, row.sender_id);
	const optout = row.awb_number ? pageLink(row.awb_number, "/stop") : null;
	if (optout) base.vars.optout_link = optout;
	return {
		...base,
		subject: row.subject ?? "",
		from_name: brand.brand_name ?? undefined,
		reply_to: brand.support_email ?? undefined,
		html: renderEmailHtml({
			lang: row.lang,
			subject: row.subject ?? "",
			text: row.body,
			brand: brand.brand_name ?? NO_BRAND[row.lang],
			colour: brand.colour,
			link: row.vars.link ?? linkBase(),
			optout,
		}),
	};
}

/** One sweep: re-adds the jobs of messages pending longer than `olderThanMs` (the job lost). Answers how many. */
export async function sweepPending(deps: NotificationsDeps, olderThanMs = 120_000): Promise<number> {
	const rows = await pendingMessages(deps.db, new Date(Date.now() - olderThanMs), 500);
	for (const r of rows) await enqueueSend(r);
	return rows.length;
}

/** Words of a reply that opt the number out (case and spaces ignored). */
const STOP_WORDS = new Set(["STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "रोकें", "बंद"]);

/** What a callback did. */
export interface CallbackOutcome {
	reports: number;
	updated: number;
	opted_out: number;
	/** the body the provider expects back (a subscription check), else undefined */
	answer?: string;
}

/**
 * A provider's callback (`/v1/notifications/callbacks/{provider}`): verified and parsed by the
 * provider (its signature or token), then delivery reports applied (only `sent` messages move,
 * to `delivered` or `failed`) and STOP replies recorded as opt-outs of that number for every
 * account that messaged it (a shared sender number cannot tell which merchant the buyer means).
 * @throws 404 `not found` for a provider that is not configured; CallbackRejected (401 / 400)
 */
export async function handleCallback(
	deps: NotificationsDeps,
	name: string,
	req: CallbackRequest,
): Promise<CallbackOutcome> {
	const provider = providerNamed(name);
	if (!provider?.parseCallback) throw fail("not found");
	const content = provider.parseCallback(req);
	let updated = 0;
	for (const r of content.reports) {
		if (r.status === "sent") continue;
		updated += (await applyReport(deps.db, provider.name, r.provider_ref, r.status, new Date(r.at), r.error))
			.length;
	}
	const stops = content.replies
		.filter((r) => STOP_WORDS.has(r.text.replace(/\s+/g, "").toUpperCase()))
		.map((r) => r.from);
	const opted_out = await optOut(deps.db, null, stops, "reply");
	return { reports: content.reports.length, updated, opted_out, answer: content.answer };
}

/** Masks a recipient: a phone's last 4 digits, an e-mail's first letter and domain. */
export function maskedRecipient(r: string): string {
	if (r.includes("@")) {
		const [user, domain] = r.split("@");
		return `${user.slice(0, 1)}***@${domain}`;
	}
	return `******${r.slice(-4)}`;
}

/** The API view of a message (the recipient masked). */
export function messageView(r: MessageRow): MessageView {
	const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
	return {
		id: r.id,
		order_id: r.order_id,
		awb_number: r.awb_number,
		event: r.event,
		channel: r.channel,
		lang: r.lang,
		recipient: maskedRecipient(r.recipient),
		status: r.status,
		provider: r.provider,
		provider_ref: r.provider_ref,
		body: r.body,
		error: r.error,
		tries: r.tries,
		hold_until: iso(r.hold_until),
		created_at: String(iso(r.created_at)),
		sent_at: iso(r.sent_at),
		delivered_at: iso(r.delivered_at),
		failed_at: iso(r.failed_at),
		updated_at: String(iso(r.updated_at)),
	};
}

/**
 * `GET /v1/orders/{id}/notifications`: the order's buyer messages, oldest first.
 * @throws 404 `order not found` (no such order on the account); 503 when intake cannot answer
 */
export async function orderMessages(
	deps: NotificationsDeps,
	via: Caller,
	sender: number,
	order_id: number,
): Promise<{ order_id: number; messages: MessageView[] }> {
	const rows = await messagesOfOrder(deps.db, sender, order_id);
	if (rows.length === 0) {
		const order = await call(via, "intake.getOrder", { sender_id: sender, order_id }, CALL_OPTIONS);
		if (!order) throw fail("order not found");
	}
	return { order_id, messages: rows.map(messageView) };
}

/**
 * `POST /v1/settings/notifications/test`: sends the `test` message to `to` on `channel` now,
 * through the configured provider, whatever the channel switches and quiet hours say (an
 * opted-out contact stays `suppressed`). The row is committed first; the answer is its state
 * after the one try (`sent`, `simulated`, `failed`, or `queued` with the error when the provider
 * could not tell: its job then tries again).
 */
export async function testSend(
	deps: NotificationsDeps,
	sender: number,
	channel: MessageChannel,
	rawTo: string,
	lang?: MessageLang,
): Promise<MessageView> {
	if ((await testSendsSince(deps.db, sender, new Date(Date.now() - 3600_000))) >= TEST_SENDS_PER_HOUR)
		throw fail("too_many_test_messages", TEST_SENDS_PER_HOUR);
	const to = contactOf(channel, channel === "email" ? { email: rawTo } : { phone: rawTo });
	if (!to)
		throw validationFailed([
			channel === "email" ? "to: must be an e-mail address" : "to: must be an Indian mobile number",
		]);
	const prefs = await preferencesOf(deps, sender);
	const brand = await brandOf(deps.db, sender);
	const l = lang ?? prefs.language;
	const rendered = renderMessage("test", l, {
		brand: brand.brand_name ?? NO_BRAND[l],
		order_no: "",
		awb: "",
		courier: "",
		link: `${linkBase()}/track`,
		edd: "",
		support: "",
	});
	const suppressed = await isOptedOut(deps.db, sender, to);
	const { row } = await insertMessage(deps.db, {
		sender_id: sender,
		order_id: null,
		awb_number: null,
		event: "test",
		event_key: `test:${randomUUID()}`,
		seq: 0,
		channel,
		lang: l,
		recipient: to,
		vars: rendered.vars,
		body: rendered.text,
		subject: rendered.subject,
		status: suppressed ? "suppressed" : "queued",
		hold_until: null,
	});
	if (!suppressed) {
		try {
			await sendMessage(deps, row.id, 0);
		} catch (err) {
			if (!(err instanceof ProviderUnavailable)) throw err;
			await enqueueSend(row);
		}
	}
	const after = await messageById(deps.db, row.id);
	return messageView(after ?? row);
}
