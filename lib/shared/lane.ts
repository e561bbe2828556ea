/**
 * The lane an order is priced on (`rates.quote` params), from our records:
 * used by booking to price and book it, and by billing to price a courier's
 * weight against ours (docs/decisions/0105-weight-discrepancies.md), so both
 * price the same lane the same way. Units: kg, cm, rupees.
 */
import type { OrderRecord, QuoteParams, Warehouse } from "../contracts";
import { codAmountOf } from "./cod-amount";

/** kg (finite, ≥ 0) → whole grams, rounding UP (0.51 kg → 510 g; float noise below 1 µg ignored). */
export function kgToGrams(kg: number): number {
	return Math.max(0, Math.ceil(kg * 1000 - 1e-6));
}

/** Volumetric divisor used to give `rates.quote` a volumetric weight (cm³/kg; the most common one). */
export const VOLUMETRIC_DIVISOR = 5000;

/** Dimensions in cm. */
export interface Dimensions {
	length: number;
	width: number;
	height: number;
}

/** The order's dimensions in cm, or null when any is missing or not positive. */
export function dimensionsOf(order: OrderRecord): Dimensions | null {
	const [length, width, height] = [order.product.length, order.product.width, order.product.height].map(
		Number,
	);
	return length > 0 && width > 0 && height > 0 ? { length, width, height } : null;
}

/** Volumetric weight in kg of dimensions in cm (L × W × H / {@link VOLUMETRIC_DIVISOR}, to the gram); 0 for none. */
export function volumetricKg(d: Dimensions | null): number {
	return d ? Math.round(((d.length * d.width * d.height) / VOLUMETRIC_DIVISOR) * 1000) / 1000 : 0;
}

/**
 * The lane to price for an order (`rates.quote` params): pickup warehouse
 * pincode → consignee pincode, dead and volumetric weight (kg), the order's
 * payment mode (with `cod_amount` in rupees, {@link codAmountOf}, only when
 * COD) and direction (a reverse order prices the return leg of that lane);
 * `logistic_id` prices one courier only. `measured` replaces the order's
 * weight (kg) and dimensions (cm) — a courier's — when given.
 */
export function laneOf(
	order: OrderRecord,
	warehouse: Warehouse,
	logistic_id?: number,
	measured?: { weight: number; dims: Dimensions | null },
): QuoteParams {
	const cod = order.payment_mode === "cod";
	return {
		from_pin: warehouse.pickup.pincode,
		to_pin: order.consignee.pincode,
		physical_weight: measured ? measured.weight : order.product.physical_weight,
		volumetric_weight: volumetricKg(measured ? measured.dims : dimensionsOf(order)),
		payment_mode: order.payment_mode,
		...(cod ? { cod_amount: codAmountOf(order) } : {}),
		direction: order.direction,
		...(logistic_id ? { logistic_id } : {}),
	};
}
