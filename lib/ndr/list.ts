/**
 * The merchant's side of NDR (issue 9; spec §2.10, §2.12, §4.6, §4.8, §7;
 * docs/decisions/0038-ndr-cases.md): parsing of `GET /v1/ndr` (tabs, filters,
 * signed cursors bound to the account and filters), the list row, the counts,
 * and the comment body. SQL in ./store.ts.
 */
import { createHash } from "node:crypto";
import {
	COMMENT_MAX,
	type HttpParams,
	NDR_DEFAULT_LIMIT,
	NDR_MAX_LIMIT,
	NDR_TABS,
	type NdrActionView,
	type NdrComment,
	type NdrCounts,
	type NdrNotificationView,
	type NdrRow,
	type NdrTab,
} from "../contracts";
import { type CursorPosition, decodeCursor, encodeCursor } from "../platform/cursor";
import { type ApiError, fail, failWith } from "../platform/errors";
import { parsePositiveInt } from "../shared/fields";
import { IST_OFFSET_MS } from "../shared/ist-date";
import { toRupees } from "../shared/money";
import type { CommentRow, ListRowDb } from "./store";

/** Longest `awb_number` filter. */
const AWB_MAX = 64;
const AWB = /^[A-Za-z0-9-]+$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** India Standard Time offset (UTC+05:30), ms. */
/** Cursor kind of `GET /v1/ndr`. */
const KIND = "ndr";

/** A parsed `GET /v1/ndr` query. */
export interface NdrListQuery {
	tab: NdrTab;
	limit: number;
	awb_number: string | null;
	/** `YYYY-MM-DD` as given (IST day) */
	date_from: string | null;
	/** IST midnight of `date_from`, ISO-8601 UTC */
	from: string | null;
	/** next page: cases with an id below this */
	before_id: number | null;
}

type NdrPosition = { s: number; id: number; f: string };

/** 400 `bad_tab` (§7 ndr list): the message lists the accepted tabs. */
export function badTab(): ApiError {
	return failWith("bad_tab", { field: "tab" }, NDR_TABS);
}

/** 400 `bad_date` (§7 ndr list): not `YYYY-MM-DD` or not a real calendar date. */
function badDate(): ApiError {
	return failWith("bad_date", { field: "date_from" });
}

/** The query value as a trimmed string; undefined when absent or empty. */
function given(v: unknown): string | undefined {
	if (v === undefined || v === null) return undefined;
	const s = typeof v === "string" ? v.trim() : typeof v === "number" ? String(v) : JSON.stringify(v);
	return s === "" ? undefined : s;
}

/** A real calendar day `YYYY-MM-DD` (years 1900–9999) as its UTC midnight (ms), or null. */
export function calendarDay(s: string): number | null {
	const m = DATE.exec(s);
	if (!m) return null;
	const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
	if (y < 1900) return null;
	const t = Date.UTC(y, mo - 1, d);
	const back = new Date(t);
	return back.getUTCFullYear() === y && back.getUTCMonth() === mo - 1 && back.getUTCDate() === d ? t : null;
}

/** Hash binding a cursor to its filters (limit excluded). */
function filtersHash(q: NdrListQuery): string {
	return createHash("sha256")
		.update(JSON.stringify([q.tab, q.awb_number, q.date_from]))
		.digest("base64url")
		.slice(0, 22);
}

/**
 * Parses `GET /v1/ndr` for account `sender_id` (§4.6, §4.8): `tab` required,
 * one of {@link NDR_TABS} (no default); `limit` integer 1–1000 (default
 * {@link NDR_DEFAULT_LIMIT}); `cursor` a `nextCursor` of this list issued to
 * this account for the same tab and filters; `awb_number` exact (1–64 of
 * `A-Z a-z 0-9 -`); `date_from` a real calendar day `YYYY-MM-DD` (India
 * Standard Time), inclusive, compared with the case's first failed attempt.
 * Values are trimmed; an empty filter is no filter.
 * @throws 400 `bad_tab` (missing or unaccepted; message lists the tabs);
 *   400 `bad_date`; 400 `validation_failed` (`limit`, `awb_number`, with
 *   `field` and `details`); 400 `cursor: unrecognised shape`
 */
export function parseNdrListQuery(params: HttpParams, sender_id: number): NdrListQuery {
	const tab = given(params.tab);
	if (tab === undefined || !(NDR_TABS as readonly string[]).includes(tab)) throw badTab();
	const dateRaw = given(params.date_from);
	let from: string | null = null;
	if (dateRaw !== undefined) {
		const t = calendarDay(dateRaw);
		if (t === null) throw badDate();
		from = new Date(t - IST_OFFSET_MS).toISOString();
	}
	const bad: Array<[string, string]> = [];
	let limit = NDR_DEFAULT_LIMIT;
	const limitRaw = given(params.limit);
	if (limitRaw !== undefined) {
		const n = parsePositiveInt(limitRaw);
		if (n === null || n > NDR_MAX_LIMIT)
			bad.push(["limit", `limit: must be an integer from 1 to ${NDR_MAX_LIMIT}`]);
		else limit = n;
	}
	const awbRaw = given(params.awb_number);
	let awb_number: string | null = null;
	if (awbRaw !== undefined) {
		if (awbRaw.length <= AWB_MAX && AWB.test(awbRaw)) awb_number = awbRaw;
		else bad.push(["awb_number", `awb_number: must be 1 to ${AWB_MAX} letters, digits or hyphens`]);
	}
	if (bad.length) {
		const details = bad.map(([, d]) => d);
		throw failWith("validation_failed", { field: bad[0][0], details }, details);
	}
	const q: NdrListQuery = {
		tab: tab as NdrTab,
		limit,
		awb_number,
		date_from: dateRaw ?? null,
		from,
		before_id: null,
	};
	const cursor = given(params.cursor);
	if (cursor === undefined) return q;
	const f = filtersHash(q);
	const ours = (p: CursorPosition): p is NdrPosition =>
		p.s === sender_id && p.f === f && typeof p.id === "number" && Number.isSafeInteger(p.id) && p.id > 0;
	q.before_id = decodeCursor(KIND, cursor, ours).id;
	return q;
}

