/**
 * The warehouses service's calls to other services (rates, intake, pincode)
 * and its `warehouses.changed` broadcast. Each says what happens when the
 * other service cannot answer: skipped and logged (the answer does not need
 * it) or 503 (`warehouseUsage`, a delete cannot go ahead unchecked).
 */
import type { Context } from "moleculer";
import {
	broadcast,
	type Caller,
	type CallMeta,
	type CourierInfo,
	call,
	type WarehouseUsage,
} from "../contracts";
import { fail, failWith, validationFailed } from "../platform/errors";
import { CALL_OPTIONS, messageOf, type WarehousesDeps } from "./deps";
import type { ParsedWarehouse } from "./validation";

/** Window of `shipped_30d` (ms). */
const SHIPPED_WINDOW_MS = 30 * 24 * 3600 * 1000;
/** Order ids listed in a 409 `warehouse_in_use` (spec §8). */
const MAX_BLOCKER_IDS = 20;

/** Active couriers from `rates.listCouriers`, or undefined (logged) when rates cannot be reached. */
export async function activeCouriers(deps: WarehousesDeps, via: Caller): Promise<CourierInfo[] | undefined> {
	try {
		const all = await call(via, "rates.listCouriers", {}, CALL_OPTIONS);
		return (all ?? []).filter((c) => c.active);
	} catch (err) {
		deps.logger.warn(`courier list unavailable: ${messageOf(err)}`);
		return undefined;
	}
}

/**
 * Orders shipped per warehouse id (keys: id as a string) over the last 30
 * days (`intake.shippedCounts`); undefined (logged) when intake cannot be reached.
 */
export async function shippedCounts(
	deps: WarehousesDeps,
	ctx: Context<unknown, CallMeta>,
	sender: number,
): Promise<Record<string, number> | undefined> {
	try {
		const since = new Date(Date.now() - SHIPPED_WINDOW_MS).toISOString();
		const counts = await call(ctx, "intake.shippedCounts", { sender_id: sender, since }, CALL_OPTIONS);
		return counts ?? {};
	} catch (err) {
		deps.logger.warn(`shipped counts unavailable: ${messageOf(err)}`);
		return undefined;
	}
}

/**
 * Checks the well-formed pincodes sent against the India Post directory
 * (`pincode.lookupMany`); unknown ones add `<field>: not a known Indian
 * pincode` to `parsed.details`. Skipped (logged) when the pincode service
 * cannot answer: the courier registration would still refuse a bad one.
 */
export async function checkPincodes(
	deps: WarehousesDeps,
	ctx: Context<unknown, CallMeta>,
	parsed: ParsedWarehouse,
): Promise<void> {
	if (!parsed.pincodes.length) return;
	let found: Record<string, { found?: boolean }>;
	try {
		found = await call(
			ctx,
			"pincode.lookupMany",
			{ pincodes: [...new Set(parsed.pincodes.map((p) => p.pincode))] },
			CALL_OPTIONS,
		);
	} catch (err) {
		deps.logger.warn(`pincode check skipped: ${messageOf(err)}`);
		return;
	}
	for (const p of parsed.pincodes) {
		if (found?.[p.pincode] && found[p.pincode].found === false) {
			parsed.details.push(`${p.field}: not a known Indian pincode`);
		}
	}
}

/**
 * What a create or an update does before taking the account lock (no
 * remote call while holding it): checks the pincodes sent against the
 * directory, throws 400 `validation_failed` with every detail, then
 * answers the active couriers (undefined when rates cannot be reached).
 */
export async function beforeWrite(
	deps: WarehousesDeps,
	ctx: Context<unknown, CallMeta>,
	parsed: ParsedWarehouse,
): Promise<CourierInfo[] | undefined> {
	await checkPincodes(deps, ctx, parsed);
	if (parsed.details.length) throw validationFailed(parsed.details);
	return activeCouriers(deps, ctx);
}

/**
 * Asks intake to adopt the account's orders that arrived before any
 * warehouse existed (`intake.adoptOrphanOrders`) → how many it adopted; 0
 * (logged) when the order service cannot be reached.
 */
export async function adoptOrphanOrders(
	deps: WarehousesDeps,
	ctx: Context<unknown, CallMeta>,
	sender: number,
	warehouseId: number,
): Promise<number> {
	try {
		const res = await call(
			ctx,
			"intake.adoptOrphanOrders",
			{ sender_id: sender, warehouse_id: warehouseId },
			CALL_OPTIONS,
		);
		return Number(res?.count ?? 0);
	} catch (err) {
		deps.logger.warn(`warehouse ${warehouseId}: orphan orders not adopted: ${messageOf(err)}`);
		return 0;
	}
}

/**
 * Refuses the delete of warehouse `id` while orders ship from it
 * (`intake.warehouseUsage`). Throws 409 `{error:"warehouse_in_use", message,
 * count, unshipped, awaiting_pickup, order_ids}` (at most
 * {@link MAX_BLOCKER_IDS} ids) when it has open orders; 503
 * `service_unavailable` when the order service cannot be asked (spec §8).
 */
export async function assertUnused(
	deps: WarehousesDeps,
	ctx: Context<unknown, CallMeta>,
	sender: number,
	id: number,
): Promise<void> {
	let usage: WarehouseUsage;
	try {
		usage = await call(ctx, "intake.warehouseUsage", { sender_id: sender, warehouse_id: id }, CALL_OPTIONS);
	} catch (err) {
		deps.logger.warn(`warehouse ${id}: usage unavailable: ${messageOf(err)}`);
		throw fail("service_unavailable", "warehouse_usage");
	}
	if (Number(usage?.count) > 0) {
		throw failWith(
			"warehouse_in_use",
			{
				count: Number(usage.count),
				unshipped: Number(usage.unshipped ?? 0),
				awaiting_pickup: Number(usage.awaiting_pickup ?? 0),
				order_ids: (usage.order_ids ?? []).slice(0, MAX_BLOCKER_IDS).map(Number),
			},
			usage.count,
		);
	}
}

/**
 * Broadcasts `warehouses.changed` `{sender_id, id}` (intake drops its
 * cached resolution) without delaying the answer; a failure is logged.
 */
export function announceChange(
	deps: WarehousesDeps,
	ctx: Context<unknown, CallMeta>,
	sender: number,
	id: number,
): void {
	broadcast(ctx, "warehouses.changed", { sender_id: sender, id }).catch((err: unknown) =>
		deps.logger.warn(`warehouse ${id}: warehouses.changed not sent: ${messageOf(err)}`),
	);
}
