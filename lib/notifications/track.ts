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
 * broadcasts the shipment's status change ({@link forgetPage}); brands are kept 60 s.
 */
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type AwbShipmentView, type Branding, type Caller, call, type PageParams } from "../contracts";
import {
	isPrintableAwb,
	signTrackingToken,
	TRACKING_PAGE_PREFIX,
	verifyTrackingToken,
} from "../shared/label-link";
import { CALL_OPTIONS, type NotificationsDeps } from "./deps";
import { mobileOf } from "./dispatch";
import { optOut } from "./message-store";
import { PAGE_FONTS, type RenderedPage, renderLookup, renderStop, renderTracking } from "./page";
import { PAGE_TEXT, type PageLanguage, pageLanguage } from "./page-text";
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
	const page = renderTracking({
		lang,
		brand: await brandFor(deps, s.sender_id),
		awb_number: s.awb_number,
		courier_name: s.courier_name,
		status: s.status,
		status_at: s.status_at,
		edd: s.edd,
		scans: [...s.scans].reverse(),
		path: `${TRACKING_PAGE_PREFIX}${p.token}`,
	});
	if (pages.size >= CACHE_MAX) pages.clear();
	pages.set(key, { page, until: Date.now() + PAGE_TTL_MS });
	return html(200, page, "private, max-age=60");
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