/** The `nextCursor` after a page whose last case is `last_id` (null on the last page). */
export function nextCursorOf(sender_id: number, q: NdrListQuery, last_id: number | undefined, more: boolean) {
	if (!more || last_id === undefined) return null;
	return encodeCursor(KIND, { s: sender_id, id: last_id, f: filtersHash(q) });
}

const iso = (d: Date | null): string | null => (d ? new Date(d).toISOString() : null);

/** Masks a phone to its last 4 digits (`******1234`). */
function masked(phone: string | null): string | null {
	return phone ? `******${phone.slice(-4)}` : null;
}

/** The §2.10 list row of a stored case (fields: docs/decisions/0038-ndr-cases.md). */
export function rowOf(r: ListRowDb, maxAttempts: number): NdrRow {
	const last_action: NdrActionView | null = r.act_act
		? {
				act: r.act_act as NdrActionView["act"],
				by: r.act_by as NdrActionView["by"],
				status: r.act_status as NdrActionView["status"],
				request_id: r.act_request_id,
				error: r.act_error,
				courier_remarks: r.act_remarks,
				checked_at: iso(r.act_checked_at),
				at: String(iso(r.act_at)),
			}
		: null;
	const notification: NdrNotificationView | null = r.n_channel
		? {
				channel: r.n_channel,
				template: String(r.n_template),
				status: r.n_status as NdrNotificationView["status"],
				provider: r.n_provider,
				recipient: masked(r.n_recipient),
				sent_at: iso(r.n_sent_at),
				delivered_at: iso(r.n_delivered_at),
				failed_at: iso(r.n_failed_at),
				error: r.n_error,
				created_at: String(iso(r.n_created_at)),
			}
		: null;
	return {
		id: r.id,
		order_id: r.order_id,
		customer_order_no: r.customer_order_no,
		awb_number: r.awb_number,
		logistic_id: r.logistic_id,
		courier_name: r.courier_name,
		forward_id: `bk_${r.attempt_id}`,
		tab: r.status as NdrTab,
		reason: r.reason,
		courier_reason: r.courier_words,
		attempts: r.attempts,
		max_attempts: maxAttempts,
		first_pending_at: String(iso(r.first_pending_at)),
		last_attempt_at: String(iso(r.last_attempt_at)),
		action_deadline_at: r.status === "action_required" ? iso(r.deadline_at) : null,
		last_action,
		closed_status: r.closed_status,
		closed_at: iso(r.closed_at),
		payment_mode: r.payment_mode,
		order_value: toRupees(r.order_value_paise),
		cod_amount: r.cod_amount_paise === null ? null : toRupees(r.cod_amount_paise),
		consignee: { name: r.consignee_name, city: r.consignee_city, pincode: r.consignee_pincode },
		comments: r.comments,
		notification,
		buyer_answer: r.buyer_answer,
		opened_at: String(iso(r.created_at)),
		updated_at: String(iso(r.updated_at)),
	};
}

/** `GET /v1/ndr/counts`: the stored per-status counts as one number per tab (0 when none). */
export function countsOf(byStatus: Map<string, number>): NdrCounts {
	const out = {} as NdrCounts;
	for (const t of NDR_TABS) out[t] = byStatus.get(t) ?? 0;
	return out;
}

/**
 * The comment body of `POST /v1/ndr/{id}/comment` (§4.6, §7, §8): `comment`
 * trimmed, 1–255 characters (code points).
 * @throws 400 `empty_comment` (absent, null, blank); 400 `comment_too_long`
 *   (over 255 after trimming); 400 `validation_failed` (not a string)
 */
export function parseComment(params: HttpParams): string {
	const v = params.comment;
	if (v === undefined || v === null) throw fail("empty_comment", "missing");
	if (typeof v !== "string")
		throw failWith("validation_failed", { field: "comment", details: ["comment: must be a string"] }, [
			"comment: must be a string",
		]);
	const s = v.trim();
	if (!s) throw fail("empty_comment", "blank");
	if ([...s].length > COMMENT_MAX) throw fail("comment_too_long", COMMENT_MAX);
	return s;
}

/**
 * The path `id` (order id) of `POST /v1/ndr/{id}/comment`.
 * @throws 400 `validation_failed` `id: must be a positive integer`
 */
export function parseNdrOrderId(v: unknown): number {
	const id = parsePositiveInt(v, { trim: false });
	if (id === null)
		throw failWith("validation_failed", { field: "id", details: ["id: must be a positive integer"] }, [
			"id: must be a positive integer",
		]);
	return id;
}

/** The 201 comment row. */
export function commentOf(c: CommentRow, awb_number: string): NdrComment {
	return {
		id: c.id,
		ndr_id: c.case_id,
		order_id: c.order_id,
		awb_number,
		comment: c.comment,
		created_by: c.author,
		created_by_role: c.role,
		created_at: new Date(c.created_at).toISOString(),
	};
}

/** 404 for a comment on an order the account has no NDR case for (§7: not found and not yours are identical). */
export function ndrOrderNotFound(): ApiError {
	return fail("order not found", "ndr");
}
