/**
 * Shared setup of the intake specs (spec §2.1, §2.2, §2.4, §3, §4.1, §4.3,
 * §7): the real intake service on real PostgreSQL; the `warehouses`
 * collaborator is a small fake exposing `warehouses.resolve {sender_id, id}
 * -> Warehouse | null` (contract shape, test/helpers/fixtures.ts).
 */
import assert from "node:assert/strict";
import type { ServiceBroker } from "moleculer";
import type { BookingUpdate, CallMeta } from "../../../lib/contracts";
import { getSequelize, select } from "../../../lib/platform/db";
import { errorBodyOf } from "../../../lib/platform/errors";
import { as, rejects, startBroker } from "../../helpers/broker";
import { callAs, fakeService } from "../../helpers/call";
import { freshId, warehouse } from "../../helpers/fixtures";

/** Warehouses the fake `warehouses.resolve` knows: id → owning sender. */
export const warehouseOwner = new Map<number, number>();
/** Every call the fake `warehouses.resolve` received. */
export const resolveCalls: Array<{ sender_id: number; id: number }> = [];
/** Warehouse id → promise the fake awaits after deciding its answer (holds a lookup in flight). */
export const resolveGates = new Map<number, Promise<void>>();
/** How many times the fake was asked for warehouse `id`. */
export const resolveCount = (id: number) => resolveCalls.filter((c) => c.id === id).length;

/** A fake `warehouses` service for which every account owns warehouse `id` and no other. */
export function ownsOnly(id: number) {
	return fakeService("warehouses", {
		resolve: (ctx) => (ctx.params.id === id ? warehouse(ctx.params.sender_id, { id }) : null),
	});
}

/** Registers a fresh active warehouse of `sender` in the fake and returns its id. */
export function warehouseOf(sender: number): number {
	const id = freshId();
	warehouseOwner.set(id, sender);
	return id;
}

/** A valid forward create body (§2.1). */
export function forwardBody(
	pickup: number,
	ref = `ORD-${Math.random().toString(36).slice(2, 10)}`,
): Record<string, any> {
	return {
		customer_order_no: ref,
		channel: "shopify",
		receiver: {
			name: "Asha Verma",
			address_1: "14, 2nd Cross, Indiranagar",
			address_2: "Near metro",
			city: "Bengaluru",
			state: "Karnataka",
			pincode: "560038",
			mobile_no: "9876543210",
		},
		product: {
			product_name: "Cotton kurta",
			product_sku: "KRT-M-BLU",
			physical_weight: 0.45,
			declared_order_total: 1299.5,
			cod_amount: 1299.5,
			length: 30,
			width: 20,
			height: 4,
		},
		order: { pickup_address_id: pickup, order_type: 1, order_date: "2025-01-15", order_from_source: "web" },
	};
}

/** A valid reverse create body (§2.2). */
export function reverseBody(pickup: number, ref: string): Record<string, any> {
	const b = forwardBody(pickup, ref);
	b.product.cod_amount = undefined;
	b.order = {
		pickup_address_id: pickup,
		order_type: 0,
		forward_source: "tekipost",
		old_fwd_awb_no: "1490841234567",
		return_address: { name: "Main WH", city: "Pune", pincode: "411001" },
	};
	return b;
}

/** Deep-sets `path` (dot separated) in a copy of `body`; `undefined` deletes. */
export function withField(body: Record<string, any>, path: string, value: unknown): Record<string, any> {
	const copy = structuredClone(body);
	const keys = path.split(".");
	let o = copy;
	for (const k of keys.slice(0, -1)) o = o[k];
	if (value === undefined) delete o[keys[keys.length - 1]];
	else o[keys[keys.length - 1]] = value;
	return copy;
}

/** Expects `p` to fail with an ApiError; returns `{status, body}`. */
export async function failure(
	p: () => Promise<unknown>,
): Promise<{ status: number; body: Record<string, any> }> {
	const err = await rejects(p);
	const eb = errorBodyOf(err);
	assert.ok(eb, `expected an ApiError, got ${err?.name}: ${err?.message}`);
	return eb as { status: number; body: Record<string, any> };
}

/** The sender's `intake.orders` rows, oldest first. */
export async function rowsFor(sender: number): Promise<Array<Record<string, any>>> {
	return select(getSequelize(), `SELECT * FROM intake.orders WHERE sender_id = $1 ORDER BY order_id`, [
		sender,
	]);
}

let current: ServiceBroker | undefined;

/** The broker of the running spec file. */
export function broker(): ServiceBroker {
	if (!current) throw new Error("useIntake() was not called in this spec file");
	return current;
}

/**
 * Registers mocha hooks of a spec file: one broker with the real intake
 * service and the fake warehouses, with a warehouse-cache TTL longer than
 * the run (cache hits and misses are deterministic).
 */
export function useIntake(): void {
	const cacheTtlEnv = process.env.INTAKE_WAREHOUSE_CACHE_MS;
	before(async () => {
		process.env.INTAKE_WAREHOUSE_CACHE_MS = "600000";
		current = await startBroker(["intake"]);
		current.createService(
			fakeService("warehouses", {
				resolve: {
					params: { sender_id: "number", id: "number" },
					async handler(ctx) {
						const { sender_id, id } = ctx.params;
						resolveCalls.push({ sender_id, id });
						const owned = warehouseOwner.get(id) === sender_id;
						await resolveGates.get(id);
						if (!owned) return null;
						return warehouse(sender_id, { id });
					},
				},
			}),
		);
		await current.waitForServices(["warehouses"], 10_000, 10);
	});
	after(async () => {
		await current?.stop();
		current = undefined;
		if (cacheTtlEnv === undefined) delete process.env.INTAKE_WAREHOUSE_CACHE_MS;
		else process.env.INTAKE_WAREHOUSE_CACHE_MS = cacheTtlEnv;
	});
}

/** Creates an order as `sender` (forward unless `action` says otherwise) and returns `{result, statusCode}`. */
export async function create(
	sender: number,
	body: Record<string, any>,
	action: "intake.createOrder" | "intake.createReverse" = "intake.createOrder",
) {
	const opts = as(sender);
	const result = await callAs(broker(), action, body, opts);
	return { result, statusCode: (opts.meta as CallMeta).$statusCode };
}

/** Applies a booking update (default: attempt 1, seq 2, booked with AWB `AWB<order_id>`). */
export async function book(sender: number, order_id: number, u: Partial<BookingUpdate> = {}) {
	return callAs(broker(), "intake.applyBookingUpdate", {
		order_id,
		sender_id: sender,
		attempt_id: 1,
		seq: 2,
		state: "booked",
		status: "booked",
		awb_number: `AWB${order_id}`,
		courier: "Sandbox Express",
		logistic_id: 3,
		...u,
	});
}
