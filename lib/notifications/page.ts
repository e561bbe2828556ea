/**
 * The buyer tracking page's HTML (issue 29; docs/decisions/0108-buyer-tracking-page.md),
 * server-rendered with Eta (autoescaped) from a {@link PageModel}; no script. Mobile-first, one
 * style block (its SHA-256 goes in the CSP, so no other style runs), the merchant's colour as
 * the header's background with a text colour of enough contrast (WCAG AA), dates in IST, and
 * Noto Sans Devanagari served beside the page for Hindi.
 */
import { createHash } from "node:crypto";
import { Eta } from "eta";
import type { Branding } from "../contracts";
import type { ShipmentStatus } from "../shared/shipment-status";
import { PAGE_TEXT, type PageLanguage, type PageText } from "./page-text";
import { brandView } from "./store";

/** What a tracking page shows. Times ISO-8601 UTC; `edd` an IST day. */
export interface PageModel {
	lang: PageLanguage;
	brand: Branding;
	awb_number: string;
	courier_name: string;
	status: ShipmentStatus;
	status_at: string | null;
	edd: string | null;
	/** newest first */
	scans: { at: string; location: string; status: ShipmentStatus }[];
	/** the page's own path without a query (the language switch links to it) */
	path: string;
	/** the failed-delivery panel, while the shipment has a live NDR case (issue 29) */
	ndr?: NdrPanel;
}

/**
 * The failed-delivery panel: the form (`form`) while the latest attempt waits for the buyer's
 * answer, or what was done with it (`answer`), or that the seller acted (`sellerActed`).
 */
export interface NdrPanel {
	/** the attempt the form answers */
	attempt: number;
	form: boolean;
	/** the days offered for a re-attempt: IST `YYYY-MM-DD` and its words */
	days: { value: string; label: string }[];
	answer: {
		status: "pending" | "applied" | "awaiting_approval" | "failed";
		choice: "reattempt" | "update" | "decline";
		day: string | null;
		error: string | null;
	} | null;
	sellerActed: boolean;
	/** a refused field's words (the 400 page), or null */
	problem: string | null;
	/** what the buyer typed (the 400 page keeps it) */
	values: Record<string, string>;
}

/** What the look-up form page shows. */
export interface LookupModel {
	lang: PageLanguage;
	/** the 404 page ("not found" above the form) */
	notFound: boolean;
	/** words for a malformed field, or null */
	problem: string | null;
	awb: string;
}

/** The fonts served beside the page (lib/notifications/track.ts `trackAsset`). */
export const PAGE_FONTS = {
	"noto-sans-devanagari-400.ttf": "400Regular/NotoSansDevanagari_400Regular.ttf",
	"noto-sans-devanagari-700.ttf": "700Bold/NotoSansDevanagari_700Bold.ttf",
} as const;

