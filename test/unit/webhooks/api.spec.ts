/**
 * webhooks service, the merchant's side (issue 11 "Webhooks"): CRUD of
 * endpoints (201 with the `whsec_` secret shown once, list / get without it,
 * PATCH, DELETE), rotate-secret, validation codes, the account limit, one
 * account never seeing or touching another's endpoints or deliveries, roles
 * (read-only roles list but never write), the cursor-paged deliveries log,
 * and URLs refused outside the sandbox (http, loopback, private, link-local /
 * metadata, a name resolving to loopback, IPv6 forms embedding such an IPv4
 * address) and in it (embedded private / link-local; embedded loopback allowed
 * as plain loopback is).
 */
import assert from "node:assert/strict";
import type { ActionName, ParamsOf } from "../../../lib/contracts";
import type { Role } from "../../../lib/platform/auth";
import { newSender, rejects } from "../../helpers/broker";
import { eventually } from "../../helpers/poll";
import { bodyOf, callAs, Receiver, useWebhooksBroker } from "./setup";

const READ_ONLY: Role[] = ["merchant_finance", "merchant_support", "merchant_staff"];

async function refused<A extends ActionName>(
	action: A,
	params: ParamsOf<A>,
	sender: number,
	role: Role = "merchant",
) {
	return bodyOf(await rejects(() => callAs(action, params, sender, role)));
}

