/**
 * Shared setup of the booking specs: one broker per spec file running the
 * real booking service and the real simulator (over HTTP), real PostgreSQL
 * and Redis (BullMQ), with fakes of intake, warehouses and rates that answer
 * the contract shapes of lib/contracts (fixtures from test/helpers/fixtures.ts).
 */
import { ServiceBroker } from "moleculer";
import type {
	Address,
	BookingUpdate,
	CourierLimits,
	LaneOutcomeParams,
	OrderRecord,
	Quote,
	QuoteParams,
	QuoteResult,
	ResultOf,
	Warehouse,
} from "../../../lib/contracts";
import { exec, getSequelize, select } from "../../../lib/platform/db";
import { loadServiceSchema } from "../../../lib/platform/system";
import { as, testBrokerOptions } from "../../helpers/broker";
import { callAs, fakeService } from "../../helpers/call";
import { courier, order, COURIERS as SANDBOX_COURIERS, warehouse } from "../../helpers/fixtures";
import { freePort } from "../../helpers/net";
import { eventually } from "../../helpers/poll";

/** The fixture couriers plus one on the rate card that this build has no adapter for. */
export const COURIERS = [
	...SANDBOX_COURIERS,
	courier(7, "Unwired Courier", "unwired", { adapter: "nosuch", cod: true, default_priority: 11 }),
];

/** Lanes nobody prices. */
const UNPRICED = new Set(["799999"]);

/** `rates.quote` of the fake: every active courier of the direction prices, except the lanes dropped below. */
function fakeQuote(p: QuoteParams): QuoteResult {
	const data: Quote[] = [];
	const dropped: QuoteResult["dropped_couriers"] = [];
	const reverse = p.direction === "reverse";
	const cod = p.payment_mode === "cod";
	for (const c of COURIERS) {
		if (!c.active || (p.logistic_id && p.logistic_id !== c.logistic_id)) continue;
		const drop = (reason: string, detail: string) =>
			dropped.push({ logistic_id: c.logistic_id, logistic_name: c.logistic_name, reason, detail });
		if (reverse ? !c.reverse : !c.forward)
			drop(reverse ? "reverse_not_supported" : "forward_not_supported", "direction");
		else if (cod && !c.cod) drop("cod_config_missing", `${c.logistic_name} has no COD`);
		else if (UNPRICED.has(p.to_pin) || (c.logistic_id === 1 && p.to_pin.startsWith("78")))
			drop("no_rate_card", `no rate for ${p.to_pin}`);
		else
			data.push({
				logistic_id: c.logistic_id,
				courier_name: c.logistic_name,
				total: 118 + c.logistic_id,
				cod_charge: cod ? 30 : 0,
				freight_charge: 70 + c.logistic_id,
				shipping_charge_tax: 18,
				zone: "D",
				weight: 0.5,
				rto_charge: 70,
				performance: null,
				edd: null,
				edd_range: null,
			});
	}
	// rates answers cheapest first; the AUTO ranking must not depend on this order.
	data.sort((a, b) => b.total - a.total);
	return { data, dropped_couriers: dropped };
}

/** `rates.coverage` of the fake: courier n serves 19,000 − 100·n pincodes, at most 10·n kg, zones A–D. */
export function fakeCoverage(direction: "forward" | "reverse"): ResultOf<"rates.coverage"> {
	const list = COURIERS.filter((c) => c.active && (direction === "forward" ? c.forward : c.reverse));
	const by = <T>(f: (id: number) => T) =>
		Object.fromEntries(list.map((c) => [String(c.logistic_id), f(c.logistic_id)]));
	return {
		couriers: by((id) => 19_000 - 100 * id),
		unique_pincodes: 19_000 - 100 * Math.min(...list.map((c) => c.logistic_id)),
		limits: by(
			(id): CourierLimits => ({ max_weight_kg: 10 * id, mode: "surface", zones: ["A", "B", "C", "D"] }),
		),
	};
}

export const orders = new Map<number, OrderRecord>();
export const warehouses = new Map<number, Warehouse>();
/**
 * Every booking update intake applied, once per `order_id:attempt_id:seq`
 * (the real intake's idempotency key, lib/intake/store.ts): the relay may
 * deliver a row twice by design (lib/booking/store leaseOutbox), and a test
 * counting deliveries instead of updates failed in CI.
 */
