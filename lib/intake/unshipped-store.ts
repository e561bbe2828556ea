/**
 * SQL of the unshipped queue (./unshipped.ts; spec §4.3) over `intake.orders`.
 * Every statement binds its values; the only SQL built from strings are the
 * constant `error_type` expression and state lists below.
 *
 * The queue's predicate ({@link QUEUE}) is the one of the partial index
 * `orders_unshipped_idx` (sender_id, shipment_type, order_id DESC; migration
 * 0003): the counts are one index range per account and direction, and a list
 * page merges the two directions' ranges read in index order (about `limit`
 * rows each, whatever the queue's size or the page's depth).
 */
import type { Sequelize } from "sequelize";
import type {
	BookingState,
	ReceiverFields,
	ShipmentDirection,
	UnshippedErrorType,
	UnshippedRow,
} from "../contracts";
import { EDITABLE_FIELDS } from "../contracts/http/intake-input";
import { exec, select } from "../platform/db";
import { toRupees } from "../shared/money";
import {
	confirmationOf,
	FAILED_TYPES,
	type NotEditableReason,
	type ReceiverPatch,
	reasonOf,
	type UnshippedQuery,
} from "./unshipped";

/** The queue: not hidden, not cancelled, booking state not_shipped / failed / booking_in_progress (index predicate). */
const QUEUE = `hidden_at IS NULL AND state IN ('not_shipped', 'failed', 'booking_in_progress') AND status <> 'cancelled'`;

/** The `error_type` of a queue row (the rules of ./unshipped.ts, first match wins). */
const ERROR_TYPE = `CASE
	WHEN state = 'booking_in_progress' THEN 'in_queue'
	WHEN pickup_address_id IS NULL THEN 'pickup_address_missing'
	WHEN state = 'not_shipped' THEN 'not_booked'
	WHEN failure_code IN (${FAILED_TYPES.map((c) => `'${c}'`).join(", ")}) THEN failure_code
	ELSE 'booking_error' END`;

/** Largest bigint: the keyset bound of a first page. */
const NO_BOUND = "9223372036854775807";

/** A queue row as the driver returns it. */
interface QueueRow {
	order_id: string;
	customer_order_no: string;
	shipment_type: number;
	order_type: number;
	channel: string | null;
	declared_order_total_paise: string;
	cod_amount_paise: string;
	receiver_name: string;
	receiver_address_1: string;
	receiver_address_2: string | null;
	receiver_landmark: string | null;
	receiver_city: string | null;
	receiver_state: string | null;
	receiver_pincode: string;
	receiver_mobile_no: string;
	product_name: string;
	physical_weight: string;
	pickup_address_id: string | null;
	state: BookingState;
	status: string;
	failure_reason: string | null;
	error_type: UnshippedErrorType;
	created_at: Date;
	order_date: Date;
	edited_at: Date | null;
}

/** The §2.5 unshipped row of a stored row (rupees, ISO-8601 UTC). */
function toRow(r: QueueRow): UnshippedRow {
	const order_type = r.order_type === 1 ? 1 : 0;
	const shipment_type = r.shipment_type === 1 ? 1 : 0;
	return {
		order_id: Number(r.order_id),
		customer_order_no: r.customer_order_no,
		shipment_type,
		order_type,
		channel: r.channel,
		order_value: toRupees(r.declared_order_total_paise),
		cod_amount: order_type === 1 ? toRupees(r.cod_amount_paise) : null,
		confirmation: confirmationOf(order_type, shipment_type),
		address: {
			name: r.receiver_name,
			address_1: r.receiver_address_1,
			address_2: r.receiver_address_2,
			landmark: r.receiver_landmark,
			city: r.receiver_city,
			state: r.receiver_state,
			pincode: r.receiver_pincode,
			mobile_no: r.receiver_mobile_no,
		},
		product_name: r.product_name,
		physical_weight: Number(r.physical_weight),
		pickup_address_id: r.pickup_address_id === null ? null : Number(r.pickup_address_id),
		state: r.state,
		status: r.status,
		error_type: r.error_type,
		reason: reasonOf(r.error_type, r.failure_reason),
		created_at: r.created_at.toISOString(),
		order_date: r.order_date.toISOString(),
		edited_at: r.edited_at ? r.edited_at.toISOString() : null,
	};
}

/** Columns of a list row (./unshipped.ts `UnshippedRow`). */
const ROW_COLUMNS = `order_id, customer_order_no, shipment_type, order_type, channel,
	declared_order_total_paise, cod_amount_paise,
	receiver_name, receiver_address_1, receiver_address_2, receiver_landmark, receiver_city,
	receiver_state, receiver_pincode, receiver_mobile_no, product_name, physical_weight,
	pickup_address_id, state, status, failure_reason, ${ERROR_TYPE} AS error_type,
	created_at, order_date, edited_at`;

