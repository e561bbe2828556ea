/**
 * SQL of the booking service (schema `booking`, see ../migrations.ts): attempts and the outbox. Every
 * state change is a conditional UPDATE (compare-and-set on `state`), every
 * create an INSERT guarded by a unique index, never read-then-write.
 * Money is stored as integer paise in `charges`.
 */
import type { Sequelize, Transaction } from "sequelize";
import type {
	BookingUpdate,
	CourierLabelCapture,
	CreditLimitEvent,
	FailureCode,
	LaneOutcomeParams,
	LedgerEntryEvent,
	PickupScanQuestion,
	Quote,
	ShipmentDirection,
	ShipmentRecord,
	ShipmentStatusChanged,
} from "../../contracts";
import { exec, numbersIn, type StoredRow, select } from "../../platform/db";
import { markOutboxDelivered, retryOutboxLater } from "../../platform/outbox";
import { toPaise, toRupees } from "../../shared/money";
import type { ShipmentStatus } from "../../shared/shipment-status";
import { assertCredit, assertPaise } from "./ledger";

/** State of a booking attempt (`booking.attempts.state`; queued, claimed and booked are live). */
export type AttemptState = "queued" | "claimed" | "booked" | "failed" | "cancelled";

/** Quoted charges in paise. */
export interface StoredCharges {
	freight_charge: number;
	cod_charge: number;
	shipping_charge_tax: number;
	total: number;
	rto_charge: number;
	zone: string;
	/** chargeable kg */
	weight: number;
}

/** One refusal of an AUTO booking's fall-over chain (`booking.attempts.chain`). */
export interface ChainEntry {
	logistic_id: number;
	courier_name: string;
	/** that attempt's failure_reason, plain words ("Sandbox Express refused: …") */
	reason: string;
}

/** One `booking.attempts` row (ids as numbers). */
export interface AttemptRow {
	attempt_id: number;
	order_id: number;
	sender_id: number;
	logistic_id: number;
	courier_name: string;
	mode: "auto" | "forced";
	idem_key: string;
	state: AttemptState;
	awb_number: string | null;
	routing_code: string | null;
	charges: StoredCharges | null;
	failure_reason: string | null;
	last_error: string | null;
	ambiguous: boolean;
	tries: number;
	claimed_at: Date | null;
	booked_at: Date | null;
	created_at: Date;
	updated_at: Date;
	direction: ShipmentDirection;
	/** the route that created it: `async` (POST /v1/shipping/book) or `sync` (book/sync) */
	via: "async" | "sync";
	/** AUTO: earlier attempts of this booking whose courier refused, oldest first */
	chain: ChainEntry[];
	cancel_requested_at: Date | null;
	cancelled_at: Date | null;
	settled_at: Date | null;
	/** the folded normalized status of a booked shipment (lib/booking/tracking.ts); null before booked */
	shipment_status: ShipmentStatus | null;
	/** time of the latest scan folded into `shipment_status` (booked_at when booked) */
	shipment_status_at: Date | null;
	/** seq of the attempt's last order update (2 after settling; each tracking update and the cancel add 1) */
	order_seq: number;
	/** when the poller asks the courier about this shipment next; null when not tracked (not booked, terminal) */
	next_track_at: Date | null;
	/** booked with a courier that issues its own label file (markBooked; documents captures it) */
	courier_label?: boolean;
	/** the lane priced (lib/booking/shipment.ts `laneOf`): pickup and delivery pincodes; null on older attempts */
	from_pin: string | null;
	to_pin: string | null;
	/** time of the earliest picked_up scan */
	picked_up_at: Date | null;
	/** the pickup warehouse (bigint text as pg answers it; null on attempts before issue 28): pickups' `picked_up` */
	warehouse_id: string | null;
	/**
	 * The Moleculer context id of the call that created it (issue 30): a call sent again after its node
	 * died (lib/platform/dead-node.ts) carries the same id and is answered this attempt, not a 409.
	 */
	call_key: string | null;
	/**
	 * Only on a row returned by {@link claimAttempt}: whether an earlier attempt
	 * of the order was failed and ambiguous at the claim (see {@link ambiguousAttempts}).
	 * False stays false while this attempt is live: an earlier attempt is then
	 * settled, and a settled attempt never becomes ambiguous.
	 */
	earlier_ambiguous?: boolean;
}

/**
 * What an outbox row delivers: an order update for intake, the attempt's
 * BullMQ job, or a delivered / RTO outcome for `rates.recordLaneOutcome`
 * (lib/booking/tracking.ts).
 */
export type OutboxMessage =
	| { kind: "order_update"; payload: BookingUpdate }
	| { kind: "enqueue_booking"; payload: { attempt_id: number } }
	| { kind: "lane_outcome"; payload: LaneOutcomeParams }
	// the durable `shipment.status_changed` (lib/booking/relay.ts publishes it to its channel)
	| { kind: "status_event"; payload: ShipmentStatusChanged }
	// capture of a courier-issued label (markBooked; lib/booking/relay.ts calls documents.captureCourierLabel)
	| { kind: "courier_label"; payload: CourierLabelCapture }
	// a ledger row for billing's wallet (written by the booking.ledger trigger; relay calls billing.recordEntries)
	| { kind: "ledger_entry"; payload: LedgerEntryEvent }
	// a credit limit for billing's wallet (setCreditLimitPaise; relay calls billing.applyCreditLimit)
	| { kind: "credit_limit"; payload: CreditLimitEvent };

