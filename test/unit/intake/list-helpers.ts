/**
 * Shared setup of the orders read-side specs (list*.spec.ts, detail.spec.ts;
 * spec §2.5, §2.12, §3, §4.3, §4.8, §7): the real gateway and the real intake
 * service on one broker over real HTTP (bearer tokens of a development IdP
 * whose JWKS is served over HTTP, real PostgreSQL), with small fakes of the
 * other services intake talks to: `warehouses.resolve` (every warehouse is
 * the caller's), `booking.getShipment`, `documents.labelInfo` and
 * `billing.codStatus` (answers set per order / AWB by the test, calls recorded).
 *
 * Orders are created through `intake.createOrder` on the broker (as the
 * merchant) and moved through their lifecycle with `intake.applyBookingUpdate`
 * (as booking does); what is under test is always read over HTTP.
 */
import assert from "node:assert/strict";
import type { ServiceBroker } from "moleculer";
import type { CodShipment, LabelInfo, ShipmentRecord } from "../../../lib/contracts";
import { getSequelize, select } from "../../../lib/platform/db";
import type { DevIdp } from "../../../lib/platform/devidp";
import { isShipmentStatus, type LifecycleStatus } from "../../../lib/shared/shipment-status";
import { as, startWithGateway } from "../../helpers/broker";
import { callRaw, fakeService } from "../../helpers/call";
import { useDevIdp } from "../../helpers/devidp";
import { warehouse } from "../../helpers/fixtures";
import { type Answer, http } from "../gateway/setup";
import { forwardBody, reverseBody } from "./setup";

/** The system under test of one spec file (filled by the `before` hook). */
export interface ReadSide {
	broker: ServiceBroker;
	base: string;
	idp: DevIdp;
	/** order id → what the fake `booking.getShipment` answers (absent: null) */
	shipments: Map<number, ShipmentRecord>;
	/** order id → what the fake `documents.labelInfo` answers (absent: null) */
	labels: Map<number, LabelInfo>;
	/** AWB → what the fake `billing.codStatus` answers (absent: null) */
	cods: Map<string, CodShipment>;
	/** every call of the fakes: `action sender_id order_id` (billing: `action sender_id awb_number`) */
	calls: string[];
	/** when set, the fakes of booking, documents and billing throw this (a crash, not a contract error) */
	down: { booking: boolean; documents: boolean; billing: boolean };
}

/**
 * Registers mocha hooks starting (before) and stopping (after) the gateway,
 * the real intake and the fakes; `env` is set for the whole file.
 */
export function useReadSide(env: Record<string, string | undefined> = {}): ReadSide {
	// broker, base and idp are filled in by the before hook
	const sys = {
		shipments: new Map(),
		labels: new Map(),
		cods: new Map(),
		calls: [],
		down: { booking: false, documents: false, billing: false },
	} as Partial<ReadSide> as ReadSide;
	const auth = useDevIdp(env);
	before(async () => {
		sys.idp = auth.idp;
		({ broker: sys.broker, base: sys.base } = await startWithGateway([
			"intake",
			fakeService("warehouses", {
				resolve: (ctx) => warehouse(ctx.params.sender_id, { id: ctx.params.id }),
			}),
			fakeService("booking", {
				getShipment(ctx) {
					sys.calls.push(`booking.getShipment ${ctx.params.sender_id} ${ctx.params.order_id}`);
					if (sys.down.booking) throw new Error("booking crashed");
					return sys.shipments.get(ctx.params.order_id) ?? null;
				},
			}),
			fakeService("documents", {
				labelInfo(ctx) {
					sys.calls.push(`documents.labelInfo ${ctx.params.sender_id} ${ctx.params.order_id}`);
					if (sys.down.documents) throw new Error("documents crashed");
					return sys.labels.get(ctx.params.order_id) ?? null;
				},
			}),
			fakeService("billing", {
				codStatus(ctx) {
					sys.calls.push(`billing.codStatus ${ctx.params.sender_id} ${ctx.params.awb_number}`);
					if (sys.down.billing) throw new Error("billing crashed");
					return sys.cods.get(ctx.params.awb_number) ?? null;
				},
			}),
		]));
	});
	after(async () => {
		await sys.broker?.stop();
	});
	return sys;
}

