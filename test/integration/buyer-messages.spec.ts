/**
 * Integration (issue 29; docs/decisions/0109-buyer-messages.md): buyer messages through the
 * gateway, real PostgreSQL, Redis, NATS, in one process and split over NATS. SMS through the
 * sandbox provider; WhatsApp through the `whatsapp_cloud` connector against a local HTTP server
 * standing in for the Graph API (it records what it was sent, fails the first send with a 500 to
 * show the retry); e-mail through the `smtp` connector against a real SMTP server
 * (`smtp-server`), for the test send (orders carry no buyer e-mail).
 * - preferences: defaults, validation, capability `settings.write`;
 * - sandbox scans → one message per event and channel, their states (`simulated`, `sent` after a
 *   retry), the WhatsApp template request, `GET /v1/orders/{id}/notifications`;
 * - a redelivered status change makes no second message;
 * - a signed WhatsApp delivery report → `delivered`; a bad signature 401; an unconfigured
 *   provider 404; a `STOP` reply opts the number out;
 * - quiet hours → `held` until their end (IST);
 * - the opt-out page: GET changes nothing, POST suppresses what comes next;
 * - the test send (`simulated` SMS, `sent` e-mail received by the SMTP server, 400 for a bad `to`).
 */
import { strict as assert } from "node:assert";
import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import type { ShipmentStatusChanged } from "../../lib/contracts";
import type { NotificationsDeps } from "../../lib/notifications/deps";
import { onStatusChange } from "../../lib/notifications/dispatch";
import type { ServiceName } from "../../lib/platform/config";
import { getSequelize, select } from "../../lib/platform/db";
import { newSender } from "../helpers/broker";
import { type Cluster, useCluster } from "../helpers/cluster";
import { orderBody, warehouseBody } from "../helpers/fixtures";
import { client } from "../helpers/flow";
import { eventually } from "../helpers/poll";

const ALL: ServiceName[] = [
	"gateway",
	"documents",
	"pincode",
	"rates",
	"warehouses",
	"intake",
	"booking",
	"billing",
	"ndr",
	"simulator",
	"notifications",
];
const APP_SECRET = "wa-app-secret-for-tests";
const PHONE_ID = "109876543210";

/** The stand-in Graph API and SMTP server, and what they received. */
interface Providers {
	graph: Server;
	smtp: SMTPServer;
	sent: { path: string; auth: string; body: Record<string, any> }[];
	mails: string[];
	failNext: number;
}

/** Starts the providers and points the notifications settings at them (restored by the returned function). */
async function startProviders(): Promise<{ p: Providers; restore: () => Promise<void> }> {
	const p: Providers = { sent: [], mails: [], failNext: 0 } as unknown as Providers;
	let n = 0;
	p.graph = createServer((req, res) => {
		let raw = "";
		req.on("data", (c) => {
			raw += c;
		});
		req.on("end", () => {
			if (p.failNext > 0) {
				p.failNext--;
				res.writeHead(500, { "content-type": "application/json" });
				res.end(
					JSON.stringify({
						error: { message: "Service temporarily unavailable", code: 2, type: "OAuthException" },
					}),
				);
				return;
			}
			const body = JSON.parse(raw);
			p.sent.push({ path: String(req.url), auth: String(req.headers.authorization), body });
			res.writeHead(200, { "content-type": "application/json" });
			res.end(
				JSON.stringify({
					messaging_product: "whatsapp",
					contacts: [{ input: body.to, wa_id: body.to }],
					messages: [{ id: `wamid.TEST${++n}` }],
				}),
			);
		});
	});
	await new Promise<void>((r) => p.graph.listen(0, "127.0.0.1", r));
	p.smtp = new SMTPServer({
		authOptional: true,
		disabledCommands: ["STARTTLS"],
		logger: false,
		onData(stream, _s, cb) {
			let m = "";
			stream.on("data", (c) => {
				m += c;
			});
			stream.on("end", () => {
				p.mails.push(m);
				cb();
			});
		},
	});
	await new Promise<void>((r) => p.smtp.listen(0, "127.0.0.1", r));
	const env = {
		NOTIFY_WHATSAPP_PROVIDER: "whatsapp_cloud",
		WHATSAPP_BASE_URL: `http://127.0.0.1:${(p.graph.address() as AddressInfo).port}`,
		WHATSAPP_PHONE_NUMBER_ID: PHONE_ID,
		WHATSAPP_TOKEN: "wa-token-for-tests",
		WHATSAPP_APP_SECRET: APP_SECRET,
		WHATSAPP_VERIFY_TOKEN: "wa-verify",
		NOTIFY_EMAIL_PROVIDER: "smtp",
		SMTP_URL: `smtp://127.0.0.1:${(p.smtp.server.address() as AddressInfo).port}`,
		SMTP_FROM: "orders@shop.example",
		NOTIFY_RETRY_MS: "50",
		RATE_LIMIT_LINK_PER_MIN: "100000",
	};
	const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
	Object.assign(process.env, env);
	return {
		p,
		restore: async () => {
			for (const [k, v] of Object.entries(saved)) {
				if (v === undefined) delete process.env[k];
				else process.env[k] = v;
			}
			await new Promise<void>((r) => p.graph.close(() => r()));
			await new Promise<void>((r) => p.smtp.close(() => r()));
		},
	};
}

