/**
 * The buyer tracking page's pure parts (issue 29; lib/notifications/page.ts, page-text.ts,
 * lib/shared/label-link.ts): the language chosen from `?lang=` and `Accept-Language`, the
 * header's text colour on the brand colour (WCAG contrast), escaping of everything a merchant
 * or a courier wrote, the CSP pinning the one style block, and the page token's own key (under
 * the test run's LABEL_LINK_SECRET, test/helpers/global.ts).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { renderLookup, renderTracking, textOn } from "../../../lib/notifications/page";
import { pageLanguage } from "../../../lib/notifications/page-text";
import {
	signLabelToken,
	signTrackingToken,
	verifyLabelToken,
	verifyTrackingToken,
} from "../../../lib/shared/label-link";

const brand = {
	brand_name: 'Asha <b>"Handlooms"</b>',
	logo_url: "https://cdn.example/l.png?a=1&b=2",
	colour: "#0B6E4F",
	support_phone: "9876500000",
	support_email: "help@asha.example",
	updated_at: null,
};

describe("buyer tracking page: language, contrast, escaping, CSP, token", () => {
	it("language: ?lang= first, then Accept-Language by q, else English", () => {
		assert.equal(pageLanguage("hi", "en"), "hi");
		assert.equal(pageLanguage("fr", "hi-IN,hi;q=0.9,en;q=0.8"), "hi");
		assert.equal(pageLanguage("", "en-GB;q=0.5, hi;q=0.7"), "hi");
		assert.equal(pageLanguage("", "ta-IN, en;q=0.3"), "en");
		assert.equal(pageLanguage("", "hi;q=0"), "en");
		assert.equal(pageLanguage(undefined, undefined), "en");
	});

	it("the header text has at least 4.5:1 contrast on the brand colour", () => {
		assert.equal(textOn("#FFCC00"), "#1A1A1A");
		assert.equal(textOn("#0B6E4F"), "#FFFFFF");
		assert.equal(textOn("#FFFFFF"), "#1A1A1A");
		assert.equal(textOn("#000000"), "#FFFFFF");
	});

	it("escapes the brand and the courier's words; the CSP admits exactly the page's style block", () => {
		const { html, csp } = renderTracking({
			lang: "en",
			brand,
			awb_number: "1400000001",
			courier_name: "Sandbox <Express>",
			status: "in_transit",
			status_at: "2026-12-01T05:00:00Z",
			edd: "2026-12-04",
			scans: [{ at: "2026-12-01T05:00:00Z", location: "<img src=x onerror=alert(1)>", status: "in_transit" }],
			path: "/track/1400000001.x",
		});
		assert.ok(!html.includes("<b>"), "brand escaped");
		assert.ok(html.includes("Asha &lt;b&gt;&quot;Handlooms&quot;&lt;/b&gt;"));
		assert.ok(html.includes("&lt;img src=x onerror=alert(1)&gt;"));
		assert.ok(html.includes("Sandbox &lt;Express&gt;"));
		assert.ok(html.includes('src="https://cdn.example/l.png?a=1&amp;b=2"'));
		assert.ok(html.includes("Expected delivery by <strong>Fri, 4 Dec</strong>"), html);
		assert.ok(html.includes("1 Dec, 10:30 am"), "IST");
		const style = /<style>([\s\S]*)<\/style>/.exec(html)?.[1] ?? "";
		assert.ok(csp.includes(`'sha256-${createHash("sha256").update(style).digest("base64")}'`));
		assert.ok(!/<script/i.test(html));
		const delivered = renderTracking({
			lang: "hi",
			brand,
			awb_number: "1400000001",
			courier_name: "X",
			status: "delivered",
			status_at: "2026-12-03T09:00:00Z",
			edd: "2026-12-04",
			scans: [],
			path: "/track/t",
		});
		assert.ok(delivered.html.includes("डिलीवर हुआ"), "delivered on, not the promise");
		assert.ok(!delivered.html.includes("अनुमानित डिलीवरी"));
	});

	it("the look-up form reflects the AWB escaped", () => {
		const { html } = renderLookup({ lang: "en", notFound: true, problem: null, awb: '"><script>x</script>' });
		assert.ok(html.includes("Shipment not found"));
		assert.ok(!html.includes("<script>x"));
	});

	it("a page token and a label token do not open each other", () => {
		const page = signTrackingToken("1400000001");
		const label = signLabelToken("1400000001");
		assert.notEqual(page, label);
		assert.equal(verifyTrackingToken(page), "1400000001");
		assert.equal(verifyTrackingToken(label), null);
		assert.equal(verifyLabelToken(page), null);
	});
});
