/**
 * Shapes shared by several services' contracts (docs/ARCHITECTURE.md §6 "The
 * contract between services is typed"). Inside the system a shipment's
 * direction and payment are words ({@link ShipmentDirection},
 * {@link PaymentMode}); the spec's numbers (`shipment_type` 0/1/2,
 * `order_type` 0/1) exist only at the HTTP edge and are converted by
 * {@link directionOf} / {@link paymentModeOf} there.
 *
 * Units everywhere: weights kg, dimensions cm, money on the wire in rupees
 * (numbers with at most 2 decimals; stored as integer paise), timestamps
 * ISO-8601 UTC strings.
 */
import type { AuthUser } from "../platform/auth";

/** Forward (seller → buyer) or reverse (buyer → seller, a return) shipment. Spec §2.2, §2.8. */
export type ShipmentDirection = "forward" | "reverse";

/** Prepaid or cash on delivery. Spec §2.1 (`order_type` 1 = COD at the edge). */
export type PaymentMode = "prepaid" | "cod";

/**
 * The spec's `shipment_type` number (§2.8: 0 forward, 1 or 2 reverse) as a
 * direction; undefined for anything else (the caller answers its 400).
 */
export function directionOf(shipment_type: unknown): ShipmentDirection | undefined {
	const n =
		typeof shipment_type === "string" && shipment_type.trim() !== "" ? Number(shipment_type) : shipment_type;
	if (n === 0) return "forward";
	if (n === 1 || n === 2) return "reverse";
	return undefined;
}

/** The spec's `order_type` (§2.1, §4.2: 1 = COD, anything else prepaid) as a payment mode. */
export function paymentModeOf(order_type: unknown): PaymentMode {
	return Number(order_type) === 1 ? "cod" : "prepaid";
}

/**
 * A postal address in India: who the courier hands the parcel to (or collects
 * it from) and where. The one address shape of the system: consignee,
 * warehouse legs, courier requests and labels all use it.
 */
export interface Address {
	/** the person the courier asks for */
	name: string;
	/** 10-digit Indian mobile number, stored without prefix */
	phone: string;
	email?: string | null;
	address_1: string;
	address_2?: string | null;
	landmark?: string | null;
	city: string;
	state: string;
	/** six digits, `^[1-9]\d{5}$` */
	pincode: string;
}

/** One leg of a warehouse (its pickup address or its return address): an {@link Address} plus the business name. */
export interface WarehouseLeg extends Address {
	/** the warehouse's (business) name, printed on labels and registered with couriers */
	warehouse_name: string;
}

/** Spec §2.9 warehouse types. */
export const WAREHOUSE_TYPES = ["fulfillment_pickup", "pickup", "fulfillment"] as const;
export type WarehouseType = (typeof WAREHOUSE_TYPES)[number];

/**
 * A merchant's warehouse as other services see it (`warehouses.resolve`,
 * `warehouses.get`). The spec's flat §2.9 row (`address_line_1`,
 * `return_city`, …) exists only at the HTTP edge (lib/warehouses/rows.ts).
 */
export interface Warehouse {
	id: number;
	sender_id: number;
	/** our stable code, the courier's pickup location name */
	warehouse_code: string;
	warehouse_type: WarehouseType;
	gstin: string | null;
	/** where couriers collect forward parcels */
	pickup: WarehouseLeg;
	/**
	 * where returned and undelivered parcels of this warehouse go: the
	 * `return_*` address, or the pickup leg when `is_return_same` or the
	 * return street or pincode is missing (each missing contact field falls
	 * back to the pickup one). Spec §2.9.
	 */
	return_to: WarehouseLeg;
	is_return_same: boolean;
	active: boolean;
	retired: boolean;
	is_default: boolean;
}

/** Booking state of an order (§2.4, §3). */
export type BookingState = "not_shipped" | "booking_in_progress" | "booked" | "failed";

/**
 * `ctx.meta` as this system uses it. `user` is set by the gateway from the
 * verified token (or by an internal caller acting for a merchant); the `$…`
 * keys are moleculer-web's response controls; `job` is set by the worker mixin.
 */
export interface CallMeta {
	user?: AuthUser;
	$statusCode?: number;
	$responseType?: string;
	$responseHeaders?: Record<string, string>;
	$location?: string;
	job?: { id?: string; name?: string; attemptsMade?: number };
}

/** Params of a gateway-facing action: path, query (strings) and JSON body merged, validated by the action. */
export type HttpParams = Record<string, unknown>;

/**
 * Params of every action served by the gateway's
 * upload route (the bulk order upload, a weight dispute; set by the gateway, lib/gateway/upload.ts, never by the
 * client; issue 25): the request's query string, its `Content-Type` header and
 * the route's path parameters; the multipart body itself is `ctx.stream`.
 */
export interface UploadParams {
	/** the query string (flat strings; `sender_address_id` may be given there) */
	query: HttpParams;
	/** the request's Content-Type ("" when none) */
	content_type: string;
	/**
	 * the route's path parameters by name, as flat strings decoded from the URL
	 * (`{id: "7"}` for `POST /v1/weight-discrepancies/7/dispute`; `{}` for
	 * `POST /v1/intake/bulk`, which has none); never taken from the query
	 */
	path: Record<string, string>;
}
