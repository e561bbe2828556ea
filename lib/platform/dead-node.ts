/**
 * A dead node costs no call when a replica remains (issue 30;
 * docs/decisions/0113-dead-node-rescue.md).
 *
 * With NATS queue groups (moleculer.config.ts `QueueGroupCalls`) a request
 * goes to whichever member of its action's group NATS picks; when that
 * process dies (`kill -9`, an OOM kill) with the request in hand, nothing
 * answers and the caller used to wait its whole timeout (4 s), then answer
 * 503. Here:
 *
 * - **Liveness in one round trip.** Every node with a transporter answers
 *   NATS requests on `<prefix>.ALIVE.<nodeID>` (a core NATS subscription,
 *   answered in the client's callback). NATS drops a dead process's
 *   subscriptions as soon as its connection closes, so a request there is
 *   answered "no responders" (503) at once: {@link probeNode} tells a dead
 *   node from a live one in about a millisecond, and a live but busy one
 *   (no answer within {@link PROBE_TIMEOUT_MS}) counts as alive. Probes are
 *   shared: one in flight per node, its answer reused for
 *   {@link PROBE_REUSE_MS}.
 * - **Only slow calls ask.** {@link DeadNodeRescue} looks at the transit's
 *   pending remote calls every {@link SWEEP_MS} (one interval per broker; a
 *   call costs nothing as it is made or answered: record 0145). A call still
 *   pending {@link RESCUE_AFTER_MS} after its send (its own start, as the
 *   call's timeout counts it) has its action's hosts probed, then again every
 *   {@link RESCUE_EVERY_MS} until the call settles. A node found dead is
 *   taken out of the registry at once (Moleculer's own heartbeat timeout,
 *   6 s, would do it later) and remembered with the actions it hosted.
 * - **Resent on a live node when safe.** A call to an action listed in
 *   {@link RETRY_SAFE_ACTIONS}, sent before a node hosting it was found dead,
 *   is published again through the transit under the same context id and
 *   with the same settlers (the queue group now holds live members only): the
 *   call's own promise and its deadlines are unchanged, and the first answer
 *   to that id settles it, whichever node sends it. At most {@link MAX_RESENDS} times, and only while the
 *   call's own deadline leaves time. A call to any other action keeps
 *   waiting, as before: it may be running on a live node.
 *
 * A retry-safe action is one whose second run, under the same context id,
 * has the effect of one run and answers the caller correctly: every read;
 * `intake.createOrder` (the same reference answers the same order, 200
 * `deduped`); `booking.book` and `booking.bookSync` (the attempt records the
 * context id as its `call_key`, and a conflict with an attempt of the same
 * key answers that attempt, lib/booking/request.ts).
 */
import type { Context, Middleware, ServiceBroker } from "moleculer";
import type { ActionName } from "../contracts";
import { ChurnMap } from "./churn-map";

/** How long a remote call runs before the nodes hosting its action are probed (ms). */
export const RESCUE_AFTER_MS = 250;
/** Between two probes of a call still unanswered (ms). */
export const RESCUE_EVERY_MS = 200;
/** A probe with no answer within this time (ms) counts the node as alive (busy, not gone). */
export const PROBE_TIMEOUT_MS = 500;
/** A probe's answer serves every call asking about the same node within this time (ms). */
export const PROBE_REUSE_MS = 100;
/** Times one call is sent again. */
export const MAX_RESENDS = 2;
/** A resend needs at least this much of the call's deadline left (ms). */
const MIN_LEFT_MS = 300;
/** How long a dead node is remembered for calls still pending (ms). */
const REMEMBER_MS = 30_000;
/** A followed call is forgotten this long (ms) after its deadline even if the transit still lists it. */
const REMEMBER_GRACE_MS = 1_000;
/** Two findings of one node's death within this time (ms) are the same death (concurrent checks). */
const SAME_DEATH_MS = 1_000;

/**
 * Actions a caller may send again under the same context id (see the module
 * comment for the rule). Reads of the HTTP API (its GET routes) and the
 * internal reads of the order and booking paths, plus the writes made safe.
 */
