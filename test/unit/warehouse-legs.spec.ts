/**
 * The return-address rules shared by labels, courier bookings and courier
 * registration: a warehouse's legs (lib/warehouses/rows.ts `warehouseOf`),
 * the order's return destination (lib/shared/warehouse-legs.ts) and the pickup
 * location given to couriers (lib/couriers/locations.ts).
 */
import { strict as assert } from "node:assert";
import { pickupLocationOf } from "../../lib/couriers";
import { returnDestination } from "../../lib/shared/warehouse-legs";
import { type StoredWarehouse, warehouseOf } from "../../lib/warehouses/rows";

/** A stored warehouse row (Delhi, separate return leg in Okhla); `over` may null out any column. */
function stored(over: Partial<Record<keyof StoredWarehouse, unknown>> = {}): StoredWarehouse {
	return {
		id: "1",
		sender_id: "10023",
		warehouse_name: "Delhi DC",
		contact_person_name: "Asha Verma",
		contact_no: "9876543210",
		contact_email: "asha@example.com",
		address_line_1: "12 Connaught Place, Block A",
		address_line_2: null,
		city: "New Delhi",
		state: "Delhi",
		pincode: "110001",
		gstin: null,
		warehouse_type: "fulfillment_pickup",
		is_return_same: false,
		return_warehouse_name: "Okhla returns",
		return_contact_person_name: "Ravi Das",
		return_contact_no: "9811111111",
		return_contact_email: null,
		return_address_line_1: "Plot 7, Okhla Phase II",
		return_address_line_2: "Gate 3",
		return_city: "New Delhi",
		return_state: "Delhi",
		return_pincode: "110020",
		active: true,
		retired: false,
		retired_at: null,
		is_default: true,
		warehouse_code: "WH1-1",
		version: 1,
		created_at: new Date(),
		updated_at: new Date(),
		...over,
	} as StoredWarehouse;
}

describe("warehouse legs and the return rule", () => {
	it("uses the return block, falling back field by field to the forward contact", () => {
		const leg = warehouseOf(stored({ return_contact_person_name: " ", return_contact_no: null })).return_to;
		assert.equal(leg.address_1, "Plot 7, Okhla Phase II");
		assert.equal(leg.pincode, "110020");
		assert.equal(leg.warehouse_name, "Okhla returns");
		assert.equal(leg.name, "Asha Verma");
		assert.equal(leg.phone, "9876543210");
		assert.equal(leg.email, "asha@example.com");
	});

	it("mirrors the forward address when is_return_same or the return street/pincode is missing", () => {
		const pickup = warehouseOf(stored()).pickup;
		assert.deepEqual(warehouseOf(stored({ is_return_same: true })).return_to, pickup);
		assert.deepEqual(warehouseOf(stored({ return_pincode: null })).return_to, pickup);
		assert.deepEqual(warehouseOf(stored({ return_address_line_1: "" })).return_to, pickup);
	});

	it("sends returns to a distinct RTO warehouse's own address, else the pickup's return leg", () => {
		const base = warehouseOf(stored());
		const rto = warehouseOf(stored({ id: "2", address_line_1: "RTO hub, Sector 5", pincode: "122001" }));
		assert.equal(returnDestination(base, rto)?.address_1, "RTO hub, Sector 5");
		assert.equal(returnDestination(base, { ...base })?.pincode, "110020"); // RTO = pickup
		assert.equal(returnDestination(base, null)?.pincode, "110020");
		assert.equal(returnDestination(null, rto)?.pincode, "122001");
		assert.equal(returnDestination(null, null), null);
	});

	it("registers pickup locations with both legs as courier addresses", () => {
		const w = warehouseOf(stored({ gstin: "07AAPFU0939F1ZV" }));
		const loc = pickupLocationOf(w);
		assert.equal(loc.warehouse_code, "WH1-1");
		assert.equal(loc.warehouse_name, "Delhi DC");
		assert.equal(loc.gstin, "07AAPFU0939F1ZV");
		assert.deepEqual(loc.address, w.pickup);
		assert.deepEqual(loc.address, {
			warehouse_name: "Delhi DC",
			name: "Asha Verma",
			phone: "9876543210",
			email: "asha@example.com",
			address_1: "12 Connaught Place, Block A",
			address_2: null,
			city: "New Delhi",
			state: "Delhi",
			pincode: "110001",
		});
		assert.deepEqual(loc.return_address, {
			warehouse_name: "Okhla returns",
			name: "Ravi Das",
			phone: "9811111111",
			address_1: "Plot 7, Okhla Phase II",
			address_2: "Gate 3",
			city: "New Delhi",
			state: "Delhi",
			pincode: "110020",
			email: "asha@example.com",
		});
	});
});
