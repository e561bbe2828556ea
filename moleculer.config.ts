/**
 * Moleculer broker options (docs/ARCHITECTURE.md §2, STACK-NOTES "Moleculer
 * 0.15").
 *
 * - NATS transporter from `TRANSPORTER` (nats 2.x client); none means in-process. Its packets
 *   leave once per turn of the event loop (lib/platform/publish-per-turn.ts; docs/decisions/0122), and a
 *   response leaves the caller's `meta.user` out (lib/platform/response-meta.ts; docs/decisions/0143).
 * - Availability (issue 12, docs/decisions/0047-availability.md):
 *   with a transporter, `disableBalancer: true`: a request goes to the NATS
 *   queue group of its action (`MOL.REQB.<action>`), so NATS, which sees a
 *   killed process's connection close at once, stops delivering to it within
 *   milliseconds instead of the heartbeat timeout; {@link QueueGroupCalls}
 *   makes moleculer-web's calls (which name an endpoint) use the group too,
 *   pins streaming calls to one node, and answers ServiceNotAvailable at
 *   once while the NATS connection is down. `requestTimeout`
 *   {@link REQUEST_TIMEOUT_MS} bounds a call in flight on a node that died
 *   (actions that legitimately take longer declare their own `timeout`);
 *   heartbeats {@link HEARTBEAT_INTERVAL_S} / {@link HEARTBEAT_TIMEOUT_S} s
 *   drop a dead node's services from the registry, after which a caller
 *   answers 503 at once.
 * - No broker retries: calls with external side effects (courier bookings) must
 *   never be repeated by the broker; durable retries live in BullMQ jobs.
 * - Tracking on, so a stopping node finishes in-flight calls (graceful shutdown).
 * - Structured JSON logs; each line written inside an action or event handler
 *   carries the call's `request_id` (the trace id Moleculer propagates across
 *   NATS), `call_id` and `parent_id` (lib/platform/logging.ts).
 * - Metrics (issue 13, lib/platform/metrics.ts): Moleculer's Prometheus reporter plus
 *   our own metrics at `GET /metrics` on `METRICS_PORT` (default 9100; `0` /
 *   `off` disables metrics).
 * - Transport serializer: CBOR, with records for a packet whose payload repeats an object shape
 *   (lib/platform/transport-serializer.ts; docs/decisions/0042, 0120).
 * - Durable channels (`@moleculer/channels`, lib/platform/channels.ts): NATS JetStream
 *   with a transporter, else Redis Streams with `REDIS_URL`, else in process.
 */
import type { Readable } from "node:stream";
import { setFlagsFromString } from "node:v8";
import {
	type ActionEndpoint,
	type BrokerOptions,
	type CallingOptions,
	Errors,
	type Middleware,
	ServiceBroker,
} from "moleculer";
import { AnswerText } from "./lib/platform/answer-text";
import { PermissionsMiddleware } from "./lib/platform/auth";
import { callIdGenerator } from "./lib/platform/call-ids";
import { channelsMiddleware } from "./lib/platform/channels";
import { PendingCallsTable } from "./lib/platform/churn-map";
import { loadConfig, type RuntimeConfig, setting } from "./lib/platform/config";
import { DeadNodeRescue } from "./lib/platform/dead-node";
import { jsonFormatter, RequestContextMiddleware } from "./lib/platform/logging";
import { MetricsMiddleware, metricsOptions } from "./lib/platform/metrics";
import { pacedStream } from "./lib/platform/paced-stream";
import { PublishPerTurn } from "./lib/platform/publish-per-turn";
import { RemoteCallDeadline } from "./lib/platform/remote-deadline";
import { internalMiddlewares, RequestMetrics } from "./lib/platform/request-metrics";
import { ResponseMetaWithoutUser } from "./lib/platform/response-meta";
import { ShapeAwareCbor } from "./lib/platform/transport-serializer";

/**
 * Timeout (ms) of a call whose action declares none: below the 5 s no caller
 * may wait (issue 12), leaving the gateway ~1 s for its own work.
 */
