/**
 * Durable channels between services and to internal systems (issue 8; spec §6;
 * docs/decisions/0033-shipment-events.md), on `@moleculer/channels` (the
 * Moleculer project's reliable-messaging middleware; 0.1.8 is the release on
 * the npm registry, run on Moleculer 0.15 with an npm `overrides` entry: the
 * middleware hooks it uses — `created`, `serviceCreated`, `serviceStopping`,
 * `started`, `stopped` — are unchanged in 0.15).
 *
 * The adapter follows the process's configuration ({@link channelsKindOf}):
 * NATS JetStream when `TRANSPORTER` is set (the cluster's NATS), else Redis
 * Streams when `REDIS_URL` is set (one process with Redis), else the
 * in-process adapter (the zero-setup start: one process, nothing to connect
 * to). Channel names carry a prefix ({@link channelsPrefixOf}) so test runs
 * and clusters sharing a server never see each other's messages.
 *
 * Channel names and payloads are declared once, in lib/contracts/channels.ts
 * (`ChannelPayloads`); publishing and subscribing are typed by it.
 *
 * Publishing goes through {@link publishToChannel} only: it refuses (throws)
 * when the adapter is not connected or is stopping — the library itself
 * silently drops a message published while stopping — so the caller (booking's
 * outbox relay) keeps the row and retries. Delivery to subscribers is
 * at-least-once per consumer group: a handler that throws gets the message
 * again (up to {@link CHANNEL_MAX_RETRIES} redeliveries).
 */
import { Adapters, Middleware as ChannelsMiddleware } from "@moleculer/channels";
import type { Middleware, ServiceBroker } from "moleculer";
import type { ChannelName, ChannelPayloads, ChannelSubscriptions } from "../contracts";
import { type RuntimeConfig, setting } from "./config";

/** How long a JetStream channel keeps a message (subscribers down longer miss it): 7 days. */
export const CHANNEL_MAX_AGE_MS = 7 * 24 * 3600 * 1000;

/** Redis Streams: approximate cap of a channel's stream length (oldest entries trimmed). */
export const CHANNEL_REDIS_MAXLEN = 1_000_000;

/** Redeliveries of a message whose handler failed before it is dropped (logged by the library). */
export const CHANNEL_MAX_RETRIES = 10;

/** Which adapter a process uses. */
export type ChannelsKind = "NATS" | "Redis" | "Fake";

/** NATS JetStream with `TRANSPORTER`, Redis Streams with only `REDIS_URL`, else in-process. */
export function channelsKindOf(cfg: Pick<RuntimeConfig, "transporter" | "redisUrl">): ChannelsKind {
	if (cfg.transporter) return "NATS";
	if (cfg.redisUrl) return "Redis";
	return "Fake";
}

/**
 * The prefix of channel names: the Moleculer namespace on NATS (so
 * `<namespace>.shipment.status_changed`; none when the namespace is empty),
 * `<QUEUE_PREFIX>:channels` on Redis (next to the BullMQ keys, removed with
 * them by a test run's teardown), none in process.
 */
export function channelsPrefixOf(
	cfg: Pick<RuntimeConfig, "transporter" | "redisUrl" | "namespace" | "queuePrefix">,
): string {
	const kind = channelsKindOf(cfg);
	if (kind === "NATS") return cfg.namespace;
	if (kind === "Redis") return `${cfg.queuePrefix}:channels`;
	return "";
}

/** What this module needs of an adapter (all three have it). */
interface ChannelAdapter {
	connected: boolean;
	stopping?: boolean;
	addPrefixTopic(topic: string): string;
	publish(channelName: string, payload: unknown, opts?: Record<string, unknown> | null): Promise<void>;
}

/** A JetStream adapter: its stream manager (connected with the adapter). */
interface JetStreamAdapter extends ChannelAdapter {
	manager: {
		streams: {
			add(cfg: Record<string, unknown>): Promise<unknown>;
			info(name: string): Promise<unknown>;
		};
	} | null;
}

/** Per broker: its adapter, its kind, and the JetStream streams known to exist. */
const adapters = new WeakMap<
	ServiceBroker,
	{ kind: ChannelsKind; adapter: ChannelAdapter | JetStreamAdapter; streams: Set<string> }
>();

/**
 * Replicas of each channel's JetStream stream: `CHANNELS_REPLICAS` (1–5,
 * default 1; 3 on the clustered NATS of k8s/base/nats.yaml so losing one NATS
 * node loses no channel).
 */
function streamReplicas(): number {
	return setting("CHANNELS_REPLICAS");
}

/** JetStream stream settings of a channel: its subject, kept {@link CHANNEL_MAX_AGE_MS} (nanoseconds), {@link streamReplicas}. */
function streamConfig(name: string, subject: string): Record<string, unknown> {
	return {
		name,
		subjects: [subject],
		max_age: CHANNEL_MAX_AGE_MS * 1_000_000,
		num_replicas: streamReplicas(),
	};
}

/**
 * Creates the JetStream stream of `subject` unless it exists (the library
 * creates it only when a consumer subscribes; the publisher owns it, so
 * messages published before any subscriber are kept).
 */