/** One leased `booking.outbox` row; `tries` counts deliveries including this one. */
export type OutboxRow = OutboxMessage & { id: number; tries: number };

const ATTEMPT_NUMBERS = ["attempt_id", "order_id", "sender_id", "logistic_id", "tries"] as const;

/** A `booking.attempts` row as pg returns it: bigint and integer ids may come as strings. */
type StoredAttempt = StoredRow<AttemptRow, (typeof ATTEMPT_NUMBERS)[number]>;

function attempt(r: StoredAttempt): AttemptRow {
	return numbersIn<AttemptRow, (typeof ATTEMPT_NUMBERS)[number]>(r, ATTEMPT_NUMBERS);
}

/** Quote (rupees) → stored charges (paise). */
export function chargesOf(q: Quote): StoredCharges {
	return {
		freight_charge: toPaise(q.freight_charge),
		cod_charge: toPaise(q.cod_charge),
		shipping_charge_tax: toPaise(q.shipping_charge_tax),
		total: toPaise(q.total),
		rto_charge: toPaise(q.rto_charge ?? 0),
		zone: q.zone,
		weight: q.weight,
	};
}

/** The live attempt (queued, claimed or booked) of an order, if any. */
export async function liveAttempt(
	db: Sequelize,
	order_id: number,
	t?: Transaction,
): Promise<AttemptRow | undefined> {
	const rows = await select<StoredAttempt>(
		db,
		`SELECT * FROM booking.attempts WHERE order_id = $1 AND state IN ('queued', 'claimed', 'booked')`,
		[order_id],
		t,
	);
	return rows[0] ? attempt(rows[0]) : undefined;
}

/** One attempt by id. */
export async function attemptById(db: Sequelize, attempt_id: number): Promise<AttemptRow | undefined> {
	const rows = await select<StoredAttempt>(db, `SELECT * FROM booking.attempts WHERE attempt_id = $1`, [
		attempt_id,
	]);
	return rows[0] ? attempt(rows[0]) : undefined;
}

/** What `book` / `bookSync` / a fall-over commit for a new attempt (charges in paise, {@link chargesOf}). */
export interface NewAttempt {
	order_id: number;
	sender_id: number;
	logistic_id: number;
	courier_name: string;
	mode: "auto" | "forced";
	charges: StoredCharges | null;
	direction: ShipmentDirection;
	via: "async" | "sync";
	/** AUTO fall-over: the refusals before this attempt (default none) */
	chain?: ChainEntry[];
	/** the lane (`laneOf`): pickup and delivery pincodes; a fall-over keeps the failed attempt's */
	from_pin?: string | null;
	to_pin?: string | null;
	/** the order's pickup warehouse (a fall-over keeps the failed attempt's) */
	warehouse_id?: number | string | null;
	/** the quote's estimated delivery date (IST `YYYY-MM-DD`), shown on the buyer's tracking page */
	edd?: string | null;
	/** the creating call's context id ({@link AttemptRow.call_key}); a fall-over keeps none */
	call_key?: string | null;
	/**
	 * Delay (ms) before the `enqueue_booking` row is due: 0 for the worker; the
	 * sync budget for book/sync, which books inline and leaves the job to the
	 * relay only if it cannot settle in time (or dies).
	 */
	enqueueDelayMs?: number;
}

/** An outbox message and the delay (ms, default 0) before the relay may deliver it. */
type Pending = OutboxMessage & { delayMs?: number };

/**
 * Inserts outbox rows in ONE statement (transaction `t`); returns their ids in
 * the order of `rows` (ids come from a sequence, assigned in that order).
 */
async function addOutbox(db: Sequelize, t: Transaction, rows: Pending[]): Promise<number[]> {
	if (!rows.length) return [];
	const { rows: out } = await exec<{ id: string }>(
		db,
		`INSERT INTO booking.outbox (kind, payload, next_attempt_at)
		 SELECT r.kind, r.payload, now() + make_interval(secs => r.delay / 1000)
		 FROM unnest($1::text[], $2::jsonb[], $3::double precision[]) WITH ORDINALITY AS r(kind, payload, delay, n)
		 ORDER BY r.n
		 RETURNING id`,
		[rows.map((r) => r.kind), rows.map((r) => JSON.stringify(r.payload)), rows.map((r) => r.delayMs ?? 0)],
		t,
	);
	return out.map((r) => Number(r.id)).sort((a, b) => a - b);
}

/** Ids of the undelivered `order_update` rows among `ids` (delivered before an answer: read-your-writes). */
export async function orderUpdateRows(db: Sequelize, ids: number[]): Promise<number[]> {
	const rows = await select<{ id: string }>(
		db,
		`SELECT id FROM booking.outbox WHERE id = ANY($1::bigint[]) AND kind = 'order_update' AND delivered_at IS NULL`,
		[ids],
	);
	return rows.map((r) => Number(r.id));
}

/**
 * Makes the attempt's undelivered `enqueue_booking` row due now (book/sync
 * hands the attempt to the worker). Returns the row ids.
 */