export const REQUEST_TIMEOUT_MS = 4_000;
/** Seconds between heartbeats. */
export const HEARTBEAT_INTERVAL_S = 2;
/** Seconds without a heartbeat after which a node's services leave the registry. */
export const HEARTBEAT_TIMEOUT_S = 6;

/** The part of the nats 2.x client read here: its status events (`disconnect`, `reconnect`, …). */
interface NatsStatusSource {
	status(): AsyncIterable<{ type: string }>;
}

const links = new WeakMap<ServiceBroker, { up: boolean; subscribed: boolean }>();

/**
 * False while the NATS connection of `broker` is down (between the client's
 * `disconnect` and `reconnect` events) or before its local services'
 * queue-group subscriptions are in place; true without a transporter. Read by
 * the readiness probes (lib/platform/system.ts).
 */
export function transporterLinkUp(broker: ServiceBroker): boolean {
	const l = links.get(broker);
	return l === undefined || (l.up && l.subscribed);
}

/** The parts of Moleculer's NATS transporter that {@link gapless} uses. */
export interface BalancedTx {
	subscriptions: QueueSubscription[];
	client?: { flush(): Promise<void> };
	makeBalancedSubscriptions(): Promise<unknown>;
	subscribeBalancedRequest(action: string): unknown;
	subscribeBalancedEvent(event: string, group: string): unknown;
}

/**
 * Moleculer's `makeBalancedSubscriptions` (called on every change of the local
 * services) unsubscribes every queue group before subscribing again: a request
 * published in that gap reaches nobody and waits its whole timeout. This
 * version subscribes the new set first, then drops the old one. Installed on
 * the transporter instance by {@link QueueGroupCalls}; exported for its guard
 * test (test/unit/framework-patches.spec.ts;
 * docs/decisions/0087-framework-patches.md).
 */
export function gapless(b: ServiceBroker, tx: BalancedTx): () => Promise<unknown> {
	return async () => {
		const old = tx.subscriptions;
		tx.subscriptions = [];
		// framework boundary: Moleculer types `services` as a one-element tuple of untyped records
		const info = b.getLocalNodeInfo() as unknown as {
			services: {
				name: string;
				actions?: Record<string, unknown>;
				events?: Record<string, { group?: string }>;
			}[];
		};
		for (const svc of info.services) {
			for (const action of Object.keys(svc.actions ?? {})) tx.subscribeBalancedRequest(action);
			for (const [event, def] of Object.entries(svc.events ?? {}))
				tx.subscribeBalancedEvent(event, def.group || svc.name);
		}
		await tx.client?.flush();
		await releaseAll(old);
		await tx.client?.flush();
	};
}

/** A queue-group subscription as the nats 2.x client gives it (`drain` from nats 2.x; fakes in tests may lack it). */
export interface QueueSubscription {
	unsubscribe(): void;
	drain?(): Promise<void>;
}

/**
 * Leaves queue-group subscriptions without losing a message NATS already
 * routed to them: `drain()` sends UNSUB, then a flush round trip, and only
 * then closes the subscription, so a request the server delivered before it
 * processed the UNSUB still reaches its handler. `unsubscribe()` closes the
 * subscription at once in the client, and such a request is dropped: its
 * caller waits the whole request timeout. It happened ~1 s after a restart,
 * when Moleculer's debounced INFO re-made the subscriptions (issue 30). A
 * subscription that cannot drain (connection closed, a fake) is unsubscribed.
 */
export async function releaseAll(subs: QueueSubscription[]): Promise<void> {
	await Promise.all(
		subs.map(async (s) => {
			if (typeof s.drain !== "function") return s.unsubscribe();
			try {
				await s.drain();
			} catch {
				s.unsubscribe();
			}
		}),
	);
}

type CallFn = (action: string | ActionEndpoint, params?: unknown, opts?: CallingOptions) => Promise<unknown>;

function isEndpoint(x: unknown): x is ActionEndpoint {
	return typeof x === "object" && x !== null && "action" in x && "id" in x;
}

/** An available endpoint of `action` on this very node, or null. */
function localEndpoint(b: ServiceBroker, action: string): ActionEndpoint | null {
	// typed as always a list; Moleculer answers undefined for an action no node has
	const list = b.registry.getActionEndpoints(action);
	if (!list?.hasLocal()) return null;
	return list.nextLocal();
}

