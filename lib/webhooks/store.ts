/**
 * SQL of the webhooks service (schema `webhooks`, ./migrations.ts). Every
 * create is an INSERT guarded by a unique constraint (an event per `key`, a
 * delivery per (event, endpoint)), every state change a conditional UPDATE;
 * every statement names the account, so one account never reads or changes
 * another's rows. Times are the database's clock (`now()`).
 */
import type { Sequelize } from "sequelize";
import { exec, type StoredRow, select } from "../platform/db";

/** An `webhooks.endpoints` row (ids as numbers; secrets sealed, ./secrets.ts). */
export interface EndpointRow {
	id: number;
	sender_id: number;
	url: string;
	events: string[];
	description: string | null;
	enabled: boolean;
	disabled_reason: string | null;
	disabled_at: Date | null;
	secret: string;
	previous_secret: string | null;
	previous_secret_until: Date | null;
	failing_since: Date | null;
	created_at: Date;
	updated_at: Date;
}

/** A delivery with its event, as the log shows it. */
export interface DeliveryRow {
	id: number;
	endpoint_id: number;
	msg_id: string;
	type: string;
	order_id: number | null;
	status: "pending" | "delivered" | "failed";
	gen: number;
	attempts: number;
	status_code: number | null;
	latency_ms: number | null;
	error: string | null;
	last_attempt_at: Date | null;
	next_retry_at: Date | null;
	delivered_at: Date | null;
	created_at: Date;
}

/** An endpoint row as pg returns it (bigint ids as text). */
type StoredEndpoint = StoredRow<EndpointRow, "id" | "sender_id">;

/** A delivery row as pg returns it (bigint ids as text). */
type StoredDelivery = StoredRow<DeliveryRow, "id" | "endpoint_id" | "order_id">;

/** pg returns bigint as text: these columns become numbers. */
function endpointOf(r: StoredEndpoint): EndpointRow {
	return { ...r, id: Number(r.id), sender_id: Number(r.sender_id) };
}

/** A delivery with its ids as numbers. */
function deliveryOf(r: StoredDelivery): DeliveryRow {
	return {
		...r,
		id: Number(r.id),
		endpoint_id: Number(r.endpoint_id),
		order_id: r.order_id === null || r.order_id === undefined ? null : Number(r.order_id),
	};
}

/** Number of endpoints of an account. */
export async function countEndpoints(db: Sequelize, sender_id: number): Promise<number> {
	const r = await select<{ n: string }>(
		db,
		"SELECT count(*) AS n FROM webhooks.endpoints WHERE sender_id = $1",
		[sender_id],
	);
	return Number(r[0].n);
}

/** Inserts an enabled endpoint. */
export async function insertEndpoint(
	db: Sequelize,
	e: { sender_id: number; url: string; events: string[]; description: string | null; secret: string },
): Promise<EndpointRow> {
	const r = await select<StoredEndpoint>(
		db,
		`INSERT INTO webhooks.endpoints (sender_id, url, events, description, secret)
		 VALUES ($1, $2, $3::text[], $4, $5) RETURNING *`,
		[e.sender_id, e.url, e.events, e.description, e.secret],
	);
	return endpointOf(r[0]);
}

/** The account's endpoints, oldest first. */
export async function listEndpoints(db: Sequelize, sender_id: number): Promise<EndpointRow[]> {
	const r = await select<StoredEndpoint>(
		db,
		"SELECT * FROM webhooks.endpoints WHERE sender_id = $1 ORDER BY id",
		[sender_id],
	);
	return r.map(endpointOf);
}

/** One endpoint of the account, or null (missing and another account's are the same). */
export async function getEndpoint(db: Sequelize, sender_id: number, id: number): Promise<EndpointRow | null> {
	const r = await select<StoredEndpoint>(
		db,
		"SELECT * FROM webhooks.endpoints WHERE sender_id = $1 AND id = $2",
		[sender_id, id],
	);
	return r.length ? endpointOf(r[0]) : null;
}

/** The fields PATCH may change (undefined: unchanged). */
export interface EndpointPatch {
	url?: string;
	events?: string[];
	description?: string | null;
	enabled?: boolean;
}

/**
 * Applies a PATCH; re-enabling clears the disabled reason and the failure
 * streak; disabling records `disabled by the merchant`. Null when not the
 * account's.
 */