export const updates: BookingUpdate[] = [];
/** The keys of {@link updates}. */
const applied = new Set<string>();
/** order_id → number of applyBookingUpdate calls to fail before acknowledging. */
export const intakeFailures = new Map<number, number>();
/** Every lane outcome the fake `rates.recordLaneOutcome` received (tracking: delivered / RTO delivered). */
export const laneOutcomes: LaneOutcomeParams[] = [];
/** The orders the fake `intake.getOrder` was asked for with `for_booking: true` (record 0129), in order. */
export const readsForBooking: number[] = [];
/** Fake actions ("rates.quote", …) that currently fail as if their service were unreachable. */
export const down = new Set<string>();

/**
 * A stored order of `sender_id` (with its own active warehouse) as intake
 * answers it: the fixture order, `over` applied, `consignee` fields merged
 * into its consignee.
 */
export function addOrder(
	sender_id: number,
	over: Partial<OrderRecord> = {},
	consignee: Partial<Address> = {},
): OrderRecord {
	const wh = warehouse(sender_id);
	warehouses.set(wh.id, wh);
	const base = order(sender_id, wh.id, over);
	const o: OrderRecord = { ...base, consignee: { ...base.consignee, ...consignee } };
	orders.set(o.order_id, o);
	return o;
}

/** A fake's action answers as if its service were unreachable while it is in {@link down}. */
function unlessDown(action: string): void {
	if (down.has(action)) throw new Error(`${action.slice(0, action.indexOf("."))} is unreachable`);
}

/** The fakes of intake, warehouses and rates, typed by their contracts (lib/contracts). */
const fakes = [
	fakeService(
		"intake",
		{
			getOrder(ctx) {
				if (ctx.params.for_booking === true) readsForBooking.push(Number(ctx.params.order_id));
				const o = orders.get(Number(ctx.params.order_id));
				return o && o.sender_id === Number(ctx.params.sender_id) ? structuredClone(o) : null;
			},
			applyBookingUpdate(ctx) {
				const u = ctx.params;
				const left = intakeFailures.get(u.order_id) ?? 0;
				if (left > 0) {
					intakeFailures.set(u.order_id, left - 1);
					throw new Error("intake is down");
				}
				const key = `${u.order_id}:${u.attempt_id}:${u.seq}`;
				if (applied.has(key)) return { applied: false };
				applied.add(key);
				updates.push(structuredClone(u));
				return { applied: true };
			},
		},
		{ before: unlessDown },
	),
	fakeService(
		"warehouses",
		{
			resolve(ctx) {
				const w = warehouses.get(Number(ctx.params.id));
				if (!w || w.sender_id !== Number(ctx.params.sender_id) || !w.active) return null;
				return structuredClone(w);
			},
		},
		{ before: unlessDown },
	),
	fakeService(
		"rates",
		{
			quote: (ctx) => fakeQuote(ctx.params),
			listCouriers(ctx) {
				const d = ctx.params.direction;
				return COURIERS.filter(
					(c) => c.active && (d === undefined || (d === "forward" ? c.forward : c.reverse)),
				);
			},
			getCourier: (ctx) => COURIERS.find((c) => c.logistic_id === Number(ctx.params.logistic_id)) ?? null,
			coverage: (ctx) => fakeCoverage(ctx.params.direction),
			recordLaneOutcome(ctx) {
				const p = ctx.params;
				const recorded = !laneOutcomes.some((o) => o.attempt_id === p.attempt_id);
				if (recorded) laneOutcomes.push(structuredClone(p));
				return { recorded };
			},
		},
		{ before: unlessDown },
	),
];

const ENV = {
	SANDBOX: "1",
	SANDBOX_COURIER_DELAY_MS: "10",
	SANDBOX_COURIER_TIMEOUT_MS: "400",
	SANDBOX_COURIER_HANG_MS: "1200",
	BOOKING_BACKOFF_MS: "50",
	BOOKING_RELAY_MS: "100",
	BOOKING_RELAY_BACKOFF_MS: "50",
	BOOKING_SWEEP_MS: "300",
	BOOKING_SWEEP_AFTER_MS: "5000",
};

