/**
 * Integration (issue 29; docs/decisions/0108-buyer-tracking-page.md): the buyer's tracking page
 * through the gateway, in one process and split over NATS (gateway + documents; catalog,
 * warehouses, intake + simulator; booking + billing; notifications), real PostgreSQL, Redis, NATS:
 * - the brand (`/v1/settings/branding`): defaults, validation, capability `settings.write`;
 * - `tracking_page_url` on the order, the page's HTML and headers (CSP pinning its one style
 *   block, no-referrer, noindex), nothing about the buyer on it, English and Hindi;
 * - the same 404 page for a tampered token, a label link's token and a cancelled shipment;
 * - the AWB look-up: 303 to the page on the right phone digits, the same 404 for a wrong AWB
 *   or phone, 400 for malformed input; the font;
 * - in headless Chromium (Debian's, driven by puppeteer-core): screenshots at 360×740 and
 *   1280×800 under test-output/tracking-page/, Devanagari rendered with the shipped font, and
 *   axe-core with no serious or critical violation, in both languages.
 */
import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import axe from "axe-core";
import puppeteer, { type Browser } from "puppeteer-core";
import type { ServiceName } from "../../lib/platform/config";
import { newSender } from "../helpers/broker";
import { type Cluster, useCluster } from "../helpers/cluster";
import { useEnv } from "../helpers/env";
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
	"simulator",
	"ndr",
	"notifications",
];
const CHROMIUM = "/usr/bin/chromium";
const OUT = join(process.cwd(), "test-output", "tracking-page");

/** GET without following redirects: status, headers, text. */
async function raw(url: string, headers: Record<string, string> = {}) {
	const r = await fetch(url, { headers, redirect: "manual" });
	return { status: r.status, headers: r.headers, text: await r.text() };
}

/** A booked shipment out for delivery, and the merchant's API. */
async function shipment(cluster: Cluster, events = ["picked_up", "in_transit", "out_for_delivery"]) {
	const sender = newSender();
	const api = client(cluster.base, await cluster.idp.tokenFor(sender, "merchant"));
	const wh = await api.post("/v1/warehouses", warehouseBody());
	assert.equal(wh.status, 201, JSON.stringify(wh.body));
	const o = await api.post("/v1/intake/order", orderBody(wh.body.data.id));
	assert.equal(o.status, 201, JSON.stringify(o.body));
	const order_id = o.body.order_id as number;
	const b = await api.post("/v1/shipping/book/sync", { order_id, logistic_id: 1 });
	assert.equal(b.status, 200, JSON.stringify(b.body));
	for (const event of events) {
		const e = await api.post(`/v1/sandbox/orders/${order_id}/events`, { event });
		assert.equal(e.status, 200, JSON.stringify(e.body));
	}
	const detail = await eventually(
		async () => {
			const d = await api.get(`/v1/orders/${order_id}`);
			return d.body.tracking_page_url && d.body.status === (events.at(-1) ?? "booked") ? d.body : undefined;
		},
		{ what: "the order booked and scanned", ms: 30_000 },
	);
	return { sender, api, order_id, awb: b.body.awb as string, label_url: b.body.label_url as string, detail };
}

