/**
 * Signed label links (spec §4.4 `GET /v1/documents/label/t/{token}`, §5 rule 7,
 * §7 plain-text 404): lib/shared/label-link.ts (token, key rotation) and the
 * route end to end over real HTTP: the real gateway and documents services on
 * real PostgreSQL, with intake, booking (incl. `booking.awbOwner`) and
 * warehouses as small fakes answering the contract shapes.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { ServiceBroker, type ServiceSchema } from "moleculer";
import type { OrderRecord, ShipmentRecord, Warehouse } from "../../../lib/contracts";
import { recordCourierLabel } from "../../../lib/documents/store";
import { getSequelize, select } from "../../../lib/platform/db";
import { loadServiceSchema, startSystem } from "../../../lib/platform/system";
import {
	LABEL_LINK_PREFIX,
	LINK_TAG_LENGTH,
	labelLinkUrl,
	signLabelToken,
	signTrackingToken,
	verifyLabelToken,
	verifyTrackingToken,
} from "../../../lib/shared/label-link";
import { newSender, rejects, startWithGateway, testBrokerOptions } from "../../helpers/broker";
import { fakeService } from "../../helpers/call";
import { useDevIdp } from "../../helpers/devidp";
import { freshId, order, warehouse } from "../../helpers/fixtures";
import { http, setEnv } from "../gateway/setup";

/** Runs `fn` with env vars set, restoring them afterwards (also when it throws). */
function withEnv<T>(vars: Record<string, string | undefined>, fn: () => T): T {
	const restore = setEnv(vars);
	try {
		return fn();
	} finally {
		restore();
	}
}

/** The tag the link module must compute for `awb` under `secret` (independent re-implementation). */
function expectedTag(secret: string, awb: string): string {
	const key = createHmac("sha256", secret).update("msa-label-link-v1").digest();
	return createHmac("sha256", key).update(awb).digest("base64url");
}

