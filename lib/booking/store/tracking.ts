/**
 * SQL of the tracking pipeline (issue 7; spec §2.6, §3; lib/booking/tracking.ts):
 * courier scans (`booking.scans`), their fold into the attempt's
 * `shipment_status` with the order updates and lane outcomes in the outbox,
 * the poller's lease of due shipments, and the tracking read. See ./index.ts.
 *
 * Every batch of scans is ONE transaction ({@link ingestScans}): the attempts
 * of its AWBs are locked (ordered by id, so concurrent batches never
 * deadlock), its scans inserted with the dedupe of `scans_dedupe`, the new
 * ones folded (../tracking-fold.ts), and the changed attempts, their order
 * updates (seq = `order_seq + 1`), status events and lane outcomes written
 * set-based.
 *
 * Manifests (issue 8; spec §3 manifest row): `booking.markManifested` folds a
 * synthetic scan per AWB (status `manifested`, courier code `MANIFEST`,
 * source `manifest`) through the same transaction, limited to the sender's
 * booked shipments.
 */
import type { Sequelize, Transaction } from "sequelize";
import type { BookingUpdate, LaneOutcomeParams, ShipmentStatusChanged } from "../../contracts";
import type { TrackingScan } from "../../couriers";
import { exec, numbersIn, type StoredRow, select } from "../../platform/db";
import {
	isShipmentStatus,
	isTerminal,
	type ShipmentStatus,
	statusNameOf,
} from "../../shared/shipment-status";
import { type FoldResult, type FoldTarget, foldScans, laneOutcomeOf, type NewScan } from "../tracking-fold";

/** Where scans came from: pushed to our webhook, polled from the courier, or a handover manifest (documents). */
export type ScanSource = "push" | "poll" | "manifest";

/** Scans of one AWB as an adapter reports them (`trackMany`, `parsePush`). */
export interface AwbScans {
	awb_number: string;
	scans: TrackingScan[];
}

/** Scans of one AWB and how they reached us. */
export interface SourcedScans extends AwbScans {
	source: ScanSource;
	/** only the shipment of this sender, and only while booked (manifests; else any sender's, booked or cancelled) */
	sender_id?: number;
	/** the manifest the scans come from (carried by the status event of a change to `manifested`) */
	manifest_no?: string;
}

/** A status change committed by {@link ingestScans} (for `shipment.status_changed`). */
export interface StatusChange {
	attempt_id: number;
	order_id: number;
	sender_id: number;
	awb_number: string;
	logistic_id: number;
	status: ShipmentStatus;
	/** when the status was reached (the scan's time) */
	status_at: Date;
	/** the order update's seq (the attempt's new `order_seq`): later changes of a shipment have higher ones */
	seq: number;
	/** the manifest that moved the shipment to `manifested` */
	manifest_no?: string;
	/** `undelivered` only: the courier's words of the scan that reached it (NDR reason; issue 9) */
	courier_status?: string;
	remarks?: string | null;
}

/**
 * The `shipment.status_changed` payload of a change (§6; lib/contracts/booking.ts
 * `ShipmentStatusChanged`): `event_id` `<attempt_id>-<seq>`, the same on every
 * redelivery of this change.
 */
export function statusEventOf(c: StatusChange): ShipmentStatusChanged {
	return {
		event_id: `${c.attempt_id}-${c.seq}`,
		order_id: c.order_id,
		sender_id: c.sender_id,
		awb_number: c.awb_number,
		logistic_id: c.logistic_id,
		status: c.status,
		status_name: statusNameOf(c.status),
		status_at: c.status_at.toISOString(),
		seq: c.seq,
		...(c.manifest_no ? { manifest_no: c.manifest_no } : {}),
		...(c.courier_status !== undefined
			? { courier_status: c.courier_status, remarks: c.remarks ?? null }
			: {}),
	};
}

/** A folded undelivered scan (for `shipment.undelivered`). */
export interface UndeliveredScan {
	order_id: number;
	sender_id: number;
	awb_number: string;
	logistic_id: number;
	reason: string;
	at: Date;
}

/** What one batch did. */
export interface IngestResult {
	/** scans of known shipments in the batch (re-sent ones included) */
	accepted: number;
	/** `accepted` per item of the batch, in its order */
	acceptedPerItem: number[];
	/** scans stored (new: not seen before) */
	stored: number;
	/** scans of AWBs we hold no booked or cancelled shipment for (ignored) */
	unknown: number;
	/** scans dropped as malformed (status not normalized, time unreadable) */
	invalid: number;
	changes: StatusChange[];
	undelivered: UndeliveredScan[];
	/** outbox rows committed (order updates, status events, lane outcomes), to relay */
	outbox: number[];
}

