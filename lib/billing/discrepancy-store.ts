/**
 * The SQL of weight discrepancies (issue 27; docs/decisions/0105-weight-discrepancies.md;
 * tables: ./migrations.ts 004). Weights in grams, dimensions in cm, money in
 * integer paise. Every change of money is a ledger entry appended in the
 * same transaction as the discrepancy's change (./store.ts `appendEntries`):
 * the hold when it opens, its refund when a dispute is won.
 */
import type { Sequelize, Transaction } from "sequelize";
import { DEFAULT_WEIGHT_TOLERANCE, type DiscrepancyStatus, type MerchantEvent } from "../contracts";
import { exec, select } from "../platform/db";
import { appendEntries } from "./store";

/** A `billing.weight_discrepancies` row as read (numbers; dims `[l, w, h]` cm or null). */
export interface DiscrepancyRow {
	id: number;
	sender_id: number;
	order_id: number;
	awb_number: string;
	logistic_id: number;
	declared_g: number;
	declared_dims_cm: number[] | null;
	declared_chargeable_g: number;
	charged_g: number;
	charged_dims_cm: number[] | null;
	charged_chargeable_g: number;
	extra_paise: number;
	status: DiscrepancyStatus;
	dispute_reason: string | null;
	disputed_at: Date | null;
	resolution_note: string | null;
	closed_at: Date | null;
	opened_at: Date;
	respond_by: Date;
}

/** One image of a dispute as listed (no bytes). */
export interface ImageRow {
	n: number;
	content_type: "image/jpeg" | "image/png";
	size: number;
	width: number;
	height: number;
}

const COLUMNS = `id, sender_id, order_id, awb_number, logistic_id, declared_g, declared_dims_cm, declared_chargeable_g,
	charged_g, charged_dims_cm, charged_chargeable_g, extra_paise, status, dispute_reason, disputed_at, resolution_note,
	closed_at, opened_at, respond_by`;

type Stored = Omit<
	DiscrepancyRow,
	"id" | "sender_id" | "order_id" | "extra_paise" | "declared_dims_cm" | "charged_dims_cm"
> & {
	id: string;
	sender_id: string;
	order_id: string;
	extra_paise: string;
	declared_dims_cm: string[] | null;
	charged_dims_cm: string[] | null;
};

function rowOf(r: Stored): DiscrepancyRow {
	const dims = (d: string[] | null) => (d ? d.map(Number) : null);
	return {
		...r,
		id: Number(r.id),
		sender_id: Number(r.sender_id),
		order_id: Number(r.order_id),
		extra_paise: Number(r.extra_paise),
		declared_dims_cm: dims(r.declared_dims_cm),
		charged_dims_cm: dims(r.charged_dims_cm),
	};
}

/** The accounts' weight tolerances (grams, percent); an account without one gets the default. */
export async function tolerancesOf(
	db: Sequelize,
	sender_ids: number[],
): Promise<Map<number, { grams: number; percent: number }>> {
	const rows = await select<{ sender_id: string; grams: number; percent: number }>(
		db,
		`SELECT sender_id, grams, percent FROM billing.weight_tolerances WHERE sender_id = ANY($1::bigint[])`,
		[sender_ids],
	);
	const out = new Map<number, { grams: number; percent: number }>(
		sender_ids.map((s) => [s, { ...DEFAULT_WEIGHT_TOLERANCE }]),
	);
	for (const r of rows) out.set(Number(r.sender_id), { grams: r.grams, percent: r.percent });
	return out;
}

/** Sets an account's weight tolerance (grams 0–100,000, percent 0–100). */
export async function setTolerance(
	db: Sequelize,
	sender_id: number,
	grams: number,
	percent: number,
): Promise<void> {
	await exec(
		db,
		`INSERT INTO billing.weight_tolerances (sender_id, grams, percent) VALUES ($1, $2, $3)
		 ON CONFLICT (sender_id) DO UPDATE SET grams = EXCLUDED.grams, percent = EXCLUDED.percent, updated_at = now()`,
		[sender_id, grams, percent],
	);
}

