/**
 * Shared fixtures: accounts, couriers, warehouses and orders, in the
 * contract's shapes (lib/contracts) for fake collaborators, and as HTTP
 * bodies (spec field names) for requests. Real Indian addresses and pincodes.
 */
import type { Address, CourierInfo, OrderRecord, Warehouse, WarehouseLeg } from "../../lib/contracts";
import { TEMPLATE_COLUMNS } from "../../lib/contracts/http/intake-bulk-input";
import type { BookRequest } from "../../lib/couriers";

let nextId = 500_000 + Math.floor(Math.random() * 100_000) * 10;
/** A fresh positive id (orders, warehouses) unlikely to collide across runs. */
export function freshId(): number {
	nextId += 1;
	return nextId;
}

/** A fresh reference (customer_order_no) per call. */
export function freshRef(prefix = "ORD"): string {
	return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Couriers as `rates.listCouriers` / `rates.getCourier` answer them in fakes (sandbox adapter, simulator codes). */
export const COURIERS: CourierInfo[] = [
	courier(1, "Sandbox Express", "sbx-express", { cod: true }),
	courier(2, "Sandbox Surface", "sbx-surface", { cod: true }),
	courier(3, "Sandbox Reverse", "sbx-reverse", { forward: false, reverse: true }),
	courier(4, "Sandbox Lite", "sbx-lite"),
	// unreachable: the simulator answers 404 for its code
	courier(5, "Broken Courier", "sbx-nosuch", { cod: true, default_priority: 9 }),
	courier(6, "Retired Courier", "sbx-express", { cod: true, default_priority: 10, active: false }),
];

/** One courier; forward-only, prepaid-only, priority = id unless overridden. */
export function courier(
	logistic_id: number,
	logistic_name: string,
	code: string,
	over: Partial<CourierInfo> = {},
): CourierInfo {
	return {
		logistic_id,
		logistic_name,
		adapter: "sandbox",
		code,
		forward: true,
		reverse: false,
		cod: false,
		default_priority: logistic_id,
		active: true,
		pickup: { weekdays: [1, 2, 3, 4, 5, 6], cutoff_minutes: 14 * 60 },
		...over,
	};
}

/** A Bengaluru address (560001). */
export function address(over: Partial<Address> = {}): Address {
	return {
		name: "Asha Rao",
		phone: "9876543210",
		email: null,
		address_1: "12 MG Road, Shivajinagar",
		address_2: null,
		landmark: null,
		city: "Bengaluru",
		state: "Karnataka",
		pincode: "560001",
		...over,
	};
}

/** A warehouse leg (pickup or return) in Bengaluru. */
export function leg(over: Partial<WarehouseLeg> = {}): WarehouseLeg {
	return { warehouse_name: "Main Warehouse", ...address(), ...over };
}

/** An active default warehouse of `sender_id` as `warehouses.resolve` answers it; return leg = pickup leg. */
export function warehouse(sender_id: number, over: Partial<Warehouse> = {}): Warehouse {
	const id = over.id ?? freshId();
	const pickup = over.pickup ?? leg();
	return {
		id,
		sender_id,
		warehouse_code: `WH${sender_id}-${id}`,
		warehouse_type: "fulfillment_pickup",
		gstin: null,
		pickup,
		return_to: over.return_to ?? pickup,
		is_return_same: over.return_to === undefined,
		active: true,
		retired: false,
		is_default: true,
		...over,
	};
}

/** A forward prepaid order of `sender_id` from `pickup_address_id` to Mumbai (400001), as `intake.getOrder` answers it. */
export function order(
	sender_id: number,
	pickup_address_id: number,
	over: Partial<OrderRecord> = {},
): OrderRecord {
	const now = new Date().toISOString();
	return {
		order_id: freshId(),
		sender_id,
		customer_order_no: freshRef(),
		direction: "forward",
		channel: "api",
		payment_mode: "prepaid",
		pickup_address_id,
		rto_address_id: null,
		consignee: address({
			name: "Ravi Kumar",
			phone: "9123456780",
			address_1: "45 Marine Drive, Churchgate",
			city: "Mumbai",
			state: "Maharashtra",
			pincode: "400001",
		}),
		product: {
			product_name: "Cotton kurta",
			product_sku: null,
			physical_weight: 0.8,
			declared_order_total: 1499,
			cod_amount: null,
			length: 30,
			width: 25,
			height: 5,
		},
		reverse: null,
		state: "not_shipped",
		status: "new",
		awb_number: null,
		courier: null,
		logistic_id: null,
		failure_reason: null,
		created_at: now,
		order_date: now,
		order_from_source: null,
		booked_at: null,
		updated_at: now,
		...over,
	};
}

/** A valid `POST /v1/warehouses` body (§4.5; real Delhi address, 110001). */
export function warehouseBody(over: Record<string, unknown> = {}): Record<string, unknown> {
	return {
		warehouse_name: `WH ${Date.now()}-${Math.floor(Math.random() * 1e6)}`,
		contact_person_name: "Asha Verma",
		contact_no: "9876543210",
		address_line_1: "12 Connaught Place, Block A",
		city: "New Delhi",
		state: "Delhi",
		pincode: "110001",
		is_return_same: true,
		...over,
	};
}

/** A valid `POST /v1/intake/order` body (§2.1): COD ₹1,499 to Bengaluru 560001. */
export function orderBody(
	pickup_address_id: number,
	customer_order_no = freshRef(),
): Record<string, unknown> {
	return {
		customer_order_no,
		channel: "api",
		receiver: {
			name: "Ravi Kumar",
			address_1: "45 MG Road, Ashok Nagar",
			city: "Bengaluru",
			state: "Karnataka",
			pincode: "560001",
			mobile_no: "9123456780",
		},
		product: {
			product_name: "Cotton kurta",
			physical_weight: 0.8,
			declared_order_total: 1499,
			cod_amount: 1499,
			length: 30,
			width: 25,
			height: 5,
		},
		order: { pickup_address_id, order_type: 1 },
	};
}

/**
 * A prepaid forward courier booking request (lib/couriers `BookRequest`,
 * weights kg, money rupees) with client reference `reference`, collected at
 * pickup location `pickupCode` (address `pickup`, also the return address) for
 * consignee `consigneeName` in Mumbai 400069: what adapter-level specs book at
 * the sandbox courier before they track, cancel or act on the AWB.
 */
export function bookRequestFor(
	reference: string,
	pickupCode: string,
	pickup: Address,
	consigneeName = "Ravi Kumar",
): BookRequest {
	return {
		reference,
		order_no: `ORD-${reference}`,
		direction: "forward",
		payment: "prepaid",
		cod_amount: 0,
		declared_value: 499,
		weight_kg: 0.5,
		dimensions_cm: null,
		product_description: "Cotton kurta",
		pickup_location_code: pickupCode,
		pickup,
		consignee: {
			name: consigneeName,
			phone: "9123456780",
			address_1: "Flat 4, Andheri East",
			city: "Mumbai",
			state: "Maharashtra",
			pincode: "400069",
		},
		return_address: pickup,
	};
}

/** A bulk upload CSV (issue 10) of `n` valid orders in the template's column order (references `<ref>-<i>`). */
export function bulkCsv(ref: string, n: number): string {
	const cells: Record<string, (i: number) => string> = {
		customer_order_no: (i) => `${ref}-${i}`,
		channel: () => "csv",
		receiver_name: (i) => `Buyer ${i}`,
		receiver_address_1: () => '"45 MG Road, Ashok Nagar"',
		receiver_city: () => "Bengaluru",
		receiver_state: () => "Karnataka",
		receiver_pincode: () => "560001",
		receiver_mobile_no: () => "9123456780",
		product_name: () => "Cotton kurta",
		physical_weight: () => "0.5",
		declared_order_total: () => "499",
		order_type: () => "0",
	};
	const header = TEMPLATE_COLUMNS.join(",");
	const rows = Array.from({ length: n }, (_, i) =>
		TEMPLATE_COLUMNS.map((c) => (cells[c] ? cells[c](i) : "")).join(","),
	);
	return `${header}\n${rows.join("\n")}\n`;
}
