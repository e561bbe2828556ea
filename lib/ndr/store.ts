/**
 * SQL of the `ndr` service (issue 9; schema in ./migrations.ts; decisions in
 * docs/decisions/0038-ndr-cases.md): cases opened and advanced by
 * `undelivered` status events, closed by delivered / RTO ones; the policy
 * pass's lease; actions, comments, buyer notifications; the list and counts.
 *
 * Idempotency (the channel is at-least-once): an attempt row per failed
 * attempt, unique by the event's `event_id` and by (AWB, scan time), is
 * inserted in the transaction that changes the case, so a redelivered event
 * changes nothing; closing only touches a case still open.
 */
import type { Sequelize, Transaction } from "sequelize";
import type { NdrBuyerAnswer, NdrReason, NdrTab, ShipmentStatusChanged } from "../contracts";
import { exec, numbersIn, type StoredRow, select } from "../platform/db";

/** Statuses of an open case (the merchant can still act). */
export const OPEN_STATUSES = ["action_required", "action_requested"] as const;

/** A case as stored (bigint and numeric columns converted to numbers). */
export interface CaseRow {
	id: number;
	sender_id: number;
	order_id: number;
	attempt_id: number;
	awb_number: string;
	logistic_id: number;
	courier_name: string;
	customer_order_no: string;
	payment_mode: "prepaid" | "cod";
	order_value_paise: number;
	cod_amount_paise: number | null;
	consignee_name: string | null;
	consignee_city: string | null;
	consignee_pincode: string | null;
	status: NdrTab | "closed";
	attempts: number;
	reason: string;
	courier_words: string;
	first_pending_at: Date;
	last_attempt_at: Date;
	last_seq: number;
	deadline_at: Date | null;
	closed_status: string | null;
	closed_at: Date | null;
	/** the buyer's answer on the tracking page to the latest attempt (issue 29), or null */
	buyer_answer: BuyerAnswerOnCase | null;
	created_at: Date;
	updated_at: Date;
}

/** A buyer's answer to a failed delivery as kept on its case (`cases.buyer_answer`; the contract's shape). */
export type BuyerAnswerOnCase = NdrBuyerAnswer;

const CASE_NUMBERS = [
	"id",
	"sender_id",
	"order_id",
	"attempt_id",
	"order_value_paise",
	"logistic_id",
	"attempts",
	"last_seq",
] as const;

/** A case row as pg returns it (bigint columns as text). */
type StoredCase = StoredRow<CaseRow, (typeof CASE_NUMBERS)[number] | "cod_amount_paise">;

/** Converts pg's bigint strings of a case row to numbers. */
function caseOf(r: StoredCase): CaseRow {
	const cod_amount_paise = r.cod_amount_paise === null ? null : Number(r.cod_amount_paise);
	return numbersIn<CaseRow, (typeof CASE_NUMBERS)[number]>({ ...r, cod_amount_paise }, CASE_NUMBERS);
}

/** What the list rows need of the order and shipment, read from intake and booking when a case opens. */
export interface CaseOpening
	extends Pick<
		CaseRow,
		| "attempt_id"
		| "courier_name"
		| "customer_order_no"
		| "payment_mode"
		| "order_value_paise"
		| "cod_amount_paise"
		| "consignee_name"
		| "consignee_city"
		| "consignee_pincode"
	> {}

/** The failed attempt an `undelivered` event reports. */
export interface FailedAttempt {
	event: ShipmentStatusChanged;
	reason: NdrReason;
	/** the courier's words (remarks, else its status words) */
	words: string;
}

/** What {@link recordUndelivered} did. */
export type UndeliveredOutcome =
	| { kind: "duplicate" }
	| { kind: "needs_opening" }
	| { kind: "opened"; case_id: number }
	/** a case opened already closed: the shipment's closing event was processed first */
	| { kind: "opened_closed"; case_id: number }
	| { kind: "attempt"; case_id: number; attempts: number };

/**
 * The live case of an AWB: open, or moved to RTO by the policy but not yet
 * scanned RTO (a later failed attempt still counts on it), or null.
 */
