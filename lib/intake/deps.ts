/**
 * What the intake modules (./orders.ts, ./requests.ts, ./bulk/requests.ts)
 * need of the running `intake` service: built by the service's `deps()`
 * method, so the modules are plain functions. SQL only through the store
 * modules (./store.ts, ./list-store.ts, ./unshipped-store.ts,
 * ./bulk/store.ts, ./bulk/jobs-store.ts). The service shape:
 * docs/ARCHITECTURE.md §1, docs/decisions/0091-service-shape.md.
 */
import type { Logger } from "moleculer";
import type { Sequelize } from "sequelize";
import type { BookingUpdate } from "../contracts";
import { coalesce } from "../platform/coalesce";
import type { ListRowDb, OrderListQuery } from "./list";
import { orderPageReader } from "./list-store";
import { applyBookingUpdates } from "./store";
import type { WarehouseCache } from "./warehouse-cache";

/** The writers made once the database is up (`started`): concurrent calls share their statements. */
export interface IntakeWriters {
	/** booking updates of concurrent calls applied together (lib/platform/coalesce.ts); the keys applied */
	bookingUpdates: (us: BookingUpdate[]) => Promise<Set<string>>;
	/** `GET /v1/orders` pages; concurrent requests share statements (./list-store.ts) */
	orderPages: (sender_id: number, q: OrderListQuery) => Promise<ListRowDb[]>;
}

/** The intake service's pieces the intake modules use. */
export interface IntakeDeps extends IntakeWriters {
	/** the `intake` schema's connection (SQL only through the store modules) */
	db: Sequelize;
	logger: Logger;
	/** positive `warehouses.resolve` answers, per sender and warehouse (./warehouse-cache.ts) */
	warehouseCache: WarehouseCache;
}

/** What a module that only reads and writes the `intake` schema needs of {@link IntakeDeps}. */
export type IntakeDbDeps = Pick<IntakeDeps, "db">;

/** The {@link IntakeWriters} over `db` (made in the service's `started`: they need the db). */
export function intakeWriters(db: Sequelize): IntakeWriters {
	return {
		bookingUpdates: coalesce((us: BookingUpdate[]) => applyBookingUpdates(db, us)),
		orderPages: orderPageReader(db),
	};
}
