/**
 * Pickup requests (issue 28; docs/decisions/0107-pickup-requests.md): a merchant asks a
 * courier to collect at one of its warehouses on a day, in a slot, with an expected parcel
 * count; changes or cancels it; the system learns it was collected (the first pickup scan of
 * one of its shipments, from booking) or missed (its day passed without one: webhook
 * `pickup.missed`). The day and slot rules are ./pickup-rules.ts; the SQL ./pickup-store.ts.
 *
 * Courier calls go through the courier's adapter (lib/couriers): `requestPickup` (Delhivery
 * `POST /fm/request/new/`), and where the courier's API has them `reschedulePickup` /
 * `cancelPickup` (the sandbox couriers). Delhivery publishes neither: a new day is a new
 * request (the old one lapses without parcels), a new slot or count on the same day stays
 * ours, and a cancel is recorded here only; `courier_note` says so on the request.
 *
 * Durability: a request is committed as `requested` before the courier is asked. Courier
 * confirms → `scheduled` with its reference; refuses → the row is deleted and the answer is
 * 422 with its words; cannot be reached → the answer is 201 `requested` and the sweep
 * (every `PICKUP_SWEEP_MS`) asks again until the courier answers. Changes and cancels hold
 * the account lock and the row lock across the courier call, so two never cross.
 */
import {
	type Caller,
	type CourierInfo,
	call,
	type MerchantEvent,
	PICKUPS_DEFAULT_LIMIT,
	PICKUPS_MAX_LIMIT,
	type PickupSlot,
	type PickupStatus,
	type PickupView,
	type ResultOf,
	type Warehouse,
} from "../contracts";
import { adapterFor, type CourierAdapter, CourierRefused } from "../couriers";
import { type CursorPosition, decodeCursor, encodeCursor } from "../platform/cursor";
import { errorBodyOf, fail, failWith, validationFailed } from "../platform/errors";
import { nextPickupDay } from "../shared/calendar";
import { parsePositiveInt } from "../shared/fields";
import { addDays, isCalendarDay, istDay } from "../shared/ist-date";
import { CALL_OPTIONS, messageOf, type WarehousesDeps } from "./deps";
import { findWarehouse } from "./operations";
import { refuseDay, slotFor, slotStart } from "./pickup-rules";
import {
	claimStaleRequested,
	deleteRequested,
	insertPickup,
	listPickups,
	livePickupOn,
	markMissed,
	markPickedUp,
	pickupById,
	pickupsDue,
	pickupView,
	recountPickedUp,
	type StoredPickup,
	updatePickup,
} from "./pickup-store";
import { lockAccount } from "./store";

/** Hours after the end of a pickup's day before it is `missed` (late pickup scans arrive by polling). */
export const PICKUP_MISSED_GRACE_HOURS = 6;
/** Pickups one sweep looks at. */
const SWEEP_BATCH = 200;

/** A create: the validated body of `POST /v1/pickups`. */
export interface CreatePickupInput {
	warehouse_id: number;
	logistic_id: number;
	pickup_date?: string;
	slot?: PickupSlot;
	expected_package_count: number;
}

/** A change: the validated body of `PATCH /v1/pickups/{id}` (at least one field). */
export interface ChangePickupInput {
	pickup_date?: string;
	slot?: PickupSlot;
	expected_package_count?: number;
}

/** The caller's active warehouse `id`, or 400 `invalid_pickup_address` (missing, retired, another account's). */
async function warehouseFor(deps: WarehousesDeps, sender: number, id: number): Promise<Warehouse> {
	const w = await findWarehouse(deps, sender, id);
	if (!w) throw fail("invalid_pickup_address", { field: "warehouse_id" });
	return w;
}

/**
 * The active forward courier `logistic_id` (rates), or 400 `unknown_logistic`; 503
 * `service_unavailable` when rates cannot answer.
 */
async function courierFor(via: Caller, logistic_id: number): Promise<CourierInfo> {
	const c = await call(via, "rates.getCourier", { logistic_id });
	if (!c?.active || !c.forward) throw fail("unknown_logistic", [logistic_id]);
	return c;
}