/** A call's promise as Moleculer returns it: `ctx` is the call's context, whose `meta` flows back to the caller. */
export type CallPromise = Promise<unknown> & { ctx?: unknown };

/**
 * Moleculer's balanced `call` (the one `disableBalancer` replaces): given a
 * local endpoint it runs the local handler in this process, without
 * serializing the request or a round trip through NATS.
 */
// framework boundary: Moleculer types `call` with an action name; its balanced call also takes an endpoint
const balancedCall = ServiceBroker.prototype.call as unknown as (
	this: ServiceBroker,
	action: ActionEndpoint,
	params: unknown,
	opts: CallingOptions,
) => CallPromise;

/** Field of a sealed call promise holding its context (see {@link sealCtx}). */
const SEALED_CTX = Symbol("sealedCtx");

/** The one accessor pair of every sealed promise's `ctx`: reads {@link SEALED_CTX}, ignores writes. */
const SEALED_CTX_ACCESSOR: PropertyDescriptor = {
	get(this: { [SEALED_CTX]?: unknown }) {
		return this[SEALED_CTX];
	},
	set() {},
	enumerable: true,
};

/**
 * Marks `p` with the context `ctx` (none: `undefined`) for good. Moleculer
 * 0.15 wraps every `call` middleware (`interceptCallMiddleware`) so that the
 * promise it answers gets `ctx` from the *last* promise the middleware's
 * `next` returned, kept in a closure shared by all calls: a middleware that
 * answers without calling `next` (a local call, a refusal) would otherwise
 * carry another call's context, and `ctx.call` would merge that call's `meta`
 * (`$statusCode`, `job`, …) into its caller's. Later writes are ignored.
 *
 * The context is kept in a symbol-keyed field and `ctx` is ONE accessor pair
 * shared by every sealed promise. An accessor made of fresh closures per call
 * gave each promise a hidden class of its own, hung (weakly) off the
 * Promise map's transition tree in the old generation. A scavenge treats
 * such an old-to-young reference as live, so every call's context, with the
 * HTTP request and answer behind it, was promoted: ~8 KB per gateway
 * request, scavenges of 4-6 ms instead of 0.5 ms and more mark-compacts
 * (docs/decisions/0057-local-calls-sealed-context.md). Exported for its guard
 * test (test/unit/framework-patches.spec.ts).
 */
export function sealCtx(p: CallPromise, ctx: unknown): CallPromise {
	(p as CallPromise & { [SEALED_CTX]?: unknown })[SEALED_CTX] = ctx;
	Object.defineProperty(p, "ctx", SEALED_CTX_ACCESSOR);
	return p;
}

/**
 * `call` middleware for brokers running with `disableBalancer` (NATS queue
 * groups):
 * - a call that names an endpoint object (moleculer-web resolves one per
 *   request and calls it, which would pin the request to that node, dead or
 *   not) is sent by action name, so the NATS queue group picks a live node;
 * - a streaming call (`opts.stream`: bulk uploads) is pinned to one node
 *   chosen by Moleculer's balancer, since each chunk is its own message and
 *   a queue group would scatter them over nodes; its chunks are sent one per
 *   turn of the event loop (lib/platform/paced-stream.ts), so the node's other
 *   requests are not held behind a 25 MB burst;
 * - a call with `opts.nodeID` naming another node is left alone;
 * - a call to an action that this node hosts (pinned to this node or not:
 *   the BullMQ workers pin a job's action to their own node) runs here, not through
 *   NATS (several services in one process: the one-process mode with a
 *   transporter, a pod with a `SERVICES` list): the same answer without a
 *   serialization and a NATS round trip per call.
 */