/**
 * Registers before/after hooks in the calling `describe` that start one
 * broker (simulator on a free port, booking, billing, the fakes) with short timings
 * (`env` overrides them, e.g. a relay period long enough never to run), and stop it.
 * Returns a getter of that broker.
 */
export function useBookingBroker(env: Record<string, string> = {}): () => ServiceBroker {
	let broker: ServiceBroker | undefined;
	before(async () => {
		Object.assign(process.env, ENV, env, { SANDBOX_COURIER_PORT: String(await freePort()) });
		delete process.env.SANDBOX_COURIER_URL;
		broker = new ServiceBroker(testBrokerOptions(false));
		broker.createService(loadServiceSchema("simulator"));
		broker.createService(loadServiceSchema("booking"));
		// the wallet: booking's movements and credit limits reach it through booking's outbox
		broker.createService(loadServiceSchema("billing"));
		for (const f of fakes) broker.createService(f);
		await broker.start();
	});
	after(async () => {
		await broker?.stop();
		for (const k of [
			"SANDBOX_COURIER_TIMEOUT_MS",
			"SANDBOX_COURIER_HANG_MS",
			"BOOKING_BACKOFF_MS",
			"BOOKING_RELAY_MS",
			...Object.keys(env),
		]) {
			delete process.env[k];
		}
	});
	return () => {
		if (!broker) throw new Error("the booking broker is not started");
		return broker;
	};
}

export { bodyOf } from "../../helpers/broker";

/** Calls `booking.book` as merchant `sender`; answers the result and the HTTP status set. */
export async function book(broker: ServiceBroker, sender: number, params: Record<string, unknown>) {
	const opts = as(sender);
	const res: any = await callAs(broker, "booking.book", params, opts);
	return { res, status: (opts.meta as any).$statusCode };
}

/** The last seq-2 (booked / failed) update intake received for an order. */
export function finalUpdate(order_id: number): BookingUpdate | undefined {
	return updates.filter((u) => u.order_id === order_id && u.seq === 2).at(-1);
}

/** Waits for the order's seq-2 update. */
export async function settled(order_id: number): Promise<BookingUpdate> {
	return eventually(async () => finalUpdate(order_id), { what: `order ${order_id} settled` });
}

/** The order's attempts, oldest first. */
export async function attemptsOf(order_id: number): Promise<any[]> {
	return select(getSequelize(), "SELECT * FROM booking.attempts WHERE order_id = $1 ORDER BY attempt_id", [
		order_id,
	]);
}

/** The simulator's packages of a merchant order number. */
export async function simPackages(order_no: string): Promise<any[]> {
	return select(getSequelize(), "SELECT * FROM simulator.packages WHERE client_order_no = $1", [order_no]);
}

/** How many calls of `endpoint` (with one of `outcomes`, if given) the simulator saw for a reference. */
export async function simCalls(refnum: string, endpoint: string, outcomes?: string[]): Promise<number> {
	const rows = await select<{ n: string }>(
		getSequelize(),
		"SELECT count(*) AS n FROM simulator.calls WHERE refnum = $1 AND endpoint = $2 AND ($3::text[] IS NULL OR outcome = ANY($3::text[]))",
		[refnum, endpoint, outcomes ?? null],
	);
	return Number(rows[0].n);
}

/** Simulator outcomes of a create call that booked (first time or again). */
export const ACCEPTED = ["booked", "duplicate"];

/** Inserts an attempt the way `book` does, but without its outbox (as after a lost job). */
export async function insertAttempt(
	o: OrderRecord,
	logistic_id: number,
	state = "queued",
	extra = "",
): Promise<number> {
	const c = COURIERS.find((x) => x.logistic_id === logistic_id)!;
	const { rows } = await exec<{ attempt_id: string }>(
		getSequelize(),
		`INSERT INTO booking.attempts (order_id, sender_id, logistic_id, courier_name, mode, state, updated_at ${extra ? ", ambiguous" : ""})
		 VALUES ($1, $2, $3, $4, 'forced', $5, now() - interval '1 hour' ${extra ? ", true" : ""}) RETURNING attempt_id`,
		[o.order_id, o.sender_id, logistic_id, c.logistic_name, state],
	);
	return Number(rows[0].attempt_id);
}