/** The courier's adapter, or 422 `pickup_failed` when it takes no pickup requests through its API. */
function pickupAdapter(c: CourierInfo): CourierAdapter & Required<Pick<CourierAdapter, "requestPickup">> {
	const a = adapterFor(c);
	if (!a.requestPickup)
		throw fail("pickup_failed", `${c.logistic_name} takes no pickup requests through its API`);
	return a as CourierAdapter & Required<Pick<CourierAdapter, "requestPickup">>;
}

/** The courier's request of a row: location code, day, slot start, count. */
const requestOf = (
	w: Warehouse,
	p: { pickup_date: string; slot: PickupSlot; expected_package_count: number },
) => ({
	pickup_location_code: w.warehouse_code,
	date: p.pickup_date,
	time: slotStart(p.slot),
	expected_packages: p.expected_package_count,
});

/** The day and slot a request may have at `now`, or 400 `invalid_pickup_date` with `next_pickup_date`. */
function dayAndSlot(
	c: CourierInfo,
	w: Warehouse,
	day: string,
	slot: PickupSlot | undefined,
	now: Date,
): { day: string; slot: PickupSlot } {
	const refused = refuseDay(day, c.pickup, c.logistic_name, w.pickup.state, now);
	if (refused)
		throw failWith("invalid_pickup_date", { next_pickup_date: refused.next_pickup_date }, refused.why);
	const s = slotFor(day, slot, now);
	if ("why" in s)
		throw failWith(
			"invalid_pickup_date",
			{ next_pickup_date: nextPickupDay(c.pickup, w.pickup.state, now) },
			s.why,
		);
	return { day, slot: s.slot };
}

/**
 * `POST /v1/pickups` (and a manifest's pickup, `source` `manifest`): validates the warehouse
 * (the caller's, active), the courier (active, forward, with a pickup API), the day (default
 * the courier's next pickup day at the warehouse's state, ./pickup-rules.ts `refuseDay`) and
 * the slot (default the first not begun); stores the request (`requested`, committed), then
 * asks the courier. → the request: `scheduled` with the courier's reference, or `requested`
 * when the courier could not be reached (asked again by the sweep).
 * @throws 400 `invalid_pickup_address`, `unknown_logistic`, `invalid_pickup_date`
 *   (`next_pickup_date`); 409 `pickup_exists` (`pickup`: the live one for that warehouse,
 *   courier and day); 422 `pickup_failed` (the courier's words; nothing stored); 503
 *   `service_unavailable` (rates).
 */
export async function createPickup(
	deps: WarehousesDeps,
	via: Caller,
	sender: number,
	input: CreatePickupInput,
	source: "api" | "manifest" = "api",
	now: Date = new Date(),
): Promise<PickupView> {
	const w = await warehouseFor(deps, sender, input.warehouse_id);
	const c = await courierFor(via, input.logistic_id);
	const adapter = pickupAdapter(c);
	const { day, slot } = dayAndSlot(
		c,
		w,
		input.pickup_date ?? nextPickupDay(c.pickup, w.pickup.state, now),
		input.slot,
		now,
	);
	const stored = await insertPickup(deps.db, {
		sender_id: sender,
		warehouse_id: w.id,
		logistic_id: c.logistic_id,
		courier_name: c.logistic_name,
		pickup_date: day,
		slot,
		expected_package_count: input.expected_package_count,
		source,
	});
	if ("existing" in stored) throw failWith("pickup_exists", { pickup: pickupView(stored.existing) }, day);
	const row = stored.created;
	try {
		const { pickup_id } = await adapter.requestPickup(requestOf(w, row));
		return pickupView(
			await updatePickup(deps.db, Number(row.id), { status: "scheduled", courier_pickup_id: pickup_id }),
		);
	} catch (err) {
		if (err instanceof CourierRefused) {
			await deleteRequested(deps.db, Number(row.id));
			throw fail("pickup_failed", err.message);
		}
		deps.logger.warn(
			`pickup ${row.id}: ${c.logistic_name} not reached (the sweep asks again): ${messageOf(err)}`,
		);
		return pickupView(
			await updatePickup(deps.db, Number(row.id), {
				courier_note: `${c.logistic_name} could not be reached yet; it is asked again within a minute or two`,
			}),
		);
	}
}

