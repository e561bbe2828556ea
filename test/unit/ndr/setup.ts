/**
 * Shared setup of the ndr specs: one broker per spec file running the real
 * `ndr` service with the real booking service and the real simulator (over
 * HTTP: NDR actions reach the sandbox courier as in production), real
 * PostgreSQL, Redis (BullMQ, and the durable `shipment.status_changed`
 * channel on Redis Streams), and fakes of intake, warehouses and rates in the
 * contract's shapes (test/helpers/fixtures.ts).
 */
import { ServiceBroker } from "moleculer";
import {
	type ActionName,
	type Address,
	type OrderRecord,
	type ParamsOf,
	SHIPMENT_STATUS_CHANNEL,
	type ShipmentStatusChanged,
	type Warehouse,
} from "../../../lib/contracts";
import type { Role } from "../../../lib/platform/auth";
import { publishToChannel } from "../../../lib/platform/channels";
import { getSequelize, select } from "../../../lib/platform/db";
import { loadServiceSchema } from "../../../lib/platform/system";
import { callAsOn, testBrokerOptions } from "../../helpers/broker";
import { fakeService } from "../../helpers/call";
import { useEnv } from "../../helpers/env";
import { COURIERS, courier, freshId, order, warehouse } from "../../helpers/fixtures";
import { freePort } from "../../helpers/net";
import { eventually } from "../../helpers/poll";

export const orders = new Map<number, OrderRecord>();

/** The sandbox Delhivery courier (the real Delhivery adapter against the simulator), known to the fake `rates` only here. */
export const SANDBOX_DELHIVERY = courier(7, "Sandbox Delhivery", "sbx-delhivery", {
	adapter: "delhivery",
	cod: true,
});
const warehouses = new Map<number, Warehouse>();

/** A stored order of `sender_id` (with its own warehouse) as intake answers it. */
export function addOrder(
	sender_id: number,
	over: Partial<OrderRecord> = {},
	consignee: Partial<Address> = {},
) {
	const wh = warehouse(sender_id);
	warehouses.set(wh.id, wh);
	const base = order(sender_id, wh.id, over);
	const o: OrderRecord = { ...base, consignee: { ...base.consignee, ...consignee } };
	orders.set(o.order_id, o);
	return o;
}

/** The fakes of intake, warehouses and rates, typed by their contracts (lib/contracts). */
const fakes = [
	fakeService("intake", {
		getOrder(ctx) {
			const o = orders.get(Number(ctx.params.order_id));
			return o && o.sender_id === Number(ctx.params.sender_id) ? structuredClone(o) : null;
		},
		applyBookingUpdate: () => ({ applied: true }),
	}),
	fakeService("warehouses", {
		resolve(ctx) {
			const w = warehouses.get(Number(ctx.params.id));
			return w && w.sender_id === Number(ctx.params.sender_id) ? structuredClone(w) : null;
		},
	}),
	fakeService("rates", {
		quote: (ctx) => ({
			data: COURIERS.filter(
				(c) => c.active && c.forward && (!ctx.params.logistic_id || c.logistic_id === ctx.params.logistic_id),
			).map((c) => ({
				logistic_id: c.logistic_id,
				courier_name: c.logistic_name,
				total: 118,
				cod_charge: 0,
				freight_charge: 100,
				shipping_charge_tax: 18,
				zone: "D",
				weight: 0.5,
				rto_charge: 70,
				performance: null,
				edd: null,
				edd_range: null,
			})),
			dropped_couriers: [],
		}),
		listCouriers: () => COURIERS.filter((c) => c.active),
		getCourier: (ctx) =>
			[...COURIERS, SANDBOX_DELHIVERY].find((c) => c.logistic_id === Number(ctx.params.logistic_id)) ?? null,
		coverage: () => ({ couriers: {}, unique_pincodes: 0, limits: {} }),
		recordLaneOutcome: () => ({ recorded: true }),
	}),
];

