/**
 * SQL of the orders read side (`GET /v1/orders`, `GET /v1/orders/{id}`;
 * ./list.ts parses and shapes). Every value is bound ($1, $2, …); the
 * statement text only varies by which filters are present, so each filter
 * combination is one prepared statement (lib/platform/db.ts) with a plan of its own;
 * concurrent list requests of one combination share a statement
 * ({@link orderPageReader}).
 *
 * Keyset pagination on `order_id` only (never OFFSET): a page is `order_id <
 * <last id of the previous page>`, newest first, so a page 10,000 rows deep
 * costs what page 1 costs, and a walk never sees an order inserted after it
 * started (higher ids). Hidden orders (`hidden_at`) are never listed. Indexes
 * (lib/intake/migrations.ts 0003, 0004): bucket `all` → `orders_list_idx
 * (sender_id, order_id DESC)`; a bucket → `orders_bucket_idx (sender_id,
 * bucket, order_id DESC)`; `shipment_type` → `orders_type_idx (sender_id,
 * shipment_type, order_id DESC)` (0004); `awb_number` → `orders_awb_idx`;
 * `order_no` → `orders_sender_ref_idx`; `city` → `orders_city_idx (sender_id,
 * lower(receiver_city), order_id DESC)`; `cod_status` → the account's list
 * walk with the AWB's row of `intake.cod_statuses` (primary key) per order; the date filters →
 * `orders_created_idx (sender_id, created_at)` (0004) when the range is
 * selective, else the list index; all but the AWB and reference ones partial
 * on `hidden_at IS NULL`. test/unit/intake/list-plans.spec.ts checks the
 * plans on a seeded table.
 */
import type { Sequelize } from "sequelize";
import { ChurnMap } from "../platform/churn-map";
import { coalesce } from "../platform/coalesce";
import { isoColumn as iso, select } from "../platform/db";
import type { DetailRowDb, ListRowDb, OrderListQuery } from "./list";

/** Columns of a list row after its key and version (./list.ts {@link ListRowDb}). */
const LIST_FIELDS = `customer_order_no, shipment_type, order_type, channel,
	declared_order_total_paise, cod_amount_paise, receiver_name, receiver_city, receiver_pincode,
	pickup_address_id, state, status, bucket, awb_number, courier, logistic_id,
	${iso("created_at")}, ${iso("booked_at")}, ${iso("status_at")}`;

/**
 * Columns of a list row (./list.ts {@link ListRowDb}). `row_version` is the row version's `xmin` (the transaction
 * that wrote it): every UPDATE writes a new version, so it changes whenever the row does (./list.ts keeps a row's
 * answer under it).
 */
const LIST_COLUMNS = `order_id, xmin::text AS row_version, ${LIST_FIELDS}`;

/** Columns of a page read as its rows' versions only ({@link ListRowVersion}). */
const VERSION_COLUMNS = "order_id, xmin::text AS row_version";

/**
 * The rows of page query `inner` (read as {@link VERSION_COLUMNS}) as one value, their {@link PageVersions}: one
 * row whatever the page's length (an aggregate without GROUP BY), `versions` null for no rows. The rows are joined
 * in the order the page query gives them (its `ORDER BY … order_id DESC`), with no sort of the aggregate's own: the
 * aggregate reads nothing but that sorted subquery, the case PostgreSQL's manual says keeps the subquery's order
 * ("Aggregate Expressions"), so PostgreSQL does not sort again rows the page query sorted (issue 32). {@link rowVersions}
 * checks the order wherever the string is split, so a page is never assembled from rows out of order.
 */
const versionsOf = (inner: string): string =>
	`SELECT string_agg(v.order_id::text || ':' || v.row_version, ',') AS versions
	FROM (${inner}) v`;

/**
 * A page read as its rows' keys and versions, in one string: `<order_id>:<row_version>` per row read (up to
 * `limit + 1`), newest first, joined by commas; "" for no rows. Two reads of a page give the same string exactly when
 * they read the same rows in the same versions (./list.ts `keptListPage` compares it first, and splits it
 * ({@link rowVersions}) only when it differs).
 */
export type PageVersions = string;

