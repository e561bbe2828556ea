/**
 * SQL over `intake.orders` (see ./migrations.ts). Every statement binds its
 * values ($1, $2, …); the only SQL built from strings are the status lists of
 * ./status.ts and ../shipment-status.ts, which are constants.
 *
 * The columns keep the spec's numbers (`shipment_type` 0 forward / 1 reverse,
 * `order_type` 1 COD); this module converts them to and from
 * {@link ShipmentDirection} / {@link PaymentMode}, the only words the rest of
 * the system uses.
 */
import type { Sequelize, Transaction } from "sequelize";
import {
	type BookingState,
	type BookingUpdate,
	type CodStatusUpdate,
	type OrderRecord,
	type PaymentMode,
	paymentModeOf,
	type ShipmentDirection,
	type StatusRecord,
	type WarehouseUsage,
} from "../contracts";
import { exec, isoColumn, select } from "../platform/db";
import { bookedLabelUrl } from "../shared/label-link";
import { toRupees } from "../shared/money";
import { type ShipmentStatus, TERMINAL_STATUSES } from "../shared/shipment-status";
import { CLOSED_STATUSES, PICKED_UP_STATUSES, STATUS_NEW, UNSHIPPED_STATES } from "./status";
import type { OrderInput } from "./validation";

/** Suffix of the stored reference of a return (spec §2.2). */
export const REVERSE_SUFFIX = "-R";

/** The reference an input is stored (and queried) under: `-R` appended for returns. */
export function storedReference(input: Pick<OrderInput, "customer_order_no" | "direction">): string {
	return input.direction === "reverse"
		? `${input.customer_order_no}${REVERSE_SUFFIX}`
		: input.customer_order_no;
}

/** `shipment_type` column value of a direction (0 forward, 1 reverse). */
const shipmentTypeOf = (d: ShipmentDirection): 0 | 1 => (d === "reverse" ? 1 : 0);
/** Direction of a stored `shipment_type` (1 reverse, else forward). */
const directionOfColumn = (n: number): ShipmentDirection => (n === 1 ? "reverse" : "forward");
/** `order_type` column value of a payment mode (1 COD, 0 prepaid). */
const orderTypeOf = (m: PaymentMode): 0 | 1 => (m === "cod" ? 1 : 0);

/** Result of {@link insertOrder}. */
export interface InsertResult {
	order_id: number;
	/** false: the reference already existed (nothing was written) */
	created: boolean;
	/** direction of the row holding the reference (differs from the input's on a forward/return clash) */
	direction: ShipmentDirection;
}

/**
 * Idempotent create of one order (docs/ARCHITECTURE.md §5):
 * `INSERT … ON CONFLICT (sender_id, customer_order_no) WHERE released_at IS NULL DO NOTHING RETURNING order_id`
 * (the partial unique index `orders_sender_ref_live`: only unreleased orders
 * hold their reference); on conflict, reads the live row's id (committed by
 * then: the INSERT waited for it). Concurrent identical calls create exactly
 * one row. A reference whose order was released (cancelled booking) is free:
 * a new order is created. Should the live row be released between the INSERT
 * and the read, the INSERT is tried again. Autocommit: the row is committed
 * when this resolves. State `not_shipped`, status `new`.
 */
export async function insertOrder(
	db: Sequelize,
	sender_id: number,
	input: OrderInput,
): Promise<InsertResult> {
	for (let round = 0; ; round++) {
		const [created] = await insertOrderRows(db, [{ sender_id, input }]);
		if (created !== null) return { order_id: created, created: true, direction: input.direction };
		const existing = await liveOrder(db, sender_id, storedReference(input));
		if (existing) return existing;
		if (round >= 2) throw new Error("order insert conflicted but no live row was found");
	}
}

