/**
 * Processing of one bulk job (issue 10), run by `intake.processBulkJob` from
 * BullMQ queue `intake-bulk` (jobId `bulk-<job_id>`).
 *
 * Loads the job and its stored file once (moved to the reader thread; it
 * is read there as a stream), marks it processing (CSV: total counted first by a cheap
 * byte scan), maps the header (an unknown / missing column fails the job
 * before any row), then streams rows in batches of {@link BATCH_ROWS}, read
 * by a worker thread with a bounded heap (./reader-thread.ts). Rows
 * ≤ `processed_rows` (the checkpoint) are skipped: a redelivered or restarted
 * job resumes. Each batch: validation (./rows.ts), one `pincode.lookupMany`,
 * one SELECT of the live orders holding the batch's references, then ONE
 * transaction that locks the job row, checks the checkpoint is still the
 * batch's start (else another worker progressed: this attempt stops), inserts
 * the new orders in one multi-row INSERT … ON CONFLICT DO NOTHING RETURNING,
 * the outcomes in one multi-row INSERT … ON CONFLICT DO NOTHING, and moves the
 * checkpoint and counts. A crash anywhere loses at most the uncommitted batch,
 * which is redone; no order is created twice (the live-reference unique index
 * backs it). Refused files (zip bomb, not the declared format, bad header) end
 * the job `failed` with a clear error; infrastructure errors throw (BullMQ
 * retries from the checkpoint).
 */
import type { Sequelize, Transaction } from "sequelize";
import type { PincodeInfo } from "../../contracts";
import { MAX_JOB_ERROR_CHARS } from "../../contracts/http/intake-bulk-input";
import { setting } from "../../platform/config";
import { getQueue } from "../../platform/queue";
import type { OrderInput } from "../validation";
import { capText } from "./bounds";
import { cellsOf, HeaderError, type HeaderMap, mapHeader, type RowCells } from "./columns";
import { countCsvRecords, type SourceRow } from "./csv";
import { readRowsInThread } from "./reader-thread";
import { type ParsedRow, parseRow, pincodeMismatch } from "./rows";
import {
	advanceJob,
	contentKey,
	type ExistingOrder,
	estimateTotal,
	existingOrders,
	finishJob,
	insertOrdersBatch,
	insertOutcomes,
	loadFile,
	loadJob,
	markProcessing,
	type OutcomeRow,
} from "./store";
import { BulkFileError, inspectXlsx, looksLikeZip } from "./xlsx";

/** BullMQ queue of bulk jobs. */
export const BULK_QUEUE = "intake-bulk";
/** Rows per batch (one transaction each). */
export const BATCH_ROWS = setting("INTAKE_BULK_BATCH");

/** What processing needs from its host. */
export interface BulkDeps {
	db: Sequelize;
	/** `pincode.lookupMany` (≤ 1000 pincodes) */
	lookupMany: (pincodes: string[]) => Promise<Record<string, PincodeInfo>>;
	logger: { info(...a: unknown[]): void; warn(...a: unknown[]): void };
}

/** The jobId of a bulk job in {@link BULK_QUEUE}. */
export const bulkJobId = (job_id: number) => `bulk-${job_id}`;

/** Adds the job's queue entry (a duplicate add of a live entry is ignored by BullMQ). */
export async function enqueueBulkJob(job_id: number): Promise<void> {
	await getQueue(BULK_QUEUE).add(
		"bulk",
		{ job_id },
		{
			jobId: bulkJobId(job_id),
			attempts: 5,
			backoff: { type: "exponential", delay: 2000 },
			removeOnComplete: true,
			removeOnFail: { age: 7 * 24 * 3600 },
		},
	);
}

/** Re-adds the queue entry of every unfinished job whose entry is gone or finished (start-up sweep). */
export async function requeueUnfinished(db: Sequelize, ids: number[]): Promise<number> {
	void db;
	const q = getQueue(BULK_QUEUE);
	let n = 0;
	for (const id of ids) {
		const j = await q.getJob(bulkJobId(id));
		if (j) {
			const st = await j.getState();
			if (st !== "completed" && st !== "failed" && st !== "unknown") continue;
			await j.remove().catch(() => undefined);
		}
		await enqueueBulkJob(id);
		n++;
	}
	return n;
}

/** A data row waiting in a batch. */
interface Pending {
	row_no: number;
	cells: RowCells;
	/** a record the parser could not read */
	error?: string;
}

/** Cells as stored in `bulk_rows.data`. */
function dataOf(cells: RowCells): Record<string, string> {
	return { ...cells } as Record<string, string>;
}