/** A positive integer id from the path (lib/shared/fields.ts `parsePositiveInt`), or 404 `pickup_not_found`. */
export function pickupIdOf(raw: unknown): number {
	const n = parsePositiveInt(raw, { trim: false });
	if (n === null) throw fail("pickup_not_found");
	return n;
}

/**
 * A change or cancel at the courier: its answer, or the API's error — 422 `pickup_failed`
 * with the courier's words when it refused, 503 `pickup_unavailable` when it could not be
 * reached (either way nothing changed here: the caller's transaction rolls back).
 */
async function atCourier<T>(c: CourierInfo, work: () => Promise<T>): Promise<T> {
	try {
		return await work();
	} catch (err) {
		if (err instanceof CourierRefused) throw fail("pickup_failed", err.message);
		throw fail("pickup_unavailable", c.logistic_name);
	}
}

/** `GET /v1/pickups/{id}`: one of the caller's requests, or 404 `pickup_not_found`. */
export async function getPickup(deps: WarehousesDeps, sender: number, id: number): Promise<PickupView> {
	const row = await pickupById(deps.db, sender, id);
	if (!row) throw fail("pickup_not_found");
	return pickupView(row);
}

/** 409 `pickup_not_changeable` unless the request is requested or scheduled. */
function assertOpen(row: StoredPickup): void {
	if (row.status !== "requested" && row.status !== "scheduled")
		throw failWith("pickup_not_changeable", { status: row.status }, Number(row.id), row.status);
}

/**
 * Whether booking saw a pickup scan for the request's warehouse, courier and day; if so the
 * row becomes `picked_up` (its count and first scan time) and true. False when booking says
 * none or cannot answer (the sweep catches up).
 */
async function collectedNow(
	deps: WarehousesDeps,
	via: Caller,
	row: StoredPickup,
	now: Date,
): Promise<boolean> {
	if (row.pickup_date > istDay(now)) return false;
	try {
		const [scan] = await call(via, "booking.pickupScans", { questions: [questionOf(row)] }, CALL_OPTIONS);
		if (!scan?.first_scan_at) return false;
		await markPickedUp(deps.db, Number(row.id), scan.first_scan_at, scan.shipments);
		return true;
	} catch (err) {
		deps.logger.warn(`pickup ${row.id}: pickup scans unavailable: ${messageOf(err)}`);
		return false;
	}
}

/** The `booking.pickupScans` question of a request. */
const questionOf = (row: StoredPickup) => ({
	sender_id: Number(row.sender_id),
	warehouse_id: Number(row.warehouse_id),
	logistic_id: row.logistic_id,
	day: row.pickup_date,
});

/**
 * `PATCH /v1/pickups/{id}`: moves an open request to another day or slot, or changes its
 * parcel count, through the courier (see the module notes for couriers without such a
 * call). The new day and slot follow the create's rules; the request keeps its id.
 * @throws 400 `validation_failed` (`body: no updatable field`), `invalid_pickup_date`,
 *   `invalid_pickup_address` (the warehouse was deleted since); 404 `pickup_not_found`; 409
 *   `pickup_not_changeable` (`status`), `pickup_exists` (another live request holds the new
 *   day); 422 `pickup_failed` (the courier's words; nothing changed); 503 `pickup_unavailable`
 *   (the courier not reached; nothing changed), `service_unavailable` (rates).
 */
