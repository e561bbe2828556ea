/**
 * Our warehouses in the courier-neutral shapes of lib/couriers/types.ts: the
 * address given to a courier, and the pickup location it registers (named by
 * our `warehouse_code`). Legs and the return rule come from lib/warehouse-legs.ts.
 */
import { forwardLeg, returnLeg, type WarehouseAddressFields, type WarehouseLeg } from "../warehouse-legs";
import type { CourierAddress, PickupLocation } from "./types";

/** A warehouse leg as a courier address (the contact person is who the courier asks for). */
export function courierAddressOf(leg: WarehouseLeg): CourierAddress {
	return {
		name: leg.contact_person_name,
		phone: leg.contact_no,
		address_1: leg.address_line_1,
		address_2: leg.address_line_2,
		city: leg.city,
		state: leg.state,
		pincode: leg.pincode,
		email: leg.contact_email,
	};
}

/** The warehouse as a courier pickup location: its forward leg, its return leg, its GSTIN. */
export function pickupLocationOf(
	w: WarehouseAddressFields & { warehouse_code: string; gstin: string | null },
): PickupLocation {
	return {
		warehouse_code: w.warehouse_code,
		warehouse_name: w.warehouse_name,
		address: courierAddressOf(forwardLeg(w)),
		return_address: courierAddressOf(returnLeg(w)),
		gstin: w.gstin,
	};
}
