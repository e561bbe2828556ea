/**
 * Contract of the `warehouses` service (spec §2.9, §4.5): merchants' pickup
 * warehouses and their registration with couriers. Other services see a
 * warehouse as a {@link Warehouse} (legs as `WarehouseLeg`); the spec's
 * flat row ({@link WarehouseView}, lib/warehouses/rows.ts) is the HTTP answer only.
 */
import type { WarehouseView } from "../warehouses/rows";
import type { HttpParams, Warehouse } from "./common";

export interface WarehousesActions {
	/** GET /v1/warehouses (§4.5): the caller's warehouses as flat §2.9 rows, the default first. */
	"warehouses.list": { params: HttpParams; result: { data: WarehouseView[] } };
	/** POST /v1/warehouses (§4.5): 201 `{data:{id, orders_repaired}}`. */
	"warehouses.create": { params: HttpParams; result: { data: { id: number; orders_repaired: number } } };
	/** PATCH /v1/warehouses/:id (§4.5, shape decided in docs/decisions/0006-warehouses.md): `{data: row}`, the row as listed. */
	"warehouses.update": { params: HttpParams; result: { data: WarehouseView } };
	/** DELETE /v1/warehouses/:id (§4.5): `{data:{id, deleted:1}}`; 404, 409 `warehouse_in_use`, 503. */
	"warehouses.remove": { params: HttpParams; result: { data: { id: number; deleted: 1 } } };
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