export async function enqueueNow(db: Sequelize, attempt_id: number): Promise<number[]> {
	const { rows } = await exec<{ id: string }>(
		db,
		`UPDATE booking.outbox SET next_attempt_at = now()
		 WHERE kind = 'enqueue_booking' AND delivered_at IS NULL AND (payload->>'attempt_id')::bigint = $1
		 RETURNING id`,
		[attempt_id],
	);
	return rows.map((r) => Number(r.id));
}

/**
 * The first nine bind values of a new attempt row, in the column order both
 * inserts use: order_id, sender_id, logistic_id, courier_name, mode, charges
 * (JSON or null), direction, via, chain (JSON, `[]` when absent).
 */
function attemptValues(a: NewAttempt): unknown[] {
	return [
		a.order_id,
		a.sender_id,
		a.logistic_id,
		a.courier_name,
		a.mode,
		a.charges ? JSON.stringify(a.charges) : null,
		a.direction,
		a.via,
		JSON.stringify(a.chain ?? []),
	];
}

/**
 * Inside transaction `t`: the credit check of the quoted total (ledger.ts
 * `assertCredit`, throws 409 `credit_limit_exceeded`), then the queued attempt
 * and its outbox rows (the seq-1 `order_update` "booking_in_progress", then
 * `enqueue_booking`, due after `enqueueDelayMs`). `{conflict}` (the order's
 * live attempt) when the partial unique index says the order already has one.
 */
async function insertAttempt(
	db: Sequelize,
	t: Transaction,
	a: NewAttempt,
): Promise<{ attempt: AttemptRow; outbox: number[] } | { conflict: AttemptRow | undefined }> {
	await assertCredit(db, t, a.sender_id, a.charges?.total ?? 0);
	const { rows } = await exec<StoredAttempt>(
		db,
		`INSERT INTO booking.attempts (order_id, sender_id, logistic_id, courier_name, mode, charges, state, direction, via, chain, from_pin, to_pin, warehouse_id, edd, call_key)
		 VALUES ($1, $2, $3, $4, $5, $6::jsonb, 'queued', $7, $8, $9::jsonb, $10, $11, $12, $13::date, $14)
		 ON CONFLICT (order_id) WHERE state IN ('queued', 'claimed', 'booked') DO NOTHING
		 RETURNING *`,
		[
			...attemptValues(a),
			a.from_pin ?? null,
			a.to_pin ?? null,
			a.warehouse_id ?? null,
			a.edd ?? null,
			a.call_key ?? null,
		],
		t,
	);
	if (!rows[0]) return { conflict: await liveAttempt(db, a.order_id, t) };
	const row = attempt(rows[0]);
	const outbox = await addOutbox(db, t, [
		{
			kind: "order_update",
			payload: orderUpdate(row, 1, { state: "booking_in_progress", status: "booking_queued" }),
		},
		{ kind: "enqueue_booking", payload: { attempt_id: row.attempt_id }, delayMs: a.enqueueDelayMs ?? 0 },
	]);
	return { attempt: row, outbox };
}

/**
 * Atomically (one transaction): credit check, the queued attempt and its
 * outbox rows (see {@link insertAttempt}). Returns `{attempt, outbox}` or
 * `{conflict}`.
 *
 * Fast path: an account without a credit limit needs no check, so the attempt
 * and its outbox rows are written by ONE autocommitted statement
 * (data-modifying CTEs: all or nothing), guarded by the same unique index. The
 * statement writes nothing when the account has a credit limit; the booking
 * then takes the transactional path (credit check under the account's
 * advisory lock, {@link insertAttempt}).
 * @throws ApiError 409 `credit_limit_exceeded` (nothing committed)
 */
export async function createAttempt(
	db: Sequelize,
	a: NewAttempt,
): Promise<{ attempt: AttemptRow; outbox: number[] } | { conflict: AttemptRow | undefined }> {
	const fast = await insertAttemptUnlimited(db, a);
	if (fast === "limited") return db.transaction((t) => insertAttempt(db, t, a));
	return fast;
}

/** An outbox row of a new attempt whose payload lacks `attempt_id` (the statement adds it). */
interface PendingWithoutId {
	kind: OutboxMessage["kind"];
	payload: Omit<BookingUpdate, "attempt_id"> | Record<string, never>;
	delayMs: number;
}

/** The outbox rows of a new attempt: as {@link insertAttempt} writes them, without `attempt_id`. */
function newAttemptOutbox(a: NewAttempt): PendingWithoutId[] {
	const { attempt_id: _, ...update } = orderUpdate(
		{ order_id: a.order_id, sender_id: a.sender_id, attempt_id: 0 },
		1,
		{
			state: "booking_in_progress",
			status: "booking_queued",
		},
	);
	return [
		{ kind: "order_update", payload: update, delayMs: 0 },
		{ kind: "enqueue_booking", payload: {}, delayMs: a.enqueueDelayMs ?? 0 },
	];
}

/**
 * {@link createAttempt}'s fast path: ONE statement inserting the queued
 * attempt and its outbox rows (`payload || {attempt_id}`, in the order of
 * {@link newAttemptOutbox}) unless `booking.accounts` holds a credit limit for
 * the sender (then nothing is written: `"limited"`). `{conflict}` when the
 * order already has a live attempt (the partial unique index).
 */