export function QueueGroupCalls(): Middleware {
	let broker: ServiceBroker | undefined;
	const link = { up: true, subscribed: false };
	const mw = {
		name: "QueueGroupCalls",
		created(b: ServiceBroker) {
			broker = b;
			links.set(b, link);
			// framework boundary: Moleculer's BaseTransporter typing has no `subscriptions` / `client` (NATS internals)
			const tx = (b.transit as unknown as { tx?: BalancedTx } | undefined)?.tx;
			if (tx && typeof tx.makeBalancedSubscriptions === "function")
				tx.makeBalancedSubscriptions = gapless(b, tx);
		},
		/** Follows the NATS client's connection (the transporter does not: it reconnects silently). */
		async started(b: ServiceBroker) {
			// Moleculer subscribes to the queue groups of local services only in a change handler
			// debounced by 1 s after the last service registered: do it now, before `/ready` says so
			const discoverer = b.registry.discoverer;
			if (b.transit && discoverer?.sendLocalNodeInfo) await discoverer.sendLocalNodeInfo();
			link.subscribed = true;
			// framework boundary: the NATS client is not on Moleculer's BaseTransporter typing
			const client = (b.transit as unknown as { tx?: { client?: NatsStatusSource } } | undefined)?.tx?.client;
			if (typeof client?.status !== "function") return;
			void (async () => {
				for await (const s of client.status()) {
					if (s.type === "disconnect") link.up = false;
					else if (s.type === "reconnect") link.up = true;
				}
			})().catch(() => undefined);
		},
		/**
		 * Leaves the queue groups (drained: {@link releaseAll}) as the graceful stop begins (after the empty INFO and
		 * `registry.stopDelay`): NATS stops handing this node new requests, so the
		 * in-flight ones can drain (tracking) instead of a steady load keeping it busy
		 * until `tracking.shutdownTimeout`. Answers to its own calls still arrive.
		 */
		async stopping(b: ServiceBroker) {
			// framework boundary: BaseTransporter's typing has no `subscriptions` (NATS internals)
			const tx = b.transit?.tx as unknown as Partial<BalancedTx> | undefined;
			if (!tx?.subscriptions) {
				await b.transit?.tx?.unsubscribeFromBalancedCommands?.().catch(() => undefined);
				return;
			}
			// drained, not dropped: a request NATS routed here before the UNSUB is still served (releaseAll)
			const subs = tx.subscriptions;
			tx.subscriptions = [];
			await releaseAll(subs);
		},
		call(next: CallFn): CallFn {
			return function queueGroupCall(action, params, opts = {}) {
				// NATS is unreachable: nothing can answer, say so now rather than after the timeout
				if (!link.up)
					return sealCtx(
						Promise.reject(
							new Errors.ServiceNotAvailableError({
								action: isEndpoint(action) ? String(action.action.name) : action,
							}),
						),
						undefined,
					);
				if (opts.nodeID && opts.nodeID !== broker?.nodeID) return next(action, params, opts);
				const name = isEndpoint(action) ? action.action.name : action;
				const here = broker && name ? localEndpoint(broker, name) : null;
				if (!here && opts.nodeID) return next(action, params, opts);
				if (here && broker) {
					// a promise of its own: a handler could hand one promise to several callers
					const p = balancedCall.call(broker, here, params ?? {}, opts);
					return sealCtx(
						p.then((v) => v),
						p.ctx,
					);
				}
				if (opts.stream) {
					const paced = { ...opts, stream: pacedStream(opts.stream as Readable) };
					if (isEndpoint(action) || !broker) return next(action, params, paced);
					const ep = broker.findNextActionEndpoint(action, paced);
					return next(ep instanceof Error ? action : ep, params, paced);
				}
				return next(isEndpoint(action) ? (action.action.name ?? action) : action, params, opts);
			};
		},
	};
	// Moleculer's typing of the `call` hook returns a call's result, not a handler.
	return mw as unknown as Middleware;
}

/**
 * Turns off V8's allocation-site pretenuring for this process (idempotent; every
 * process that builds a broker: `npm start`, the pods, the tests and benches).
 * V8 counts, per object-literal site, how many of its objects survive a
 * scavenge; a site whose objects survive ≥ 85 % of the time is "tenured":
 * from then on its objects are allocated in the old generation. A burst of
 * concurrent calls (thousands in flight at once: a merchant's script, an
 * import, a reconnect flush) makes the literals of the call path (Moleculer's
 * and ours) survive, so they get tenured, and V8 reverts that only at a
 * mark-compact that finds under 10 % of the old generation alive, which a
 * long-running server may never do. After that every call allocates its
 * literals in the old generation, each young object they point to (params,
 * meta, answer, the HTTP request behind a gateway call) is live to every
 * scavenge and promoted: ~4.5 MB per scavenge in test/integration/colocated.spec.ts
 * after 5 × 5,000 concurrent calls, longer scavenges and more mark-compacts
 * (docs/decisions/0068-pretenuring-off.md). A request server's objects
 * die young; nothing here gains from the guess. `MSA_V8_PRETENURING=on` keeps
 * V8's default (benchmark comparison).
 */
