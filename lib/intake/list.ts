/**
 * The orders read side of intake (issue 7; spec §2.5, §2.12, §3, §4.3, §4.8,
 * §7): parsing and validation of `GET /v1/orders` filters and cursors, the
 * shapes of a list row and of the order detail, and the buyer-facing
 * tracking URL. SQL in ./list-store.ts; cursors signed by ../cursor.ts;
 * statuses, buckets and names from ../shipment-status.ts. Decisions (row
 * fields, defaults, matching rules) are in
 * docs/decisions/0030-orders-read-side.md.
 */
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import {
	type BookingState,
	COD_STATUSES,
	type CodShipment,
	type CodStatus,
	type CursorPage,
	type HttpParams,
	type OrderDetail,
	type OrderListRow,
	type ShipmentRecord,
} from "../contracts";
import {
	AWB_MAX_LENGTH,
	CITY_MAX_LENGTH,
	MAX_ORDER_NO_LENGTH,
	ORDERS_DEFAULT_LIMIT,
	ORDERS_MAX_LIMIT,
} from "../contracts/http/intake-input";
import { setting } from "../platform/config";
import { type CursorPosition, currentCursorKey, decodeCursor, encodeCursor } from "../platform/cursor";
import { type ApiError, fail, failWith } from "../platform/errors";
import { answerJson, deepFreeze, keepAnswerJson, shareAnswer } from "../platform/shared-answers";
import { parsePositiveInt } from "../shared/fields";
import { keptJoin } from "../shared/kept-join";
import { KeptParses } from "../shared/kept-parses";
import { bookedLabelUrl, bookedTrackingPageUrl, labelLinkInputs } from "../shared/label-link";
import { toRupees } from "../shared/money";
import {
	BUCKETS,
	type Bucket,
	isLifecycleStatus,
	orderStatusIdOf,
	statusNameOf,
} from "../shared/shipment-status";
import { type PageVersions, pageVersionsOf, queryId, rowVersions, versionCount } from "./list-store";

/** Tracking page when `TRACKING_URL_TEMPLATE` is unset (example.com is reserved: nothing leaks to a real site). */
export const DEFAULT_TRACKING_URL_TEMPLATE = setting("TRACKING_URL_TEMPLATE", {});

/** Cursor kind of `GET /v1/orders`. */
const KIND = "orders";
/** India Standard Time offset (UTC+05:30, no daylight saving), ms. */
const IST_OFFSET_MS = 330 * 60_000;
const ONE_DAY_MS = 86_400_000;

