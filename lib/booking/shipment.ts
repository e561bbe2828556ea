/**
 * Builds what the courier needs from our records: the lane to price
 * (`rates.quote`) and the courier booking request.
 * Units: kg, cm, rupees.
 */
import type { OrderRecord, QuoteParams, WarehouseRow } from "../contracts";
import { courierAddressOf } from "../couriers/locations";
import type { BookRequest } from "../couriers/types";
import { forwardLeg, returnDestination } from "../warehouse-legs";

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
 * The lane to price for an order: pickup warehouse pincode → receiver pincode,
 * dead and volumetric weight, COD from the order, `operation: "reverse"` for
 * a return (the rates service prices the return leg of that lane).
 */
export function laneOf(order: OrderRecord, warehouse: WarehouseRow, logistic_id?: number): QuoteParams {
	const cod = order.order_type === 1;
	return {
		from_pin: warehouse.pincode,
		to_pin: order.receiver.pincode,
		physical_weight: order.product.physical_weight,
		volumetric_weight: volumetricWeight(order),
		order_type: cod ? 1 : 0,
		...(cod ? { collectable_amount: codAmount(order) } : {}),
		operation: order.shipment_type === 1 ? "reverse" : "forward",
		...(logistic_id ? { logistic_id } : {}),
	};
}

/** COD amount in rupees (the order's `cod_amount`, else its declared total). */
function codAmount(order: OrderRecord): number {
	if (order.order_type !== 1) return 0;
	const a = order.product.cod_amount;
	return a !== null && a !== undefined && a > 0 ? a : order.product.declared_order_total;
}

/**
 * The courier request of attempt `attempt_id`: our attempt id is the courier's
 * client reference (it dedupes on it). The return address follows the one rule
 * of lib/warehouse-legs.ts `returnDestination` (the label prints the same).
 */
export function bookRequestOf(
	attempt_id: number,
	order: OrderRecord,
	pickup: WarehouseRow,
	returnTo?: WarehouseRow | null,
): BookRequest {
	const p = order.product;
	const r = order.receiver;
	const address_2 = [r.address_2, r.landmark].filter((x) => x && String(x).trim()).join(", ") || null;
	return {
		reference: String(attempt_id),
		order_no: order.customer_order_no,
		shipment_type: order.shipment_type,
		payment: order.order_type === 1 ? "cod" : "prepaid",
		cod_amount: codAmount(order),
		declared_value: p.declared_order_total,
		weight_kg: p.physical_weight,
		dimensions_cm: dimensionsOf(order),
		product_description: p.product_name,
		pickup_location_code: pickup.warehouse_code,
		pickup: courierAddressOf(forwardLeg(pickup)),
		consignee: {
			name: r.name,
			phone: r.mobile_no,
			address_1: r.address_1,
			address_2,
			city: r.city ?? "",
			state: r.state ?? "",
			pincode: r.pincode,
		},
		// never null: the pickup warehouse is known
		return_address: courierAddressOf(returnDestination(pickup, returnTo ?? null)!),
	};
}
