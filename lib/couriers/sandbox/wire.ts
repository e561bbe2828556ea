/**
 * Wire format of the sandbox couriers: a Delhivery-B2C-like JSON API served
 * by the simulator (services/simulator.service.ts) under `/couriers/<code>`.
 * Only lib/couriers/sandbox and the simulator (which plays the courier) use
 * these shapes; the rest of the system sees lib/couriers/types.ts.
 *
 * Endpoints (all need `Authorization: Token <token>`):
 * - `POST /api/cmu/create.json` form `format=json&data=<WireCreateRequest JSON>` → {@link WireCreateResponse}
 * - `GET  /api/v1/packages/json/?refnum=<ref>` or `?waybill=<awb>` → {@link WireTrackResponse}
 * - `POST /api/p/edit` JSON {@link WireCancelRequest} → {@link WireCancelResponse}
 * - `POST /api/backend/clientwarehouse/create/` JSON {@link WireWarehouse} → {@link WireWarehouseResponse}
 * Weights are grams on this wire (as at Delhivery), dimensions cm, money rupees.
 */

/** One shipment of a create call. `order` is our client reference (the courier dedupes on it). */
export interface WireShipment {
	name: string;
	add: string;
	add_2?: string | null;
	city: string;
	state: string;
	pin: string;
	country: string;
	phone: string;
	email?: string | null;
	/** client reference (our booking attempt id) */
	order: string;
	/** the merchant's order number, printed on the label */
	client_order_no: string;
	/** "Prepaid" | "COD" | "Pickup" (reverse) */
	payment_mode: "Prepaid" | "COD" | "Pickup";
	cod_amount: number;
	total_amount: number;
	/** grams */
	weight: number;
	shipment_length?: number;
	shipment_width?: number;
	shipment_height?: number;
	products_desc: string;
	seller_name: string;
	return_name: string;
	return_add: string;
	return_city: string;
	return_state: string;
	return_pin: string;
	return_phone: string;
	return_country: string;
}

export interface WireCreateRequest {
	shipments: WireShipment[];
	pickup_location: { name: string };
}

export interface WirePackage {
	waybill: string;
	refnum: string;
	status: "Success" | "Fail";
	sort_code: string | null;
	remarks: string[];
}

export interface WireCreateResponse {
	success: boolean;
	package_count: number;
	packages: WirePackage[];
	/** overall remark (refusals) */
	rmk?: string;
}

export interface WireScan {
	Scan: string;
	ScanType: string;
	StatusCode: string;
	ScannedLocation: string;
	/** ISO-8601 */
	ScanDateTime: string;
	Instructions: string;
}

export interface WireTrackShipment {
	AWB: string;
	ReferenceNo: string;
	SortCode: string | null;
	Status: {
		Status: string;
		StatusType: string;
		StatusCode: string;
		StatusLocation: string;
		StatusDateTime: string;
		Instructions: string;
	};
	Scans: { ScanDetail: WireScan }[];
}

export interface WireTrackResponse {
	ShipmentData: { Shipment: WireTrackShipment }[];
	Error?: string;
}

export interface WireCancelRequest {
	waybill: string;
	cancellation: "true";
}

export interface WireCancelResponse {
	status: boolean;
	waybill: string;
	remark?: string;
	error?: string;
}

export interface WireWarehouse {
	/** pickup location name (our warehouse code) */
	name: string;
	registered_name: string;
	phone: string;
	email?: string | null;
	address: string;
	address_2?: string | null;
	city: string;
	state: string;
	pin: string;
	country: string;
	return_address: string;
	return_city: string;
	return_state: string;
	return_pin: string;
	return_country: string;
	gstin?: string | null;
}

export interface WireWarehouseResponse {
	success: boolean;
	data?: { name: string; pincode: string; message: string };
	error?: string[];
}

/**
 * Words that open the courier's refusal of a shipment whose pickup location is
 * not registered (the simulator says it; the mapper recognises it).
 */
export const UNKNOWN_PICKUP_MARKER = "ClientWarehouse matching query does not exist";

/** One normalized tracking event and its wire rendering. */
export interface ScanKind {
	/** our normalized code (TrackingScan.code) */
	code: string;
	Scan: string;
	ScanType: string;
	StatusCode: string;
}

/**
 * Scan kinds the sandbox couriers emit, keyed by our normalized code (the
 * ARCHITECTURE §4 sandbox events plus `manifested` and `cancelled`).
 */
export const SCAN_KINDS: Record<string, ScanKind> = {
	manifested: { code: "manifested", Scan: "Manifested", ScanType: "UD", StatusCode: "X-UCI" },
	picked_up: { code: "picked_up", Scan: "Picked Up", ScanType: "PU", StatusCode: "X-PPOM" },
	in_transit: { code: "in_transit", Scan: "In Transit", ScanType: "UD", StatusCode: "X-DLL2F" },
	out_for_delivery: { code: "out_for_delivery", Scan: "Dispatched", ScanType: "UD", StatusCode: "X-DDD3FD" },
	delivered: { code: "delivered", Scan: "Delivered", ScanType: "DL", StatusCode: "EOD-38" },
	undelivered: { code: "undelivered", Scan: "Pending", ScanType: "UD", StatusCode: "EOD-74" },
	rto_initiated: { code: "rto_initiated", Scan: "RTO Initiated", ScanType: "RT", StatusCode: "RT-101" },
	rto_delivered: { code: "rto_delivered", Scan: "RTO Delivered", ScanType: "DL", StatusCode: "RT-110" },
	cancelled: { code: "cancelled", Scan: "Canceled", ScanType: "CN", StatusCode: "X-CN" },
};