export async function updateEndpoint(
	db: Sequelize,
	sender_id: number,
	id: number,
	p: EndpointPatch,
): Promise<EndpointRow | null> {
	const r = await select<StoredEndpoint>(
		db,
		`UPDATE webhooks.endpoints SET
		   url = COALESCE($3, url),
		   events = COALESCE($4::text[], events),
		   description = CASE WHEN $5 THEN $6 ELSE description END,
		   enabled = COALESCE($7, enabled),
		   disabled_reason = CASE WHEN $7 IS TRUE THEN NULL WHEN $7 IS FALSE AND enabled THEN 'disabled by the merchant' ELSE disabled_reason END,
		   disabled_at = CASE WHEN $7 IS TRUE THEN NULL WHEN $7 IS FALSE AND enabled THEN now() ELSE disabled_at END,
		   failing_since = CASE WHEN $7 IS TRUE THEN NULL ELSE failing_since END,
		   updated_at = now()
		 WHERE sender_id = $1 AND id = $2 RETURNING *`,
		[
			sender_id,
			id,
			p.url ?? null,
			p.events ?? null,
			p.description !== undefined,
			p.description ?? null,
			p.enabled ?? null,
		],
	);
	return r.length ? endpointOf(r[0]) : null;
}

/** Deletes an endpoint (its deliveries with it). False when not the account's. */
export async function deleteEndpoint(db: Sequelize, sender_id: number, id: number): Promise<boolean> {
	const r = await exec(db, "DELETE FROM webhooks.endpoints WHERE sender_id = $1 AND id = $2", [
		sender_id,
		id,
	]);
	return r.count > 0;
}

/**
 * Rotation: the current secret becomes the previous one, valid for
 * `previousH` hours more; `sealed` the new current one. Null when not the account's.
 */
export async function rotateSecret(
	db: Sequelize,
	sender_id: number,
	id: number,
	sealed: string,
	previousH: number,
): Promise<EndpointRow | null> {
	const r = await select<StoredEndpoint>(
		db,
		`UPDATE webhooks.endpoints SET previous_secret = secret,
		   previous_secret_until = now() + make_interval(secs => $4::double precision * 3600),
		   secret = $3, updated_at = now()
		 WHERE sender_id = $1 AND id = $2 RETURNING *`,
		[sender_id, id, sealed, previousH],
	);
	return r.length ? endpointOf(r[0]) : null;
}

/** An event as the fan-out stores it. */
export interface IncomingEvent {
	key: string;
	msg_id: string;
	sender_id: number;
	type: string;
	order_id: number | null;
	/** ordering group (status events: `shp:<attempt id>`), else null */
	order_key: string | null;
	seq: number | null;
	occurred_at: string;
	data: Record<string, unknown>;
}

/** A delivery to enqueue: its id and job generation. */
export interface NewDelivery {
	id: number;
	gen: number;
}

/**
 * The accounts among `sender_ids` that have at least one enabled endpoint
 * (index `endpoints_sender`). The fan-out takes only their events: an account
 * without webhooks costs no statement (a bulk import's 85,000 `order.created`
 * write nothing here).
 */
export async function sendersWithEndpoints(db: Sequelize, sender_ids: number[]): Promise<Set<number>> {
	if (!sender_ids.length) return new Set();
	const r = await select<{ sender_id: string }>(
		db,
		"SELECT DISTINCT sender_id FROM webhooks.endpoints WHERE enabled AND sender_id = ANY($1::bigint[])",
		[sender_ids],
	);
	return new Set(r.map((x) => Number(x.sender_id)));
}

/**
 * Stores each event once (`key` unique) and, in the same statement, one
 * delivery per enabled endpoint of the account subscribed to its type; an
 * event no endpoint of its account is subscribed to is not stored, only its
 * order reference (callers pass only the events of accounts that have an
 * enabled endpoint: {@link sendersWithEndpoints}).
 * `order_no` (and a status event's `courier`) is added to `data` from
 * `webhooks.order_refs` when missing; an `order.created` records its order's
 * number there, an `order.booked` its courier. A redelivered event (same
 * key) writes nothing and answers no delivery. Events are taken in order,
 * one statement per run of consecutive events that name distinct orders (a
 * bulk import's 200 order.created events: one statement, not 200), so an
 * event still sees what an earlier event of the same order stored (an
 * `order.booked` after its `order.created` gets the order number). Answers
 * the new deliveries.
 * @throws on a database failure (nothing of the failed run is stored)
 */