/** Result of {@link processBulkJob}. */
export interface BulkRunResult {
	status: "completed" | "failed" | "skipped";
	error?: string;
}

/** Runs (or resumes) bulk job `job_id`; see the module docs. */
export async function processBulkJob(deps: BulkDeps, job_id: number): Promise<BulkRunResult> {
	const job = await loadJob(deps.db, job_id);
	if (!job || job.status === "completed" || job.status === "failed") return { status: "skipped" };
	const file = await loadFile(deps.db, job_id);
	if (!file) {
		await finishJob(deps.db, job_id, "failed", "the uploaded file is missing", null);
		return { status: "failed", error: "the uploaded file is missing" };
	}
	let rows: AsyncGenerator<SourceRow>;
	// an XLSX's total is estimated by the reader before its first row (its row tags) and made exact at the end
	let estimating: Promise<void> = Promise.resolve();
	try {
		if (job.format === "xlsx") {
			await inspectXlsx(file);
			await markProcessing(deps.db, job_id, null);
			rows = readRowsInThread("xlsx", file, (n) => {
				estimating = estimateTotal(deps.db, job_id, n).catch((e) =>
					deps.logger.warn(`bulk job ${job_id}: the estimated total was not recorded: ${e.message}`),
				);
			});
		} else {
			if (looksLikeZip(file) || file.subarray(0, 8192).includes(0))
				throw new BulkFileError("file is not a CSV text file (binary content)");
			const records = countCsvRecords(file);
			await markProcessing(deps.db, job_id, Math.max(0, records - 1));
			rows = readRowsInThread("csv", file);
		}
	} catch (e) {
		if (e instanceof BulkFileError) return fail(deps, job_id, e.message);
		throw e;
	}

	let header: HeaderMap | null = null;
	let row_no = 0;
	let batch: Pending[] = [];
	let start = job.processed_rows;
	try {
		for await (const r of rows) {
			if (!header) {
				if (r.error) throw new BulkFileError(`header row could not be read: ${r.error}`);
				header = mapHeader(r.cells);
				continue;
			}
			row_no++;
			if (row_no <= job.processed_rows) continue;
			batch.push({ row_no, cells: r.error ? {} : cellsOf(header, r.cells), error: r.error });
			if (batch.length >= BATCH_ROWS) {
				await estimating; // the estimated total is recorded before the first batch
				await runBatch(deps, job, start, batch);
				start = batch[batch.length - 1].row_no;
				batch = [];
			}
		}
		if (!header) throw new BulkFileError("the file has no header row");
		await estimating;
		if (batch.length) await runBatch(deps, job, start, batch);
	} catch (e) {
		if (e instanceof HeaderError || e instanceof BulkFileError) return fail(deps, job_id, e.message);
		if (e instanceof CheckpointMoved) return { status: "skipped" };
		throw e;
	}
	await finishJob(deps.db, job_id, "completed", null, row_no);
	deps.logger.info(`bulk job ${job_id} completed: ${row_no} rows`);
	return { status: "completed" };
}

/**
 * Ends the job failed with a file error (cut to `MAX_JOB_ERROR_CHARS`,
 * lib/contracts/http/intake-bulk-input.ts, as stored and logged).
 */
async function fail(deps: BulkDeps, job_id: number, whole: string): Promise<BulkRunResult> {
	const error = capText(whole, MAX_JOB_ERROR_CHARS);
	await finishJob(deps.db, job_id, "failed", error, null);
	deps.logger.warn(`bulk job ${job_id} failed: ${error}`);
	return { status: "failed", error };
}

/** Another worker moved the checkpoint (this attempt stops without writing). */
class CheckpointMoved extends Error {}

/** A classified row of a batch. */
interface Classified {
	p: Pending;
	parsed: ParsedRow;
	outcome?: OutcomeRow;
	/** later rows of this file with the same reference and content (they take this row's order id) */
	dups?: Classified[];
}

/** A row that will insert its order (its parse was `valid`). */
type ToInsert = Classified & { parsed: { kind: "valid"; input: OrderInput } };

/** The bulk job fields a batch needs. */
interface BatchJob {
	job_id: number;
	sender_id: number;
	sender_address_id: number;
}

/** Outcome of a row recorded as failed with `errors` (its cells kept for the fix-up download). */
function failedOutcome(p: Pending, errors: NonNullable<OutcomeRow["errors"]>): OutcomeRow {
	return {
		row_no: p.row_no,
		outcome: "failed",
		order_id: null,
		errors,
		review_reason: null,
		data: dataOf(p.cells),
	};
}