/**
 * Group commit of {@link insertOrder} (issue 32; docs/decisions/0099-order-create-group-commit.md):
 * the orders of one wave of concurrent creates (any senders, forward or
 * return) in one autocommit multi-row INSERT ({@link insertOrderRows}), so
 * a wave costs one round trip and one commit. Per order the same outcome as
 * {@link insertOrder}: created, or the live order holding the reference
 * (`created: false`), also when an earlier order of the same wave took it.
 * The live orders of every taken reference of the wave are read by one
 * statement after it ({@link liveOrders}; docs/decisions/0141-wave-dedupe-read.md);
 * a reference found free by then (its order released meanwhile) is created on
 * its own. Each result is settled only after the wave's statement committed.
 * Should the statement fail (one bad row fails them all), every order of the
 * wave is inserted on its own so each caller gets its own answer or error.
 * `one` is how an order is created on its own ({@link insertOrder}; a test counts its calls).
 */
export async function insertOrderWave(
	db: Sequelize,
	orders: OrderToInsert[],
	one: typeof insertOrder = insertOrder,
): Promise<PromiseSettledResult<InsertResult>[]> {
	let ids: (number | null)[];
	try {
		ids = await insertOrderRows(db, orders);
	} catch {
		return Promise.allSettled(orders.map((o) => one(db, o.sender_id, o.input)));
	}
	const taken = orders.filter((_, i) => ids[i] === null);
	// taken: by a live order, or by an earlier order of this wave (committed with it); one read for all of them
	const live =
		taken.length === 0 ? new Map<string, InsertResult>() : await liveOrders(db, taken).catch(() => null);
	return Promise.allSettled(
		orders.map(async (o, i): Promise<InsertResult> => {
			const id = ids[i];
			if (id !== null) return { order_id: id, created: true, direction: o.input.direction };
			return live?.get(liveKey(o.sender_id, storedReference(o.input))) ?? one(db, o.sender_id, o.input);
		}),
	);
}

/** The key of a sender's stored reference in {@link liveOrders}' answer. */
const liveKey = (sender_id: number | string, ref: string): string => `${sender_id}:${ref}`;

/**
 * The live orders holding the stored references of `orders` (one statement, the partial unique index
 * `orders_sender_ref_live`), as {@link InsertResult}s with `created: false`, by {@link liveKey}; a reference no live
 * order holds is absent.
 */
async function liveOrders(db: Sequelize, orders: OrderToInsert[]): Promise<Map<string, InsertResult>> {
	const rows = await select<{
		sender_id: string;
		customer_order_no: string;
		order_id: string;
		shipment_type: number;
	}>(
		db,
		`SELECT o.sender_id, o.customer_order_no, o.order_id, o.shipment_type
		FROM unnest($1::bigint[], $2::text[]) AS k(sid, ref)
		JOIN intake.orders o ON o.sender_id = k.sid AND o.customer_order_no = k.ref AND o.released_at IS NULL`,
		[orders.map((o) => o.sender_id), orders.map((o) => storedReference(o.input))],
	);
	return new Map(
		rows.map((r) => [
			liveKey(r.sender_id, r.customer_order_no),
			{ order_id: Number(r.order_id), created: false, direction: directionOfColumn(r.shipment_type) },
		]),
	);
}

/** The live order holding a sender's stored reference, as an {@link InsertResult} with `created: false`. */
async function liveOrder(db: Sequelize, sender_id: number, ref: string): Promise<InsertResult | null> {
	const rows = await select<{ order_id: string; shipment_type: number }>(
		db,
		`SELECT order_id, shipment_type FROM intake.orders
		WHERE sender_id = $1 AND customer_order_no = $2 AND released_at IS NULL`,
		[sender_id, ref],
	);
	if (!rows.length) return null;
	return {
		order_id: Number(rows[0].order_id),
		created: false,
		direction: directionOfColumn(rows[0].shipment_type),
	};
}

/** One order to insert: the sender it belongs to and its parsed input. */
export interface OrderToInsert {
	sender_id: number;
	input: OrderInput;
}

/**
 * Inserts orders (any senders, forward or return) in one statement:
 * `INSERT … SELECT FROM jsonb_to_recordset … ON CONFLICT (sender_id,
 * customer_order_no) WHERE released_at IS NULL DO NOTHING RETURNING`. Per
 * order, in the order given: the new order id, or null when its stored
 * reference is held by a live order (or by an earlier order of `orders`).
 * In `tx` when given, else autocommit. State `not_shipped`, status `new`.
 * Used by the create path (one order, or a wave: {@link insertOrderWave}) and
 * by bulk upload (lib/intake/bulk/process.ts, one batch per transaction).
 */
