/**
 * Shared setup of the gateway specs (test/unit/gateway/*.spec.ts): the gateway
 * over real HTTP (global fetch) on a broker with small fake services (spec
 * §2.11, §5, §7; docs/ARCHITECTURE.md §3, §6). Tokens are signed by a real
 * development IdP whose JWKS is served over HTTP (lib/platform/devidp.ts).
 */
import { type BrokerOptions, type Context, ServiceBroker } from "moleculer";
import { API_ALIASES, PAGE_ALIASES, UPLOAD_ALIASES } from "../../../lib/gateway/routes";
import type { AuthUser } from "../../../lib/platform/auth";
import type { DevIdp } from "../../../lib/platform/devidp";
import { apiError, documentsError } from "../../../lib/platform/errors";
import { loadServiceSchema } from "../../../lib/platform/system";
import { testBrokerOptions } from "../../helpers/broker";
import { skipContract } from "../../helpers/contract";
import { useDevIdp } from "../../helpers/devidp";

export const PDF = Buffer.concat([
	Buffer.from("%PDF-1.7\n"),
	Buffer.from([0, 1, 2, 250, 251, 252, 255]),
	Buffer.from("\n%%EOF"),
]);
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Counts handler calls of the fakes, to prove 403s are answered before the handler runs. */
export const calls: Record<string, number> = {};
function hit(name: string): void {
	calls[name] = (calls[name] ?? 0) + 1;
}

/** What a fake answers about the context it ran in. */
export function echo(ctx: Context<any, any>) {
	return {
		params: ctx.params,
		user: ctx.meta.user as AuthUser,
		meta_keys: Object.keys(ctx.meta),
		request_id: ctx.requestID,
		polluted: (ctx.params as any).polluted ?? null,
		proto_is_object: Object.getPrototypeOf(ctx.params) === Object.prototype,
	};
}

/** Fakes of the services behind the aliases, faithful to their `access` rules. */
export const FAKES: any[] = [
	{
		name: "intake",
		actions: {
			// every other aliased intake action answers (so /ready sees intake whole as routes are added)
			...Object.fromEntries(
				[...Object.values(API_ALIASES), ...Object.values(UPLOAD_ALIASES)]
					.filter((x) => x.startsWith("intake."))
					.map((x) => [x.slice("intake.".length), { access: { auth: true }, handler: () => ({ data: [] }) }]),
			),
			createOrder: {
				access: { writes: true, capability: "orders.write" },
				handler(ctx: Context<any, any>) {
					hit("intake.createOrder");
					ctx.meta.$statusCode = 201;
					return { order_id: 7, ...echo(ctx) };
				},
			},
			createReverse: {
				access: { writes: true, capability: "orders.write" },
				handler() {
					hit("intake.createReverse");
					return { order_id: 8 };
				},
			},
			status: {
				access: { auth: true },
				handler(ctx: Context<any, any>) {
					hit("intake.status");
					if (ctx.params.order_no === "missing") {
						throw apiError(404, "order_not_found", "No order with that reference on this account");
					}
					if (ctx.params.order_no === "boom") throw new Error("database exploded at /secret/path");
					return echo(ctx);
				},
			},
		},
	},
	{
		name: "documents",
		actions: {
			// every other aliased documents action answers (so /ready sees documents whole as routes are added)
			...Object.fromEntries(
				Object.values(API_ALIASES)
					.filter((x) => x.startsWith("documents."))
					.map((x) => [x.slice("documents.".length), { access: { auth: true }, handler: () => ({}) }]),
			),
			label: {
				access: { auth: true },
				handler(ctx: Context<any, any>) {
					hit("documents.label");
					if (ctx.params.orderId === "404") throw documentsError(404, "not found");
					ctx.meta.$responseType = "application/pdf";
					ctx.meta.$responseHeaders = {
						"Content-Disposition": `inline; filename="label-${ctx.params.orderId}.pdf"`,
					};
					return PDF;
				},
			},
		},
	},
	{
		name: "warehouses",
		actions: {
			list: { access: { auth: true }, handler: (ctx: Context) => ({ data: [], ...echo(ctx) }) },
			create: {
				access: { writes: true, capability: "warehouses.write" },
				handler: () => ({ data: { id: 1, orders_repaired: 0 } }),
			},
			update: {
				access: { capability: "warehouses.write" },
				handler(ctx: Context<any, any>) {
					hit("warehouses.update");
					return { data: { id: Number(ctx.params.id) } };
				},
			},
			remove: {
				access: { capability: "warehouses.write" },
				async handler(ctx: Context<any, any>) {
					// A service bug: an internal call with params its validator rejects.
					if (ctx.params.id === "999") await ctx.call("warehouses.usage", { warehouse_id: "nine" });
					return { data: { id: Number(ctx.params.id), deleted: 1 } };
				},
			},
			// the pickup routes (issue 28) answer, so /ready sees warehouses whole
			...Object.fromEntries(
				Object.values(API_ALIASES)
					.filter((a) => a.startsWith("warehouses.") && a.toLowerCase().includes("pickup"))
					.map((a) => [a.slice("warehouses.".length), () => ({})]),
			),
			/** Internal (not aliased), broker-validated. */
			usage: {
				params: { warehouse_id: { type: "number", integer: true, positive: true } },
				handler: () => ({ count: 0 }),
			},
		},
	},
	{
		name: "rates",
		actions: {
			serviceable: {
				// A broker-validated schema, to check the 422 → 400 validation_failed mapping.
				params: { from_pin: { type: "string", pattern: /^\d{6}$/ }, $$strict: false },
				handler: (ctx: Context) => ({ data: [], dropped_couriers: [], ...echo(ctx) }),
			},
			// every other aliased rates action answers (so /ready sees rates whole)
			...Object.fromEntries(
				Object.values(API_ALIASES)
					.filter((a) => a.startsWith("rates.") && a !== "rates.serviceable")
					.map((a) => [a.slice("rates.".length), () => ({})]),
			),
		},
	},
	{
		name: "pincode",
		actions: {
			lookup: (ctx: Context<any>) => ({ found: false, pincode: ctx.params.pincode, city: "", state: "" }),
		},
	},
	{
		// every aliased booking action answers (so /ready sees booking whole as routes are added)
		name: "booking",
		actions: Object.fromEntries(
			Object.values(API_ALIASES)
				.filter((a) => a.startsWith("booking."))
				.map((a) => [a.slice("booking.".length), () => ({ status: "queued", mode: "auto" })]),
		),
	},
	{
		// every aliased billing action answers (so /ready sees billing whole)
		name: "billing",
		actions: Object.fromEntries(
			[...Object.values(API_ALIASES), ...Object.values(UPLOAD_ALIASES)]
				.filter((a) => a.startsWith("billing."))
				.map((a) => [a.slice("billing.".length), () => ({})]),
		),
	},
	{
		// every aliased ndr action answers (so /ready sees ndr whole)
		name: "ndr",
		actions: Object.fromEntries(
			Object.values(API_ALIASES)
				.filter((a) => a.startsWith("ndr."))
				.map((a) => [a.slice("ndr.".length), () => ({})]),
		),
	},
	{
		// every aliased webhooks action answers (so /ready sees webhooks whole)
		name: "webhooks",
		actions: Object.fromEntries(
			Object.values(API_ALIASES)
				.filter((a) => a.startsWith("webhooks."))
				.map((a) => [a.slice("webhooks.".length), () => ({})]),
		),
	},
	{
		// every aliased notifications action answers (the buyer's pages and the brand settings)
		name: "notifications",
		actions: Object.fromEntries(
			[...Object.values(API_ALIASES), ...Object.values(PAGE_ALIASES)]
				.filter((a) => a.startsWith("notifications."))
				.map((a) => [a.slice("notifications.".length), () => ({})]),
		),
	},
];