export const RETRY_SAFE_ACTIONS: ReadonlySet<string> = new Set<ActionName>([
	// writes whose second run is the first one's answer
	"intake.createOrder",
	"booking.book",
	"booking.bookSync",
	// outbox deliveries, idempotent by design (ordered by seq; once per attempt and kind; newest version kept)
	"intake.applyBookingUpdate",
	"intake.applyCodStatuses",
	"billing.recordEntries",
	// GET routes
	"billing.wallet",
	"billing.remittances",
	"billing.remittanceSummary",
	"billing.remittanceSettings",
	"billing.remittance",
	"billing.remittanceCsv",
	"billing.discrepancies",
	"billing.discrepancy",
	"booking.tracking",
	"booking.couriers",
	"documents.label",
	"documents.manifestCopy",
	"documents.labelLink",
	"intake.bulkJobs",
	"intake.bulkJob",
	"intake.bulkRowsCsv",
	"intake.status",
	"intake.listOrders",
	"intake.listUnshipped",
	"intake.unshippedErrorTypes",
	"intake.unshippedCounts",
	"intake.orderDetail",
	"ndr.list",
	"ndr.counts",
	"notifications.preferences",
	"notifications.orderMessages",
	"warehouses.pickups",
	"warehouses.pickup",
	"warehouses.list",
	"pincode.lookup",
	"rates.serviceable",
	"rates.edd",
	"webhooks.list",
	"webhooks.get",
	"webhooks.deliveries",
	// internal reads on the order and booking paths (getOrder's `for_booking` mark is set once: idempotent)
	"intake.getOrder",
	"pincode.info",
	"pincode.lookupMany",
	"rates.quote",
	"rates.getCourier",
	"rates.listCouriers",
	"warehouses.get",
	"warehouses.resolve",
]);

/** What a probe found: `dead` (NATS: no responders), `alive` (answered, or busy past the probe's timeout). */
export type Liveness = "dead" | "alive";

/** The parts of the nats 2.x client used here. */
interface NatsClient {
	subscribe(
		subject: string,
		opts: { callback: (err: unknown, msg: { respond(): boolean }) => void },
	): {
		unsubscribe(): void;
	};
	request(subject: string, data?: Uint8Array, opts?: { timeout: number }): Promise<unknown>;
}

/** The transporter of a broker, as far as read here (Moleculer's NATS transporter). */
function natsOf(broker: ServiceBroker): { client: NatsClient; prefix: string } | undefined {
	// framework boundary: BaseTransporter's typing has neither `client` nor `prefix`
	const tx = (broker.transit as unknown as { tx?: { client?: NatsClient; prefix?: string } } | undefined)?.tx;
	if (!tx?.client || typeof tx.client.request !== "function" || !tx.prefix) return undefined;
	return { client: tx.client, prefix: tx.prefix };
}

/** `<prefix>.ALIVE.<nodeID>`: the subject a node answers liveness probes on. */
export function aliveSubject(prefix: string, nodeID: string): string {
	return `${prefix}.ALIVE.${nodeID}`;
}

/** Per broker: shared probes and the dead nodes seen. */
interface RescueState {
	probes: Map<string, { at: number; answer: Promise<Liveness> }>;
	/** node id → when it was found dead and the actions it hosted then */
	dead: Map<string, { at: number; actions: Set<string> }>;
}

const states = new WeakMap<ServiceBroker, RescueState>();

function stateOf(broker: ServiceBroker): RescueState {
	let s = states.get(broker);
	if (!s) {
		s = { probes: new Map(), dead: new Map() };
		states.set(broker, s);
	}
	return s;
}

/** True when `err` is the nats client's "no responders" (a 503 status on a request). */
function isNoResponders(err: unknown): boolean {
	return (err as { code?: unknown } | null)?.code === "503";
}

/**
 * Whether node `nodeID` is alive, asked over NATS (`<prefix>.ALIVE.<nodeID>`):
 * `dead` when NATS answers "no responders" (the node's connection is gone),
 * `alive` on an answer or after {@link PROBE_TIMEOUT_MS} without one. One
 * probe per node is shared by every caller for {@link PROBE_REUSE_MS}.
 * Without a NATS transporter: always `alive`.
 */