/** A WhatsApp webhook body (statuses or messages) and its signature. */
function signed(value: Record<string, unknown>, secret = APP_SECRET) {
	const body = JSON.stringify({
		object: "whatsapp_business_account",
		entry: [
			{ id: "WABA1", changes: [{ field: "messages", value: { messaging_product: "whatsapp", ...value } }] },
		],
	});
	return { body, sig: `sha256=${createHmac("sha256", secret).update(body).digest("hex")}` };
}

/** A booked shipment of a new account with WhatsApp on (and the buyer's `email`, when given), and its merchant's API. */
async function shipment(cluster: Cluster, email?: string) {
	const sender = newSender();
	const api = client(cluster.base, await cluster.idp.tokenFor(sender, "merchant"));
	const on = await api.patch("/v1/settings/notifications", { channels: { whatsapp: true } });
	assert.equal(on.status, 200, JSON.stringify(on.body));
	await api.patch("/v1/settings/branding", { brand_name: "Asha Handlooms" });
	const wh = await api.post("/v1/warehouses", warehouseBody());
	assert.equal(wh.status, 201, JSON.stringify(wh.body));
	const body = orderBody(wh.body.data.id) as { receiver: Record<string, unknown> };
	if (email) body.receiver.email = email;
	const o = await api.post("/v1/intake/order", body);
	assert.equal(o.status, 201, JSON.stringify(o.body));
	const order_id = o.body.order_id as number;
	const b = await api.post("/v1/shipping/book/sync", { order_id, logistic_id: 1 });
	assert.equal(b.status, 200, JSON.stringify(b.body));
	const scan = async (event: string) => {
		const e = await api.post(`/v1/sandbox/orders/${order_id}/events`, { event });
		assert.equal(e.status, 200, JSON.stringify(e.body));
	};
	/** The order's messages once `ok` holds for them. */
	const messages = (ok: (m: any[]) => boolean, what: string) =>
		eventually(
			async () => {
				const r = await api.get(`/v1/orders/${order_id}/notifications`);
				assert.equal(r.status, 200, JSON.stringify(r.body));
				return ok(r.body.messages) ? (r.body.messages as any[]) : undefined;
			},
			{ what, ms: 30_000 },
		);
	return { sender, api, order_id, awb: b.body.awb as string, scan, messages };
}