/** The ids pg may answer as strings on a locked attempt row. */
const LOCKED_NUMBERS = ["attempt_id", "order_id", "sender_id", "logistic_id", "order_seq"] as const;

/** A locked attempt as pg returns it ({@link FoldTarget} with ids possibly strings). */
type LockedRow = StoredRow<FoldTarget, (typeof LOCKED_NUMBERS)[number]>;

/** One scan row to insert (parallel arrays for unnest). */
interface ScanRow {
	attempt_id: number;
	awb_number: string;
	logistic_id: number;
	status: ShipmentStatus;
	courier_code: string;
	courier_status: string;
	location: string;
	at: Date;
	remarks: string | null;
	source: ScanSource;
}

/** A scan time as a Date, or null when unreadable. */
function timeOf(at: unknown): Date | null {
	if (typeof at !== "string" && !(at instanceof Date)) return null;
	const d = new Date(at);
	return Number.isNaN(d.getTime()) ? null : d;
}

/** Text of at most `max` characters (couriers' strings are bounded before they are stored). */
function clip(v: unknown, max: number): string {
	return String(v ?? "").slice(0, max);
}

/** Locks the booked / cancelled attempts holding `awbs` (ordered by id: concurrent batches never deadlock), by AWB. */
async function lockAttempts(db: Sequelize, awbs: string[], t: Transaction): Promise<Map<string, FoldTarget>> {
	const locked = await select<LockedRow>(
		db,
		`SELECT attempt_id, order_id, sender_id, logistic_id, awb_number, state, shipment_status, shipment_status_at,
		        booked_at, picked_up_at, order_seq, from_pin, to_pin
		 FROM booking.attempts
		 WHERE awb_number = ANY($1::text[]) AND state IN ('booked', 'cancelled')
		 ORDER BY attempt_id
		 FOR UPDATE`,
		[awbs],
		t,
	);
	const byAwb = new Map<string, FoldTarget>();
	for (const r of locked)
		byAwb.set(r.awb_number, numbersIn<FoldTarget, (typeof LOCKED_NUMBERS)[number]>(r, LOCKED_NUMBERS));
	return byAwb;
}

/** The scan rows of a batch to insert, and the manifest each attempt's scans came from. */
interface BatchScans {
	rows: ScanRow[];
	/** attempt id → the manifest (`manifest_no`) its item names */
	manifestOf: Map<number, string>;
}

/**
 * The scans of `batch` on the locked attempts as rows to insert (bounded
 * texts). Counts into `out`: scans of an unknown AWB (or of a manifest item
 * whose attempt is not the sender's booked one) as `unknown`, malformed ones
 * (time unreadable, status not normalized) as `invalid`, the rest as
 * `accepted` (and per item).
 */
function scanRowsOf(batch: SourcedScans[], byAwb: Map<string, FoldTarget>, out: IngestResult): BatchScans {
	const rows: ScanRow[] = [];
	const manifestOf = new Map<number, string>();
	for (const [i, b] of batch.entries()) {
		let a = byAwb.get(String(b.awb_number ?? "").trim());
		if (a && b.sender_id !== undefined && (a.sender_id !== b.sender_id || a.state !== "booked"))
			a = undefined;
		const scans = Array.isArray(b.scans) ? b.scans : [];
		if (a && b.manifest_no) manifestOf.set(a.attempt_id, b.manifest_no);
		if (!a) {
			out.unknown += scans.length;
			continue;
		}
		for (const s of scans) {
			const at = timeOf(s?.at);
			if (!at || !isShipmentStatus(s?.status)) {
				out.invalid++;
				continue;
			}
			out.accepted++;
			out.acceptedPerItem[i]++;
			rows.push({
				attempt_id: a.attempt_id,
				awb_number: a.awb_number,
				logistic_id: a.logistic_id,
				status: s.status,
				courier_code: clip(s.courier_code, 100),
				courier_status: clip(s.courier_status, 500),
				location: clip(s.location, 255),
				at,
				remarks: s.remarks ? clip(s.remarks, 1000) : null,
				source: b.source,
			});
		}
	}
	return { rows, manifestOf };
}

/**
 * Inserts the scan rows in one statement (ON CONFLICT ON `scans_dedupe` DO
 * NOTHING: couriers re-send scans) and answers the NEW ones by attempt id.
 */
