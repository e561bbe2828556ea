/**
 * Settles every remote call at its deadline, so its context leaves
 * Moleculer's context tracker (moleculer.config.ts registers it on every
 * broker, first among the user middlewares: the innermost wrapper of the
 * transit's request, inside the ContextTracker).
 *
 * Why: in Moleculer 0.15.2, when a remote call times out, the Timeout
 * middleware rejects the caller, and the ErrorHandler middleware drops the
 * transit's pending request without rejecting it. The promise the
 * ContextTracker waits on then never settles: the context (its params and
 * meta) stays in `broker._trackedContexts` for the life of the process, and
 * a graceful stop waits the whole `tracking.shutdownTimeout` (15 s) for it.
 * Seen in test/e2e/split.spec.ts: a gateway whose `intake.createOrder` had
 * timed out while intake restarted took 15.1 s to stop on SIGTERM, every run.
 */
import { type Context, Errors, type Middleware } from "moleculer";
import { settleBy } from "./call-timeout";

/**
 * How long after the caller's own timeout this middleware rejects (ms): the
 * Timeout middleware answers the caller first (its log line and the
 * `moleculer.request.timeout.total` metric stay as they are); this one only
 * settles what it leaves pending.
 */
export const REMOTE_DEADLINE_GRACE_MS = 100;

/**
 * Moleculer middleware (remote actions only): settles the transit's request
 * by `ctx.options.timeout` + {@link REMOTE_DEADLINE_GRACE_MS} ms (lib/platform/call-timeout.ts
 * `settleBy`, up to a deadline slot later); at the deadline it rejects with `RequestTimeoutError` (retryable,
 * code 504). A call without a timeout (`timeout: 0`) is passed through untouched. The deadline is disarmed as
 * soon as the request settles.
 */
export const RemoteCallDeadline = {
	name: "RemoteCallDeadline",
	remoteAction(next: (ctx: Context) => Promise<unknown>) {
		return function remoteCallDeadline(ctx: Context): Promise<unknown> {
			const p = next(ctx);
			const ms = Number(ctx.options.timeout);
			if (!(ms > 0)) return p;
			return settleBy(
				p,
				ms + REMOTE_DEADLINE_GRACE_MS,
				() => new Errors.RequestTimeoutError({ action: ctx.action?.name, nodeID: ctx.nodeID }),
			);
		};
	},
} satisfies Middleware;
