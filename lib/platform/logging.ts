/**
 * Structured JSON logs carrying the request id (docs/ARCHITECTURE.md §6: "Logs
 * are structured JSON with the request id").
 *
 * {@link RequestContextMiddleware} runs every local action and event handler
 * inside an AsyncLocalStorage scope holding the call's trace fields;
 * {@link jsonFormatter} adds them to every log line written inside that scope:
 * - `request_id`: `ctx.requestID`, the trace id: the gateway sets it from
 *   `x-request-id` (or a new UUID) and Moleculer carries it across NATS to
 *   every nested call and emitted event, so one id follows a request through
 *   all services (issue 13); a call with no caller (a BullMQ job, a timer)
 *   starts its own (its context id);
 * - `call_id`: `ctx.id`, this call's own context id;
 * - `parent_id`: `ctx.parentID`, the context id of the call that made it
 *   (absent for a root call), so the call tree can be rebuilt from the logs.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Context, Middleware } from "moleculer";

/** Trace fields of the call being handled (see the module comment). */
export interface TraceFields {
	request_id?: string;
	call_id?: string;
	parent_id?: string;
}

const scope = new AsyncLocalStorage<TraceFields>();

/** The request id (trace id) of the call being handled, if any. */
export function currentRequestId(): string | undefined {
	return scope.getStore()?.request_id;
}

/** The trace fields of the call being handled (empty outside a call). */
export function currentTrace(): TraceFields {
	return scope.getStore() ?? {};
}

/** Wraps a local action or event handler: runs `next(ctx)` inside the trace scope of `ctx`. */
function withRequestContext<R>(next: (ctx: Context) => R): (ctx: Context) => R {
	return (ctx) =>
		scope.run(
			{
				request_id: ctx.requestID ?? undefined,
				call_id: ctx.id ?? undefined,
				parent_id: ctx.parentID ?? undefined,
			},
			() => next(ctx),
		);
}

/** Moleculer middleware: binds the trace fields of `ctx` to the async scope of each local action and event handler. */
export const RequestContextMiddleware = {
	name: "RequestContext",
	localAction: withRequestContext,
	localEvent: withRequestContext,
} satisfies Middleware;

/**
 * Console logger formatter: one JSON object per line
 * `{ts, level, msg, request_id?, call_id?, parent_id?, nodeID, ns, mod, svc}`
 * (`ts` epoch ms; the trace fields only inside a call).
 */
export function jsonFormatter(
	this: unknown,
	type: string,
	args: unknown[],
	bindings: Record<string, unknown>,
	{ printArgs }: { printArgs: (a: unknown[]) => unknown[] },
): string[] {
	const t = scope.getStore();
	return [
		JSON.stringify({
			ts: Date.now(),
			level: type,
			msg: printArgs(args).join(" "),
			request_id: t?.request_id,
			call_id: t?.call_id,
			parent_id: t?.parent_id,
			...bindings,
		}),
	];
}