/** The stored outcome of a weight file received before (by its SHA-256), or null. */
export async function storedWeightReport(
	db: Sequelize,
	sha256: string,
	t?: Transaction,
): Promise<{ id: number; outcome: Record<string, unknown> } | null> {
	const [r] = await select<{ id: string; outcome: Record<string, unknown> }>(
		db,
		`SELECT id, outcome FROM billing.weight_reports WHERE file_sha256 = $1`,
		[sha256],
		t,
	);
	return r ? { id: Number(r.id), outcome: r.outcome } : null;
}

/** A shipment to match a weight line to: its account, order and courier. */
export interface KnownShipment {
	awb_number: string;
	sender_id: number;
	order_id: number;
	logistic_id: number;
}

/** The shipments of `awbs` billing knows (from the status channel). */
export async function knownShipments(db: Sequelize, awbs: string[]): Promise<Map<string, KnownShipment>> {
	const rows = await select<{ awb_number: string; sender_id: string; order_id: string; logistic_id: number }>(
		db,
		`SELECT awb_number, sender_id, order_id, logistic_id FROM billing.shipments WHERE awb_number = ANY($1::text[])`,
		[awbs],
	);
	return new Map(
		rows.map((r) => [r.awb_number, { ...r, sender_id: Number(r.sender_id), order_id: Number(r.order_id) }]),
	);
}

/** The AWBs of `awbs` that have a discrepancy already (one per AWB). */
export async function reportedAwbs(db: Sequelize, awbs: string[]): Promise<Set<string>> {
	const rows = await select<{ awb_number: string }>(
		db,
		`SELECT awb_number FROM billing.weight_discrepancies WHERE awb_number = ANY($1::text[])`,
		[awbs],
	);
	return new Set(rows.map((r) => r.awb_number));
}

/** A discrepancy to open (grams, cm, paise): the columns of a row the file decides. */
export type NewDiscrepancy = Pick<
	DiscrepancyRow,
	| "sender_id"
	| "order_id"
	| "awb_number"
	| "logistic_id"
	| "declared_g"
	| "declared_dims_cm"
	| "declared_chargeable_g"
	| "charged_g"
	| "charged_dims_cm"
	| "charged_chargeable_g"
	| "extra_paise"
>;

/**
 * Records a weight file in ONE transaction: the file (once per content; a
 * file received before answers `{duplicate: true}` with its stored outcome),
 * its discrepancies (one per AWB: an AWB with one already is skipped and
 * reported in `skipped`), for each opened one its hold in the ledger
 * (`weight_discrepancy`, key `weight:<id>:hold`, naming the attempt of the
 * AWB's booking charge) and its merchant event (`weight_discrepancy.opened`,
 * built by `eventOf`), and the file's outcome (built by `outcomeOf` from
 * what was opened).
 */
