/**
 * The gateway's `routeHandler` (services/gateway.service.ts; issue 32, docs/decisions/0158-idle-route-middlewares.md)
 * against moleculer-web's own, over real HTTP exchanges: for every kind of request the alias handler sees the same
 * request (params, alias, route, body) from both; ours skips the route's middlewares only where they have nothing to
 * do (lib/gateway/route-options.ts `middlewaresIdle`), and upstream's runs them.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import bodyParser from "body-parser";
import ApiGateway from "moleculer-web";
import { gatewayRoutes, middlewaresIdle } from "../../../lib/gateway/route-options";
import type { GwRequest, RouteOptions, WebRoute } from "../../../lib/gateway/web-types";
import gatewaySchema from "../../../services/gateway.service";

type Handler = (this: unknown, ...args: unknown[]) => Promise<unknown>;
const upstream = (ApiGateway as unknown as { methods: Record<string, Handler> }).methods.routeHandler;
const ours = (gatewaySchema.methods as Record<string, Handler>).routeHandler;

/** A route built from `opts` as moleculer-web's `createRoute` builds one, each middleware counting its runs. */
function routeOf(opts: RouteOptions & { use?: unknown[] }): WebRoute & { path: string; ran: number } {
	const route = { opts, path: "/", middlewares: [] as unknown[], ran: 0 };
	const parsers = bodyParser as unknown as Record<string, (o: unknown) => (...a: unknown[]) => void>;
	const counted =
		(mw: (...a: unknown[]) => void) =>
		(req: unknown, res: unknown, next: unknown): void => {
			route.ran++;
			mw(req, res, next);
		};
	if (opts.bodyParsers)
		for (const [k, v] of Object.entries(opts.bodyParsers))
			if (v !== false) route.middlewares.push(counted(parsers[k](typeof v === "object" ? v : undefined)));
	for (const mw of opts.use ?? []) route.middlewares.push(counted(mw as (...a: unknown[]) => void));
	return route;
}

/** What the alias handler saw of one request. */
interface Seen {
	params: unknown;
	/** the alias found was the one set as `req.$alias` */
	alias: boolean;
	route: boolean;
	resRoute: boolean;
	hasBody: boolean;
	body: unknown;
	result: unknown;
	ran: number;
}

/**
 * Sends `method path` (with `body` as a JSON request body, when given) to a server whose every request is routed by
 * `handler` on `route` with the alias found (`params`); returns what the alias handler saw.
 */
async function seenBy(
	handler: Handler,
	route: WebRoute & { ran: number },
	method: string,
	path: string,
	params: Record<string, unknown>,
	body?: string,
): Promise<Seen> {
	route.ran = 0;
	const alias = { action: "x.y", toString: () => `${method} ${path}` };
	let seen: Seen | undefined;
	const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
		const r = req as GwRequest & { $route?: unknown };
		const q = (req.url ?? "").indexOf("?");
		r.query = q === -1 ? {} : Object.fromEntries(new URLSearchParams((req.url ?? "").slice(q + 1)));
		r.parsedUrl = q === -1 ? req.url : req.url?.slice(0, q);
		const self = {
			Promise,
			_isscRe: /\$/g,
			settings: {},
			logger: { debug: () => undefined },
			logRequest: () => undefined,
			corsHandler: () => false,
			aliasHandler: async (
				rq: GwRequest & { $route?: unknown },
				rs: ServerResponse & { $route?: unknown },
			) => {
				seen = {
					params: rq.$params,
					alias: rq.$alias === alias,
					route: rq.$route === route,
					resRoute: rs.$route === route,
					hasBody: "body" in rq,
					body: rq.body,
					result: undefined,
					ran: route.ran,
				};
				rs.end("ok");
				return true;
			},
		};
		const result = await handler.call(self, {}, route, req, res, { alias, params });
		if (seen) seen.result = result;
	});
	await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
	try {
		await new Promise<void>((ok, fail) => {
			const port = (server.address() as AddressInfo).port;
			const headers = body === undefined ? {} : { "content-type": "application/json" };
			const req = request({ host: "127.0.0.1", port, method, path, headers }, (res) => {
				res.resume();
				res.on("end", ok);
			});
			req.on("error", fail);
			req.end(body);
		});
		await new Promise((ok) => setImmediate(ok));
	} finally {
		await new Promise((ok) => server.close(ok));
	}
	assert.ok(seen, `${method} ${path}: the alias handler was not called`);
	return seen;
}

const routes = gatewayRoutes({ nodeID: "gw-test", devIdp: true, trustProxy: 0 });
const named = (name: string) => routes.find((r) => r.name === name) as RouteOptions;