export function probeNode(broker: ServiceBroker, nodeID: string): Promise<Liveness> {
	const nats = natsOf(broker);
	if (!nats) return Promise.resolve("alive");
	const s = stateOf(broker);
	const now = Date.now();
	const cached = s.probes.get(nodeID);
	if (cached && now - cached.at < PROBE_REUSE_MS) return cached.answer;
	const answer = nats.client
		.request(aliveSubject(nats.prefix, nodeID), undefined, { timeout: PROBE_TIMEOUT_MS })
		.then(
			(): Liveness => "alive",
			(err: unknown): Liveness => (isNoResponders(err) ? "dead" : "alive"),
		);
	s.probes.set(nodeID, { at: now, answer });
	return answer;
}

/** The remote nodes that host `action` in the registry now. */
function remoteHosts(broker: ServiceBroker, action: string): string[] {
	// typed as always a list; Moleculer answers undefined for an action no node has
	const list = broker.registry.getActionEndpoints(action);
	if (!list) return [];
	const ids = new Set<string>();
	for (const ep of list.endpoints) if (!ep.local) ids.add(ep.node.id);
	return [...ids];
}

/** Every action node `nodeID` hosts in the registry now. */
function actionsOf(broker: ServiceBroker, nodeID: string): Set<string> {
	const out = new Set<string>();
	// framework boundary: the registry's action catalog lists endpoints per action name
	const list = broker.registry.getActionList({
		onlyAvailable: false,
		skipInternal: true,
		withEndpoints: true,
	}) as {
		name: string;
		endpoints?: { nodeID: string }[];
	}[];
	for (const a of list) if (a.endpoints?.some((e) => e.nodeID === nodeID)) out.add(a.name);
	return out;
}

/**
 * Records node `nodeID` as dead with the actions it hosted, and takes it out
 * of the registry (as Moleculer's heartbeat timeout would, `$node.disconnected`
 * with `unexpected: true`). A node that was only cut from NATS and comes back
 * is found again by its next heartbeat (Moleculer asks it for its INFO).
 */
function markDead(broker: ServiceBroker, nodeID: string): void {
	const s = stateOf(broker);
	const now = Date.now();
	for (const [id, d] of s.dead) if (now - d.at > REMEMBER_MS) s.dead.delete(id);
	// a node found dead while in the registry died now, even if an earlier process under the same node id died
	// before (a restarted pod keeps its name): only the same death seen by two concurrent checks is skipped
	const seen = s.dead.get(nodeID);
	if (seen && now - seen.at < SAME_DEATH_MS) return;
	s.dead.set(nodeID, { at: now, actions: actionsOf(broker, nodeID) });
	broker.logger.warn(`node ${nodeID} is gone (NATS: no responders): taken out of the registry`);
	// framework boundary: NodeCatalog.disconnected is not on Moleculer's Registry typing
	const nodes = (
		broker.registry as unknown as { nodes?: { disconnected?(id: string, unexpected: boolean): void } }
	).nodes;
	nodes?.disconnected?.(nodeID, true);
}

/**
 * Probes the remote hosts of `action` (marking the dead ones) and tells
 * whether a node hosting it was found dead at or after `sentAt` (epoch ms):
 * the call sent then may have been in its hands.
 */
async function lostWithDeadNode(
	broker: ServiceBroker,
	action: string,
	sentAt: number,
): Promise<string | undefined> {
	const hosts = remoteHosts(broker, action);
	const answers = await Promise.all(hosts.map((id) => probeNode(broker, id)));
	hosts.forEach((id, i) => {
		if (answers[i] === "dead") markDead(broker, id);
	});
	for (const [id, d] of stateOf(broker).dead) if (d.at >= sentAt && d.actions.has(action)) return id;
	return undefined;
}

