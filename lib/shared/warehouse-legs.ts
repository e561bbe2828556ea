/**
 * The one rule for where an undelivered (RTO) or returned parcel goes, shared
 * by everything that prints or sends a return address: the label (documents)
 * and the courier booking request (booking). Keeping it in one place means a
 * label never shows a different return address than the one the courier was
 * given. A warehouse's own return leg (`return_to`) is built by the
 * warehouses service (lib/warehouses/rows.ts, spec §2.9).
 */
import type { Warehouse, WarehouseLeg } from "../contracts";

/**
 * Where an undelivered or returned parcel of an order goes: the RTO
 * warehouse's pickup leg when the order names an `rto_address_id` other than
 * its pickup warehouse; otherwise the pickup warehouse's `return_to`. Null
 * when neither warehouse is known.
 */
export function returnDestination(pickup: Warehouse | null, rto: Warehouse | null): WarehouseLeg | null {
	if (rto && (!pickup || rto.id !== pickup.id)) return rto.pickup;
	return pickup ? pickup.return_to : null;
}
