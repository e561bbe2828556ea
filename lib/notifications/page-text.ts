/**
 * The buyer tracking page's words in English and Hindi (issue 29;
 * docs/decisions/0108-buyer-tracking-page.md): the page chrome and every normalized shipment
 * status (lib/shared/shipment-status.ts). Hindi is written in Devanagari; the page ships
 * Noto Sans Devanagari so it renders on phones without the font.
 */
import type { ShipmentStatus } from "../shared/shipment-status";

/** The languages of the page. */
export const PAGE_LANGUAGES = ["en", "hi"] as const;
/** One page language. */
export type PageLanguage = (typeof PAGE_LANGUAGES)[number];

/** The chrome of the page in one language. */
export interface PageText {
	title: string;
	expected: string;
	delivered_on: string;
	courier: string;
	awb: string;
	history: string;
	no_scans: string;
	help: string;
	call: string;
	email: string;
	language: string;
	not_found_title: string;
	not_found_body: string;
	lookup_title: string;
	lookup_awb: string;
	lookup_phone: string;
	lookup_submit: string;
	lookup_hint: string;
	/** the look-up's 400: a malformed AWB, phone digits not 4 digits */
	bad_awb: string;
	bad_phone: string;
	/** the opt-out page (`/track/{token}/stop`) */
	stop_title: string;
	stop_body: string;
	stop_button: string;
	stopped_title: string;
	stopped_body: string;
	/** the link at the tracking page's foot */
	stop_link: string;
	/** the failed-delivery panel (issue 29, docs/decisions/0110-buyer-ndr-answers.md) */
	ndr: NdrText;
	status: Record<ShipmentStatus, string>;
}

/** The failed-delivery panel's words. */
export interface NdrText {
	title: string;
	ask: string;
	reattempt: string;
	day: string;
	update: string;
	address_1: string;
	landmark: string;
	phone: string;
	update_hint: string;
	decline: string;
	submit: string;
	applied: string;
	sending: string;
	waiting: string;
	failed: string;
	seller_acted: string;
	chose: Record<"reattempt" | "update" | "decline", string>;
	bad_choice: string;
	bad_day: string;
	bad_address: string;
	bad_landmark: string;
	bad_phone: string;
	nothing: string;
	stale: string;
	unavailable: string;
}

