/**
 * Structured JSON logs carrying the request id (ARCHITECTURE §6: "Logs are
 * structured JSON with the request id").
 *
 * {@link RequestContextMiddleware} runs every local action and event handler
 * inside an AsyncLocalStorage scope holding `ctx.requestID` (set by the gateway
 * from `x-request-id`, propagated by Moleculer across NATS); {@link jsonFormatter}
 * adds it as `request_id` to every log line written inside that scope.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Context, Middleware } from "moleculer";

const scope = new AsyncLocalStorage<{ requestID?: string }>();

/** The request id of the call being handled, if any. */
export function currentRequestId(): string | undefined {
	return scope.getStore()?.requestID;
}

/** Wraps a local action or event handler: runs `next(ctx)` inside the request-id scope of `ctx` (when it has one). */
function withRequestContext<R>(next: (ctx: Context) => R): (ctx: Context) => R {
	return (ctx) => (ctx.requestID ? scope.run({ requestID: ctx.requestID }, () => next(ctx)) : next(ctx));
}

/** Moleculer middleware: binds `ctx.requestID` to the async scope of each local action and event handler. */
export const RequestContextMiddleware = {
	name: "RequestContext",
	localAction: withRequestContext,
	localEvent: withRequestContext,
} satisfies Middleware;

/**
 * Console logger formatter: one JSON object per line
 * `{ts, level, msg, request_id?, nodeID, ns, mod, svc}`.
 */
export function jsonFormatter(
	this: unknown,
	type: string,
	args: unknown[],
	bindings: Record<string, unknown>,
	{ printArgs }: { printArgs: (a: unknown[]) => unknown[] },
): string[] {
	const request_id = currentRequestId();
	return [
		JSON.stringify({ ts: Date.now(), level: type, msg: printArgs(args).join(" "), request_id, ...bindings }),
	];
}