/**
 * One direction's newest queue rows below the keyset bound, filtered: an
 * ordered scan of `orders_unshipped_idx` (sender_id, shipment_type, order_id
 * DESC) that stops after $9 matches. Binds: $1 sender, $2 bound, $3
 * error_type, $4 customer_order_no, $5 pickup_address_id, $6 order_type, $7
 * / $8 paise bounds, $9 rows (null filters filter nothing).
 */
const pageBranch = (shipment_type: 0 | 1) => `(SELECT ${ROW_COLUMNS}
	FROM intake.orders
	WHERE sender_id = $1 AND shipment_type = ${shipment_type} AND ${QUEUE} AND order_id < $2::bigint
		AND ($3::text IS NULL OR ${ERROR_TYPE} = $3::text)
		AND ($4::text IS NULL OR customer_order_no = $4::text)
		AND ($5::bigint IS NULL OR pickup_address_id = $5::bigint)
		AND ($6::smallint IS NULL OR order_type = $6::smallint)
		AND ($7::bigint IS NULL OR declared_order_total_paise >= $7::bigint)
		AND ($8::bigint IS NULL OR declared_order_total_paise <= $8::bigint)
	ORDER BY order_id DESC LIMIT $9)`;

/**
 * The page: the newest $9 of both directions' branches. Each branch reads at
 * most $9 matching rows in index order, so a page costs about `limit` rows
 * (and the rows its filters skip) whatever the queue's size or the page's depth.
 */
const PAGE_SQL = `SELECT * FROM (${pageBranch(0)} UNION ALL ${pageBranch(1)}) page
	ORDER BY order_id DESC LIMIT $9`;

/**
 * One page of the account's queue, newest first (keyset on order_id, never
 * OFFSET): at most `q.limit` rows with `order_id < q.before_id`, filtered by
 * `q.filters`; `more` when a further row exists (one extra row is read).
 */
export async function unshippedPage(
	db: Sequelize,
	sender_id: number,
	q: UnshippedQuery,
): Promise<{ rows: UnshippedRow[]; more: boolean }> {
	const f = q.filters;
	const rows = await select<QueueRow>(db, PAGE_SQL, [
		sender_id,
		q.before_id === null ? NO_BOUND : String(q.before_id),
		f.error_type,
		f.customer_order_no,
		f.pickup_address_id,
		f.order_type,
		f.amount_min_paise,
		f.amount_max_paise,
		q.limit + 1,
	]);
	const more = rows.length > q.limit;
	return { rows: rows.slice(0, q.limit).map(toRow), more };
}

/** The account's queue in one direction by booking state: not_shipped, failed, booking_in_progress. */
export async function queueCounts(
	db: Sequelize,
	sender_id: number,
	direction: ShipmentDirection,
): Promise<{ not_shipped: number; failed: number; in_queue: number }> {
	const [r] = await select<{ not_shipped: number; failed: number; in_queue: number }>(
		db,
		`SELECT (count(*) FILTER (WHERE state = 'not_shipped'))::int AS not_shipped,
			(count(*) FILTER (WHERE state = 'failed'))::int AS failed,
			(count(*) FILTER (WHERE state = 'booking_in_progress'))::int AS in_queue
		FROM intake.orders
		WHERE sender_id = $1 AND shipment_type = $2 AND ${QUEUE}`,
		[sender_id, direction === "reverse" ? 1 : 0],
	);
	return r;
}

/** The account's queue (both directions) counted per `error_type`; types with none are absent. */
export async function errorTypeCounts(db: Sequelize, sender_id: number): Promise<Record<string, number>> {
	const rows = await select<{ error_type: string; n: number }>(
		db,
		`SELECT ${ERROR_TYPE} AS error_type, count(*)::int AS n
		FROM intake.orders WHERE sender_id = $1 AND ${QUEUE}
		GROUP BY 1`,
		[sender_id],
	);
	return Object.fromEntries(rows.map((r) => [r.error_type, r.n]));
}

/** Column of each editable field. */
const COLUMN: Record<keyof ReceiverFields, string> = {
	name: "receiver_name",
	address_1: "receiver_address_1",
	address_2: "receiver_address_2",
	landmark: "receiver_landmark",
	city: "receiver_city",
	state: "receiver_state",
	pincode: "receiver_pincode",
	mobile_no: "receiver_mobile_no",
};

/** Every editable column, in allow-list order. */
const COLUMNS = EDITABLE_FIELDS.map((k) => COLUMN[k]);

/**
 * The edit in one statement (static text, so it is prepared once): $1
 * order_id, $2 sender_id, $3 window in days, then per editable field (allow-list
 * order) a flag "sent" and its value. The guard (`o.…`): in the queue, state
 * not_shipped or failed, not released, created within the window.
 */
