/**
 * Shapes that cross service boundaries (internal Moleculer actions over NATS).
 * Units: weights kg, dimensions cm, money on the wire in rupees (numbers with at
 * most 2 decimals; stored as integer paise), timestamps ISO-8601 UTC strings.
 *
 * Internal actions (not aliased at the gateway unless listed in gateway.service.ts):
 *
 * pincode.info          {pincode}                      -> PincodeInfo (pincode.lookup is the public §4.7 answer)
 * pincode.lookupMany    {pincodes: string[]}           -> Record<pincode, PincodeInfo>
 * rates.quote           QuoteParams                    -> QuoteResult (never throws lane_not_priced)
 * rates.listCouriers    {shipment_type?: 0|1}          -> CourierInfo[] (active couriers, default priority order)
 * rates.getCourier      {logistic_id}                  -> CourierInfo | null
 * warehouses.resolve    {sender_id, id}                -> WarehouseRow | null (active, caller's)
 * warehouses.get        {sender_id, id, include_retired?} -> WarehouseRow | null (caller's)
 *
 * Broadcast events (notifications, never state): warehouses.changed {sender_id, id},
 * pincode.changed {}, rates.changed {} (reference data reloaded: drop caches)
 * intake.getOrder       {sender_id, order_id}          -> OrderRecord | null (caller's)
 * intake.applyBookingUpdate BookingUpdate              -> {applied: boolean} (idempotent)
 * intake.warehouseUsage {sender_id, warehouse_id}      -> WarehouseUsage
 * intake.adoptOrphanOrders {sender_id, warehouse_id}   -> {count}
 * intake.shippedCounts  {sender_id, since}             -> Record<warehouse_id, number>
 * booking.getShipment   {sender_id, order_id}          -> ShipmentRecord | null (live booked shipment)
 */

/** Pincode directory answer (§4.7 plus zone facts). */
export interface PincodeInfo {
	found: boolean;
	pincode: string;
	/** District name of the chosen office (the city field of §4.7). */
	city: string;
	state: string;
	district?: string;
	/** Metro area name when the pincode is in a metro (zone C), else null. */
	metro?: string | null;
	/** True for north-east / J&K / Ladakh / islands / other special regions (zone E). */
	special?: boolean;
}

/** `rates.quote` input (§4.2 serviceable query, parsed). */
export interface QuoteParams {
	from_pin: string;
	to_pin: string;
	/** kg, > 0 */
	physical_weight: number;
	/** kg, default 0 */
	volumetric_weight?: number;
	/** 1 = COD, anything else prepaid */
	order_type?: number;
	/** rupees, COD amount */
	collectable_amount?: number;
	/** "reverse" prices the return leg */
	operation?: "forward" | "reverse";
	/** price only this courier */
	logistic_id?: number;
}

/** One element of `data` (§2.7). Money in rupees. */
export interface Quote {
	logistic_id: number;
	courier_name: string;
	total: number;
	cod_charge: number;
	freight_charge: number;
	shipping_charge_tax: number;
	zone: "A" | "B" | "C" | "D" | "E";
	/** chargeable weight in kg (rounded up to the slab) */
	weight: number;
	rto_charge: number;
	/** null until the lane has enough history; avg_tat_days null when nothing was delivered yet */
	performance: { delivered_pct: number; rto_pct: number; avg_tat_days: number | null } | null;
}

/** One element of `dropped_couriers` (§2.7). */
export interface DroppedCourier {
	logistic_id: number;
	logistic_name: string;
	reason: string;
	detail: string;
}

export interface QuoteResult {
	data: Quote[];
	dropped_couriers: DroppedCourier[];
}

/** A courier as the rates service knows it. */
export interface CourierInfo {
	logistic_id: number;
	logistic_name: string;
	/** adapter key in lib/couriers (e.g. "sandbox") */
	adapter: string;
	/** adapter-specific code (e.g. the simulator's courier code) */
	code: string;
	forward: boolean;
	reverse: boolean;
	cod: boolean;
	/** default AUTO position (1 = first) */
	default_priority: number;
	active: boolean;
}

/** Warehouse row (§2.9 list row). */
export interface WarehouseRow {
	id: number;
	warehouse_name: string;
	contact_person_name: string;
	contact_no: string;
	contact_email: string | null;
	address_line_1: string;
	address_line_2: string | null;
	city: string;
	state: string;
	pincode: string;
	gstin: string | null;
	warehouse_type: "fulfillment_pickup" | "pickup" | "fulfillment";
	is_return_same: boolean;
	return_warehouse_name?: string | null;
	return_contact_person_name: string | null;
	return_contact_no: string | null;
	return_address_line_1: string | null;
	return_address_line_2: string | null;
	return_city: string | null;
	return_state: string | null;
	return_pincode: string | null;
	active: boolean;
	retired: boolean;
	is_default: boolean;
	warehouse_code: string;
	courier_registered: boolean;
	shipped_30d: number;
}

/** Booking state of an order (§2.4, §3). */
export type BookingState = "not_shipped" | "booking_in_progress" | "booked" | "failed";

/** The order aggregate as intake returns it internally. Money in rupees. */
export interface OrderRecord {
	order_id: number;
	sender_id: number;
	/** stored reference (with `-R` for returns) */
	customer_order_no: string;
	shipment_type: 0 | 1;
	channel: string | null;
	order_type: 0 | 1;
	pickup_address_id: number | null;
	rto_address_id: number | null;
	receiver: {
		name: string;
		address_1: string;
		address_2?: string | null;
		landmark?: string | null;
		city?: string | null;
		state?: string | null;
		pincode: string;
		mobile_no: string;
	};
	product: {
		product_name: string;
		product_sku?: string | null;
		physical_weight: number;
		declared_order_total: number;
		cod_amount?: number | null;
		length?: number | null;
		width?: number | null;
		height?: number | null;
	};
	/** reverse orders only */
	reverse?: Record<string, unknown> | null;
	state: BookingState;
	status: string;
	awb_number: string | null;
	courier: string | null;
	logistic_id: number | null;
	failure_reason: string | null;
	created_at: string;
}

/** Booking progress reported by booking to intake (outbox → acknowledged call). */
export interface BookingUpdate {
	order_id: number;
	sender_id: number;
	/** booking attempt id; updates of an older attempt never overwrite a newer one */
	attempt_id: number;
	/** monotonically increasing per attempt (1 queued, 2 booked/failed) */
	seq: number;
	state: BookingState;
	status: string;
	awb_number?: string | null;
	courier?: string | null;
	logistic_id?: number | null;
	failure_reason?: string | null;
}

/** §4.5 409 warehouse_in_use body parts. */
export interface WarehouseUsage {
	count: number;
	unshipped: number;
	awaiting_pickup: number;
	order_ids: number[];
}

/** A live shipment (booking attempt that holds an AWB). Money in rupees. */
export interface ShipmentRecord {
	order_id: number;
	attempt_id: number;
	logistic_id: number;
	courier_name: string;
	awb_number: string;
	state: BookingState;
	/** sort / routing code from the courier, if any */
	routing_code: string | null;
	charges: { freight_charge: number; cod_charge: number; shipping_charge_tax: number; total: number } | null;
	booked_at: string;
}