/** Remembers node ids Moleculer itself dropped (heartbeat timeout) with the actions they hosted. */
function onNodeDisconnected(
	broker: ServiceBroker,
	payload: { node?: { id?: string }; unexpected?: boolean },
): void {
	const id = payload.node?.id;
	if (!id || !payload.unexpected) return;
	const s = stateOf(broker);
	const seen = s.dead.get(id);
	if (seen && Date.now() - seen.at < SAME_DEATH_MS) return;
	// its actions are already gone from the registry: remember it for every action
	s.dead.set(id, { at: Date.now(), actions: new Set(RETRY_SAFE_ACTIONS) });
}

/**
 * The middleware (registered by moleculer.config.ts on brokers with a NATS
 * transporter, right after `RemoteCallDeadline`, whose deadline still bounds
 * every send): answers liveness probes for its own node, and follows the
 * pending remote calls as the module comment says (no action hook: nothing
 * runs per call). `opts.retrySafe` replaces
 * {@link RETRY_SAFE_ACTIONS} (tests with actions of their own).
 */
export function DeadNodeRescue(
	opts: { retrySafe?: (action: string) => boolean } = {},
): Middleware & { followed(): number } {
	const retrySafe = opts.retrySafe ?? ((action: string) => RETRY_SAFE_ACTIONS.has(action));
	let responder: { unsubscribe(): void } | undefined;
	let watcher: Watcher | undefined;
	const mw = {
		name: "DeadNodeRescue",
		created(b: ServiceBroker) {
			b.localBus.on("$node.disconnected", (p: { node?: { id?: string }; unexpected?: boolean }) =>
				onNodeDisconnected(b, p),
			);
			// as soon as NATS is connected, before the services start and announce themselves: a node is
			// probe-able before anyone can call it (the nats client keeps the subscription over reconnects)
			b.localBus.on("$transporter.connected", () => {
				const nats = natsOf(b);
				if (!nats || responder) return;
				responder = nats.client.subscribe(aliveSubject(nats.prefix, b.nodeID), {
					callback: (_err, msg) => {
						msg.respond();
					},
				});
			});
		},
		/** How many remote calls this broker follows now: its pending calls not pinned to a node (tests). */
		followed(): number {
			return watcher?.size ?? 0;
		},
		started(b: ServiceBroker) {
			const transit = b.transit as unknown as PendingTransit | undefined;
			if (natsOf(b) && transit?.pendingRequests && typeof transit._sendRequest === "function")
				watcher = new Watcher(b, transit, retrySafe);
		},
		stopped() {
			watcher?.stop();
			watcher = undefined;
			try {
				responder?.unsubscribe();
			} catch {
				// the connection is already closed: nothing is subscribed
			}
		},
	};
	return mw as unknown as Middleware & { followed(): number };
}

/** A pending call as Moleculer's Transit records it (`_sendRequest`). */
interface PendingRequest {
	/** the node the call was sent to by id; unset for a call sent to the action's queue group */
	nodeID?: string | null;
	ctx: Context;
	resolve(v: unknown): void;
	reject(e: unknown): void;
}

/** The parts of Moleculer's Transit used to follow calls and send one again (framework boundary; guarded in test/unit/framework-patches.spec.ts). */
interface PendingTransit {
	/** calls awaiting their answer, by context id (removed when answered, or by the ErrorHandler on a timeout) */
	pendingRequests: Map<string, PendingRequest>;
	/** records the pending call under `ctx.id` with these settlers and publishes its request packet */
	_sendRequest(ctx: Context, resolve: (v: unknown) => void, reject: (e: unknown) => void): unknown;
}

/** A remote call being followed (no reference to its context: the transit's pending request holds it). */
interface Watched {
	action: string;
	safe: boolean;
	/** epoch ms: last send (the first: the call's own start), end of its deadline, next check */
	sentAt: number;
	deadline: number;
	nextCheck: number;
	resends: number;
	checking: boolean;
}

/** How often the pending calls are looked at (ms). */
export const SWEEP_MS = 50;

/**
 * When (epoch ms, as of `now`) the call of `ctx` was sent: its own start (`ctx.startHrTime`, which `CallTimeout`
 * sets on every call with a timeout as it begins), else one sweep before `now` (it was sent since the last sweep).
 */
