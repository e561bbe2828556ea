/**
 * The buyer's pages (issue 29; docs/decisions/0108-buyer-tracking-page.md): the tracking page
 * behind its signed token, the AWB look-up, the page's font. Each answers a {@link PageAnswer}
 * (status, media type, headers, body) the service hands to the gateway.
 *
 * Nothing about the buyer is shown: the page has the brand, the status and its history, the
 * promised date, the courier and the AWB. The token is a bearer credential (a label link's
 * scheme with its own key, lib/shared/label-link.ts). A cancelled or unknown shipment, a bad
 * token, and an AWB with the wrong phone digits all answer the same 404 page.
 *
 * A rendered page is kept 10 s per (AWB, language) so a buyer refreshing, or a burst of
 * buyers opening one message, costs one read of booking; it is dropped sooner when booking
 * broadcasts the shipment's status change or its cancellation ({@link forgetPage}; record 0159);
 * brands are kept 60 s.
 */
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
	type AwbShipmentView,
	type Branding,
	type Caller,
	call,
	type NdrBuyerAnswerInput,
	type NdrBuyerCase,
	type PageParams,
} from "../contracts";
import { errorBodyOf } from "../platform/errors";
import { isDeliveryDay } from "../shared/calendar";
import { addDays, istDay } from "../shared/ist-date";
import {
	isPrintableAwb,
	signTrackingToken,
	TRACKING_PAGE_PREFIX,
	verifyTrackingToken,
} from "../shared/label-link";
import { CALL_OPTIONS, type NotificationsDeps } from "./deps";
import { mobileOf } from "./dispatch";
import { optOut } from "./message-store";
import {
	dayLabel,
	type NdrPanel,
	PAGE_FONTS,
	type RenderedPage,
	renderLookup,
	renderStop,
	renderTracking,
} from "./page";
import { PAGE_TEXT, type PageLanguage, pageLanguage } from "./page-text";
import { preferencesOf } from "./preferences";
import { brandOf } from "./store";

/** What a page action answers: the gateway writes it with these headers. */
export interface PageAnswer {
	status: number;
	type: string;
	headers: Record<string, string>;
	body: string | Buffer;
}

/** How long a rendered page and a brand are kept (ms). */
const PAGE_TTL_MS = 10_000;
const BRAND_TTL_MS = 60_000;
/** Most entries either cache holds before it starts over. */
const CACHE_MAX = 20_000;

const pages = new Map<string, { page: RenderedPage; until: number }>();
const brands = new Map<number, { brand: Branding; until: number }>();

/** Drops the rendered pages of an AWB (its status changed: a new scan, a cancellation). */
export function forgetPage(awb_number: string): void {
	pages.delete(`${awb_number}|en`);
	pages.delete(`${awb_number}|hi`);
}

/** Drops the cached brand of an account (after its change). */
export function forgetBrand(sender: number): void {
	brands.delete(sender);
}

/** The account's brand, from memory for {@link BRAND_TTL_MS}. */
async function brandFor(deps: NotificationsDeps, sender: number): Promise<Branding> {
	const hit = brands.get(sender);
	if (hit && hit.until > Date.now()) return hit.brand;
	const brand = await brandOf(deps.db, sender);
	if (brands.size >= CACHE_MAX) brands.clear();
	brands.set(sender, { brand, until: Date.now() + BRAND_TTL_MS });
	return brand;
}

/** An HTML answer with the headers every buyer page carries. */
function html(status: number, page: RenderedPage, cache: string): PageAnswer {
	return {
		status,
		type: "text/html; charset=utf-8",
		headers: {
			"Content-Security-Policy": page.csp,
			"Referrer-Policy": "no-referrer",
			"X-Robots-Tag": "noindex, nofollow",
			"Cache-Control": cache,
		},
		body: page.html,
	};
}

/** The 404 page: “not found” above the look-up form. */
function notFound(lang: PageLanguage, awb = ""): PageAnswer {
	return html(404, renderLookup({ lang, notFound: true, problem: null, awb }), "no-store");
}

/** The live shipment of an AWB (booking), or null. */
function shipmentOf(via: Caller, awb_number: string): Promise<AwbShipmentView | null> {
	return call(via, "booking.shipmentByAwb", { awb_number, scan_limit: 50 }, CALL_OPTIONS);
}