export async function recordWeightReport(
	db: Sequelize,
	input: {
		sha256: string;
		logistic_id: number | null;
		lines: number;
		openings: NewDiscrepancy[];
		respondDays: number;
		eventOf: (d: DiscrepancyRow) => MerchantEvent;
		outcomeOf: (opened: DiscrepancyRow[], skipped: Set<string>) => Record<string, unknown>;
	},
): Promise<{ id: number; duplicate: boolean; outcome: Record<string, unknown> }> {
	return db.transaction(async (t) => {
		const { rows: made } = await exec<{ id: string }>(
			db,
			`INSERT INTO billing.weight_reports (file_sha256, logistic_id, lines, outcome)
			 VALUES ($1, $2, $3, '{}'::jsonb) ON CONFLICT (file_sha256) DO NOTHING RETURNING id`,
			[input.sha256, input.logistic_id, input.lines],
			t,
		);
		if (!made[0]) {
			const old = await storedWeightReport(db, input.sha256, t);
			// the row exists (the conflict says so)
			return { id: old?.id ?? 0, duplicate: true, outcome: old?.outcome ?? {} };
		}
		const id = Number(made[0].id);
		const opened = input.openings.length
			? (
					await select<Stored>(
						db,
						`INSERT INTO billing.weight_discrepancies (sender_id, order_id, awb_number, logistic_id, report_sha256,
							declared_g, declared_dims_cm, declared_chargeable_g, charged_g, charged_dims_cm, charged_chargeable_g,
							extra_paise, respond_by)
						 SELECT x.sender_id, x.order_id, x.awb_number, x.logistic_id, $2, x.declared_g,
							NULLIF(ARRAY(SELECT jsonb_array_elements_text(x.declared_dims_cm))::numeric[], '{}'), x.declared_chargeable_g,
							x.charged_g, NULLIF(ARRAY(SELECT jsonb_array_elements_text(x.charged_dims_cm))::numeric[], '{}'),
							x.charged_chargeable_g, x.extra_paise, now() + make_interval(days => $3)
						 FROM jsonb_to_recordset($1::jsonb) AS x(sender_id bigint, order_id bigint, awb_number text,
							logistic_id integer, declared_g integer, declared_dims_cm jsonb, declared_chargeable_g integer,
							charged_g integer, charged_dims_cm jsonb, charged_chargeable_g integer, extra_paise bigint)
						 ORDER BY x.awb_number
						 ON CONFLICT (awb_number) DO NOTHING
						 RETURNING ${COLUMNS}`,
						[JSON.stringify(input.openings), input.sha256, input.respondDays],
						t,
					)
				).map(rowOf)
			: [];
		const openedAwbs = new Set(opened.map((d) => d.awb_number));
		const skipped = new Set(input.openings.map((o) => o.awb_number).filter((a) => !openedAwbs.has(a)));
		if (opened.length) {
			const attempts = await select<{ awb_number: string; attempt_id: string }>(
				db,
				`SELECT DISTINCT ON (awb_number) awb_number, attempt_id FROM billing.ledger
				 WHERE awb_number = ANY($1::text[]) AND kind = 'charge' ORDER BY awb_number, id DESC`,
				[[...openedAwbs]],
				t,
			);
			const attemptOf = new Map(attempts.map((a) => [a.awb_number, Number(a.attempt_id)]));
			await appendEntries(
				db,
				opened.map((d) => ({
					sender_id: d.sender_id,
					kind: "weight_discrepancy",
					amount_paise: d.extra_paise,
					entry_key: `weight:${d.id}:hold`,
					attempt_id: attemptOf.get(d.awb_number) ?? null,
					order_id: d.order_id,
					awb_number: d.awb_number,
					note: `weight discrepancy ${d.id}: declared ${d.declared_chargeable_g / 1000} kg, courier charged ${
						d.charged_chargeable_g / 1000
					} kg`,
					occurred_at: d.opened_at.toISOString(),
				})),
				t,
			);
			await exec(
				db,
				`INSERT INTO billing.event_outbox (event) SELECT value FROM jsonb_array_elements($1::jsonb)`,
				[JSON.stringify(opened.map(input.eventOf))],
				t,
			);
		}
		const outcome = input.outcomeOf(opened, skipped);
		await exec(
			db,
			`UPDATE billing.weight_reports SET outcome = $2 WHERE id = $1`,
			[id, JSON.stringify(outcome)],
			t,
		);
		return { id, duplicate: false, outcome };
	});
}

/** Filters of the discrepancy list. */
export interface DiscrepancyFilter {
	status: DiscrepancyStatus | null;
	/** opened at or after (ISO-8601 UTC) */
	from: string | null;
	/** opened before (ISO-8601 UTC) */
	to: string | null;
	awb_number: string | null;
}