export async function insertOrderRows(
	db: Sequelize,
	orders: OrderToInsert[],
	tx?: Transaction,
): Promise<(number | null)[]> {
	if (!orders.length) return [];
	const payload = orders.map(({ sender_id, input }) => {
		const r = input.receiver;
		const p = input.product;
		const o = input.order;
		const rev = input.reverse;
		return {
			sid: sender_id,
			ref: storedReference(input),
			st: shipmentTypeOf(input.direction),
			channel: input.channel,
			ot: orderTypeOf(o.payment_mode),
			pickup: o.pickup_address_id,
			rto: o.rto_address_id,
			rn: r.name,
			a1: r.address_1,
			a2: r.address_2,
			lm: r.landmark,
			city: r.city,
			state: r.state,
			pin: r.pincode,
			mob: r.mobile_no,
			em: input.receiver_email,
			pn: p.product_name,
			sku: p.product_sku,
			wt: p.physical_weight,
			decl: p.declared_order_total_paise,
			cod: p.cod_amount_paise,
			len: p.length,
			wid: p.width,
			hgt: p.height,
			fsrc: rev?.forward_source ?? null,
			oawb: rev?.old_fwd_awb_no ?? null,
			rpick: rev?.reverse_pickup_address_id ?? null,
			raddr: rev?.return_address ?? null,
			od: o.order_date ? o.order_date.toISOString() : null,
			src: o.order_from_source,
		};
	});
	const { rows } = await exec<{ order_id: string; sender_id: string; customer_order_no: string }>(
		db,
		`INSERT INTO intake.orders (
			sender_id, customer_order_no, shipment_type, channel, order_type, pickup_address_id, rto_address_id,
			receiver_name, receiver_address_1, receiver_address_2, receiver_landmark, receiver_city, receiver_state,
			receiver_pincode, receiver_mobile_no, receiver_email,
			product_name, product_sku, physical_weight, declared_order_total_paise, cod_amount_paise, length, width, height,
			forward_source, old_fwd_awb_no, reverse_pickup_address_id, return_address,
			order_date, order_from_source, state, status)
		SELECT x.sid, x.ref, x.st, x.channel, x.ot, x.pickup, x.rto,
			x.rn, x.a1, x.a2, x.lm, x.city, x.state, x.pin, x.mob, x.em,
			x.pn, x.sku, x.wt, x.decl, x.cod, x.len, x.wid, x.hgt,
			x.fsrc, x.oawb, x.rpick, x.raddr,
			COALESCE(x.od, now()), x.src, 'not_shipped', $2
		FROM jsonb_to_recordset($1::jsonb) AS x(sid bigint, ref text, st smallint, channel text, ot smallint,
			pickup bigint, rto bigint, rn text, a1 text, a2 text, lm text, city text, state text, pin text, mob text, em text,
			pn text, sku text, wt numeric, decl bigint, cod bigint, len numeric, wid numeric, hgt numeric,
			fsrc text, oawb text, rpick bigint, raddr jsonb, od timestamptz, src text)
		ON CONFLICT (sender_id, customer_order_no) WHERE released_at IS NULL DO NOTHING
		RETURNING order_id, sender_id, customer_order_no`,
		[JSON.stringify(payload), STATUS_NEW],
		tx,
	);
	const inserted = new Map(
		rows.map((row) => [`${row.sender_id}:${row.customer_order_no}`, Number(row.order_id)]),
	);
	return payload.map((x) => {
		const key = `${x.sid}:${x.ref}`;
		const id = inserted.get(key);
		if (id === undefined) return null;
		inserted.delete(key); // a later order with the same reference was the one skipped
		return id;
	});
}

