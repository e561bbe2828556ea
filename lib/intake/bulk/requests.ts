/**
 * The bulk import's actions of `intake` (spec §2.3, §4.1; issue 10, issue 25;
 * docs/decisions/0039-bulk-upload-api.md) as plain functions over
 * {@link IntakeDeps} (../deps.ts): the upload, the job reads, the review
 * decisions, the processing run and the re-enqueue at start. The request
 * rules are in ./api.ts and ./export.ts; SQL in ./store.ts and ./jobs-store.ts.
 */
import type { Readable } from "node:stream";
import type { Context } from "moleculer";
import {
	type BulkDecisionResult,
	type BulkUploadResult,
	type CallMeta,
	call,
	type HttpParams,
} from "../../contracts";
import type { IntakeDeps } from "../deps";
import { assertOwnWarehouses } from "../orders";
import { decideReview, uploadBulk } from "./api";
import { insertBulkJob } from "./jobs-store";
import { type BulkRunResult, enqueueBulkJob, processBulkJob, requeueUnfinished } from "./process";
import { createFromRow } from "./rows";
import { unfinishedJobs } from "./store";

/** Timeout of the `pincode.lookupMany` calls of a processing run (ms). */
const LOOKUP_TIMEOUT_MS = 10_000;

/**
 * `intake.processBulkJob`: processes (or resumes) bulk job `job_id`
 * (./process.ts), pincodes looked up through `pincode.lookupMany`.
 */
export function processJob(
	deps: IntakeDeps,
	ctx: Context<unknown, CallMeta>,
	job_id: number,
): Promise<BulkRunResult> {
	return processBulkJob(
		{
			db: deps.db,
			logger: deps.logger,
			lookupMany: (pincodes) =>
				call(ctx, "pincode.lookupMany", { pincodes }, { timeout: LOOKUP_TIMEOUT_MS, unavailable: false }),
		},
		job_id,
	);
}

/**
 * Bulk jobs left queued/processing (a lost enqueue, a crashed pod): re-adds
 * their queue entries; logs how many (info) or why it failed (warn). Never throws.
 */
export async function requeueAtStart(deps: IntakeDeps): Promise<void> {
	await unfinishedJobs(deps.db)
		.then((ids) => requeueUnfinished(deps.db, ids))
		.then((n) => n && deps.logger.info(`bulk: re-enqueued ${n} unfinished job(s)`))
		.catch((e: Error) => deps.logger.warn(`bulk: re-enqueue at start failed: ${e.message}`));
}

/**
 * `POST /v1/intake/bulk` (./api.ts `uploadBulk`): the upload read from
 * `stream`, the warehouse checked through intake's cache, job and file stored
 * in one transaction, then enqueued; logs `bulk upload queued`.
 * @throws ApiError as documented on the action
 */
export async function uploadFile(
	deps: IntakeDeps,
	ctx: Context<unknown, CallMeta>,
	sender: number,
	params: { query?: HttpParams; content_type?: string } | undefined,
	stream: Readable | null,
): Promise<BulkUploadResult> {
	const res = await uploadBulk({
		sender_id: sender,
		query: params?.query ?? {},
		content_type: params?.content_type ?? "",
		stream,
		assertWarehouse: (id) => assertOwnWarehouses(deps, ctx, sender, [{ field: "sender_address_id", id }]),
		store: (job) => insertBulkJob(deps.db, job),
		enqueue: async (job_id) => {
			await enqueueBulkJob(job_id);
		},
		warn: (msg, extra) => deps.logger.warn(msg, extra),
	});
	deps.logger.info("bulk upload queued", { sender_id: sender, job_id: res.job_id });
	return res;
}

// `GET /v1/intake/jobs`, `/jobs/{id}`, `/jobs/{id}/review` and `/jobs/{id}/rows.csv` take the deps as they are:
// ./api.ts `jobsList`, `jobObject`, `reviewList` and ./export.ts `rowsExport`
export { jobObject as jobOf, jobsList as listJobs, reviewList as reviewRows } from "./api";
export { rowsExport as exportRows } from "./export";

/**
 * `POST /v1/intake/jobs/{id}/review/{row}/{decision}` (./api.ts
 * `decideReview`; approve creates through ./rows.ts `createFromRow`); logs
 * `bulk review decided` when any row was decided.
 */
export async function decideRows(
	deps: IntakeDeps,
	ctx: Context<unknown, CallMeta>,
	sender: number,
	params: HttpParams,
): Promise<BulkDecisionResult> {
	const res = await decideReview(deps.db, sender, params, (job, row_no) =>
		createFromRow(deps.db, ctx, sender, job, row_no),
	);
	if (res.decided.length)
		deps.logger.info("bulk review decided", {
			sender_id: sender,
			job_id: res.job_id,
			rows: res.decided.length,
		});
	return res;
}
