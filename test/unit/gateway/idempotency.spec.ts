/**
 * Idempotency keys on every bearer POST (issue 25; lib/gateway/idempotency.ts,
 * docs/decisions/0074-idempotency-keys.md): through the real gateway over HTTP,
 * keys in the run's real PostgreSQL (schema `idempotency`), fake services
 * counting how often their handler ran. Stored and replayed byte for byte
 * (JSON and PDF, with the headers that matter), 422 on another request, 409 +
 * Retry-After while running, 4xx stored, 503 not stored, accounts never see
 * each other's answers, expiry and lock takeover, keys surviving a gateway
 * restart with the services on another node over NATS.
 */
import assert from "node:assert/strict";
import { type Context, ServiceBroker } from "moleculer";
import { getSequelize, select } from "../../../lib/platform/db";
import { apiError } from "../../../lib/platform/errors";
import { newSender, testBrokerOptions } from "../../helpers/broker";
import { skipContract } from "../../helpers/contract";
import { useDevIdp } from "../../helpers/devidp";
import { eventually } from "../../helpers/poll";
import { type Answer, calls, FAKES, http, PDF, setEnv, startGateway } from "./setup";

/** Gates a held request waits on (`hold: <name>` in its body), released by the test. */
const gates = new Map<string, { promise: Promise<void>; open: () => void }>();
function gate(name: string): { promise: Promise<void>; open: () => void } {
	let g = gates.get(name);
	if (!g) {
		let open: () => void = () => undefined;
		const promise = new Promise<void>((r) => {
			open = r;
		});
		g = { promise, open };
		gates.set(name, g);
	}
	return g;
}

/** Makes the next createReverse answer 503 (a transient failure: not stored). */
let unavailableOnce = false;
let reverseSeq = 0;

/** FAKES with a createReverse that can be held, fail validation or be unavailable, and a PDF manifest. */
const IDEM_FAKES = FAKES.map((f) => {
	if (f.name === "intake") {
		return {
			...f,
			actions: {
				...f.actions,
				createReverse: {
					access: { writes: true, capability: "orders.write" },
					async handler(ctx: Context<any, any>) {
						calls["intake.createReverse"] = (calls["intake.createReverse"] ?? 0) + 1;
						if (typeof ctx.params.hold === "string") await gate(ctx.params.hold).promise;
						if (ctx.params.invalid) throw apiError(400, "validation_failed", "order_no is required");
						if (unavailableOnce) {
							unavailableOnce = false;
							throw apiError(503, "service_unavailable", "A required service is temporarily unavailable");
						}
						ctx.meta.$statusCode = 201;
						return { order_id: ++reverseSeq, sender_id: ctx.meta.user.sender_id };
					},
				},
			},
		};
	}
	if (f.name === "documents") {
		return {
			...f,
			actions: {
				...f.actions,
				manifest: {
					access: { writes: true },
					handler(ctx: Context<any, any>) {
						calls["documents.manifest"] = (calls["documents.manifest"] ?? 0) + 1;
						ctx.meta.$responseType = "application/pdf";
						ctx.meta.$responseHeaders = {
							"Content-Disposition": 'inline; filename="MF-20260101-1.pdf"',
							"x-manifest-no": `MF-20260101-${calls["documents.manifest"]}`,
							"x-manifest-count": "1",
						};
						return PDF;
					},
				},
			},
		};
	}
	return f;
});

/** The stored row of a key, or undefined. */
async function row(
	sender: number,
	key: string,
): Promise<{ status: number | null; path: string } | undefined> {
	const rows = await select<{ status: number | null; path: string }>(
		getSequelize(),
		"SELECT status, path FROM idempotency.keys WHERE sender_id = $1 AND key = $2",
		[sender, key],
	);
	return rows[0];
}