/** A row of intake.orders as the driver returns it. */
interface OrderRow {
	order_id: string;
	sender_id: string;
	customer_order_no: string;
	shipment_type: number;
	channel: string | null;
	order_type: number;
	pickup_address_id: string | null;
	rto_address_id: string | null;
	receiver_name: string;
	receiver_address_1: string;
	receiver_address_2: string | null;
	receiver_landmark: string | null;
	receiver_city: string | null;
	receiver_state: string | null;
	receiver_pincode: string;
	receiver_mobile_no: string;
	/** the buyer's e-mail (migration 0009), or null */
	receiver_email: string | null;
	product_name: string;
	product_sku: string | null;
	physical_weight: string;
	declared_order_total_paise: string;
	cod_amount_paise: string;
	length: string | null;
	width: string | null;
	height: string | null;
	forward_source: string | null;
	old_fwd_awb_no: string | null;
	reverse_pickup_address_id: string | null;
	return_address: Record<string, string> | null;
	order_date: Date;
	order_from_source: string | null;
	state: BookingState;
	status: string;
	awb_number: string | null;
	courier: string | null;
	logistic_id: number | null;
	failure_reason: string | null;
	booked_at: Date | null;
	created_at: Date;
	updated_at: Date;
}

const num = (x: string | number | null): number | null => (x === null ? null : Number(x));
const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/**
 * Maps a row to the contract's {@link OrderRecord} (money in rupees, kg, cm,
 * timestamps ISO-8601 UTC): `shipment_type` → `direction`, `order_type` →
 * `payment_mode`, the `receiver_*` columns → `consignee` (phone = the stored
 * 10-digit mobile, email the optional `receiver.email`, city/state "" when not given).
 */
function toRecord(row: OrderRow): OrderRecord {
	const direction = directionOfColumn(row.shipment_type);
	const payment_mode = paymentModeOf(row.order_type);
	return {
		order_id: Number(row.order_id),
		sender_id: Number(row.sender_id),
		customer_order_no: row.customer_order_no,
		direction,
		channel: row.channel,
		payment_mode,
		pickup_address_id: num(row.pickup_address_id),
		rto_address_id: num(row.rto_address_id),
		consignee: {
			name: row.receiver_name,
			phone: row.receiver_mobile_no,
			email: row.receiver_email ?? null,
			address_1: row.receiver_address_1,
			address_2: row.receiver_address_2,
			landmark: row.receiver_landmark,
			city: row.receiver_city ?? "",
			state: row.receiver_state ?? "",
			pincode: row.receiver_pincode,
		},
		product: {
			product_name: row.product_name,
			product_sku: row.product_sku,
			physical_weight: Number(row.physical_weight),
			declared_order_total: toRupees(row.declared_order_total_paise),
			cod_amount: payment_mode === "cod" ? toRupees(row.cod_amount_paise) : null,
			length: num(row.length),
			width: num(row.width),
			height: num(row.height),
		},
		reverse:
			direction === "reverse"
				? {
						forward_source: row.forward_source,
						old_fwd_awb_no: row.old_fwd_awb_no,
						reverse_pickup_address_id: num(row.reverse_pickup_address_id),
						return_address: row.return_address,
					}
				: null,
		state: row.state,
		status: row.status,
		awb_number: row.awb_number,
		courier: row.courier,
		logistic_id: row.logistic_id,
		failure_reason: row.failure_reason,
		created_at: iso(row.created_at)!,
		order_date: iso(row.order_date)!,
		order_from_source: row.order_from_source,
		booked_at: iso(row.booked_at),
		updated_at: iso(row.updated_at)!,
	};
}

/**
 * The caller's order, or null (not found and not yours are the same).
 * `forBooking`: booking reads the order to book it; the same statement enters
 * the order in `intake.booking_requests` (once; committed before the answer), so
 * a status read of an order not entered there knows booking holds no attempt
 * for it (docs/decisions/0129-status-without-booking.md).
 */
export async function getOrder(
	db: Sequelize,
	sender_id: number,
	order_id: number,
	forBooking = false,
): Promise<OrderRecord | null> {
	const read = "SELECT * FROM intake.orders WHERE order_id = $1 AND sender_id = $2";
	const rows = await select<OrderRow>(
		db,
		forBooking
			? // a data-modifying WITH runs whether or not the SELECT reads it
				`WITH requested AS (
					INSERT INTO intake.booking_requests (order_id)
					SELECT order_id FROM intake.orders WHERE order_id = $1 AND sender_id = $2
					ON CONFLICT DO NOTHING
				)
				${read}`
			: read,
		[order_id, sender_id],
	);
	return rows.length ? toRecord(rows[0]) : null;
}