const ENV: Record<string, string> = {
	SANDBOX: "1",
	SANDBOX_COURIER_DELAY_MS: "5",
	BOOKING_RELAY_MS: "100",
	BOOKING_RELAY_BACKOFF_MS: "50",
	BOOKING_TRACK_MS: "3600000",
	NDR_POLICY_MS: "3600000",
	NDR_ACTION_BACKOFF_MS: "10",
	NDR_ACT_POLL_MS: "100",
};

let current: ServiceBroker | undefined;

/** The broker of the running spec file. */
export function broker(): ServiceBroker {
	if (!current) throw new Error("the ndr broker is not started");
	return current;
}

/** Registers before/after hooks starting the broker (simulator, booking, ndr, fakes) and stopping it. */
export function useNdrBroker(): void {
	useEnv(ENV, ["SANDBOX_COURIER_PORT", "SANDBOX_COURIER_URL"]);
	before(async () => {
		process.env.SANDBOX_COURIER_PORT = String(await freePort());
		delete process.env.SANDBOX_COURIER_URL;
		current = new ServiceBroker(testBrokerOptions(false));
		for (const s of ["simulator", "booking", "ndr", "notifications"] as const)
			current.createService(loadServiceSchema(s));
		for (const f of fakes) current.createService(f);
		await current.start();
	});
	after(async () => {
		await current?.stop();
		current = undefined;
	});
}

export { bodyOf } from "../../helpers/broker";

/** Calls `action` as `sender` with `role` on this suite's broker; answers the result and the status set (200 unless set). */
export function callAs<A extends ActionName>(
	action: A,
	params: ParamsOf<A>,
	sender: number,
	role: Role = "merchant",
) {
	return callAsOn(broker(), action, params, sender, role);
}

/** Books a new order of `sender` at sandbox courier 1 (book/sync): the order and its AWB. */
export async function bookedOrder(sender: number, consignee: Partial<Address> = {}) {
	const o = addOrder(sender, {}, consignee);
	const { res } = await callAs("booking.bookSync", { order_id: o.order_id, logistic_id: 1 }, sender);
	if (res.status !== "booked") throw new Error(`not booked: ${JSON.stringify(res)}`);
	return { order: o, awb: res.awb as string, forward_id: res.forward_id as string };
}

/** Makes the simulator emit `event` for the order (as the sandbox route does) and waits for its fold. */
export async function scan(sender: number, order_id: number, event: string, reason?: string) {
	const { res } = await callAs(
		"booking.sandboxEvent",
		{ order_id: String(order_id), event, ...(reason ? { reason } : {}) },
		sender,
	);
	return res;
}

/** The order's NDR cases, oldest first. */
export async function casesOf(order_id: number): Promise<any[]> {
	return select(getSequelize(), "SELECT * FROM ndr.cases WHERE order_id = $1 ORDER BY id", [order_id]);
}

/** Waits until the order's newest case satisfies `ok`; answers it. */
export async function caseWhen(order_id: number, ok: (c: any) => boolean, what: string): Promise<any> {
	return eventually(async () => (await casesOf(order_id)).at(-1), { what, ok: (c) => !!c && ok(c) });
}

/** A synthetic status event (as booking publishes it) for an order booking does not hold. */
export function statusEvent(
	o: OrderRecord,
	over: Partial<ShipmentStatusChanged> = {},
): ShipmentStatusChanged {
	return {
		event_id: `${freshId()}-5`,
		order_id: o.order_id,
		sender_id: o.sender_id,
		awb_number: `SYN${o.order_id}`,
		logistic_id: 1,
		status: "undelivered",
		status_name: "Undelivered",
		status_at: new Date().toISOString(),
		seq: 5,
		courier_status: "Undelivered",
		remarks: "Consignee not available",
		...over,
	};
}

/** Publishes a status event on the durable channel (as booking's outbox relay does). */
export async function publish(e: ShipmentStatusChanged): Promise<void> {
	await publishToChannel(broker(), SHIPMENT_STATUS_CHANNEL, e, { msgId: e.event_id });
}
