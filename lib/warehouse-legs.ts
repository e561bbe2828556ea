/**
 * The two legs of a pickup warehouse (§2.9) and the one rule for where an
 * undelivered or returned parcel goes, shared by everything that prints or
 * sends an address: the label (documents), the courier booking request
 * (booking) and the courier pickup-location registration (warehouses,
 * booking). Keeping it in one place means a label never shows a different
 * return address than the one the courier was given.
 */

/** The warehouse fields the legs are made from (a WarehouseRow or a stored warehouse row). */
export interface WarehouseAddressFields {
	id?: number | string;
	warehouse_name: string;
	contact_person_name: string;
	contact_no: string;
	contact_email: string | null;
	address_line_1: string;
	address_line_2: string | null;
	city: string;
	state: string;
	pincode: string;
	is_return_same: boolean;
	return_warehouse_name?: string | null;
	return_contact_person_name: string | null;
	return_contact_no: string | null;
	return_contact_email?: string | null;
	return_address_line_1: string | null;
	return_address_line_2: string | null;
	return_city: string | null;
	return_state: string | null;
	return_pincode: string | null;
}

/** One address of a warehouse: who to hand the parcel to, and where. */
export interface WarehouseLeg {
	/** the warehouse (business) name */
	warehouse_name: string;
	contact_person_name: string;
	contact_no: string;
	contact_email: string | null;
	address_line_1: string;
	address_line_2: string | null;
	city: string;
	state: string;
	pincode: string;
}

function present(s: string | null | undefined): string | null {
	const t = typeof s === "string" ? s.trim() : "";
	return t ? t : null;
}

/** The warehouse's own (pickup) address. */
export function forwardLeg(w: WarehouseAddressFields): WarehouseLeg {
	return {
		warehouse_name: w.warehouse_name,
		contact_person_name: w.contact_person_name,
		contact_no: w.contact_no,
		contact_email: w.contact_email,
		address_line_1: w.address_line_1,
		address_line_2: w.address_line_2,
		city: w.city,
		state: w.state,
		pincode: w.pincode,
	};
}

/**
 * The warehouse's return leg: its `return_*` fields, or its own address when
 * `is_return_same` or when the return street or pincode is missing; each
 * missing return contact field falls back to the forward one.
 */
export function returnLeg(w: WarehouseAddressFields): WarehouseLeg {
	const street = present(w.return_address_line_1);
	const pincode = present(w.return_pincode);
	if (w.is_return_same || !street || !pincode) return forwardLeg(w);
	return {
		warehouse_name: present(w.return_warehouse_name) ?? w.warehouse_name,
		contact_person_name: present(w.return_contact_person_name) ?? w.contact_person_name,
		contact_no: present(w.return_contact_no) ?? w.contact_no,
		contact_email: present(w.return_contact_email) ?? w.contact_email,
		address_line_1: street,
		address_line_2: present(w.return_address_line_2),
		city: present(w.return_city) ?? w.city,
		state: present(w.return_state) ?? w.state,
		pincode,
	};
}

/**
 * Where an undelivered (RTO) or returned parcel goes: the RTO warehouse's own
 * address when the order names an `rto_address_id` other than its pickup
 * warehouse; otherwise the pickup warehouse's return leg. Null when neither
 * warehouse is known.
 */
export function returnDestination(
	pickup: WarehouseAddressFields | null,
	rto: WarehouseAddressFields | null,
): WarehouseLeg | null {
	if (rto && (!pickup || String(rto.id) !== String(pickup.id))) return forwardLeg(rto);
	return pickup ? returnLeg(pickup) : null;
}
