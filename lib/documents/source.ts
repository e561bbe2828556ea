/**
 * Gathers what one label needs from the services that own it (lib/contracts):
 * the order (intake), its live shipment (booking) and the pickup / RTO
 * warehouses (warehouses). Two steps, so a caller can read its own rows (the
 * stored label of the AWB) alongside the warehouses. Shared by the single
 * label and, later, bulk labels.
 */
import { type Caller, type CallOptions, call, type OrderRecord, type Warehouse } from "../contracts";
import { type ApiError, fail } from "../platform/errors";
import { isPrintableAwb, type LabelSource } from "./data";

/** 404 `{message:"not found"}`: the order is not the caller's or does not exist (identical answers, spec §1 rule 4). */
export const labelNotFound = () => fail("documents.not_found");

/** 409 `{code:"not_ready_to_ship", message}`: the order holds no live booked shipment yet. */
export const notBooked = () => fail("not_ready_to_ship", "single");

/** Seconds in the `Retry-After` of a 409 `carrier_label_missing` whose capture is still pending. */
export const CAPTURE_RETRY_AFTER_S = 1;

/**
 * 409 `{code:"carrier_label_missing", message}` (spec §7): the courier issues
 * its own label and it was not captured. `pending` (no capture recorded yet:
 * the booking's capture row is still on its way or being retried) says so in
 * the message and sets `data.retry_after` ({@link CAPTURE_RETRY_AFTER_S}),
 * which the gateway answers as `Retry-After`; a capture recorded as missing
 * (the courier definitively has no file) has no `Retry-After`.
 */
export function carrierLabelMissing(pending = false): ApiError {
	return withRetryAfter(fail("carrier_label_missing", pending), pending);
}

/**
 * Marks `err` as worth retrying after {@link CAPTURE_RETRY_AFTER_S} seconds
 * (`data.retry_after`, kept beside `data.body` across NATS) when `pending`.
 */
export function withRetryAfter(err: ApiError, pending: boolean): ApiError {
	if (pending) err.data = { ...(err.data as object), retry_after: CAPTURE_RETRY_AFTER_S };
	return err;
}

/**
 * Options of the collaborator calls: a failure is rethrown as it came (the
 * gateway answers an unreachable service 503 `service_unavailable`, anything
 * else 500), as the label route always has.
 */
const PASS_THROUGH: CallOptions = { unavailable: false };

/** Reads a warehouse of the account, retired ones included; null when unknown. */
async function warehouse(via: Caller, sender_id: number, id: number | null): Promise<Warehouse | null> {
	if (!id) return null;
	const w = await call(via, "warehouses.get", { sender_id, id, include_retired: true }, PASS_THROUGH);
	return w ?? null;
}

/**
 * The caller's order `order_id` and its live booked shipment (intake and
 * booking, read in parallel).
 * Throws 404 `{message:"not found"}` when the order is missing or another
 * account's; 409 `not_ready_to_ship` when it holds no live booked shipment
 * (not booked, booking in progress, failed or cancelled); an Error when the
 * courier's AWB is not printable (corrupt data, never expected).
 */
export async function loadBookedOrder(
	via: Caller,
	sender_id: number,
	order_id: number,
): Promise<Pick<LabelSource, "order" | "shipment">> {
	const [order, shipment] = await Promise.all([
		call(via, "intake.getOrder", { sender_id, order_id }, PASS_THROUGH),
		call(via, "booking.getShipment", { sender_id, order_id }, PASS_THROUGH),
	]);
	if (!order || Number(order.sender_id) !== sender_id || Number(order.order_id) !== order_id)
		throw labelNotFound();
	if (shipment?.state !== "booked" || !shipment.awb_number || Number(shipment.order_id) !== order_id)
		throw notBooked();
	if (!isPrintableAwb(shipment.awb_number))
		throw new Error(`shipment of order ${order_id} has an unprintable AWB`);
	return { order, shipment };
}

/**
 * The order's pickup warehouse and, when `rto_address_id` names another one,
 * its RTO warehouse (warehouses, read in parallel, retired ones included);
 * null for any the caller does not hold.
 */
export async function loadWarehouses(
	via: Caller,
	sender_id: number,
	order: OrderRecord,
): Promise<Pick<LabelSource, "pickup" | "rto">> {
	const pickupId = order.pickup_address_id;
	const rtoId = order.rto_address_id && order.rto_address_id !== pickupId ? order.rto_address_id : null;
	const [pickup, rto] = await Promise.all([
		warehouse(via, sender_id, pickupId),
		warehouse(via, sender_id, rtoId),
	]);
	return { pickup, rto };
}