/** The {@link PageVersions} of rows read whole (newest first), as {@link versionsOf} makes it in PostgreSQL. */
export function pageVersionsOf(rows: readonly ListRowVersion[]): PageVersions {
	return rows.map((r) => `${r.order_id}:${r.row_version}`).join(",");
}

/** How many rows a {@link PageVersions} holds. */
export function versionCount(versions: PageVersions): number {
	if (versions === "") return 0;
	let n = 1;
	for (let at = versions.indexOf(","); at !== -1; at = versions.indexOf(",", at + 1)) n++;
	return n;
}

/**
 * The rows of a {@link PageVersions}, newest first (order ids descending); null when they are not in that order
 * (the caller then reads the page whole: {@link versionsOf} relies on PostgreSQL keeping the page query's order).
 */
export function rowVersions(versions: PageVersions): ListRowVersion[] | null {
	if (versions === "") return [];
	const rows = versions.split(",").map((kv) => {
		const at = kv.indexOf(":");
		return { order_id: kv.slice(0, at), row_version: kv.slice(at + 1) };
	});
	for (let i = 1; i < rows.length; i++) if (!newerId(rows[i - 1].order_id, rows[i].order_id)) return null;
	return rows;
}

/** Whether order id `a` is greater than order id `b` (both decimal text without leading zeros, as PostgreSQL writes a bigint). */
function newerId(a: string, b: string): boolean {
	return a.length !== b.length ? a.length > b.length : a > b;
}

/** A list row read as its key and version only (./list.ts keeps rows' answers under the version). */
export interface ListRowVersion {
	order_id: string;
	row_version: string;
}

/** Columns of the detail after its key and version (./list.ts {@link DetailRowDb}): the list's and the rest of the row. */
const DETAIL_FIELDS = `${LIST_FIELDS},
	receiver_address_1, receiver_address_2, receiver_landmark, receiver_state, receiver_mobile_no,
	product_name, product_sku, physical_weight, length, width, height, rto_address_id,
	forward_source, old_fwd_awb_no, reverse_pickup_address_id, return_address, order_from_source,
	failure_reason, failure_code, ${[
		"order_date",
		"manifested_at",
		"picked_up_at",
		"delivered_at",
		"rto_at",
		"closed_at",
		"released_at",
		"hidden_at",
		"edited_at",
		"updated_at",
	]
		.map(iso)
		.join(", ")}`;

/** A statement and its bound values. */
export interface Statement {
	text: string;
	values: unknown[];
}

/** Largest bigint: the `order_id <` bound of a first page (every order is below it). */
const NO_CURSOR = "9223372036854775807";

/** A page request: the account and its parsed query. */
interface PageRequest {
	sender_id: number;
	q: OrderListQuery;
}

/**
 * The filter columns of a page query: name, PostgreSQL type, whether a query
 * has it, its value, and its condition given how the value is referenced
 * (`$n::type` in a single statement, `k.<name>` in a batch).
 */
const FILTERS: Array<{
	name: string;
	type: string;
	has: (q: OrderListQuery) => boolean;
	value: (q: OrderListQuery) => unknown;
	where: (v: string) => string;
}> = [
	{
		name: "bucket",
		type: "text",
		has: (q) => q.filters.bucket !== "all",
		value: (q) => q.filters.bucket,
		where: (v) => `bucket = ${v}`,
	},
	{
		name: "awb",
		type: "text",
		has: (q) => q.filters.awb_number !== null,
		value: (q) => q.filters.awb_number,
		where: (v) => `awb_number = ${v}`,
	},
	{
		name: "order_no",
		type: "text",
		has: (q) => q.filters.order_no !== null,
		value: (q) => q.filters.order_no,
		where: (v) => `(customer_order_no = ${v} OR (customer_order_no = (${v} || '-R') AND shipment_type = 1))`,
	},
	{
		name: "type",
		type: "smallint",
		has: (q) => q.filters.shipment_type !== null,
		value: (q) => q.filters.shipment_type,
		where: (v) => `shipment_type = ${v}`,
	},
	{
		name: "created_from",
		type: "timestamptz",
		has: (q) => q.created_from !== null,
		value: (q) => q.created_from,
		where: (v) => `created_at >= ${v}`,
	},
	{
		name: "created_before",
		type: "timestamptz",
		has: (q) => q.created_before !== null,
		value: (q) => q.created_before,
		where: (v) => `created_at < ${v}`,
	},
	{
		name: "city",
		type: "text",
		has: (q) => q.filters.city !== null,
		value: (q) => q.filters.city,
		where: (v) => `lower(receiver_city) = lower(${v})`,
	},
	{
		// the current AWB's COD status as billing delivered it; a COD order with an AWB billing has not
		// reported yet is `pending` (as its detail reads)
		name: "cod",
		type: "text",
		has: (q) => q.filters.cod_status !== null,
		value: (q) => q.filters.cod_status,
		where: (v) =>
			`order_type = 1 AND awb_number IS NOT NULL AND COALESCE((SELECT c.cod_status FROM intake.cod_statuses c
				WHERE c.awb_number = intake.orders.awb_number AND c.sender_id = intake.orders.sender_id), 'pending') = ${v}`,
	},
];

