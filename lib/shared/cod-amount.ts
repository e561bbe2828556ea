/**
 * The COD amount rule (spec §2.1), shared by booking (quotes, the courier
 * booking request) and documents (labels, manifests) so they print and send
 * the same amount (docs/decisions/0092-platform-layering.md: lib/shared holds
 * domain rules several services apply). Units: rupees.
 */
import type { OrderRecord } from "../contracts";

/**
 * The amount in rupees the courier collects on delivery: 0 for a prepaid
 * order; for a COD order its `cod_amount` when positive, else its declared
 * order total (spec §2.1). The one rule for booking, quotes and labels.
 */
export function codAmountOf(order: OrderRecord): number {
	if (order.payment_mode !== "cod") return 0;
	const a = order.product.cod_amount;
	return a !== null && a !== undefined && a > 0 ? a : order.product.declared_order_total;
}
