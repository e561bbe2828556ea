/**
 * Contract of the `warehouses` service (spec §2.9, §4.5): merchants' pickup
 * warehouses and their registration with couriers. Other services see a
 * warehouse as a {@link Warehouse} (legs as `WarehouseLeg`); the spec's
 * flat row ({@link WarehouseView}) is the HTTP answer only.
 */
import type { RouteParams } from "../platform/openapi/route";
import type { Warehouse, WarehouseType } from "./common";
import type { WAREHOUSES_ROUTES } from "./http/warehouses";

/** The warehouse route definitions (lib/contracts/http/warehouses.ts). */
type Routes = typeof WAREHOUSES_ROUTES;

/**
 * The courier-facing fields of a warehouse as the spec names them (§2.9): the
 * forward address and contact, the return leg (`return_*`, always filled once
 * validated; nullable in older rows), GSTIN and type. The one declaration of
 * the flat shape: validation, storage and the HTTP row all use it.
 */
export interface WarehouseFields {
	warehouse_name: string;
	contact_person_name: string;
	/** 10 digits */
	contact_no: string;
	contact_email: string | null;
	address_line_1: string;
	address_line_2: string | null;
	city: string;
	state: string;
	/** 6 digits */
	pincode: string;
	gstin: string | null;
	warehouse_type: WarehouseType;
	is_return_same: boolean;
	return_warehouse_name: string | null;
	return_contact_person_name: string;
	return_contact_no: string;
	return_contact_email: string | null;
	return_address_line_1: string;
	return_address_line_2: string | null;
	return_city: string;
	return_state: string;
	return_pincode: string;
}

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

/** Per-courier registration detail of a list row. */
export interface CourierRegistrationView {
	logistic_id: number;
	logistic_name?: string;
	/** `pending` until the courier answered for the warehouse's current version. */
	status: "pending" | "registered" | "refused";
	/** The courier's words when refused (or the last transient error while pending); else null. */
	reason: string | null;
}

/** Courier registration state of one warehouse (lib/warehouses/rows.ts `registrationView`). */
export interface RegistrationState {
	/** registered with every courier of the reference list for the current version */
	courier_registered: boolean;
	courier_registrations: CourierRegistrationView[];
}

/**
 * The §2.9 row of `GET /v1/warehouses` and `PATCH /v1/warehouses/:id`.
 * `shipped_30d` is null when the order service cannot be reached (never
 * invented). Timestamps ISO-8601 UTC.
 */
export interface WarehouseView extends WarehouseFields, RegistrationState {
	id: number;
	active: boolean;
	retired: boolean;
	is_default: boolean;
	warehouse_code: string;
	/** orders shipped from it in the last 30 days, or null when unknown */
	shipped_30d: number | null;
	created_at: string;
	updated_at: string;
}

export interface WarehousesActions {
	/** GET /v1/warehouses (§4.5): the caller's warehouses as flat §2.9 rows, the default first. */
	"warehouses.list": { params: RouteParams<Routes["warehouses.list"]>; result: { data: WarehouseView[] } };
	/** POST /v1/warehouses (§4.5): 201 `{data:{id, orders_repaired}}`. */
	"warehouses.create": {
		params: RouteParams<Routes["warehouses.create"]>;
		result: { data: { id: number; orders_repaired: number } };
	};
	/** PATCH /v1/warehouses/:id (§4.5, shape decided in docs/decisions/0006-warehouses.md): `{data: row}`, the row as listed. */
	"warehouses.update": { params: RouteParams<Routes["warehouses.update"]>; result: { data: WarehouseView } };
	/** DELETE /v1/warehouses/:id (§4.5): `{data:{id, deleted:1}}`; 404, 409 `warehouse_in_use`, 503. */
	"warehouses.remove": {
		params: RouteParams<Routes["warehouses.remove"]>;
		result: { data: { id: number; deleted: 1 } };
	};
	/** Internal: the caller's ACTIVE warehouse `id`, or null (missing, retired or another account's). */
	"warehouses.resolve": { params: { sender_id: number; id: number }; result: Warehouse | null };
	/** Internal: the caller's warehouse `id` (retired ones too when `include_retired`), or null. */
	"warehouses.get": {
		params: { sender_id: number; id: number; include_retired?: boolean };
		result: Warehouse | null;
	};
	/** Worker (BullMQ queue of warehouses): registers version `version` of a warehouse with every active courier. */
	"warehouses.registerWithCouriers": {
		params: { warehouse_id: number; version: number };
		result: { registered: number; refused: number; skipped?: "retired" | "stale_version" };
	};
	/** Ops: one registration sweep now (`full` also finds warehouses missing a courier's row). */
	"warehouses.sweepRegistrations": { params: { full?: boolean }; result: { enqueued: number } };
}

export interface WarehousesEvents {
	/** Broadcast when a warehouse changed or was retired: drop its cached resolution. */
	"warehouses.changed": { sender_id: number; id: number };
}