/** The §2.4 record of an order plus what `intake.status` needs to read booking's state through. */
export interface StoredStatus {
	record: StatusRecord;
	order_id: number;
	/** booking attempt of the last applied booking update; null when none arrived yet */
	booking_attempt_id: number | null;
	/** the order number was released (booking cancelled) */
	released: boolean;
	/** booking has read the order to book it (in `intake.booking_requests`, {@link getOrder} `forBooking`): it may hold an attempt */
	booking_requested: boolean;
}

/** Key of a status read in {@link findStatuses}: `<sender_id>:<order_no>`. */
export const statusKey = (sender_id: number, order_no: string): string => `${sender_id}:${order_no}`;

/**
 * §2.4 records of many `{sender_id, order_no}` (exact match) in one
 * statement, keyed {@link statusKey}; a reference the sender has no order
 * under has no entry. A reference reused after a cancellation answers the
 * live (unreleased) order, else the newest released one. `awb_number`/`courier`
 * and the signed `label_url` only when booked, `failure_reason` only when failed.
 */
export async function findStatuses(
	db: Sequelize,
	keys: { sender_id: number; order_no: string }[],
): Promise<Map<string, StoredStatus>> {
	const rows = await select<
		Pick<
			OrderRow,
			| "order_id"
			| "sender_id"
			| "customer_order_no"
			| "state"
			| "status"
			| "awb_number"
			| "courier"
			| "failure_reason"
		> & {
			created_at: string;
			booking_attempt_id: string | null;
			released: boolean;
			booking_requested: boolean;
		}
	>(
		db,
		// created_at as ISO text made by PostgreSQL: no Date parsed and formatted per status read
		`SELECT DISTINCT ON (sender_id, customer_order_no)
			order_id, sender_id, customer_order_no, state, status, awb_number, courier, failure_reason,
			${isoColumn("created_at")},
			booking_attempt_id, released_at IS NOT NULL AS released,
			EXISTS (SELECT FROM intake.booking_requests r WHERE r.order_id = o.order_id) AS booking_requested
		FROM intake.orders o
		WHERE (sender_id, customer_order_no) IN (SELECT * FROM unnest($1::bigint[], $2::text[]))
		ORDER BY sender_id, customer_order_no, (released_at IS NULL) DESC, order_id DESC`,
		[keys.map((k) => k.sender_id), keys.map((k) => k.order_no)],
	);
	const out = new Map<string, StoredStatus>();
	for (const r of rows) {
		const booked = r.state === "booked";
		out.set(statusKey(Number(r.sender_id), r.customer_order_no), {
			record: {
				order_no: r.customer_order_no,
				state: r.state,
				awb_number: booked ? r.awb_number : null,
				courier: booked ? r.courier : null,
				status: r.status,
				failure_reason: r.state === "failed" ? r.failure_reason : null,
				created_at: r.created_at,
				label_url: bookedLabelUrl(r.state, r.awb_number),
			},
			order_id: Number(r.order_id),
			booking_attempt_id: num(r.booking_attempt_id),
			released: r.released,
			booking_requested: r.booking_requested,
		});
	}
	return out;
}

/** `order_id:attempt_id:seq`: how {@link applyBookingUpdates} names an applied update. */
export function updateKey(u: Pick<BookingUpdate, "order_id" | "attempt_id" | "seq">): string {
	return `${u.order_id}:${u.attempt_id}:${u.seq}`;
}