async function insertScans(db: Sequelize, rows: ScanRow[], t: Transaction): Promise<Map<number, NewScan[]>> {
	const col = <T>(f: (r: ScanRow) => T) => rows.map(f);
	const inserted = await exec<{
		attempt_id: string;
		status: ShipmentStatus;
		at: Date;
		courier_status: string;
		remarks: string | null;
	}>(
		db,
		`INSERT INTO booking.scans (attempt_id, awb_number, logistic_id, status, courier_code, courier_status, location, at, remarks, source)
		 SELECT * FROM unnest($1::bigint[], $2::text[], $3::integer[], $4::text[], $5::text[], $6::text[], $7::text[],
		   $8::timestamptz[], $9::text[], $10::text[])
		 ON CONFLICT ON CONSTRAINT scans_dedupe DO NOTHING
		 RETURNING attempt_id, status, at, courier_status, remarks`,
		[
			col((r) => r.attempt_id),
			col((r) => r.awb_number),
			col((r) => r.logistic_id),
			col((r) => r.status),
			col((r) => r.courier_code),
			col((r) => r.courier_status),
			col((r) => r.location),
			col((r) => r.at),
			col((r) => r.remarks),
			col((r) => r.source),
		],
		t,
	);
	const fresh = new Map<number, NewScan[]>();
	for (const r of inserted.rows) {
		const id = Number(r.attempt_id);
		const list = fresh.get(id) ?? [];
		list.push({ status: r.status, at: r.at, courier_status: r.courier_status, remarks: r.remarks });
		fresh.set(id, list);
	}
	return fresh;
}

/** A booked attempt whose tracking a fold changed. */
interface Folded {
	a: FoldTarget;
	f: FoldResult;
}

/** Folds each attempt's new scans over its status; answers the booked attempts whose tracking changed (cancelled ones are terminal). */
function foldAttempts(byAwb: Map<string, FoldTarget>, fresh: Map<number, NewScan[]>): Folded[] {
	const folded: Folded[] = [];
	for (const a of byAwb.values()) {
		const scans = fresh.get(a.attempt_id);
		if (!scans) continue;
		const f = foldScans(a, scans);
		if (f.dirty && a.state === "booked") folded.push({ a, f });
	}
	return folded;
}

/** The outbox rows of a batch, in order (parallel arrays for unnest). */
interface OutboxRows {
	kinds: string[];
	/** JSON text of each row's payload */
	payloads: string[];
}

/**
 * The status change a fold reached (`status_at` the scan time, seq
 * `order_seq + 1`), with the manifest that moved it to `manifested` and the
 * NDR reason of an `undelivered` one.
 */
function statusChangeOf(
	{ a, f }: Folded,
	status: ShipmentStatus,
	reached_at: Date,
	manifestOf: Map<number, string>,
): StatusChange {
	const manifest_no = status === "manifested" ? manifestOf.get(a.attempt_id) : undefined;
	// the newest undelivered scan folded is the one that reached `undelivered` (NDR reason; issue 9)
	const ndr = status === "undelivered" ? f.undelivered[f.undelivered.length - 1] : undefined;
	return {
		attempt_id: a.attempt_id,
		order_id: a.order_id,
		sender_id: a.sender_id,
		awb_number: a.awb_number,
		logistic_id: a.logistic_id,
		status,
		status_at: reached_at,
		seq: a.order_seq + 1,
		...(manifest_no ? { manifest_no } : {}),
		...(ndr ? { courier_status: ndr.courier_status, remarks: ndr.remarks } : {}),
	};
}

/**
 * Collects into `out` the folded undelivered scans and the status changes,
 * and answers the outbox rows: per change its `order_update` (state
 * `booked`; AWB and courier omitted so intake keeps them) and `status_event`
 * ({@link statusEventOf}), and its `lane_outcome` when delivered /
 * rto_delivered.
 */
