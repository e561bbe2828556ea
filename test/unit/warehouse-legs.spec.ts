/** lib/warehouse-legs.ts: the one return-address rule shared by labels and courier bookings. */
import { strict as assert } from "node:assert";
import { courierAddressOf, pickupLocationOf } from "../../lib/couriers";
import {
	forwardLeg,
	returnDestination,
	returnLeg,
	type WarehouseAddressFields,
} from "../../lib/warehouse-legs";

const base: WarehouseAddressFields & { warehouse_code: string; gstin: string | null } = {
	id: 1,
	warehouse_name: "Delhi DC",
	contact_person_name: "Asha Verma",
	contact_no: "9876543210",
	contact_email: "asha@example.com",
	address_line_1: "12 Connaught Place, Block A",
	address_line_2: null,
	city: "New Delhi",
	state: "Delhi",
	pincode: "110001",
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
	warehouse_code: "WH1-1",
	gstin: null,
};

describe("warehouse legs and the return rule", () => {
	it("uses the return block, falling back field by field to the forward contact", () => {
		const leg = returnLeg({ ...base, return_contact_person_name: " ", return_contact_no: null });
		assert.equal(leg.address_line_1, "Plot 7, Okhla Phase II");
		assert.equal(leg.pincode, "110020");
		assert.equal(leg.warehouse_name, "Okhla returns");
		assert.equal(leg.contact_person_name, "Asha Verma");
		assert.equal(leg.contact_no, "9876543210");
		assert.equal(leg.contact_email, "asha@example.com");
	});

	it("mirrors the forward address when is_return_same or the return street/pincode is missing", () => {
		assert.deepEqual(returnLeg({ ...base, is_return_same: true }), forwardLeg(base));
		assert.deepEqual(returnLeg({ ...base, return_pincode: null }), forwardLeg(base));
		assert.deepEqual(returnLeg({ ...base, return_address_line_1: "" }), forwardLeg(base));
	});

	it("sends returns to a distinct RTO warehouse's own address, else the pickup's return leg", () => {
		const rto = { ...base, id: 2, address_line_1: "RTO hub, Sector 5", pincode: "122001" };
		assert.equal(returnDestination(base, rto)?.address_line_1, "RTO hub, Sector 5");
		assert.equal(returnDestination(base, { ...base })?.pincode, "110020"); // RTO = pickup
		assert.equal(returnDestination(base, null)?.pincode, "110020");
		assert.equal(returnDestination(null, rto)?.pincode, "122001");
		assert.equal(returnDestination(null, null), null);
	});

	it("registers pickup locations with both legs as courier addresses", () => {
		const loc = pickupLocationOf(base);
		assert.equal(loc.warehouse_code, "WH1-1");
		assert.deepEqual(loc.address, courierAddressOf(forwardLeg(base)));
		assert.deepEqual(loc.return_address, {
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