/**
 * `GET /track/{token}`: the tracking page of the live shipment the token names, in the
 * language asked (`lang`, else `Accept-Language`, else English); the 404 page for a bad token
 * or an AWB no live booking holds.
 * @throws 503 `service_unavailable` when booking cannot answer
 */
export async function trackingPage(deps: NotificationsDeps, via: Caller, p: PageParams): Promise<PageAnswer> {
	const lang = pageLanguage(p.lang, p.accept_language);
	const awb = verifyTrackingToken(p.token);
	if (!awb) return notFound(lang);
	const key = `${awb}|${lang}`;
	const hit = pages.get(key);
	if (hit && hit.until > Date.now()) return html(200, hit.page, "private, max-age=60");
	const s = await shipmentOf(via, awb);
	if (!s) return notFound(lang);
	const ndr = s.status === "undelivered" ? await ndrPanel(via, s.sender_id, awb, lang) : undefined;
	const page = await pageOf(deps, s, p.token, lang, ndr);
	// an undelivered shipment whose case ndr has not opened yet is not kept: the form comes in a moment
	if (s.status !== "undelivered" || ndr) {
		if (pages.size >= CACHE_MAX) pages.clear();
		pages.set(key, { page, until: Date.now() + PAGE_TTL_MS });
	}
	return html(200, page, "private, max-age=60");
}

/** The days a buyer may ask a re-attempt on: tomorrow to 6 days ahead (IST), within the courier's DEFER window, delivery days only. */
export function reattemptDays(first_pending_at: string, now = new Date()): string[] {
	const today = istDay(now);
	const last = addDays(istDay(new Date(first_pending_at)), BUYER_DAYS);
	const out: string[] = [];
	for (let i = 1; i <= BUYER_DAYS; i++) {
		const d = addDays(today, i);
		if (d > last) break;
		if (isDeliveryDay(d)) out.push(d);
	}
	return out;
}

/** Days ahead a buyer may choose (the couriers' DEFER_DLV window). */
const BUYER_DAYS = 6;

/**
 * The failed-delivery panel of an undelivered shipment (`ndr.buyerCase`, 2 s), or undefined when
 * there is none to show (no live case, RTO) or ndr cannot answer (the page still renders).
 */
async function ndrPanel(
	via: Caller,
	sender_id: number,
	awb_number: string,
	lang: PageLanguage,
	problem: string | null = null,
	values: Record<string, string> = {},
): Promise<NdrPanel | undefined> {
	let c: NdrBuyerCase | null;
	try {
		c = await call(via, "ndr.buyerCase", { sender_id, awb_number }, { timeout: 2000 });
	} catch {
		return undefined;
	}
	if (!c || (c.tab !== "action_required" && c.tab !== "action_requested")) return undefined;
	const a = c.buyer_answer && c.buyer_answer.attempt_no === c.attempts ? c.buyer_answer : null;
	const days = reattemptDays(c.first_pending_at);
	return {
		attempt: c.attempts,
		form: c.tab === "action_required" && (!a || a.status === "failed") && !!days.length,
		days: days.map((value) => ({ value, label: dayLabel(lang, value) })),
		answer: a
			? {
					status: a.status,
					choice: a.choice,
					day: typeof a.details.deferred_date === "string" ? dayLabel(lang, a.details.deferred_date) : null,
					error: a.error,
				}
			: null,
		sellerActed: c.tab === "action_requested" && !a,
		problem,
		values,
	};
}

/**
 * `POST /track/{token}/ndr`: the buyer's answer to the failed delivery (form fields `attempt`,
 * `choice` `reattempt` | `update` | `decline`, `date`, `address_1`, `landmark`, `phone`),
 * checked here in the buyer's language, then handed to ndr (`ndr.buyerAnswer`: the path of
 * `POST /v1/shipping/ndr`, recorded `by: buyer`; or kept for the merchant with
 * `ndr_buyer_answers: approve`). → 303 to the page, which says what was done; the form again
 * (400) with what is wrong; 503 with the form when ndr or the courier cannot be reached; the
 * 404 page for a bad token or a dead shipment.
 * @throws 503 `service_unavailable` when booking cannot answer
 */