export async function liveCaseOf(
	db: Sequelize,
	awb: string,
	t?: Transaction,
	lock = false,
): Promise<CaseRow | null> {
	const rows = await select<StoredCase>(
		db,
		`SELECT * FROM ndr.cases
		 WHERE awb_number = $1 AND (status IN ('action_required', 'action_requested') OR (status = 'rto' AND closed_status = 'rto_requested'))
		 ORDER BY id DESC LIMIT 1 ${lock ? "FOR UPDATE" : ""}`,
		[awb],
		t,
	);
	return rows.length ? caseOf(rows[0]) : null;
}

/**
 * Records a failed delivery attempt (an `undelivered` status event), in one
 * transaction: a redelivered event (same `event_id`, or same AWB and scan
 * time) is a `duplicate`; with a live case of the AWB the attempt is counted
 * on it (a newer attempt than the case has seen moves an open case back to
 * `action_required` with a new deadline `at + deadlineMs` and the new
 * reason); without one, `opening` (the order's facts) is needed
 * (`needs_opening` when not given) and a case is opened in
 * `action_required` (the buyer's message is the notifications service's, issue 29).
 * @throws when another consumer opened the AWB's case meanwhile (unique index): the channel redelivers
 */
export async function recordUndelivered(
	db: Sequelize,
	a: FailedAttempt,
	deadlineMs: number,
	opening: CaseOpening | null,
): Promise<UndeliveredOutcome> {
	const e = a.event;
	const at = new Date(e.status_at);
	const deadline = new Date(at.getTime() + deadlineMs);
	return db.transaction(async (t) => {
		const seen = await select<{ id: string }>(
			db,
			"SELECT id FROM ndr.attempts WHERE event_id = $1 OR (awb_number = $2 AND at = $3) LIMIT 1",
			[e.event_id, e.awb_number, at],
			t,
		);
		if (seen.length) return { kind: "duplicate" } as const;
		const live = await liveCaseOf(db, e.awb_number, t, true);
		if (live) {
			const newer = e.seq > live.last_seq;
			const open = live.status === "action_required" || live.status === "action_requested";
			const upd = await select<{ attempts: number }>(
				db,
				`UPDATE ndr.cases SET attempts = attempts + 1,
				   last_attempt_at = GREATEST(last_attempt_at, $2),
				   first_pending_at = LEAST(first_pending_at, $2),
				   last_seq = GREATEST(last_seq, $3),
				   reason = CASE WHEN $4 THEN $5 ELSE reason END,
				   courier_words = CASE WHEN $4 THEN $6 ELSE courier_words END,
				   status = CASE WHEN $4 AND $7 THEN 'action_required' ELSE status END,
				   deadline_at = CASE WHEN $4 AND $7 THEN $8::timestamptz ELSE deadline_at END,
				   lease_until = NULL, updated_at = now()
				 WHERE id = $1 RETURNING attempts`,
				[live.id, at, e.seq, newer, a.reason, a.words, open, deadline],
				t,
			);
			const attempts = Number(upd[0].attempts);
			await insertAttempt(db, live.id, attempts, a, t);
			return { kind: "attempt", case_id: live.id, attempts } as const;
		}
		// an older event of a shipment whose case a newer event already closed (redelivered late): nothing to open
		const stale = await select<{ id: string }>(
			db,
			"SELECT id FROM ndr.cases WHERE awb_number = $1 AND last_seq >= $2 LIMIT 1",
			[e.awb_number, e.seq],
			t,
		);
		if (stale.length) return { kind: "duplicate" } as const;
		if (!opening) return { kind: "needs_opening" } as const;
		const o = opening;
		// the shipment's closing event (a later seq) was processed before this one: open the case closed
		const [closing] = await select<{ tab: string; status: string; at: Date }>(
			db,
			"SELECT tab, status, at FROM ndr.shipment_closings WHERE awb_number = $1 AND seq > $2",
			[e.awb_number, e.seq],
			t,
		);
		const created = await select<{ id: string }>(
			db,
			`INSERT INTO ndr.cases (sender_id, order_id, attempt_id, awb_number, logistic_id, courier_name, customer_order_no,
			   payment_mode, order_value_paise, cod_amount_paise, consignee_name, consignee_city, consignee_pincode,
			   status, attempts, reason, courier_words, first_pending_at, last_attempt_at, last_seq, deadline_at)
			 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $19, 1, $14, $15, $16, $16, $17,
			         CASE WHEN $20::text IS NULL THEN $18::timestamptz END)
			 RETURNING id`,
			[
				e.sender_id,
				e.order_id,
				o.attempt_id,
				e.awb_number,
				e.logistic_id,
				o.courier_name,
				o.customer_order_no,
				o.payment_mode,
				o.order_value_paise,
				o.cod_amount_paise,
				o.consignee_name,
				o.consignee_city,
				o.consignee_pincode,
				a.reason,
				a.words,
				at,
				e.seq,
				deadline,
				closing?.tab ?? "action_required",
				closing?.status ?? null,
			],
			t,
		);
		const case_id = Number(created[0].id);
		await insertAttempt(db, case_id, 1, a, t);
		if (closing) {
			await exec(
				db,
				"UPDATE ndr.cases SET closed_status = $2, closed_at = $3 WHERE id = $1",
				[case_id, closing.status, closing.at],
				t,
			);
			return { kind: "opened_closed", case_id } as const;
		}
		return { kind: "opened", case_id } as const;
	});
}

