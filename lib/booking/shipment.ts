/**
 * Builds what the courier needs from our records: the courier booking
 * request (the lane to price is lib/shared/lane.ts `laneOf`).
 * Units: kg, cm, rupees.
 */
import type { OrderRecord, Warehouse } from "../contracts";
import type { BookRequest } from "../couriers/types";
import { codAmountOf } from "../shared/cod-amount";
import { dimensionsOf } from "../shared/lane";
import { returnDestination } from "../shared/warehouse-legs";

/**
 * The courier request of attempt `attempt_id`: our attempt id is the courier's
 * client reference (it dedupes on it). The consignee's landmark is folded into
 * `address_2` ("address_2, landmark"); the pickup address is the pickup
 * warehouse's pickup leg; the return address follows the one rule of
 * lib/shared/warehouse-legs.ts `returnDestination` (the label prints the same), with
 * `rto` the order's RTO warehouse when it names another one.
 */
export function bookRequestOf(
	attempt_id: number,
	order: OrderRecord,
	pickup: Warehouse,
	rto?: Warehouse | null,
): BookRequest {
	const p = order.product;
	const { landmark, ...consignee } = order.consignee;
	const address_2 = [consignee.address_2, landmark].filter((x) => x && String(x).trim()).join(", ") || null;
	return {
		reference: String(attempt_id),
		order_no: order.customer_order_no,
		direction: order.direction,
		payment: order.payment_mode,
		cod_amount: codAmountOf(order),
		declared_value: p.declared_order_total,
		weight_kg: p.physical_weight,
		dimensions_cm: dimensionsOf(order),
		product_description: p.product_name,
		pickup_location_code: pickup.warehouse_code,
		pickup: pickup.pickup,
		consignee: { ...consignee, address_2 },
		// never null: the pickup warehouse is known
		return_address: returnDestination(pickup, rto ?? null)!,
	};
}