/** One page of the account's discrepancies, newest first: at most `limit` before id `before`, and whether more follow. */
export async function discrepancyPage(
	db: Sequelize,
	sender_id: number,
	before: number | null,
	limit: number,
	f: DiscrepancyFilter,
): Promise<{ rows: DiscrepancyRow[]; more: boolean }> {
	const rows = await select<Stored>(
		db,
		`SELECT ${COLUMNS} FROM billing.weight_discrepancies
		 WHERE sender_id = $1 AND ($2::bigint IS NULL OR id < $2) AND ($3::text IS NULL OR status = $3)
			AND ($4::timestamptz IS NULL OR opened_at >= $4) AND ($5::timestamptz IS NULL OR opened_at < $5)
			AND ($6::text IS NULL OR awb_number = $6)
		 ORDER BY id DESC LIMIT $7`,
		[sender_id, before, f.status, f.from, f.to, f.awb_number, limit + 1],
	);
	return { rows: rows.slice(0, limit).map(rowOf), more: rows.length > limit };
}

/** The images of these discrepancies (no bytes), by discrepancy id. */
export async function imagesOf(
	db: Sequelize,
	ids: number[],
	t?: Transaction,
): Promise<Map<number, ImageRow[]>> {
	const out = new Map<number, ImageRow[]>();
	if (!ids.length) return out;
	const rows = await select<ImageRow & { discrepancy_id: string }>(
		db,
		`SELECT discrepancy_id, n, content_type, octet_length(bytes) AS size, width, height FROM billing.dispute_images
		 WHERE discrepancy_id = ANY($1::bigint[]) ORDER BY discrepancy_id, n`,
		[ids],
		t,
	);
	for (const { discrepancy_id, ...r } of rows) {
		const id = Number(discrepancy_id);
		out.set(id, [...(out.get(id) ?? []), { ...r, size: Number(r.size) }]);
	}
	return out;
}

/** The discrepancy `id` of `sender_id` (any account's when null), or null. `lock`: FOR UPDATE in `t`. */
export async function discrepancyOf(
	db: Sequelize,
	sender_id: number | null,
	id: number,
	t?: Transaction,
	lock = false,
): Promise<DiscrepancyRow | null> {
	const [r] = await select<Stored>(
		db,
		`SELECT ${COLUMNS} FROM billing.weight_discrepancies WHERE id = $1 AND ($2::bigint IS NULL OR sender_id = $2)
		 ${lock ? "FOR UPDATE" : ""}`,
		[id, sender_id],
		t,
	);
	return r ? rowOf(r) : null;
}

/**
 * Moves the sender's open discrepancy to `accepted`.
 * @returns the row after the change; `{current}` when it is not open (unchanged); null when it is not the sender's
 */
export async function acceptOpen(
	db: Sequelize,
	sender_id: number,
	id: number,
): Promise<{ row: DiscrepancyRow } | { current: DiscrepancyRow } | null> {
	const [r] = await select<Stored>(
		db,
		`UPDATE billing.weight_discrepancies SET status = 'accepted', closed_at = now(), updated_at = now()
		 WHERE id = $1 AND sender_id = $2 AND status = 'open' RETURNING ${COLUMNS}`,
		[id, sender_id],
	);
	if (r) return { row: rowOf(r) };
	const current = await discrepancyOf(db, sender_id, id);
	return current ? { current } : null;
}

/** A cleaned image of a dispute (EXIF-free bytes). */
export interface NewImage {
	content_type: "image/jpeg" | "image/png";
	width: number;
	height: number;
	bytes: Buffer;
	sha256: string;
}

/**
 * Disputes the sender's open discrepancy: its reason and images stored, its
 * status `disputed`, in one transaction (the row locked, so an accept and a
 * dispute racing cannot both win).
 * @returns as {@link acceptOpen}
 */
