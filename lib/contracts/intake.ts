/**
 * Contract of the `intake` service (spec §2.1–§2.4, §4.1, §4.3): the order
 * aggregate, with the booking state and lifecycle status other services
 * report to it.
 */
import type { Address, BookingState, HttpParams, PaymentMode, ShipmentDirection } from "./common";

/** The parcel of an order. kg, cm, rupees. */
export interface OrderProduct {
	product_name: string;
	product_sku: string | null;
	/** kg */
	physical_weight: number;
	/** rupees */
	declared_order_total: number;
	/** rupees; null unless the order is COD */
	cod_amount: number | null;
	/** cm; null when not given */
	length: number | null;
	width: number | null;
	height: number | null;
}

/** What a return (reverse order, §2.2) carries besides the forward fields. */
export interface ReverseDetails {
	forward_source: string | null;
	old_fwd_awb_no: string | null;
	reverse_pickup_address_id: number | null;
	/** where the buyer's return is collected, as the merchant sent it (spec field names) */
	return_address: Record<string, unknown> | null;
}

/** The order aggregate as intake answers it internally. Money in rupees; timestamps ISO-8601 UTC. */
export interface OrderRecord {
	order_id: number;
	sender_id: number;
	/** stored reference (with `-R` for returns) */
	customer_order_no: string;
	direction: ShipmentDirection;
	channel: string | null;
	payment_mode: PaymentMode;
	pickup_address_id: number | null;
	rto_address_id: number | null;
	/** who receives a forward parcel, or where a return is collected (the spec's `receiver`) */
	consignee: Address;
	product: OrderProduct;
	/** returns only */
	reverse: ReverseDetails | null;
	state: BookingState;
	status: string;
	awb_number: string | null;
	courier: string | null;
	logistic_id: number | null;
	failure_reason: string | null;
	created_at: string;
	order_date: string;
	order_from_source: string | null;
	booked_at: string | null;
	updated_at: string;
}

/** Booking progress reported by booking to intake (outbox → acknowledged call). */
export interface BookingUpdate {
	order_id: number;
	sender_id: number;
	/** booking attempt id; updates of an older attempt never overwrite a newer one */
	attempt_id: number;
	/**
	 * monotonically increasing per attempt (1 queued, 2 booked / failed / cancelled by the worker,
	 * 3 cancelled through POST /v1/shipping/cancel). Status `cancelled` releases the order number.
	 */
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

/** 201 `{order_id}` or 200 `{order_id, deduped:true}` (§4.1). */
export type CreateOrderResult = { order_id: number } | { order_id: number; deduped: true };

/** §2.4 booking status record. */
export interface StatusRecord {
	order_no: string;
	state: BookingState;
	awb_number: string | null;
	courier: string | null;
	status: string;
	failure_reason: string | null;
	/** ISO-8601 UTC */
	created_at: string;
}

type SenderOrder = { sender_id: number; order_id: number };
type SenderWarehouse = { sender_id: number; warehouse_id: number };

export interface IntakeActions {
	/** POST /v1/intake/order (§2.1, §4.1). */
	"intake.createOrder": { params: HttpParams; result: CreateOrderResult };
	/** POST /v1/intake/reverse (§2.2, §4.1). */
	"intake.createReverse": { params: HttpParams; result: CreateOrderResult };
	/** GET /v1/orders/status (§2.4, §4.3). */
	"intake.status": { params: HttpParams; result: StatusRecord };
	/** Internal: the sender's order, or null (missing and not theirs are the same). */
	"intake.getOrder": { params: SenderOrder; result: OrderRecord | null };
	/** Internal, from booking's outbox: idempotent and ordered by (attempt_id, seq). */
	"intake.applyBookingUpdate": { params: BookingUpdate; result: { applied: boolean } };
	/** Internal: open orders shipping from a warehouse (§4.5 `warehouse_in_use`). */
	"intake.warehouseUsage": { params: SenderWarehouse; result: WarehouseUsage };
	/** Internal: gives the sender's not-yet-shipped orders without a pickup warehouse this one (§4.5 `orders_repaired`). */
	"intake.adoptOrphanOrders": { params: SenderWarehouse; result: { count: number } };
	/** Internal: orders booked at or after `since` (ISO-8601) per pickup warehouse id (§2.9 `shipped_30d`). */
	"intake.shippedCounts": { params: { sender_id: number; since: string }; result: Record<string, number> };
}

export type IntakeEvents = Record<never, never>;
