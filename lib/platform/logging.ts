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
import { isObjectLiteral } from "../shared/fields";
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
 * The keys every line carries (see {@link jsonFormatter}), `data` and `__proto__`: a logged field of one of these
 * names goes under `data` (an object without a prototype).
 */
const LINE_KEYS = new Set([
	"ts",
	"level",
	"msg",
	"request_id",
	"call_id",
	"parent_id",
	"nodeID",
	"ns",
	"mod",
	"svc",
	"data",
	"__proto__",
]);

/** An Error as a JSON field (JSON.stringify writes an Error as `{}`): its name, message, code and stack. */
function errorField(e: Error): Record<string, unknown> {
	return { name: e.name, message: e.message, code: (e as { code?: unknown }).code, stack: e.stack };
}

/**
 * Console logger formatter: one JSON object per line
 * `{ts, level, msg, request_id?, call_id?, parent_id?, nodeID, ns, mod, svc, …fields, data?}`
 * (`ts` epoch ms; the trace fields only inside a call; docs/decisions/0123-structured-log-fields.md).
 *
 * - The strings and numbers of a call are its `msg`, joined by spaces.
 * - The fields of an object literal passed to the logger (`logger.info("order created", { order_id })`) are fields of
 *   the line, after the keys above; a field named like one of them goes under `data` instead. An Error among those
 *   fields is written as `{name, message, code, stack}`.
 * - Any other object (an Error, an array, a class instance) is printed into `msg` by Moleculer's object printer
 *   (`util.inspect`, depth 2), as is every argument of a call whose fields JSON cannot write (a BigInt, a cycle).
 */
export function jsonFormatter(
	this: unknown,
	type: string,
	args: unknown[],
	bindings: Record<string, unknown>,
	{ printArgs }: { printArgs: (a: unknown[]) => unknown[] },
): string[] {
	const t = scope.getStore();
	/** The line's own keys, with `msg` */
	const head = (msg: string): Record<string, unknown> => ({
		ts: Date.now(),
		level: type,
		msg,
		request_id: t?.request_id,
		call_id: t?.call_id,
		parent_id: t?.parent_id,
		...bindings,
	});
	const words: unknown[] = [];
	const objects: Record<string, unknown>[] = [];
	for (const a of args) {
		if (isObjectLiteral(a)) objects.push(a);
		else words.push(a);
	}
	const line = head(
		words.length === 1 && typeof words[0] === "string" ? words[0] : printArgs(words).join(" "),
	);
	if (objects.length === 0) return [JSON.stringify(line)];
	let data: Record<string, unknown> | undefined;
	for (const o of objects) {
		for (const k of Object.keys(o)) {
			const v = o[k] instanceof Error ? errorField(o[k]) : o[k];
			if (!LINE_KEYS.has(k)) line[k] = v;
			else {
				data ??= Object.create(null) as Record<string, unknown>;
				data[k] = v;
			}
		}
	}
	if (data) line.data = data;
	try {
		return [JSON.stringify(line)];
	} catch {
		// a field JSON cannot write (a BigInt, a cycle): the whole call printed into msg, as Moleculer prints it
		return [JSON.stringify(head(printArgs(args).join(" ")))];
	}
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
			const parts = formatter(type, args);
			// the JSON formatter answers one string: written as it is (util.format would only copy it)
			const line = `${parts.length === 1 && typeof parts[0] === "string" ? parts[0] : format(...parts)}\n`;
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
