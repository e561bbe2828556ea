/**
 * Warehouse rows: the SQL column list, and the mapping of stored rows to the
 * §2.9 list row answered by `GET /v1/warehouses` and the internal actions.
 */
import type { CourierInfo, WarehouseRow } from "../contracts";
import type { WarehouseFields } from "./validation";

/** Columns every warehouse read selects (table alias `w`). */
export const COLUMNS = `w.id, w.sender_id, w.warehouse_name, w.contact_person_name, w.contact_no, w.contact_email,
	w.address_line_1, w.address_line_2, w.city, w.state, w.pincode, w.gstin, w.warehouse_type, w.is_return_same,
	w.return_warehouse_name, w.return_contact_person_name, w.return_contact_no, w.return_contact_email,
	w.return_address_line_1, w.return_address_line_2, w.return_city, w.return_state, w.return_pincode,
	w.active, w.retired, w.retired_at, w.is_default, w.warehouse_code, w.version, w.created_at, w.updated_at`;

/**
 * SQL expression (alias `w`): true when the warehouse has registration rows and
 * every one is `registered` for its current version. Used by the one-query
 * internal reads; the list checks against the live courier list instead.
 */
export const REGISTERED_SQL = `(EXISTS (SELECT 1 FROM warehouses.courier_registrations r WHERE r.warehouse_id = w.id)
	AND NOT EXISTS (SELECT 1 FROM warehouses.courier_registrations r
		WHERE r.warehouse_id = w.id AND (r.version <> w.version OR r.status <> 'registered')))`;

/** A row of `warehouses.warehouses` as PostgreSQL returns it (bigint as string). */
export interface StoredWarehouse extends WarehouseFields {
	id: string | number;
	sender_id: string | number;
	active: boolean;
	retired: boolean;
	retired_at: Date | string | null;
	is_default: boolean;
	warehouse_code: string;
	version: number;
	created_at: Date | string;
	updated_at: Date | string;
	courier_registered?: boolean;
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

/** Per-courier registration detail of a list row. */
export interface CourierRegistrationView {
	logistic_id: number;
	logistic_name?: string;
	/** `pending` until the courier answered for the warehouse's current version. */
	status: "pending" | "registered" | "refused";
	/** The courier's words when refused (or the last transient error while pending); else null. */
	reason: string | null;
}

/**
 * The §2.9 list row. `shipped_30d` is null in `GET /v1/warehouses` when the
 * order service cannot be reached (never invented); the internal reads
 * (`warehouses.resolve` / `warehouses.get`) do not count shipments and answer 0.
 * Timestamps ISO-8601 UTC.
 */
export interface WarehouseView extends Omit<WarehouseRow, "shipped_30d"> {
	return_warehouse_name: string | null;
	return_contact_email: string | null;
	courier_registrations?: CourierRegistrationView[];
	shipped_30d: number | null;
	created_at: string;
	updated_at: string;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** Every warehouse field, in the bind order create / update write them after `sender_id`. */
export const WAREHOUSE_COLUMNS: ReadonlyArray<keyof WarehouseFields> = [
	"warehouse_name",
	"contact_person_name",
	"contact_no",
	"contact_email",
	"address_line_1",
	"address_line_2",
	"city",
	"state",
	"pincode",
	"gstin",
	"warehouse_type",
	"is_return_same",
	"return_warehouse_name",
	"return_contact_person_name",
	"return_contact_no",
	"return_contact_email",
	"return_address_line_1",
	"return_address_line_2",
	"return_city",
	"return_state",
	"return_pincode",
];

/** Fields whose change bumps `version` (what a courier sees of the pickup location). */
export const COURIER_FIELDS: ReadonlyArray<keyof WarehouseFields> = WAREHOUSE_COLUMNS.filter(
	(c) => c !== "warehouse_type" && c !== "is_return_same",
);

/** The warehouse fields of a stored row (for patch merging and diffing). */
export function fieldsOf(w: StoredWarehouse): WarehouseFields {
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
): { courier_registered: boolean; courier_registrations: CourierRegistrationView[] } {
	const current = (r: StoredRegistration | undefined) => r !== undefined && r.version === w.version;
	if (couriers) {
		const byId = new Map(regs.map((r) => [r.logistic_id, r]));
		const view = couriers.map((c): CourierRegistrationView => {
			const r = byId.get(c.logistic_id);
			return {
				logistic_id: c.logistic_id,
				logistic_name: c.logistic_name,
				status: current(r) ? r!.status : "pending",
				reason: r?.reason ?? null,
			};
		});
		return {
			courier_registered: view.length > 0 && view.every((v) => v.status === "registered"),
			courier_registrations: view,
		};
	}
	const view = regs.map(
		(r): CourierRegistrationView => ({
			logistic_id: r.logistic_id,
			status: current(r) ? r.status : "pending",
			reason: r.reason,
		}),
	);
	return {
		courier_registered: view.length > 0 && view.every((v) => v.status === "registered"),
		courier_registrations: view,
	};
}

/** Maps a stored row to the §2.9 row (ids as numbers, timestamps ISO UTC). */
export function toView(w: StoredWarehouse, extra: Partial<WarehouseView> = {}): WarehouseView {
	return {
		id: Number(w.id),
		...fieldsOf(w),
		active: w.active,
		retired: w.retired,
		is_default: w.is_default,
		warehouse_code: w.warehouse_code,
		courier_registered: Boolean(w.courier_registered),
		shipped_30d: 0,
		created_at: iso(w.created_at)!,
		updated_at: iso(w.updated_at)!,
		...extra,
	};
}