async function insertAttemptUnlimited(
	db: Sequelize,
	a: NewAttempt,
): Promise<{ attempt: AttemptRow; outbox: number[] } | { conflict: AttemptRow | undefined } | "limited"> {
	const rows = newAttemptOutbox(a);
	const res = await select<StoredAttempt & { x_limited: boolean; x_outbox: string[] | null }>(
		db,
		`WITH lim AS (
		   SELECT 1 FROM booking.accounts WHERE sender_id = $2 AND credit_limit_paise IS NOT NULL),
		 a AS (
		   INSERT INTO booking.attempts (order_id, sender_id, logistic_id, courier_name, mode, charges, state, direction, via, chain, from_pin, to_pin, warehouse_id, edd, call_key)
		   SELECT $1, $2, $3, $4, $5, $6::jsonb, 'queued', $7, $8, $9::jsonb, $13, $14, $15, $16::date, $17
		   WHERE NOT EXISTS (SELECT 1 FROM lim)
		   ON CONFLICT (order_id) WHERE state IN ('queued', 'claimed', 'booked') DO NOTHING
		   RETURNING *),
		 o AS (
		   INSERT INTO booking.outbox (kind, payload, next_attempt_at)
		   SELECT r.kind, r.payload || jsonb_build_object('attempt_id', a.attempt_id),
		          now() + make_interval(secs => r.delay / 1000)
		   FROM a, unnest($10::text[], $11::jsonb[], $12::double precision[]) WITH ORDINALITY AS r(kind, payload, delay, n)
		   ORDER BY r.n
		   RETURNING id)
		 SELECT a.*, l.x_limited, (SELECT array_agg(o.id ORDER BY o.id) FROM o) AS x_outbox
		 FROM (SELECT EXISTS (SELECT 1 FROM lim) AS x_limited) l LEFT JOIN a ON true`,
		[
			...attemptValues(a),
			rows.map((r) => r.kind),
			rows.map((r) => JSON.stringify(r.payload)),
			rows.map((r) => r.delayMs),
			a.from_pin ?? null,
			a.to_pin ?? null,
			a.warehouse_id ?? null,
			a.edd ?? null,
			a.call_key ?? null,
		],
	);
	const { x_limited, x_outbox, ...stored } = res[0];
	if (x_limited) return "limited";
	if (stored.attempt_id === null) return { conflict: await liveAttempt(db, a.order_id) };
	return { attempt: attempt(stored), outbox: (x_outbox ?? []).map(Number) };
}

/**
 * AUTO fall-over, in ONE transaction: the claimed attempt `a` → failed with
 * `reason` (the courier's words; no order update, so intake stays at
 * booking_in_progress: the next attempt's seq-1 update supersedes it), and the
 * next attempt `next` for the next ranked courier (credit check, seq-1 update,
 * enqueue row). Null when `a` is no longer this claim's, or its cancel was
 * requested (the caller then ends it with {@link markFailed}).
 * @throws ApiError 409 `credit_limit_exceeded` (nothing committed)
 */
export async function failOver(
	db: Sequelize,
	a: AttemptRow,
	reason: string,
	next: NewAttempt,
): Promise<{ attempt: AttemptRow; outbox: number[] } | null> {
	return db.transaction(async (t) => {
		const { count } = await exec(
			db,
			`UPDATE booking.attempts
			 SET state = 'failed', failure_reason = $3, claimed_at = NULL, settled_at = now(), updated_at = now()
			 WHERE attempt_id = $1 AND state = 'claimed' AND tries = $2 AND cancel_requested_at IS NULL`,
			[a.attempt_id, a.tries, reason.slice(0, 2000)],
			t,
		);
		if (!count) return null;
		await skipEnqueue(db, t, a.attempt_id);
		const res = await insertAttempt(db, t, {
			...next,
			from_pin: next.from_pin ?? a.from_pin,
			to_pin: next.to_pin ?? a.to_pin,
			warehouse_id: next.warehouse_id ?? a.warehouse_id,
		});
		// the order's only live attempt was `a`, failed above: no conflict is possible
		if ("conflict" in res) throw new Error(`order ${a.order_id}: a live attempt appeared during fall-over`);
		return res;
	});
}

/**
 * {@link claimAttempt}'s statement ($1 attempt_id, $2 staleMs): the claim, and whether an earlier attempt of the order
 * failed ambiguously (read through booking migration 017's `attempts_ambiguous`; test/unit/booking/ambiguous-index.spec.ts
 * plans it).
 */
export const CLAIM_ATTEMPT_SQL = `UPDATE booking.attempts x
		 SET state = 'claimed', claimed_at = now(), tries = x.tries + 1, updated_at = now()
		 WHERE x.attempt_id = $1
		   AND (x.state = 'queued' OR (x.state = 'claimed' AND x.claimed_at < now() - make_interval(secs => $2::double precision / 1000)))
		 RETURNING x.*, EXISTS (
		   SELECT 1 FROM booking.attempts p
		   WHERE p.order_id = x.order_id AND p.attempt_id < x.attempt_id AND p.state = 'failed' AND p.ambiguous
		 ) AS earlier_ambiguous`;

/**
 * Claims an attempt for processing: queued → claimed, or a claimed attempt
 * whose claim is older than `staleMs` (its worker died). Every claim bumps
 * `tries`: only the holder of the latest claim (same `tries`) can settle or
 * release it. Null when not claimable. The row tells whether an earlier
 * attempt of the order is ambiguous (`earlier_ambiguous`), which spares the
 * worker the look-up of {@link ambiguousAttempts} when none is.
 */