export async function disputeOpen(
	db: Sequelize,
	sender_id: number,
	id: number,
	reason: string,
	images: NewImage[],
): Promise<{ row: DiscrepancyRow } | { current: DiscrepancyRow } | null> {
	return db.transaction(async (t) => {
		const current = await discrepancyOf(db, sender_id, id, t, true);
		if (!current) return null;
		if (current.status !== "open") return { current };
		for (const [i, img] of images.entries())
			await exec(
				db,
				`INSERT INTO billing.dispute_images (discrepancy_id, n, content_type, width, height, bytes, sha256)
				 VALUES ($1, $2, $3, $4, $5, $6, $7)`,
				[id, i + 1, img.content_type, img.width, img.height, img.bytes, img.sha256],
				t,
			);
		const [r] = await select<Stored>(
			db,
			`UPDATE billing.weight_discrepancies SET status = 'disputed', dispute_reason = $2, disputed_at = now(),
				updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
			[id, reason],
			t,
		);
		return { row: rowOf(r) };
	});
}

/**
 * Ops' decision on a disputed discrepancy: `won` (the hold refunded: a
 * `weight_discrepancy_refund` entry, key `weight:<id>:refund`) or `lost`
 * (the hold stands as the charge), in one transaction.
 * @returns the row after the change (unchanged when it was resolved before with the same outcome: `again`);
 *   `{current}` when it is not disputed; null when it does not exist
 */
export async function resolveDisputed(
	db: Sequelize,
	id: number,
	outcome: "won" | "lost",
	note: string | null,
): Promise<{ row: DiscrepancyRow; again: boolean } | { current: DiscrepancyRow } | null> {
	return db.transaction(async (t) => {
		const current = await discrepancyOf(db, null, id, t, true);
		if (!current) return null;
		if (current.status === outcome) return { row: current, again: true };
		if (current.status !== "disputed") return { current };
		const [r] = await select<Stored>(
			db,
			`UPDATE billing.weight_discrepancies SET status = $2, resolution_note = $3, closed_at = now(), updated_at = now()
			 WHERE id = $1 RETURNING ${COLUMNS}`,
			[id, outcome, note],
			t,
		);
		const row = rowOf(r);
		if (outcome === "won") {
			const [hold] = await select<{ attempt_id: string | null }>(
				db,
				`SELECT attempt_id FROM billing.ledger WHERE entry_key = $1`,
				[`weight:${id}:hold`],
				t,
			);
			await appendEntries(
				db,
				[
					{
						sender_id: row.sender_id,
						kind: "weight_discrepancy_refund",
						amount_paise: row.extra_paise,
						entry_key: `weight:${id}:refund`,
						attempt_id: hold?.attempt_id ? Number(hold.attempt_id) : null,
						order_id: row.order_id,
						awb_number: row.awb_number,
						note: `weight discrepancy ${id}: dispute won, hold refunded`,
						occurred_at: new Date().toISOString(),
					},
				],
				t,
			);
		}
		return { row, again: false };
	});
}

/** Open discrepancies whose response window ended at `now` become `auto_accepted`. @returns how many */
export async function autoAcceptDue(db: Sequelize, now: Date): Promise<number> {
	const { rows } = await exec<{ id: string }>(
		db,
		`UPDATE billing.weight_discrepancies SET status = 'auto_accepted', closed_at = now(), updated_at = now()
		 WHERE status = 'open' AND respond_by <= $1 RETURNING id`,
		[now.toISOString()],
	);
	return rows.length;
}

/** Image `n` of discrepancy `id`'s dispute (of `sender_id`; any account's when null), or null. */
export async function imageBytes(
	db: Sequelize,
	sender_id: number | null,
	id: number,
	n: number,
): Promise<{ content_type: string; bytes: Buffer } | null> {
	const [r] = await select<{ content_type: string; bytes: Buffer }>(
		db,
		`SELECT i.content_type, i.bytes FROM billing.dispute_images i
		 JOIN billing.weight_discrepancies d ON d.id = i.discrepancy_id
		 WHERE i.discrepancy_id = $1 AND i.n = $2 AND ($3::bigint IS NULL OR d.sender_id = $3)`,
		[id, n, sender_id],
	);
	return r ?? null;
}