async function insertAttempt(db: Sequelize, case_id: number, no: number, a: FailedAttempt, t: Transaction) {
	await exec(
		db,
		`INSERT INTO ndr.attempts (case_id, attempt_no, event_id, awb_number, at, reason, courier_words)
		 VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		[case_id, no, a.event.event_id, a.event.awb_number, new Date(a.event.status_at), a.reason, a.words],
		t,
	);
}

/**
 * Closes the AWB's live case with tab `to` (`delivered`, `rto`, or `closed`
 * for lost / damaged / cancelled): `closed_status` the shipment status,
 * `closed_at` its time. A case already closed is left alone (idempotent),
 * except one the policy moved to RTO (`rto_requested`), which takes the
 * scanned outcome. The closing is also remembered per AWB
 * (`ndr.shipment_closings`, the newest seq wins) for an `undelivered` event
 * of the shipment processed after it. Returns the ids of the cases closed.
 */
export async function closeLiveCase(
	db: Sequelize,
	e: ShipmentStatusChanged,
	to: "delivered" | "rto" | "closed",
): Promise<number[]> {
	// remembered even when no case exists yet (see migration 002): a late-processed `undelivered` reads it
	await exec(
		db,
		`INSERT INTO ndr.shipment_closings (awb_number, seq, tab, status, at) VALUES ($1, $2, $3, $4, $5)
		 ON CONFLICT (awb_number) DO UPDATE SET seq = EXCLUDED.seq, tab = EXCLUDED.tab, status = EXCLUDED.status,
		   at = EXCLUDED.at, updated_at = now()
		 WHERE ndr.shipment_closings.seq < EXCLUDED.seq`,
		[e.awb_number, e.seq, to, e.status, new Date(e.status_at)],
	);
	const r = await exec<{ id: string }>(
		db,
		`UPDATE ndr.cases SET status = $2, closed_status = $3, closed_at = $4, deadline_at = NULL, lease_until = NULL,
		   last_seq = GREATEST(last_seq, $5), updated_at = now()
		 WHERE awb_number = $1
		   AND (status IN ('action_required', 'action_requested') OR (status = 'rto' AND closed_status = 'rto_requested'))
		 RETURNING id`,
		[e.awb_number, to, e.status, new Date(e.status_at), e.seq],
	);
	return r.rows.map((x) => Number(x.id));
}

/**
 * Leases up to `limit` due cases for one policy pass: `action_required` with
 * the deadline passed as of `now`, or with `maxAttempts` failed attempts
 * (due at once), not leased by another pass (`lease_until` in the past, real
 * time). `FOR UPDATE SKIP LOCKED`: concurrent passes (pods) take disjoint cases.
 */
export async function leaseDueCases(
	db: Sequelize,
	now: Date,
	maxAttempts: number,
	limit: number,
	leaseMs: number,
): Promise<CaseRow[]> {
	const rows = await select<StoredCase>(
		db,
		`UPDATE ndr.cases c SET lease_until = clock_timestamp() + make_interval(secs => $4::double precision / 1000)
		 WHERE c.id IN (
		   SELECT id FROM ndr.cases
		   WHERE status = 'action_required' AND (deadline_at <= $1 OR attempts >= $2)
		     AND (lease_until IS NULL OR lease_until < clock_timestamp())
		   ORDER BY deadline_at, id LIMIT $3
		   FOR UPDATE SKIP LOCKED)
		 RETURNING c.*`,
		[now, maxAttempts, limit, leaseMs],
	);
	return rows.map(caseOf);
}

/** An NDR action to record. */
export interface ActionRecord {
	case_id: number;
	sender_id: number;
	order_id: number;
	act: "RE-ATTEMPT" | "DEFER_DLV" | "EDIT_DETAILS" | "RTO";
	by: "merchant" | "system" | "buyer";
	actor: string;
	details: Record<string, unknown>;
	/** as recorded when sent; `accepted` / `refused` come later from the courier (./act-status.ts) */
	status: "sent" | "failed";
	request_id: string | null;
	error_code: string | null;
	error_message: string | null;
	attempt_no: number;
	/** default now() */
	at?: Date;
}

/**
 * Records an action and moves its case, in one transaction: a `sent`
 * courier action moves an open case to `action_requested` (no deadline); a
 * failed automatic one (`retry_at` given) pushes the case's deadline to
 * `retry_at`; `RTO` moves it to tab `rto` (`closed_status` `rto_requested`).
 * The lease is released. Returns the action id.
 */
export async function recordAction(db: Sequelize, a: ActionRecord, retry_at?: Date): Promise<number> {
	return db.transaction(async (t) => {
		const ins = await select<{ id: string }>(
			db,
			`INSERT INTO ndr.actions (case_id, sender_id, order_id, act, by, actor, details, status, request_id, error_code,
			   error_message, attempt_no, created_at)
			 VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $12, COALESCE($13, now())) RETURNING id`,
			[
				a.case_id,
				a.sender_id,
				a.order_id,
				a.act,
				a.by,
				a.actor,
				JSON.stringify(a.details),
				a.status,
				a.request_id,
				a.error_code,
				a.error_message,
				a.attempt_no,
				a.at ?? null,
			],
			t,
		);
		if (a.act === "RTO") {
			await exec(
				db,
				`UPDATE ndr.cases SET status = 'rto', closed_status = 'rto_requested', closed_at = COALESCE($2, now()),
				   deadline_at = NULL, lease_until = NULL, updated_at = now()
				 WHERE id = $1 AND status IN ('action_required', 'action_requested')`,
				[a.case_id, a.at ?? null],
				t,
			);
		} else if (a.status === "sent") {
			await exec(
				db,
				`UPDATE ndr.cases SET status = 'action_requested', deadline_at = NULL, lease_until = NULL, updated_at = now()
				 WHERE id = $1 AND status IN ('action_required', 'action_requested')`,
				[a.case_id],
				t,
			);
		} else {
			await exec(
				db,
				`UPDATE ndr.cases SET deadline_at = CASE WHEN status = 'action_required' AND $2::timestamptz IS NOT NULL
				   THEN $2::timestamptz ELSE deadline_at END, lease_until = NULL, updated_at = now()
				 WHERE id = $1`,
				[a.case_id, retry_at ?? null],
				t,
			);
		}
		return Number(ins[0].id);
	});
}

/** A sent act awaiting the courier's decision, as ./act-status.ts reads it. */
export interface SentActionRow {
	id: number;
	case_id: number;
	status: "sent" | "failed" | "accepted" | "refused";
	request_id: string | null;
	created_at: Date;
	/** the case's AWB and courier */
	awb_number: string;
	logistic_id: number;
}

/** Action `id` with its case's AWB and courier, or null. */
export async function actionForCheck(db: Sequelize, id: number): Promise<SentActionRow | null> {
	const [r] = await select<StoredRow<SentActionRow, "id" | "case_id" | "logistic_id">>(
		db,
		`SELECT a.id, a.case_id, a.status, a.request_id, a.created_at, c.awb_number, c.logistic_id
		 FROM ndr.actions a JOIN ndr.cases c ON c.id = a.case_id WHERE a.id = $1`,
		[id],
	);
	return r ? numbersIn(r, ["id", "case_id", "logistic_id"]) : null;
}

/** Marks that the courier was asked about a still-`sent` action (and what it said, if anything). */
export async function markActionChecked(db: Sequelize, id: number, remarks: string | null): Promise<void> {
	await exec(
		db,
		`UPDATE ndr.actions SET checked_at = now(), courier_remarks = COALESCE($2, courier_remarks)
		 WHERE id = $1 AND status = 'sent'`,
		[id, remarks],
	);
}

/**
 * Records the courier's later decision on a `sent` action (only over `sent`:
 * idempotent), in one transaction: `accepted` changes only the action;
 * `refused` also moves its case back to `action_required` (the merchant must
 * act again; deadline `now + deadlineMs`, after which the policy re-attempts)
 * when the case is `action_requested` and this is its latest action.
 * Answers whether the action changed.
 */
export async function settleAction(
	db: Sequelize,
	id: number,
	outcome: "accepted" | "refused",
	remarks: string | null,
	deadlineMs: number,
): Promise<boolean> {
	return db.transaction(async (t) => {
		const upd = await select<{ case_id: string }>(
			db,
			`UPDATE ndr.actions SET status = $2, courier_remarks = $3, checked_at = now()
			 WHERE id = $1 AND status = 'sent' RETURNING case_id`,
			[id, outcome, remarks],
			t,
		);
		if (!upd.length) return false;
		if (outcome === "refused") {
			await exec(
				db,
				`UPDATE ndr.cases c SET status = 'action_required',
				   deadline_at = clock_timestamp() + make_interval(secs => $3::double precision / 1000),
				   lease_until = NULL, updated_at = now()
				 WHERE c.id = $1 AND c.status = 'action_requested'
				   AND $2 = (SELECT max(x.id) FROM ndr.actions x WHERE x.case_id = c.id)`,
				[Number(upd[0].case_id), id, deadlineMs],
				t,
			);
		}
		return true;
	});
}

/** Releases a pass's lease on a case it did not act on. */
export async function releaseLease(db: Sequelize, case_id: number): Promise<void> {
	await exec(db, "UPDATE ndr.cases SET lease_until = NULL WHERE id = $1", [case_id]);
}

/** The account's open case of an order (newest), or null. */
export async function openCaseOfOrder(
	db: Sequelize,
	sender_id: number,
	order_id: number,
): Promise<CaseRow | null> {
	const rows = await select<StoredCase>(
		db,
		`SELECT * FROM ndr.cases WHERE sender_id = $1 AND order_id = $2 AND status IN ('action_required', 'action_requested')
		 ORDER BY id DESC LIMIT 1`,
		[sender_id, order_id],
	);
	return rows.length ? caseOf(rows[0]) : null;
}

/**
 * Claims the answer of attempt `attempt_no` of an `action_required` case for one buyer request:
 * writes it as `pending` unless the attempt is answered already (a `pending` claim older than
 * `staleBefore`, left by a crash, and a `failed` answer may be replaced). Answers whether this
 * request holds the claim (a double-submitted form sends one action).
 */
export async function claimBuyerAnswer(
	db: Sequelize,
	case_id: number,
	a: BuyerAnswerOnCase,
	staleBefore: Date,
): Promise<boolean> {
	const { count } = await exec(
		db,
		`UPDATE ndr.cases SET buyer_answer = $2::jsonb, updated_at = now()
		 WHERE id = $1 AND status = 'action_required' AND attempts = $3
		   AND (buyer_answer IS NULL OR (buyer_answer->>'attempt_no')::int <> $3 OR buyer_answer->>'status' = 'failed'
		     OR (buyer_answer->>'status' = 'pending' AND (buyer_answer->>'at')::timestamptz < $4))`,
		[case_id, JSON.stringify(a), a.attempt_no, staleBefore],
	);
	return count > 0;
}

/** Keeps the buyer's answer on a case (the newest answer replaces an older attempt's; null removes it). */
export async function setBuyerAnswer(
	db: Sequelize,
	case_id: number,
	a: BuyerAnswerOnCase | null,
): Promise<void> {
	await exec(
		db,
		"UPDATE ndr.cases SET buyer_answer = NULLIF($2::jsonb, 'null'::jsonb), updated_at = now() WHERE id = $1",
		[case_id, JSON.stringify(a)],
	);
}

/** The account's newest case of an order (open or closed), or null. */
export async function latestCaseOfOrder(
	db: Sequelize,
	sender_id: number,
	order_id: number,
): Promise<CaseRow | null> {
	const rows = await select<StoredCase>(
		db,
		"SELECT * FROM ndr.cases WHERE sender_id = $1 AND order_id = $2 ORDER BY id DESC LIMIT 1",
		[sender_id, order_id],
	);
	return rows.length ? caseOf(rows[0]) : null;
}

/** A stored comment. */
export interface CommentRow {
	id: number;
	case_id: number;
	order_id: number;
	comment: string;
	author: string;
	role: string;
	created_at: Date;
}

/** Inserts a comment on a case; returns the stored row. */
export async function insertComment(
	db: Sequelize,
	c: { case_id: number; sender_id: number; order_id: number; comment: string; author: string; role: string },
): Promise<CommentRow> {
	const rows = await select<StoredRow<CommentRow, "id" | "case_id" | "order_id">>(
		db,
		`INSERT INTO ndr.comments (case_id, sender_id, order_id, comment, author, role)
		 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id, case_id, order_id, comment, author, role, created_at`,
		[c.case_id, c.sender_id, c.order_id, c.comment, c.author, c.role],
	);
	const r = rows[0];
	return {
		...r,
		id: Number(r.id),
		case_id: Number(r.case_id),
		order_id: Number(r.order_id),
	};
}

/** A list row as read (case columns plus the latest action, the notification and the comment count). */
export interface ListRowDb extends CaseRow {
	comments: number;
	act_act: string | null;
	act_by: string | null;
	act_status: string | null;
	act_request_id: string | null;
	act_error: string | null;
	act_remarks: string | null;
	act_checked_at: Date | null;
	act_at: Date | null;
	n_channel: string | null;
	n_template: string | null;
	n_status: string | null;
	n_provider: string | null;
	n_recipient: string | null;
	n_sent_at: Date | null;
	n_delivered_at: Date | null;
	n_failed_at: Date | null;
	n_error: string | null;
	n_created_at: Date | null;
}

/** Filters of one list page. */
export interface ListFilter {
	sender_id: number;
	tab: NdrTab;
	awb_number: string | null;
	/** cases first pending at or after this instant (IST midnight of `date_from`) */
	from: string | null;
	/** cases with an id below this one (next page) */
	before_id: number | null;
	/** rows to read (the page's limit + 1) */
	take: number;
}

/** One page of the account's cases of a tab, newest (highest id) first. */
export async function listCases(db: Sequelize, f: ListFilter): Promise<ListRowDb[]> {
	const rows = await select<StoredCase & Record<string, unknown>>(
		db,
		`SELECT c.*,
		   (SELECT count(*) FROM ndr.comments m WHERE m.case_id = c.id) AS comments,
		   a.act AS act_act, a.by AS act_by, a.status AS act_status, a.request_id AS act_request_id,
		   a.error_message AS act_error, a.courier_remarks AS act_remarks, a.checked_at AS act_checked_at,
		   a.created_at AS act_at,
		   n.channel AS n_channel, n.template AS n_template, n.status AS n_status, n.provider AS n_provider,
		   n.recipient AS n_recipient, n.sent_at AS n_sent_at, n.delivered_at AS n_delivered_at,
		   n.failed_at AS n_failed_at, n.error AS n_error, n.created_at AS n_created_at
		 FROM ndr.cases c
		 LEFT JOIN LATERAL (SELECT * FROM ndr.actions x WHERE x.case_id = c.id ORDER BY x.id DESC LIMIT 1) a ON true
		 LEFT JOIN LATERAL (SELECT * FROM ndr.notifications y WHERE y.case_id = c.id ORDER BY y.id LIMIT 1) n ON true
		 WHERE c.sender_id = $1 AND c.status = $2
		   AND ($3::text IS NULL OR c.awb_number = $3)
		   AND ($4::timestamptz IS NULL OR c.first_pending_at >= $4)
		   AND ($5::bigint IS NULL OR c.id < $5)
		 ORDER BY c.id DESC LIMIT $6`,
		[f.sender_id, f.tab, f.awb_number, f.from, f.before_id, f.take],
	);
	return rows.map((r) => ({ ...caseOf(r), ...pick(r), comments: Number(r.comments) }) as ListRowDb);
}

/** The act_ / n_ columns of a list row, as read. */
function pick(r: Record<string, unknown>): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const [k, v] of Object.entries(r)) if (k.startsWith("act_") || k.startsWith("n_")) out[k] = v;
	return out;
}

/** The account's number of cases per status. */
export async function countCases(db: Sequelize, sender_id: number): Promise<Map<string, number>> {
	const rows = await select<{ status: string; n: string }>(
		db,
		"SELECT status, count(*) AS n FROM ndr.cases WHERE sender_id = $1 GROUP BY status",
		[sender_id],
	);
	return new Map(rows.map((r) => [r.status, Number(r.n)]));
}
