/**
 * The root context of a gateway request (lib/gateway/request-root.ts, record 0155): moleculer-web's `rest` handler
 * runs inside the `localAction` hooks of the request hooks only, in the broker's order, with a context made as
 * `this.actions.rest` makes it; the production broker has each of those hooks; the gateway answers through it.
 */
import assert from "node:assert/strict";
import { type Context, type Middleware, ServiceBroker } from "moleculer";
import {
	REQUEST_HOOKS,
	type RestService,
	requestContext,
	requestRoot,
} from "../../../lib/gateway/request-root";
import { loadServiceSchema } from "../../../lib/platform/system";
import { newSender, testBrokerOptions } from "../../helpers/broker";
import { FAKES, http, useGateway } from "./setup";

/** A middleware named `name` recording, per action name, each call its `localAction` wrapper runs. */
function recorder(name: string, seen: string[]): Middleware {
	return {
		name,
		localAction(next: (ctx: Context) => Promise<unknown>, action: { name: string }) {
			return (ctx: Context) => {
				seen.push(`${name}:${action.name}`);
				return next(ctx);
			};
		},
	} as unknown as Middleware;
}

/** A service with a private `rest` action answering what its context was made with. */
const REST_SERVICE = {
	name: "gw",
	actions: {
		rest: {
			visibility: "private" as const,
			handler(ctx: Context<{ x: number }>) {
				return {
					twice: ctx.params.x * 2,
					request_id: ctx.requestID,
					service: ctx.service?.fullName,
					action: ctx.action?.name,
					level: ctx.level,
				};
			},
		},
	},
};

describe("gateway: a request's root context passes the request hooks only", () => {
	it("wraps the rest handler in the named hooks, in the broker's order, and makes contexts as this.actions.rest does", async () => {
		const seen: string[] = [];
		const broker = new ServiceBroker({
			logger: false,
			middlewares: [recorder("Inner", seen), recorder("Skipped", seen), recorder("Outer", seen)],
		});
		const svc = broker.createService(REST_SERVICE) as unknown as RestService;
		await broker.start();
		try {
			const root = requestRoot(svc, new Set(["Outer", "Inner"]));
			assert.deepEqual(root.hooks, ["Inner", "Outer"]);
			const ctx = requestContext(broker, root, { x: 21 }, { requestID: "req-1" });
			assert.deepEqual(await root.handler(ctx), {
				twice: 42,
				request_id: "req-1",
				service: "gw",
				action: "gw.rest",
				level: 1,
			});
			// outermost first, and the skipped one never ran
			assert.deepEqual(seen, ["Outer:gw.rest", "Inner:gw.rest"]);
			// this.actions.rest still passes every hook (what the gateway no longer calls)
			seen.length = 0;
			await (svc as unknown as { actions: { rest(p: object): Promise<unknown> } }).actions.rest({ x: 1 });
			assert.deepEqual(seen, ["Outer:gw.rest", "Skipped:gw.rest", "Inner:gw.rest"]);
		} finally {
			await broker.stop();
		}
	});

	it("refuses a service without moleculer-web's rest action", () => {
		const broker = new ServiceBroker({ logger: false });
		const svc = broker.createService({ name: "other", actions: { x: () => 1 } }) as unknown as RestService;
		assert.throws(() => requestRoot(svc), /rest action was not found/);
	});

	it("the production broker's request hooks are ContextTracker and Metrics (Tracing adds none while off); its others are left out", async () => {
		// metrics on, as in production (test brokers run without: test/helpers/global.ts)
		const broker = new ServiceBroker(testBrokerOptions(false, { metrics: { enabled: true, reporter: [] } }));
		const svc = broker.createService(REST_SERVICE) as unknown as RestService;
		await broker.start();
		try {
			const root = requestRoot(svc);
			// Tracing adds no hook while tracing is off (as in production)
			assert.deepEqual(root.hooks, ["ContextTracker", "Metrics"]);
			for (const h of root.hooks) assert.ok(REQUEST_HOOKS.has(h));
			const names = (
				broker as unknown as { middlewares: { list: { name?: string }[] } }
			).middlewares.list.map((m) => m.name);
			for (const left of [
				"ErrorHandler",
				"Timeout",
				"Fallback",
				"RequestContext",
				"Permissions",
				"Validator",
			])
				assert.ok(names.includes(left), `${left} is a middleware of the production broker`);
			for (let i = 0; i < 3; i++)
				await root.handler(requestContext(broker, root, { x: i }, { requestID: "r" }));
			// the Metrics hook counted each request under the rest action
			const total = broker.metrics.getMetric("moleculer.request.total");
			assert.equal(total?.get({ service: "gw", action: "gw.rest", caller: null, type: "local" })?.value, 3);
		} finally {
			await broker.stop();
		}
	});
});

describe("gateway: requests answered through the request root", () => {
	const g = useGateway();
	const probed: string[] = [];
	let probe: { broker: ServiceBroker; base: string } | undefined;
	before(async () => {
		// a second gateway (the same IdP) on a broker with one more middleware, which sees every action its hooks wrap run
		const broker = new ServiceBroker(testBrokerOptions(false, { middlewares: [recorder("Probe", probed)] }));
		broker.createService(loadServiceSchema("gateway"));
		for (const f of FAKES) broker.createService(f);
		await broker.start();
		const gw = broker.getLocalService("gateway") as unknown as { server: { address(): { port: number } } };
		probe = { broker, base: `http://127.0.0.1:${gw.server.address().port}` };
	});
	after(async () => {
		await probe?.broker.stop();
	});

	it("a request runs its route's action in every hook and its root in the request hooks only", async () => {
		const p = probe as { base: string };
		const ok = await http(p.base, "GET", "/v1/pincode/110001", {
			token: await g.idp.tokenFor(newSender()),
		});
		assert.equal(ok.status, 200, ok.text);
		assert.deepEqual(probed, ["Probe:pincode.lookup"]);
	});

	it("the gateway made its root when created and answers routed and unrouted requests through it", async () => {
		const gw = g.broker.getLocalService("gateway") as unknown as {
			requestRoot?: { hooks: string[] };
			settings: Record<string, unknown>;
		};
		assert.ok(gw.requestRoot, "made when the gateway was created");
		// the override leaves out upstream's CORS and static-asset branches: the gateway configures neither
		assert.equal(gw.settings.cors, undefined);
		assert.equal(gw.settings.assets, undefined);
		assert.ok(gw.requestRoot.hooks.includes("ContextTracker"));
		const ok = await http(g.base, "GET", "/v1/pincode/110001", {
			token: await g.idp.tokenFor(newSender()),
			headers: { "x-request-id": "root-test-1" },
		});
		assert.equal(ok.status, 200, ok.text);
		assert.equal(ok.headers.get("x-request-id"), "root-test-1");
		const corr = await http(g.base, "GET", "/v1/pincode/110001", {
			token: await g.idp.tokenFor(newSender()),
			headers: { "x-request-id": "root-test-2", "x-correlation-id": "root-corr-2" },
		});
		// upstream would take x-correlation-id first; the gateway's rule (rootCallOptions) keeps a valid x-request-id
		assert.equal(corr.headers.get("x-request-id"), "root-test-2");
		const missing = await http(g.base, "GET", "/v1/no-such-route");
		assert.equal(missing.status, 404);
		assert.equal(missing.body.error, "not_found");
	});
});
