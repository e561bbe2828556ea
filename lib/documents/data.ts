/**
 * Turns the other services' records (lib/contracts) into the printed
 * {@link LabelData} of one label (spec §4.4; DOMAIN "Labels").
 *
 * Decisions (documented for the README):
 * - The return address follows lib/shared/warehouse-legs.ts `returnDestination` (the
 *   same rule the courier booking request uses): the RTO warehouse's own
 *   address when the order names an `rto_address_id` other than the pickup
 *   warehouse; otherwise the pickup warehouse's return leg. Retired warehouses
 *   still print (the parcel was booked from them).
 * - Reverse orders (`direction` reverse): the parcel is picked up from the
 *   customer (`consignee`) and delivered to that return address; reverse
 *   labels are always PREPAID.
 * - COD amount: lib/shared/cod-amount.ts `codAmountOf` (the amount the courier
 *   is told to collect: `product.cod_amount`, or the declared order total when
 *   the order is COD and no separate amount was given).
 * - The consignee phone is printed in full: the delivery agent calls it.
 */

import type { OrderRecord, ShipmentRecord, Warehouse, WarehouseLeg } from "../contracts";
import { codAmountOf } from "../shared/cod-amount";
import { returnDestination } from "../shared/warehouse-legs";
import type { LabelAddress, LabelData } from "./label";

/** The printable-AWB rule lives with the signed links (lib/shared/label-link.ts), which every signer shares. */
export { AWB_PATTERN, isPrintableAwb } from "../shared/label-link";

function present(s: string | null | undefined): string | null {
	const t = typeof s === "string" ? s.trim() : "";
	return t ? t : null;
}

/** A warehouse leg as printed: the business name, street lines, and the contact person (`name`) beside the phone. */
export function labelAddressOf(leg: WarehouseLeg): LabelAddress {
	return {
		name: leg.warehouse_name,
		lines: [leg.address_1, leg.address_2 ?? ""].filter(Boolean),
		city: leg.city,
		state: leg.state,
		pincode: leg.pincode,
		phone: leg.phone,
		contact: leg.name,
	};
}

/** The customer's address (the order's `consignee`): street lines with the landmark; "" city/state print as absent. */
export function consigneeAddress(order: OrderRecord): LabelAddress {
	const c = order.consignee;
	const landmark = present(c.landmark);
	return {
		name: c.name,
		lines: [c.address_1, c.address_2 ?? "", landmark ? `Landmark: ${landmark}` : ""].filter(Boolean),
		city: present(c.city),
		state: present(c.state),
		pincode: c.pincode,
		phone: present(c.phone),
	};
}

/** Inputs gathered from intake, booking and warehouses for one label. */
export interface LabelSource {
	order: OrderRecord;
	shipment: ShipmentRecord;
	/** the order's pickup warehouse (include retired), null if unknown */
	pickup: Warehouse | null;
	/** the order's RTO warehouse when `rto_address_id` names another warehouse, else null */
	rto: Warehouse | null;
}

/** Builds the printed label from the records (pure; see the module notes for the decisions). */
export function buildLabelData(src: LabelSource): LabelData {
	const { order, shipment, pickup, rto } = src;
	const p = order.product;
	const reverse = order.direction === "reverse";
	const cod = !reverse && order.payment_mode === "cod";
	const customer = consigneeAddress(order);
	const destination = returnDestination(pickup, rto);
	const warehouseLeg = destination ? labelAddressOf(destination) : null;
	const dims =
		p.length && p.width && p.height && p.length > 0 && p.width > 0 && p.height > 0
			? { length: p.length, width: p.width, height: p.height }
			: null;
	return {
		awb_number: shipment.awb_number,
		courier_name: shipment.courier_name,
		routing_code: present(shipment.routing_code),
		direction: order.direction,
		payment: cod ? "COD" : "PREPAID",
		cod_amount: cod ? codAmountOf(order) : 0,
		declared_value: Number(p.declared_order_total ?? 0),
		weight_kg: Number(p.physical_weight ?? 0),
		dimensions_cm: dims,
		product_name: p.product_name,
		product_sku: present(p.product_sku),
		order_no: order.customer_order_no,
		order_id: order.order_id,
		order_date: order.created_at,
		// reverse: deliver to the warehouse leg, picked up from the customer
		ship_to: reverse ? (warehouseLeg ?? customer) : customer,
		from: reverse ? customer : warehouseLeg,
		seller: pickup ? { name: pickup.pickup.warehouse_name, gstin: present(pickup.gstin) } : null,
	};
}