export async function fanOutMany(db: Sequelize, events: IncomingEvent[]): Promise<NewDelivery[]> {
	const out: NewDelivery[] = [];
	let run: IncomingEvent[] = [];
	const orders = new Set<number>();
	const flush = async () => {
		if (run.length) out.push(...(await fanOutRun(db, run)));
		run = [];
		orders.clear();
	};
	for (const e of events) {
		if (e.order_id !== null && orders.has(e.order_id)) await flush();
		if (e.order_id !== null) orders.add(e.order_id);
		run.push(e);
	}
	await flush();
	return out;
}

/** One statement storing `run` (no two events of the same order) and its deliveries. */
async function fanOutRun(db: Sequelize, run: IncomingEvent[]): Promise<NewDelivery[]> {
	const r = await select<{ id: string; gen: number }>(
		db,
		`WITH x AS (
		   SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(i integer, key text, msg_id text, sender_id bigint,
		     type text, order_id bigint, order_key text, seq integer, occurred_at timestamptz, data jsonb)),
		 ref AS (
		   INSERT INTO webhooks.order_refs (order_id, sender_id, order_no, courier)
		   SELECT x.order_id, x.sender_id, x.data->>'order_no', CASE WHEN x.type = 'order.booked' THEN x.data->>'courier' END
		   FROM x WHERE x.type IN ('order.created', 'order.booked') AND x.order_id IS NOT NULL
		   ON CONFLICT (order_id) DO UPDATE SET order_no = COALESCE(webhooks.order_refs.order_no, EXCLUDED.order_no),
		     courier = COALESCE(EXCLUDED.courier, webhooks.order_refs.courier)),
		 ev AS (
		   INSERT INTO webhooks.events (key, msg_id, sender_id, type, order_id, order_key, seq, occurred_at, data)
		   SELECT x.key, x.msg_id, x.sender_id, x.type, x.order_id, x.order_key, x.seq, x.occurred_at,
		     x.data
		       || CASE WHEN x.data->>'order_no' IS NULL AND o.order_no IS NOT NULL
		               THEN jsonb_build_object('order_no', o.order_no) ELSE '{}'::jsonb END
		       || CASE WHEN x.type = 'shipment.status_changed' AND x.data->>'courier' IS NULL AND o.courier IS NOT NULL
		               THEN jsonb_build_object('courier', o.courier) ELSE '{}'::jsonb END
		   FROM x LEFT JOIN webhooks.order_refs o ON o.order_id = x.order_id AND o.sender_id = x.sender_id
		   WHERE EXISTS (SELECT 1 FROM webhooks.endpoints ep
		                 WHERE ep.sender_id = x.sender_id AND ep.enabled AND x.type = ANY (ep.events))
		   ORDER BY x.i
		   ON CONFLICT (key) DO NOTHING
		   RETURNING id, sender_id, type, order_key, seq)
		 INSERT INTO webhooks.deliveries (event_id, endpoint_id, sender_id, order_key, seq)
		 SELECT ev.id, ep.id, ep.sender_id, ev.order_key, ev.seq
		 FROM ev JOIN webhooks.endpoints ep ON ep.sender_id = ev.sender_id AND ep.enabled AND ev.type = ANY (ep.events)
		 ORDER BY ev.id, ep.id
		 ON CONFLICT (event_id, endpoint_id) DO NOTHING
		 RETURNING id, gen`,
		[JSON.stringify(run.map((e, i) => ({ i, ...e })))],
	);
	return r.map((x) => ({ id: Number(x.id), gen: Number(x.gen) }));
}