/** A GET as `token`, asserting nothing. */
export function get(sys: ReadSide, token: string, path: string): Promise<Answer> {
	return http(sys.base, "GET", path, { token });
}

/** A GET of `GET /v1/orders` with `query` (values URL-encoded), asserting a 200. */
export async function list(
	sys: ReadSide,
	token: string,
	query: Record<string, string | number> = {},
): Promise<{ data: any[]; pagination: { mode: string; limit: number; nextCursor: string | null } }> {
	const qs = new URLSearchParams(
		Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]),
	).toString();
	const r = await get(sys, token, `/v1/orders${qs ? `?${qs}` : ""}`);
	assert.equal(r.status, 200, `GET /v1/orders?${qs}: ${r.status} ${r.text}`);
	return r.body;
}

/** Order ids of a list answer, in answer order. */
export const ids = (page: { data: Array<{ order_id: number }> }): number[] =>
	page.data.map((r) => r.order_id);

/** Options of {@link createOrder}. */
export interface OrderOpts {
	ref?: string;
	reverse?: boolean;
	city?: string;
	/** `order_type` 1 (COD, cod_amount = declared total) unless false */
	cod?: boolean;
	declared?: number;
	channel?: string;
}

/** Creates an order of `sender` through intake.createOrder / createReverse; answers its id. */
export async function createOrder(sys: ReadSide, sender: number, o: OrderOpts = {}): Promise<number> {
	const ref = o.ref ?? `L-${Math.random().toString(36).slice(2, 12)}`;
	const body = o.reverse ? reverseBody(1, ref) : forwardBody(1, ref);
	if (o.city !== undefined) body.receiver.city = o.city;
	if (o.channel !== undefined) body.channel = o.channel;
	if (o.declared !== undefined) {
		body.product.declared_order_total = o.declared;
		if (!o.reverse) body.product.cod_amount = o.declared;
	}
	if (o.cod === false && !o.reverse) {
		body.order.order_type = 0;
		body.product.cod_amount = undefined;
	}
	const action = o.reverse ? "intake.createReverse" : "intake.createOrder";
	const r = (await sys.broker.call(action, body, as(sender))) as { order_id: number };
	assert.ok(Number.isInteger(r.order_id));
	return r.order_id;
}

/** Creates `n` forward orders of `sender` one after the other (ascending ids); answers their ids. */
export async function createOrders(
	sys: ReadSide,
	sender: number,
	n: number,
	o: OrderOpts = {},
): Promise<number[]> {
	const out: number[] = [];
	for (let i = 0; i < n; i++) out.push(await createOrder(sys, sender, o));
	return out;
}

let attempt = 1_000;

/**
 * Moves an order to lifecycle `status` as booking would: a new attempt
 * queued (seq 1), then, for a shipment status, booked with AWB `awb` (seq 2)
 * and the status (seq 3); `booking_failed` fails the attempt.
 */
export async function moveTo(
	sys: ReadSide,
	sender: number,
	order_id: number,
	status: LifecycleStatus,
	awb = `AWB${order_id}X`,
): Promise<void> {
	if (status === "new") return;
	const attempt_id = ++attempt;
	const base = { order_id, sender_id: sender, attempt_id };
	const apply = async (u: Record<string, unknown>) => {
		const r = await callRaw(sys.broker, "intake.applyBookingUpdate", { ...base, ...u });
		assert.equal(r.applied, true, `update ${JSON.stringify(u)} of order ${order_id}`);
	};
	await apply({ seq: 1, state: "booking_in_progress", status: "booking_queued" });
	if (status === "booking_queued") return;
	if (status === "booking_failed") {
		await apply({
			seq: 2,
			state: "failed",
			status: "booking_failed",
			failure_reason: "Courier refused",
			failure_code: "courier_refused",
		});
		return;
	}
	assert.ok(isShipmentStatus(status));
	await apply({
		seq: 2,
		state: "booked",
		status: "booked",
		awb_number: awb,
		courier: "Sandbox Express",
		logistic_id: 1,
	});
	if (status === "booked") return;
	const state = status === "cancelled" ? "not_shipped" : "booked";
	await apply({ seq: 3, state, status });
}

/** Runs SQL on the test database (fixtures only: created_at, hidden_at). */
export async function sql(text: string, values: unknown[] = []): Promise<Array<Record<string, any>>> {
	return select(getSequelize(), text, values);
}
