/**
 * The sandbox couriers' pickup requests (issue 28; docs/decisions/0107-pickup-requests.md):
 * Delhivery's `POST /fm/request/new/` as each sandbox courier serves it, and two calls of
 * the sandbox's own (Delhivery publishes no way to move or cancel a request):
 * `POST /fm/request/<pickup_id>/edit/` and `POST /fm/request/<pickup_id>/cancel/`.
 * Wire shapes: lib/couriers/sandbox/wire.ts `WirePickupRequest` / `WirePickupResponse`.
 *
 * Rules the simulator enforces (each a 400 `{error:{message}}` a test can provoke):
 * - the location must be registered with this courier (`simulator.pickup_locations`);
 * - `pickup_date` a real `YYYY-MM-DD` not before today (IST), `pickup_time` `HH:mm:ss`;
 * - `expected_package_count` an integer 1–{@link SIM_MAX_PICKUP_PACKAGES};
 * - one open request per location and day (`pr_exist: true` on a second);
 * - a request already collected (a pickup scan of a package of that location that day,
 *   `simulator.scans` kind `picked_up`) can be neither moved nor cancelled.
 * Every call is logged in `simulator.calls` (endpoint `pickup`, `pickup_edit`, `pickup_cancel`).
 */
import type { Sequelize } from "sequelize";
import type { WirePickupRequest, WirePickupResponse } from "../couriers/sandbox/wire";
import { exec, select } from "../platform/db";
import { isCalendarDay, istDay } from "../shared/ist-date";
import type { Reply } from "./api";
import type { SimCourier } from "./couriers";
import { logCall, pickupLocation } from "./store";

/** Most packages one sandbox pickup request may announce (above: refused, so a test can see a 422). */
export const SIM_MAX_PICKUP_PACKAGES = 500;

/** One stored sandbox pickup request. */
interface PickupRow {
	pickup_id: string;
	location: string;
	pickup_date: string;
	pickup_time: string;
	expected_package_count: number;
	status: "open" | "cancelled";
}

/** 400 with the courier's words. */
const refuse = (message: string, extra: Partial<WirePickupResponse> = {}): Reply => ({
	status: 400,
	body: { ...extra, error: { message } } satisfies WirePickupResponse,
});

/** The answer body of a stored request. */
function answerOf(r: PickupRow): WirePickupResponse {
	return {
		pickup_id: Number(r.pickup_id),
		pickup_location_name: r.location,
		pickup_date: r.pickup_date,
		pickup_time: r.pickup_time,
		expected_package_count: r.expected_package_count,
		status: r.status,
	};
}

/** The words refusing a malformed body, or null when it is well formed. */
function badBody(b: Partial<WirePickupRequest> | null, withLocation: boolean): string | null {
	if (withLocation && (typeof b?.pickup_location !== "string" || b.pickup_location === ""))
		return "pickup_location is required";
	if (!isCalendarDay(b?.pickup_date)) return "pickup_date must be YYYY-MM-DD";
	if (b.pickup_date < istDay()) return "Pickup date cannot be in past";
	if (typeof b.pickup_time !== "string" || !/^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/.test(b.pickup_time))
		return "pickup_time must be HH:mm:ss";
	const n = b.expected_package_count;
	if (typeof n !== "number" || !Number.isInteger(n) || n < 1)
		return "expected_package_count must be a positive integer";
	if (n > SIM_MAX_PICKUP_PACKAGES)
		return `expected_package_count exceeds ${SIM_MAX_PICKUP_PACKAGES} for one pickup; split it over two days`;
	return null;
}

const ROW = `pickup_id::text, location, to_char(pickup_date, 'YYYY-MM-DD') AS pickup_date, pickup_time,
	expected_package_count, status`;

/** The open request of a location on a day at this courier, other than `except`. */
async function openOn(
	db: Sequelize,
	courier: SimCourier,
	location: string,
	day: string,
	except = "0",
): Promise<PickupRow | undefined> {
	const [row] = await select<PickupRow>(
		db,
		`SELECT ${ROW} FROM simulator.pickups
		  WHERE courier_code = $1 AND location = $2 AND pickup_date = $3::date AND status = 'open' AND pickup_id <> $4::bigint`,
		[courier.code, location, day, except],
	);
	return row;
}

/** One request of this courier by id. */
async function pickupById(db: Sequelize, courier: SimCourier, id: string): Promise<PickupRow | undefined> {
	if (!/^\d{1,18}$/.test(id)) return undefined;
	const [row] = await select<PickupRow>(
		db,
		`SELECT ${ROW} FROM simulator.pickups WHERE courier_code = $1 AND pickup_id = $2::bigint`,
		[courier.code, id],
	);
	return row;
}

