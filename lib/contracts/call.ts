/**
 * The one way to reach another service (docs/ARCHITECTURE.md §5, §6): typed by
 * the contract (./index.ts), with a timeout on every call and one mapping of
 * "could not be asked" to a 503.
 */
import type { CallingOptions, Context, Logger, ServiceBroker } from "moleculer";
import { errorBodyOf, type UnreachableCode, unreachable } from "../platform/errors";
import type { CallMeta } from "./common";
import type { ActionName, EventName, ParamsOf, PayloadOf, ResultOf } from "./index";

/** Timeout of a call when the caller names none (ms). */
export const DEFAULT_CALL_TIMEOUT_MS = 5_000;

/**
 * Who calls: the handler's Context (carries the request id, the caller's
 * `meta.user` and tracing; use it inside handlers) or the broker (background
 * work: relays, sweepers, workers).
 */
export type Caller = Context<unknown, CallMeta> | ServiceBroker;

export interface CallOptions {
	/** ms; default {@link DEFAULT_CALL_TIMEOUT_MS} */
	timeout?: number;
	/**
	 * What a failure without a contract body (service not found or not
	 * available, timeout, NATS down, a crash in the callee) becomes: 503 with
	 * this `error` code (default `service_unavailable`), or `false` to rethrow
	 * it as it came (the caller handles it: relays, workers).
	 */
	unavailable?: UnreachableCode | false;
	/** meta for the call (merged over the Context's meta by Moleculer) */
	meta?: CallMeta;
	/** pin the call to one node (e.g. readiness of this node) */
	nodeID?: string;
}

function isContext(via: Caller): via is Context<unknown, CallMeta> {
	return "broker" in via && "params" in via;
}

function loggerOf(via: Caller): Logger {
	return isContext(via) ? (via.service?.logger ?? via.broker.logger) : via.logger;
}

/**
 * Calls action `name` with `params` (both checked against the contract) and
 * answers its typed result.
 *
 * Errors: a contract error of the callee (an ApiError, also across NATS)
 * passes through unchanged; anything else is logged (warn, with the action)
 * and becomes 503 `{error: opts.unavailable ?? "service_unavailable",
 * message:"<service> is unavailable; retry"}`, or is rethrown unchanged with
 * `unavailable: false`.
 */
export async function call<N extends ActionName>(
	via: Caller,
	name: N,
	params: ParamsOf<N>,
	opts: CallOptions = {},
): Promise<ResultOf<N>> {
	const options: CallingOptions = { timeout: opts.timeout ?? DEFAULT_CALL_TIMEOUT_MS };
	if (opts.meta) options.meta = opts.meta as Record<string, unknown>;
	if (opts.nodeID) options.nodeID = opts.nodeID;
	try {
		return await via.call<ResultOf<N>, ParamsOf<N>>(name, params, options);
	} catch (err) {
		if (opts.unavailable === false || errorBodyOf(err)) throw err;
		const service = name.slice(0, name.indexOf("."));
		loggerOf(via).warn(`call ${name} failed: ${(err as Error)?.message ?? String(err)}`);
		throw unreachable(opts.unavailable ?? "service_unavailable", service);
	}
}

/** Sends event `name` to one instance of each subscribed service (balanced). */
export async function emit<E extends EventName>(via: Caller, name: E, payload: PayloadOf<E>): Promise<void> {
	if (isContext(via)) await via.emit(name, payload);
	else await via.emit(name, payload);
}

/** Sends event `name` to every instance of every subscribed service, on every node. */
export async function broadcast<E extends EventName>(
	via: Caller,
	name: E,
	payload: PayloadOf<E>,
): Promise<void> {
	if (isContext(via)) await via.broadcast(name, payload);
	else await via.broadcast(name, payload);
}

/** Sends event `name` to the subscribers on this node only. */
export async function broadcastLocal<E extends EventName>(
	broker: ServiceBroker,
	name: E,
	payload: PayloadOf<E>,
): Promise<void> {
	await broker.broadcastLocal(name, payload);
}
