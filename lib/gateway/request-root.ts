/**
 * The root context of a gateway request (issue 32, docs/decisions/0155-request-root-hooks.md).
 *
 * moleculer-web answers every HTTP request by calling its own private `rest` action (`this.actions.rest`): a
 * Moleculer context and every `localAction` hook of the broker's middlewares around the handler that routes the
 * request, which then calls the route's action (a second context and the same hooks, the ones that matter: access
 * rules, timeout, log scope, metrics of the route). Most of the first chain has nothing to do for the `rest` action:
 * it has no access rule, no timeout (0), no fallback, no parameter schema, and the gateway catches what it throws.
 * Here the `rest` handler is wrapped once, when the gateway is created (as Moleculer wraps every action), by the
 * hooks that apply to a request as a whole ({@link REQUEST_HOOKS}), and each request makes its context as
 * `this.actions.rest` does and runs that handler.
 */
import type { ActionSchema, Context, ServiceBroker } from "moleculer";

/**
 * Names of the broker's middlewares whose `localAction` hook a request's root context passes through, in the
 * broker's order: `ContextTracker` (a stopping gateway waits for the requests in flight, `tracking` in
 * moleculer.config.ts), `Tracing` (the request's root span when tracing is on; no wrapper when off) and `Metrics`
 * (lib/platform/request-metrics.ts: `moleculer_request_*` of `gateway.rest`, one series for every HTTP request).
 */
export const REQUEST_HOOKS: ReadonlySet<string> = new Set(["ContextTracker", "Tracing", "Metrics"]);

/** A handler taking a context, as the broker's hooks wrap it. */
type Handler = (ctx: Context) => Promise<unknown>;

/** A middleware as the broker keeps it (`broker.middlewares.list`): its name and its `localAction` hook. */
interface ListedMiddleware {
	name?: string;
	localAction?: (this: ServiceBroker, next: Handler, action: ActionSchema) => Handler;
}

/** The parts of a Moleculer 0.15.2 service (pinned) read here. */
export interface RestService {
	fullName: string;
	broker: ServiceBroker;
	/** Moleculer's parsed schema: `actions[<fullName>.rest]` is the action as the broker wraps it */
	_serviceSpecification?: { actions?: Record<string, ActionSchema & { handler: Handler }> };
}

/** What a request needs: the endpoint its context is made for and the wrapped handler. */
export interface RequestRoot {
	/** the private endpoint of `<service>.rest` (its context's `service`, `action` and `nodeID`) */
	endpoint: unknown;
	/** moleculer-web's `rest` handler inside the {@link REQUEST_HOOKS} hooks */
	handler: Handler;
	/** names of the hooks `handler` passes through, innermost first (what the specs check) */
	hooks: string[];
}

/**
 * Builds the root of requests of gateway `service` (a moleculer-web service): moleculer-web's `rest` handler inside
 * the `localAction` hooks of the broker's middlewares named in `names` (default {@link REQUEST_HOOKS}), applied in
 * the broker's order as Moleculer's own `wrapHandler` applies them, and the private endpoint that
 * `this.actions.rest` makes its contexts for.
 * @throws Error when the service has no parsed `rest` action (moleculer-web or Moleculer changed; both are pinned)
 */
export function requestRoot(service: RestService, names: ReadonlySet<string> = REQUEST_HOOKS): RequestRoot {
	const action = service._serviceSpecification?.actions?.[`${service.fullName}.rest`];
	if (!action || typeof action.handler !== "function")
		throw new Error(
			`${service.fullName}: moleculer-web's rest action was not found (Moleculer 0.15.2 is pinned)`,
		);
	const broker = service.broker as ServiceBroker & {
		middlewares: { list: ListedMiddleware[] };
		registry: { createPrivateActionEndpoint(action: ActionSchema): unknown };
	};
	let handler = action.handler;
	const hooks: string[] = [];
	for (const mw of broker.middlewares.list) {
		if (!mw.name || !names.has(mw.name) || typeof mw.localAction !== "function") continue;
		handler = mw.localAction.call(broker, handler, action);
		hooks.push(mw.name);
	}
	return { endpoint: broker.registry.createPrivateActionEndpoint(action), handler, hooks };
}

/**
 * The root context of one request, made as moleculer-web's `this.actions.rest(params, options)` makes it
 * (`broker.ContextFactory.create(broker, endpoint, params, options)`).
 */
export function requestContext(
	broker: ServiceBroker,
	root: RequestRoot,
	params: object,
	options: { requestID?: string },
): Context {
	const factory = (broker as unknown as { ContextFactory: { create: (...a: unknown[]) => Context } })
		.ContextFactory;
	return factory.create(broker, root.endpoint, params, options);
}
