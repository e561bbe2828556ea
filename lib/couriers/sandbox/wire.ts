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
 * - `GET  /api/p/packing_slip?wbns=<awb>` → the courier's label file (`application/pdf`, one 4 × 6 page) for a
 *   courier that issues its own labels; unknown AWB → 200 JSON {@link WirePackingSlipEmpty}; a courier that
 *   issues none → 404 JSON `{error}`
 * - `POST /api/p/update` JSON {@link WireNdrRequest} → {@link WireNdrResponse} (NDR actions: `RE-ATTEMPT`,
 *   `DEFER_DLV` with `action_data.deferred_date`, `EDIT_DETAILS` with `action_data.phone` / `add` / `pin`)
 * Weights are grams on this wire (as at Delhivery), dimensions cm, money rupees.
 * `?waybill=` takes up to 50 comma-separated AWBs and answers every one it knows.
 *
 * Scan push (courier → us): {@link WirePushScan} or an array of them, POSTed
 * to the URL the simulator is given (`SANDBOX_SCAN_PUSH_URL`), signed with
 * {@link PUSH_TIMESTAMP_HEADER} and {@link PUSH_SIGNATURE_HEADER} (./signature.ts).
 */
import type { ShipmentStatus } from "../../shared/shipment-status";

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

/**
 * `POST /fm/request/new/` (Delhivery's pickup request, as the simulator serves it per sandbox
 * courier) and the sandbox's own `POST /fm/request/<pickup_id>/edit/` (same body: the new day,
 * time and count). Date `YYYY-MM-DD` and time `HH:mm:ss`, both IST.
 */
export interface WirePickupRequest {
	pickup_location: string;
	pickup_date: string;
	pickup_time: string;
	expected_package_count: number;
}

/**
 * Answer of the pickup calls: 201 (new) / 200 (edit, cancel) with the pickup's id and what the
 * courier holds; a refusal is 400 `{error:{message}}` (plus `pr_exist: true` for a second request
 * for the same location and day). `POST /fm/request/<pickup_id>/cancel/` answers `status: "cancelled"`.
 */