const EDIT_SQL = (() => {
	const sent = (i: number) => `$${4 + 2 * i}::boolean`;
	const val = (i: number) => `$${5 + 2 * i}::text`;
	const sets = COLUMNS.map((c, i) => `${c} = CASE WHEN ${sent(i)} THEN ${val(i)} ELSE o.${c} END`);
	const changed = COLUMNS.map((c, i) => `(${sent(i)} AND o.${c} IS DISTINCT FROM ${val(i)})`).join(" OR ");
	return `UPDATE intake.orders o SET ${sets.join(", ")},
			edited_at = CASE WHEN ${changed} THEN now() ELSE o.edited_at END,
			updated_at = CASE WHEN ${changed} THEN now() ELSE o.updated_at END
		FROM (SELECT order_id, ${COLUMNS.join(", ")}
			FROM intake.orders WHERE order_id = $1 AND sender_id = $2 FOR UPDATE) old
		WHERE o.order_id = old.order_id AND o.sender_id = $2
			AND o.hidden_at IS NULL AND o.state IN ('not_shipped', 'failed') AND o.status <> 'cancelled'
			AND o.released_at IS NULL AND o.created_at > now() - make_interval(days => $3::int)
		RETURNING o.status, ${COLUMNS.map((c) => `old.${c} AS old_${c}`).join(", ")}`;
})();

/**
 * Writes the fields of `patch` onto the account's order in ONE conditional
 * UPDATE (the row locked; under READ COMMITTED the guard is evaluated again
 * on the row's latest version, so an edit never lands on an order whose
 * booking update committed first): editable while not hidden, not cancelled
 * or released, state `not_shipped` or `failed`, created less than
 * `window_days` ago. `edited_at` (and `updated_at`) are stamped only when a
 * value actually changes. Answers the order's status and the fields whose
 * value changed (allow-list order), or null when the order is missing, not
 * the account's, or not editable (see {@link editBlocker}).
 */
export async function editReceiver(
	db: Sequelize,
	sender_id: number,
	order_id: number,
	patch: ReceiverPatch,
	window_days: number,
): Promise<{ status: string; changed: (keyof ReceiverFields)[] } | null> {
	const bind: unknown[] = [order_id, sender_id, window_days];
	for (const k of EDITABLE_FIELDS) bind.push(Object.hasOwn(patch, k), patch[k] ?? null);
	const { rows } = await exec<{ status: string } & Record<string, string | null>>(db, EDIT_SQL, bind);
	if (!rows.length) return null;
	const old = rows[0];
	const changed = EDITABLE_FIELDS.filter(
		(k) => Object.hasOwn(patch, k) && (patch[k] ?? null) !== old[`old_${COLUMN[k]}`],
	);
	return { status: old.status, changed };
}

/** Why an order cannot be edited (the 409's `reason`), or `missing` (404). */
export type EditBlocker = NotEditableReason | "missing";

/**
 * Reads why {@link editReceiver} changed nothing: `missing` when the account
 * has no such order, else the first of hidden, cancelled, booked (any state
 * past booking), booking_in_progress, expired (created more than
 * `window_days` ago); null when it looks editable now (a concurrent change).
 */
export async function editBlocker(
	db: Sequelize,
	sender_id: number,
	order_id: number,
	window_days: number,
): Promise<EditBlocker | null> {
	const rows = await select<{
		state: BookingState;
		status: string;
		hidden: boolean;
		released: boolean;
		expired: boolean;
	}>(
		db,
		`SELECT state, status, hidden_at IS NOT NULL AS hidden, released_at IS NOT NULL AS released,
			created_at <= now() - make_interval(days => $3::int) AS expired
		FROM intake.orders WHERE order_id = $1 AND sender_id = $2`,
		[order_id, sender_id, window_days],
	);
	if (!rows.length) return "missing";
	const r = rows[0];
	if (r.hidden) return "hidden";
	if (r.status === "cancelled" || r.released) return "cancelled";
	if (r.state === "booked") return "booked";
	if (r.state === "booking_in_progress") return "booking_in_progress";
	if (r.expired) return "expired";
	return null;
}

/** The account's order reference (`customer_order_no`), or null when missing or not the account's. */
export async function orderReference(
	db: Sequelize,
	sender_id: number,
	order_id: number,
): Promise<string | null> {
	const rows = await select<{ customer_order_no: string }>(
		db,
		`SELECT customer_order_no FROM intake.orders WHERE order_id = $1 AND sender_id = $2`,
		[order_id, sender_id],
	);
	return rows.length ? rows[0].customer_order_no : null;
}

/**
 * Hides the account's order: stamps `hidden_at` once (hiding again keeps the
 * first time). Answers the stored reference, or null when the order is
 * missing or not the account's.
 */
export async function hideOrder(db: Sequelize, sender_id: number, order_id: number): Promise<string | null> {
	const { rows } = await exec<{ customer_order_no: string }>(
		db,
		`UPDATE intake.orders SET hidden_at = COALESCE(hidden_at, now()),
			updated_at = CASE WHEN hidden_at IS NULL THEN now() ELSE updated_at END
		WHERE order_id = $1 AND sender_id = $2
		RETURNING customer_order_no`,
		[order_id, sender_id],
	);
	return rows.length ? rows[0].customer_order_no : null;
}