export async function changePickup(
	deps: WarehousesDeps,
	via: Caller,
	sender: number,
	id: number,
	input: ChangePickupInput,
	now: Date = new Date(),
): Promise<PickupView> {
	if (
		input.pickup_date === undefined &&
		input.slot === undefined &&
		input.expected_package_count === undefined
	)
		throw validationFailed(["body: no updatable field"]);
	return deps.db.transaction(async (t) => {
		await lockAccount(deps.db, sender, t);
		const row = await pickupById(deps.db, sender, id, t);
		if (!row) throw fail("pickup_not_found");
		assertOpen(row);
		const w = await warehouseFor(deps, sender, Number(row.warehouse_id));
		const c = await courierFor(via, row.logistic_id);
		const day = input.pickup_date ?? row.pickup_date;
		const moved = day !== row.pickup_date;
		const slot =
			moved || input.slot !== undefined ? dayAndSlot(c, w, day, input.slot ?? row.slot, now).slot : row.slot;
		if (moved) {
			const other = await livePickupOn(deps.db, sender, w.id, c.logistic_id, day, t);
			if (other) throw failWith("pickup_exists", { pickup: pickupView(other) }, day);
		}
		const next = {
			pickup_date: day,
			slot,
			expected_package_count: input.expected_package_count ?? row.expected_package_count,
		};
		const courier = await courierChange(row, c, w, next, moved);
		return pickupView(await updatePickup(deps.db, id, { ...next, ...courier }, t));
	});
}

/**
 * What the courier says to a change: the reference and note to store. A request the courier
 * never confirmed (`requested`) is not asked (the sweep sends the new values).
 */
async function courierChange(
	row: StoredPickup,
	c: CourierInfo,
	w: Warehouse,
	next: { pickup_date: string; slot: PickupSlot; expected_package_count: number },
	moved: boolean,
): Promise<{ courier_pickup_id?: string; courier_note?: string | null }> {
	if (row.status === "requested" || !row.courier_pickup_id) return {};
	const adapter = pickupAdapter(c);
	const reference = row.courier_pickup_id;
	const reschedule = adapter.reschedulePickup?.bind(adapter);
	if (reschedule) {
		const { pickup_id } = await atCourier(c, () => reschedule(reference, requestOf(w, next)));
		return { courier_pickup_id: pickup_id, courier_note: null };
	}
	if (moved) {
		const { pickup_id } = await atCourier(c, () => adapter.requestPickup(requestOf(w, next)));
		return {
			courier_pickup_id: pickup_id,
			courier_note: `${c.logistic_name} has no call to move a pickup request: a new one (${pickup_id}) was made for ${next.pickup_date}; the one for ${row.pickup_date} (${reference}) lapses without parcels`,
		};
	}
	return {
		courier_note: `${c.logistic_name} has no call to change a pickup request: it keeps the slot and count first sent`,
	};
}

/**
 * `POST /v1/pickups/{id}/cancel`: cancels an open request through the courier (a courier
 * with no cancel call: recorded here, `courier_note` says so). Cancelling a cancelled
 * request answers it unchanged. A request one of whose shipments was already scanned as
 * picked up becomes `picked_up` and is refused.
 * @throws 404 `pickup_not_found`; 409 `pickup_not_changeable` (`status`: picked up or
 *   missed); 422 `pickup_failed` (the courier's words); 503 `pickup_unavailable`.
 */
export async function cancelPickup(
	deps: WarehousesDeps,
	via: Caller,
	sender: number,
	id: number,
	now: Date = new Date(),
): Promise<PickupView> {
	const first = await pickupById(deps.db, sender, id);
	if (!first) throw fail("pickup_not_found");
	if (first.status === "cancelled") return pickupView(first);
	assertOpen(first);
	if (await collectedNow(deps, via, first, now)) {
		throw failWith("pickup_not_changeable", { status: "picked_up" }, id, "picked_up");
	}
	return deps.db.transaction(async (t) => {
		await lockAccount(deps.db, sender, t);
		const row = await pickupById(deps.db, sender, id, t);
		if (!row) throw fail("pickup_not_found");
		if (row.status === "cancelled") return pickupView(row);
		assertOpen(row);
		let note: string | null = row.courier_note;
		if (row.status === "scheduled" && row.courier_pickup_id) {
			const c = await courierFor(via, row.logistic_id);
			const adapter = adapterFor(c);
			const cancel = adapter.cancelPickup?.bind(adapter);
			const reference = row.courier_pickup_id;
			if (cancel) {
				await atCourier(c, () => cancel(reference));
				note = null;
			} else {
				note = `${c.logistic_name} has no call to cancel a pickup request: it lapses when no parcel is handed over`;
			}
		}
		return pickupView(await updatePickup(deps.db, id, { status: "cancelled", courier_note: note }, t));
	});
}