/** Every text of the page, per language. */
export const PAGE_TEXT: Record<PageLanguage, PageText> = {
	en: {
		title: "Track your order",
		expected: "Expected delivery by",
		delivered_on: "Delivered on",
		courier: "Courier",
		awb: "Tracking number (AWB)",
		history: "Shipment history",
		no_scans: "No updates from the courier yet.",
		help: "Need help with this order?",
		call: "Call",
		email: "Email",
		language: "भाषा: हिन्दी",
		not_found_title: "Shipment not found",
		not_found_body: "Check the link in your message, or look your parcel up with its tracking number.",
		lookup_title: "Find your parcel",
		lookup_awb: "Tracking number (AWB)",
		lookup_phone: "Last 4 digits of your phone number",
		lookup_submit: "Track",
		lookup_hint: "Both are in the order message you received.",
		stop_title: "Stop messages about your orders?",
		stop_body:
			"You will get no more SMS, WhatsApp or e-mail messages about your orders from this seller. Your parcels are still delivered, and this page still works.",
		stop_button: "Stop messages",
		stopped_title: "Messages stopped",
		stopped_body: "This seller will send you no more messages about your orders.",
		stop_link: "Stop messages about my orders",
		ndr: {
			title: "We could not deliver your parcel",
			ask: "Tell us what to do next. Your answer goes to the courier.",
			reattempt: "Deliver it on another day",
			day: "Day",
			update: "Correct my address or phone number",
			address_1: "Address line (house, street, area)",
			landmark: "Landmark",
			phone: "Phone number",
			update_hint: "The pincode cannot change.",
			decline: "I do not want this parcel (it goes back to the seller)",
			submit: "Send my answer",
			applied: "Thank you. We have told the courier:",
			sending: "Thank you. We are sending your answer to the courier:",
			waiting: "Thank you. The seller will confirm your request:",
			failed: "The courier could not take your request. Please choose again:",
			seller_acted: "The seller has asked the courier to deliver again.",
			chose: {
				reattempt: "deliver on the day you chose",
				update: "deliver to your corrected address or phone",
				decline: "return the parcel to the seller",
			},
			bad_choice: "Choose one of the options.",
			bad_day: "Choose one of the listed days.",
			bad_address: "The address line must be 3 to 255 characters.",
			bad_landmark: "The landmark must be at most 255 characters.",
			bad_phone: "Enter a 10-digit Indian mobile number.",
			nothing: "Enter a new address line or phone number.",
			stale: "Another delivery attempt failed since this page was shown: please answer again.",
			unavailable: "We could not send your answer right now. Please try again in a minute.",
		},
		bad_awb: "The tracking number is not valid.",
		bad_phone: "Enter the last 4 digits of your phone number.",
		status: {
			booked: "Order confirmed",
			manifested: "Ready to ship",
			pickup_scheduled: "Pickup scheduled",
			picked_up: "Shipped",
			in_transit: "In transit",
			out_for_delivery: "Out for delivery",
			undelivered: "Delivery attempt failed",
			rto_initiated: "Returning to the seller",
			rto_in_transit: "Returning to the seller",
			delivered: "Delivered",
			rto_delivered: "Returned to the seller",
			lost: "Lost in transit",
			damaged: "Damaged in transit",
			cancelled: "Cancelled",
		},
	},
	hi: {
		title: "अपना ऑर्डर ट्रैक करें",
		expected: "अनुमानित डिलीवरी",
		delivered_on: "डिलीवर हुआ",
		courier: "कूरियर",
		awb: "ट्रैकिंग नंबर (AWB)",
		history: "शिपमेंट का विवरण",
		no_scans: "कूरियर से अभी कोई अपडेट नहीं है।",
		help: "इस ऑर्डर के लिए मदद चाहिए?",
		call: "कॉल करें",
		email: "ईमेल करें",
		language: "Language: English",
		not_found_title: "शिपमेंट नहीं मिला",
		not_found_body: "अपने संदेश का लिंक जाँचें, या ट्रैकिंग नंबर से अपना पार्सल खोजें।",
		lookup_title: "अपना पार्सल खोजें",
		lookup_awb: "ट्रैकिंग नंबर (AWB)",
		lookup_phone: "आपके फ़ोन नंबर के आखिरी 4 अंक",
		lookup_submit: "ट्रैक करें",
		lookup_hint: "दोनों आपको मिले ऑर्डर संदेश में हैं।",
		stop_title: "अपने ऑर्डर के संदेश बंद करें?",
		stop_body:
			"इस विक्रेता से आपके ऑर्डर के बारे में आगे कोई SMS, WhatsApp या ई-मेल संदेश नहीं आएगा। आपके पार्सल फिर भी डिलीवर होंगे और यह पेज चलता रहेगा।",
		stop_button: "संदेश बंद करें",
		stopped_title: "संदेश बंद कर दिए गए",
		stopped_body: "यह विक्रेता आपको आपके ऑर्डर के बारे में आगे कोई संदेश नहीं भेजेगा।",
		stop_link: "मेरे ऑर्डर के संदेश बंद करें",
		ndr: {
			title: "हम आपका पार्सल डिलीवर नहीं कर सके",
			ask: "बताइए आगे क्या करें। आपका जवाब कूरियर को भेजा जाएगा।",
			reattempt: "किसी और दिन डिलीवर करें",
			day: "दिन",
			update: "मेरा पता या फ़ोन नंबर ठीक करें",
			address_1: "पता (मकान, गली, इलाका)",
			landmark: "लैंडमार्क",
			phone: "फ़ोन नंबर",
			update_hint: "पिनकोड नहीं बदला जा सकता।",
			decline: "मुझे यह पार्सल नहीं चाहिए (यह विक्रेता को वापस जाएगा)",
			submit: "मेरा जवाब भेजें",
			applied: "धन्यवाद। हमने कूरियर को बता दिया है:",
			sending: "धन्यवाद। हम आपका जवाब कूरियर को भेज रहे हैं:",
			waiting: "धन्यवाद। विक्रेता आपके अनुरोध की पुष्टि करेंगे:",
			failed: "कूरियर आपका अनुरोध नहीं ले सका। कृपया फिर से चुनें:",
			seller_acted: "विक्रेता ने कूरियर से फिर से डिलीवर करने को कहा है।",
			chose: {
				reattempt: "आपके चुने हुए दिन डिलीवर करें",
				update: "आपके ठीक किए गए पते या फ़ोन पर डिलीवर करें",
				decline: "पार्सल विक्रेता को वापस भेजें",
			},
			bad_choice: "कोई एक विकल्प चुनें।",
			bad_day: "दिए गए दिनों में से एक चुनें।",
			bad_address: "पता 3 से 255 अक्षरों का होना चाहिए।",
			bad_landmark: "लैंडमार्क अधिकतम 255 अक्षरों का हो सकता है।",
			bad_phone: "10 अंकों का भारतीय मोबाइल नंबर लिखें।",
			nothing: "नया पता या फ़ोन नंबर लिखें।",
			stale: "इस पेज के बाद एक और डिलीवरी प्रयास विफल हुआ: कृपया फिर से जवाब दें।",
			unavailable: "हम अभी आपका जवाब नहीं भेज सके। कृपया एक मिनट बाद फिर कोशिश करें।",
		},
		bad_awb: "ट्रैकिंग नंबर सही नहीं है।",
		bad_phone: "फ़ोन नंबर के आखिरी 4 अंक लिखें।",
		status: {
			booked: "ऑर्डर कन्फ़र्म हुआ",
			manifested: "भेजने के लिए तैयार",
			pickup_scheduled: "पिकअप तय हुआ",
			picked_up: "भेज दिया गया",
			in_transit: "रास्ते में है",
			out_for_delivery: "डिलीवरी के लिए निकला",
			undelivered: "डिलीवरी नहीं हो सकी",
			rto_initiated: "विक्रेता को वापस जा रहा है",
			rto_in_transit: "विक्रेता को वापस जा रहा है",
			delivered: "डिलीवर हो गया",
			rto_delivered: "विक्रेता को वापस पहुँचा",
			lost: "रास्ते में खो गया",
			damaged: "रास्ते में क्षतिग्रस्त",
			cancelled: "रद्द किया गया",
		},
	},
};

/**
 * The page language: `asked` (`?lang=`) when it is one, else the first of the
 * `Accept-Language` header's languages (by q value) that is one, else English.
 */
export function pageLanguage(asked: unknown, acceptLanguage: unknown): PageLanguage {
	if (asked === "en" || asked === "hi") return asked;
	if (typeof acceptLanguage !== "string") return "en";
	const ranked = acceptLanguage
		.split(",")
		.slice(0, 20)
		.map((part, i) => {
			const [tag, ...params] = part.trim().toLowerCase().split(";");
			const q = params.map((p) => /^\s*q=([01](?:\.\d{1,3})?)\s*$/.exec(p)?.[1]).find(Boolean);
			return { lang: tag.split("-")[0], q: q === undefined ? 1 : Number(q), i };
		})
		.filter((x) => x.q > 0)
		.sort((a, b) => b.q - a.q || a.i - b.i);
	for (const r of ranked) if (r.lang === "hi" || r.lang === "en") return r.lang;
	return "en";
}