describe("signed label links: tokens (lib/shared/label-link.ts)", () => {
	it("signs {awb}.{hmac}: HMAC-SHA256 under a key derived from LABEL_LINK_SECRET, base64url (43 chars)", () => {
		withEnv({ LABEL_LINK_SECRET: "s3cret", LABEL_LINK_PREVIOUS_SECRETS: undefined }, () => {
			const t = signLabelToken("1400000000123");
			assert.equal(t, `1400000000123.${expectedTag("s3cret", "1400000000123")}`);
			assert.equal(t.split(".")[1].length, LINK_TAG_LENGTH);
			assert.equal(verifyLabelToken(t), "1400000000123");
			// the raw secret is never the key (domain separation)
			const raw = createHmac("sha256", "s3cret").update("1400000000123").digest("base64url");
			assert.notEqual(t.split(".")[1], raw);
		});
	});

	it("refuses to sign an unprintable AWB and needs a secret", () => {
		withEnv({ LABEL_LINK_SECRET: "s3cret" }, () => {
			assert.throws(() => signLabelToken("a.b"), /unprintable/);
			assert.throws(() => signLabelToken(""), /unprintable/);
		});
		withEnv({ LABEL_LINK_SECRET: undefined }, () => {
			assert.throws(() => signLabelToken("1400000000123"), /LABEL_LINK_SECRET is required/);
		});
	});

	it("rejects every tampered or malformed token (null, never a throw)", () => {
		withEnv({ LABEL_LINK_SECRET: "s3cret", LABEL_LINK_PREVIOUS_SECRETS: undefined }, () => {
			const awb = "1400000000123";
			const good = signLabelToken(awb);
			const tag = good.slice(awb.length + 1);
			// a tag whose last character differs only in the 2 unused bits decodes to the same bytes
			const last = tag.at(-1) as string;
			const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
			const i = alphabet.indexOf(last);
			const sibling = alphabet[(i & ~3) | ((i + 1) & 3)];
			assert.equal(
				Buffer.from(tag.slice(0, -1) + sibling, "base64url").equals(Buffer.from(tag, "base64url")),
				true,
			);
			const bad: Array<[string, unknown]> = [
				["changed AWB", `1400000000124.${tag}`],
				["truncated HMAC", good.slice(0, -1)],
				["extended HMAC", `${good}A`],
				["HMAC padded with =", `${good}=`],
				["non-canonical last character", `${awb}.${tag.slice(0, -1)}${sibling}`],
				["standard base64 characters", `${awb}.${tag.slice(0, -2)}+/`],
				["non-base64url characters", `${awb}.${tag.slice(0, -1)}!`],
				["wrong key", `${awb}.${expectedTag("another-secret", awb)}`],
				["empty", ""],
				["no dot", awb + tag],
				["two dots", `${awb}.${tag}.x`],
				["empty AWB", `.${tag}`],
				["empty HMAC", `${awb}.`],
				["AWB with a space", ` ${awb}.${tag}`],
				["very long", "1".repeat(5000)],
				["not a string", 12345],
				["undefined", undefined],
			];
			for (const [what, token] of bad) assert.equal(verifyLabelToken(token), null, what);
		});
	});

	it("key rotation: links of a previous secret keep working; unknown keys never verify", () => {
		const awb = "1500000000042";
		const old = withEnv({ LABEL_LINK_SECRET: "old-secret", LABEL_LINK_PREVIOUS_SECRETS: undefined }, () =>
			signLabelToken(awb),
		);
		withEnv(
			{ LABEL_LINK_SECRET: "new-secret", LABEL_LINK_PREVIOUS_SECRETS: " older , old-secret ,," },
			() => {
				assert.equal(verifyLabelToken(old), awb, "signed under a previous secret");
				const fresh = signLabelToken(awb);
				assert.equal(fresh, `${awb}.${expectedTag("new-secret", awb)}`, "signs with the current secret only");
				assert.equal(verifyLabelToken(fresh), awb);
				assert.equal(verifyLabelToken(`${awb}.${expectedTag("stranger", awb)}`), null);
			},
		);
		withEnv({ LABEL_LINK_SECRET: "new-secret", LABEL_LINK_PREVIOUS_SECRETS: undefined }, () => {
			assert.equal(verifyLabelToken(old), null, "the old secret was dropped: its links stop working");
		});
	});

	it("a token verified before answers its AWB again; its tampered forms and the other purpose's never do", () => {
		withEnv({ LABEL_LINK_SECRET: "verified-secret", LABEL_LINK_PREVIOUS_SECRETS: undefined }, () => {
			const awb = "1500000000077";
			const label = signLabelToken(awb);
			const tracking = signTrackingToken(awb);
			for (let i = 0; i < 3; i++) {
				assert.equal(verifyLabelToken(label), awb);
				assert.equal(verifyTrackingToken(tracking), awb);
			}
			const tag = label.slice(label.indexOf(".") + 1);
			const flipped = `${tag.slice(0, -1)}${tag.endsWith("A") ? "B" : "A"}`;
			assert.equal(verifyLabelToken(`${awb}.${flipped}`), null);
			assert.equal(verifyLabelToken(`1500000000078.${tag}`), null);
			assert.equal(verifyLabelToken(`${label} `), null);
			assert.equal(verifyLabelToken(tracking), null, "a tracking token is no label link");
			assert.equal(verifyTrackingToken(label), null, "a label token opens no tracking page");
		});
	});

	it("labelLinkUrl: a path relative to the API base, absolute with PUBLIC_BASE_URL", () => {
		withEnv({ LABEL_LINK_SECRET: "s3cret", PUBLIC_BASE_URL: undefined }, () => {
			assert.equal(labelLinkUrl("1400000000123"), `${LABEL_LINK_PREFIX}${signLabelToken("1400000000123")}`);
		});
		withEnv({ LABEL_LINK_SECRET: "s3cret", PUBLIC_BASE_URL: "https://api.example.in/" }, () => {
			assert.equal(
				labelLinkUrl("1400000000123"),
				`https://api.example.in/v1/documents/label/t/${signLabelToken("1400000000123")}`,
			);
		});
		withEnv({ LABEL_LINK_SECRET: "s3cret", PUBLIC_BASE_URL: "ftp://x" }, () => {
			assert.throws(() => labelLinkUrl("1400000000123"), /PUBLIC_BASE_URL/);
		});
	});
});

describe("signed label links: start-up configuration (docs/ARCHITECTURE.md §2: fail loudly)", () => {
	it("a process running booking (signs book/sync's label_url), intake (signs the order answers' label_url) or documents refuses to start without LABEL_LINK_SECRET", async () => {
		for (const services of ["booking", "intake", "documents", "gateway"]) {
			const restore = setEnv({
				LABEL_LINK_SECRET: undefined,
				SERVICES: services,
				AUTH_JWKS_URL: "http://127.0.0.1:1/jwks",
				AUTH_ISSUER: "test-issuer",
				AUTH_AUDIENCE: "test-audience",
			});
			try {
				const err = await rejects(() => startSystem());
				assert.match(String(err?.message), /LABEL_LINK_SECRET is required/, services);
			} finally {
				restore();
			}
		}
	});

	it("the documents and intake services themselves refuse to start without it", async () => {
		for (const name of ["documents", "intake"] as const) {
			const restore = setEnv({ LABEL_LINK_SECRET: undefined });
			const b = new ServiceBroker(testBrokerOptions(false));
			try {
				b.createService(loadServiceSchema(name));
				const err = await rejects(() => b.start());
				assert.match(String(err?.message), /LABEL_LINK_SECRET is required/, name);
			} finally {
				await b.stop().catch(() => undefined);
				restore();
			}
		}
	});
});