export async function answerNdr(deps: NotificationsDeps, via: Caller, p: PageParams): Promise<PageAnswer> {
	const lang = pageLanguage(p.lang, p.accept_language);
	const awb = verifyTrackingToken(p.token);
	if (!awb) return notFound(lang);
	const s = await shipmentOf(via, awb);
	if (!s) return notFound(lang);
	const f = p.form ?? {};
	const t = PAGE_TEXT[lang].ndr;
	const back = backTo(p.token, lang);
	const c = await call(
		via,
		"ndr.buyerCase",
		{ sender_id: s.sender_id, awb_number: awb },
		{ timeout: 2000 },
	).catch(() => null);
	if (c?.tab !== "action_required") return back;
	const choice = f.choice;
	const details: NdrBuyerAnswerInput["details"] = {};
	let problem: string | null = null;
	if (choice === "reattempt") {
		if (!reattemptDays(c.first_pending_at).includes(f.date ?? "")) problem = t.bad_day;
		else details.deferred_date = f.date;
	} else if (choice === "update") {
		const address_1 = (f.address_1 ?? "").trim();
		const landmark = (f.landmark ?? "").trim();
		const phone = (f.phone ?? "").trim();
		if (address_1 && (address_1.length < 3 || address_1.length > 255)) problem = t.bad_address;
		else if (landmark.length > 255) problem = t.bad_landmark;
		else if (phone && !mobileOf(phone)) problem = t.bad_phone;
		else if (!address_1 && !phone) problem = t.nothing;
		if (address_1) details.address_1 = address_1;
		if (address_1 && landmark) details.landmark = landmark;
		const mobile = mobileOf(phone);
		if (mobile) details.phone = mobile;
	} else if (choice !== "decline") problem = t.bad_choice;
	// the page with the form again (400 / 409 / 503), what is wrong above it
	const again = async (status: number, words: string) =>
		html(
			status,
			await pageOf(deps, s, p.token, lang, await ndrPanel(via, s.sender_id, awb, lang, words, f)),
			"no-store",
		);
	if (problem) return again(400, problem);
	if (Number(f.attempt) !== c.attempts) return again(409, t.stale);
	const prefs = await preferencesOf(deps, s.sender_id);
	try {
		await call(
			via,
			"ndr.buyerAnswer",
			{
				sender_id: s.sender_id,
				awb_number: awb,
				attempt_no: Number(f.attempt) || 0,
				choice: choice as NdrBuyerAnswerInput["choice"],
				details,
				apply: prefs.ndr_answers === "apply",
			},
			{ timeout: 20_000 },
		);
	} catch (err) {
		const code = errorBodyOf(err)?.body?.error;
		if (code === "ndr_attempt_changed") return again(409, t.stale);
		if (code === "no_open_ndr") return back;
		if (code === "validation_failed") return again(400, choice === "reattempt" ? t.bad_day : t.bad_address);
		return again(503, t.unavailable);
	}
	forgetPage(awb);
	return back;
}

/** 303 back to the tracking page (Post/Redirect/Get), which shows the answer's state. */
function backTo(token: string, lang: PageLanguage): PageAnswer {
	return {
		status: 303,
		type: "text/plain; charset=utf-8",
		headers: {
			Location: `${TRACKING_PAGE_PREFIX}${token}?lang=${lang}`,
			"Referrer-Policy": "no-referrer",
			"Cache-Control": "no-store",
		},
		body: "",
	};
}

/** The tracking page of shipment `s` (its link's `token`) in `lang`, with the failed-delivery panel when given. */
async function pageOf(
	deps: NotificationsDeps,
	s: AwbShipmentView,
	token: string,
	lang: PageLanguage,
	ndr: NdrPanel | undefined,
): Promise<RenderedPage> {
	return renderTracking({
		lang,
		brand: await brandFor(deps, s.sender_id),
		awb_number: s.awb_number,
		courier_name: s.courier_name,
		status: s.status,
		status_at: s.status_at,
		edd: s.edd,
		scans: [...s.scans].reverse(),
		path: `${TRACKING_PAGE_PREFIX}${token}`,
		ndr,
	});
}