/** Cursor kind of the pickup list. */
const LIST_KIND = "pickups";

/**
 * `GET /v1/pickups` (query validated by `PICKUPS_QUERY`): a page of the caller's requests,
 * newest first, filtered by pickup day (`from`/`to`, IST, inclusive), warehouse, courier and
 * status; `cursor` a `nextCursor` of the same filters.
 * @throws 400 `validation_failed` (`to: must not be before from`, `limit: must be at most 100`); 400
 *   `cursor: unrecognised shape`
 */
export async function pickupPage(
	deps: WarehousesDeps,
	sender: number,
	q: {
		limit?: number;
		from?: string;
		to?: string;
		warehouse_id?: number;
		logistic_id?: number;
		status?: PickupStatus;
		cursor?: string;
	},
): Promise<ResultOf<"warehouses.pickups">> {
	const bad: string[] = [];
	if (q.from !== undefined && !isCalendarDay(q.from)) bad.push("from: must be a date YYYY-MM-DD");
	if (q.to !== undefined && !isCalendarDay(q.to)) bad.push("to: must be a date YYYY-MM-DD");
	if (!bad.length && q.from && q.to && q.from > q.to) bad.push("to: must not be before from");
	if (q.limit !== undefined && q.limit > PICKUPS_MAX_LIMIT)
		bad.push(`limit: must be at most ${PICKUPS_MAX_LIMIT}`);
	if (bad.length) throw validationFailed(bad);
	const limit = q.limit ?? PICKUPS_DEFAULT_LIMIT;
	const key = [q.from, q.to, q.warehouse_id, q.logistic_id, q.status].map((x) => x ?? "").join("|");
	let before: number | null = null;
	if (q.cursor !== undefined && q.cursor !== "") {
		const ours = (p: CursorPosition): p is { s: number; id: number; f: string } =>
			p.s === sender && typeof p.id === "number" && Number.isSafeInteger(p.id) && p.id > 0 && p.f === key;
		before = decodeCursor(LIST_KIND, q.cursor, ours).id;
	}
	const rows = await listPickups(deps.db, sender, q, before, limit + 1);
	const data = rows.slice(0, limit).map(pickupView);
	const last = data.at(-1);
	return {
		data,
		pagination: {
			mode: "cursor",
			limit,
			nextCursor:
				rows.length > limit && last ? encodeCursor(LIST_KIND, { s: sender, id: last.id, f: key }) : null,
		},
	};
}

/** The merchant event of a missed pickup (`pickup.missed`; no order: about a warehouse). */
export function missedEvent(row: StoredPickup): MerchantEvent {
	return {
		event_id: `pickup.missed:${row.id}`,
		type: "pickup.missed",
		sender_id: Number(row.sender_id),
		order_id: null,
		occurred_at: new Date(row.missed_at ?? Date.now()).toISOString(),
		data: {
			pickup_id: Number(row.id),
			warehouse_id: Number(row.warehouse_id),
			logistic_id: row.logistic_id,
			courier: row.courier_name,
			pickup_date: row.pickup_date,
			slot: row.slot,
			expected_package_count: row.expected_package_count,
			courier_pickup_id: row.courier_pickup_id,
		},
	};
}

/** What one sweep did. */
export interface SweepOutcome {
	/** requests sent to the courier again */
	resent: number;
	picked_up: number;
	missed: number;
}

/**
 * One pickup sweep (every `PICKUP_SWEEP_MS`; also the internal action `warehouses.sweepPickups`):
 * 1. requests the courier has not confirmed, untouched for `staleMs`, are sent again
 *    (confirmed → `scheduled`; refused → `cancelled` with the courier's words in `courier_note`);
 * 2. open requests whose day has come are checked against booking's pickup scans
 *    (`booking.pickupScans`): one scanned shipment makes the request `picked_up`;
 * 3. open requests whose day ended more than {@link PICKUP_MISSED_GRACE_HOURS} hours ago
 *    without a scan become `missed`, with the webhook event `pickup.missed` in the same
 *    transaction. Booking unreachable: steps 2–3 wait for the next sweep.
 */