export async function claimAttempt(
	db: Sequelize,
	attempt_id: number,
	staleMs: number,
): Promise<AttemptRow | null> {
	const { rows } = await exec<StoredAttempt>(db, CLAIM_ATTEMPT_SQL, [attempt_id, staleMs]);
	return rows[0] ? attempt(rows[0]) : null;
}

/** Gives this claim back (claimed → queued) so a retry can take it; records the error for ops. */
export async function releaseAttempt(
	db: Sequelize,
	a: Pick<AttemptRow, "attempt_id" | "tries">,
	error: string,
): Promise<void> {
	await exec(
		db,
		`UPDATE booking.attempts SET state = 'queued', claimed_at = NULL, last_error = $3, updated_at = now()
		 WHERE attempt_id = $1 AND state = 'claimed' AND tries = $2`,
		[a.attempt_id, a.tries, error.slice(0, 1000)],
	);
}

/**
 * Attempts unsettled (queued or claimed) since longer than `olderMs` after
 * their creation: the sweeper settles them by asking the courier.
 */
export async function unsettledAttempts(db: Sequelize, olderMs: number, limit = 100): Promise<number[]> {
	return attemptIdsWhere(db, `state IN ('queued', 'claimed') AND created_at < ${ago(1)}`, [olderMs], limit);
}

/** SQL for "now minus `$n` milliseconds" (a bound number of ms). */
function ago(n: number): string {
	return `now() - make_interval(secs => $${n}::double precision / 1000)`;
}

/** Ids of the attempts matching `where` (constant SQL binding `bind` as $1…), oldest first, at most `limit`. */
async function attemptIdsWhere(
	db: Sequelize,
	where: string,
	bind: unknown[],
	limit: number,
): Promise<number[]> {
	const rows = await select<{ attempt_id: string }>(
		db,
		`SELECT attempt_id FROM booking.attempts WHERE ${where} ORDER BY attempt_id LIMIT $${bind.length + 1}`,
		[...bind, limit],
	);
	return rows.map((r) => Number(r.attempt_id));
}

/**
 * Takes an unsettled attempt over (see {@link unsettledAttempts}): a new claim
 * (tries + 1) whatever its current claim, so a worker still holding the old
 * one can no longer settle it. Null when it settled meanwhile.
 */
export async function takeOverUnsettled(
	db: Sequelize,
	attempt_id: number,
	olderMs: number,
): Promise<AttemptRow | null> {
	const { rows } = await exec<StoredAttempt>(
		db,
		`UPDATE booking.attempts
		 SET state = 'claimed', claimed_at = now(), tries = tries + 1, updated_at = now()
		 WHERE attempt_id = $1 AND state IN ('queued', 'claimed')
		   AND created_at < ${ago(2)}
		 RETURNING *`,
		[attempt_id, olderMs],
	);
	return rows[0] ? attempt(rows[0]) : null;
}

/** `last_error` of an `enqueue_booking` row skipped because its attempt settled first. */
const ENQUEUE_SKIPPED = "not needed: the attempt settled first";

/**
 * Marks the attempt's undelivered `enqueue_booking` rows delivered (the
 * attempt settled before its job was needed: book/sync, fall-over).
 */
async function skipEnqueue(db: Sequelize, t: Transaction, attempt_id: number): Promise<void> {
	await exec(
		db,
		`UPDATE booking.outbox SET delivered_at = now(), last_error = '${ENQUEUE_SKIPPED}'
		 WHERE kind = 'enqueue_booking' AND delivered_at IS NULL AND (payload->>'attempt_id')::bigint = $1`,
		[attempt_id],
		t,
	);
}

/** The `order_update` payload (lib/contracts/intake.ts BookingUpdate) of attempt `a` at step `seq`. */
function orderUpdate(
	a: Pick<AttemptRow, "order_id" | "sender_id" | "attempt_id">,
	seq: 1 | 2,
	outcome: Pick<BookingUpdate, "state" | "status"> & Partial<BookingUpdate>,
): BookingUpdate {
	return {
		order_id: a.order_id,
		sender_id: a.sender_id,
		attempt_id: a.attempt_id,
		seq,
		awb_number: null,
		courier: null,
		logistic_id: null,
		failure_reason: null,
		failure_code: null,
		...outcome,
	};
}

/** The seq-2 order update of a cancelled booking (common brief "Cancel semantics"). */
function cancelledUpdate(a: Pick<AttemptRow, "order_id" | "sender_id" | "attempt_id">): BookingUpdate {
	return orderUpdate(a, 2, { state: "not_shipped", status: "cancelled" });
}

/**
 * Ends this claim of attempt `a` (same `tries`) in ONE autocommitted statement
 * (data-modifying CTEs: all or nothing): the conditional UPDATE (`set`
 * assignments, bind params from $3 on; `extra` more WHERE conditions), the
 * skip of a still pending enqueue row, the ledger `charge` when given
 * (idempotent per attempt: ON CONFLICT (attempt_id, kind) DO NOTHING) and the
 * seq-2 `order_update`: `updates[state]`, picked by the state the UPDATE set.
 * Nothing is written unless the UPDATE matched. Returns the outbox ids, or
 * null when the claim is no longer this one's (another worker or the sweeper
 * took it) or `extra` did not hold.
 */
