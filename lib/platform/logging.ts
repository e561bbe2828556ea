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
import { format } from "node:util";
import { type Context, Loggers, type Middleware } from "moleculer";
import { writeLine } from "./stdout-sink";

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

/** What Moleculer passes a logger for each logger it makes: service, module, node. */
type LoggerBindings = Parameters<
	Loggers.Formatted<Loggers.Formatted.FormattedLoggerOptions>["getLogHandler"]
>[0];

/** Moleculer's log levels, most severe first (`Loggers.LEVELS`). */
const LEVELS = Loggers.LEVELS as readonly string[];
/** Index of `warn` in {@link LEVELS}: this level and the more severe ones go to stderr. */
const WARN = LEVELS.indexOf("warn");

/**
 * Moleculer's Console logger with its standard-output lines made asynchronous (issue 32,
 * docs/decisions/0095-asynchronous-access-log.md). A `Formatted` logger, Moleculer's documented way to add a
 * logger, registered as the type `StdoutSink` (moleculer.config.ts): the same options, formatter and level rules as
 * `Console`. Lines of `info`, `debug` and `trace` go to the process's asynchronous stdout (lib/platform/stdout-sink.ts
 * `writeLine`, with the access log) instead of the synchronous `console.log` — Node writes to a pipe or a file
 * synchronously, so every such line was a blocking write on the event loop (one per created order, for one).
 * `warn`, `error` and `fatal` go to stderr synchronously, as Console writes them, so a line about a failure is
 * written before the process goes on (or dies). The text of each line is what Console prints (`util.format` of the
 * formatter's output).
 */
export class StdoutSinkLogger extends Loggers.Formatted<Loggers.Formatted.FormattedLoggerOptions> {
	/**
	 * The handler for a logger of `bindings` (service, module): null when its level logs nothing; else writes the
	 * formatted line of each call at or above the level (see the class comment for where).
	 */
	override getLogHandler(bindings: LoggerBindings): ((type: string, args: unknown[]) => void) | null {
		const level = bindings ? this.getLogLevel(bindings.mod) : null;
		if (!level) return null;
		const levelIdx = LEVELS.indexOf(level);
		const formatter = this.getFormatter(bindings);
		return (type, args) => {
			const typeIdx = LEVELS.indexOf(type);
			if (typeIdx > levelIdx) return;
			const line = `${format(...formatter(type, args))}\n`;
			if (typeIdx <= WARN) process.stderr.write(line);
			else writeLine(line);
		};
	}
}
// Moleculer's typing of `register` takes an instance; at run time it is the class that `resolve` constructs
Loggers.register(
	"StdoutSink",
	StdoutSinkLogger as unknown as Loggers.Base<Loggers.Formatted.FormattedLoggerOptions>,
);