// ------------------------------------------------------------ fakes ----

const orders = new Map<string, OrderRecord>();
const shipments = new Map<string, ShipmentRecord>();
const warehouses = new Map<string, Warehouse>();
const k = (sender: number, id: number) => `${sender}:${id}`;
/** awb_number → owner, as booking's awbOwner answers (live booked attempts only) */
const owners = new Map<string, { sender_id: number; order_id: number }>();

/** A booked order of `sender` with a fresh warehouse; its AWB is known to the fake booking. */
function bookedOrder(sender: number): { order: OrderRecord; shipment: ShipmentRecord } {
	const w = warehouse(sender);
	warehouses.set(k(sender, w.id), w);
	const o = order(sender, w.id);
	orders.set(k(sender, o.order_id), o);
	const s: ShipmentRecord = {
		order_id: o.order_id,
		attempt_id: o.order_id * 10,
		logistic_id: 1,
		courier_name: "Sandbox Express",
		awb_number: `14${String(o.order_id).padStart(12, "0")}`,
		state: "booked",
		routing_code: "BOM/CHG",
		charges: null,
		booked_at: new Date().toISOString(),
	};
	shipments.set(k(sender, o.order_id), s);
	owners.set(s.awb_number, { sender_id: sender, order_id: o.order_id });
	o.state = "booked";
	o.awb_number = s.awb_number;
	return { order: o, shipment: s };
}

const FAKES: ServiceSchema[] = [
	fakeService("intake", {
		getOrder: (ctx) => orders.get(k(ctx.params.sender_id, ctx.params.order_id)) ?? null,
	}),
	fakeService("booking", {
		getShipment: (ctx) => shipments.get(k(ctx.params.sender_id, ctx.params.order_id)) ?? null,
		awbOwner: (ctx) => owners.get(ctx.params.awb_number) ?? null,
	}),
	fakeService("warehouses", {
		get: (ctx) => warehouses.get(k(ctx.params.sender_id, ctx.params.id)) ?? null,
	}),
];

async function labelRows(orderId: number) {
	return select<{ source: string; download_count: number; label_downloaded_at: Date | null }>(
		getSequelize(),
		"SELECT source, download_count, label_downloaded_at FROM documents.labels WHERE order_id = $1",
		[orderId],
	);
}

/** The headers every signed-link download carries (spec §4.4). */
function assertLinkHeaders(h: Headers, fileName: string): void {
	assert.equal(h.get("content-disposition"), `attachment; filename="${fileName}"`);
	assert.equal(h.get("x-content-type-options"), "nosniff");
	assert.equal(h.get("content-security-policy"), "sandbox; default-src 'none'");
	assert.equal(h.get("referrer-policy"), "no-referrer");
	assert.equal(h.get("cache-control"), "private, no-store");
}

/** A plain-text 404 (§7 signed-link exception), never JSON, never a 500. */
function assertTextNotFound(r: { status: number; headers: Headers; text: string }, what: string): void {
	assert.equal(r.status, 404, `${what}: ${r.status} ${r.text}`);
	assert.equal(r.headers.get("content-type"), "text/plain; charset=utf-8", what);
	assert.equal(r.text, "Not found\n", what);
}