/** A fresh key. */
function newKey(): string {
	return `key-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

/** The second answer is the first one replayed: same status, bytes and headers that matter, marked. */
function assertReplay(first: Answer, again: Answer): void {
	assert.equal(first.headers.get("idempotent-replayed"), null, "the first answer is not a replay");
	assert.equal(again.headers.get("idempotent-replayed"), "true");
	assert.equal(again.status, first.status);
	assert.ok(again.bytes.equals(first.bytes), "byte-identical body");
	for (const h of [
		"content-type",
		"content-length",
		"content-disposition",
		"x-manifest-no",
		"x-manifest-count",
	]) {
		assert.equal(again.headers.get(h), first.headers.get(h), h);
	}
	assert.notEqual(again.headers.get("x-request-id"), first.headers.get("x-request-id"), "its own request id");
}

describe("gateway: Idempotency-Key on POST (issue 25)", function () {
	// the fakes answer echo bodies, not the documented shapes: only the gateway's own answers are checked
	skipContract("gateway mechanics on fake services", "success");
	this.timeout(30_000);
	const idp = useDevIdp();
	const brokers: ServiceBroker[] = [];
	let base: string;

	/** Starts a gateway (with the fakes unless `extra` says otherwise) with `env` on top. */
	async function gateway(
		env: Record<string, string> = {},
		extra: any[] = IDEM_FAKES,
		opts: { nats?: boolean; nodeID?: string } = {},
	): Promise<{ broker: ServiceBroker; base: string }> {
		const restore = setEnv(env);
		try {
			const g = await startGateway(extra, opts);
			brokers.push(g.broker);
			return g;
		} finally {
			restore();
		}
	}

	before(async () => {
		({ base } = await gateway());
	});
	after(async () => {
		for (const g of gates.values()) g.open();
		for (const b of brokers) await b.stop();
	});

	it("the first answer is stored and replayed byte for byte with Idempotent-Replayed: true; the action runs once", async () => {
		const sender = newSender();
		const token = await idp.tokenFor(sender);
		const key = newKey();
		const body = { order_no: "R-1", items: [{ sku: "A", qty: 1 }] };
		const n = calls["intake.createReverse"] ?? 0;
		const first = await http(base, "POST", "/v1/intake/reverse", {
			token,
			body,
			headers: { "idempotency-key": key },
		});
		assert.equal(first.status, 201, first.text);
		const again = await http(base, "POST", "/v1/intake/reverse", {
			token,
			body,
			headers: { "idempotency-key": key },
		});
		assertReplay(first, again);
		assert.equal(calls["intake.createReverse"], n + 1, "the action ran once");
		assert.deepEqual(await row(sender, key), { status: 201, path: "/v1/intake/reverse" });
		// the same body with its keys in another order is the same request
		const reordered = await http(base, "POST", "/v1/intake/reverse", {
			token,
			body: { items: [{ qty: 1, sku: "A" }], order_no: "R-1" },
			headers: { "idempotency-key": key },
		});
		assertReplay(first, reordered);
		// without the header nothing is stored and the action runs each time
		await http(base, "POST", "/v1/intake/reverse", { token, body });
		await http(base, "POST", "/v1/intake/reverse", { token, body });
		assert.equal(calls["intake.createReverse"], n + 3);
		const rows = await select(getSequelize(), "SELECT 1 FROM idempotency.keys WHERE sender_id = $1", [
			sender,
		]);
		assert.equal(rows.length, 1, "only the keyed request left a row");
	});

	it("a binary answer (manifest PDF) is replayed with its bytes and its headers (x-manifest-no, Content-Disposition)", async () => {
		const sender = newSender();
		const token = await idp.tokenFor(sender, "merchant_ops");
		const key = newKey();
		const body = { order_ids: [1, 2] };
		const first = await http(base, "POST", "/v1/documents/manifest", {
			token,
			body,
			headers: { "idempotency-key": key },
		});
		assert.equal(first.status, 200, first.text);
		assert.equal(first.headers.get("content-type"), "application/pdf");
		assert.ok(first.bytes.equals(PDF));
		const n = calls["documents.manifest"];
		const again = await http(base, "POST", "/v1/documents/manifest", {
			token,
			body,
			headers: { "idempotency-key": key },
		});
		assertReplay(first, again);
		assert.equal(calls["documents.manifest"], n, "not run again (a new manifest number would say so)");
	});

	it("the same key with another body, query or path is 422 idempotency_key_reused; nothing runs", async () => {
		const token = await idp.tokenFor(newSender());
		const key = newKey();
		const headers = { "idempotency-key": key };
		assert.equal(
			(await http(base, "POST", "/v1/intake/reverse", { token, body: { order_no: "R-2" }, headers })).status,
			201,
		);
		const n = calls["intake.createReverse"];
		for (const [path, body] of [
			["/v1/intake/reverse", { order_no: "R-3" }],
			["/v1/intake/reverse?x=1", { order_no: "R-2" }],
			["/v1/intake/order", { order_no: "R-2" }],
		] as const) {
			const r = await http(base, "POST", path, { token, body, headers });
			assert.equal(r.status, 422, `${path}: ${r.text}`);
			assert.equal(r.body.error, "idempotency_key_reused");
			assert.equal(r.headers.get("idempotent-replayed"), null);
		}
		assert.equal(calls["intake.createReverse"], n);
	});

	it("a retry while the first request still runs is 409 idempotency_key_in_use with Retry-After: 1; then the answer replays", async () => {
		const token = await idp.tokenFor(newSender());
		const key = newKey();
		const body = { order_no: "R-4", hold: key };
		const headers = { "idempotency-key": key };
		const n = calls["intake.createReverse"] ?? 0;
		const running = http(base, "POST", "/v1/intake/reverse", { token, body, headers });
		await eventually(async () => calls["intake.createReverse"] === n + 1, {
			what: "the action running",
			ms: 5_000,
		});
		const busy = await http(base, "POST", "/v1/intake/reverse", { token, body, headers });
		assert.equal(busy.status, 409, busy.text);
		assert.equal(busy.body.error, "idempotency_key_in_use");
		assert.equal(busy.headers.get("retry-after"), "1");
		gate(key).open();
		const first = await running;
		assert.equal(first.status, 201);
		assertReplay(first, await http(base, "POST", "/v1/intake/reverse", { token, body, headers }));
		assert.equal(calls["intake.createReverse"], n + 1, "ran once for three requests");
	});

	it("a 400 caused by the request is stored and replayed; a 503 is not (the key is released and the retry runs)", async () => {
		const sender = newSender();
		const token = await idp.tokenFor(sender);
		const bad = { invalid: true };
		const badKey = newKey();
		const n = calls["intake.createReverse"] ?? 0;
		const first = await http(base, "POST", "/v1/intake/reverse", {
			token,
			body: bad,
			headers: { "idempotency-key": badKey },
		});
		assert.equal(first.status, 400);
		assert.equal(first.body.error, "validation_failed");
		const again = await http(base, "POST", "/v1/intake/reverse", {
			token,
			body: bad,
			headers: { "idempotency-key": badKey },
		});
		assertReplay(first, again);
		assert.equal(calls["intake.createReverse"], n + 1);

		const key = newKey();
		unavailableOnce = true;
		const down = await http(base, "POST", "/v1/intake/reverse", {
			token,
			body: { order_no: "R-5" },
			headers: { "idempotency-key": key },
		});
		assert.equal(down.status, 503);
		assert.equal(await row(sender, key), undefined, "released");
		const retry = await http(base, "POST", "/v1/intake/reverse", {
			token,
			body: { order_no: "R-5" },
			headers: { "idempotency-key": key },
		});
		assert.equal(retry.status, 201, retry.text);
		assert.equal(retry.headers.get("idempotent-replayed"), null);
		assert.equal(calls["intake.createReverse"], n + 3);
	});

	it("two accounts using the same key are independent: never one account's answer to another", async () => {
		const a = newSender();
		const b = newSender();
		const key = newKey();
		const body = { order_no: "SAME" };
		const headers = { "idempotency-key": key };
		const ta = await idp.tokenFor(a);
		const tb = await idp.tokenFor(b);
		const ra = await http(base, "POST", "/v1/intake/reverse", { token: ta, body, headers });
		const rb = await http(base, "POST", "/v1/intake/reverse", { token: tb, body, headers });
		assert.equal(ra.body.sender_id, a);
		assert.equal(rb.body.sender_id, b, "b's request ran for b");
		assert.equal(rb.headers.get("idempotent-replayed"), null);
		const rb2 = await http(base, "POST", "/v1/intake/reverse", { token: tb, body, headers });
		assert.equal(rb2.body.sender_id, b);
		assert.equal(rb2.body.order_id, rb.body.order_id);
		// another body under the same key is refused for b only by b's own record
		const other = await http(base, "POST", "/v1/intake/reverse", {
			token: ta,
			body: { order_no: "OTHER" },
			headers,
		});
		assert.equal(other.status, 422);
	});

	it("a malformed key is 400 invalid_idempotency_key before the action; other methods ignore the header", async () => {
		const token = await idp.tokenFor(newSender());
		const n = calls["intake.createReverse"] ?? 0;
		for (const key of ["k".repeat(256), "caf\u00e9"]) {
			const r = await http(base, "POST", "/v1/intake/reverse", {
				token,
				body: { order_no: "R-6" },
				headers: { "idempotency-key": key },
			});
			assert.equal(r.status, 400, r.text);
			assert.equal(r.body.error, "invalid_idempotency_key");
		}
		assert.equal(calls["intake.createReverse"] ?? 0, n);
		const ok = await http(base, "POST", "/v1/intake/reverse", {
			token,
			body: { order_no: "R-6" },
			headers: { "idempotency-key": "k".repeat(255) },
		});
		assert.equal(ok.status, 201);
		const get = await http(base, "GET", "/v1/warehouses", {
			token,
			headers: { "idempotency-key": "k".repeat(300) },
		});
		assert.equal(get.status, 200);
		// 401 comes first: no token, no key
		const anon = await http(base, "POST", "/v1/intake/reverse", {
			body: { order_no: "R-6" },
			headers: { "idempotency-key": "x" },
		});
		assert.equal(anon.status, 401);
	});

	it("an expired key runs again (IDEMPOTENCY_TTL_S) and is purged; a lock older than IDEMPOTENCY_LOCK_S is taken over", async () => {
		const g = await gateway({ IDEMPOTENCY_TTL_S: "1", IDEMPOTENCY_LOCK_S: "1" });
		const sender = newSender();
		const token = await idp.tokenFor(sender);
		const key = newKey();
		const headers = { "idempotency-key": key };
		const body = { order_no: "R-7" };
		const first = await http(g.base, "POST", "/v1/intake/reverse", { token, body, headers });
		assert.equal(first.status, 201);
		await new Promise((r) => setTimeout(r, 1_200));
		const n = calls["intake.createReverse"];
		const later = await http(g.base, "POST", "/v1/intake/reverse", { token, body, headers });
		assert.equal(later.status, 201);
		assert.equal(later.headers.get("idempotent-replayed"), null, "expired: ran again");
		assert.notEqual(later.body.order_id, first.body.order_id);
		assert.equal(calls["intake.createReverse"], n + 1);
		// purge: the expired row goes
		await new Promise((r) => setTimeout(r, 1_200));
		const gw = g.broker.getLocalService("gateway") as any;
		assert.ok((await gw.idempotency.purge()) >= 1);
		assert.equal(await row(sender, key), undefined);

		// a request still "running" after the lock timeout (its gateway died) does not block the key forever
		const held = newKey();
		const hb = { order_no: "R-8", hold: held };
		const m = calls["intake.createReverse"];
		const stuck = http(g.base, "POST", "/v1/intake/reverse", {
			token,
			body: hb,
			headers: { "idempotency-key": held },
		});
		await eventually(async () => calls["intake.createReverse"] === m + 1, {
			what: "the action running",
			ms: 5_000,
		});
		await new Promise((r) => setTimeout(r, 1_200));
		const takeover = http(g.base, "POST", "/v1/intake/reverse", {
			token,
			body: hb,
			headers: { "idempotency-key": held },
		});
		await eventually(async () => calls["intake.createReverse"] === m + 2, {
			what: "the action running",
			ms: 5_000,
		});
		gate(held).open();
		assert.equal((await stuck).status, 201);
		assert.equal((await takeover).status, 201);
	});

	it("an answer larger than IDEMPOTENCY_MAX_BODY_BYTES is not stored: the key is released and a retry runs again", async () => {
		const g = await gateway({ IDEMPOTENCY_MAX_BODY_BYTES: String(PDF.length - 1) });
		const sender = newSender();
		const token = await idp.tokenFor(sender, "merchant_ops");
		const headers = { "idempotency-key": newKey() };
		const body = { order_ids: [7] };
		const n = calls["documents.manifest"] ?? 0;
		const first = await http(g.base, "POST", "/v1/documents/manifest", { token, body, headers });
		assert.equal(first.status, 200, first.text);
		assert.deepEqual(first.bytes, PDF, "the client still gets the whole answer");
		await eventually(async () => (await row(sender, headers["idempotency-key"])) === undefined, {
			what: "the key released",
		});
		const again = await http(g.base, "POST", "/v1/documents/manifest", { token, body, headers });
		assert.equal(again.status, 200);
		assert.equal(again.headers.get("idempotent-replayed"), null, "not stored: ran again");
		assert.equal(calls["documents.manifest"], n + 2);
	});

	it("keys live in PostgreSQL: a restarted gateway (services on another node over NATS) replays them", async () => {
		// the services on their own broker over NATS, the gateway on another
		const services = new ServiceBroker(testBrokerOptions(true, { nodeID: "idem-services", middlewares: [] }));
		for (const f of IDEM_FAKES) services.createService(f);
		await services.start();
		brokers.push(services);
		const gw1 = await gateway({}, [], { nats: true, nodeID: "idem-gw-1" });
		await gw1.broker.waitForServices(["intake"], 10_000);
		const sender = newSender();
		const token = await idp.tokenFor(sender);
		const key = newKey();
		const body = { order_no: "R-9" };
		const headers = { "idempotency-key": key };
		const n = calls["intake.createReverse"] ?? 0;
		const first = await http(gw1.base, "POST", "/v1/intake/reverse", { token, body, headers });
		assert.equal(first.status, 201, first.text);
		assert.equal(calls["intake.createReverse"], n + 1);
		await gw1.broker.stop();
		const gw2 = await gateway({}, [], { nats: true, nodeID: "idem-gw-2" });
		await gw2.broker.waitForServices(["intake"], 10_000);
		assertReplay(first, await http(gw2.base, "POST", "/v1/intake/reverse", { token, body, headers }));
		assert.equal(calls["intake.createReverse"], n + 1, "not run again after the restart");
	});
});
