/**
 * End to end: the system started from `npm start`'s entry point (bin/start.ts, under tsx), split over two
 * processes (SERVICES) talking over real NATS, with real PostgreSQL and Redis;
 * the typical flow over HTTP, then a graceful SIGTERM stop.
 */
import { strict as assert } from "node:assert";
import type { Server } from "node:http";
import type { DevIdp } from "../../lib/platform/devidp";
import { newSender } from "../helpers/broker";
import { warehouseBody } from "../helpers/fixtures";
import { client, typicalFlow } from "../helpers/flow";
import { eventually } from "../helpers/poll";
import { childSystem, type StartedProcess, startProcess, waitReady } from "../helpers/processes";

describe("e2e: npm start over NATS in two processes", function () {
	this.timeout(120_000);
	let idp: DevIdp;
	let jwks: Server;
	let procs: StartedProcess[] = [];
	let base = "";

	before(async () => {
		const sys = await childSystem("e2e", { labelLinkSecret: "e2e-secret", logLevel: "warn" });
		({ idp, jwks, base } = sys);
		const common = sys.env;
		procs = [
			startProcess({ ...common, SERVICES: "gateway,documents", NODEID: "e2e-edge" }),
			startProcess({
				...common,
				SERVICES: "pincode,rates,warehouses,intake,booking,billing,simulator,ndr,webhooks,notifications",
				NODEID: "e2e-core",
			}),
		];
		await waitReady(base, procs, 90_000);
	});

	after(async () => {
		await Promise.all(procs.map((p) => p.stop()));
		jwks?.close();
	});

	it("serves the typical flow end to end", async () => {
		const r = await typicalFlow(base, await idp.tokenFor(newSender(), "merchant_ops"));
		assert.ok(r.label.length > 1000);
	});

	it("refuses read-only roles and unauthenticated calls at the edge", async () => {
		const sender = newSender();
		const ro = client(base, await idp.tokenFor(sender, "merchant_finance"));
		const w = await ro.post("/v1/warehouses", warehouseBody());
		assert.equal(w.status, 403);
		const o = await ro.post("/v1/intake/order", {});
		assert.equal(o.status, 403);
		assert.equal(o.body.error, "Read-only role");
		const anon = await client(base).get("/v1/warehouses");
		assert.equal(anon.status, 401);
		assert.deepEqual(anon.body, { error: "Authentication required" });
		const bad = await client(base, "not.a.jwt").get("/v1/warehouses");
		assert.equal(bad.status, 401);
		assert.equal(bad.body.error, "Invalid or expired token");
		assert.ok(bad.body.code);
	});

	it("moves a booked shipment through its lifecycle from sandbox scans: tracking, buckets, detail (issue 7)", async () => {
		const sender = newSender();
		const token = await idp.tokenFor(sender, "merchant_ops");
		const r = await typicalFlow(base, token);
		const api = client(base, token);
		const id = r.order_id;
		const inBucket = async (bucket: string) =>
			((await api.get(`/v1/orders?bucket=${bucket}&limit=1000`)).body.data as { order_id: number }[]).some(
				(o) => o.order_id === id,
			);
		assert.ok(await inBucket("rts"), "booked, not manifested: ready to ship");
		const steps = [
			["picked_up", "transit"],
			["in_transit", "transit"],
			["undelivered", "exceptions"],
			["out_for_delivery", "transit"],
			["delivered", "delivered"],
		] as const;
		for (const [event, bucket] of steps) {
			const e = await api.post(`/v1/sandbox/orders/${id}/events`, {
				event,
				...(event === "undelivered" ? { reason: "Consignee not available" } : {}),
			});
			assert.equal(e.status, 200, JSON.stringify(e.body));
			assert.equal(e.body.status, event);
			// the lifecycle status reaches intake through booking's outbox
			await eventually(() => inBucket(bucket), { what: `${event} listing the order under ${bucket}` });
		}
		assert.equal(await inBucket("transit"), false);
		const t = await api.get(`/v1/orders/${id}/tracking`);
		assert.equal(t.status, 200);
		assert.equal(t.body.status_name, "Delivered");
		assert.equal(t.body.truncated, false);
		const statuses = (t.body.scans as { status: string; at: string }[]).map((x) => x.status);
		assert.deepEqual(
			statuses.slice(-5),
			steps.map(([e]) => e),
		);
		const detail = await api.get(`/v1/orders/${id}`);
		assert.equal(detail.status, 200);
		assert.equal(detail.body.status, "delivered");
		assert.ok(detail.body.delivered_at);
		// another account sees none of it
		const other = client(base, await idp.tokenFor(newSender(), "merchant"));
		assert.equal((await other.get(`/v1/orders/${id}/tracking`)).status, 404);
		assert.equal((await other.get(`/v1/orders/${id}`)).status, 404);
		assert.equal((await other.post(`/v1/sandbox/orders/${id}/events`, { event: "delivered" })).status, 404);
	});

	it("stops gracefully on SIGTERM", async () => {
		const codes = await Promise.all(procs.map((p) => p.stop("SIGTERM")));
		assert.deepEqual(codes, [0, 0], procs.map((p) => p.output().slice(-2000)).join("\n"));
	});
});