function outboxRowsOf(folded: Folded[], manifestOf: Map<number, string>, out: IngestResult): OutboxRows {
	const kinds: string[] = [];
	const payloads: string[] = [];
	for (const x of folded) {
		const { a, f } = x;
		for (const u of f.undelivered) {
			out.undelivered.push({
				order_id: a.order_id,
				sender_id: a.sender_id,
				awb_number: a.awb_number,
				logistic_id: a.logistic_id,
				reason: u.remarks || u.courier_status || "undelivered",
				at: u.at,
			});
		}
		if (!f.changed || !f.reached_at) continue;
		// the fold only moves to statuses of scans: a changed status is a ShipmentStatus
		const status = f.status as ShipmentStatus;
		const change = statusChangeOf(x, status, f.reached_at, manifestOf);
		out.changes.push(change);
		const update: BookingUpdate = {
			order_id: a.order_id,
			sender_id: a.sender_id,
			attempt_id: a.attempt_id,
			seq: a.order_seq + 1,
			state: "booked",
			status,
			status_at: f.reached_at.toISOString(),
		};
		kinds.push("order_update", "status_event");
		payloads.push(JSON.stringify(update), JSON.stringify(statusEventOf(change)));
		const lane: LaneOutcomeParams | null = laneOutcomeOf(a, f);
		if (lane) {
			kinds.push("lane_outcome");
			payloads.push(JSON.stringify(lane));
		}
	}
	return { kinds, payloads };
}

/**
 * Updates the changed attempts (UPDATE … FROM unnest; a terminal status
 * clears `next_track_at`) and inserts the outbox rows, in one statement (a
 * data-modifying CTE always runs). Answers the outbox ids, ascending.
 */
async function writeFolded(
	db: Sequelize,
	folded: Folded[],
	outbox: OutboxRows,
	t: Transaction,
): Promise<number[]> {
	const ids = await exec<{ id: string }>(
		db,
		`WITH u AS (
		   UPDATE booking.attempts a
		   SET shipment_status = u.status, shipment_status_at = u.at, picked_up_at = u.picked, order_seq = u.seq,
		       next_track_at = CASE WHEN u.terminal THEN NULL ELSE a.next_track_at END, updated_at = now()
		   FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::integer[], $6::boolean[])
		     AS u(id, status, at, picked, seq, terminal)
		   WHERE a.attempt_id = u.id
		   RETURNING a.attempt_id)
		 INSERT INTO booking.outbox (kind, payload)
		 SELECT r.kind, r.payload FROM unnest($7::text[], $8::jsonb[]) WITH ORDINALITY AS r(kind, payload, n)
		 ORDER BY r.n
		 RETURNING id`,
		[
			folded.map((x) => x.a.attempt_id),
			folded.map((x) => x.f.status),
			folded.map((x) => x.f.status_at),
			folded.map((x) => x.f.picked_up_at),
			folded.map((x) => (x.f.changed ? x.a.order_seq + 1 : x.a.order_seq)),
			folded.map((x) => isTerminal(x.f.status)),
			outbox.kinds,
			outbox.payloads,
		],
		t,
	);
	return ids.rows.map((r) => Number(r.id)).sort((x, y) => x - y);
}

/**
 * In ONE transaction: locks the booked / cancelled attempts holding the AWBs
 * of `batch` (any courier; unknown AWBs are counted and ignored; an AWB may
 * come in several items, e.g. several pushes folded together), stores the
 * scans (ON CONFLICT DO NOTHING on (awb_number, at, courier_code, status):
 * couriers re-send scans; `source` per item), folds each attempt's NEW scans
 * over its status (../tracking-fold.ts) and, in one statement, updates the
 * attempts whose tracking changed (UPDATE … FROM unnest) and writes per
 * status change the `order_update` (state `booked`, the new status,
 * `status_at` the scan time, seq `order_seq + 1`; AWB and courier omitted so
 * intake keeps them), its `status_event` (the durable `shipment.status_changed`,
 * {@link statusEventOf}) and per delivered / rto_delivered the `lane_outcome`. A
 * cancelled booking is terminal: its scans are stored, nothing changes. An
 * item with `sender_id` (a manifest) applies only to that sender's booked
 * shipment: otherwise its scans count as unknown and are not stored. A
 * terminal status stops the polling (`next_track_at` null). Five round trips
 * whatever the batch's size: BEGIN, lock, insert, update with its outbox
 * rows, COMMIT.
 */
export async function ingestScans(db: Sequelize, batch: SourcedScans[]): Promise<IngestResult> {
	const out: IngestResult = {
		accepted: 0,
		acceptedPerItem: batch.map(() => 0),
		stored: 0,
		unknown: 0,
		invalid: 0,
		changes: [],
		undelivered: [],
		outbox: [],
	};
	const awbs = [...new Set(batch.map((b) => String(b.awb_number ?? "").trim()).filter(Boolean))];
	if (!awbs.length) {
		out.unknown = batch.reduce((n, b) => n + (Array.isArray(b.scans) ? b.scans.length : 0), 0);
		return out;
	}
	return db.transaction(async (t) => {
		const byAwb = await lockAttempts(db, awbs, t);
		const { rows, manifestOf } = scanRowsOf(batch, byAwb, out);
		if (!rows.length) return out;
		const fresh = await insertScans(db, rows, t);
		out.stored = [...fresh.values()].reduce((n, l) => n + l.length, 0);
		const folded = foldAttempts(byAwb, fresh);
		if (!folded.length) return out;
		const outbox = outboxRowsOf(folded, manifestOf, out);
		out.outbox = await writeFolded(db, folded, outbox, t);
		return out;
	});
}

