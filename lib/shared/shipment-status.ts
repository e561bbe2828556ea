/**
 * The one normalized shipment status (issue 7; spec §3 buckets, §2.6
 * tracking; docs/ARCHITECTURE.md §1: "each courier maps its own status codes
 * to one normalized shipment status, a closed union"). Every courier adapter
 * maps its codes onto {@link ShipmentStatus}
 * (lib/couriers/<courier>/mapper.ts); booking folds a shipment's scans into
 * one status ({@link foldsOver}); intake stores it as the order's lifecycle
 * `status` and lists orders by {@link bucketOf}.
 *
 * | status | rank | terminal | bucket | order_status_id | status_name |
 * |---|---|---|---|---|---|
 * | `booked` | 10 | | rts | 3 | Booked |
 * | `manifested` | 20 | | manifest | 4 | Ready for pickup |
 * | `pickup_scheduled` | 30 | | pickup | 5 | Pickup scheduled |
 * | `picked_up` | 40 | | transit | 6 | Picked up |
 * | `in_transit` | 50 | | transit | 7 | In transit |
 * | `out_for_delivery` | 60 | | transit | 8 | Out for delivery |
 * | `undelivered` | 60 | | exceptions | 9 | Undelivered |
 * | `rto_initiated` | 70 | | rto | 11 | RTO initiated |
 * | `rto_in_transit` | 80 | | rto | 12 | RTO in transit |
 * | `delivered` | 100 | yes | delivered | 10 | Delivered |
 * | `rto_delivered` | 100 | yes | rto | 13 | RTO delivered |
 * | `lost` | 100 | yes | exceptions | 14 | Lost |
 * | `damaged` | 100 | yes | exceptions | 15 | Damaged |
 * | `cancelled` | 100 | yes | cancelled | 16 | Cancelled |
 *
 * Orders not yet booked have intake-only statuses: `new` (id 1, "New", bucket
 * none but `all`), `booking_queued` (id 2, "Booking in progress"),
 * `booking_failed` (id 17, "Booking failed").
 *
 * Folding rule (never backwards, terminal never reopens): a scan replaces the
 * current status only when the current one is not terminal and the scan's
 * (rank, time) is greater than the current (rank, time). Out-for-delivery and
 * undelivered share a rank, so the NDR loop (undelivered → re-attempt out for
 * delivery → undelivered …) follows the newest scan, while a late in-transit
 * scan after out-for-delivery changes nothing. The fold is independent of the
 * order scans arrive in (for scans of distinct (rank, time)).
 */

/** The normalized status of a booked shipment (closed union). */
export type ShipmentStatus =
	| "booked"
	| "manifested"
	| "pickup_scheduled"
	| "picked_up"
	| "in_transit"
	| "out_for_delivery"
	| "undelivered"
	| "rto_initiated"
	| "rto_in_transit"
	| "delivered"
	| "rto_delivered"
	| "lost"
	| "damaged"
	| "cancelled";

/** Statuses intake holds for an order before (or instead of) a booked shipment. */
export type OrderOnlyStatus = "new" | "booking_queued" | "booking_failed";

/** Every value of an order's lifecycle `status` (intake.orders.status). */
export type LifecycleStatus = ShipmentStatus | OrderOnlyStatus;

/** List buckets of `GET /v1/orders` (spec §3), `all` aside. */
export type Bucket =
	| "rts"
	| "pickup"
	| "manifest"
	| "transit"
	| "delivered"
	| "rto"
	| "exceptions"
	| "cancelled";

/** Every bucket `GET /v1/orders?bucket=` accepts. */
export const BUCKETS: readonly (Bucket | "all")[] = [
	"rts",
	"pickup",
	"manifest",
	"transit",
	"delivered",
	"rto",
	"exceptions",
	"cancelled",
	"all",
];

interface StatusFacts {
	rank: number;
	terminal: boolean;
	bucket: Bucket | null;
	order_status_id: number;
	status_name: string;
}

