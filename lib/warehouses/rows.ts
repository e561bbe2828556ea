/**
 * The two shapes of a warehouse:
 * - the spec's flat §2.9 row ({@link WarehouseFields}: `address_line_1`,
 *   `return_city`, …), stored in `warehouses.warehouses` and answered by
 *   `GET /v1/warehouses` and `PATCH /v1/warehouses/:id` ({@link WarehouseView});
 * - the contract {@link Warehouse} other services see (`warehouses.resolve`,
 *   `warehouses.get`): a pickup leg and a return leg with the return rule
 *   applied ({@link warehouseOf}).
 */
import {
	type CourierInfo,
	type CourierRegistrationView,
	type RegistrationState,
	WAREHOUSE_COLUMNS,
	type Warehouse,
	type WarehouseFields,
	type WarehouseLeg,
	type WarehouseView,
} from "../contracts";

/** Fields whose change bumps `version` (what a courier sees of the pickup location). */
export const COURIER_FIELDS: ReadonlyArray<keyof WarehouseFields> = WAREHOUSE_COLUMNS.filter(
	(c) => c !== "warehouse_type" && c !== "is_return_same",
);

/** A row of `warehouses.warehouses` as PostgreSQL returns it (bigint as string). */
export interface StoredWarehouse extends WarehouseFields {
	id: string | number;
	sender_id: string | number;
	active: boolean;
	retired: boolean;
	retired_at: Date | string | null;
	is_default: boolean;
	/** `WH<sender_id>-<id>` */
	warehouse_code: string;
	version: number;
	created_at: Date | string;
	updated_at: Date | string;
}

/** A row of `warehouses.courier_registrations`. */
export interface StoredRegistration {
	warehouse_id: string | number;
	logistic_id: number;
	version: number;
	status: "pending" | "registered" | "refused";
	courier_location_id: string | null;
	reason: string | null;
	updated_at: Date | string;
}

/** The warehouse fields of a stored row (for patch merging and diffing). */
export function fieldsOf(w: StoredWarehouse): WarehouseFields {
	// Object.fromEntries loses the key/value pairing; the keys are exactly WAREHOUSE_COLUMNS.
	return Object.fromEntries(WAREHOUSE_COLUMNS.map((c) => [c, w[c]])) as unknown as WarehouseFields;
}

/**
 * Courier-relevant registration state of one warehouse.
 * @param couriers the active couriers, or undefined when the courier list is
 *   unavailable (then the stored rows are the reference)
 */
export function registrationView(
	w: StoredWarehouse,
	regs: StoredRegistration[],
	couriers: CourierInfo[] | undefined,
): RegistrationState {
	const current = (r: StoredRegistration) => r.version === w.version;
	let view: CourierRegistrationView[];
	if (couriers) {
		const byId = new Map(regs.map((r) => [r.logistic_id, r]));
		view = couriers.map((c): CourierRegistrationView => {
			const r = byId.get(c.logistic_id);
			return {
				logistic_id: c.logistic_id,
				logistic_name: c.logistic_name,
				status: r && current(r) ? r.status : "pending",
				reason: r?.reason ?? null,
			};
		});
	} else {
		view = regs.map(
			(r): CourierRegistrationView => ({
				logistic_id: r.logistic_id,
				status: current(r) ? r.status : "pending",
				reason: r.reason,
			}),
		);
	}
	return {
		courier_registered: view.length > 0 && view.every((v) => v.status === "registered"),
		courier_registrations: view,
	};
}

const iso = (d: Date | string) => new Date(d).toISOString();

/** Maps a stored row to the §2.9 row (ids as numbers, timestamps ISO UTC). */
export function toView(
	w: StoredWarehouse,
	reg: RegistrationState,
	shipped_30d: number | null,
): WarehouseView {
	return {
		id: Number(w.id),
		...fieldsOf(w),
		active: w.active,
		retired: w.retired,
		is_default: w.is_default,
		warehouse_code: w.warehouse_code,
		courier_registered: reg.courier_registered,
		shipped_30d,
		created_at: iso(w.created_at),
		updated_at: iso(w.updated_at),
		courier_registrations: reg.courier_registrations,
	};
}

/** The trimmed text, or null when absent or blank. */
function present(s: string | null | undefined): string | null {
	const t = typeof s === "string" ? s.trim() : "";
	return t ? t : null;
}

/** The warehouse's own (pickup) address as a leg; the contact person is who the courier asks for. */
function pickupLeg(w: WarehouseFields): WarehouseLeg {
	return {
		warehouse_name: w.warehouse_name,
		name: w.contact_person_name,
		phone: w.contact_no,
		email: w.contact_email,
		address_1: w.address_line_1,
		address_2: w.address_line_2,
		city: w.city,
		state: w.state,
		pincode: w.pincode,
	};
}

/**
 * The return leg (spec §2.9): the `return_*` fields, or the pickup leg when
 * `is_return_same` or when the return street or pincode is missing; each
 * missing return contact field falls back to the forward one.
 */
function returnLeg(w: WarehouseFields, pickup: WarehouseLeg): WarehouseLeg {
	const street = present(w.return_address_line_1);
	const pincode = present(w.return_pincode);
	if (w.is_return_same || !street || !pincode) return { ...pickup };
	return {
		warehouse_name: present(w.return_warehouse_name) ?? pickup.warehouse_name,
		name: present(w.return_contact_person_name) ?? pickup.name,
		phone: present(w.return_contact_no) ?? pickup.phone,
		email: present(w.return_contact_email) ?? pickup.email,
		address_1: street,
		address_2: present(w.return_address_line_2),
		city: present(w.return_city) ?? pickup.city,
		state: present(w.return_state) ?? pickup.state,
		pincode,
	};
}

/**
 * A stored row as the contract {@link Warehouse} (`warehouses.resolve`,
 * `warehouses.get`): `pickup` from the forward fields, `return_to` by the
 * return rule of {@link returnLeg}.
 */
export function warehouseOf(w: StoredWarehouse): Warehouse {
	const pickup = pickupLeg(w);
	return {
		id: Number(w.id),
		sender_id: Number(w.sender_id),
		warehouse_code: w.warehouse_code,
		warehouse_type: w.warehouse_type,
		gstin: w.gstin,
		pickup,
		return_to: returnLeg(w, pickup),
		is_return_same: w.is_return_same,
		active: w.active,
		retired: w.retired,
		is_default: w.is_default,
	};
}