/** Outcome of a row held for review for `reason` (its cells kept for approval). */
function reviewOutcome(p: Pending, reason: string): OutcomeRow {
	return {
		row_no: p.row_no,
		outcome: "review",
		order_id: null,
		errors: null,
		review_reason: reason,
		data: dataOf(p.cells),
	};
}

/** Outcome of a row that made order `order_id` (null: filled in from the first row of its reference). */
function doneOutcome(row_no: number, outcome: "created" | "deduped", order_id: number | null): OutcomeRow {
	return { row_no, outcome, order_id, errors: null, review_reason: null, data: null };
}

/** Parses each row of the batch (a record the reader could not read fails as it is). */
function parseBatch(batch: Pending[], sender_address_id: number): Classified[] {
	return batch.map((p) => ({
		p,
		parsed: p.error
			? {
					kind: "failed",
					errors: [{ column: null, field: null, message: `row could not be read: ${p.error}` }],
				}
			: parseRow(p.cells, sender_address_id),
	}));
}

/** The distinct values `pick` takes over the rows that parsed (valid or cod_above). */
function distinctOfParsed(rows: Classified[], pick: (input: OrderInput) => string): string[] {
	return [...new Set(rows.map((r) => (r.parsed.kind === "failed" ? "" : pick(r.parsed.input))))];
}

/** `pincode.lookupMany` over the batch's receiver pincodes, in calls of at most 1000. */
async function lookupPincodes(deps: BulkDeps, valid: Classified[]): Promise<Record<string, PincodeInfo>> {
	const pins = distinctOfParsed(valid, (input) => input.receiver.pincode);
	const info: Record<string, PincodeInfo> = {};
	for (let i = 0; i < pins.length; i += 1000)
		Object.assign(info, await deps.lookupMany(pins.slice(i, i + 1000)));
	return info;
}

/** What classifying a row of a batch compares it with. */
interface ClassifyContext {
	/** the live orders of the batch's references */
	existing: Map<string, ExistingOrder>;
	/** the first inserting row of each new reference of this batch */
	firstOf: Map<string, Classified>;
	/** pincode lookups of the batch */
	info: Record<string, PincodeInfo>;
}

/**
 * Sets the outcome of a row whose reference is already a live order: a
 * return's reference fails (`reference_in_use`), the same content is
 * `deduped` onto it, different content goes to review (`reference_conflict`).
 */
function classifyAgainstExisting(r: Classified, ex: ExistingOrder, input: OrderInput): void {
	const { p, parsed } = r;
	const ref = input.customer_order_no;
	if (ex.shipment_type === 1) {
		r.outcome = failedOutcome(p, [
			{
				column: "customer_order_no",
				field: "customer_order_no",
				message: `reference_in_use: ${ref} is used by a return order`,
			},
		]);
	} else if (parsed.kind === "valid" && ex.key === contentKey(input)) {
		r.outcome = doneOutcome(p.row_no, "deduped", ex.order_id);
	} else {
		r.outcome = reviewOutcome(
			p,
			`reference_conflict: customer_order_no ${ref} is already used by order ${ex.order_id} with different content`,
		);
	}
}

/**
 * Sets the outcome of a row whose reference an earlier row of this batch
 * inserts: the same content is `deduped` (and takes that row's order id, as
 * one of its `dups`), different content goes to review.
 */
function classifyAgainstFirst(r: Classified, first: Classified, input: OrderInput): void {
	const { p, parsed } = r;
	const same =
		parsed.kind === "valid" &&
		first.parsed.kind === "valid" &&
		contentKey(first.parsed.input) === contentKey(input);
	r.outcome = same
		? doneOutcome(p.row_no, "deduped", null)
		: reviewOutcome(
				p,
				`reference_conflict: customer_order_no ${input.customer_order_no} is already used by row ${first.p.row_no} of this file with different content`,
			);
	if (same) first.dups = [...(first.dups ?? []), r];
}

/**
 * Classifies one row of the batch: failed, deduped or held for review (its
 * `outcome` set), or the first valid, non-review row of a new reference
 * (returned: it inserts; later rows compare with it).
 */