export { setEnv } from "../../helpers/env";

/** Starts a broker with the gateway (and extra services / fakes). */
export async function startGateway(
	extra: any[],
	opts: {
		nats?: boolean;
		nodeID?: string;
		services?: ("gateway" | "devauth")[];
		/** the broker's `logger` option (e.g. test/helpers/logs.ts `CaptureLogger`) */
		logger?: BrokerOptions["logger"];
	} = {},
): Promise<{ broker: ServiceBroker; base: string }> {
	const broker = new ServiceBroker(
		// No PermissionsMiddleware: the gateway alone must enforce `access` in these tests.
		testBrokerOptions(!!opts.nats, {
			nodeID: opts.nodeID,
			middlewares: [],
			...(opts.logger === undefined ? {} : { logger: opts.logger }),
		}),
	);
	for (const s of opts.services ?? ["gateway"]) broker.createService(loadServiceSchema(s));
	for (const f of extra) broker.createService(f);
	await broker.start();
	const gw = broker.getLocalService("gateway") as any;
	const { port } = gw.server.address();
	return { broker, base: `http://127.0.0.1:${port}` };
}

export interface Answer {
	status: number;
	headers: Headers;
	text: string;
	body: any;
	bytes: Buffer;
}

/** One HTTP request; `body` objects are sent as JSON, strings/Buffers raw. */
export async function http(
	base: string,
	method: string,
	path: string,
	o: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
	const headers: Record<string, string> = { ...(o.headers ?? {}) };
	if (o.token) headers.authorization = `Bearer ${o.token}`;
	let body: string | Buffer | undefined;
	if (typeof o.body === "string" || Buffer.isBuffer(o.body)) body = o.body;
	else if (o.body !== undefined) {
		body = JSON.stringify(o.body);
		headers["content-type"] ??= "application/json";
	}
	const r = await fetch(base + path, { method, headers, body });
	const bytes = Buffer.from(await r.arrayBuffer());
	const text = bytes.toString("utf8");
	let parsed: unknown;
	try {
		parsed = text ? JSON.parse(text) : undefined;
	} catch {
		parsed = undefined;
	}
	return { status: r.status, headers: r.headers, text, body: parsed, bytes };
}

/** The gateway of one spec file: its broker, base URL and the IdP signing its tokens. */
export interface GatewayUnderTest {
	idp: DevIdp;
	broker: ServiceBroker;
	base: string;
}

/**
 * Registers mocha hooks that start (before) and stop (after) one gateway with
 * {@link FAKES}, verifying tokens against a real development IdP's JWKS served
 * over HTTP. The returned object is filled in by the `before` hook.
 */
export function useGateway(): GatewayUnderTest {
	const g = {} as GatewayUnderTest;
	// the fakes answer echo bodies, not the documented shapes: only the gateway's own answers are checked
	skipContract("gateway mechanics on fake services", "success");
	const auth = useDevIdp();
	before(async () => {
		g.idp = auth.idp;
		({ broker: g.broker, base: g.base } = await startGateway(FAKES));
	});
	after(async () => {
		await g.broker?.stop();
	});
	return g;
}