/** Relative luminance of `#RRGGBB` (WCAG 2). */
function luminance(hex: string): number {
	const [r, g, b] = [1, 3, 5].map((i) => {
		const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
		return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
	});
	return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** The text colour on `bg`: white or near-black, whichever contrasts more. */
export function textOn(bg: string): string {
	const l = luminance(bg);
	const dark = 0.0116; // #1A1A1A
	return 1.05 / (l + 0.05) >= (l + 0.05) / (dark + 0.05) ? "#FFFFFF" : "#1A1A1A";
}

/** The page's style block for an accent colour (default a neutral blue). */
function styleFor(colour: string | null): string {
	const accent = colour ?? "#1F4E9A";
	const fg = textOn(accent);
	return `@font-face{font-family:"Noto Sans Devanagari";font-weight:400;font-display:swap;src:url(/track/assets/noto-sans-devanagari-400.ttf) format("truetype");unicode-range:U+0900-097F,U+1CD0-1CFF,U+200C-200D,U+20B9,U+25CC,U+A830-A83F,U+A8E0-A8FF}
@font-face{font-family:"Noto Sans Devanagari";font-weight:700;font-display:swap;src:url(/track/assets/noto-sans-devanagari-700.ttf) format("truetype");unicode-range:U+0900-097F,U+1CD0-1CFF,U+200C-200D,U+20B9,U+25CC,U+A830-A83F,U+A8E0-A8FF}
*{box-sizing:border-box}
body{margin:0;font-family:"Noto Sans Devanagari",system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;color:#1A1A1A;background:#F4F5F7;line-height:1.5}
header{background:${accent};color:${fg};padding:16px}
header a{color:${fg}}
.brand{display:flex;align-items:center;gap:12px;max-width:640px;margin:0 auto}
.brand img{max-width:160px;max-height:48px}
.brand span{font-size:1.25rem;font-weight:700}
main{max-width:640px;margin:0 auto;padding:16px}
.card{background:#FFFFFF;border-radius:8px;padding:16px;margin-bottom:16px;border:1px solid #D8DCE3}
h1{font-size:1.5rem;margin:0 0 4px}
h2{font-size:1.1rem;margin:0 0 8px}
.muted{color:#4A5160;margin:0}
dl{display:grid;grid-template-columns:auto 1fr;gap:4px 12px;margin:0}
dt{color:#4A5160}
dd{margin:0;font-weight:700;word-break:break-all}
ol{list-style:none;margin:0;padding:0}
li{border-left:3px solid ${accent};padding:0 0 12px 12px;margin-left:4px}
li:last-child{padding-bottom:0}
li strong{display:block}
li span{display:block;color:#4A5160}
label{display:block;font-weight:700;margin:12px 0 4px}
input,select,button{font-family:inherit}
input,select{width:100%;padding:10px;font-size:1rem;border:1px solid #6B7280;border-radius:6px;background:#FFFFFF}
input[type=radio]{width:auto;margin:0 8px 0 0}
fieldset{border:1px solid #D8DCE3;border-radius:6px;margin:12px 0 0;padding:8px 12px 12px}
legend{font-weight:700;padding:0 4px}
label.choice{display:flex;align-items:center;margin:4px 0}
button{margin-top:16px;padding:10px 20px;font-size:1rem;border:0;border-radius:6px;background:${accent};color:${fg}}
.problem{color:#A4161A;font-weight:700}
nav{max-width:640px;margin:0 auto;padding:0 16px 24px;text-align:right}
a{color:#1F4E9A}
@media (min-width:900px){main{padding:24px 16px}h1{font-size:1.75rem}}`;
}

const eta = new Eta({ autoEscape: true, autoTrim: false, useWith: false });

const SHELL = `<!doctype html>
<html lang="<%= it.lang %>">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title><%= it.title %></title>
<style><%~ it.style %></style>
</head>
<body>
<header><div class="brand"><% if (it.brand.logo_url) { %><img src="<%= it.brand.logo_url %>" alt="<%= it.brand.brand_name || it.t.title %>" height="48"><% } %><% if (it.brand.brand_name) { %><span><%= it.brand.brand_name %></span><% } else if (!it.brand.logo_url) { %><span><%= it.t.title %></span><% } %></div></header>
<main>
<%~ it.body %>
<% if (it.brand.support_phone || it.brand.support_email) { %><section class="card" aria-labelledby="help"><h2 id="help"><%= it.t.help %></h2><p class="muted"><% if (it.brand.support_phone) { %><a href="tel:+91<%= it.brand.support_phone %>"><%= it.t.call %> +91 <%= it.brand.support_phone %></a><% } %><% if (it.brand.support_phone && it.brand.support_email) { %> · <% } %><% if (it.brand.support_email) { %><a href="mailto:<%= it.brand.support_email %>"><%= it.t.email %> <%= it.brand.support_email %></a><% } %></p></section><% } %>
</main>
<nav><a href="<%= it.switchHref %>" hreflang="<%= it.other %>" lang="<%= it.other %>"><%= it.t.language %></a></nav>
</body>
</html>
`;

const TRACKING = `<section class="card" aria-labelledby="status">
<p class="muted"><%= it.t.title %></p>
<h1 id="status"><%= it.t.status[it.m.status] %></h1>
<% if (it.m.status === "delivered" && it.m.status_at) { %><p class="muted"><%= it.t.delivered_on %> <%= it.fmtDay(it.m.status_at) %></p><% } else if (it.eddText) { %><p class="muted"><%= it.t.expected %> <strong><%= it.eddText %></strong></p><% } %>
</section>
<section class="card" aria-label="<%= it.t.courier %>">
<dl><dt><%= it.t.courier %></dt><dd><%= it.m.courier_name %></dd><dt><%= it.t.awb %></dt><dd><%= it.m.awb_number %></dd></dl>
</section>
<section class="card" aria-labelledby="history">
<h2 id="history"><%= it.t.history %></h2>
<% if (it.m.scans.length === 0) { %><p class="muted"><%= it.t.no_scans %></p><% } else { %><ol><% for (const s of it.m.scans) { %><li><strong><%= it.t.status[s.status] %></strong><span><%= s.location %></span><span><time datetime="<%= s.at %>"><%= it.fmtTime(s.at) %></time></span></li><% } %></ol><% } %>
</section>
<p class="muted"><a href="<%= it.m.path %>/stop?lang=<%= it.m.lang %>"><%= it.t.stop_link %></a></p>`;

const NDR = `<section class="card ndr" aria-labelledby="ndr">
<h2 id="ndr"><%= it.n.title %></h2>
<% if (it.p.answer && !it.p.form) { %><p><%= it.p.answer.status === "applied" ? it.n.applied : it.p.answer.status === "pending" ? it.n.sending : it.n.waiting %> <strong><%= it.n.chose[it.p.answer.choice] %><% if (it.p.answer.day) { %> (<%= it.p.answer.day %>)<% } %></strong></p>
<% } else if (it.p.sellerActed) { %><p><%= it.n.seller_acted %></p>
<% } else if (it.p.form) { %><% if (it.p.answer && it.p.answer.status === "failed") { %><p class="problem" role="alert"><%= it.n.failed %> <%= it.p.answer.error %></p><% } %><% if (it.p.problem) { %><p class="problem" role="alert"><%= it.p.problem %></p><% } %>
<p class="muted"><%= it.n.ask %></p>
<form method="post" action="<%= it.action %>">
<input type="hidden" name="attempt" value="<%= it.p.attempt %>">
<fieldset><legend><label class="choice"><input type="radio" name="choice" value="reattempt"<%= it.p.values.choice === "reattempt" ? " checked" : "" %>> <%= it.n.reattempt %></label></legend>
<label for="day"><%= it.n.day %></label>
<select id="day" name="date"><% for (const d of it.p.days) { %><option value="<%= d.value %>"<%= it.p.values.date === d.value ? " selected" : "" %>><%= d.label %></option><% } %></select>
</fieldset>
<fieldset><legend><label class="choice"><input type="radio" name="choice" value="update"<%= it.p.values.choice === "update" ? " checked" : "" %>> <%= it.n.update %></label></legend>
<label for="a1"><%= it.n.address_1 %></label><input id="a1" name="address_1" maxlength="255" autocomplete="street-address" value="<%= it.p.values.address_1 || "" %>">
<label for="lm"><%= it.n.landmark %></label><input id="lm" name="landmark" maxlength="255" value="<%= it.p.values.landmark || "" %>">
<label for="ph"><%= it.n.phone %></label><input id="ph" name="phone" inputmode="tel" maxlength="16" autocomplete="tel" value="<%= it.p.values.phone || "" %>">
<p class="muted"><%= it.n.update_hint %></p>
</fieldset>
<fieldset><legend><label class="choice"><input type="radio" name="choice" value="decline"<%= it.p.values.choice === "decline" ? " checked" : "" %>> <%= it.n.decline %></label></legend>
</fieldset>
<button type="submit"><%= it.n.submit %></button>
</form><% } %>
</section>`;

const LOOKUP = `<% if (it.m.notFound) { %><section class="card" aria-labelledby="nf"><h1 id="nf"><%= it.t.not_found_title %></h1><p class="muted"><%= it.t.not_found_body %></p></section><% } %>
<section class="card" aria-labelledby="find">
<h2 id="find"><%= it.t.lookup_title %></h2>
<% if (it.m.problem) { %><p class="problem" role="alert"><%= it.m.problem %></p><% } %>
<form method="get" action="/track">
<input type="hidden" name="lang" value="<%= it.lang %>">
<label for="awb"><%= it.t.lookup_awb %></label>
<input id="awb" name="awb" value="<%= it.m.awb %>" autocomplete="off" maxlength="40" required>
<label for="phone"><%= it.t.lookup_phone %></label>
<input id="phone" name="phone_last4" inputmode="numeric" pattern="[0-9]{4}" maxlength="4" autocomplete="off" required>
<button type="submit"><%= it.t.lookup_submit %></button>
</form>
<p class="muted"><%= it.t.lookup_hint %></p>
</section>`;

const STOP = `<section class="card" aria-labelledby="stop">
<% if (it.done) { %><h1 id="stop"><%= it.t.stopped_title %></h1><p class="muted"><%= it.t.stopped_body %></p><% } else { %><h1 id="stop"><%= it.t.stop_title %></h1><p class="muted"><%= it.t.stop_body %></p>
<form method="post" action="<%= it.action %>"><button type="submit"><%= it.t.stop_button %></button></form><% } %>
<p><a href="<%= it.back %>"><%= it.t.title %></a></p>
</section>`;

eta.loadTemplate("@shell", SHELL);
eta.loadTemplate("@stop", STOP);
eta.loadTemplate("@ndr", NDR);
eta.loadTemplate("@tracking", TRACKING);
eta.loadTemplate("@lookup", LOOKUP);

/** A day `YYYY-MM-DD` (IST) in the page's words, e.g. "Wed, 2 Dec". */
export function dayLabel(lang: PageLanguage, day: string): string {
	return FORMATS[lang].day.format(new Date(`${day}T12:00:00+05:30`));
}

/** Date formats per language (IST). */
const FORMATS = {
	en: {
		day: new Intl.DateTimeFormat("en-IN", {
			timeZone: "Asia/Kolkata",
			weekday: "short",
			day: "numeric",
			month: "short",
		}),
		time: new Intl.DateTimeFormat("en-IN", {
			timeZone: "Asia/Kolkata",
			day: "numeric",
			month: "short",
			hour: "numeric",
			minute: "2-digit",
		}),
	},
	hi: {
		day: new Intl.DateTimeFormat("hi-IN", {
			timeZone: "Asia/Kolkata",
			weekday: "short",
			day: "numeric",
			month: "short",
		}),
		time: new Intl.DateTimeFormat("hi-IN", {
			timeZone: "Asia/Kolkata",
			day: "numeric",
			month: "short",
			hour: "numeric",
			minute: "2-digit",
		}),
	},
} as const;

/** A rendered page: its HTML and the CSP that admits exactly its style block. */
export interface RenderedPage {
	html: string;
	csp: string;
}

/** The CSP of a page whose one style block is `style`. */
function cspFor(style: string): string {
	const hash = createHash("sha256").update(style).digest("base64");
	return `default-src 'none'; style-src 'sha256-${hash}'; img-src https:; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;
}

/** Styles (and their CSP) per accent colour, made once. */
const STYLES = new Map<string, { style: string; csp: string }>();
function styled(colour: string | null): { style: string; csp: string } {
	const key = colour ?? "";
	let s = STYLES.get(key);
	if (!s) {
		const style = styleFor(colour);
		s = { style, csp: cspFor(style) };
		if (STYLES.size < 10_000) STYLES.set(key, s);
	}
	return s;
}

/** The page around `body` (a rendered section) in `lang` for `brand`. */
function shell(
	lang: PageLanguage,
	brand: Branding,
	title: string,
	body: string,
	switchHref: string,
): RenderedPage {
	const t: PageText = PAGE_TEXT[lang];
	const { style, csp } = styled(brand.colour);
	const other = lang === "en" ? "hi" : "en";
	const html = eta.render("@shell", { lang, t, brand, title, style, body, switchHref, other });
	return { html, csp };
}

/** The tracking page of a shipment (`GET /track/{token}`). */
export function renderTracking(m: PageModel): RenderedPage {
	const t = PAGE_TEXT[m.lang];
	const f = FORMATS[m.lang];
	const eddText =
		m.edd && !["delivered", "rto_delivered", "lost", "damaged", "cancelled"].includes(m.status)
			? f.day.format(new Date(`${m.edd}T12:00:00+05:30`))
			: null;
	const tracking = eta.render("@tracking", {
		t,
		m,
		eddText,
		fmtDay: (iso: string) => f.day.format(new Date(iso)),
		fmtTime: (iso: string) => f.time.format(new Date(iso)),
	});
	const body = m.ndr
		? eta.render("@ndr", { n: t.ndr, p: m.ndr, action: `${m.path}/ndr?lang=${m.lang}` }) + tracking
		: tracking;
	const title = `${t.status[m.status]} · ${m.brand.brand_name ?? t.title}`;
	return shell(m.lang, m.brand, title, body, `${m.path}?lang=${m.lang === "en" ? "hi" : "en"}`);
}

/**
 * The opt-out page of a shipment (`/track/{token}/stop`): the question and one button (GET), or
 * the confirmation (`done`, after the POST). `path`: the tracking page's path.
 */
export function renderStop(m: {
	lang: PageLanguage;
	brand: Branding;
	path: string;
	done: boolean;
}): RenderedPage {
	const t = PAGE_TEXT[m.lang];
	const body = eta.render("@stop", {
		t,
		done: m.done,
		action: `${m.path}/stop?lang=${m.lang}`,
		back: `${m.path}?lang=${m.lang}`,
	});
	const title = m.done ? t.stopped_title : t.stop_title;
	return shell(m.lang, m.brand, title, body, `${m.path}/stop?lang=${m.lang === "en" ? "hi" : "en"}`);
}

/** The look-up form (`GET /track`), or the 404 page (the form under “not found”). */
export function renderLookup(m: LookupModel): RenderedPage {
	const t = PAGE_TEXT[m.lang];
	const body = eta.render("@lookup", { t, m, lang: m.lang });
	const brand = brandView(undefined);
	const title = m.notFound ? t.not_found_title : t.lookup_title;
	return shell(m.lang, brand, title, body, `/track?lang=${m.lang === "en" ? "hi" : "en"}`);
}