/** Stores a `webhook.test` event and its one delivery to `endpoint_id`. */
export async function insertTestDelivery(
	db: Sequelize,
	e: IncomingEvent,
	endpoint_id: number,
): Promise<DeliveryRow> {
	const r = await select<StoredDelivery>(
		db,
		`WITH ev AS (
		   INSERT INTO webhooks.events (key, msg_id, sender_id, type, occurred_at, data)
		   VALUES ($1, $2, $3, $4, $5::timestamptz, $6::jsonb) RETURNING id, msg_id, type, order_id),
		 d AS (
		   INSERT INTO webhooks.deliveries (event_id, endpoint_id, sender_id)
		   SELECT ev.id, $7, $3 FROM ev RETURNING *)
		 SELECT d.*, ev.msg_id, ev.type, ev.order_id FROM d, ev`,
		[e.key, e.msg_id, e.sender_id, e.type, e.occurred_at, JSON.stringify(e.data), endpoint_id],
	);
	return deliveryOf(r[0]);
}

/** Columns of the log. */
const LOG_COLUMNS = `d.id, d.endpoint_id, e.msg_id, e.type, e.order_id, d.status, d.gen, d.attempts, d.status_code,
	d.latency_ms, d.error, d.last_attempt_at, d.next_retry_at, d.delivered_at, d.created_at`;

/** A page of an endpoint's deliveries, newest first, ids below `before_id` (when given). */
export async function listDeliveries(
	db: Sequelize,
	f: {
		sender_id: number;
		endpoint_id: number;
		before_id: number | null;
		take: number;
		status: string | null;
	},
): Promise<DeliveryRow[]> {
	const r = await select<StoredDelivery>(
		db,
		`SELECT ${LOG_COLUMNS}
		 FROM webhooks.deliveries d JOIN webhooks.events e ON e.id = d.event_id
		 WHERE d.endpoint_id = $1 AND d.sender_id = $2 AND ($3::bigint IS NULL OR d.id < $3) AND ($5::text IS NULL OR d.status = $5)
		 ORDER BY d.id DESC LIMIT $4`,
		[f.endpoint_id, f.sender_id, f.before_id, f.take, f.status],
	);
	return r.map(deliveryOf);
}

/**
 * Redelivery: the delivery pending again under a new job generation, its
 * attempts counted afresh (same event, same `webhook-id`). Null when not the
 * account's endpoint's.
 */
export async function resetForRedelivery(
	db: Sequelize,
	sender_id: number,
	endpoint_id: number,
	id: number,
): Promise<DeliveryRow | null> {
	const r = await select<StoredDelivery>(
		db,
		`WITH d AS (
		   UPDATE webhooks.deliveries SET status = 'pending', gen = gen + 1, attempts = 0, next_retry_at = NULL,
		     first_attempt_at = NULL, swept_at = NULL, updated_at = now()
		   WHERE id = $1 AND endpoint_id = $2 AND sender_id = $3 RETURNING *)
		 SELECT d.*, e.msg_id, e.type, e.order_id FROM d JOIN webhooks.events e ON e.id = d.event_id`,
		[id, endpoint_id, sender_id],
	);
	return r.length ? deliveryOf(r[0]) : null;
}

/** Everything one attempt needs, read in one statement. */
export interface AttemptContext {
	id: number;
	gen: number;
	status: "pending" | "delivered" | "failed";
	attempts: number;
	age_ms: number;
	event_id: number;
	msg_id: string;
	type: string;
	sender_id: number;
	order_id: number | null;
	occurred_at: Date;
	data: Record<string, unknown>;
	endpoint_id: number;
	url: string;
	enabled: boolean;
	secret: string;
	/** the previous secret while it still signs, else null */
	previous_secret: string | null;
	/** an earlier delivery of the same shipment to this endpoint is still pending */
	blocked: boolean;
	/** the shipment's previous status event has not arrived yet (within the hold) */
	gap: boolean;
}

/** An attempt's context as pg returns it (bigint ids as text). */
type StoredAttempt = StoredRow<
	AttemptContext,
	"id" | "event_id" | "sender_id" | "endpoint_id" | "order_id" | "age_ms"
>;

/**
 * Reads deliveries `ids` with their events and endpoints, and the ordering
 * facts (see {@link AttemptContext}), in one statement; a delivery that no
 * longer exists (endpoint deleted) is absent from the map.
 */