async function settleClaimed(
	db: Sequelize,
	a: AttemptRow,
	set: string,
	bind: unknown[],
	updates: Partial<Record<AttemptState, BookingUpdate>>,
	opts: {
		extra?: string;
		charge?: { amount_paise: number; awb_number: string; note: string };
		/** also a `courier_label` outbox row (capture of the courier's label file) when the UPDATE booked */
		label?: boolean;
	} = {},
): Promise<number[] | null> {
	const params: unknown[] = [a.attempt_id, a.tries, ...bind, JSON.stringify(updates)];
	const u = params.length;
	let charge = "";
	if (opts.charge) {
		assertPaise(opts.charge.amount_paise);
		params.push(opts.charge.amount_paise, opts.charge.awb_number, opts.charge.note);
		charge = `,
			 charge AS (
			   INSERT INTO booking.ledger (sender_id, attempt_id, order_id, kind, amount_paise, awb_number, note)
			   SELECT a.sender_id, a.attempt_id, a.order_id, 'charge', $${u + 1}, $${u + 2}, $${u + 3} FROM a
			   ON CONFLICT (attempt_id, kind) DO NOTHING)`;
	}
	const label = opts.label
		? `,
		 label AS (
		   INSERT INTO booking.outbox (kind, payload, next_attempt_at)
		   SELECT 'courier_label', jsonb_build_object('sender_id', a.sender_id, 'order_id', a.order_id,
		     'awb_number', a.awb_number, 'logistic_id', a.logistic_id), now() FROM a WHERE a.state = 'booked'
		   RETURNING id)`
		: "";
	const { rows } = await exec<{ id: string }>(
		db,
		`WITH a AS (
		   UPDATE booking.attempts SET ${set}, claimed_at = NULL, settled_at = now(), updated_at = now()
		   WHERE attempt_id = $1 AND state = 'claimed' AND tries = $2 ${opts.extra ?? ""}
		   RETURNING *),
		 skip AS (
		   UPDATE booking.outbox SET delivered_at = now(), last_error = '${ENQUEUE_SKIPPED}'
		   WHERE kind = 'enqueue_booking' AND delivered_at IS NULL AND (payload->>'attempt_id')::bigint = $1
		     AND EXISTS (SELECT 1 FROM a))${charge},
		 o AS (
		   INSERT INTO booking.outbox (kind, payload, next_attempt_at)
		   SELECT 'order_update', $${u}::jsonb -> a.state, now() FROM a
		   RETURNING id)${label}
		 SELECT id FROM o${opts.label ? " UNION ALL SELECT id FROM label" : ""}`,
		params,
	);
	return rows.length ? rows.map((r) => Number(r.id)) : null;
}

/**
 * claimed → booked with the AWB, the ledger charge (kind `charge`, the quoted
 * total in paise; idempotent per attempt) and the seq-2 `order_update`,
 * atomically (see {@link settleClaimed}). Books only while no cancel was
 * requested: null when the claim is not this one's or a cancel was requested
 * (the caller re-reads the attempt to tell which). Tracking starts here:
 * `shipment_status` booked as of `booked_at`, `next_track_at` now (the
 * poller's first ask picks up the courier's first scans). `courierLabel`
 * (the courier issues its own label file, its adapter's `issuesOwnLabel`)
 * marks the attempt `courier_label` and adds, in the same statement, the
 * `courier_label` outbox row that has documents capture the file.
 */
export function markBooked(
	db: Sequelize,
	a: AttemptRow,
	awb_number: string,
	routing_code: string | null,
	courierLabel = false,
): Promise<number[] | null> {
	// order, sender, courier and charges of an attempt never change after its INSERT
	return settleClaimed(
		db,
		a,
		// tracking (lib/booking/tracking.ts): status booked as of now, due for a first poll at once
		`state = 'booked', awb_number = $3, routing_code = $4, booked_at = now(), failure_reason = NULL,
		 shipment_status = 'booked', shipment_status_at = now(), next_track_at = now(), courier_label = $5`,
		[awb_number, routing_code, courierLabel],
		{
			booked: orderUpdate(a, 2, {
				state: "booked",
				status: "booked",
				awb_number,
				courier: a.courier_name,
				logistic_id: a.logistic_id,
			}),
		},
		{
			extra: "AND cancel_requested_at IS NULL",
			charge: {
				amount_paise: a.charges?.total ?? 0,
				awb_number,
				note: `booked with ${a.courier_name}`,
			},
			label: courierLabel,
		},
	);
}

/**
 * claimed → failed with a plain-words reason, plus the seq-2 `order_update`
 * (see {@link settleClaimed}). `ambiguous` marks an attempt whose courier
 * outcome is unknown (the courier could not be reached): a later attempt of
 * the order checks it first. `failure_code` classifies the failure for the
 * unshipped queue (lib/contracts/intake.ts FailureCode). An attempt whose
 * cancel was requested meanwhile ends `cancelled` instead (order update
 * not_shipped / cancelled).
 */
