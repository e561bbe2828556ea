/**
 * Moleculer's `Fallback` middleware without a promise per call where no fallback can apply (issue 32,
 * docs/decisions/0144-fallback-where-used.md; a framework patch, docs/decisions/0087-framework-patches.md §13).
 *
 * Moleculer wraps every local and remote action call in `handler(ctx).catch(…)`: one more promise, one more
 * reaction and microtask per call (and per hop over NATS, on both sides), to answer a failed call with
 * `ctx.options.fallbackResponse` (a per-call option) or the action's own `fallback` (a local action's schema).
 * No action and no call of ours sets either, so on every call the wrapper only rejected the same error again.
 * {@link CallFallback} keeps Moleculer's wrapper, unchanged, for an action whose schema has a `fallback` (and a
 * service), and for any call made with `fallbackResponse`; every other call goes straight to the next handler.
 */
import type { ActionSchema, Context, Middleware, ServiceBroker } from "moleculer";
import { BuiltIn } from "./moleculer-builtins";

/** An action hook of a Moleculer middleware: the handler it wraps and the action's definition. */
type ActionHook = (
	this: ServiceBroker,
	next: (ctx: Context) => Promise<unknown>,
	action: ActionSchema,
) => (ctx: Context) => Promise<unknown>;

/**
 * Moleculer middleware replacing its `Fallback` (list it where `internalMiddlewares()` had "Fallback"). For an
 * action whose definition has `fallback` and a `service` (a local action with a fallback method or function):
 * Moleculer's wrapper as it is. For every other action: a call whose `ctx.options.fallbackResponse` is set
 * goes through Moleculer's wrapper (the fallback value or function answers a failure, with Moleculer's warning
 * and `moleculer.request.fallback.total`); a call without it is `next(ctx)` itself, its promise returned as is
 * (the same answer and the same error, one promise fewer). Moleculer's `created` hook (the metric's
 * registration) is kept.
 */
export function CallFallback(broker: ServiceBroker): Middleware {
	const upstream = BuiltIn.Fallback(broker) as Middleware & {
		localAction: ActionHook;
		remoteAction: ActionHook;
	};
	const wrap = (hook: ActionHook): ActionHook =>
		function fallbackWhereUsed(this: ServiceBroker, next, action) {
			const withFallback = hook.call(this, next, action);
			if (action.fallback && action.service) return withFallback;
			return function callFallback(ctx: Context): Promise<unknown> {
				return ctx.options.fallbackResponse === undefined ? next(ctx) : withFallback(ctx);
			};
		};
	return {
		...upstream,
		name: "Fallback",
		localAction: wrap(upstream.localAction),
		remoteAction: wrap(upstream.remoteAction),
	} as Middleware;
}