const FACTS: Record<LifecycleStatus, StatusFacts> = {
	new: { rank: 0, terminal: false, bucket: null, order_status_id: 1, status_name: "New" },
	booking_queued: {
		rank: 0,
		terminal: false,
		bucket: null,
		order_status_id: 2,
		status_name: "Booking in progress",
	},
	booking_failed: {
		rank: 0,
		terminal: false,
		bucket: null,
		order_status_id: 17,
		status_name: "Booking failed",
	},
	booked: { rank: 10, terminal: false, bucket: "rts", order_status_id: 3, status_name: "Booked" },
	manifested: {
		rank: 20,
		terminal: false,
		bucket: "manifest",
		order_status_id: 4,
		status_name: "Ready for pickup",
	},
	pickup_scheduled: {
		rank: 30,
		terminal: false,
		bucket: "pickup",
		order_status_id: 5,
		status_name: "Pickup scheduled",
	},
	picked_up: { rank: 40, terminal: false, bucket: "transit", order_status_id: 6, status_name: "Picked up" },
	in_transit: { rank: 50, terminal: false, bucket: "transit", order_status_id: 7, status_name: "In transit" },
	out_for_delivery: {
		rank: 60,
		terminal: false,
		bucket: "transit",
		order_status_id: 8,
		status_name: "Out for delivery",
	},
	undelivered: {
		rank: 60,
		terminal: false,
		bucket: "exceptions",
		order_status_id: 9,
		status_name: "Undelivered",
	},
	rto_initiated: {
		rank: 70,
		terminal: false,
		bucket: "rto",
		order_status_id: 11,
		status_name: "RTO initiated",
	},
	rto_in_transit: {
		rank: 80,
		terminal: false,
		bucket: "rto",
		order_status_id: 12,
		status_name: "RTO in transit",
	},
	delivered: {
		rank: 100,
		terminal: true,
		bucket: "delivered",
		order_status_id: 10,
		status_name: "Delivered",
	},
	rto_delivered: {
		rank: 100,
		terminal: true,
		bucket: "rto",
		order_status_id: 13,
		status_name: "RTO delivered",
	},
	lost: { rank: 100, terminal: true, bucket: "exceptions", order_status_id: 14, status_name: "Lost" },
	damaged: { rank: 100, terminal: true, bucket: "exceptions", order_status_id: 15, status_name: "Damaged" },
	cancelled: {
		rank: 100,
		terminal: true,
		bucket: "cancelled",
		order_status_id: 16,
		status_name: "Cancelled",
	},
};

/** Every {@link ShipmentStatus}, in lifecycle order. */
export const SHIPMENT_STATUSES: readonly ShipmentStatus[] = [
	"booked",
	"manifested",
	"pickup_scheduled",
	"picked_up",
	"in_transit",
	"out_for_delivery",
	"undelivered",
	"rto_initiated",
	"rto_in_transit",
	"delivered",
	"rto_delivered",
	"lost",
	"damaged",
	"cancelled",
];

/** Whether `s` is a {@link LifecycleStatus}. */
export function isLifecycleStatus(s: unknown): s is LifecycleStatus {
	return typeof s === "string" && Object.hasOwn(FACTS, s);
}

/** Whether `s` is a {@link ShipmentStatus}. */
export function isShipmentStatus(s: unknown): s is ShipmentStatus {
	return typeof s === "string" && (SHIPMENT_STATUSES as readonly string[]).includes(s);
}

/** Fold rank (higher = further along); 0 for order-only statuses. */
export function rankOf(s: LifecycleStatus): number {
	return FACTS[s].rank;
}

/** Whether the shipment is closed for good (delivered, rto_delivered, lost, damaged, cancelled). */
export function isTerminal(s: LifecycleStatus): boolean {
	return FACTS[s].terminal;
}

/** The `GET /v1/orders` bucket of a status (null: only in `all`). */
export function bucketOf(s: LifecycleStatus): Bucket | null {
	return FACTS[s].bucket;
}

/** Statuses listed in bucket `b` (for SQL `status = ANY(...)`). */
export function statusesIn(b: Bucket): LifecycleStatus[] {
	return (Object.keys(FACTS) as LifecycleStatus[]).filter((s) => FACTS[s].bucket === b);
}

/** Numeric id of a status (`order_status_id` of the tracking result, §2.6). */
export function orderStatusIdOf(s: LifecycleStatus): number {
	return FACTS[s].order_status_id;
}

/** Words for a status (`status_name` of the tracking result, §2.6). */
export function statusNameOf(s: LifecycleStatus): string {
	return FACTS[s].status_name;
}

/** Statuses that mean terminal (closed) shipments, for SQL. */
export const TERMINAL_STATUSES: readonly ShipmentStatus[] = SHIPMENT_STATUSES.filter(
	(s) => FACTS[s].terminal,
);

/**
 * Whether a scan of status `next` at time `nextAt` replaces the current
 * status `cur` reached at `curAt` (times as epoch ms or ISO strings): never
 * from a terminal status; otherwise when (rank, time) is greater.
 */
export function foldsOver(
	cur: LifecycleStatus,
	curAt: string | number | Date | null,
	next: ShipmentStatus,
	nextAt: string | number | Date,
): boolean {
	if (isTerminal(cur)) return false;
	const rc = rankOf(cur);
	const rn = rankOf(next);
	if (rn !== rc) return rn > rc;
	const tc = curAt === null ? Number.NEGATIVE_INFINITY : new Date(curAt).getTime();
	return new Date(nextAt).getTime() > tc;
}