export function markFailed(
	db: Sequelize,
	a: AttemptRow,
	reason: string,
	ambiguous = false,
	failure_code: FailureCode = "booking_error",
): Promise<number[] | null> {
	const failure_reason = reason.slice(0, 2000);
	return settleClaimed(
		db,
		a,
		`state = CASE WHEN cancel_requested_at IS NULL THEN 'failed' ELSE 'cancelled' END,
		 cancelled_at = CASE WHEN cancel_requested_at IS NULL THEN NULL ELSE now() END,
		 failure_reason = $3, ambiguous = $4`,
		[failure_reason, ambiguous],
		{
			failed: orderUpdate(a, 2, { state: "failed", status: "booking_failed", failure_reason, failure_code }),
			cancelled: cancelledUpdate(a),
		},
	);
}

/**
 * claimed → cancelled for an attempt whose cancel was requested while the
 * courier call was in flight: `awb_number` (the late AWB, cancelled at the
 * courier by the caller; null when none was issued) is kept for the record,
 * `note` says what happened. No ledger row (nothing was charged). Seq-2 order
 * update not_shipped / cancelled.
 */
export function markLateCancelled(
	db: Sequelize,
	a: AttemptRow,
	awb_number: string | null,
	note: string,
): Promise<number[] | null> {
	return settleClaimed(
		db,
		a,
		"state = 'cancelled', cancelled_at = now(), awb_number = $3, last_error = $4",
		[awb_number, note.slice(0, 1000)],
		{ cancelled: cancelledUpdate(a) },
		{ extra: "AND cancel_requested_at IS NOT NULL" },
	);
}

/** {@link ambiguousAttempts}' statement ($1 order_id, $2 before: an attempt id), read through `attempts_ambiguous`. */
export const AMBIGUOUS_ATTEMPTS_SQL =
	"SELECT * FROM booking.attempts WHERE order_id = $1 AND attempt_id < $2 AND state = 'failed' AND ambiguous ORDER BY attempt_id";

/** Earlier failed attempts of an order whose courier outcome is unknown. */
export async function ambiguousAttempts(
	db: Sequelize,
	order_id: number,
	before: number,
): Promise<AttemptRow[]> {
	const rows = await select<StoredAttempt>(db, AMBIGUOUS_ATTEMPTS_SQL, [order_id, before]);
	return rows.map(attempt);
}

/** Records how an ambiguous attempt was settled (no longer ambiguous). */
export async function settleAmbiguous(db: Sequelize, attempt_id: number, note: string): Promise<void> {
	await exec(
		db,
		`UPDATE booking.attempts SET ambiguous = false, last_error = $2, updated_at = now() WHERE attempt_id = $1`,
		[attempt_id, note.slice(0, 1000)],
	);
}

/**
 * Leases up to `limit` undelivered outbox rows that are due, skipping rows
 * another relay holds (`FOR UPDATE SKIP LOCKED`). A leased row is invisible
 * to other relays for `leaseMs`.
 *
 * With `ids` (rows the caller has just committed and delivers before its
 * answer: read-your-writes) it takes those rows also when a relay round
 * leased them between the commit and this call (`tries > 0`: leased, not
 * scheduled for later like a delayed `enqueue_booking`), waiting for that
 * round's short lease statement instead of skipping the rows. The row may then
 * be delivered twice; receivers are idempotent. Without this, a relay tick
 * in that window left the answer to go out before intake had the update
 * (test/unit/booking/sync.spec.ts saw it under CI load).
 */
export async function leaseOutbox(
	db: Sequelize,
	limit: number,
	leaseMs: number,
	ids?: number[],
): Promise<OutboxRow[]> {
	const { rows } = await exec<{ id: string; kind: OutboxRow["kind"]; payload: unknown; tries: number }>(
		db,
		`UPDATE booking.outbox o
		 SET next_attempt_at = now() + make_interval(secs => $2::double precision / 1000), tries = o.tries + 1
		 WHERE o.id IN (
		   SELECT id FROM booking.outbox
		   WHERE delivered_at IS NULL AND ${
					ids
						? "id = ANY($3::bigint[]) AND (next_attempt_at <= now() OR tries > 0)"
						: "next_attempt_at <= now()"
				}
		   ORDER BY id LIMIT $1
		   FOR UPDATE${ids ? "" : " SKIP LOCKED"})
		 RETURNING o.id, o.kind, o.payload, o.tries`,
		ids ? [limit, leaseMs, ids] : [limit, leaseMs],
	);
	return (
		rows
			// kind and payload were written together by addOutbox from one OutboxMessage
			.map(
				(r) => ({ id: Number(r.id), kind: r.kind, payload: r.payload, tries: Number(r.tries) }) as OutboxRow,
			)
			.sort((a, b) => a.id - b.id)
	);
}

/** Marks outbox rows delivered (acknowledged): one row, or a relay round's rows in one UPDATE. */
export async function outboxDelivered(db: Sequelize, id: number | number[]): Promise<void> {
	await markOutboxDelivered(db, "booking", Array.isArray(id) ? id : [id]);
}

/** Schedules the redelivery of an outbox row: base · 2^(tries-1), at most 60 s (lib/platform/outbox.ts). */
export async function outboxRetryLater(
	db: Sequelize,
	row: Pick<OutboxRow, "id" | "tries">,
	error: string,
	baseMs: number,
): Promise<void> {
	await retryOutboxLater(db, "booking", row, error, baseMs);
}

/**
 * Attempts that should have a job but may have lost it: queued and untouched
 * for `afterMs`, or claimed with a claim older than `staleMs`.
 */