export async function attemptContexts(
	db: Sequelize,
	ids: number[],
	holdMs: number,
): Promise<Map<number, AttemptContext>> {
	const r = await select<StoredAttempt>(
		db,
		`SELECT d.id, d.gen, d.status, d.attempts, (extract(epoch FROM now() - d.created_at) * 1000)::float8 AS age_ms,
		   e.id AS event_id, e.msg_id, e.type, e.sender_id, e.order_id, e.occurred_at, e.data,
		   ep.id AS endpoint_id, ep.url, ep.enabled, ep.secret,
		   CASE WHEN ep.previous_secret_until > now() THEN ep.previous_secret END AS previous_secret,
		   (d.order_key IS NOT NULL AND EXISTS (
		     SELECT 1 FROM webhooks.deliveries p
		     WHERE p.endpoint_id = d.endpoint_id AND p.order_key = d.order_key AND p.seq < d.seq AND p.status = 'pending'
		   )) AS blocked,
		   (d.order_key IS NOT NULL AND d.seq > 3 AND e.created_at > now() - make_interval(secs => $2::double precision / 1000)
		     AND NOT EXISTS (SELECT 1 FROM webhooks.events x WHERE x.order_key = d.order_key AND x.seq = d.seq - 1)
		   ) AS gap
		 FROM webhooks.deliveries d
		 JOIN webhooks.events e ON e.id = d.event_id
		 JOIN webhooks.endpoints ep ON ep.id = d.endpoint_id
		 WHERE d.id = ANY ($1::bigint[])`,
		[ids, holdMs],
	);
	const out = new Map<number, AttemptContext>();
	for (const x of r) {
		const c: AttemptContext = {
			...x,
			id: Number(x.id),
			event_id: Number(x.event_id),
			sender_id: Number(x.sender_id),
			endpoint_id: Number(x.endpoint_id),
			order_id: x.order_id === null ? null : Number(x.order_id),
			age_ms: Number(x.age_ms),
		};
		out.set(c.id, c);
	}
	return out;
}

/** A successful attempt, to record with others in one statement ({@link recordSuccesses}). */
export interface Success {
	id: number;
	gen: number;
	status_code: number;
	latency_ms: number;
	response: string | null;
}

/**
 * Records successful attempts in one statement: each delivery (same
 * generation, still pending) `delivered`, and the failure streak of their
 * endpoints ended.
 */
export async function recordSuccesses(db: Sequelize, ok: Success[]): Promise<void> {
	if (!ok.length) return;
	await exec(
		db,
		`WITH x AS (
		   SELECT * FROM unnest($1::bigint[], $2::integer[], $3::integer[], $4::integer[], $5::text[])
		     AS x(id, gen, code, latency, response)),
		 d AS (
		   UPDATE webhooks.deliveries d SET status = 'delivered', attempts = d.attempts + 1, status_code = x.code,
		     latency_ms = x.latency, error = NULL, response = x.response,
		     first_attempt_at = COALESCE(d.first_attempt_at, now()), last_attempt_at = now(), next_retry_at = NULL,
		     delivered_at = now(), updated_at = now()
		   FROM x WHERE d.id = x.id AND d.gen = x.gen AND d.status = 'pending'
		   RETURNING d.endpoint_id)
		 UPDATE webhooks.endpoints ep SET failing_since = NULL
		 WHERE ep.id IN (SELECT endpoint_id FROM d) AND ep.failing_since IS NOT NULL`,
		[
			ok.map((o) => o.id),
			ok.map((o) => o.gen),
			ok.map((o) => o.status_code),
			ok.map((o) => o.latency_ms),
			ok.map((o) => o.response),
		],
	);
}

/**
 * Fills what an event's `data` misses of its order, learnt from intake at send
 * time: `order_no` (null when intake has no such order) and, when given, the
 * `courier` (a status event of an order booked before its account had an
 * endpoint). Members already present are kept.
 */
export async function setOrderRef(
	db: Sequelize,
	event_id: number,
	ref: { order_no: string | null; courier?: string | null },
): Promise<void> {
	await exec(
		db,
		`UPDATE webhooks.events SET data = data
		   || CASE WHEN data ? 'order_no' THEN '{}'::jsonb ELSE jsonb_build_object('order_no', $2::text) END
		   || CASE WHEN $3::text IS NULL OR data ? 'courier' THEN '{}'::jsonb ELSE jsonb_build_object('courier', $3::text) END
		 WHERE id = $1`,
		[event_id, ref.order_no, ref.courier ?? null],
	);
}