function sentAtOf(ctx: Context, now: number): number {
	const started = ctx.startHrTime as [number, number] | null | undefined;
	if (!started) return now - SWEEP_MS;
	const [s, ns] = process.hrtime(started);
	return now - (s * 1e3 + ns / 1e6);
}

/** Whether a pending request is a call this module follows: an action call sent to its action's queue group. */
function followable(req: PendingRequest): boolean {
	return !req.nodeID && typeof req.ctx?.action?.name === "string";
}

/**
 * Follows the remote calls of one broker from the transit's own pending
 * requests, without any work as a call is made or answered: one unref'd
 * interval looks at them every {@link SWEEP_MS} while the broker runs. A call
 * first seen pending at a sweep is noted with its send time (its own start, or
 * the sweep before for a call without a timeout); one still pending
 * {@link RESCUE_AFTER_MS} after its send is checked (its action's hosts
 * probed), then every {@link RESCUE_EVERY_MS};
 * when a host was found dead after its last send and the action is
 * retry-safe, its request is published again under the same context id with
 * the same settlers, so the call's own promise (and every deadline on it) is
 * unchanged and the first answer to that id, from whichever node, settles it.
 * A noted call that left the pending requests (answered, or dropped at its
 * timeout) is forgotten at the next sweep.
 */
class Watcher {
	/** the calls noted, by context id: a {@link ChurnMap}, as their ids come and go with every sweep */
	private readonly calls = new ChurnMap<Watched>();
	private readonly timer: NodeJS.Timeout;

	constructor(
		private readonly b: ServiceBroker,
		private readonly transit: PendingTransit,
		private readonly retrySafe: (action: string) => boolean,
	) {
		this.timer = setInterval(() => this.sweep(), SWEEP_MS);
		this.timer.unref();
	}

	/** How many calls are followed now: the pending calls sent to a queue group. */
	get size(): number {
		let n = 0;
		for (const req of this.transit.pendingRequests.values()) if (followable(req)) n++;
		return n;
	}

	stop(): void {
		clearInterval(this.timer);
		this.calls.clear();
	}

	private sweep(): void {
		const pending = this.transit.pendingRequests;
		const now = Date.now();
		for (const [id, w] of this.calls) {
			// answered (or dropped at its timeout), or past its deadline
			if (!pending.has(id) || now > w.deadline + REMEMBER_GRACE_MS) this.calls.delete(id);
		}
		if (pending.size === 0) return;
		for (const [id, req] of pending) {
			let w = this.calls.get(id);
			if (!w) {
				if (!followable(req)) continue;
				const action = req.ctx.action?.name as string;
				const sentAt = sentAtOf(req.ctx, now);
				const timeout = Number(req.ctx.options.timeout) || 0;
				const deadline = timeout > 0 ? sentAt + timeout : Number.POSITIVE_INFINITY;
				// a call the transit still lists past its deadline is not followed again
				if (now > deadline + REMEMBER_GRACE_MS) continue;
				w = {
					action,
					safe: this.retrySafe(action),
					sentAt,
					deadline,
					nextCheck: sentAt + RESCUE_AFTER_MS,
					resends: 0,
					checking: false,
				};
				this.calls.set(id, w);
			}
			if (w.checking || now < w.nextCheck) continue;
			const watched = w;
			watched.checking = true;
			void this.check(id, watched).finally(() => {
				watched.checking = false;
				watched.nextCheck = Date.now() + RESCUE_EVERY_MS;
			});
		}
	}

	private async check(id: string, w: Watched): Promise<void> {
		const lostOn = await lostWithDeadNode(this.b, w.action, w.sentAt).catch(() => undefined);
		if (!lostOn || !w.safe || w.resends >= MAX_RESENDS || w.deadline - Date.now() <= MIN_LEFT_MS) return;
		const pending = this.transit.pendingRequests.get(id);
		if (!pending) return;
		w.resends++;
		w.sentAt = Date.now();
		this.b.logger.warn(
			`call ${w.action} (${id}) may have been lost with node ${lostOn}: sent again (${w.resends}/${MAX_RESENDS})`,
		);
		this.transit._sendRequest(pending.ctx, pending.resolve, pending.reject);
	}
}