/** The values of a request by name: the account, the `order_id <` bound, `limit + 1`, and its filters. */
function valuesOf(r: PageRequest): Record<string, unknown> {
	const out: Record<string, unknown> = {
		sender: r.sender_id,
		before: r.q.before_id === null ? NO_CURSOR : r.q.before_id,
		lim: r.q.limit + 1,
	};
	for (const f of FILTERS) if (f.has(r.q)) out[f.name] = f.value(r.q);
	return out;
}

/**
 * Whether a query is a keyset shape: only `bucket`, `city`, `shipment_type`
 * (see {@link pageQuery} for why the account is then written as a range).
 */
function isKeyset(q: OrderListQuery): boolean {
	const f = q.filters;
	return f.awb_number === null && f.order_no === null && q.created_from === null && q.created_before === null;
}

/** The shape of a query: its form and which filters its statement has. */
function shapeOf(q: OrderListQuery): string {
	return `${isKeyset(q) ? "k" : "e"}:${FILTERS.filter((f) => f.has(q))
		.map((f) => f.name)
		.join(",")}`;
}

/**
 * The page query of a request of `q`'s shape, its values referenced through
 * `ref(name, type)`: the account's visible orders matching the filters, below
 * the `order_id` bound, newest first, `limit + 1` rows (the extra row says
 * whether a next page exists).
 *
 * Two forms. A keyset shape (only `bucket`, `city`, `shipment_type`: a
 * bucket or a slice of the account walked page by page) writes the account
 * as the range `sender_id >= $s AND sender_id <= $s` and the order as
 * `sender_id, order_id DESC`: the same rows and order, but only an index
 * whose columns are (sender_id, [an equality column,] order_id DESC) — the
 * list, bucket, city and type indexes — yields that order without a sort,
 * so each page is one index range read from its start. Written as
 * `sender_id = $s … ORDER BY order_id DESC`, PostgreSQL's default cost model
 * (random_page_cost 4, the heap correlated with order_id) preferred, for an
 * account holding a few percent of the table, walking the primary key
 * backwards and filtering the account's rows out of everyone's (40 rows read
 * per row answered for a 2.5 % account). With `awb_number`, `order_no` or a
 * date the account is an equality (so the AWB, reference and date indexes
 * are entered at the account and value) and the few matching rows are sorted.
 *
 * `order_no` matches the stored reference exactly, and a return also by the
 * `customer_order_no` it was created with (stored with `-R`); `city` matches
 * `lower(receiver_city)` = `lower(city)`; the date bounds are `created_at`
 * (from inclusive, before exclusive: IST midnights computed by ./list.ts).
 */
function pageQuery(q: OrderListQuery, ref: (name: string, type: string) => string, columns: string): string {
	const keyset = isKeyset(q);
	const s = ref("sender", "bigint");
	const where = [
		keyset ? `sender_id >= ${s} AND sender_id <= ${s}` : `sender_id = ${s}`,
		"hidden_at IS NULL",
		...FILTERS.filter((f) => f.has(q)).map((f) => f.where(ref(f.name, f.type))),
		`order_id < ${ref("before", "bigint")}`,
	];
	return `SELECT ${columns} FROM intake.orders WHERE ${where.join(" AND ")}
		ORDER BY ${keyset ? "sender_id, " : ""}order_id DESC LIMIT ${ref("lim", "integer")}`;
}

