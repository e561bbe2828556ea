/**
 * The durable channels are typed by their registry (lib/contracts/channels.ts
 * `ChannelPayloads`): publishing (`publishToChannel`) and subscribing
 * (`channelSubscriptions`, and a `defineService` schema's `channels`, which
 * has the same type) accept only registered names, each with its own payload
 * type. Each `@ts-expect-error` line below must fail the type check
 * (`npm run typecheck` compiles this file): were the typing loosened, the
 * directive itself would be an error. The functions are never run.
 */
import assert from "node:assert/strict";
import type { ServiceBroker } from "moleculer";
import {
	type ChannelName,
	MERCHANT_EVENTS_CHANNEL,
	type MerchantEvent,
	SHIPMENT_STATUS_CHANNEL,
	type ShipmentStatusChanged,
} from "../../lib/contracts";
import { channelSubscriptions, publishToChannel } from "../../lib/platform/channels";

const status: ShipmentStatusChanged = {
	event_id: "1-1",
	order_id: 1,
	sender_id: 1,
	awb_number: "AWB1",
	logistic_id: 1,
	status: "manifested",
	status_name: "Ready for pickup",
	status_at: "2026-01-01T00:00:00Z",
	seq: 1,
};
const event: MerchantEvent = {
	event_id: "order.created:1",
	type: "order.created",
	sender_id: 1,
	order_id: 1,
	occurred_at: "2026-01-01T00:00:00Z",
	data: { order_id: 1 },
};
const noop = () => undefined;

describe("contracts: durable channels typed by their registry (lib/contracts/channels.ts)", () => {
	it("the registry names the two channels, each once", () => {
		const names: Record<ChannelName, true> = {
			[SHIPMENT_STATUS_CHANNEL]: true,
			[MERCHANT_EVENTS_CHANNEL]: true,
		};
		assert.deepEqual(Object.keys(names).sort(), ["merchant.events", "shipment.status_changed"]);
	});

	it("publishToChannel takes a registered name and that channel's payload (compile-time)", () => {
		const checks = [
			(b: ServiceBroker) => publishToChannel(b, SHIPMENT_STATUS_CHANNEL, status, { msgId: status.event_id }),
			(b: ServiceBroker) => publishToChannel(b, MERCHANT_EVENTS_CHANNEL, { events: [event] }),
			(b: ServiceBroker) => publishToChannel(b, MERCHANT_EVENTS_CHANNEL, event),
			// @ts-expect-error not a registered channel
			(b: ServiceBroker) => publishToChannel(b, "shipment.status", status),
			// @ts-expect-error another channel's payload
			(b: ServiceBroker) => publishToChannel(b, MERCHANT_EVENTS_CHANNEL, status),
			// @ts-expect-error another channel's payload
			(b: ServiceBroker) => publishToChannel(b, SHIPMENT_STATUS_CHANNEL, event),
			// @ts-expect-error an incomplete status event
			(b: ServiceBroker) => publishToChannel(b, SHIPMENT_STATUS_CHANNEL, { event_id: "1-1" }),
		];
		assert.equal(checks.length, 7);
	});

	it("a subscription's handler receives its channel's payload type (compile-time)", () => {
		const awbOf = (p: ShipmentStatusChanged): string => p.awb_number;
		const checks = [
			() =>
				channelSubscriptions({ [SHIPMENT_STATUS_CHANNEL]: { group: "g", handler: (p) => void awbOf(p) } }),
			() => channelSubscriptions({ [MERCHANT_EVENTS_CHANNEL]: { handler: (p) => void ("events" in p) } }),
			// @ts-expect-error a handler declaring another channel's payload
			() => channelSubscriptions({ [SHIPMENT_STATUS_CHANNEL]: { handler: (p: MerchantEvent) => void p } }),
			// @ts-expect-error a handler narrowing merchant.events to one of its two shapes
			() => channelSubscriptions({ [MERCHANT_EVENTS_CHANNEL]: { handler: (p: MerchantEvent) => void p } }),
			// @ts-expect-error not a registered channel
			() => channelSubscriptions({ "orders.created": { handler: noop } }),
		];
		assert.equal(checks.length, 5);
	});
});
