/**
 * The order side of `intake` (spec §2.1, §2.2, §2.4, §4.1, §4.3): create
 * (forward and return), the status record with booking's state read through,
 * and the internal actions other services call. Plain functions over
 * {@link IntakeDeps} (./deps.ts); SQL in ./store.ts.
 */
import type { Context } from "moleculer";
import {
	type BookingUpdate,
	type CallMeta,
	type CreateOrderResult,
	call,
	type OrderBookingState,
	type OrderRecord,
	type ShipmentDirection,
	type StatusRecord,
	type WarehouseUsage,
} from "../contracts";
import { fail } from "../platform/errors";
import { assertNotB2B } from "../shared/b2b";
import { isPlainObject } from "../shared/fields";
import type { IntakeDeps } from "./deps";
import { mayLag, readThrough } from "./read-through";
import {
	adoptOrphanOrders,
	getOrder,
	type StoredStatus,
	shippedCounts,
	storedReference,
	updateKey,
	warehouseUsage,
} from "./store";
import { type OrderInput, parseOrderInput } from "./validation";

/** Timeout of the `warehouses.resolve` call (ms). */
const RESOLVE_TIMEOUT_MS = 5_000;

/**
 * 403 `cannot create order for another sender` when the body names a sender
 * (top-level `sender_id` or `order.sender_id`) other than the caller; a value
 * equal to the caller's id (number or digit string), null or "" is ignored.
 */
function assertOwnSender(body: Record<string, unknown>, sender: number): void {
	const named = [body.sender_id, isPlainObject(body.order) ? body.order.sender_id : undefined];
	for (const v of named) {
		if (v === undefined || v === null || v === "") continue;
		const n =
			typeof v === "number"
				? v
				: typeof v === "string" && /^\s*\d+\s*$/.test(v)
					? Number(v.trim())
					: Number.NaN;
		if (n !== sender) {
			throw fail("cannot create order for another sender");
		}
	}
}

/**
 * Shared create path of `intake.createOrder` / `intake.createReverse`: sender
 * check, B2B refusal, validation, warehouse ownership, idempotent insert.
 * Answers the §4.1 body (`answer`), the stored reference (`order_no`:
 * `customer_order_no`, `-R` appended for a return) and whether the order was
 * created (`created`: the handler answers 201, else 200 deduped). Logs
 * `order created` once created.
 * @throws ApiError 403 / 400 / 409 as documented on the actions
 */
export async function createOrderFrom(
	deps: IntakeDeps,
	ctx: Context<unknown, CallMeta>,
	sender: number,
	params: unknown,
	kind: ShipmentDirection,
): Promise<{ answer: CreateOrderResult; order_no: string; created: boolean }> {
	const body: Record<string, unknown> = isPlainObject(params) ? params : {};
	assertOwnSender(body, sender);
	assertNotB2B(body);
	const input: OrderInput = parseOrderInput(body, kind);
	await assertOwnWarehouses(deps, ctx, sender, input.warehouse_refs);

	const res = await deps.createOrder({ sender_id: sender, input });
	if (!res.created && res.direction !== input.direction) {
		throw fail("reference_in_use", storedReference(input), res.direction);
	}
	if (res.created) {
		deps.logger.info("order created", {
			sender_id: sender,
			order_id: res.order_id,
			direction: input.direction,
		});
		return { answer: { order_id: res.order_id }, order_no: storedReference(input), created: true };
	}
	return {
		answer: { order_id: res.order_id, deduped: true },
		order_no: storedReference(input),
		created: false,
	};
}

/**
 * Checks that every warehouse id the body names is one of the caller's
 * active warehouses (`warehouses.resolve`, positive answers cached per
 * ./warehouse-cache.ts). Not found and not yours are the same answer (§1
 * rule 4).
 * @throws ApiError 400 `invalid_pickup_address` naming the first bad field
 */
export async function assertOwnWarehouses(
	deps: IntakeDeps,
	ctx: Context<unknown, CallMeta>,
	sender: number,
	refs: OrderInput["warehouse_refs"],
): Promise<void> {
	const cache = deps.warehouseCache;
	const owned = async (id: number): Promise<boolean> => {
		if (cache.has(sender, id)) return true;
		const since = cache.begin();
		const warehouse = await call(
			ctx,
			"warehouses.resolve",
			{ sender_id: sender, id },
			{ timeout: RESOLVE_TIMEOUT_MS, unavailable: false },
		);
		if (warehouse) cache.remember(sender, id, since);
		return warehouse !== null;
	};
	// one lookup per distinct id (pickup and RTO are often the same warehouse)
	const byId = new Map<number, Promise<boolean>>();
	for (const { id } of refs) if (!byId.has(id)) byId.set(id, owned(id));
	const resolved = await Promise.all(refs.map((ref) => byId.get(ref.id)!));
	const bad = refs.find((_, i) => !resolved[i]);
	if (bad) throw fail("invalid_pickup_address", { field: bad.field });
}