function scenario(cluster: Cluster) {
	it("brand settings: defaults, validation, the settings.write capability", async () => {
		const sender = newSender();
		const owner = client(cluster.base, await cluster.idp.tokenFor(sender, "merchant_admin"));
		const ops = client(cluster.base, await cluster.idp.tokenFor(sender, "merchant_ops"));
		const ro = client(cluster.base, await cluster.idp.tokenFor(sender, "merchant_staff"));
		const empty = await owner.get("/v1/settings/branding");
		assert.deepEqual(empty.body, {
			brand_name: null,
			logo_url: null,
			colour: null,
			support_phone: null,
			support_email: null,
			updated_at: null,
		});
		const bad = await owner.patch("/v1/settings/branding", {
			colour: "red",
			logo_url: "http://x.example/l.png",
			support_phone: "12",
		});
		assert.equal(bad.status, 400, JSON.stringify(bad.body));
		assert.deepEqual(bad.body.details.sort(), [
			"colour: must be #RRGGBB",
			"logo_url: must be an https URL",
			"support_phone: must be 10 digits",
		]);
		assert.deepEqual((await owner.patch("/v1/settings/branding", {})).body.details, [
			"body: no updatable field",
		]);
		const byOps = await ops.patch("/v1/settings/branding", { brand_name: "X" });
		assert.equal(byOps.status, 403, JSON.stringify(byOps.body));
		assert.equal(byOps.body.error, "forbidden");
		assert.equal((await ro.patch("/v1/settings/branding", { brand_name: "X" })).body.error, "Read-only role");
		const set = await owner.patch("/v1/settings/branding", {
			brand_name: "Asha Handlooms",
			colour: "#ffcc00",
		});
		assert.equal(set.status, 200, JSON.stringify(set.body));
		assert.equal(set.body.colour, "#FFCC00");
		const cleared = await owner.patch("/v1/settings/branding", { colour: null });
		assert.equal(cleared.body.colour, null);
		assert.equal(cleared.body.brand_name, "Asha Handlooms");
		assert.equal((await ro.get("/v1/settings/branding")).body.brand_name, "Asha Handlooms");
	});

	it("the page: signed link on the order, HTML and headers, nothing about the buyer, English and Hindi, 404s", async () => {
		const s = await shipment(cluster);
		await s.api.patch("/v1/settings/branding", {
			brand_name: "Asha <Handlooms>",
			colour: "#0B6E4F",
			support_phone: "9876500000",
			support_email: "help@asha.example",
			logo_url: "https://cdn.asha.example/logo.png",
		});
		assert.match(s.detail.tracking_page_url, new RegExp(`^/track/${s.awb}\\.[A-Za-z0-9_-]{43}$`));
		const page = await raw(`${cluster.base}${s.detail.tracking_page_url}`);
		assert.equal(page.status, 200, page.text);
		assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
		assert.equal(page.headers.get("referrer-policy"), "no-referrer");
		assert.equal(page.headers.get("x-robots-tag"), "noindex, nofollow");
		assert.equal(page.headers.get("x-content-type-options"), "nosniff");
		const csp = page.headers.get("content-security-policy") ?? "";
		const style = /<style>([\s\S]*)<\/style>/.exec(page.text)?.[1] ?? "";
		assert.ok(csp.includes(`style-src 'sha256-${createHash("sha256").update(style).digest("base64")}'`), csp);
		assert.match(csp, /^default-src 'none'; /);
		assert.ok(!/<script/i.test(page.text), "no script");
		assert.ok(page.text.length < 30 * 1024, String(page.text.length));
		for (const shown of [
			s.awb,
			"Sandbox Express",
			"Out for delivery",
			"Asha &lt;Handlooms&gt;",
			"tel:+919876500000",
		])
			assert.ok(page.text.includes(shown), shown);
		assert.ok(page.text.includes('src="https://cdn.asha.example/logo.png"'));
		for (const hidden of ["Ravi Kumar", "9123456780", "45 MG Road", "Ashok Nagar", "Asha <Handlooms>"])
			assert.ok(!page.text.includes(hidden), `leaks ${hidden}`);
		const hi = await raw(`${cluster.base}${s.detail.tracking_page_url}`, {
			"accept-language": "hi-IN,hi;q=0.9,en;q=0.8",
		});
		assert.match(hi.text, /<html lang="hi">/);
		assert.ok(hi.text.includes("डिलीवरी के लिए निकला"));
		const en = await raw(`${cluster.base}${s.detail.tracking_page_url}?lang=en`, { "accept-language": "hi" });
		assert.match(en.text, /<html lang="en">/);

		// the same 404 page: tampered, a label link's token, then the shipment cancelled
		const token = s.detail.tracking_page_url.slice("/track/".length);
		const tampered = await raw(
			`${cluster.base}/track/${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`,
		);
		assert.equal(tampered.status, 404);
		assert.equal(tampered.headers.get("cache-control"), "no-store");
		const labelToken = s.label_url.slice(s.label_url.lastIndexOf("/") + 1);
		const asLabel = await raw(`${cluster.base}/track/${labelToken}`);
		assert.equal(asLabel.status, 404);
		assert.equal(asLabel.text, tampered.text);
		// a booked shipment, seen (its page now kept for 10 s), then cancelled: its page answers the 404 page at
		// once, well inside those 10 s (booking's shipment.cancelled broadcast drops it; record 0159)
		const b = await shipment(cluster, []);
		assert.equal((await raw(`${cluster.base}${b.detail.tracking_page_url}`)).status, 200);
		const c = await b.api.post("/v1/shipping/cancel", { order_id: b.order_id, logistic_id: 1 });
		assert.equal(c.status, 200, JSON.stringify(c.body));
		await eventually(
			async () =>
				(await raw(`${cluster.base}${b.detail.tracking_page_url}`)).status === 404 ? true : undefined,
			{ what: "the cancelled shipment's page gone", ms: 2_000, every: 100 },
		);
	});

	it("the AWB look-up: 303 on the right phone digits, the same 404 for a wrong AWB or phone, 400 malformed; the font", async () => {
		const s = await shipment(cluster);
		const form = await raw(`${cluster.base}/track`);
		assert.equal(form.status, 200);
		assert.ok(form.text.includes('name="phone_last4"'));
		const ok = await raw(`${cluster.base}/track?awb=${s.awb}&phone_last4=6780&lang=hi`);
		assert.equal(ok.status, 303, ok.text);
		assert.equal(ok.headers.get("location"), `${s.detail.tracking_page_url}?lang=hi`);
		const wrongPhone = await raw(`${cluster.base}/track?awb=${s.awb}&phone_last4=1234`);
		const wrongAwb = await raw(`${cluster.base}/track?awb=99${s.awb}&phone_last4=6780`);
		assert.equal(wrongPhone.status, 404);
		assert.equal(wrongAwb.status, 404);
		assert.equal(
			wrongPhone.text.replace(s.awb, "AWB"),
			wrongAwb.text.replace(`99${s.awb}`, "AWB"),
			"the same page for a wrong phone and a wrong AWB",
		);
		assert.equal((await raw(`${cluster.base}/track?awb=${s.awb}&phone_last4=67`)).status, 400);
		assert.equal((await raw(`${cluster.base}/track?awb=%3Cx%3E&phone_last4=6780`)).status, 400);
		const font = await fetch(`${cluster.base}/track/assets/noto-sans-devanagari-400.ttf`);
		assert.equal(font.status, 200);
		assert.equal(font.headers.get("content-type"), "font/ttf");
		assert.ok((await font.arrayBuffer()).byteLength > 100_000);
		assert.equal((await fetch(`${cluster.base}/track/assets/secrets.txt`)).status, 404);
	});
}