/**
 * Applies booking updates, each only if `(attempt_id, seq)` is newer than the
 * row's (a conditional UPDATE; re-delivered or stale updates change nothing).
 * `awb_number`, `courier`, `logistic_id`, `failure_reason`, `failure_code`: a
 * given value (including null) is written; an omitted one keeps the row's
 * value when the update belongs to the same attempt and is cleared for a new
 * attempt. `booked_at` is stamped when the order becomes booked (kept while
 * the same attempt stays booked). Status `cancelled` (a cancelled booking)
 * stamps `released_at`: the order number is released for a new order (spec
 * §3); a released order stays released.
 *
 * Lifecycle (issue 7, spec §3; statuses of lib/shared/shipment-status.ts):
 * `status_at` is the update's `status_at` (ISO-8601 UTC), else the row's
 * when the same attempt reports the same status again, else now(). The
 * shipment timestamps are stamped from the status applied, each keeping the
 * first stamp of the attempt (a new attempt starts a new shipment: they are
 * cleared first): `manifested_at` (manifested), `picked_up_at` (picked_up,
 * in_transit, out_for_delivery, undelivered, delivered, rto_* — any status
 * that means the courier has the parcel, so a missed pick-up scan still
 * stamps it), `delivered_at` (delivered), `rto_at` (rto_initiated, or the
 * first later rto_* status when that scan was missed), `closed_at` (any
 * terminal status: delivered, rto_delivered, lost, damaged, cancelled). Each
 * takes the applied `status_at`.
 *
 * Many updates at once give the same result as applying them one by one
 * oldest first: one UPDATE … FROM unnest per wave, where a wave holds at most
 * one update per order (an order with several updates in `us` gets them in
 * (attempt_id, seq) order over successive waves). Answers the
 * {@link updateKey}s of the updates applied (the rows changed).
 */
export async function applyBookingUpdates(db: Sequelize, us: BookingUpdate[]): Promise<Set<string>> {
	const applied = new Set<string>();
	const sorted = [...us].sort((a, b) => a.attempt_id - b.attempt_id || a.seq - b.seq);
	let rest = sorted;
	while (rest.length) {
		const seen = new Set<number>();
		const wave: BookingUpdate[] = [];
		const later: BookingUpdate[] = [];
		for (const u of rest) {
			if (seen.has(u.order_id)) later.push(u);
			else {
				seen.add(u.order_id);
				wave.push(u);
			}
		}
		for (const k of await applyWave(db, wave)) applied.add(k);
		rest = later;
	}
	return applied;
}

/** Statuses after which the courier holds the parcel (`picked_up_at`; see {@link applyBookingUpdates}). */
const PICKUP_STAMP: readonly ShipmentStatus[] = [
	"picked_up",
	"in_transit",
	"out_for_delivery",
	"undelivered",
	"delivered",
	"rto_initiated",
	"rto_in_transit",
	"rto_delivered",
];
/** Statuses that stamp `rto_at` (the first of them). */
const RTO_STAMP: readonly ShipmentStatus[] = ["rto_initiated", "rto_in_transit", "rto_delivered"];

/**
 * SQL of the `status_at` an update applies (o: the row before the update, u:
 * the update): the update's time, else the row's when the same attempt
 * reports the same status again, else now().
 */
const STATUS_AT = `CASE WHEN u.status_at IS NOT NULL THEN u.status_at
	WHEN o.booking_attempt_id = u.attempt_id AND o.status = u.status THEN COALESCE(o.status_at, now())
	ELSE now() END`;

/**
 * SQL of one lifecycle timestamp column: the applied {@link STATUS_AT} when
 * the status is one of `statuses` and the attempt has no stamp yet; else the
 * attempt's stamp (kept); null for a new attempt.
 */
function stamp(column: string, statuses: readonly string[]): string {
	const kept = `CASE WHEN o.booking_attempt_id = u.attempt_id THEN o.${column} END`;
	return `${column} = CASE WHEN u.status IN (${sqlList(statuses)}) THEN COALESCE(${kept}, ${STATUS_AT}) ELSE ${kept} END`;
}