describe("webhooks service: endpoints, roles, isolation, deliveries log", function () {
	this.timeout(60_000);
	useWebhooksBroker({ WEBHOOK_MAX_ENDPOINTS: "3" });
	const rx = new Receiver();
	before(() => rx.start());
	after(() => rx.stop());

	it("creates an endpoint (201, secret once), lists and reads it without the secret, patches and deletes it", async () => {
		const s = newSender();
		const { res, status } = await callAs(
			"webhooks.create",
			{
				url: `${rx.base}/crud`,
				events: ["order.created", "order.booked", "order.created"],
				description: " shop ",
			},
			s,
		);
		assert.equal(status, 201);
		assert.match(res.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
		assert.deepEqual(res.events, ["order.created", "order.booked"]);
		assert.equal(res.enabled, true);
		assert.equal(res.description, "shop");
		assert.equal(res.disabled_reason, null);
		const list = (await callAs("webhooks.list", {}, s)).res;
		assert.deepEqual(
			list.data.map((e: any) => e.id),
			[res.id],
		);
		assert.equal((list.data[0] as { secret?: string }).secret, undefined);
		const got = (await callAs("webhooks.get", { id: String(res.id) }, s)).res;
		assert.equal((got as { secret?: string }).secret, undefined);
		assert.equal(got.url, `${rx.base}/crud`);
		const patched = (
			await callAs("webhooks.update", { id: String(res.id), events: ["ndr.opened"], enabled: false }, s)
		).res;
		assert.deepEqual(patched.events, ["ndr.opened"]);
		assert.equal(patched.enabled, false);
		assert.equal(patched.disabled_reason, "disabled by the merchant");
		const again = (await callAs("webhooks.update", { id: String(res.id), enabled: true }, s)).res;
		assert.equal(again.enabled, true);
		assert.equal(again.disabled_reason, null);
		assert.deepEqual((await callAs("webhooks.remove", { id: String(res.id) }, s)).res, {
			id: res.id,
			deleted: true,
		});
		assert.equal((await refused("webhooks.get", { id: String(res.id) }, s)).status, 404);
	});

	it("rotates the secret: a new whsec_ secret, different from the first", async () => {
		const s = newSender();
		const { res } = await callAs("webhooks.create", { url: `${rx.base}/rot`, events: ["order.created"] }, s);
		const r = (await callAs("webhooks.rotateSecret", { id: String(res.id) }, s)).res;
		assert.match(r.secret, /^whsec_/);
		assert.notEqual(r.secret, res.secret);
		assert.equal(r.id, res.id);
	});

	it("answers the validation codes", async () => {
		const s = newSender();
		const bad = async (params: Record<string, unknown>) => (await refused("webhooks.create", params, s)).body;
		let b = await bad({ events: ["order.created"] });
		assert.equal(b.error, "validation_failed");
		assert.match(b.details.join(), /url/);
		b = await bad({ url: `${rx.base}/v`, events: [] });
		assert.equal(b.error, "validation_failed");
		b = await bad({ url: `${rx.base}/v`, events: ["order.created", "order.teleported"] });
		assert.match(b.details.join(), /events\[1\]: unknown event type "order.teleported"/);
		b = await bad({ url: `${rx.base}/v`, events: ["order.created"], description: "d".repeat(256) });
		assert.match(b.details.join(), /description/);
		b = await bad({ url: "not a url", events: ["order.created"] });
		assert.equal(b.error, "validation_failed");
		const f = await refused("webhooks.create", { url: "ftp://example.com/x", events: ["order.created"] }, s);
		assert.equal(f.status, 422);
		assert.equal(f.body.error, "url_not_allowed");
		const { res } = await callAs("webhooks.create", { url: `${rx.base}/v`, events: ["order.created"] }, s);
		const p = await refused("webhooks.update", { id: String(res.id) }, s);
		assert.equal(p.body.error, "validation_failed");
		const e = await refused("webhooks.update", { id: String(res.id), enabled: "yes" }, s);
		assert.match(e.body.details.join(), /enabled/);
		assert.equal((await refused("webhooks.get", { id: "abc" }, s)).body.error, "webhook_not_found");
	});

	it("limits the endpoints of an account (409 webhook_limit_reached)", async () => {
		const s = newSender();
		for (let i = 0; i < 3; i++)
			await callAs("webhooks.create", { url: `${rx.base}/l${i}`, events: ["order.created"] }, s);
		const r = await refused("webhooks.create", { url: `${rx.base}/l4`, events: ["order.created"] }, s);
		assert.equal(r.status, 409);
		assert.equal(r.body.error, "webhook_limit_reached");
	});

	it("never shows or lets another account touch an endpoint or its deliveries (404)", async () => {
		const owner = newSender();
		const other = newSender();
		const { res } = await callAs(
			"webhooks.create",
			{ url: `${rx.base}/iso`, events: ["order.created"] },
			owner,
		);
		const test = (await callAs("webhooks.test", { id: String(res.id) }, owner)).res;
		const id = String(res.id);
		for (const [action, params] of [
			["webhooks.get", { id }],
			["webhooks.update", { id, description: "mine now" }],
			["webhooks.remove", { id }],
			["webhooks.rotateSecret", { id }],
			["webhooks.deliveries", { id }],
			["webhooks.test", { id }],
			["webhooks.redeliver", { id, delivery_id: String(test.id) }],
		] as const) {
			const r = await refused(action, params, other);
			assert.equal(r.status, 404, action);
			assert.equal(r.body.error, "webhook_not_found", action);
		}
		assert.deepEqual((await callAs("webhooks.list", {}, other)).res.data, []);
		assert.equal((await callAs("webhooks.get", { id }, owner)).res.description, null);
	});

	it("lets read-only roles list and read, never write (403 Read-only role); merchant_ops writes", async () => {
		const s = newSender();
		const { res } = await callAs(
			"webhooks.create",
			{ url: `${rx.base}/roles`, events: ["order.created"] },
			s,
			"merchant_ops",
		);
		const id = String(res.id);
		for (const role of READ_ONLY) {
			assert.equal((await callAs("webhooks.list", {}, s, role)).res.data.length, 1);
			assert.equal((await callAs("webhooks.get", { id }, s, role)).res.id, res.id);
			assert.ok(Array.isArray((await callAs("webhooks.deliveries", { id }, s, role)).res.data));
			for (const [action, params] of [
				["webhooks.create", { url: `${rx.base}/ro`, events: ["order.created"] }],
				["webhooks.update", { id, description: "x" }],
				["webhooks.remove", { id }],
				["webhooks.rotateSecret", { id }],
				["webhooks.test", { id }],
				["webhooks.redeliver", { id, delivery_id: "1" }],
			] as const) {
				const r = await refused(action, params, s, role);
				assert.equal(r.status, 403, `${role} ${action}`);
				assert.equal(r.body.error, "Read-only role");
			}
		}
	});

	it("pages the deliveries log newest first with a cursor bound to the endpoint", async () => {
		const s = newSender();
		const { res } = await callAs("webhooks.create", { url: `${rx.base}/log`, events: ["order.created"] }, s);
		const id = String(res.id);
		const made: number[] = [];
		for (let i = 0; i < 5; i++) made.push((await callAs("webhooks.test", { id }, s)).res.id);
		await eventually(
			async () => (await callAs("webhooks.deliveries", { id, status: "delivered" }, s)).res.data.length,
			{
				what: "5 delivered tests",
				ok: (n) => n === 5,
			},
		);
		const seen: any[] = [];
		let cursor: string | null = null;
		for (let i = 0; i < 5; i++) {
			const page: any = (
				await callAs("webhooks.deliveries", { id, limit: "2", ...(cursor ? { cursor } : {}) }, s)
			).res;
			assert.ok(page.data.length <= 2);
			seen.push(...page.data);
			cursor = page.pagination.nextCursor;
			if (!cursor) break;
		}
		assert.deepEqual(
			seen.map((d) => d.id),
			[...made].reverse(),
		);
		const d = seen[0];
		assert.equal(d.event_type, "webhook.test");
		assert.equal(d.status, "delivered");
		assert.equal(d.attempt, 1);
		assert.equal(d.status_code, 204);
		assert.equal(typeof d.latency_ms, "number");
		assert.equal(d.next_retry_at, null);
		assert.match(d.message_id, /^msg_[a-z2-7]{26}$/);
		// a cursor of this endpoint is refused on another endpoint
		const other = (await callAs("webhooks.create", { url: `${rx.base}/log2`, events: ["order.created"] }, s))
			.res;
		const first: any = (await callAs("webhooks.deliveries", { id, limit: "1" }, s)).res;
		const r = await refused(
			"webhooks.deliveries",
			{ id: String(other.id), cursor: first.pagination.nextCursor },
			s,
		);
		assert.equal(r.body.error, "cursor: unrecognised shape");
		assert.equal(
			(await refused("webhooks.deliveries", { id, limit: "0" }, s)).body.error,
			"validation_failed",
		);
		assert.equal(
			(await refused("webhooks.deliveries", { id, status: "lost" }, s)).body.error,
			"validation_failed",
		);
	});
});

describe("webhooks service outside the sandbox: URLs refused (SSRF)", function () {
	this.timeout(30_000);
	useWebhooksBroker({ SANDBOX: "0" });

	it("refuses http, loopback, private, link-local / metadata and names resolving to loopback (422 url_not_allowed)", async () => {
		const s = newSender();
		for (const url of [
			"http://example.com/hook",
			"https://127.0.0.1/hook",
			"https://127.8.9.10:8443/hook",
			"https://10.0.0.5/hook",
			"https://10.255.1.1/hook",
			"https://172.16.3.4/hook",
			"https://192.168.1.1/hook",
			"https://169.254.169.254/latest/meta-data/",
			"https://100.100.100.200/",
			"https://[::1]/hook",
			"https://[::ffff:10.0.0.1]/hook",
			"https://[fd00:ec2::254]/",
			// IPv6 forms embedding a refused IPv4 address (issue 31)
			"https://[::a9fe:a9fe]/latest/meta-data/",
			"https://[::a00:1]/hook",
			"https://[::c0a8:101]/hook",
			"https://[::ffff:0:a9fe:a9fe]/",
			"https://[64:ff9b::a00:1]/",
			"https://[64:ff9b:1::a9fe:a9fe]/",
			"https://[2002:a9fe:a9fe::1]/",
			"https://[2001:0:a00:1::fefe:fefe]/",
			"https://[2001:0:808:808::5601:5601]/",
			"https://[::7f00:1]/",
			"https://0.0.0.0/",
			"https://localhost/hook",
			"https://user:pw@example.com/hook",
		]) {
			const r = await refused("webhooks.create", { url, events: ["order.created"] }, s);
			assert.equal(r.status, 422, url);
			assert.equal(r.body.error, "url_not_allowed", url);
		}
		// a public literal address needs no DNS and is accepted
		const ok = await callAs(
			"webhooks.create",
			{ url: "https://93.184.215.14/hook", events: ["order.created"] },
			s,
		);
		assert.equal(ok.status, 201);
		const p = await refused("webhooks.update", { id: String(ok.res.id), url: "https://169.254.169.254/" }, s);
		assert.equal(p.body.error, "url_not_allowed");
		const q = await refused("webhooks.update", { id: String(ok.res.id), url: "https://[::a9fe:a9fe]/" }, s);
		assert.equal(q.status, 422);
		assert.deepEqual(q.body, {
			error: "url_not_allowed",
			message:
				"The webhook URL is not allowed: ::a9fe:a9fe is a linkLocal address (IPv4-compatible, embeds 169.254.169.254)",
		});
		// an IPv6 form embedding a public IPv4 address is judged as that address: accepted
		for (const url of ["https://[2002:808:808::1]/hook", "https://[64:ff9b::808:808]/hook"]) {
			const r = await callAs("webhooks.update", { id: String(ok.res.id), url }, s);
			assert.equal(r.res.url, url);
		}
	});
});

describe("webhooks service in the sandbox: embedded IPv4 judged as in the sandbox", function () {
	this.timeout(30_000);
	useWebhooksBroker({ SANDBOX: "1" });

	it("refuses an embedded private or link-local address (422 url_not_allowed) and allows an embedded loopback, as for plain IPv4", async () => {
		const s = newSender();
		for (const url of [
			"http://[::a9fe:a9fe]/",
			"http://[::a00:1]/",
			"http://[::c0a8:101]/",
			"http://[2002:c0a8:101::]/",
			"http://[64:ff9b::a9fe:a9fe]/",
			"http://169.254.169.254/",
		]) {
			const r = await refused("webhooks.create", { url, events: ["order.created"] }, s);
			assert.equal(r.status, 422, url);
			assert.equal(r.body.error, "url_not_allowed", url);
		}
		for (const url of ["http://127.0.0.1:9/", "http://[::7f00:1]:9/", "http://[2002:7f00:1::1]:9/"]) {
			const r = await callAs("webhooks.create", { url, events: ["order.created"] }, s);
			assert.equal(r.status, 201, url);
		}
	});
});