function classifyRow(r: Classified, ctx: ClassifyContext): ToInsert | null {
	const { p, parsed } = r;
	if (parsed.kind === "failed") {
		r.outcome = failedOutcome(p, parsed.errors);
		return null;
	}
	const input = parsed.input;
	const ref = input.customer_order_no;
	const ex = ctx.existing.get(ref);
	if (ex) {
		classifyAgainstExisting(r, ex, input);
		return null;
	}
	const first = ctx.firstOf.get(ref);
	if (first) {
		classifyAgainstFirst(r, first, input);
		return null;
	}
	if (parsed.kind === "cod_above") {
		r.outcome = reviewOutcome(
			p,
			`cod_above_order_value: cod_amount ${p.cells.cod_amount ?? ""} is above declared_order_total ${p.cells.declared_order_total ?? ""} (approving raises declared_order_total to the COD amount)`,
		);
		return null;
	}
	const mismatch = pincodeMismatch(input, ctx.info[input.receiver.pincode]);
	if (mismatch) {
		r.outcome = reviewOutcome(p, mismatch);
		return null;
	}
	ctx.firstOf.set(ref, r);
	return r as ToInsert;
}

/**
 * Inserts the orders of `toInsert` (one multi-row INSERT) and sets each
 * row's outcome: `created`; or, for a reference inserted concurrently (not
 * returned), `deduped` onto it when the content is the same, else review.
 * Each row's `dups` take its order id.
 */
async function insertNewOrders(
	deps: BulkDeps,
	job: BatchJob,
	toInsert: ToInsert[],
	tx: Transaction,
): Promise<void> {
	const ids = await insertOrdersBatch(
		deps.db,
		job.sender_id,
		toInsert.map((r) => r.parsed.input),
		tx,
	);
	// a reference inserted concurrently (not returned): read it and compare
	const missed = toInsert.filter((r) => !ids.has(r.parsed.input.customer_order_no));
	const late = missed.length
		? await existingOrders(
				deps.db,
				job.sender_id,
				missed.map((r) => r.parsed.input.customer_order_no),
				tx,
			)
		: new Map<string, ExistingOrder>();
	for (const r of toInsert) {
		const input = r.parsed.input;
		const id = ids.get(input.customer_order_no);
		const ex = late.get(input.customer_order_no);
		if (id !== undefined) r.outcome = doneOutcome(r.p.row_no, "created", id);
		else if (ex && ex.key === contentKey(input)) r.outcome = doneOutcome(r.p.row_no, "deduped", ex.order_id);
		else
			r.outcome = reviewOutcome(
				r.p,
				`reference_conflict: customer_order_no ${input.customer_order_no} is already used with different content`,
			);
		for (const d of r.dups ?? []) if (d.outcome) d.outcome.order_id = r.outcome.order_id;
	}
}

/** Records the batch's outcomes and moves the job's checkpoint to `last_row` with the counts. */
async function recordOutcomes(
	deps: BulkDeps,
	job_id: number,
	rows: Classified[],
	last_row: number,
	tx: Transaction,
): Promise<void> {
	const outcomes = rows.map((r) => r.outcome).filter((o): o is OutcomeRow => Boolean(o));
	const count = (k: OutcomeRow["outcome"]) => outcomes.filter((o) => o.outcome === k).length;
	await insertOutcomes(deps.db, job_id, outcomes, tx);
	await advanceJob(
		deps.db,
		job_id,
		last_row,
		{
			created: count("created"),
			deduped: count("deduped"),
			failed: count("failed"),
			review: count("review"),
		},
		tx,
	);
}

/**
 * Handles one batch (see the module docs): parses its rows and looks their
 * pincodes up, then in one transaction locks the job row (stops with
 * {@link CheckpointMoved} when the checkpoint is no longer `start`),
 * classifies each row against the live orders and the batch's earlier rows,
 * inserts the new orders, records the outcomes and moves the checkpoint.
 */
async function runBatch(deps: BulkDeps, job: BatchJob, start: number, batch: Pending[]): Promise<void> {
	const rows = parseBatch(batch, job.sender_address_id);
	const valid = rows.filter((r) => r.parsed.kind !== "failed");
	const info = await lookupPincodes(deps, valid);

	await deps.db.transaction(async (tx) => {
		const locked = await loadJob(deps.db, job.job_id, tx);
		if (!locked || locked.processed_rows !== start || locked.status !== "processing")
			throw new CheckpointMoved();
		const refs = distinctOfParsed(valid, (input) => input.customer_order_no);
		const ctx: ClassifyContext = {
			existing: await existingOrders(deps.db, job.sender_id, refs, tx),
			firstOf: new Map(),
			info,
		};
		const toInsert: ToInsert[] = [];
		for (const r of rows) {
			const ins = classifyRow(r, ctx);
			if (ins) toInsert.push(ins);
		}
		await insertNewOrders(deps, job, toInsert, tx);
		await recordOutcomes(deps, job.job_id, rows, batch[batch.length - 1].row_no, tx);
	});
}