const AWB = /^[A-Za-z0-9-]+$/;
/** `customer_order_no` characters (lib/intake/validation.ts); a return's stored reference adds `-R`. */
const ORDER_NO = /^[A-Za-z0-9_\-/#.]+$/;
const ORDER_NO_MAX = MAX_ORDER_NO_LENGTH + 2;
const CONTROL = /\p{Cc}/u;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The filters of `GET /v1/orders`, normalised (null: not filtering). */
export interface OrderListFilters {
	bucket: Bucket | "all";
	/** exact AWB */
	awb_number: string | null;
	/** exact stored reference; a return also matches its `customer_order_no` without `-R` */
	order_no: string | null;
	shipment_type: 0 | 1 | null;
	/** inclusive IST days, `YYYY-MM-DD` */
	date_from: string | null;
	date_to: string | null;
	/** trimmed; compared case-insensitively with the receiver's city */
	city: string | null;
	/** COD orders whose current AWB's COD money is in this state (billing's, delivered to intake) */
	cod_status: CodStatus | null;
}

/** A parsed `GET /v1/orders` query. */
export interface OrderListQuery {
	filters: OrderListFilters;
	limit: number;
	/** orders with an id below this one (the next page), or null (first page) */
	before_id: number | null;
	/** `created_at` bounds of the date filters (ISO-8601 UTC; from inclusive, to exclusive) */
	created_from: string | null;
	created_before: string | null;
}

/** Position in the orders list: account, last order id of the page, hash of the filters. */
type OrdersPosition = { s: number; id: number; f: string };

/**
 * 400 `bucket: unrecognised` (§7 orders list): the code exactly, `field`
 * "bucket", and the accepted values in the message.
 */
export function bucketUnrecognised(): ApiError {
	return failWith("bucket: unrecognised", { field: "bucket" }, BUCKETS);
}

/** 404 `order not found` (§7 order detail, tracking, unshipped edit, hide): code and message alike. */
export function orderNotFound(): ApiError {
	return fail("order not found");
}

/**
 * The query value as a trimmed string (a number as its digits; anything else,
 * which HTTP never sends, as its JSON, which no rule below accepts as an id
 * or a code); undefined when absent or empty (an empty filter is no filter).
 */
function given(v: unknown): string | undefined {
	if (v === undefined || v === null) return undefined;
	const s = typeof v === "string" ? v.trim() : typeof v === "number" ? String(v) : JSON.stringify(v);
	return s === "" ? undefined : s;
}

/**
 * 400 `validation_failed` for bad filters: `field` the first bad key,
 * `details` one `key: reason` each, `message` the only detail or "Validation failed".
 */
function badFilters(bad: Array<[field: string, detail: string]>): ApiError {
	const details = bad.map(([, d]) => d);
	return failWith("validation_failed", { field: bad[0][0], details }, details);
}

/** A real calendar day `YYYY-MM-DD` (years 1900–9999) as its UTC midnight (ms), or null. */
function calendarDay(s: string): number | null {
	const m = DATE.exec(s);
	if (!m) return null;
	const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
	if (y < 1900) return null;
	const t = Date.UTC(y, mo - 1, d);
	const back = new Date(t);
	return back.getUTCFullYear() === y && back.getUTCMonth() === mo - 1 && back.getUTCDate() === d ? t : null;
}

/** Midnight IST of the day at UTC midnight `utcDay` (ms), as ISO-8601 UTC. */
const istMidnight = (utcDay: number): string => new Date(utcDay - IST_OFFSET_MS).toISOString();

/** Hash binding a cursor to its filters (limit excluded: it may change between pages). */
export function filtersHash(f: OrderListFilters): string {
	const norm = [
		f.bucket,
		f.awb_number,
		f.order_no,
		f.shipment_type,
		f.date_from,
		f.date_to,
		f.city === null ? null : f.city.toLowerCase(),
		// absent from hashes of cursors issued before the filter existed: those stay valid
		...(f.cod_status === null ? [] : [f.cod_status]),
	];
	return createHash("sha256").update(JSON.stringify(norm)).digest("base64url").slice(0, 22);
}

/**
 * Parses the query of `GET /v1/orders` for account `sender_id` (spec §4.3,
 * §4.8; decisions in docs/decisions/0030-orders-read-side.md). Keys: `bucket`
 * (one of lib/shared/shipment-status.ts BUCKETS, default `all`), `limit` (integer
 * 1–1000, default {@link ORDERS_DEFAULT_LIMIT}), `cursor` (a `nextCursor` of
 * this list, issued to this account for the same filters), `awb_number` (1–64
 * of `A-Z a-z 0-9 -`, exact), `order_no` (1–52 of `A-Z a-z 0-9 _ - / # .`,
 * exact), `shipment_type` (`0`/`1`), `date_from` / `date_to` (real calendar
 * days `YYYY-MM-DD`, inclusive, India Standard Time; from ≤ to), `city`
 * (1–100 characters, no control characters), `cod_status` (one of
 * COD_STATUSES: COD orders with an AWB whose COD money is in that state). Values are trimmed; an empty
 * value is no filter; other keys (`sender_id` included) are ignored.
 * @throws 400 `bucket: unrecognised` (`field` "bucket");
 *   400 `validation_failed` with `field` (the first bad key) and `details`
 *   (one `key: reason` per bad key);
 *   400 `cursor: unrecognised shape` (not an orders cursor of this account
 *   and these filters, modified, garbage)
 * The query answered is frozen (its id in keys is made once: ./list-store.ts `queryId`). A query without a
 * cursor is the same for every account, so one already parsed from the same values is answered again
 * ({@link PARSED_KEPT} kept; the same frozen object, its key already written).
 */
export function parseOrderListQuery(params: HttpParams, sender_id: number): OrderListQuery {
	// a cursor's query is parsed every time: its page bound is the account's own
	if (params.cursor !== undefined && params.cursor !== null && params.cursor !== "")
		return parseQueryAnew(params, sender_id);
	return parsedQueries.get(params, (p) => parseQueryAnew(p, sender_id));
}

/** Most queries without a cursor kept parsed (distinct sets of values) before the store starts over. */
const PARSED_KEPT = 1_000;

/** Parsed queries without a cursor, by the values of the keys {@link parseOrderListQuery} reads besides `cursor`. */
const parsedQueries = new KeptParses<OrderListQuery>(
	[
		"bucket",
		"limit",
		"awb_number",
		"order_no",
		"shipment_type",
		"date_from",
		"date_to",
		"city",
		"cod_status",
	],
	PARSED_KEPT,
);

/** {@link parseOrderListQuery} itself: the values checked and the query made (frozen). */
function parseQueryAnew(params: HttpParams, sender_id: number): OrderListQuery {
	const bucketRaw = given(params.bucket);
	if (bucketRaw !== undefined && !(BUCKETS as readonly string[]).includes(bucketRaw)) {
		throw bucketUnrecognised();
	}
	const bad: Array<[string, string]> = [];
	const fail = (field: string, reason: string): null => {
		bad.push([field, `${field}: ${reason}`]);
		return null;
	};

	let limit = ORDERS_DEFAULT_LIMIT;
	const limitRaw = given(params.limit);
	if (limitRaw !== undefined) {
		const n = parsePositiveInt(limitRaw);
		if (n === null || n > ORDERS_MAX_LIMIT) fail("limit", `must be an integer from 1 to ${ORDERS_MAX_LIMIT}`);
		else limit = n;
	}

	const awbRaw = given(params.awb_number);
	const awb_number =
		awbRaw === undefined
			? null
			: awbRaw.length <= AWB_MAX_LENGTH && AWB.test(awbRaw)
				? awbRaw
				: fail("awb_number", `must be 1 to ${AWB_MAX_LENGTH} letters, digits or hyphens`);

	const orderNoRaw = given(params.order_no);
	const order_no =
		orderNoRaw === undefined
			? null
			: orderNoRaw.length <= ORDER_NO_MAX && ORDER_NO.test(orderNoRaw)
				? orderNoRaw
				: fail("order_no", `must be 1 to ${ORDER_NO_MAX} of letters, digits and _ - / # .`);

	const stRaw = given(params.shipment_type);
	const shipment_type =
		stRaw === undefined
			? null
			: stRaw === "0" || stRaw === "1"
				? (Number(stRaw) as 0 | 1)
				: fail("shipment_type", "must be 0 (forward) or 1 (reverse)");

	const day = (key: "date_from" | "date_to"): { s: string; t: number } | null => {
		const raw = given(params[key]);
		if (raw === undefined) return null;
		const t = calendarDay(raw);
		return t === null ? fail(key, "must be a real calendar date YYYY-MM-DD") : { s: raw, t };
	};
	const from = day("date_from");
	const to = day("date_to");
	if (from && to && from.t > to.t) fail("date_from", "must not be after date_to");

	const cityRaw = given(params.city);
	const city =
		cityRaw === undefined
			? null
			: cityRaw.length <= CITY_MAX_LENGTH && !CONTROL.test(cityRaw)
				? cityRaw
				: fail("city", `must be 1 to ${CITY_MAX_LENGTH} characters, no control characters`);

	const codRaw = given(params.cod_status);
	const cod_status =
		codRaw === undefined
			? null
			: (COD_STATUSES as readonly string[]).includes(codRaw)
				? (codRaw as CodStatus)
				: fail("cod_status", `must be one of ${COD_STATUSES.join(", ")}`);

	if (bad.length) throw badFilters(bad);

	const filters: OrderListFilters = {
		bucket: (bucketRaw ?? "all") as Bucket | "all",
		awb_number,
		order_no,
		shipment_type,
		date_from: from?.s ?? null,
		date_to: to?.s ?? null,
		city,
		cod_status,
	};
	const query: OrderListQuery = {
		filters,
		limit,
		before_id: null,
		created_from: from ? istMidnight(from.t) : null,
		created_before: to ? istMidnight(to.t + ONE_DAY_MS) : null,
	};
	const cursor = given(params.cursor);
	if (cursor !== undefined) {
		const f = filtersHash(filters);
		const ours = (p: CursorPosition): p is OrdersPosition =>
			p.s === sender_id && p.f === f && typeof p.id === "number" && Number.isSafeInteger(p.id) && p.id > 0;
		query.before_id = decodeCursor(KIND, cursor, ours).id;
	}
	// frozen: its id is made once and used in keys (./list-store.ts queryId)
	Object.freeze(filters);
	return Object.freeze(query);
}

/**
 * The `nextCursor` after a page whose last order is `last_id` (null when
 * the page was the last one).
 */
export function nextCursorOf(
	sender_id: number,
	q: OrderListQuery,
	last_id: number | undefined,
	more: boolean,
): string | null {
	if (!more || last_id === undefined) return null;
	return encodeCursor(KIND, { s: sender_id, id: last_id, f: filtersHash(q.filters) });
}

/**
 * The path `id` of `GET /v1/orders/{id}`: a positive integer (digits only).
 * @throws 400 `validation_failed` `field` "id", details `["id: must be a positive integer"]`
 */
export function parseOrderId(v: unknown): number {
	const id = parsePositiveInt(v, { trim: false });
	if (id === null) throw badFilters([["id", "id: must be a positive integer"]]);
	return id;
}

/**
 * Buyer-facing tracking page of an AWB: `template` (default: env
 * `TRACKING_URL_TEMPLATE`, else {@link DEFAULT_TRACKING_URL_TEMPLATE}) with
 * `{awb}` replaced by the URL-encoded AWB; null without an AWB.
 */
export function trackingUrlOf(awb: string | null, template = trackingTemplate()): string | null {
	if (!awb) return null;
	return template.replaceAll("{awb}", encodeURIComponent(awb));
}

/** The tracking URL template in force (read from the environment at each call: once per answer). */
export function trackingTemplate(): string {
	return setting("TRACKING_URL_TEMPLATE");
}

/** A list row as ./list-store.ts reads it (bigint and numeric columns as pg returns them). */
export interface ListRowDb {
	order_id: string;
	/** the row version's `xmin` as text: changes with every write of the row (./list-store.ts) */
	row_version: string;
	customer_order_no: string;
	shipment_type: number;
	order_type: number;
	channel: string | null;
	declared_order_total_paise: string;
	cod_amount_paise: string;
	receiver_name: string;
	receiver_city: string | null;
	receiver_pincode: string;
	pickup_address_id: string | null;
	state: BookingState;
	status: string;
	bucket: string | null;
	awb_number: string | null;
	courier: string | null;
	logistic_id: number | null;
	/** timestamps as ISO-8601 UTC text (formatted by PostgreSQL, ./list-store.ts) */
	created_at: string;
	booked_at: string | null;
	status_at: string | null;
}

/** A whole order row for the detail (./list-store.ts `orderRow`). */
export interface DetailRowDb extends ListRowDb {
	receiver_address_1: string;
	receiver_address_2: string | null;
	receiver_landmark: string | null;
	receiver_state: string | null;
	receiver_mobile_no: string;
	product_name: string;
	product_sku: string | null;
	physical_weight: string;
	length: string | null;
	width: string | null;
	height: string | null;
	rto_address_id: string | null;
	forward_source: string | null;
	old_fwd_awb_no: string | null;
	reverse_pickup_address_id: string | null;
	return_address: Record<string, unknown> | null;
	order_date: string;
	order_from_source: string | null;
	failure_reason: string | null;
	failure_code: string | null;
	manifested_at: string | null;
	picked_up_at: string | null;
	delivered_at: string | null;
	rto_at: string | null;
	closed_at: string | null;
	released_at: string | null;
	hidden_at: string | null;
	edited_at: string | null;
	updated_at: string;
}

const num = (x: string | number | null): number | null => (x === null ? null : Number(x));

/** Words for a stored status (lib/shared/shipment-status.ts); an unknown one answers itself. */
function nameOf(status: string): string {
	return isLifecycleStatus(status) ? statusNameOf(status) : status;
}

/**
 * Shapes a row of `GET /v1/orders` ({@link OrderListRow}: rupees, ISO-8601
 * UTC); `template` the tracking URL template of the answer.
 */
export function listRow(r: ListRowDb, template = trackingTemplate()): OrderListRow {
	return {
		order_id: Number(r.order_id),
		order_no: r.customer_order_no,
		shipment_type: r.shipment_type === 1 ? 1 : 0,
		order_type: r.order_type === 1 ? 1 : 0,
		channel: r.channel,
		order_value: toRupees(r.declared_order_total_paise),
		cod_amount: r.order_type === 1 ? toRupees(r.cod_amount_paise) : null,
		receiver: { name: r.receiver_name, city: r.receiver_city, pincode: r.receiver_pincode },
		pickup_address_id: num(r.pickup_address_id),
		state: r.state,
		status: r.status,
		status_name: nameOf(r.status),
		bucket: r.bucket,
		awb_number: r.awb_number,
		courier: r.courier,
		logistic_id: r.logistic_id,
		tracking_url: trackingUrlOf(r.awb_number, template),
		label_url: bookedLabelUrl(r.state, r.awb_number),
		created_at: r.created_at,
		booked_at: r.booked_at,
		status_at: r.status_at ?? r.created_at,
	};
}

/** Most list rows whose answer a process keeps ({@link keptListRow}; about 1.5 KB each, object and JSON). */
export const KEPT_LIST_ROWS = 5_000;

/** A list row's answer kept under the row version and the environment it was made in. */
interface KeptListRow {
	/** the row's `order_id` as read */
	id: string;
	version: string;
	env: string;
	row: OrderListRow;
	json: string;
}

/** The kept list rows of this process by `order_id` (the least recently read goes first). */
const keptListRows = new LRUCache<string, KeptListRow>({ max: KEPT_LIST_ROWS });

/** List rows kept by this process (for tests). */
export function keptListRowCount(): number {
	return keptListRows.size;
}

/**
 * The answer of list row `r` ({@link listRow}, frozen) and its JSON, kept while the row version
 * (`row_version`: every write of the row changes it) and `env` (what the answer depends on besides the row: the
 * tracking template and the label links' inputs) stay the same. An order's row read again unchanged is neither
 * shaped, signed nor encoded again. At most {@link KEPT_LIST_ROWS} are kept: the least recently read goes first.
 */
function keptListRow(r: ListRowDb, template: string, env: string): KeptListRow {
	const kept = keptListRows.get(r.order_id);
	if (kept !== undefined && kept.version === r.row_version && kept.env === env) return kept;
	const row = deepFreeze(listRow(r, template));
	const made = { id: r.order_id, version: r.row_version, env, row, json: JSON.stringify(row) };
	keptListRows.set(r.order_id, made);
	return made;
}

/**
 * One page of `GET /v1/orders` (§2.12 envelope) from up to `limit + 1` rows read. The rows' answers are kept
 * ({@link keptListRow}), and the page is frozen with its JSON assembled from theirs
 * (lib/platform/shared-answers.ts `keepAnswerJson`: the text `JSON.stringify` would write). The page is kept as
 * listed ({@link listedPage}).
 */
export function listPage(sender_id: number, q: OrderListQuery, rows: ListRowDb[]): CursorPage<OrderListRow> {
	const template = trackingTemplate();
	const env = rowsEnv(template);
	const page = rows.length > q.limit ? rows.slice(0, q.limit) : rows;
	return listed(
		sender_id,
		q,
		env,
		page.map((r) => keptListRow(r, template, env)),
		pageVersionsOf(rows),
	);
}

/** A page this process answered lately: its rows, how many rows were read for it, and the answer. */
export interface ListedPage {
	/** the environment its rows were made in (./list.ts `keptListRow`) */
	env: string;
	/** the cursor key its next cursor was signed with (lib/platform/cursor.ts) */
	cursorKey: object;
	rows: KeptListRow[];
	/** the rows read for it (up to `limit + 1`: one more says a next page exists) as keys and versions */
	versions: PageVersions;
	answer: CursorPage<OrderListRow>;
}

/**
 * Bytes the listed pages' answers hold at most: each page's JSON text and, once written, its UTF-8 bytes
 * (lib/platform/shared-answers.ts `answerBody`), counted as twice the text. Their rows are kept by `keptListRows` as
 * well.
 */
const LISTED_PAGES_BYTES = 8 * 1024 * 1024;

/** The pages (`<sender_id>` and query) this process listed lately, the least recently read going first. */
const listedPages = new LRUCache<string, ListedPage>({
	maxSize: LISTED_PAGES_BYTES,
	sizeCalculation: (p) => Math.max(1, 2 * answerJson(p.answer).length),
});

/** The key of a listed page: the account and its parsed query (filters, cursor bound, limit). */
const pageKey = (sender_id: number, q: OrderListQuery): string => `${sender_id}:${queryId(q)}`;

/** What list rows' answers depend on besides the row: the tracking URL template and the label links' inputs. */
const rowsEnv = (template: string): string => envText(template, labelLinkInputs());

/** Joins {@link rowsEnv}'s parts, the same text while both are unchanged (a page read again compares it with its own). */
const envText = keptJoin("\n");

/**
 * The page (account, filters, cursor, limit) this process listed lately, if any: reading it again reads the rows'
 * versions first ({@link keptListPage}).
 */
export function listedPage(sender_id: number, q: OrderListQuery): ListedPage | undefined {
	return listedPages.get(pageKey(sender_id, q));
}

/**
 * The page of `GET /v1/orders` listed before (`was`), read again as its rows' versions (./list-store.ts
 * `orderVersionReader`: up to `limit + 1` rows as one {@link PageVersions}): the same answer when the same rows come
 * back unchanged (the same string) in the same environment under the same cursor key; else, when every row is kept
 * under its version, the answer {@link listPage} would make from the whole rows, made from the kept ones; null when
 * any row is not kept so (new, changed, let go, or the environment changed) or the rows did not come newest first
 * (./list-store.ts `rowVersions`): the caller reads the page whole.
 */
export function keptListPage(
	was: ListedPage,
	sender_id: number,
	q: OrderListQuery,
	versions: PageVersions,
): CursorPage<OrderListRow> | null {
	const env = rowsEnv(trackingTemplate());
	if (env === was.env && versions === was.versions && was.cursorKey === currentCursorKey()) return was.answer;
	const read = rowVersions(versions);
	if (read === null) return null;
	const n = Math.min(read.length, q.limit);
	const kept: KeptListRow[] = [];
	for (let i = 0; i < n; i++) {
		const k = keptListRows.get(read[i].order_id);
		if (k === undefined || k.version !== read[i].row_version || k.env !== env) return null;
		kept.push(k);
	}
	return listed(sender_id, q, env, kept, versions);
}

/** The page of `rows` (read as `versions`: a next page exists when more than `q.limit` rows were read), kept as listed ({@link listedPage}). */
function listed(
	sender_id: number,
	q: OrderListQuery,
	env: string,
	rows: KeptListRow[],
	versions: PageVersions,
): CursorPage<OrderListRow> {
	const cursorKey = currentCursorKey();
	const answer = pageOf(sender_id, q, rows, versionCount(versions) > q.limit);
	listedPages.set(pageKey(sender_id, q), { env, cursorKey, rows, versions, answer });
	return answer;
}

/** The page of kept rows `kept` (`more`: a next page exists), frozen with its JSON assembled from the rows'. */
function pageOf(
	sender_id: number,
	q: OrderListQuery,
	kept: KeptListRow[],
	more: boolean,
): CursorPage<OrderListRow> {
	const last = kept.at(-1);
	const pagination: CursorPage<OrderListRow>["pagination"] = {
		mode: "cursor",
		limit: q.limit,
		nextCursor: nextCursorOf(sender_id, q, last ? last.row.order_id : undefined, more),
	};
	// the array frozen here, its rows when kept: keepAnswerJson's freeze stops at what is frozen already
	const data = kept.map((k) => k.row);
	Object.freeze(data);
	Object.freeze(pagination);
	return keepAnswerJson(
		{ data, pagination },
		`{"data":[${kept.map((k) => k.json).join(",")}],"pagination":${JSON.stringify(pagination)}}`,
	);
}

/**
 * Shapes `GET /v1/orders/{id}` ({@link OrderDetail}) from the order row, the
 * booked shipment booking reported (`charges`, only when it is the row's AWB),
 * the label download time of the row's AWB (documents) and, for a COD order,
 * the COD money of its AWB (billing; `pending` while billing has not heard of it).
 */
export function orderDetail(
	r: DetailRowDb,
	shipment: ShipmentRecord | null,
	label_downloaded_at: string | null,
	codMoney: CodShipment | null = null,
): OrderDetail {
	const base = listRow(r);
	const cod = r.order_type === 1;
	const charges = shipment && shipment.awb_number === r.awb_number ? shipment.charges : null;
	return {
		...base,
		order_status_id: isLifecycleStatus(r.status) ? orderStatusIdOf(r.status) : 0,
		order_date: r.order_date,
		order_from_source: r.order_from_source,
		receiver: {
			name: r.receiver_name,
			address_1: r.receiver_address_1,
			address_2: r.receiver_address_2,
			landmark: r.receiver_landmark,
			city: r.receiver_city,
			state: r.receiver_state,
			pincode: r.receiver_pincode,
			mobile_no: r.receiver_mobile_no,
		},
		product: {
			product_name: r.product_name,
			product_sku: r.product_sku,
			physical_weight: Number(r.physical_weight),
			declared_order_total: toRupees(r.declared_order_total_paise),
			cod_amount: cod ? toRupees(r.cod_amount_paise) : null,
			length: num(r.length),
			width: num(r.width),
			height: num(r.height),
		},
		rto_address_id: num(r.rto_address_id),
		reverse:
			r.shipment_type === 1
				? {
						forward_source: r.forward_source,
						old_fwd_awb_no: r.old_fwd_awb_no,
						reverse_pickup_address_id: num(r.reverse_pickup_address_id),
						return_address: r.return_address,
					}
				: null,
		charges,
		failure_reason: r.failure_reason,
		failure_code: r.failure_code,
		manifested_at: r.manifested_at,
		picked_up_at: r.picked_up_at,
		delivered_at: r.delivered_at,
		rto_at: r.rto_at,
		closed_at: r.closed_at,
		released_at: r.released_at,
		hidden_at: r.hidden_at,
		edited_at: r.edited_at,
		label_downloaded_at,
		// a COD shipment billing has not heard of yet is pending; no AWB, no shipment: null
		cod_status: cod && r.awb_number ? (codMoney?.cod_status ?? "pending") : null,
		cod_remittance: cod && r.awb_number ? (codMoney?.remittance ?? null) : null,
		tracking_page_url: bookedTrackingPageUrl(r.state, r.awb_number),
		updated_at: r.updated_at,
	};
}

/** Most order details whose answer a process keeps ({@link keptOrderDetail}; a few KB each, object and JSON). */
export const KEPT_ORDER_DETAILS = 2_000;

/** An order detail's answer kept under the row version it was made from. */
export interface KeptOrderDetail {
	/** the row version (`xmin`) the answer was made from */
	version: string;
	answer: OrderDetail;
}

/** The kept order details of this process by `<sender_id>:<order_id>` (the least recently read goes first). */
const keptOrderDetails = new LRUCache<string, KeptOrderDetail>({ max: KEPT_ORDER_DETAILS });

/**
 * The kept detail answer of the sender's order, if any: the caller reads the row with its version
 * (./list-store.ts `orderRowReader` `kept`), and gives this answer when the row is unchanged.
 */
export function keptOrderDetail(sender_id: number, order_id: number): KeptOrderDetail | undefined {
	return keptOrderDetails.get(`${sender_id}:${order_id}`);
}

/** Lets go of the kept detail answer of the sender's order (it has an AWB now: its answer is made per read). */
export function forgetOrderDetail(sender_id: number, order_id: number): void {
	keptOrderDetails.delete(`${sender_id}:${order_id}`);
}

/**
 * `GET /v1/orders/{id}` of an order without an AWB ({@link orderDetail} of the row alone, frozen and marked as a
 * shared answer, so its JSON is made once: lib/platform/shared-answers.ts), kept under the row version: such an
 * answer depends on nothing but the row (no charges, label, COD money, tracking URL or signed link without an AWB),
 * so while the row version stays the same it is the answer. An order with an AWB is shaped per read and not kept
 * (its answer joins other services' answers). At most {@link KEPT_ORDER_DETAILS} are kept
 * (docs/decisions/0131-kept-order-details.md).
 */
export function unbookedOrderDetail(sender_id: number, r: DetailRowDb): OrderDetail {
	const answer = shareAnswer(orderDetail(r, null, null));
	if (!r.awb_number) keptOrderDetails.set(`${sender_id}:${r.order_id}`, { version: r.row_version, answer });
	return answer;
}