describe("GET /v1/documents/label/t/{token} (gateway + documents over HTTP)", function () {
	this.timeout(30_000);
	let broker: ServiceBroker;
	let base = "";
	const idp = useDevIdp({
		PUBLIC_BASE_URL: undefined,
		LABEL_LINK_PREVIOUS_SECRETS: undefined,
		// every test here downloads from 127.0.0.1: the per-address limit is the rate-limit spec's
		RATE_LIMIT_LINK_PER_MIN: "0",
	});

	before(async () => {
		({ broker, base } = await startWithGateway(["documents", ...FAKES]));
	});
	after(async () => {
		await broker?.stop();
	});

	it("downloads the label with no Authorization header, with every security header, and stamps the download", async () => {
		const sender = newSender();
		const { order: o, shipment } = bookedOrder(sender);
		const r = await http(base, "GET", labelLinkUrl(shipment.awb_number));
		assert.equal(r.status, 200, r.text);
		assert.equal(r.headers.get("content-type"), "application/pdf");
		assertLinkHeaders(r.headers, `label-${shipment.awb_number}.pdf`);
		assert.equal(r.bytes.subarray(0, 5).toString("latin1"), "%PDF-");
		// the same document the bearer route answers for that order (same code path)
		const bearer = await http(base, "GET", `/v1/documents/label/${o.order_id}`, {
			token: await idp.tokenFor(sender),
		});
		assert.equal(bearer.status, 200, bearer.text);
		assert.equal(
			bearer.headers.get("content-disposition"),
			`inline; filename="label-${shipment.awb_number}.pdf"`,
		);
		assert.equal(bearer.headers.get("content-security-policy"), null, "the bearer route keeps its headers");
		assert.ok(bearer.bytes.length > 1000 && Math.abs(bearer.bytes.length - r.bytes.length) < 200);
		// both downloads stamped label_downloaded_at
		const [row] = await labelRows(o.order_id);
		assert.equal(row.source, "generated");
		assert.equal(row.download_count, 2);
		assert.ok(row.label_downloaded_at instanceof Date);
	});

	it("every tampered or malformed token answers 404 text/plain (never 500), and stamps nothing", async () => {
		const sender = newSender();
		const { order: o, shipment } = bookedOrder(sender);
		const awb = shipment.awb_number;
		const token = signLabelToken(awb);
		const tag = token.slice(awb.length + 1);
		const other = bookedOrder(sender).shipment.awb_number;
		const cases: Array<[string, string]> = [
			["changed AWB (another live AWB)", `${other}.${tag}`],
			["changed AWB (one digit)", `${awb.slice(0, -1)}${awb.endsWith("9") ? "8" : "9"}.${tag}`],
			["truncated HMAC", token.slice(0, -1)],
			["extended HMAC", `${token}A`],
			["wrong key", `${awb}.${expectedTag("not-our-secret", awb)}`],
			["non-base64url characters", `${awb}.${tag.slice(0, -1)}%21`],
			["standard base64", `${awb}.${tag.slice(0, -2)}%2B%2F`],
			["percent-encoded slash", `${awb}.${tag.slice(0, -1)}%2F`],
			["undecodable escape", `${awb}.${tag.slice(0, -3)}%ZZ`],
			["no HMAC", awb],
			["garbage", "hello"],
			["extra path segment", `${token}/x`],
		];
		for (const [what, t] of cases)
			assertTextNotFound(await http(base, "GET", `${LABEL_LINK_PREFIX}${t}`), what);
		// an empty token, with and without the trailing slash; a token in the query never counts
		assertTextNotFound(await http(base, "GET", LABEL_LINK_PREFIX), "empty token");
		assertTextNotFound(await http(base, "GET", `${LABEL_LINK_PREFIX}?token=${token}`), "token in the query");
		assertTextNotFound(await http(base, "GET", `${LABEL_LINK_PREFIX}x?token=${token}`), "token in the query");
		assertTextNotFound(await http(base, "GET", "/v1/documents/label/t"), "no token segment");
		assert.equal((await labelRows(o.order_id)).length, 0);
	});

	it("rotation over HTTP: a link of the previous secret still downloads; one of an unknown secret is 404", async () => {
		const sender = newSender();
		const { shipment } = bookedOrder(sender);
		const awb = shipment.awb_number;
		const oldLink = labelLinkUrl(awb); // signed under the run's secret
		const runSecret = process.env.LABEL_LINK_SECRET;
		// step 1 of a rotation: a new signing secret, the old one still accepted
		const restore = setEnv({ LABEL_LINK_SECRET: "rotated-secret", LABEL_LINK_PREVIOUS_SECRETS: runSecret });
		try {
			const r = await http(base, "GET", oldLink);
			assert.equal(r.status, 200, r.text);
			assertLinkHeaders(r.headers, `label-${awb}.pdf`);
			const fresh = labelLinkUrl(awb);
			assert.notEqual(fresh, oldLink);
			assert.equal((await http(base, "GET", fresh)).status, 200);
			assertTextNotFound(
				await http(base, "GET", `${LABEL_LINK_PREFIX}${awb}.${expectedTag("unknown-secret", awb)}`),
				"unknown key",
			);
			// step 2: the old secret retired: its links stop working, the new ones keep working
			process.env.LABEL_LINK_PREVIOUS_SECRETS = "";
			assertTextNotFound(await http(base, "GET", oldLink), "retired key");
			assert.equal((await http(base, "GET", fresh)).status, 200);
		} finally {
			restore();
		}
	});

	it("an unknown AWB, a cancelled/re-booked AWB and a courier label never captured: 404 text/plain", async () => {
		// a well-signed AWB no booking holds
		assertTextNotFound(await http(base, "GET", labelLinkUrl(`9${freshId()}0000`)), "unknown AWB");

		// the order was re-booked: the old AWB still resolves (stale owner) but is no longer the live one
		const sender = newSender();
		const { order: o, shipment } = bookedOrder(sender);
		const oldAwb = shipment.awb_number;
		shipments.set(k(sender, o.order_id), {
			...shipment,
			awb_number: `15${String(o.order_id).padStart(12, "0")}`,
		});
		assertTextNotFound(await http(base, "GET", labelLinkUrl(oldAwb)), "re-booked AWB");
		// cancelled: booking answers no owner, and getShipment no live shipment
		owners.delete(oldAwb);
		shipments.delete(k(sender, o.order_id));
		assertTextNotFound(await http(base, "GET", labelLinkUrl(oldAwb)), "cancelled AWB");

		// courier-issued label never captured (the bearer route answers 409 carrier_label_missing)
		const c = bookedOrder(sender);
		await recordCourierLabel(getSequelize(), {
			order_id: c.order.order_id,
			sender_id: sender,
			awb_number: c.shipment.awb_number,
			logistic_id: c.shipment.logistic_id,
			file: null,
		});
		assertTextNotFound(await http(base, "GET", labelLinkUrl(c.shipment.awb_number)), "courier label missing");
		const bearer = await http(base, "GET", `/v1/documents/label/${c.order.order_id}`, {
			token: await idp.tokenFor(sender),
		});
		assert.equal(bearer.status, 409);
		assert.equal(bearer.body.code, "carrier_label_missing");
		// recorded missing (the courier has no file): retrying will not help, no Retry-After
		assert.equal(bearer.headers.get("retry-after"), null);
	});

	it("a courier-issued label whose capture is still pending: 409 carrier_label_missing with Retry-After: 1 (bearer, single and bulk); the link stays a plain 404", async () => {
		const sender = newSender();
		const token = await idp.tokenFor(sender);
		const p = bookedOrder(sender);
		// booked with a courier that issues its own label, no capture recorded yet (the capture row in flight)
		shipments.set(k(sender, p.order.order_id), { ...p.shipment, courier_label: true });
		const single = await http(base, "GET", `/v1/documents/label/${p.order.order_id}`, { token });
		assert.equal(single.status, 409);
		assert.equal(single.headers.get("retry-after"), "1");
		assert.deepEqual(single.body, {
			code: "carrier_label_missing",
			message:
				"the courier issues its own label for this shipment and it has not been captured yet; retry shortly",
		});
		const bulk = await http(base, "POST", "/v1/documents/label", {
			token,
			body: { order_ids: [p.order.order_id] },
		});
		assert.equal(bulk.status, 409);
		assert.equal(bulk.headers.get("retry-after"), "1");
		assert.equal(bulk.body.code, "carrier_label_missing");
		assert.deepEqual(bulk.body.order_ids, [p.order.order_id]);
		assertTextNotFound(await http(base, "GET", labelLinkUrl(p.shipment.awb_number)), "capture pending");
	});

	it("a captured courier label is served as is, with its own content type", async () => {
		const sender = newSender();
		const { order: o, shipment } = bookedOrder(sender);
		const png = Buffer.concat([
			Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
			Buffer.from("courier"),
		]);
		await recordCourierLabel(getSequelize(), {
			order_id: o.order_id,
			sender_id: sender,
			awb_number: shipment.awb_number,
			logistic_id: shipment.logistic_id,
			file: png,
		});
		const r = await http(base, "GET", labelLinkUrl(shipment.awb_number));
		assert.equal(r.status, 200, r.text);
		assert.equal(r.headers.get("content-type"), "image/png");
		assertLinkHeaders(r.headers, `label-${shipment.awb_number}.png`);
		assert.ok(r.bytes.equals(png));
		const [row] = await labelRows(o.order_id);
		assert.equal(row.source, "courier");
		assert.equal(row.download_count, 1);
	});

	it("an Authorization header is neither needed nor used; other methods are 405", async () => {
		const sender = newSender();
		const { shipment } = bookedOrder(sender);
		const url = labelLinkUrl(shipment.awb_number);
		const withBadBearer = await http(base, "GET", url, { headers: { authorization: "Bearer nonsense" } });
		assert.equal(withBadBearer.status, 200);
		const post = await http(base, "POST", url);
		assert.equal(post.status, 405);
		assert.equal(post.headers.get("allow"), "GET, HEAD");
	});
});