export async function sweepPickups(
	deps: WarehousesDeps,
	via: Caller,
	now: Date = new Date(),
): Promise<SweepOutcome> {
	const out: SweepOutcome = { resent: 0, picked_up: 0, missed: 0 };
	for (const row of await claimStaleRequested(deps.db, deps.staleMs, 50)) {
		if (await resend(deps, via, row)) out.resent++;
	}
	const today = istDay(now);
	const due = await pickupsDue(deps.db, today, addDays(today, -1), SWEEP_BATCH);
	if (due.length === 0) return out;
	let scans: { first_scan_at: string | null; shipments: number }[];
	try {
		scans = await call(via, "booking.pickupScans", { questions: due.map(questionOf) }, CALL_OPTIONS);
	} catch (err) {
		deps.logger.warn(`pickup sweep: pickup scans unavailable: ${messageOf(err)}`);
		return out;
	}
	const lastMissable = istDay(new Date(now.getTime() - PICKUP_MISSED_GRACE_HOURS * 3_600_000 - 86_400_000));
	for (const [i, row] of due.entries()) {
		const scan = scans[i];
		if (row.status === "picked_up") {
			if (scan?.shipments) await recountPickedUp(deps.db, Number(row.id), scan.shipments);
		} else if (scan?.first_scan_at) {
			if (await markPickedUp(deps.db, Number(row.id), scan.first_scan_at, scan.shipments)) out.picked_up++;
		} else if (row.pickup_date <= lastMissable) {
			if (await markMissed(deps.db, Number(row.id), missedEvent)) out.missed++;
		}
	}
	return out;
}

/** Sends a `requested` row to the courier again; true when the courier answered (either way). */
async function resend(deps: WarehousesDeps, via: Caller, row: StoredPickup): Promise<boolean> {
	const id = Number(row.id);
	try {
		const w = await findWarehouse(deps, Number(row.sender_id), Number(row.warehouse_id), true);
		const c = await call(via, "rates.getCourier", { logistic_id: row.logistic_id }, CALL_OPTIONS);
		if (!w || !c) {
			await updatePickup(deps.db, id, {
				status: "cancelled",
				courier_note: "the warehouse or courier no longer exists",
			});
			return true;
		}
		const { pickup_id } = await pickupAdapter(c).requestPickup(requestOf(w, row));
		await updatePickup(deps.db, id, {
			status: "scheduled",
			courier_pickup_id: pickup_id,
			courier_note: null,
		});
		return true;
	} catch (err) {
		if (err instanceof CourierRefused) {
			await updatePickup(deps.db, id, {
				status: "cancelled",
				courier_note: `the courier refused: ${err.message}`,
			});
			return true;
		}
		deps.logger.warn(`pickup ${id}: courier still not reached: ${messageOf(err)}`);
		return false;
	}
}

/**
 * `warehouses.ensurePickup` (a manifest's option, issue 28): the live request of the caller's
 * warehouse and courier for the courier's next pickup day, or a new one (`source`
 * `manifest`, `expected_package_count` the manifest's parcels). → `{pickup, created}`.
 * Errors as {@link createPickup}.
 */
export async function ensurePickup(
	deps: WarehousesDeps,
	via: Caller,
	sender: number,
	input: { warehouse_id: number; logistic_id: number; expected_package_count: number },
	now: Date = new Date(),
): Promise<{ pickup: PickupView; created: boolean }> {
	const w = await warehouseFor(deps, sender, input.warehouse_id);
	const c = await courierFor(via, input.logistic_id);
	const day = nextPickupDay(c.pickup, w.pickup.state, now);
	const live = await livePickupOn(deps.db, sender, w.id, c.logistic_id, day);
	if (live) return { pickup: pickupView(live), created: false };
	try {
		const pickup = await createPickup(deps, via, sender, { ...input, pickup_date: day }, "manifest", now);
		return { pickup, created: true };
	} catch (err) {
		// a request made for that day between the read above and the insert (409 `pickup_exists`)
		const existing = errorBodyOf(err)?.body.pickup as PickupView | undefined;
		if (existing) return { pickup: existing, created: false };
		throw err;
	}
}