/** The UPDATE of {@link applyWave} (built once: the status lists are constants). */
const WAVE_SQL = `UPDATE intake.orders o SET
		state = u.state,
		status = u.status,
		awb_number = CASE WHEN u.has_awb THEN u.awb WHEN o.booking_attempt_id = u.attempt_id THEN o.awb_number END,
		courier = CASE WHEN u.has_courier THEN u.courier WHEN o.booking_attempt_id = u.attempt_id THEN o.courier END,
		logistic_id = CASE WHEN u.has_logistic THEN u.logistic_id WHEN o.booking_attempt_id = u.attempt_id THEN o.logistic_id END,
		failure_reason = CASE WHEN u.has_reason THEN u.reason WHEN o.booking_attempt_id = u.attempt_id THEN o.failure_reason END,
		failure_code = CASE WHEN u.has_code THEN u.code WHEN o.booking_attempt_id = u.attempt_id THEN o.failure_code END,
		booked_at = CASE
			WHEN u.state <> 'booked' THEN o.booked_at
			WHEN o.state = 'booked' AND o.booking_attempt_id = u.attempt_id AND o.booked_at IS NOT NULL THEN o.booked_at
			ELSE now() END,
		released_at = CASE WHEN u.status = 'cancelled' THEN COALESCE(o.released_at, now()) ELSE o.released_at END,
		status_at = ${STATUS_AT},
		${stamp("manifested_at", ["manifested"])},
		${stamp("picked_up_at", PICKUP_STAMP)},
		${stamp("delivered_at", ["delivered"])},
		${stamp("rto_at", RTO_STAMP)},
		${stamp("closed_at", TERMINAL_STATUSES)},
		booking_attempt_id = u.attempt_id,
		booking_seq = u.seq,
		updated_at = now()
	FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::integer[], $5::text[], $6::text[],
	            $7::boolean[], $8::text[], $9::boolean[], $10::text[], $11::boolean[], $12::integer[],
	            $13::boolean[], $14::text[], $15::boolean[], $16::text[], $17::timestamptz[])
	     AS u(order_id, sender_id, attempt_id, seq, state, status, has_awb, awb, has_courier, courier,
	          has_logistic, logistic_id, has_reason, reason, has_code, code, status_at)
	WHERE o.order_id = u.order_id AND o.sender_id = u.sender_id
		AND (o.booking_attempt_id IS NULL OR (o.booking_attempt_id, COALESCE(o.booking_seq, -1)) < (u.attempt_id, u.seq))
	RETURNING o.order_id, u.attempt_id, u.seq`;

/** One UPDATE for updates of distinct orders (see {@link applyBookingUpdates} for the rules). */
async function applyWave(db: Sequelize, wave: BookingUpdate[]): Promise<string[]> {
	const col = <T>(f: (u: BookingUpdate) => T) => wave.map(f);
	const given = (x: unknown) => x !== undefined;
	const { rows } = await exec<{ order_id: string; attempt_id: string; seq: number }>(db, WAVE_SQL, [
		col((u) => u.order_id),
		col((u) => u.sender_id),
		col((u) => u.attempt_id),
		col((u) => u.seq),
		col((u) => u.state),
		col((u) => u.status),
		col((u) => given(u.awb_number)),
		col((u) => u.awb_number ?? null),
		col((u) => given(u.courier)),
		col((u) => u.courier ?? null),
		col((u) => given(u.logistic_id)),
		col((u) => u.logistic_id ?? null),
		col((u) => given(u.failure_reason)),
		col((u) => u.failure_reason ?? null),
		col((u) => given(u.failure_code)),
		col((u) => u.failure_code ?? null),
		col((u) => (u.status_at ? new Date(u.status_at).toISOString() : null)),
	]);
	return rows.map((r) =>
		updateKey({ order_id: Number(r.order_id), attempt_id: Number(r.attempt_id), seq: r.seq }),
	);
}

/** SQL literal list of constant status / state names (never user input). */
function sqlList(values: readonly string[]): string {
	for (const s of values) if (!/^[a-z_]+$/.test(s)) throw new Error(`bad status constant ${s}`);
	return values.map((s) => `'${s}'`).join(", ");
}

const CLOSED = sqlList(CLOSED_STATUSES);
const PICKED_UP = sqlList(PICKED_UP_STATUSES);
const UNSHIPPED = sqlList(UNSHIPPED_STATES);

/**
 * Open orders shipping from one of the sender's warehouses, i.e. whose
 * `pickup_address_id` it is (a return's is the warehouse it goes back to;
 * `rto_address_id` does not count: §3 "no open order ships from it")
 * (§4.5 409 `warehouse_in_use` body): `unshipped` = state not_shipped, failed
 * or booking_in_progress; `awaiting_pickup` = booked and not yet collected by
 * the courier; closed orders (delivered, cancelled, …) are not counted.
 * `order_ids`: up to 20, newest first.
 */
