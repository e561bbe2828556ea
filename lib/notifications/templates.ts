/**
 * The buyer messages' words (issue 29; docs/decisions/0109-buyer-messages.md): per event and
 * language (English, Hindi), one text used by SMS, WhatsApp and the e-mail's text part, an
 * e-mail subject, and the e-mail's HTML (Eta, autoescaped). Variables are named and ordered
 * ({@link TEMPLATE_VARS}): providers with positional variables (MSG91's `var1…`, WhatsApp's
 * `{{1}}…`) take them in that order, so a DLT-registered SMS template or an approved WhatsApp
 * template is written with the same slots.
 *
 * Every message names the merchant (the brand, else "your seller"), the order reference and the
 * courier, and links to the buyer's tracking page; none carries the buyer's address or phone.
 */
import { Eta } from "eta";
import { textOn } from "./page";
import type { MessageEvent, MessageLang } from "./providers/types";

/** The events a buyer is messaged about, in lifecycle order (`test` is a merchant's test send). */
export const BUYER_EVENTS = [
	"shipped",
	"out_for_delivery",
	"delivered",
	"failed_delivery",
	"rto_initiated",
] as const;

/** A buyer event (no `test`). */
export type BuyerEvent = (typeof BUYER_EVENTS)[number];

/** Whether `v` is a {@link BuyerEvent}. */
export function isBuyerEvent(v: unknown): v is BuyerEvent {
	return typeof v === "string" && (BUYER_EVENTS as readonly string[]).includes(v);
}

/** The variables of every message, by name. */
export interface MessageVars {
	/** the merchant's brand name (or "your seller" / "आपके विक्रेता") */
	brand: string;
	/** the merchant's order reference */
	order_no: string;
	awb: string;
	courier: string;
	/** the absolute tracking page URL (signed token) */
	link: string;
	/** the promised delivery day in words (IST), or "" */
	edd: string;
	/** the merchant's support phone or e-mail, or "" */
	support: string;
}

/** Each event's variables, in the order positional providers number them (var1 / {{1}} first). */
export const TEMPLATE_VARS: Record<MessageEvent, readonly (keyof MessageVars)[]> = {
	shipped: ["brand", "order_no", "courier", "awb", "edd", "link"],
	out_for_delivery: ["brand", "order_no", "courier", "awb", "link"],
	delivered: ["brand", "order_no", "link"],
	failed_delivery: ["brand", "order_no", "courier", "link"],
	rto_initiated: ["brand", "order_no", "support", "link"],
	test: ["brand", "link"],
};

type Words = Record<MessageEvent, { text: (v: MessageVars) => string; subject: (v: MessageVars) => string }>;

const EN: Words = {
	shipped: {
		text: (v) =>
			`${v.brand}: your order ${v.order_no} has shipped with ${v.courier} (AWB ${v.awb}).${v.edd ? ` Expected by ${v.edd}.` : ""} Track: ${v.link}`,
		subject: (v) => `Your order ${v.order_no} has shipped`,
	},
	out_for_delivery: {
		text: (v) =>
			`${v.brand}: your order ${v.order_no} is out for delivery today with ${v.courier} (AWB ${v.awb}). Track: ${v.link}`,
		subject: (v) => `Your order ${v.order_no} is out for delivery`,
	},
	delivered: {
		text: (v) =>
			`${v.brand}: your order ${v.order_no} has been delivered. Thank you for shopping with us. ${v.link}`,
		subject: (v) => `Your order ${v.order_no} has been delivered`,
	},
	failed_delivery: {
		text: (v) =>
			`${v.brand}: ${v.courier} could not deliver your order ${v.order_no}. Choose a new delivery date or correct your address here: ${v.link}`,
		subject: (v) => `We could not deliver your order ${v.order_no}`,
	},
	rto_initiated: {
		text: (v) =>
			`${v.brand}: your order ${v.order_no} is being returned to the seller.${v.support ? ` Questions? ${v.support}.` : ""} ${v.link}`,
		subject: (v) => `Your order ${v.order_no} is being returned`,
	},
	test: {
		text: (v) =>
			`${v.brand}: this is a test of your shipment messages. Buyers will see their tracking page here: ${v.link}`,
		subject: () => "Test of your shipment messages",
	},
};