export function disablePretenuring(): void {
	if (setting("MSA_V8_PRETENURING") !== "on") setFlagsFromString("--no-allocation-site-pretenuring");
}

/** Builds broker options for this process. `nodeID` defaults to hostname-pid. */
export default function brokerOptions(
	cfg: RuntimeConfig = loadConfig(),
	overrides: Partial<BrokerOptions> = {},
): BrokerOptions {
	disablePretenuring();
	return withRequestMetrics({
		namespace: cfg.namespace,
		nodeID: setting("NODEID"),
		transporter: cfg.transporter
			? { type: "NATS", options: { url: cfg.transporter, maxReconnectAttempts: -1, noAsyncTraces: true } }
			: undefined,
		serializer: new ShapeAwareCbor(),
		// NATS queue groups (only with a transporter: without one the broker would skip local event handlers)
		disableBalancer: Boolean(cfg.transporter),
		// a context's id: a random prefix per broker and a counter (docs/decisions/0152), not a UUID per call
		uidGenerator: callIdGenerator(),
		requestTimeout: REQUEST_TIMEOUT_MS,
		retryPolicy: { enabled: false },
		circuitBreaker: { enabled: false },
		tracking: { enabled: true, shutdownTimeout: 15_000 },
		registry: { strategy: "RoundRobin", preferLocal: true, stopDelay: 100 },
		heartbeatInterval: HEARTBEAT_INTERVAL_S,
		heartbeatTimeout: HEARTBEAT_TIMEOUT_S,
		logger: {
			type: "StdoutSink",
			options: { level: cfg.logLevel, formatter: jsonFormatter, colors: false, moduleColors: false },
		},
		metrics: metricsOptions(),
		middlewares: [
			// first: the innermost wrapper of a remote call, inside Moleculer's ContextTracker
			RemoteCallDeadline,
			// second: resends a retry-safe call whose node died, each send still bounded by the deadline above
			...(cfg.transporter ? [DeadNodeRescue()] : []),
			// the transit's pending remote calls in a table that leaves no chain for the garbage collector (docs/decisions/0148)
			...(cfg.transporter ? [PendingCallsTable] : []),
			RequestContextMiddleware,
			MetricsMiddleware,
			PermissionsMiddleware,
			channelsMiddleware(cfg),
			...(cfg.transporter ? [QueueGroupCalls()] : []),
			// a turn's NATS packets in one socket write (docs/decisions/0122)
			...(cfg.transporter ? [PublishPerTurn()] : []),
			// a gateway's call from another node is answered with the answer's JSON text (docs/decisions/0124)
			...(cfg.transporter ? [AnswerText()] : []),
			// a response does not carry the caller's own `meta.user` back (docs/decisions/0143)
			...(cfg.transporter ? [ResponseMetaWithoutUser()] : []),
		],
		...overrides,
	});
}

/**
 * `opts` with Moleculer's internal middlewares listed at the end of `middlewares`, its `Metrics` replaced by
 * {@link RequestMetrics} (issue 32, docs/decisions/0114-request-metrics.md), and `internalMiddlewares: false`.
 * A list that already holds them (options built from these options) is kept as it is; options whose caller set
 * `internalMiddlewares` itself are answered unchanged.
 */
export function withRequestMetrics(opts: BrokerOptions): BrokerOptions {
	if (opts.internalMiddlewares !== undefined) return opts;
	const list = opts.middlewares ?? [];
	if (list.includes(RequestMetrics as never)) return { ...opts, internalMiddlewares: false };
	return {
		...opts,
		internalMiddlewares: false,
		middlewares: [...list, ...(internalMiddlewares() as NonNullable<BrokerOptions["middlewares"]>)],
	};
}
