/**
 * Gateway over NATS: access rules of a remote action are read from the
 * registry, and remote errors cross the transporter unchanged.
 */
import assert from "node:assert/strict";
import { type Context, ServiceBroker } from "moleculer";
import { loadConfig } from "../../../lib/platform/config";
import { apiError } from "../../../lib/platform/errors";
import brokerOptions from "../../../moleculer.config";
import { newSender } from "../../helpers/broker";
import { skipContract } from "../../helpers/contract";
import { useDevIdp } from "../../helpers/devidp";
import { http, startGateway } from "./setup";

describe("gateway over NATS (access rules read from the registry)", () => {
	// the fakes answer echo bodies, not the documented shapes: only the gateway's own answers are checked
	skipContract("gateway mechanics on fake services", "success");
	const idp = useDevIdp();
	let gw: ServiceBroker;
	let svc: ServiceBroker;
	let base: string;
	let called = 0;

	before(async () => {
		const run = process.env.MSA_TEST_RUN_ID ?? "x";
		svc = new ServiceBroker(
			brokerOptions(
				{ ...loadConfig(), transporter: process.env.TEST_NATS_URL },
				// No PermissionsMiddleware on the service node: a 403 can only come from the gateway.
				{ logger: false, nodeID: `gw-svc-${run}`, middlewares: [] },
			),
		);
		svc.createService({
			name: "intake",
			actions: {
				createOrder: {
					access: { writes: true, capability: "orders.write" },
					handler(ctx: Context<any, any>) {
						called++;
						ctx.meta.$statusCode = 201;
						return { order_id: 1, sender: ctx.meta.user.sender_id, request_id: ctx.requestID };
					},
				},
				status: () => {
					throw apiError(404, "order_not_found", "No such order");
				},
				createReverse: () => {
					throw new Error("remote failure");
				},
			},
		} as any);
		await svc.start();
		({ broker: gw, base } = await startGateway([], { nats: true, nodeID: `gw-gw-${run}` }));
		await gw.waitForServices(["intake"], 10_000);
	});

	after(async () => {
		await gw?.stop();
		await svc?.stop();
	});

	it("403 Read-only role for a remote action, before its handler runs", async () => {
		const r = await http(base, "POST", "/v1/intake/order", {
			token: await idp.tokenFor(newSender(), "merchant_finance"),
			body: { customer_order_no: "N1" },
		});
		assert.equal(r.status, 403);
		assert.equal(r.body.error, "Read-only role");
		assert.equal(called, 0);
	});

	it("a merchant reaches the remote handler with its sender and the request id", async () => {
		const sender = newSender();
		const r = await http(base, "POST", "/v1/intake/order", {
			token: await idp.tokenFor(sender),
			body: { customer_order_no: "N2", sender_id: 1 },
			headers: { "x-request-id": "nats-req-1" },
		});
		assert.equal(r.status, 201);
		assert.deepEqual(r.body, { order_id: 1, sender, request_id: "nats-req-1" });
		assert.equal(called, 1);
	});

	it("remote ApiError bodies cross NATS verbatim; remote plain errors are 500 internal_error", async () => {
		const token = await idp.tokenFor(newSender());
		const nf = await http(base, "GET", "/v1/orders/status?order_no=x", { token });
		assert.equal(nf.status, 404);
		assert.deepEqual(nf.body, { error: "order_not_found", message: "No such order" });
		const boom = await http(base, "POST", "/v1/intake/reverse", { token, body: { order: {} } });
		assert.equal(boom.status, 500);
		assert.equal(boom.body.error, "internal_error");
		assert.equal(boom.body.request_id, boom.headers.get("x-request-id"));
	});
});