/** A shipment leased for a poll. */
export interface DueShipment {
	attempt_id: number;
	awb_number: string;
	logistic_id: number;
}

/**
 * Leases up to `limit` due open shipments (state booked, `next_track_at` set
 * and past; terminal ones have none) skipping rows another poller or a fold
 * holds (`FOR UPDATE SKIP LOCKED`); the lease is the next schedule:
 * `next_track_at` = now + `intervalMs`, so another pod never asks the same
 * shipment meanwhile, and a failed ask is retried at the next interval.
 * Most overdue first.
 */
export async function leaseDueShipments(
	db: Sequelize,
	limit: number,
	intervalMs: number,
): Promise<DueShipment[]> {
	const { rows } = await exec<{ attempt_id: string; awb_number: string; logistic_id: number }>(
		db,
		`UPDATE booking.attempts a SET next_track_at = now() + make_interval(secs => $2::double precision / 1000)
		 WHERE a.attempt_id IN (
		   SELECT attempt_id FROM booking.attempts
		   WHERE state = 'booked' AND next_track_at IS NOT NULL AND next_track_at <= now()
		   ORDER BY next_track_at LIMIT $1
		   FOR UPDATE SKIP LOCKED)
		 RETURNING a.attempt_id, a.awb_number, a.logistic_id`,
		[limit, intervalMs],
	);
	return rows.map((r) => ({
		attempt_id: Number(r.attempt_id),
		awb_number: r.awb_number,
		logistic_id: Number(r.logistic_id),
	}));
}

/** The folded status of a booked attempt, or null when it is not booked / cancelled. */
export async function shipmentStatusOf(
	db: Sequelize,
	attempt_id: number,
): Promise<{ state: string; shipment_status: ShipmentStatus | null } | null> {
	const rows = await select<{ state: string; shipment_status: ShipmentStatus | null }>(
		db,
		`SELECT state, shipment_status FROM booking.attempts WHERE attempt_id = $1`,
		[attempt_id],
	);
	return rows[0] ?? null;
}

/** One stored scan as the tracking read answers it. */
export interface StoredScan {
	at: Date;
	location: string;
	status: ShipmentStatus;
	courier_code: string;
	courier_status: string;
	remarks: string | null;
}

/**
 * The newest `limit` scans of an attempt, oldest first, and whether older
 * ones were left out (ordered by scan time, then arrival).
 */
export async function scansOf(
	db: Sequelize,
	attempt_id: number,
	limit: number,
): Promise<{ scans: StoredScan[]; truncated: boolean }> {
	const rows = await select<StoredScan & { id: string }>(
		db,
		`SELECT id, at, location, status, courier_code, courier_status, remarks FROM booking.scans
		 WHERE attempt_id = $1 ORDER BY at DESC, id DESC LIMIT $2`,
		[attempt_id, limit + 1],
	);
	const truncated = rows.length > limit;
	const kept = rows.slice(0, limit).reverse();
	return { scans: kept.map(({ id: _, ...s }) => s), truncated };
}

/**
 * The order's current shipment: its latest attempt when that holds an AWB
 * (booked, or cancelled after the AWB was issued); null otherwise (never
 * booked, booking in progress or failed, or another sender's order).
 */
export async function trackedShipment(
	db: Sequelize,
	sender_id: number,
	order_id: number,
): Promise<{
	attempt_id: number;
	state: "booked" | "cancelled";
	shipment_status: ShipmentStatus | null;
} | null> {
	const rows = await select<{
		attempt_id: string;
		state: string;
		awb_number: string | null;
		shipment_status: ShipmentStatus | null;
	}>(
		db,
		`SELECT attempt_id, state, awb_number, shipment_status FROM booking.attempts
		 WHERE order_id = $1 AND sender_id = $2 ORDER BY attempt_id DESC LIMIT 1`,
		[order_id, sender_id],
	);
	const a = rows[0];
	if (!a?.awb_number || (a.state !== "booked" && a.state !== "cancelled")) return null;
	return { attempt_id: Number(a.attempt_id), state: a.state, shipment_status: a.shipment_status };
}