/**
 * `GET /v1/orders/status` (spec §2.4, §4.3): the status record of the
 * caller's order stored under reference `raw` (a number or a string,
 * trimmed), booking's state read through ({@link statusOf}).
 * @throws ApiError 400 `order_no is required` (absent or empty), 404 `order_not_found`
 */
export async function orderStatus(deps: IntakeDeps, sender: number, raw: unknown): Promise<StatusRecord> {
	const orderNo = typeof raw === "number" ? String(raw) : typeof raw === "string" ? raw.trim() : "";
	if (!orderNo) throw fail("order_no is required");
	const found = await deps.storedStatus(sender, orderNo);
	if (!found) throw fail("order_not_found");
	return statusOf(deps, sender, found);
}

/**
 * Read-your-writes (./read-through.ts): when the stored state may lag behind
 * a newer booking attempt (`not_shipped`, `failed`), asks booking
 * (`deps.bookingState`: concurrent reads share one `booking.orderStates`
 * call, timeout BOOKING_STATE_TIMEOUT_MS) and answers
 * booking's state when its attempt is newer; when booking cannot be asked
 * (logged at debug), the stored record.
 */
async function statusOf(deps: IntakeDeps, sender: number, s: StoredStatus): Promise<StatusRecord> {
	if (!mayLag(s)) return s.record;
	let b: OrderBookingState | null = null;
	try {
		b = await deps.bookingState(sender, s.order_id);
	} catch (err) {
		deps.logger.debug(`status of order ${s.order_id}: booking not asked: ${(err as Error)?.message}`);
	}
	return readThrough(s, b);
}

/**
 * `intake.applyBookingUpdate`: applies `u` through the coalesced writer
 * (rules in ./store.ts `applyBookingUpdates`); `applied` false (logged at
 * debug) for a stale, duplicate or unknown-order update.
 */
export async function applyBookingUpdate(deps: IntakeDeps, u: BookingUpdate): Promise<{ applied: boolean }> {
	const applied = (await deps.bookingUpdates([u])).has(updateKey(u));
	if (!applied)
		deps.logger.debug("booking update not applied (stale, duplicate or unknown order)", {
			order_id: u.order_id,
			attempt_id: u.attempt_id,
			seq: u.seq,
		});
	return { applied };
}

/**
 * `intake.adoptOrphanOrders`: gives the sender's not-yet-shipped orders
 * without a pickup warehouse warehouse `warehouse_id` (./store.ts); logs
 * `orphan orders adopted` when any were. Answers `{count}`.
 */
export async function adoptOrphans(
	deps: IntakeDeps,
	sender_id: number,
	warehouse_id: number,
): Promise<{ count: number }> {
	const count = await adoptOrphanOrders(deps.db, sender_id, warehouse_id);
	if (count) deps.logger.info("orphan orders adopted", { sender_id, count });
	return { count };
}

/**
 * `intake.getOrder`: the sender's {@link OrderRecord} or null (./store.ts `getOrder`); `forBooking`
 * enters the order in `intake.booking_requests` first (booking is about to book it).
 */
export function orderRecord(
	deps: IntakeDeps,
	sender_id: number,
	order_id: number,
	forBooking = false,
): Promise<OrderRecord | null> {
	return getOrder(deps.db, sender_id, order_id, forBooking);
}

/** `intake.warehouseUsage`: the open orders shipping from the warehouse (./store.ts `warehouseUsage`). */
export function usageOf(deps: IntakeDeps, sender_id: number, warehouse_id: number): Promise<WarehouseUsage> {
	return warehouseUsage(deps.db, sender_id, warehouse_id);
}

/**
 * `intake.shippedCounts`: the sender's orders booked at or after `since` (a
 * Date or an ISO-8601 string), per pickup warehouse (./store.ts `shippedCounts`).
 */
export function shippedSince(
	deps: IntakeDeps,
	sender_id: number,
	since: Date | string,
): Promise<Record<string, number>> {
	// the validator has converted the ISO string to a Date; new Date() reads either
	return shippedCounts(deps.db, sender_id, new Date(since));
}
