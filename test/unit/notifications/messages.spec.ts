/**
 * Buyer messages, the parts without I/O (issue 29; docs/decisions/0109-buyer-messages.md): quiet
 * hours in IST (a window across midnight, the end as a UTC instant), the templates' words and
 * variable order in both languages, the e-mail HTML (escaped, the brand's ink), the sandbox
 * provider's answers, recipients masked, Indian mobiles read.
 */
import assert from "node:assert/strict";
import { maskedRecipient, mobileOf } from "../../../lib/notifications/dispatch";
import { holdUntil } from "../../../lib/notifications/preferences";
import { sandboxProvider } from "../../../lib/notifications/providers/sandbox";
import { renderEmailHtml, renderMessage, TEMPLATE_VARS } from "../../../lib/notifications/templates";

/** A UTC instant of an IST wall-clock time on 2026-11-29. */
const ist = (hh: number, mm: number) => new Date(Date.UTC(2026, 10, 29, hh, mm) - 330 * 60_000);

const VARS = {
	brand: "Asha <Handlooms>",
	order_no: "ORD-17",
	awb: "SBX1000000042",
	courier: "Sandbox Express",
	link: "https://api.example.in/track/SBX1000000042.abc",
	edd: "2 Dec",
	support: "9876500000",
};

describe("notifications: buyer messages without I/O", () => {
	it("quiet hours: held until their end (IST), across midnight; none outside or without a window", () => {
		const night = { quiet_start: 21 * 60 + 30, quiet_end: 8 * 60 };
		assert.equal(
			holdUntil(night, ist(22, 15))?.toISOString(),
			ist(32, 0).toISOString(),
			"21:30–08:00 at 22:15 → 08:00 next day",
		);
		assert.equal(holdUntil(night, ist(7, 59))?.toISOString(), ist(8, 0).toISOString());
		assert.equal(holdUntil(night, ist(8, 0)), null, "the end itself is outside");
		assert.equal(holdUntil(night, ist(12, 0)), null);
		const noon = { quiet_start: 13 * 60, quiet_end: 14 * 60 };
		assert.equal(holdUntil(noon, ist(13, 30))?.toISOString(), ist(14, 0).toISOString());
		assert.equal(holdUntil(noon, ist(14, 30)), null);
		assert.equal(holdUntil({ quiet_start: null, quiet_end: null }, ist(23, 0)), null);
	});

	it("templates: every event in both languages, variables in the positional order, no buyer address", () => {
		for (const event of Object.keys(TEMPLATE_VARS) as (keyof typeof TEMPLATE_VARS)[]) {
			for (const lang of ["en", "hi"] as const) {
				const m = renderMessage(event, lang, VARS);
				assert.deepEqual(Object.keys(m.vars), [...TEMPLATE_VARS[event]], `${event} ${lang}`);
				assert.ok(m.text.startsWith(VARS.brand), m.text);
				assert.ok(m.text.includes(VARS.link), m.text);
				assert.ok(m.subject.length > 0);
				if (lang === "hi") assert.match(m.text, /[\u0900-\u097F]{3,}/);
			}
		}
		const shipped = renderMessage("shipped", "en", VARS);
		assert.equal(
			shipped.text,
			"Asha <Handlooms>: your order ORD-17 has shipped with Sandbox Express (AWB SBX1000000042). Expected by 2 Dec. Track: https://api.example.in/track/SBX1000000042.abc",
		);
		assert.ok(!renderMessage("shipped", "en", { ...VARS, edd: "" }).text.includes("Expected"));
	});

	it("the e-mail's HTML escapes every value and picks readable ink on the brand colour", () => {
		const html = renderEmailHtml({
			lang: "en",
			subject: "Your order <b>",
			text: 'a "quoted" <script>x</script>',
			brand: VARS.brand,
			colour: "#FFCC00",
			link: VARS.link,
			optout: `${VARS.link}/stop`,
		});
		assert.ok(!html.includes("<script>"));
		assert.ok(html.includes("&lt;script&gt;"));
		assert.ok(html.includes("Asha &lt;Handlooms&gt;"));
		assert.ok(html.includes("color:#1A1A1A"), "dark ink on yellow");
		assert.ok(html.includes(`href="${VARS.link}/stop"`));
		const dark = renderEmailHtml({
			lang: "hi",
			subject: "s",
			text: "t",
			brand: "b",
			colour: null,
			link: "x",
			optout: null,
		});
		assert.ok(dark.includes("color:#FFFFFF"), "white ink on the default blue");
		assert.ok(!dark.includes("/stop"));
	});

	it("the sandbox provider: simulated for a plausible contact, failed with a provider's words otherwise, never sent", async () => {
		const base = { id: 7, lang: "en" as const, event: "shipped" as const, vars: {}, text: "t" };
		const sms = sandboxProvider("sms");
		assert.deepEqual(await sms.send({ ...base, channel: "sms", to: "9123456780" }), {
			status: "simulated",
			provider_ref: "sbx-sms-7",
		});
		assert.deepEqual(await sms.send({ ...base, channel: "sms", to: "5123456780" }), {
			status: "failed",
			error: "no valid mobile number",
		});
		const mail = sandboxProvider("email");
		assert.equal((await mail.send({ ...base, channel: "email", to: "a@b.in" })).status, "simulated");
		assert.equal((await mail.send({ ...base, channel: "email", to: "nobody" })).status, "failed");
		assert.equal(sms.parseCallback, undefined, "no callbacks: nothing was sent");
	});

	it("contacts: Indian mobiles read with +91 / 0 prefixes, anything else refused; recipients masked", () => {
		assert.equal(mobileOf("+91 91234-56780"), "9123456780");
		assert.equal(mobileOf("09123456780"), "9123456780");
		assert.equal(mobileOf("5123456780"), null);
		assert.equal(mobileOf("12345"), null);
		assert.equal(mobileOf(null), null);
		assert.equal(maskedRecipient("9123456780"), "******6780");
		assert.equal(maskedRecipient("buyer@example.in"), "b***@example.in");
	});
});