function scenario(cluster: Cluster, providers: () => Providers) {
	it("preferences: defaults, validation, the settings.write capability", async () => {
		const sender = newSender();
		const owner = client(cluster.base, await cluster.idp.tokenFor(sender, "merchant_admin"));
		const ops = client(cluster.base, await cluster.idp.tokenFor(sender, "merchant_ops"));
		const d = await owner.get("/v1/settings/notifications");
		assert.equal(d.status, 200, JSON.stringify(d.body));
		assert.deepEqual(d.body, {
			channels: { sms: true, whatsapp: false, email: true },
			events: {
				shipped: true,
				out_for_delivery: true,
				delivered: true,
				failed_delivery: true,
				rto_initiated: true,
			},
			quiet_hours: null,
			language: "en",
			ndr_buyer_answers: "apply",
			providers: { sms: "sandbox", whatsapp: "whatsapp_cloud", email: "smtp" },
			updated_at: null,
		});
		const bad = await owner.patch("/v1/settings/notifications", {
			quiet_hours: { start: "25:00", end: "08:00" },
			language: "fr",
		});
		assert.equal(bad.status, 400, JSON.stringify(bad.body));
		assert.equal(bad.body.error, "validation_failed");
		assert.equal(
			(await owner.patch("/v1/settings/notifications", {})).body.details[0],
			"body: no updatable field",
		);
		const same = await owner.patch("/v1/settings/notifications", {
			quiet_hours: { start: "08:00", end: "08:00" },
		});
		assert.deepEqual(same.body.details, ["quiet_hours: start and end must differ"]);
		assert.equal((await ops.patch("/v1/settings/notifications", { language: "hi" })).status, 403);
		const set = await owner.patch("/v1/settings/notifications", {
			language: "hi",
			events: { delivered: false },
			quiet_hours: { start: "21:30", end: "08:00" },
		});
		assert.equal(set.status, 200, JSON.stringify(set.body));
		assert.equal(set.body.language, "hi");
		assert.equal(set.body.events.delivered, false);
		assert.equal(set.body.events.shipped, true);
		assert.deepEqual(set.body.quiet_hours, { start: "21:30", end: "08:00" });
		assert.ok(set.body.updated_at);
		assert.equal((await ops.get("/v1/settings/notifications")).body.language, "hi");
	});

	it("scans → one message per event and channel: SMS simulated, WhatsApp sent after a retried 500, e-mail received, the list", async () => {
		const p = providers();
		p.failNext = 1;
		const mails = p.mails.length;
		const s = await shipment(cluster, " Ravi.Kumar@Example.in ");
		await s.scan("picked_up");
		await s.scan("in_transit");
		await s.scan("out_for_delivery");
		const msgs = await s.messages(
			(m) => m.length === 6 && m.every((x) => x.status !== "queued"),
			"shipped and out-for-delivery messages settled",
		);
		const mail = msgs.find((m) => m.event === "shipped" && m.channel === "email");
		assert.equal(mail.status, "sent", JSON.stringify(mail));
		assert.equal(mail.recipient, "r***@example.in");
		assert.equal(p.mails.length, mails + 2);
		const raw = p.mails.find((m) => m.includes(`<msa-${mail.id}@shop.example>`)) ?? "";
		assert.match(raw, /^To: ravi\.kumar@example\.in/m);
		assert.match(raw, /^Subject: Your order .+ has shipped/m);
		assert.match(raw, new RegExp(`^List-Unsubscribe:\\s+<[^>]*/track/${s.awb}\\.[^>]*/stop>`, "m"));
		const of = (event: string, channel: string) =>
			msgs.filter((m) => m.event === event && m.channel === channel);
		for (const ev of ["shipped", "out_for_delivery"]) {
			assert.equal(of(ev, "sms").length, 1, ev);
			assert.equal(of(ev, "whatsapp").length, 1, ev);
			assert.equal(of(ev, "sms")[0].status, "simulated");
			assert.equal(of(ev, "sms")[0].provider, "sandbox");
			assert.equal(of(ev, "whatsapp")[0].status, "sent");
			assert.match(of(ev, "whatsapp")[0].provider_ref, /^wamid\.TEST\d+$/);
		}
		assert.equal(
			msgs.reduce((n, m) => n + m.tries, 0),
			7,
			"one message took two tries",
		);
		const sms = of("shipped", "sms")[0];
		assert.equal(sms.recipient, "******6780");
		assert.match(sms.body, /^Asha Handlooms: your order .+ has shipped with .+ \(AWB .+\)\./);
		assert.ok(
			sms.body.includes(`${cluster.base.replace("127.0.0.1", "localhost")}/track/${s.awb}.`) ||
				sms.body.includes(`/track/${s.awb}.`),
		);
		const wa = p.sent.find((x) => x.body.template?.name && x.body.to === "919123456780");
		assert.ok(wa, JSON.stringify(p.sent));
		assert.equal(wa.path, `/v21.0/${PHONE_ID}/messages`);
		assert.equal(wa.auth, "Bearer wa-token-for-tests");
		assert.equal(wa.body.template.language.code, "en");
		assert.equal(wa.body.template.components[0].parameters[0].text, "Asha Handlooms");
		// the 404 of another account's order, and a malformed id
		const other = client(cluster.base, await cluster.idp.tokenFor(newSender(), "merchant"));
		assert.equal((await other.get(`/v1/orders/${s.order_id}/notifications`)).status, 404);
		assert.equal((await s.api.get("/v1/orders/abc/notifications")).status, 400);
	});

	it("a redelivered status change makes no second message", async () => {
		const s = await shipment(cluster);
		await s.scan("picked_up");
		const first = await s.messages((m) => m.length === 2, "the shipped messages");
		const svc = cluster.brokers.map((b) => b.getLocalService("notifications")).find(Boolean) as unknown as {
			deps(): NotificationsDeps;
			broker: Parameters<typeof onStatusChange>[1];
		};
		const e: ShipmentStatusChanged = {
			event_id: `x-${s.awb}`,
			order_id: s.order_id,
			sender_id: s.sender,
			awb_number: s.awb,
			logistic_id: 1,
			status: "picked_up",
			status_name: "Picked up",
			status_at: new Date().toISOString(),
			seq: 99,
		};
		// `shipped` is once per shipment: a second picked-up (or in-transit) event adds nothing
		assert.equal((await onStatusChange(svc.deps(), svc.broker, e)).created, 0);
		assert.equal((await onStatusChange(svc.deps(), svc.broker, { ...e, status: "in_transit" })).created, 0);
		const ofd = { ...e, status: "out_for_delivery" as const, event_id: `y-${s.awb}` };
		assert.equal((await onStatusChange(svc.deps(), svc.broker, ofd)).created, 2);
		assert.equal((await onStatusChange(svc.deps(), svc.broker, ofd)).created, 0, "the same event again");
		const stale = {
			...ofd,
			event_id: `z-${s.awb}`,
			status_at: new Date(Date.now() - 25 * 3600_000).toISOString(),
		};
		assert.equal((await onStatusChange(svc.deps(), svc.broker, stale)).skipped, "stale");
		const after = await s.messages((m) => m.length === 4, "two more messages");
		assert.deepEqual(
			after.slice(0, 2).map((m) => m.id),
			first.map((m) => m.id),
		);
	});

	it("signed WhatsApp callbacks: a delivery report, a bad signature, an unknown provider, a STOP reply", async () => {
		const s = await shipment(cluster);
		await s.scan("picked_up");
		const [wa] = (
			await s.messages((m) => m.some((x) => x.channel === "whatsapp" && x.status === "sent"), "sent")
		).filter((m) => m.channel === "whatsapp");
		const url = `${cluster.base}/v1/notifications/callbacks/whatsapp_cloud`;
		const report = signed({
			statuses: [
				{
					id: wa.provider_ref,
					status: "delivered",
					timestamp: String(Math.floor(Date.now() / 1000)),
					recipient_id: "919123456780",
				},
			],
		});
		const bad = await fetch(url, {
			method: "POST",
			headers: { "content-type": "application/json", "x-hub-signature-256": `sha256=${"0".repeat(64)}` },
			body: report.body,
		});
		assert.equal(bad.status, 401);
		assert.equal(((await bad.json()) as { error: string }).error, "invalid_signature");
		// signed, but not the provider's format: 400, nothing applied
		const junk = "not json";
		const junkSig = `sha256=${createHmac("sha256", APP_SECRET).update(junk).digest("hex")}`;
		const malformed = await fetch(url, {
			method: "POST",
			headers: { "content-type": "application/json", "x-hub-signature-256": junkSig },
			body: junk,
		});
		assert.equal(malformed.status, 400);
		assert.equal(((await malformed.json()) as { error: string }).error, "validation_failed");
		const ok = await fetch(url, {
			method: "POST",
			headers: { "content-type": "application/json", "x-hub-signature-256": report.sig },
			body: report.body,
		});
		assert.equal(ok.status, 200);
		assert.deepEqual((await ok.json()) as unknown, { reports: 1, updated: 1, opted_out: 0 });
		const delivered = (await s.api.get(`/v1/orders/${s.order_id}/notifications`)).body.messages.find(
			(m: any) => m.id === wa.id,
		);
		assert.equal(delivered.status, "delivered");
		assert.ok(delivered.delivered_at);
		const unknown = await fetch(`${cluster.base}/v1/notifications/callbacks/msg91?token=x`, {
			method: "POST",
			headers: { "content-type": "application/json" },
			body: "{}",
		});
		assert.equal(unknown.status, 404);
		const check = await fetch(
			`${url}?hub.mode=subscribe&hub.verify_token=wa-verify&hub.challenge=1158201444`,
		);
		assert.equal(check.status, 200);
		assert.equal(await check.text(), "1158201444");
		// STOP from the buyer: what comes next is suppressed
		const stop = signed({
			messages: [
				{
					from: "919123456780",
					id: "wamid.IN1",
					timestamp: String(Math.floor(Date.now() / 1000)),
					type: "text",
					text: { body: "STOP" },
				},
			],
		});
		const r = await fetch(url, {
			method: "POST",
			headers: { "content-type": "application/json", "x-hub-signature-256": stop.sig },
			body: stop.body,
		});
		assert.equal(r.status, 200);
		assert.equal(((await r.json()) as { opted_out: number }).opted_out >= 1, true);
		await s.scan("out_for_delivery");
		const later = await s.messages(
			(m) => m.filter((x) => x.event === "out_for_delivery").length === 2,
			"ofd",
		);
		assert.deepEqual(
			later.filter((x) => x.event === "out_for_delivery").map((x) => x.status),
			["suppressed", "suppressed"],
		);
	});

	it("quiet hours hold a message until their end (IST); the opt-out page: GET changes nothing, POST suppresses", async () => {
		const s = await shipment(cluster);
		const ist = new Date(Date.now() + 330 * 60_000);
		const minute = ist.getUTCHours() * 60 + ist.getUTCMinutes();
		const hh = (m: number) =>
			`${String(Math.floor(((m + 1440) % 1440) / 60)).padStart(2, "0")}:${String(((m + 1440) % 1440) % 60).padStart(2, "0")}`;
		const set = await s.api.patch("/v1/settings/notifications", {
			quiet_hours: { start: hh(minute - 60), end: hh(minute + 60) },
		});
		assert.equal(set.status, 200, JSON.stringify(set.body));
		await s.scan("picked_up");
		const held = await s.messages((m) => m.length === 2, "held messages");
		for (const m of held) {
			assert.equal(m.status, "held");
			const wait = new Date(m.hold_until).getTime() - Date.now();
			assert.ok(wait > 55 * 60_000 && wait <= 61 * 60_000, `held ${wait} ms`);
		}
		await s.api.patch("/v1/settings/notifications", { quiet_hours: null });
		const token = (await s.api.get(`/v1/orders/${s.order_id}`)).body.tracking_page_url.split("/track/")[1];
		const page = await fetch(`${cluster.base}/track/${token}/stop`);
		assert.equal(page.status, 200);
		assert.match(await page.text(), /<form method="post"/);
		const still = await s.api.get(`/v1/orders/${s.order_id}/notifications`);
		assert.deepEqual(
			still.body.messages.map((m: any) => m.status),
			["held", "held"],
		);
		const post = await fetch(`${cluster.base}/track/${token}/stop`, {
			method: "POST",
			headers: { "content-type": "application/x-www-form-urlencoded" },
			body: "",
		});
		assert.equal(post.status, 200);
		assert.match(await post.text(), /Messages stopped/);
		const suppressed = await s.api.get(`/v1/orders/${s.order_id}/notifications`);
		assert.deepEqual(
			suppressed.body.messages.map((m: any) => m.status),
			["suppressed", "suppressed"],
		);
		assert.equal((await fetch(`${cluster.base}/track/not-a-token/stop`, { method: "POST" })).status, 404);
	});

	it("a failed delivery answered on the page: the message's link, the form, a refused field, DEFER_DLV by the buyer at the courier, one answer per attempt", async () => {
		const s = await shipment(cluster);
		await s.scan("picked_up");
		const r = await s.api.post(`/v1/sandbox/orders/${s.order_id}/events`, {
			event: "undelivered",
			reason: "Consignee not available",
		});
		assert.equal(r.status, 200, JSON.stringify(r.body));
		const msgs = await s.messages(
			(m) => m.some((x) => x.event === "failed_delivery" && x.channel === "sms" && x.status === "simulated"),
			"the failed-delivery message",
		);
		const sms = msgs.find((x) => x.event === "failed_delivery" && x.channel === "sms");
		const link = /(\/track\/[^\s]+)$/.exec(sms.body)?.[1];
		assert.ok(link, sms.body);
		const page = await eventually(
			async () => {
				const p = await fetch(`${cluster.base}${link}?lang=en`);
				const text = await p.text();
				return p.status === 200 && text.includes('name="choice"') ? text : undefined;
			},
			{ what: "the page with the form", ms: 20_000 },
		);
		assert.match(page, /We could not deliver your parcel/);
		assert.match(page, /<input type="hidden" name="attempt" value="1">/);
		const days = [...page.matchAll(/<option value="(\d{4}-\d{2}-\d{2})"/g)].map((m) => m[1]);
		assert.ok(days.length >= 3 && days.length <= 6, days.join());
		const post = (form: Record<string, string>) =>
			fetch(`${cluster.base}${link}/ndr?lang=en`, {
				method: "POST",
				redirect: "manual",
				headers: { "content-type": "application/x-www-form-urlencoded" },
				body: new URLSearchParams(form).toString(),
			});
		const bad = await post({ attempt: "1", choice: "update", phone: "12345" });
		assert.equal(bad.status, 400);
		assert.match(await bad.text(), /Enter a 10-digit Indian mobile number/);
		const outside = await post({ attempt: "1", choice: "reattempt", date: "2020-01-01" });
		assert.equal(outside.status, 400);
		// a form of another attempt than the case's latest: 409 with the form for the latest
		const stale = await post({ attempt: "2", choice: "reattempt", date: days[1] });
		assert.equal(stale.status, 409);
		assert.match(await stale.text(), /Another delivery attempt failed since this page was shown/);
		// a double-submitted form (a double tap): one answer, one action at the courier
		const [ok, twice] = await Promise.all([
			post({ attempt: "1", choice: "reattempt", date: days[1] }),
			post({ attempt: "1", choice: "reattempt", date: days[1] }),
		]);
		assert.equal(ok.status, 303);
		assert.equal(twice.status, 303);
		assert.equal(ok.headers.get("location"), `${link}?lang=en`);
		const row = await eventually(
			async () => {
				const l = await s.api.get("/v1/ndr?tab=action_requested&limit=100");
				return (l.body.data as any[]).find((x) => x.order_id === s.order_id);
			},
			{ what: "the case in action_requested", ms: 20_000 },
		);
		assert.equal(row.last_action.act, "DEFER_DLV");
		assert.equal(row.last_action.by, "buyer");
		assert.equal(row.buyer_answer.status, "applied");
		assert.equal(row.buyer_answer.choice, "reattempt");
		assert.equal(row.buyer_answer.details.deferred_date, days[1]);
		assert.equal(row.notification.template, "failed_delivery");
		const acts = await select<{ act: string }>(
			getSequelize(),
			"SELECT act FROM simulator.ndr_actions WHERE waybill = $1",
			[s.awb],
		);
		assert.deepEqual(
			acts.map((a) => a.act),
			["DEFER_DLV"],
			"the courier got the buyer's answer",
		);
		const after = await (await fetch(`${cluster.base}${link}?lang=en`)).text();
		assert.match(after, /We have told the courier/);
		assert.ok(!after.includes('name="choice"'), "no second form for the same attempt");
		const again = await post({ attempt: "1", choice: "decline" });
		assert.equal(again.status, 303);
		const acts2 = await select(getSequelize(), "SELECT act FROM simulator.ndr_actions WHERE waybill = $1", [
			s.awb,
		]);
		assert.equal(acts2.length, 1, "one answer per attempt");
	});

	it("with ndr_buyer_answers approve the answer waits on the NDR row; a decline applied moves the case to RTO", async () => {
		const s = await shipment(cluster);
		const set = await s.api.patch("/v1/settings/notifications", { ndr_buyer_answers: "approve" });
		assert.equal(set.body.ndr_buyer_answers, "approve");
		await s.scan("picked_up");
		await s.api.post(`/v1/sandbox/orders/${s.order_id}/events`, {
			event: "undelivered",
			reason: "Address incomplete",
		});
		const token = (await s.api.get(`/v1/orders/${s.order_id}`)).body.tracking_page_url.split("/track/")[1];
		await eventually(
			async () =>
				(await (await fetch(`${cluster.base}/track/${token}`)).text()).includes('name="choice"')
					? true
					: undefined,
			{ what: "the form", ms: 20_000 },
		);
		const form = new URLSearchParams({
			attempt: "1",
			choice: "update",
			address_1: "Flat 4, 45 MG Road",
			landmark: "Near the temple",
		});
		const r = await fetch(`${cluster.base}/track/${token}/ndr`, {
			method: "POST",
			redirect: "manual",
			headers: { "content-type": "application/x-www-form-urlencoded" },
			body: form.toString(),
		});
		assert.equal(r.status, 303);
		const row = await eventually(
			async () => {
				const l = await s.api.get("/v1/ndr?tab=action_required&limit=100");
				return (l.body.data as any[]).find((x) => x.order_id === s.order_id && x.buyer_answer);
			},
			{ what: "the answer on the row", ms: 20_000 },
		);
		assert.equal(row.buyer_answer.status, "awaiting_approval");
		assert.deepEqual(row.buyer_answer.details, {
			address_1: "Flat 4, 45 MG Road",
			landmark: "Near the temple",
		});
		assert.equal(row.last_action, null, "nothing sent to the courier");
		assert.match(
			await (await fetch(`${cluster.base}/track/${token}`)).text(),
			/The seller will confirm your request/,
		);
		// the same merchant switches to apply; another shipment's buyer declines
		await s.api.patch("/v1/settings/notifications", { ndr_buyer_answers: "apply" });
		const d = await shipment(cluster);
		await d.scan("picked_up");
		await d.api.post(`/v1/sandbox/orders/${d.order_id}/events`, {
			event: "undelivered",
			reason: "Refused by consignee",
		});
		const dt = (await d.api.get(`/v1/orders/${d.order_id}`)).body.tracking_page_url.split("/track/")[1];
		await eventually(
			async () =>
				(await (await fetch(`${cluster.base}/track/${dt}`)).text()).includes('name="choice"')
					? true
					: undefined,
			{ what: "the form", ms: 20_000 },
		);
		const dr = await fetch(`${cluster.base}/track/${dt}/ndr`, {
			method: "POST",
			redirect: "manual",
			headers: { "content-type": "application/x-www-form-urlencoded" },
			body: "attempt=1&choice=decline",
		});
		assert.equal(dr.status, 303);
		const rto = await eventually(
			async () => {
				const l = await d.api.get("/v1/ndr?tab=rto&limit=100");
				return (l.body.data as any[]).find((x) => x.order_id === d.order_id);
			},
			{ what: "the case in rto", ms: 20_000 },
		);
		assert.equal(rto.last_action.act, "RTO");
		assert.equal(rto.last_action.by, "buyer");
		assert.equal(rto.buyer_answer.choice, "decline");
	});

	it("the test send: SMS simulated, e-mail received by the SMTP server, 400 for a bad recipient", async () => {
		const p = providers();
		const api = client(cluster.base, await cluster.idp.tokenFor(newSender(), "merchant"));
		await api.patch("/v1/settings/branding", {
			brand_name: "Asha Handlooms",
			support_email: "help@asha.example",
		});
		const sms = await api.post("/v1/settings/notifications/test", { channel: "sms", to: "+91 98765 43210" });
		assert.equal(sms.status, 201, JSON.stringify(sms.body));
		assert.equal(sms.body.status, "simulated");
		assert.equal(sms.body.recipient, "******3210");
		assert.equal(sms.body.event, "test");
		const mails = p.mails.length;
		const mail = await api.post("/v1/settings/notifications/test", {
			channel: "email",
			to: "Buyer@Example.in",
			lang: "hi",
		});
		assert.equal(mail.status, 201, JSON.stringify(mail.body));
		assert.equal(mail.body.status, "sent", JSON.stringify(mail.body));
		assert.equal(mail.body.recipient, "b***@example.in");
		assert.equal(p.mails.length, mails + 1);
		const raw = p.mails.at(-1) ?? "";
		assert.match(raw, /^To: buyer@example\.in/m);
		assert.match(raw, /^Reply-To: help@asha\.example/m);
		assert.match(raw, new RegExp(`^Message-ID: <msa-${mail.body.id}@shop\\.example>`, "m"));
		const bad = await api.post("/v1/settings/notifications/test", { channel: "sms", to: "12345" });
		assert.equal(bad.status, 400, JSON.stringify(bad.body));
		assert.deepEqual(bad.body.details, ["to: must be an Indian mobile number"]);
		// 20 test messages an hour per account: two made above, 18 more, then 429
		for (let i = 0; i < 18; i++) {
			const r = await api.post("/v1/settings/notifications/test", { channel: "sms", to: "9876543210" });
			assert.equal(r.status, 201, JSON.stringify(r.body));
		}
		const over = await api.post("/v1/settings/notifications/test", { channel: "sms", to: "9876543210" });
		assert.equal(over.status, 429, JSON.stringify(over.body));
		assert.equal(over.body.error, "too_many_test_messages");
	});
}

describe("integration: buyer messages", function () {
	this.timeout(180_000);
	const ctx: { p?: Providers; restore?: () => Promise<void> } = {};
	before(async () => {
		const s = await startProviders();
		ctx.p = s.p;
		ctx.restore = s.restore;
	});

	describe("in one process", () => {
		const cluster = useCluster(
			"msg1",
			[ALL],
			ALL.filter((s) => s !== "gateway"),
		);
		scenario(cluster, () => ctx.p as Providers);
	});

	describe("split over NATS", () => {
		const cluster = useCluster(
			"msg2",
			[
				["gateway", "documents"],
				["pincode", "rates", "warehouses", "intake", "simulator"],
				["booking", "billing", "ndr"],
				["notifications"],
			],
			ALL.filter((s) => s !== "gateway"),
		);
		scenario(cluster, () => ctx.p as Providers);
	});

	after(async () => {
		await ctx.restore?.();
	});
});