/**
 * `GET /track?awb=&phone_last4=`: without `awb`, the look-up form; a malformed AWB or phone
 * digits, the form again (400) saying which; an AWB of a live shipment whose delivery phone
 * ends with those 4 digits, 303 to its tracking page; anything else the same 404 page.
 * @throws 503 `service_unavailable` when booking or intake cannot answer
 */
export async function trackLookup(via: Caller, p: PageParams): Promise<PageAnswer> {
	const lang = pageLanguage(p.lang, p.accept_language);
	const awb = p.awb.trim();
	if (awb === "" && p.phone_last4 === "")
		return html(200, renderLookup({ lang, notFound: false, problem: null, awb: "" }), "no-store");
	const problem = !isPrintableAwb(awb)
		? PAGE_TEXT[lang].bad_awb
		: !/^\d{4}$/.test(p.phone_last4)
			? PAGE_TEXT[lang].bad_phone
			: null;
	if (problem) return html(400, renderLookup({ lang, notFound: false, problem, awb }), "no-store");
	const s = await shipmentOf(via, awb);
	if (!s) return notFound(lang, awb);
	const order = await call(
		via,
		"intake.getOrder",
		{ sender_id: s.sender_id, order_id: s.order_id },
		CALL_OPTIONS,
	);
	const phone = order?.consignee?.phone ?? "";
	if (phone.length < 4 || phone.slice(-4) !== p.phone_last4) return notFound(lang, awb);
	return {
		status: 303,
		type: "text/plain; charset=utf-8",
		headers: {
			Location: `${TRACKING_PAGE_PREFIX}${signTrackingToken(awb)}?lang=${lang}`,
			"Referrer-Policy": "no-referrer",
			"Cache-Control": "no-store",
		},
		body: "",
	};
}

/**
 * `GET /track/{token}/stop` (the question and one button) and `POST` (the opt-out): the live
 * shipment's delivery phone and e-mail get no more messages from its merchant; pending ones are
 * suppressed. A GET changes nothing (link previews and mail scanners open links). The 404 page
 * for a bad token or a dead shipment.
 * @throws 503 `service_unavailable` when booking or intake cannot answer
 */
export async function stopPage(deps: NotificationsDeps, via: Caller, p: PageParams): Promise<PageAnswer> {
	const lang = pageLanguage(p.lang, p.accept_language);
	const awb = verifyTrackingToken(p.token);
	if (!awb) return notFound(lang);
	const s = await shipmentOf(via, awb);
	if (!s) return notFound(lang);
	const done = p.method === "POST";
	if (done) {
		const order = await call(
			via,
			"intake.getOrder",
			{ sender_id: s.sender_id, order_id: s.order_id },
			CALL_OPTIONS,
		);
		const contacts = [
			mobileOf(order?.consignee?.phone),
			order?.consignee?.email?.trim().toLowerCase() || null,
		];
		await optOut(
			deps.db,
			s.sender_id,
			contacts.filter((c): c is string => !!c),
			"link",
		);
	}
	const page = renderStop({
		lang,
		brand: await brandFor(deps, s.sender_id),
		path: `${TRACKING_PAGE_PREFIX}${p.token}`,
		done,
	});
	return html(200, page, "no-store");
}

/** The font files, read once. */
const fonts = new Map<string, Buffer>();
const FONT_DIR = dirname(require.resolve("@expo-google-fonts/noto-sans-devanagari/package.json"));

/** `GET /track/assets/{file}`: a font of the page (cached a year), or 404 plain text. */
export async function trackAsset(p: PageParams): Promise<PageAnswer> {
	const rel = Object.hasOwn(PAGE_FONTS, p.file) ? PAGE_FONTS[p.file as keyof typeof PAGE_FONTS] : undefined;
	if (!rel) return { status: 404, type: "text/plain; charset=utf-8", headers: {}, body: "Not found\n" };
	let bytes = fonts.get(p.file);
	if (!bytes) {
		bytes = await readFile(join(FONT_DIR, rel));
		fonts.set(p.file, bytes);
	}
	return {
		status: 200,
		type: "font/ttf",
		headers: { "Cache-Control": "public, max-age=31536000, immutable" },
		body: bytes,
	};
}