export interface WirePickupResponse {
	pickup_id?: number | string;
	pickup_location_name?: string;
	pickup_date?: string;
	pickup_time?: string;
	expected_package_count?: number;
	status?: "open" | "cancelled";
	pr_exist?: boolean;
	error?: { message?: string };
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

/**
 * One pushed scan (Delhivery's scan-push webhook shape): the sandbox courier
 * POSTs one of these, or an array of them, to our webhook route, signed with
 * `x-sandbox-timestamp: <unix seconds>` and `x-sandbox-signature:
 * sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">` (./signature.ts). One scan per entry; `StatusDateTime` ISO-8601 (a time
 * without a zone is India Standard Time, as at Delhivery).
 */
export interface WirePushScan {
	Shipment: {
		AWB: string;
		Status: {
			/** the courier's words, e.g. "Delivered" */
			Status: string;
			StatusCode: string;
			/** UD | PU | PP | DL | RT | CN | LT … */
			StatusType: string;
			StatusLocation: string;
			StatusDateTime: string;
			Instructions: string;
		};
	};
}

/** Answer of `GET /api/p/packing_slip` when no package matches the asked waybills (Delhivery's shape). */
export interface WirePackingSlipEmpty {
	packages_found: 0;
	packages: [];
}

/** NDR act names on the wire (Delhivery's `act`, the same strings as our `NdrAct`). */
export type WireNdrAct = "RE-ATTEMPT" | "DEFER_DLV" | "EDIT_DETAILS";

/**
 * One NDR act of `POST /api/p/update` (Delhivery's shape). `action_data`:
 * DEFER_DLV `{deferred_date: "YYYY-MM-DD"}`; EDIT_DETAILS the new `phone`
 * (10 digits) and/or address `add` (one line: address lines, landmark, city,
 * state) and `pin`; absent for RE-ATTEMPT.
 */
export interface WireNdrAction {
	waybill: string;
	act: WireNdrAct;
	action_data?: {
		deferred_date?: string;
		phone?: string;
		add?: string;
		pin?: string;
	};
}

/** Body of `POST /api/p/update`: the acts of one upload. */
export interface WireNdrRequest {
	data: WireNdrAction[];
}

/** Outcome of one act of an upload. */
export interface WireNdrPackage {
	waybill: string;
	act: string;
	status: "Success" | "Fail";
	/** the courier's words (refusal reason, or "Request accepted") */
	remarks: string;
}

/**
 * Answer of `POST /api/p/update`. Delhivery answers an upload id
 * (`request_id`, `UPL…`) and evaluates the acts later; the sandbox evaluates
 * them at once and answers each act's outcome in `packages`: `success` is
 * true when every act was accepted, else `error` joins the refusals.
 */
export interface WireNdrResponse {
	success: boolean;
	request_id?: string;
	packages?: WireNdrPackage[];
	error?: string;
}

/** Header carrying the signature of a pushed scan body (lower-cased, as node delivers headers). */
export const PUSH_SIGNATURE_HEADER = "x-sandbox-signature";

/** Header carrying the unix time (seconds) a scan body was signed at, covered by the signature. */
export const PUSH_TIMESTAMP_HEADER = "x-sandbox-timestamp";

/**
 * Scan kinds of the sandbox couriers, keyed like {@link ShipmentStatus} but `booked`: the `manifested` kind is the
 * courier's create scan (X-UCI "Manifested"), which the mapper reads as our `booked` (our Ready-for-pickup comes from
 * our own manifest, §3).
 */
export type SandboxScanStatus = Exclude<ShipmentStatus, "booked">;

/** One normalized tracking event and its wire rendering. */
export interface ScanKind {
	/** the normalized status this scan means (TrackingScan.status) */
	code: SandboxScanStatus;
	/** the courier's words */
	Scan: string;
	/** Delhivery status type: UD undelivered (forward, moving), PU picked up, PP pickup pending, DL delivered, RT returning, CN cancelled, LT lost */
	ScanType: string;
	/** the courier's own status code */
	StatusCode: string;
}

/**
 * Scan kinds the sandbox couriers emit, one per normalized status but
 * `booked` (the compiler checks that none is missing). The simulator stores
 * scans by these keys; the mapper reads them back by `StatusCode`.
 */
export const SCAN_KINDS: Record<SandboxScanStatus, ScanKind> = {
	manifested: { code: "manifested", Scan: "Manifested", ScanType: "UD", StatusCode: "X-UCI" },
	pickup_scheduled: {
		code: "pickup_scheduled",
		Scan: "Pickup Scheduled",
		ScanType: "UD",
		StatusCode: "X-ASP",
	},
	picked_up: { code: "picked_up", Scan: "Picked Up", ScanType: "PU", StatusCode: "X-PPOM" },
	in_transit: { code: "in_transit", Scan: "In Transit", ScanType: "UD", StatusCode: "X-DLL2F" },
	out_for_delivery: { code: "out_for_delivery", Scan: "Dispatched", ScanType: "UD", StatusCode: "X-DDD3FD" },
	delivered: { code: "delivered", Scan: "Delivered", ScanType: "DL", StatusCode: "EOD-38" },
	undelivered: { code: "undelivered", Scan: "Pending", ScanType: "UD", StatusCode: "EOD-74" },
	rto_initiated: { code: "rto_initiated", Scan: "RTO Initiated", ScanType: "RT", StatusCode: "RT-101" },
	rto_in_transit: { code: "rto_in_transit", Scan: "In Transit", ScanType: "RT", StatusCode: "RT-102" },
	rto_delivered: { code: "rto_delivered", Scan: "RTO Delivered", ScanType: "DL", StatusCode: "RT-110" },
	lost: { code: "lost", Scan: "Lost", ScanType: "LT", StatusCode: "LT-100" },
	damaged: { code: "damaged", Scan: "Damaged", ScanType: "UD", StatusCode: "ST-108" },
	cancelled: { code: "cancelled", Scan: "Canceled", ScanType: "CN", StatusCode: "X-CN" },
};

/** The scan kind stored under `code` (a `simulator.scans.code`), or undefined for an unknown one. */
export function scanKindOf(code: string): ScanKind | undefined {
	return Object.hasOwn(SCAN_KINDS, code) ? SCAN_KINDS[code as SandboxScanStatus] : undefined;
}