/** The page statement of one request ({@link pageQuery} with bound values), reading `columns` (default a row's). */
export function listOrdersStatement(sender_id: number, q: OrderListQuery, columns = LIST_COLUMNS): Statement {
	const vals = valuesOf({ sender_id, q });
	const values: unknown[] = [];
	const refs = new Map<string, string>();
	const text = pageQuery(
		q,
		(name, type) => {
			let r = refs.get(name);
			if (r === undefined) {
				values.push(vals[name]);
				r = `$${values.length}::${type}`;
				refs.set(name, r);
			}
			return r;
		},
		columns,
	);
	return { text, values };
}

/**
 * One statement answering the pages of several requests of one shape
 * (`requests` non-empty, all of `requests[0]`'s shape): a row per request
 * from `unnest` of one bound array per value (`k`: position `i`, account,
 * bound, limit, filters), each joined LATERAL to its {@link pageQuery} (as `wrap` makes of it: the page itself by
 * default). Rows carry `i`, the position of their request.
 */
export function batchStatement(
	requests: PageRequest[],
	columns = LIST_COLUMNS,
	wrap: (page: string) => string = (page) => page,
): Statement {
	const cols: Array<[name: string, type: string]> = [["i", "integer"]];
	const inner = pageQuery(
		requests[0].q,
		(name, type) => {
			if (!cols.some(([n]) => n === name)) cols.push([name, type]);
			return `k.${name}`;
		},
		columns,
	);
	const rows = requests.map(valuesOf);
	return {
		text: `SELECT k.i, page.* FROM unnest(${cols.map(([, type], n) => `$${n + 1}::${type}[]`).join(", ")})
				AS k(${cols.map(([name]) => name).join(", ")})
			CROSS JOIN LATERAL (${wrap(inner)}) page`,
		values: cols.map(([name]) => (name === "i" ? requests.map((_, i) => i) : rows.map((r) => r[name]))),
	};
}

/**
 * Reads the pages of requests of one shape, each row as `columns`: the rows of each, newest first.
 * One request: its own statement (planned for its values); several: one
 * {@link batchStatement}.
 */
async function readPages<T extends { order_id: string }>(
	db: Sequelize,
	requests: PageRequest[],
	columns: string,
): Promise<T[][]> {
	if (requests.length === 1) {
		const st = listOrdersStatement(requests[0].sender_id, requests[0].q, columns);
		return [await select<T>(db, st.text, st.values)];
	}
	const st = batchStatement(requests, columns);
	const rows = await select<T & { i: number }>(db, st.text, st.values);
	const pages: T[][] = requests.map(() => []);
	for (const r of rows) pages[r.i].push(r);
	// LATERAL rows come out in each page's order; an explicit order costs little on sorted input
	for (const p of pages) p.sort((a, b) => Number(b.order_id) - Number(a.order_id));
	return pages;
}

/**
 * Reads the pages of requests of one shape as their {@link PageVersions}, one row of one column per request:
 * the page query read as {@link VERSION_COLUMNS} and aggregated in PostgreSQL ({@link versionsOf}), so no row of the
 * page crosses the wire or is parsed on its own.
 */
async function readPageVersions(db: Sequelize, requests: PageRequest[]): Promise<PageVersions[]> {
	if (requests.length === 1) {
		const st = listOrdersStatement(requests[0].sender_id, requests[0].q, VERSION_COLUMNS);
		const [row] = await select<{ versions: string | null }>(db, versionsOf(st.text), st.values);
		return [row?.versions ?? ""];
	}
	const st = batchStatement(requests, VERSION_COLUMNS, versionsOf);
	const rows = await select<{ i: number; versions: string | null }>(db, st.text, st.values);
	const out: PageVersions[] = requests.map(() => "");
	for (const r of rows) out[r.i] = r.versions ?? "";
	return out;
}

/** Most requests one page statement answers (each up to 1,001 rows). */
const MAX_BATCH = 32;

/**
 * The page reader of one service instance: `(sender_id, q) → up to q.limit + 1
 * rows` of {@link pageQuery}. Concurrent requests of the same shape share
 * statements (lib/platform/coalesce.ts): while one runs, the requests made meanwhile
 * (identical ones once) form the next, so under load N list requests cost
 * about one PostgreSQL round trip per shape and period instead of N (each
 * round trip costs both processes CPU); a lone request runs at once. A
 * request never gets rows read before it was made: it joins the next run,
 * never the one in flight.
 */