describe("integration: the buyer's tracking page", function () {
	this.timeout(180_000);
	// the pages are rate-limited per client address, and every request here comes from 127.0.0.1
	useEnv({ RATE_LIMIT_LINK_PER_MIN: "100000" });

	describe("in one process", () => {
		const cluster = useCluster(
			"page1",
			[ALL],
			ALL.filter((s) => s !== "gateway"),
		);
		scenario(cluster);

		it("in headless Chromium: screenshots at 360×740 and 1280×800, Devanagari in the shipped font, no serious axe violation", async () => {
			assert.ok(
				existsSync(CHROMIUM),
				`${CHROMIUM} is missing: apt-get install chromium (scripts/test-all.sh does)`,
			);
			const s = await shipment(cluster);
			await s.api.patch("/v1/settings/branding", {
				brand_name: "Asha Handlooms",
				colour: "#FFCC00",
				support_phone: "9876500000",
				support_email: "help@asha.example",
			});
			mkdirSync(OUT, { recursive: true });
			const browser: Browser = await puppeteer.launch({
				executablePath: CHROMIUM,
				headless: true,
				userDataDir: join(tmpdir(), `msa-chromium-${process.pid}`),
				args: [
					"--no-sandbox",
					"--disable-gpu",
					"--disable-quic",
					"--no-first-run",
					"--disable-background-networking",
					"--disable-component-update",
					"--disable-sync",
				],
			});
			// an undelivered shipment: the page with the failed-delivery form (issue 29)
			const u = await shipment(cluster, ["picked_up"]);
			const nd = await u.api.post(`/v1/sandbox/orders/${u.order_id}/events`, {
				event: "undelivered",
				reason: "Consignee not available",
			});
			assert.equal(nd.status, 200, JSON.stringify(nd.body));
			const ndrUrl = `${cluster.base}${u.detail.tracking_page_url}`;
			await eventually(
				async () => ((await (await fetch(ndrUrl)).text()).includes('name="choice"') ? true : undefined),
				{ what: "the page with the form", ms: 20_000 },
			);
			try {
				for (const lang of ["en", "hi"] as const) {
					const page = await browser.newPage();
					await page.setBypassCSP(true);
					await page.setViewport({ width: 360, height: 740 });
					const res = await page.goto(`${ndrUrl}?lang=${lang}`, { waitUntil: "load" });
					assert.equal(res?.status(), 200);
					await page.evaluate("document.fonts.ready.then(() => undefined)");
					await page.screenshot({ path: join(OUT, `ndr-${lang}-360x740.png`), fullPage: true });
					const radios = await page.evaluate("document.querySelectorAll('input[name=choice]').length");
					assert.equal(radios, 3);
					await page.addScriptTag({ content: axe.source });
					const violations = (await page.evaluate(
						"axe.run().then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact })))",
					)) as { id: string; impact: string | null }[];
					const grave = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
					assert.deepEqual(grave, [], `ndr form ${lang}: ${JSON.stringify(violations)}`);
					await page.close();
				}
				for (const lang of ["en", "hi"] as const) {
					for (const [width, height] of [
						[360, 740],
						[1280, 800],
					]) {
						const page = await browser.newPage();
						// axe is injected as a script: the page's own CSP (no script) would refuse it
						await page.setBypassCSP(true);
						await page.setViewport({ width, height });
						const res = await page.goto(`${cluster.base}${s.detail.tracking_page_url}?lang=${lang}`, {
							waitUntil: "load",
						});
						assert.equal(res?.status(), 200);
						await page.evaluate("document.fonts.ready.then(() => undefined)");
						const file = join(OUT, `${lang}-${width}x${height}.png`);
						await page.screenshot({ path: file, fullPage: true });
						assert.ok(existsSync(file));
						const text = String(await page.evaluate("document.body.innerText"));
						if (lang === "hi") {
							assert.match(text, /[\u0900-\u097F]{4,}/, "Devanagari text");
							const loaded = await page.evaluate(
								`[...document.fonts].some((f) => f.family.includes("Noto Sans Devanagari") && f.status === "loaded")`,
							);
							assert.ok(loaded, "the shipped Devanagari font is loaded");
						} else assert.ok(text.includes("Out for delivery"), text);
						await page.addScriptTag({ content: axe.source });
						const violations = (await page.evaluate(
							"axe.run().then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact })))",
						)) as { id: string; impact: string | null }[];
						const grave = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
						assert.deepEqual(grave, [], `${lang} ${width}x${height}: ${JSON.stringify(violations)}`);
						await page.close();
					}
				}
			} finally {
				await browser.close();
			}
		});
	});

	describe("split over NATS", () => {
		const cluster = useCluster(
			"page2",
			[
				["gateway", "documents"],
				["pincode", "rates", "warehouses", "intake", "simulator"],
				["booking", "billing", "ndr"],
				["notifications"],
			],
			ALL.filter((s) => s !== "gateway"),
		);
		scenario(cluster);
	});
});