export async function warehouseUsage(
	db: Sequelize,
	sender_id: number,
	warehouse_id: number,
): Promise<WarehouseUsage> {
	const rows = await select<{
		count: number;
		unshipped: number;
		awaiting_pickup: number;
		order_ids: string[] | null;
	}>(
		db,
		`WITH open AS (
			SELECT order_id, state IN (${UNSHIPPED}) AS unshipped
			FROM intake.orders
			WHERE sender_id = $1 AND pickup_address_id = $2
				AND status NOT IN (${CLOSED})
				AND (state IN (${UNSHIPPED}) OR status NOT IN (${PICKED_UP}))
		)
		SELECT count(*)::int AS count,
			(count(*) FILTER (WHERE unshipped))::int AS unshipped,
			(count(*) FILTER (WHERE NOT unshipped))::int AS awaiting_pickup,
			(SELECT array_agg(order_id ORDER BY order_id DESC)
				FROM (SELECT order_id FROM open ORDER BY order_id DESC LIMIT 20) newest) AS order_ids
		FROM open`,
		[sender_id, warehouse_id],
	);
	const r = rows[0];
	return {
		count: r.count,
		unshipped: r.unshipped,
		awaiting_pickup: r.awaiting_pickup,
		order_ids: (r.order_ids ?? []).map(Number),
	};
}

/**
 * Gives the sender's unbooked orders that arrived with no warehouse the
 * warehouse `warehouse_id` (§4.5 `orders_repaired`). Returns how many changed.
 */
export async function adoptOrphanOrders(
	db: Sequelize,
	sender_id: number,
	warehouse_id: number,
): Promise<number> {
	const { count } = await exec(
		db,
		`UPDATE intake.orders SET pickup_address_id = $2, updated_at = now()
		WHERE sender_id = $1 AND pickup_address_id IS NULL AND state = 'not_shipped'`,
		[sender_id, warehouse_id],
	);
	return count;
}

/**
 * Orders of the sender booked at or after `since`, per pickup warehouse id
 * (§2.9 `shipped_30d`). Warehouses with none are absent.
 */
export async function shippedCounts(
	db: Sequelize,
	sender_id: number,
	since: Date,
): Promise<Record<string, number>> {
	const rows = await select<{ warehouse_id: string; n: number }>(
		db,
		`SELECT pickup_address_id::text AS warehouse_id, count(*)::int AS n
		FROM intake.orders
		WHERE sender_id = $1 AND booked_at >= $2::timestamptz AND pickup_address_id IS NOT NULL
		GROUP BY pickup_address_id`,
		[sender_id, since.toISOString()],
	);
	const out: Record<string, number> = {};
	for (const r of rows) out[r.warehouse_id] = r.n;
	return out;
}

/**
 * Stores the COD statuses billing delivered (`intake.applyCodStatuses`;
 * billing's outbox, at least once, any order): per AWB the newest `version`
 * wins, so a redelivery or a late older one changes nothing. One statement.
 * @returns how many rows were written (new or newer)
 */
export async function applyCodStatuses(db: Sequelize, items: CodStatusUpdate[]): Promise<number> {
	if (!items.length) return 0;
	const { rows } = await exec<{ n: string }>(
		db,
		`WITH x AS (
			SELECT DISTINCT ON (awb_number) awb_number, sender_id, order_id, cod_status, version
			FROM jsonb_to_recordset($1::jsonb) AS x(awb_number text, sender_id bigint, order_id bigint, cod_status text,
				version integer)
			ORDER BY awb_number, version DESC),
		up AS (
			INSERT INTO intake.cod_statuses AS c (awb_number, sender_id, order_id, cod_status, version)
			SELECT awb_number, sender_id, order_id, cod_status, version FROM x ORDER BY awb_number
			ON CONFLICT (awb_number) DO UPDATE SET cod_status = EXCLUDED.cod_status, version = EXCLUDED.version,
				sender_id = EXCLUDED.sender_id, order_id = EXCLUDED.order_id, updated_at = now()
			WHERE c.version < EXCLUDED.version
			RETURNING 1)
		SELECT count(*) AS n FROM up`,
		[JSON.stringify(items)],
	);
	return Number(rows[0]?.n ?? 0);
}
