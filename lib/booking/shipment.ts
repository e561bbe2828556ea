/**
 * Builds what the courier needs from our records: the lane to price
 * (`rates.quote`) and the courier booking request.
 * Units: kg, cm, rupees.
 */
import type { OrderRecord, QuoteParams, Warehouse } from "../contracts";
import type { BookRequest } from "../couriers/types";
import { codAmountOf } from "../shared/cod-amount";
import { returnDestination } from "../shared/warehouse-legs";

/** Volumetric divisor used to give `rates.quote` a volumetric weight (cm³/kg; the most common one). */
const VOLUMETRIC_DIVISOR = 5000;

/** The order's dimensions in cm, or null when any is missing or not positive. */
function dimensionsOf(order: OrderRecord): { length: number; width: number; height: number } | null {
	const [length, width, height] = [order.product.length, order.product.width, order.product.height].map(
		Number,
	);
	return length > 0 && width > 0 && height > 0 ? { length, width, height } : null;
}

/** Volumetric weight in kg from the order's dimensions (0 when any is missing). */
function volumetricWeight(order: OrderRecord): number {
	const d = dimensionsOf(order);
	return d ? Math.round(((d.length * d.width * d.height) / VOLUMETRIC_DIVISOR) * 1000) / 1000 : 0;
}

/**
 * The lane to price for an order (`rates.quote` params): pickup warehouse
 * pincode → consignee pincode, dead and volumetric weight (kg), the order's
 * payment mode (with `cod_amount` in rupees, {@link codAmountOf}, only when
 * COD) and direction (a reverse order prices the return leg of that lane);
 * `logistic_id` prices one courier only.
 */
export function laneOf(order: OrderRecord, warehouse: Warehouse, logistic_id?: number): QuoteParams {
	const cod = order.payment_mode === "cod";
	return {
		from_pin: warehouse.pickup.pincode,
		to_pin: order.consignee.pincode,
		physical_weight: order.product.physical_weight,
		volumetric_weight: volumetricWeight(order),
		payment_mode: order.payment_mode,
		...(cod ? { cod_amount: codAmountOf(order) } : {}),
		direction: order.direction,
		...(logistic_id ? { logistic_id } : {}),
	};
}

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