/** True when a package of this courier from `location` got a pickup scan on IST day `day`. */
async function collected(
	db: Sequelize,
	courier: SimCourier,
	location: string,
	day: string,
): Promise<boolean> {
	const [row] = await select<{ n: string }>(
		db,
		`SELECT count(*) AS n FROM simulator.scans s JOIN simulator.packages p ON p.waybill = s.waybill
		  WHERE p.courier_code = $1 AND p.pickup_location = $2 AND s.code = 'picked_up'
		    AND (s.at AT TIME ZONE 'Asia/Kolkata')::date = $3::date`,
		[courier.code, location, day],
	);
	return Number(row?.n) > 0;
}

/** `POST /fm/request/new/`: a new request (201), or the courier's refusal (400). */
export async function requestPickup(
	db: Sequelize,
	courier: SimCourier,
	b: Partial<WirePickupRequest> | null,
): Promise<Reply> {
	const key = `${b?.pickup_location ?? ""}|${b?.pickup_date ?? ""}`;
	const log = (status: number) => logCall(db, courier.code, "pickup", key, status);
	const bad = badBody(b, true);
	if (bad || !b?.pickup_location) return log(400).then(() => refuse(bad ?? "pickup_location is required"));
	if (!(await pickupLocation(db, courier.code, b.pickup_location))) {
		await log(400);
		return refuse(`ClientWarehouse matching query does not exist: ${b.pickup_location}`);
	}
	if (await openOn(db, courier, b.pickup_location, b.pickup_date as string)) {
		await log(400);
		return refuse("Pickup request already exists for this location and date", { pr_exist: true });
	}
	const [row] = await select<PickupRow>(
		db,
		`INSERT INTO simulator.pickups (courier_code, location, pickup_date, pickup_time, expected_package_count)
		 VALUES ($1, $2, $3::date, $4, $5)
		 ON CONFLICT (courier_code, location, pickup_date) WHERE status = 'open' DO NOTHING
		 RETURNING ${ROW}`,
		[courier.code, b.pickup_location, b.pickup_date, b.pickup_time, b.expected_package_count],
	);
	if (!row) {
		await log(400);
		return refuse("Pickup request already exists for this location and date", { pr_exist: true });
	}
	await log(201);
	return { status: 201, body: answerOf(row) };
}

/** `POST /fm/request/<id>/edit/`: moves an open request to another day, time or count (200), or refuses (400). */
export async function editPickup(
	db: Sequelize,
	courier: SimCourier,
	id: string,
	b: Partial<WirePickupRequest> | null,
): Promise<Reply> {
	const log = (status: number) => logCall(db, courier.code, "pickup_edit", id, status);
	const row = await pickupById(db, courier, id);
	if (!row) return log(400).then(() => refuse(`Pickup request ${id} not found`));
	const bad = badBody(b, false);
	if (bad) return log(400).then(() => refuse(bad));
	if (row.status === "cancelled") return log(400).then(() => refuse(`Pickup request ${id} is cancelled`));
	if (await collected(db, courier, row.location, row.pickup_date))
		return log(400).then(() => refuse(`Pickup request ${id} was already picked up`));
	const day = b?.pickup_date as string;
	if (await openOn(db, courier, row.location, day, id)) {
		await log(400);
		return refuse("Pickup request already exists for this location and date", { pr_exist: true });
	}
	const [moved] = await select<PickupRow>(
		db,
		`UPDATE simulator.pickups SET pickup_date = $3::date, pickup_time = $4, expected_package_count = $5, updated_at = now()
		  WHERE courier_code = $1 AND pickup_id = $2::bigint RETURNING ${ROW}`,
		[courier.code, id, day, b?.pickup_time, b?.expected_package_count],
	);
	await log(200);
	return { status: 200, body: answerOf(moved) };
}

/** `POST /fm/request/<id>/cancel/`: cancels an open request (200; again: 200 unchanged), or refuses (400). */
export async function cancelPickup(db: Sequelize, courier: SimCourier, id: string): Promise<Reply> {
	const log = (status: number) => logCall(db, courier.code, "pickup_cancel", id, status);
	const row = await pickupById(db, courier, id);
	if (!row) return log(400).then(() => refuse(`Pickup request ${id} not found`));
	if (row.status === "open" && (await collected(db, courier, row.location, row.pickup_date)))
		return log(400).then(() => refuse(`Pickup request ${id} was already picked up`));
	await exec(
		db,
		`UPDATE simulator.pickups SET status = 'cancelled', updated_at = now()
		  WHERE courier_code = $1 AND pickup_id = $2::bigint`,
		[courier.code, id],
	);
	await log(200);
	return { status: 200, body: answerOf({ ...row, status: "cancelled" }) };
}