describe("gateway routeHandler: idle route middlewares are not run (record 0158)", () => {
	it("middlewaresIdle: no parser, or only parsers that read no body of a GET / HEAD / DELETE, and no `use`", () => {
		const api = routeOf(named("api"));
		for (const m of ["GET", "HEAD", "DELETE"]) assert.equal(middlewaresIdle(api, m), true, m);
		for (const m of ["POST", "PATCH", "PUT", "OPTIONS"]) assert.equal(middlewaresIdle(api, m), false, m);
		assert.equal(middlewaresIdle(routeOf(named("probes")), "POST"), true);
		// the raw webhook parser reads every body; the login's form parser has no `type`
		assert.equal(middlewaresIdle(routeOf(named("webhooks")), "GET"), false);
		assert.equal(middlewaresIdle(routeOf(named("devauth")), "GET"), false);
		// a `use` middleware always runs, whatever the parsers
		const use = { ...named("api"), use: [(_q: unknown, _s: unknown, next: () => void) => next()] };
		assert.equal(middlewaresIdle(routeOf(use), "GET"), false);
		assert.equal(middlewaresIdle(routeOf({ ...named("probes"), use: use.use }), "GET"), false);
		// a service-wide `use` sits among the route's middlewares without being in its options
		const extra = routeOf(named("api"));
		extra.middlewares.push(() => undefined);
		assert.equal(middlewaresIdle(extra, "GET"), false);
	});

	it("a GET on the API route: the same params, alias, route and body as upstream, without running the parser", async () => {
		const up = await seenBy(upstream, routeOf(named("api")), "GET", "/v1/orders/7?x=1&y=2", { id: "7" });
		const mine = await seenBy(ours, routeOf(named("api")), "GET", "/v1/orders/7?x=1&y=2", { id: "7" });
		assert.equal(up.ran, 1, "upstream runs the JSON parser");
		assert.equal(mine.ran, 0, "ours does not");
		assert.deepEqual({ ...mine, ran: 0 }, { ...up, ran: 0 });
		assert.deepEqual(mine.params, { x: "1", y: "2", id: "7" });
		assert.equal(mine.hasBody, true);
		assert.equal(mine.body, undefined);
		assert.equal(mine.result, true);
		assert.ok(mine.route && mine.resRoute);
	});

	it("a GET or DELETE with a body on the API route: the body is read by neither", async () => {
		for (const method of ["GET", "DELETE"]) {
			const up = await seenBy(upstream, routeOf(named("api")), method, "/v1/x?q=1", { id: "1" }, '{"q":"2"}');
			const mine = await seenBy(ours, routeOf(named("api")), method, "/v1/x?q=1", { id: "1" }, '{"q":"2"}');
			assert.equal(mine.ran, 0);
			assert.deepEqual({ ...mine, ran: 0 }, { ...up, ran: 0 });
			assert.deepEqual(mine.params, { q: "1", id: "1" });
		}
	});

	it("a POST on the API route runs the parser, as upstream: body, query and path params merged", async () => {
		const body = JSON.stringify({ a: 1, id: "body" });
		const up = await seenBy(upstream, routeOf(named("api")), "POST", "/v1/x?b=2", { id: "9" }, body);
		const mine = await seenBy(ours, routeOf(named("api")), "POST", "/v1/x?b=2", { id: "9" }, body);
		assert.equal(mine.ran, 1);
		assert.deepEqual(mine, up);
		assert.deepEqual(mine.params, { a: 1, b: "2", id: "9" });
	});

	it("a route without parsers and one with `mergeParams: false`: the same request as upstream", async () => {
		const up = await seenBy(upstream, routeOf(named("probes")), "POST", "/ready?a=1", { p: "1" }, "{}");
		const mine = await seenBy(ours, routeOf(named("probes")), "POST", "/ready?a=1", { p: "1" }, "{}");
		assert.deepEqual(mine, up);
		assert.equal(mine.hasBody, false, "no parser: req.body stays unset, as upstream leaves it");
		const apart = { ...named("probes"), mergeParams: false };
		const upApart = await seenBy(upstream, routeOf(apart), "GET", "/x?a=1", { p: "2" });
		const mineApart = await seenBy(ours, routeOf(apart), "GET", "/x?a=1", { p: "2" });
		assert.deepEqual(mineApart, upApart);
		assert.deepEqual(mineApart.params, { body: undefined, query: { a: "1" }, params: { p: "2" } });
	});

	it("a response error while the answer is made goes to errorHandler; one after the answer is ignored", async () => {
		const handled: string[] = [];
		const server = createServer((req: IncomingMessage, res: ServerResponse) => {
			const self = {
				logRequest: () => undefined,
				errorHandler: (_q: unknown, _s: unknown, err: Error) => handled.push(err.message),
				aliasHandler: async (_q: unknown, rs: ServerResponse) => {
					// a response emits `error` on its own (e.g. a write after its end): without a listener, emit throws
					rs.emit("error", new Error("in flight"));
					rs.end("ok");
					await new Promise((ok) => rs.once("finish", ok));
					rs.emit("error", new Error("after the answer"));
					return true;
				},
			};
			(res as ServerResponse & { $service?: unknown }).$service = self;
			(req as GwRequest).query = {};
			void ours.call(self, {}, routeOf(named("api")), req, res, {
				alias: { toString: () => "" },
				params: {},
			});
		});
		await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
		try {
			const port = (server.address() as AddressInfo).port;
			await new Promise<void>((ok, fail) => {
				const req = request({ host: "127.0.0.1", port, path: "/v1/x" }, (res) => {
					res.resume();
					res.on("end", ok);
				});
				req.on("error", fail);
				req.end();
			});
			await new Promise((ok) => setImmediate(ok));
		} finally {
			await new Promise((ok) => server.close(ok));
		}
		assert.deepEqual(handled, ["in flight"]);
	});

	it("upstream routeHandler still sets, merges and calls what ours does (and runs and settles what ours skips)", () => {
		const src = String(upstream);
		for (const line of [
			"req.$route = route;",
			"res.$route = route;",
			"this.logRequest(req);",
			'res.once("finish", () => resolve(true));',
			'res.once("close", () => resolve(true));',
			'res.once("error", err => reject(err));',
			"await composeThen.call(this, req, res, ...route.middlewares);",
			"const shouldBreak = this.corsHandler(route, req, res);",
			"params = { body: req.body, query: req.query };",
			"const body = _.isObject(req.body) ? req.body : {};",
			"Object.assign(params, body, req.query);",
			"req.$params = params;",
			"params.params = foundAlias.params;",
			"Object.assign(params, foundAlias.params);",
			"req.$alias = alias;",
			"return resolve(await this.aliasHandler(req, res, alias));",
		])
			assert.ok(src.includes(line), `upstream routeHandler no longer has: ${line}`);
	});
});