const HI: Words = {
	shipped: {
		text: (v) =>
			`${v.brand}: आपका ऑर्डर ${v.order_no} ${v.courier} से भेज दिया गया है (AWB ${v.awb})।${v.edd ? ` अनुमानित डिलीवरी ${v.edd} तक।` : ""} ट्रैक करें: ${v.link}`,
		subject: (v) => `आपका ऑर्डर ${v.order_no} भेज दिया गया है`,
	},
	out_for_delivery: {
		text: (v) =>
			`${v.brand}: आपका ऑर्डर ${v.order_no} आज ${v.courier} द्वारा डिलीवरी के लिए निकला है (AWB ${v.awb})। ट्रैक करें: ${v.link}`,
		subject: (v) => `आपका ऑर्डर ${v.order_no} डिलीवरी के लिए निकला है`,
	},
	delivered: {
		text: (v) => `${v.brand}: आपका ऑर्डर ${v.order_no} डिलीवर हो गया है। हमसे खरीदारी के लिए धन्यवाद। ${v.link}`,
		subject: (v) => `आपका ऑर्डर ${v.order_no} डिलीवर हो गया है`,
	},
	failed_delivery: {
		text: (v) =>
			`${v.brand}: ${v.courier} आपका ऑर्डर ${v.order_no} डिलीवर नहीं कर सका। नई तारीख चुनें या अपना पता ठीक करें: ${v.link}`,
		subject: (v) => `आपका ऑर्डर ${v.order_no} डिलीवर नहीं हो सका`,
	},
	rto_initiated: {
		text: (v) =>
			`${v.brand}: आपका ऑर्डर ${v.order_no} विक्रेता को वापस भेजा जा रहा है।${v.support ? ` सवाल? ${v.support}।` : ""} ${v.link}`,
		subject: (v) => `आपका ऑर्डर ${v.order_no} वापस भेजा जा रहा है`,
	},
	test: {
		text: (v) => `${v.brand}: यह आपके शिपमेंट संदेशों की जाँच है। खरीदार अपना ट्रैकिंग पेज यहाँ देखेंगे: ${v.link}`,
		subject: () => "आपके शिपमेंट संदेशों की जाँच",
	},
};

/** The words of each language. */
const WORDS: Record<MessageLang, Words> = { en: EN, hi: HI };

/** What stands for a merchant without a brand name. */
export const NO_BRAND: Record<MessageLang, string> = { en: "Your seller", hi: "आपके विक्रेता" };

/** The opt-out line of an e-mail. */
const OPT_OUT: Record<MessageLang, string> = {
	en: "Do not want these messages? Stop them here",
	hi: "ये संदेश नहीं चाहिए? यहाँ बंद करें",
};

/** A rendered message. */
export interface RenderedMessage {
	/** SMS / WhatsApp fallback / the e-mail's text part */
	text: string;
	subject: string;
	/** the variables in {@link TEMPLATE_VARS} order (what positional providers send) */
	vars: Record<string, string>;
}

/** Renders an event's message in `lang` from its variables. */
export function renderMessage(event: MessageEvent, lang: MessageLang, v: MessageVars): RenderedMessage {
	const w = WORDS[lang][event];
	const vars: Record<string, string> = {};
	for (const k of TEMPLATE_VARS[event]) vars[k] = v[k];
	return { text: w.text(v), subject: w.subject(v), vars };
}

const eta = new Eta({ autoEscape: true, autoTrim: false, useWith: false });
eta.loadTemplate(
	"@email",
	`<!doctype html>
<html lang="<%= it.lang %>"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title><%= it.subject %></title></head>
<body style="margin:0;padding:16px;font-family:Arial,'Noto Sans Devanagari',sans-serif;color:#1a1a1a;background:#f6f6f6">
<div style="max-width:560px;margin:0 auto;background:#fff;border-radius:8px;overflow:hidden">
<div style="background:<%= it.colour %>;color:<%= it.ink %>;padding:16px;font-size:18px;font-weight:bold"><%= it.brand %></div>
<div style="padding:16px;font-size:16px;line-height:1.5"><p><%= it.text %></p>
<p><a href="<%= it.link %>" style="display:inline-block;padding:10px 16px;background:<%= it.colour %>;color:<%= it.ink %>;text-decoration:none;border-radius:4px"><%= it.cta %></a></p></div>
<% if (it.optout) { %><div style="padding:12px 16px;font-size:12px;color:#555;border-top:1px solid #eee"><a href="<%= it.optout %>" style="color:#555"><%= it.optoutText %></a></div><% } %>
</div></body></html>`,
);

/** The button words of an e-mail. */
const CTA: Record<MessageLang, string> = { en: "Track your order", hi: "अपना ऑर्डर ट्रैक करें" };

/**
 * The e-mail's HTML part: the brand's header (its colour, white or near-black ink), the text,
 * a button to the tracking page, the opt-out link. Every value escaped.
 */
export function renderEmailHtml(o: {
	lang: MessageLang;
	subject: string;
	text: string;
	brand: string;
	colour: string | null;
	link: string;
	optout: string | null;
}): string {
	const colour = o.colour ?? "#1F4E9A";
	return eta.render("@email", {
		...o,
		colour,
		ink: textOn(colour),
		cta: CTA[o.lang],
		optoutText: OPT_OUT[o.lang],
	});
}
