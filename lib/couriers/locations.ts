/**
 * Our warehouses in the courier-neutral shapes of lib/couriers/types.ts: the
 * pickup location a courier registers (named by our `warehouse_code`). The
 * legs and the return rule come with the contract `Warehouse`
 * (lib/warehouses/rows.ts builds it).
 */
import type { Warehouse } from "../contracts";
import type { PickupLocation } from "./types";

/**
 * The warehouse as a courier pickup location (spec §2.9): `address` = its
 * pickup leg, `return_address` = its return leg (`return_to`, the return rule
 * already applied), named by `warehouse_code`, with the business name and GSTIN.
 */
export function pickupLocationOf(w: Warehouse): PickupLocation {
	return {
		warehouse_code: w.warehouse_code,
		warehouse_name: w.pickup.warehouse_name,
		address: w.pickup,
		return_address: w.return_to,
		gstin: w.gstin,
	};
}
