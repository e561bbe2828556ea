/**
 * What the intake modules (./orders.ts, ./requests.ts, ./bulk/requests.ts)
 * need of the running `intake` service: built by the service's `deps()`
 * method, so the modules are plain functions. SQL only through the store
 * modules (./store.ts, ./list-store.ts, ./unshipped-store.ts,
 * ./bulk/store.ts, ./bulk/jobs-store.ts). The service shape:
 * docs/ARCHITECTURE.md §1, docs/decisions/0091-service-shape.md.
 */
import type { Logger, ServiceBroker } from "moleculer";
import type { Sequelize } from "sequelize";
import type { BookingUpdate, OrderBookingState } from "../contracts";
import { call } from "../contracts/call";
import { coalesce, groupCommit } from "../platform/coalesce";
import type { ListRowDb, OrderListQuery } from "./list";
import {
	type DetailRead,
	orderPageReader,
	orderRowReader,
	orderVersionReader,
	type PageVersions,
} from "./list-store";
import { BOOKING_STATE_TIMEOUT_MS } from "./read-through";
import {
	applyBookingUpdates,
	findStatuses,
	type InsertResult,
	insertOrderWave,
	type OrderToInsert,
	type StoredStatus,
	statusKey,
} from "./store";
import type { WarehouseCache } from "./warehouse-cache";

/** The writers made once the database is up (`started`): concurrent calls share their statements. */
export interface IntakeWriters {
	/**
	 * The idempotent create of one order (./store.ts `insertOrder` semantics), group-committed:
	 * the creates of a wave share one multi-row INSERT (`insertOrderWave`); resolves once committed
	 */
	createOrder: (order: OrderToInsert) => Promise<InsertResult>;
	/** booking updates of concurrent calls applied together (lib/platform/coalesce.ts); the keys applied */
	bookingUpdates: (us: BookingUpdate[]) => Promise<Set<string>>;
	/**
	 * `GET /v1/orders/{id}`: the sender's order row, UNCHANGED when its version is `kept` (the version whose answer
	 * the caller holds), or null; concurrent reads share statements (./list-store.ts `orderRowReader`)
	 */
	orderRow: (sender_id: number, order_id: number, kept?: string) => Promise<DetailRead>;
	/** `GET /v1/orders/status`: the stored status under the sender's reference or null; concurrent reads share statements (./store.ts `findStatuses`) */
	storedStatus: (sender_id: number, order_no: string) => Promise<StoredStatus | null>;
	/** `GET /v1/orders` pages; concurrent requests share statements (./list-store.ts) */
	orderPages: (sender_id: number, q: OrderListQuery) => Promise<ListRowDb[]>;
	/** `GET /v1/orders` pages read as their rows' key and version only; concurrent requests share statements (./list-store.ts) */
	orderVersions: (sender_id: number, q: OrderListQuery) => Promise<PageVersions>;
	/**
	 * Booking's state of the sender's order (read-your-writes of the status read, ./read-through.ts):
	 * concurrent reads share one `booking.orderStates` call (timeout BOOKING_STATE_TIMEOUT_MS);
	 * rejects when booking cannot be asked
	 */
	bookingState: (sender_id: number, order_id: number) => Promise<OrderBookingState | null>;
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

/** Orders per create wave (one INSERT statement). */
const CREATE_WAVE_MAX = 100;
/** Status reads per statement. */
const MAX_POINT_READS = 100;
/**
 * Create waves in flight at once: one (docs/decisions/0134-one-create-wave-in-flight.md). A wave's statement costs
 * PostgreSQL about as much fixed (round trip, commit, the statement trigger) as five of its rows, so the creates that
 * arrive during a wave are better in the next one than in a second statement beside it.
 */
const CREATE_WAVES_IN_FLIGHT = 1;

/**
 * The {@link IntakeWriters} over `db` and `broker` (made in the service's `started`: they need the db).
 * `bookingState` asks booking once per wave of concurrent reads (lib/platform/coalesce.ts;
 * docs/decisions/0097-coalesced-status-read-through.md): keys
 * `<sender_id>:<order_id>`, one `booking.orderStates` call per wave.
 */
export function intakeWriters(db: Sequelize, broker: ServiceBroker): IntakeWriters {
	const states = coalesce(async (keys: string[]) => {
		const orders = keys.map((k) => {
			const [sender_id, order_id] = k.split(":").map(Number);
			return { sender_id, order_id };
		});
		const answers = await call(
			broker,
			"booking.orderStates",
			{ orders },
			{ timeout: BOOKING_STATE_TIMEOUT_MS, unavailable: false },
		);
		return new Map(keys.map((k, i) => [k, answers[i] ?? null]));
	});
	const statuses = coalesce(
		(keys: string[]) =>
			findStatuses(
				db,
				keys.map((k) => {
					const at = k.indexOf(":");
					return { sender_id: Number(k.slice(0, at)), order_no: k.slice(at + 1) };
				}),
			),
		MAX_POINT_READS,
	);
	return {
		createOrder: groupCommit((orders: OrderToInsert[]) => insertOrderWave(db, orders), {
			maxItems: CREATE_WAVE_MAX,
			inFlight: CREATE_WAVES_IN_FLIGHT,
		}),
		bookingUpdates: coalesce((us: BookingUpdate[]) => applyBookingUpdates(db, us)),
		orderPages: orderPageReader(db),
		orderVersions: orderVersionReader(db),
		orderRow: orderRowReader(db),
		storedStatus: async (sender_id, order_no) => {
			const key = statusKey(sender_id, order_no);
			return (await statuses([key])).get(key) ?? null;
		},
		bookingState: async (sender_id, order_id) => {
			const key = `${sender_id}:${order_id}`;
			return (await states([key])).get(key) ?? null;
		},
	};
}
