/**
 * Contract of the `warehouses` service (spec §2.9, §4.5): merchants' pickup
 * warehouses and their registration with couriers. Other services see a
 * warehouse as a {@link Warehouse} (legs as `WarehouseLeg`); the spec's
 * flat row ({@link WarehouseView}) is the HTTP answer only.
 */
import type { RouteParams } from "../platform/openapi/route";
import type { Warehouse, WarehouseType } from "./common";
import type { PICKUPS_ROUTES } from "./http/pickups";
import type { WAREHOUSES_ROUTES } from "./http/warehouses";

/** The warehouse and pickup route definitions (lib/contracts/http/warehouses.ts, ./http/pickups.ts). */
type Routes = typeof WAREHOUSES_ROUTES & typeof PICKUPS_ROUTES;

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

/** The pickup time windows a merchant may ask for (IST), earliest first (issue 28). */
export const PICKUP_SLOTS = ["10:00-13:00", "13:00-16:00", "16:00-19:00"] as const;
/** One pickup time window. */
export type PickupSlot = (typeof PICKUP_SLOTS)[number];
/** How many days ahead a pickup may be asked for (today + 7 is the last). */
export const PICKUP_MAX_DAYS_AHEAD = 7;
/** Most parcels one pickup request may announce. */
export const PICKUP_MAX_PACKAGES = 1000;
/** Default and largest page of `GET /v1/pickups`. */
export const PICKUPS_DEFAULT_LIMIT = 20;
export const PICKUPS_MAX_LIMIT = 100;

/**
 * A pickup request's statuses (docs/decisions/0107-pickup-requests.md): `requested` (stored, the
 * courier not confirmed yet: it is asked again), `scheduled` (the courier confirmed it),
 * `picked_up` (a shipment from that warehouse with that courier got its pickup scan that day),
 * `missed` (the day passed with none), `cancelled`.
 */
export const PICKUP_STATUSES = ["requested", "scheduled", "picked_up", "missed", "cancelled"] as const;
/** One pickup status. */
export type PickupStatus = (typeof PICKUP_STATUSES)[number];

/** A pickup request as the API answers it (`GET /v1/pickups/{id}`). Times ISO-8601 UTC; days IST. */
export interface PickupView {
	id: number;
	warehouse_id: number;
	logistic_id: number;
	courier_name: string;
	/** IST `YYYY-MM-DD` */
	pickup_date: string;
	slot: PickupSlot;
	expected_package_count: number;
	status: PickupStatus;
	/** the courier's reference; null until it confirmed the request */
	courier_pickup_id: string | null;
	/** what the courier said or could not be asked (e.g. no cancellation API); null when nothing to say */
	courier_note: string | null;
	/** `api` (POST /v1/pickups) or `manifest` (asked for by POST /v1/documents/manifest) */
	source: "api" | "manifest";
	/** shipments from this warehouse with this courier scanned as picked up that day */
	shipments_picked_up: number;
	picked_up_at: string | null;
	missed_at: string | null;
	cancelled_at: string | null;
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
	/** POST /v1/pickups (issue 28): 201 the request, `scheduled` or `requested`. */
	"warehouses.createPickup": { params: RouteParams<Routes["warehouses.createPickup"]>; result: PickupView };
	/** GET /v1/pickups: a cursor page of the caller's requests. */
	"warehouses.pickups": {
		params: RouteParams<Routes["warehouses.pickups"]>;
		result: {
			data: PickupView[];
			pagination: { mode: "cursor"; limit: number; nextCursor: string | null };
		};
	};
	/** GET /v1/pickups/:id. */
	"warehouses.pickup": { params: RouteParams<Routes["warehouses.pickup"]>; result: PickupView };
	/** PATCH /v1/pickups/:id: reschedule. */
	"warehouses.changePickup": { params: RouteParams<Routes["warehouses.changePickup"]>; result: PickupView };
	/** POST /v1/pickups/:id/cancel. */
	"warehouses.cancelPickup": { params: RouteParams<Routes["warehouses.cancelPickup"]>; result: PickupView };
	/**
	 * Internal (documents' manifest option): the live request of a warehouse and courier for the
	 * courier's next pickup day, or a new one (`source` `manifest`).
	 */
	"warehouses.ensurePickup": {
		params: { sender_id: number; warehouse_id: number; logistic_id: number; expected_package_count: number };
		result: { pickup: PickupView; created: boolean };
	};
	/** Ops: one pickup sweep now (resend unconfirmed requests, picked up, missed). */
	"warehouses.sweepPickups": {
		params: Record<string, never>;
		result: { resent: number; picked_up: number; missed: number };
	};
	/** Ops: one registration sweep now (`full` also finds warehouses missing a courier's row). */
	"warehouses.sweepRegistrations": { params: { full?: boolean }; result: { enqueued: number } };
}

export interface WarehousesEvents {
	/** Broadcast when a warehouse changed or was retired: drop its cached resolution. */
	"warehouses.changed": { sender_id: number; id: number };
}