export function orderPageReader(
	db: Sequelize,
): (sender_id: number, q: OrderListQuery) => Promise<ListRowDb[]> {
	return pageReader((requests) => readPages<ListRowDb>(db, requests, LIST_COLUMNS), []);
}

/**
 * The page reader of {@link orderPageReader} reading each page as its rows' keys and versions only, as one
 * {@link PageVersions}: a page read again (./list.ts `keptListPage`) is answered from the kept rows when every
 * version is a kept one, with nothing else of the rows sent or parsed (docs/decisions/0132-kept-list-pages.md,
 * 0140-page-versions-in-one-value.md).
 */
export function orderVersionReader(
	db: Sequelize,
): (sender_id: number, q: OrderListQuery) => Promise<PageVersions> {
	return pageReader((requests) => readPageVersions(db, requests), "");
}

/**
 * `JSON.stringify(q)`: what two parsed queries are compared by ({@link queryId}, which writes it once per query
 * object; a query is frozen when parsed, so its JSON never changes).
 */
export function queryKey(q: OrderListQuery): string {
	return JSON.stringify(q);
}

/** The short id of each parsed list query object ({@link queryId}). */
const queryIds = new WeakMap<OrderListQuery, string>();
/** The ids given, by query JSON ({@link queryKey}); forgotten past {@link QUERY_IDS_KEPT}. */
const idsByJson = new Map<string, string>();
/** Most query JSONs whose ids are remembered (distinct queries: a cursor's is one per page) before starting over. */
const QUERY_IDS_KEPT = 10_000;
/** The next id to give (never given twice in a process, so two different queries never share one). */
let nextQueryId = 0;

/**
 * A short id of query `q`, the same for equal queries (equal {@link queryKey}) as long as the ids are remembered
 * ({@link QUERY_IDS_KEPT}): part of the listed page's key (./list.ts) and of the coalesced read's key here, which
 * are then hashed in a few characters instead of the query's JSON. An id is never given to two different queries;
 * an equal query after the ids were forgotten gets a new one (its listed page is then read whole once).
 */
export function queryId(q: OrderListQuery): string {
	let id = queryIds.get(q);
	if (id === undefined) {
		const json = queryKey(q);
		id = idsByJson.get(json);
		if (id === undefined) {
			if (idsByJson.size >= QUERY_IDS_KEPT) idsByJson.clear();
			id = (nextQueryId++).toString(36);
			idsByJson.set(json, id);
		}
		queryIds.set(q, id);
	}
	return id;
}

/**
 * A coalescing page reader (per shape) answering what `read` makes of each request (`none` when it made nothing).
 * A request's coalescing key is its account and its query's id ({@link queryId}); the run takes the requests
 * themselves from `asked`, where the first call of a key left it, so nothing is parsed back from the keys.
 */
function pageReader<T>(
	read: (requests: PageRequest[]) => Promise<T[]>,
	none: T,
): (sender_id: number, q: OrderListQuery) => Promise<T> {
	const byShape = new Map<string, (keys: string[]) => Promise<Map<string, T>>>();
	// the requests waiting for a run, by key: added by the first call of a key, taken when a run starts with it
	// (a ChurnMap: keys come and go with every request, record 0148)
	const asked = new ChurnMap<PageRequest>();
	return async (sender_id, q) => {
		const shape = shapeOf(q);
		let run = byShape.get(shape);
		if (!run) {
			run = coalesce(async (keys: string[]) => {
				const requests = keys.map((k) => {
					const r = asked.get(k) as PageRequest;
					asked.delete(k);
					return r;
				});
				const pages = await read(requests);
				return new Map(keys.map((k, i) => [k, pages[i]]));
			}, MAX_BATCH);
			byShape.set(shape, run);
		}
		const key = `${sender_id}:${queryId(q)}`;
		if (!asked.has(key)) asked.set(key, { sender_id, q });
		return (await run([key])).get(key) ?? none;
	};
}

/**
 * What a detail read answers for one order of its sender: the whole row, or {@link UNCHANGED} when the row version
 * is the one the reader said it holds the answer of (./list.ts `keptOrderDetail`); null when the order is missing or
 * another sender's (§1 rule 4).
 */