export async function sweepCandidates(
	db: Sequelize,
	afterMs: number,
	staleMs: number,
	limit = 200,
): Promise<number[]> {
	return attemptIdsWhere(
		db,
		`(state = 'queued' AND updated_at < ${ago(1)}) OR (state = 'claimed' AND claimed_at < ${ago(2)})`,
		[afterMs, staleMs],
		limit,
	);
}

/** The booked shipment of an order for its sender (rupees), or null. */
export async function shipmentOf(
	db: Sequelize,
	sender_id: number,
	order_id: number,
): Promise<ShipmentRecord | null> {
	const rows = await select<StoredAttempt>(
		db,
		`SELECT * FROM booking.attempts WHERE order_id = $1 AND sender_id = $2 AND state = 'booked'`,
		[order_id, sender_id],
	);
	if (!rows[0]) return null;
	const a = attempt(rows[0]);
	const c = a.charges;
	return {
		order_id: a.order_id,
		attempt_id: a.attempt_id,
		logistic_id: a.logistic_id,
		courier_name: a.courier_name,
		awb_number: a.awb_number as string,
		state: "booked",
		routing_code: a.routing_code,
		charges: c
			? {
					freight_charge: toRupees(c.freight_charge),
					cod_charge: toRupees(c.cod_charge),
					shipping_charge_tax: toRupees(c.shipping_charge_tax),
					total: toRupees(c.total),
				}
			: null,
		booked_at: new Date(a.booked_at ?? a.updated_at).toISOString(),
		...(a.courier_label ? { courier_label: true } : {}),
	};
}

/**
 * The owner of a live booked AWB (signed label links, spec §4.4: the token
 * names only the AWB): `{sender_id, order_id}` of the booked attempt holding
 * `awb_number`, or null (unknown, cancelled, failed). AWBs are unique across
 * attempts (index `attempts_awb`).
 */
export async function bookedAwbOwner(
	db: Sequelize,
	awb_number: string,
): Promise<{ sender_id: number; order_id: number } | null> {
	const rows = await select<{ sender_id: string | number; order_id: string | number }>(
		db,
		"SELECT sender_id, order_id FROM booking.attempts WHERE awb_number = $1 AND state = 'booked'",
		[awb_number],
	);
	return rows[0] ? { sender_id: Number(rows[0].sender_id), order_id: Number(rows[0].order_id) } : null;
}

/**
 * `booking.pickupScans` (issue 28): per question `{sender_id, warehouse_id, logistic_id, day}`
 * (day an IST `YYYY-MM-DD`), the earliest `picked_up_at` within that IST day of a shipment of
 * that account booked with that courier from that warehouse (ISO-8601 UTC, or null) and how
 * many were collected that day; one statement for all questions (index `attempts_pickup_scans`).
 */
export async function pickupScans(
	db: Sequelize,
	questions: readonly PickupScanQuestion[],
): Promise<{ first_scan_at: string | null; shipments: number }[]> {
	if (questions.length === 0) return [];
	const rows = await select<{ n: string; first_at: Date | null; shipments: string }>(
		db,
		`SELECT q.n, min(a.picked_up_at) AS first_at, count(a.attempt_id) AS shipments
		   FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::date[]) WITH ORDINALITY AS q(s, w, l, d, n)
		   LEFT JOIN booking.attempts a
		     ON a.sender_id = q.s AND a.warehouse_id = q.w AND a.logistic_id = q.l
		    AND a.picked_up_at IS NOT NULL AND a.warehouse_id IS NOT NULL
		    AND a.picked_up_at >= (q.d::timestamp AT TIME ZONE 'Asia/Kolkata')
		    AND a.picked_up_at < ((q.d + 1)::timestamp AT TIME ZONE 'Asia/Kolkata')
		  GROUP BY q.n ORDER BY q.n`,
		[
			questions.map((q) => q.sender_id),
			questions.map((q) => q.warehouse_id),
			questions.map((q) => q.logistic_id),
			questions.map((q) => q.day),
		],
	);
	return rows.map((r) => ({
		first_scan_at: r.first_at ? new Date(r.first_at).toISOString() : null,
		shipments: Number(r.shipments),
	}));
}

/** A live booked shipment as the buyer's tracking page reads it (issue 29; `booking.shipmentByAwb`). */
export interface AwbShipmentRow {
	attempt_id: string;
	sender_id: string;
	order_id: string;
	logistic_id: number;
	courier_name: string;
	shipment_status: ShipmentStatus | null;
	shipment_status_at: Date | null;
	booked_at: Date | null;
	/** IST `YYYY-MM-DD` or null */
	edd: string | null;
}

/**
 * The live booked attempt holding `awb_number` (state `booked`; a cancelled or failed one is
 * not a live shipment), with its folded status and promised delivery date; undefined when none.
 */
export async function bookedShipmentByAwb(
	db: Sequelize,
	awb_number: string,
): Promise<AwbShipmentRow | undefined> {
	const [row] = await select<AwbShipmentRow>(
		db,
		`SELECT attempt_id, sender_id, order_id, logistic_id, courier_name, shipment_status, shipment_status_at,
		        booked_at, to_char(edd, 'YYYY-MM-DD') AS edd
		   FROM booking.attempts WHERE awb_number = $1 AND state = 'booked'`,
		[awb_number],
	);
	return row;
}