async function ensureStream(a: JetStreamAdapter, stream: string, subject: string): Promise<void> {
	if (!a.manager) throw new Error(`channel ${subject}: JetStream not connected`);
	const m = a.manager;
	try {
		await m.streams.add(streamConfig(stream, subject));
	} catch (err) {
		// exists already (maybe with other settings an operator chose): use it
		await m.streams.info(stream).catch(() => {
			throw err;
		});
	}
}

/** Builds the adapter of `kind` (options: prefix, retries, JetStream retention, one in flight per consumer). */
function makeAdapter(
	kind: ChannelsKind,
	cfg: Pick<RuntimeConfig, "transporter" | "redisUrl" | "namespace" | "queuePrefix">,
): ChannelAdapter | JetStreamAdapter {
	const base = { prefix: channelsPrefixOf(cfg), maxRetries: CHANNEL_MAX_RETRIES, maxInFlight: 10 };
	if (kind === "NATS") {
		return new Adapters.NATS({
			...base,
			nats: {
				url: cfg.transporter,
				// noAsyncTraces: no `new Error()` per JetStream publish (its acknowledgement is a NATS
				// request): the bulk import's 85,000 order.created events spent ~4 s of CPU on stacks
				connectionOptions: { maxReconnectAttempts: -1, noAsyncTraces: true },
				// the streams a subscriber creates get the same retention as ensureStream's
				streamConfig: { max_age: CHANNEL_MAX_AGE_MS * 1_000_000, num_replicas: streamReplicas() },
			},
		});
	}
	if (kind === "Redis") return new Adapters.Redis({ ...base, redis: cfg.redisUrl });
	return new Adapters.Fake({ ...base, prefix: "" });
}

/**
 * The channels middleware of a broker (moleculer.config.ts registers it on
 * every broker): services subscribe with a `channels: { "<name>": {group?,
 * handler(payload, raw)} }` block in their schema (typed by `defineService`,
 * or by {@link channelSubscriptions} in a plain schema), each group getting
 * each message once (at least once). The adapter is kept per broker for
 * {@link publishToChannel}.
 */
export function channelsMiddleware(
	cfg: Pick<RuntimeConfig, "transporter" | "redisUrl" | "namespace" | "queuePrefix">,
): Middleware {
	const kind = channelsKindOf(cfg);
	const adapter = makeAdapter(kind, cfg);
	// the library takes an adapter instance (`Adapters.resolve`: `instanceof Adapters.Base`); its
	// generated typings (0.1.8) only admit a name or a config object
	// @ts-expect-error an adapter instance is a valid `adapter`
	const mw = ChannelsMiddleware({ adapter });
	return {
		...mw,
		created(broker: ServiceBroker) {
			adapters.set(broker, { kind, adapter, streams: new Set() });
			mw.created(broker);
		},
	};
}

/** The channel kind of a broker's middleware, or null when it has none. */
export function channelsOf(broker: ServiceBroker): ChannelsKind | null {
	return adapters.get(broker)?.kind ?? null;
}

/**
 * A `channels` block for a plain Moleculer schema (`broker.createService`),
 * checked against lib/contracts/channels.ts: known channel names only, each
 * handler receiving its channel's payload type. Returns `subs` unchanged.
 * (Services written with `defineService` get the same checking from their
 * `channels` field.)
 */
export function channelSubscriptions(subs: ChannelSubscriptions): ChannelSubscriptions {
	return subs;
}

/**
 * Publishes `payload` (channel `name`'s payload type, lib/contracts/channels.ts
 * `ChannelPayloads`) to channel `name` and resolves once the channel holds
 * it: JetStream's publish acknowledgement (the stream is created on first use,
 * so messages are kept before any subscriber exists; `msgId` makes JetStream
 * drop a re-publish of the same message within its duplicate window), Redis
 * XADD's answer; in process, the local emit. Throws when the broker has no
 * channels middleware, the adapter is not (yet) connected or is stopping, or
 * the server refuses: the caller keeps the message and retries.
 */
export async function publishToChannel<C extends ChannelName>(
	broker: ServiceBroker,
	name: C,
	payload: ChannelPayloads[C],
	opts: { msgId?: string } = {},
): Promise<void> {
	const entry = adapters.get(broker);
	if (!entry) throw new Error(`channel ${name}: this broker has no channels middleware`);
	const { kind, adapter, streams } = entry;
	if (!adapter.connected || adapter.stopping) throw new Error(`channel ${name}: adapter not connected`);
	const subject = adapter.addPrefixTopic(name);
	if (kind === "NATS") {
		// the stream name the library derives from the subject (dots are not allowed in stream names)
		const stream = subject.split(".").join("_");
		if (!streams.has(stream) && "manager" in adapter) {
			await ensureStream(adapter, stream, subject);
			streams.add(stream);
		}
		await adapter.publish(subject, payload, opts.msgId ? { msgID: opts.msgId } : {});
	} else if (kind === "Redis") {
		await adapter.publish(subject, payload, { xaddMaxLen: `~${CHANNEL_REDIS_MAXLEN}` });
	} else {
		await adapter.publish(subject, payload, {});
	}
}