export type DetailRead = DetailRowDb | typeof UNCHANGED | null;

/** A detail read's answer for a row whose version is the one the reader holds: no column but the version was read. */
export const UNCHANGED = "unchanged";

/** A detail read of one order: its sender, id and the row version whose answer the reader holds ("" none). */
export interface DetailKey {
	sender_id: number;
	order_id: number;
	kept: string;
}

/**
 * A detail read's statement selecting `columns` after each order's key (sender, version held) and version: the keys
 * joined to their orders on `order_id` and the sender (§1 rule 4).
 */
const detailReadSql = (columns: string): string =>
	`SELECT k.k_sender AS owner_id, k.k_kept AS kept_version, o.order_id, o.xmin::text AS row_version${columns}
	FROM unnest($1::bigint[], $2::bigint[], $3::text[]) AS k(k_order, k_sender, k_kept)
	JOIN intake.orders o ON o.order_id = k.k_order AND o.sender_id = k.k_sender`;

/** A detail read's row as read: its key (sender, kept version), its version and, when read whole, the rest. */
type KeyedRow<T> = T & { owner_id: string; kept_version: string | null };

/** `keys` as the statements bind them (`kept` "" as null). */
const keyValues = (keys: DetailKey[]): unknown[] => [
	keys.map((k) => k.order_id),
	keys.map((k) => k.sender_id),
	keys.map((k) => k.kept || null),
];

/**
 * The detail reads of many orders, keyed `<sender_id>:<order_id>:<kept>`: a key whose order is missing or another
 * sender's has no entry (§1 rule 4). The keys that hold no version are read whole in one statement; those that hold
 * one are read as their version only (key and `xmin`: nothing else of the row is sent or parsed) in another, in
 * parallel, and answer {@link UNCHANGED} when the version is the one held; the orders whose version moved on are
 * then read whole (docs/decisions/0131-kept-order-details.md).
 */
export async function orderRowsOf(
	db: Sequelize,
	keys: DetailKey[],
): Promise<Map<string, DetailRowDb | typeof UNCHANGED>> {
	const whole = (ks: DetailKey[]) =>
		ks.length === 0
			? []
			: select<KeyedRow<DetailRowDb>>(db, detailReadSql(`, ${DETAIL_FIELDS}`), keyValues(ks));
	const held = keys.filter((k) => k.kept !== "");
	const [rows, versions] = await Promise.all([
		whole(keys.filter((k) => k.kept === "")),
		held.length === 0 ? [] : select<KeyedRow<ListRowVersion>>(db, detailReadSql(""), keyValues(held)),
	]);
	const out = new Map<string, DetailRowDb | typeof UNCHANGED>();
	const moved: DetailKey[] = [];
	for (const v of versions) {
		if (v.row_version === v.kept_version) out.set(`${v.owner_id}:${v.order_id}:${v.kept_version}`, UNCHANGED);
		else
			moved.push({ sender_id: Number(v.owner_id), order_id: Number(v.order_id), kept: v.kept_version ?? "" });
	}
	for (const { owner_id, kept_version, ...row } of [...rows, ...(await whole(moved))])
		out.set(`${owner_id}:${row.order_id}:${kept_version ?? ""}`, row);
	return out;
}

/**
 * The sender's order row (hidden or not) for the detail (`GET /v1/orders/{id}`), {@link UNCHANGED} when its version
 * is `kept` (the version whose answer the caller holds; "" none), or null (missing and not theirs are the same).
 * Concurrent reads share statements: those that arrive while one is in flight share the next ({@link orderRowsOf},
 * lib/platform/coalesce.ts); a lone read pays nothing extra.
 */
export function orderRowReader(
	db: Sequelize,
): (sender_id: number, order_id: number, kept?: string) => Promise<DetailRead> {
	const run = coalesce(async (keys: string[]) => {
		const reads = keys.map((k): DetailKey => {
			const [sender_id, order_id, kept] = k.split(":");
			return { sender_id: Number(sender_id), order_id: Number(order_id), kept };
		});
		return orderRowsOf(db, reads);
	}, MAX_BATCH);
	return async (sender_id, order_id, kept = "") => {
		const key = `${sender_id}:${order_id}:${kept}`;
		return (await run([key])).get(key) ?? null;
	};
}