/** The outcome of one attempt, to record. */
export interface AttemptRecord {
	id: number;
	gen: number;
	endpoint_id: number;
	ok: boolean;
	/** no retry follows (success, or the last attempt, or given up) */
	final: boolean;
	status_code: number | null;
	latency_ms: number;
	error: string | null;
	response: string | null;
	/** ms until the retry (a failed, non-final attempt) */
	retry_in_ms: number | null;
}

/**
 * Records an attempt on the delivery (same generation only) and the
 * endpoint's failure streak: a success ends it (`failing_since` null), a
 * failure starts it. A final failure disables the endpoint, with the reason,
 * when the streak began no later than this delivery's first attempt (every
 * attempt to the endpoint failed for the whole retry schedule). Answers
 * whether the endpoint was disabled now.
 */
export async function recordAttempt(db: Sequelize, a: AttemptRecord): Promise<{ disabled: boolean }> {
	const status = a.ok ? "delivered" : a.final ? "failed" : "pending";
	const r = await select<{ disabled: boolean | null }>(
		db,
		`WITH d AS (
		   UPDATE webhooks.deliveries SET status = $3, attempts = attempts + 1, status_code = $4, latency_ms = $5,
		     error = $6, response = $7, first_attempt_at = COALESCE(first_attempt_at, now()), last_attempt_at = now(),
		     next_retry_at = CASE WHEN $8::double precision IS NULL THEN NULL ELSE now() + make_interval(secs => $8::double precision / 1000) END,
		     delivered_at = CASE WHEN $3 = 'delivered' THEN now() END, updated_at = now()
		   WHERE id = $1 AND gen = $2 AND status = 'pending'
		   RETURNING endpoint_id, first_attempt_at),
		 ok AS (
		   UPDATE webhooks.endpoints ep SET failing_since = NULL
		   FROM d WHERE $3 = 'delivered' AND ep.id = d.endpoint_id AND ep.failing_since IS NOT NULL RETURNING ep.id),
		 bad AS (
		   UPDATE webhooks.endpoints ep SET failing_since = now()
		   FROM d WHERE $3 <> 'delivered' AND ep.id = d.endpoint_id AND ep.failing_since IS NULL RETURNING ep.id),
		 off AS (
		   UPDATE webhooks.endpoints ep SET enabled = false, disabled_at = now(), updated_at = now(),
		     disabled_reason = 'every delivery failed since ' || to_char(ep.failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
		       || ' (the whole retry schedule of a delivery); last error: ' || coalesce($6, 'unknown')
		   FROM d WHERE $3 = 'failed' AND ep.id = d.endpoint_id AND ep.enabled AND ep.failing_since IS NOT NULL
		     AND ep.failing_since <= d.first_attempt_at
		   RETURNING ep.id)
		 SELECT EXISTS (SELECT 1 FROM off) AS disabled`,
		[a.id, a.gen, status, a.status_code, a.latency_ms, a.error, a.response, a.retry_in_ms],
	);
	return { disabled: !!r[0]?.disabled };
}

/** Ends a pending delivery without an attempt (endpoint disabled, too old). */
export async function giveUp(db: Sequelize, id: number, gen: number, error: string): Promise<void> {
	await exec(
		db,
		`UPDATE webhooks.deliveries SET status = 'failed', error = $3, next_retry_at = NULL, updated_at = now()
		 WHERE id = $1 AND gen = $2 AND status = 'pending'`,
		[id, gen, error],
	);
}

/**
 * Sweeper candidates: pending deliveries older than `olderMs` not looked at
 * for `olderMs` (marked now), at most `limit`.
 */
export async function sweepCandidates(db: Sequelize, olderMs: number, limit: number): Promise<NewDelivery[]> {
	const r = await select<{ id: string; gen: number }>(
		db,
		`UPDATE webhooks.deliveries SET swept_at = now()
		 WHERE id IN (
		   SELECT id FROM webhooks.deliveries
		   WHERE status = 'pending' AND created_at < now() - make_interval(secs => $1::double precision / 1000)
		     AND (swept_at IS NULL OR swept_at < now() - make_interval(secs => $1::double precision / 1000))
		   ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
		 RETURNING id, gen`,
		[olderMs, limit],
	);
	return r.map((x) => ({ id: Number(x.id), gen: Number(x.gen) }));
}
