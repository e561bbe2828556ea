/**
 * The durable channels between services (issue 8 "Shipment events", issue 11
 * "Merchant webhooks"; spec §6): every channel's name and the payload of its
 * messages, beside the action and event maps of ./index.ts. This is the only
 * module that names a channel.
 *
 * Publishing (lib/platform/channels.ts `publishToChannel`) and subscribing (a service's
 * `channels` block, lib/platform/service.ts `defineService`, or
 * lib/platform/channels.ts `channelSubscriptions` for a plain Moleculer schema) are
 * typed by {@link ChannelPayloads}: an unknown channel name, a payload of
 * another shape, or a handler declaring another payload type fails the type
 * check. Delivery is at-least-once per consumer group: handlers dedupe on the
 * payload's `event_id`.
 */
import type { ShipmentStatusChanged } from "./booking";
import type { MerchantEvent, MerchantEventBatch } from "./webhooks";

/**
 * Channel of booking's shipment status changes (§6; published by booking's
 * outbox relay, lib/booking/relay.ts; consumed by ndr and webhooks).
 */
export const SHIPMENT_STATUS_CHANNEL = "shipment.status_changed";

/**
 * Channel the publishers' event outboxes (intake, booking, ndr; lib/platform/merchant-events-outbox.ts)
 * relay {@link MerchantEvent}s to, one batch per relay round; consumed by webhooks.
 */
export const MERCHANT_EVENTS_CHANNEL = "merchant.events";

/** Every durable channel: name → the payload of one of its messages. */
export interface ChannelPayloads {
	[SHIPMENT_STATUS_CHANNEL]: ShipmentStatusChanged;
	/**
	 * A relay round's batch; a lone event is what publishers sent before they
	 * batched (a rolling deploy may leave some in the stream), so a message may
	 * be either.
	 */
	[MERCHANT_EVENTS_CHANNEL]: MerchantEventBatch | MerchantEvent;
}

/** A durable channel's name. */
export type ChannelName = keyof ChannelPayloads;

/** The payload of one message of channel `C`. */
export type ChannelPayloadOf<C extends ChannelName> = ChannelPayloads[C];

/**
 * A subscription to channel `C` (`@moleculer/channels`): each consumer
 * `group` (default: the service name) gets each message at least once; a
 * handler that throws gets it again (lib/platform/channels.ts `CHANNEL_MAX_RETRIES`).
 * `maxInFlight`: messages handled at once by this subscriber.
 */
export interface ChannelSubscription<C extends ChannelName> {
	group?: string;
	maxInFlight?: number;
	/** One message's payload (`raw`: the adapter's message object). */
	handler: (payload: ChannelPayloads[C], raw?: unknown) => void | Promise<void>;
}

/** A schema's `channels` block: channel name → its {@link ChannelSubscription}. */
export type ChannelSubscriptions = { [C in ChannelName]?: ChannelSubscription<C> };
