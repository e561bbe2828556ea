/**
 * The tracking pipeline of booked shipments (issue 7; spec §2.6, §3, §4.3
 * tracking, §6; docs/ARCHITECTURE.md §1, §4): courier scans reach us pushed to
 * our webhook (`POST /v1/tracking/webhooks/{courier}`, {@link courierPush}) and
 * pulled by a poller ({@link pollOnce}); both fold them the same way
 * ({@link ingest}: lib/booking/store/tracking.ts `ingestScans`, the rule in
 * ./tracking-fold.ts) into one status per shipment, report each change to
 * intake through the outbox (an `order_update` with seq `order_seq + 1`) and
 * to the `shipment.status_changed` channel (a `status_event` outbox row in the
 * same transaction, published by the relay: durable, issue 8), and broadcast
 * `shipment.status_changed` / `shipment.undelivered` after commit (best-effort
 * Moleculer events). A handover manifest moves shipments to `manifested` the
 * same way ({@link markManifested}).
 * The sandbox route ({@link sandboxEvent}) emits a scan at the simulator and
 * polls it back through the same path; the read ({@link trackingOf}) answers
 * §2.6. Plain functions over {@link BookingDeps}; SQL in lib/booking/store.
 *
 * Decisions: docs/decisions/0029-shipment-tracking.md.
 */

import type { ServiceBroker } from "moleculer";
import { broadcast, type Caller, type CourierInfo, call } from "../contracts";
import {
	type AwbShipmentView,
	type MarkManifestedParams,
	type PollResult,
	type PushAnswer,
	SANDBOX_EVENTS,
	type SandboxEventAnswer,
	SCAN_LIMIT_DEFAULT,
	SCAN_LIMIT_MAX,
	type TrackingAnswer,
	type TrackingScanView,
} from "../contracts/booking";
import type { SimulatorEvent } from "../contracts/platform";
import {
	adapterFor,
	type CourierAdapter,
	CourierRefused,
	CourierUnavailable,
	type TrackingScan,
} from "../couriers";
import { coalesce } from "../platform/coalesce";
import { type ApiError, fail, validationFailed } from "../platform/errors";
import { countScans } from "../platform/metrics";
import { textProblem } from "../platform/text-rule";
import { parsePositiveInt } from "../shared/fields";
import {
	isLifecycleStatus,
	orderStatusIdOf,
	type ShipmentStatus,
	statusNameOf,
} from "../shared/shipment-status";
import { type BookingDeps, message } from "./deps";
import { claimPush, releasePush } from "./push-replay";
import { deliverNow } from "./relay";
import {
	type AwbScans,
	bookedShipmentByAwb,
	type DueShipment,
	type IngestResult,
	ingestScans,
	latestAttempt,
	leaseDueShipments,
	type ScanSource,
	type SourcedScans,
	scansOf,
	shipmentStatusOf,
	statusEventOf,
	trackedShipment,
} from "./store";

/** Shipments leased per poller round (grouped per courier, then asked in the adapter's batches). */
export const POLL_LEASE = 500;
/** trackMany calls in flight at once during a poll round. */
export const POLL_CONCURRENCY = 4;

/** 404 `order not found` (§7: order detail, tracking…): no such order on the caller's account. */
export function orderNotFound(): ApiError {
	return fail("order not found");
}

/** At most this many concurrent callers' scans are folded in one transaction. */
export const FOLD_MAX_CALLS = 50;

/** How long the active couriers (`rates.listCouriers`) are reused to resolve a webhook's courier code, ms. */
export const COURIER_CACHE_MS = 10_000;

/** One caller's batch in a coalesced fold. */
interface FoldCall {
	batch: SourcedScans[];
}

/** A caller's share of a coalesced fold: its scans accepted, the status changes of its AWBs. */
export interface FoldShare {
	accepted: number;
	applied: number;
}

/** The coalesced fold of each booking service instance (keyed by its broker). */
const folders = new WeakMap<ServiceBroker, (calls: FoldCall[]) => Promise<Map<FoldCall, FoldShare>>>();

/**
 * The coalesced fold of this service instance (lib/platform/coalesce.ts): while one
 * fold transaction runs, the batches of further callers (pushes, poll
 * batches) queue and the next run folds them all in one transaction
 * ({@link ingestScans}), at most {@link FOLD_MAX_CALLS} callers at a time. So
 * concurrent pushes cost one transaction, and never wait on each other's row
 * locks. Each run relays its outbox rows in the background (`deps.finish`)
 * and broadcasts its events ({@link announce}).
 */
function folderOf(deps: BookingDeps): (calls: FoldCall[]) => Promise<Map<FoldCall, FoldShare>> {
	const known = folders.get(deps.broker);
	if (known) return known;
	const folder = coalesce(async (calls: FoldCall[]) => {
		const res = await ingestScans(
			deps.db,
			calls.flatMap((c) => c.batch),
		);
		deps.finish(res.outbox);
		void announce(deps, res);
		if (res.unknown) deps.logger.debug(`tracking: ${res.unknown} scan(s) of unknown AWBs ignored`);
		const shares = new Map<FoldCall, FoldShare>();
		let offset = 0;
		for (const c of calls) {
			const accepted = res.acceptedPerItem.slice(offset, offset + c.batch.length).reduce((n, x) => n + x, 0);
			offset += c.batch.length;
			const mine = new Set(c.batch.map((b) => String(b.awb_number ?? "").trim()));
			shares.set(c, { accepted, applied: res.changes.filter((x) => mine.has(x.awb_number)).length });
		}
		return shares;
	}, FOLD_MAX_CALLS);
	folders.set(deps.broker, folder);
	return folder;
}

/**
 * Folds one batch of scans (coalesced with concurrent callers' into one
 * transaction, {@link folderOf}; the store's `ingestScans`), relays the order
 * updates and lane outcomes in the background and broadcasts
 * `shipment.status_changed` per status change and `shipment.undelivered` per
 * folded undelivered scan. Answers this batch's scans accepted (of shipments
 * we hold, re-sent ones included) and the status changes of its AWBs.
 */
export async function ingest(deps: BookingDeps, batch: AwbScans[], source: ScanSource): Promise<FoldShare> {
	if (!batch.length) return { accepted: 0, applied: 0 };
	countScans(
		source,
		batch.reduce((n, b) => n + b.scans.length, 0),
	);
	const call: FoldCall = { batch: batch.map((b) => ({ ...b, source })) };
	const shares = await folderOf(deps)([call]);
	return shares.get(call) ?? { accepted: 0, applied: 0 };
}

/**
 * Broadcasts the events of a committed fold as Moleculer events (best-effort
 * notifications: a failed broadcast is logged; the durable copy of each
 * status change is its `status_event` outbox row).
 */
async function announce(deps: BookingDeps, res: IngestResult): Promise<void> {
	const sent: Promise<void>[] = [];
	for (const c of res.changes) sent.push(broadcast(deps.broker, "shipment.status_changed", statusEventOf(c)));
	for (const u of res.undelivered) {
		sent.push(
			broadcast(deps.broker, "shipment.undelivered", {
				order_id: u.order_id,
				sender_id: u.sender_id,
				awb_number: u.awb_number,
				logistic_id: u.logistic_id,
				reason: u.reason,
				at: u.at.toISOString(),
			}),
		);
	}
	for (const r of await Promise.allSettled(sent)) {
		if (r.status === "rejected") deps.logger.warn(`tracking event not sent: ${message(r.reason)}`);
	}
}

/** Courier code of the synthetic scan a manifest folds (`booking.scans.courier_code`). */
export const MANIFEST_SCAN_CODE = "MANIFEST";

/**
 * `booking.markManifested` (issue 8; spec §3 manifest row, §6): documents'
 * outbox delivers each manifest's AWBs here after the manifest committed.
 * Folds, in one transaction ({@link ingestScans}, not coalesced: the answer
 * waits for its own commit), one synthetic scan per AWB — status `manifested`,
 * courier code {@link MANIFEST_SCAN_CODE}, courier status `Manifested
 * (<manifest_no>)`, location empty, time `at`, source `manifest` — over the
 * sender's BOOKED shipments only (another sender's, cancelled and unknown AWBs
 * are ignored, nothing stored). The fold never moves backwards: a shipment
 * already picked up (or further) keeps its status (the scan stays in its
 * history); a terminal one never reopens. Each status change writes its
 * intake order update and its `status_event` (the durable
 * `shipment.status_changed`, with `manifest_no`) in that transaction; they
 * are relayed in the background. Idempotent: a redelivery re-inserts nothing
 * (scans are deduplicated on (AWB, time, code, status)), so moves nothing.
 * Answers `{moved}`: shipments whose status this call changed.
 * @throws ApiError 400 `validation_failed` (`at` not a time)
 */
export async function markManifested(deps: BookingDeps, p: MarkManifestedParams): Promise<{ moved: number }> {
	const at = new Date(p.at);
	if (Number.isNaN(at.getTime())) throw validationFailed(["at: must be an ISO-8601 time"]);
	const awbs = [...new Set(p.awb_numbers.map((a) => a.trim()).filter(Boolean))];
	if (!awbs.length) return { moved: 0 };
	const scan = {
		status: "manifested" as const,
		courier_code: MANIFEST_SCAN_CODE,
		courier_status: `Manifested (${p.manifest_no})`,
		location: "",
		at: at.toISOString(),
	};
	const res = await ingestScans(
		deps.db,
		awbs.map((awb_number) => ({
			awb_number,
			scans: [scan],
			source: "manifest" as const,
			sender_id: p.sender_id,
			manifest_no: p.manifest_no,
		})),
	);
	deps.finish(res.outbox);
	void announce(deps, res);
	return { moved: res.changes.length };
}

/**
 * Asks `adapter` about `awbs` (its `trackMany`, one call per
 * `trackBatchSize`) and folds what it answers ({@link ingest}, source
 * `poll`); AWBs the courier does not know are skipped.
 * @throws CourierUnavailable (courier unreachable; nothing folded for that call)
 */
export async function trackAndFold(
	deps: BookingDeps,
	adapter: CourierAdapter,
	awbs: string[],
): Promise<{ calls: number; accepted: number; applied: number }> {
	const out = { calls: 0, accepted: 0, applied: 0 };
	const size = Math.max(1, adapter.trackBatchSize);
	for (let i = 0; i < awbs.length; i += size) {
		const found = await adapter.trackMany(awbs.slice(i, i + size));
		out.calls++;
		const r = await ingest(
			deps,
			[...found].map(([awb_number, scans]) => ({ awb_number, scans })),
			"poll",
		);
		out.accepted += r.accepted;
		out.applied += r.applied;
	}
	return out;
}

/** Per service instance (its broker): the active couriers and until when they are reused (epoch ms). */
const courierCache = new WeakMap<ServiceBroker, { until: number; list: Promise<CourierInfo[]> }>();

/**
 * The active couriers of the rate card (`rates.listCouriers`), read at most
 * once per {@link COURIER_CACHE_MS} per service instance: a webhook resolves
 * its courier code with them. A failed read is not kept (the next push asks
 * again); 503 `service_unavailable` while rates cannot be asked.
 */
function activeCouriers(deps: BookingDeps, via: Caller): Promise<CourierInfo[]> {
	const hit = courierCache.get(deps.broker);
	if (hit && hit.until > Date.now()) return hit.list;
	const list = call(via, "rates.listCouriers", {}, deps.callOptions());
	courierCache.set(deps.broker, { until: Date.now() + COURIER_CACHE_MS, list });
	list.catch(() => courierCache.delete(deps.broker));
	return list;
}

/** The adapter of courier `logistic_id` as `rates.getCourier` describes it; null when gone or without integration. */
async function courierAdapter(
	deps: BookingDeps,
	via: Caller,
	logistic_id: number,
): Promise<{ courier: CourierInfo; adapter: CourierAdapter } | null> {
	const courier = await call(via, "rates.getCourier", { logistic_id }, deps.callOptions());
	if (!courier) return null;
	try {
		return { courier, adapter: adapterFor(courier) };
	} catch {
		return null;
	}
}

/** Runs `work` over `items` with at most `width` in flight. */
async function inLanes<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
	let next = 0;
	await Promise.all(
		Array.from({ length: Math.min(width, items.length) }, async () => {
			for (let i = next++; i < items.length; i = next++) await work(items[i]);
		}),
	);
}

/**
 * One poller pass (the periodic tick every `BOOKING_TRACK_MS`, and the ops
 * action `booking.pollTracking`): leases due open shipments
 * ({@link leaseDueShipments}, {@link POLL_LEASE} at a time, `FOR UPDATE SKIP
 * LOCKED`: several pods share the work, a shipment is asked again only after
 * `BOOKING_TRACK_INTERVAL_MS`), groups them per courier, asks each courier in
 * batches of its `trackBatchSize` ({@link POLL_CONCURRENCY} calls in flight)
 * and folds the answers. A courier that is unreachable or has no integration
 * is logged and counted in `failed`: its shipments are asked again at the
 * next interval. Repeats while full leases come back.
 */
export async function pollOnce(deps: BookingDeps): Promise<PollResult> {
	const total: PollResult = { leased: 0, calls: 0, accepted: 0, applied: 0, failed: 0 };
	for (;;) {
		const due = await leaseDueShipments(deps.db, POLL_LEASE, deps.timings.trackIntervalMs);
		total.leased += due.length;
		const perCourier = new Map<number, DueShipment[]>();
		for (const d of due) {
			const list = perCourier.get(d.logistic_id);
			if (list) list.push(d);
			else perCourier.set(d.logistic_id, [d]);
		}
		const jobs: { adapter: CourierAdapter; awbs: string[] }[] = [];
		for (const [logistic_id, list] of perCourier) {
			let found: { adapter: CourierAdapter } | null = null;
			try {
				found = await courierAdapter(deps, deps.broker, logistic_id);
			} catch (err) {
				deps.logger.warn(`tracking poll: courier ${logistic_id} not resolved: ${message(err)}`);
			}
			if (!found) {
				total.failed++;
				continue;
			}
			const size = Math.max(1, found.adapter.trackBatchSize);
			for (let i = 0; i < list.length; i += size) {
				jobs.push({ adapter: found.adapter, awbs: list.slice(i, i + size).map((d) => d.awb_number) });
			}
		}
		await inLanes(jobs, POLL_CONCURRENCY, async (job) => {
			try {
				const r = await trackAndFold(deps, job.adapter, job.awbs);
				total.calls += r.calls;
				total.accepted += r.accepted;
				total.applied += r.applied;
			} catch (err) {
				total.failed++;
				deps.logger.warn(`tracking poll: ${job.awbs.length} shipment(s) not tracked: ${message(err)}`);
			}
		});
		if (due.length < POLL_LEASE || deps.stopping()) break;
	}
	return total;
}

/** The text fields of a pushed scan checked by the text rule, with the names the push body gives them (Delhivery's push shape). */
const PUSHED_TEXT: ReadonlyArray<[keyof TrackingScan, string]> = [
	["courier_status", "Status.Status"],
	["courier_code", "Status.StatusCode"],
	["location", "Status.StatusLocation"],
	["remarks", "Status.Instructions"],
];

/**
 * The `details` refusing a parsed push whose text breaks the system's one
 * text rule (lib/platform/text-rule.ts, issue 31: a control character other than TAB /
 * LF / CR, e.g. U+0000, which PostgreSQL stores in no text column; an
 * unpaired surrogate): one per field, naming the push body's field, e.g.
 * `body: Shipment.AWB must not contain control characters`; empty when the
 * batch is clean. A newline in a courier's instructions is the courier's
 * words and kept (docs/decisions/0078-sandbox-scan-signatures.md).
 */
export function textFieldsOfPush(batch: AwbScans[]): string[] {
	const out = new Set<string>();
	for (const { awb_number, scans } of batch) {
		const bad = textProblem(awb_number);
		if (bad) out.add(`body: Shipment.AWB ${bad}`);
		for (const scan of scans)
			for (const [key, name] of PUSHED_TEXT) {
				const v = scan[key];
				const p = typeof v === "string" ? textProblem(v) : undefined;
				if (p) out.add(`body: Shipment.${name} ${p}`);
			}
	}
	return [...out];
}

/**
 * `POST /v1/tracking/webhooks/{courier}` (ours;
 * docs/decisions/0029-shipment-tracking.md,
 * docs/decisions/0078-sandbox-scan-signatures.md): a courier pushes scans.
 * `courier` is the courier's code on the rate card (`rates.listCouriers`, e.g.
 * `sbx-express`); `body` the raw request body, base64; `headers` the request
 * headers, lower-cased. The adapter checks the signature on the raw bytes
 * (`verifyPush`: for the sandbox couriers a timestamped HMAC at most 5 minutes
 * old; no key configured refuses every push) before anything is read, then parses
 * (`parsePush`); a push whose text fields break the text rule (U+0000…) is
 * refused whole ({@link textFieldsOfPush}); a push whose adapter names a
 * replay key is claimed once (lib/booking/push-replay.ts) and the scans are
 * folded ({@link ingest}, source `push`). Answers `{accepted, applied}` (see
 * {@link PushAnswer}); scans of AWBs we do not hold are ignored (accepted 0).
 *
 * Errors: 404 `not_found` (no active courier with that code, or one without
 * an integration); 401 `invalid_signature` (missing, wrong or stale
 * signature, no key configured, or a push already received); 400
 * `validation_failed` (a body the adapter cannot read, or a text field breaking the text rule, e.g. NUL; the
 * words in `details`); 503 `service_unavailable` (rates unreachable).
 */
export async function courierPush(
	deps: BookingDeps,
	via: Caller,
	p: { courier: string; body: string; headers: Record<string, string> },
): Promise<PushAnswer> {
	const courier = (await activeCouriers(deps, via)).find((c) => c.code === p.courier);
	let adapter: CourierAdapter | null = null;
	try {
		adapter = courier ? adapterFor(courier) : null;
	} catch {
		adapter = null;
	}
	if (!adapter) throw fail("not_found", { courier: p.courier });
	const raw = Buffer.from(p.body, "base64");
	if (!adapter.verifyPush(raw, p.headers)) {
		throw fail("invalid_signature", "mismatch");
	}
	let batch: AwbScans[];
	try {
		batch = adapter.parsePush(raw);
	} catch (err) {
		if (err instanceof CourierRefused) throw validationFailed([`body: ${err.message}`]);
		throw err;
	}
	const nul = textFieldsOfPush(batch);
	if (nul.length) throw validationFailed(nul);
	const key = adapter.pushReplayKey?.(p.headers) ?? null;
	if (key !== null && !(await claimPush(deps.db, p.courier, key))) throw fail("invalid_signature", "replay");
	try {
		return await ingest(deps, batch, "push");
	} catch (err) {
		if (key !== null) await releasePush(deps.db, p.courier, key);
		throw err;
	}
}

/** Validated input of `POST /v1/sandbox/orders/{order_id}/events`. */
export interface SandboxEventInput {
	order_id: number;
	event: SimulatorEvent;
	reason?: string;
}

/**
 * Validates the sandbox event: path `order_id` a positive integer; body
 * `event` one of {@link SANDBOX_EVENTS}; `reason` a string of at most 255
 * characters, required (non-blank) for `undelivered`.
 * @throws ApiError 400 `validation_failed` with one detail per bad field
 */
export function parseSandboxEvent(params: Record<string, unknown>): SandboxEventInput {
	const details: string[] = [];
	const order_id = parsePositiveInt(params.order_id, { trim: false });
	if (order_id === null) details.push("order_id: must be a positive integer");
	const event = params.event;
	const known = typeof event === "string" && (SANDBOX_EVENTS as readonly string[]).includes(event);
	if (!known) details.push(`event: must be one of ${SANDBOX_EVENTS.join(", ")}`);
	let reason: string | undefined;
	if (params.reason !== undefined && params.reason !== null) {
		if (typeof params.reason !== "string" || params.reason.trim().length > 255) {
			details.push("reason: must be a string of at most 255 characters");
		} else if (params.reason.trim()) reason = params.reason.trim();
	}
	if (event === "undelivered" && reason === undefined && !details.some((d) => d.startsWith("reason"))) {
		details.push("reason: required for undelivered (the failed-delivery reason)");
	}
	if (details.length || order_id === null || !known) throw validationFailed(details);
	return { order_id, event: event as SimulatorEvent, ...(reason ? { reason } : {}) };
}

/**
 * `POST /v1/sandbox/orders/{order_id}/events` (docs/ARCHITECTURE.md §4; issue
 * 7): the simulator emits the scan for the order's booked AWB
 * (`simulator.emitScan`), then that AWB is polled at once through its adapter
 * ({@link trackAndFold}, the poller's path; pushes, if configured, race it
 * harmlessly: scans are deduplicated) and its order updates relayed before
 * the answer, which carries the folded status.
 *
 * Errors: 404 `not_found` unless `SANDBOX=1` (the route does not exist);
 * 400 `validation_failed` ({@link parseSandboxEvent}); 404 `order not found`
 * (missing or another account's); 409 `not_booked` (the order's latest
 * booking holds no live AWB); 409 `not_sandbox_courier` (booked with a courier
 * that is not a sandbox one); 503 `courier_unavailable` (the courier could not
 * be asked back: the poller folds the scan later), `service_unavailable`.
 */
export async function sandboxEvent(
	deps: BookingDeps,
	via: Caller,
	sender: number,
	input: SandboxEventInput,
): Promise<SandboxEventAnswer> {
	const { order_id } = input;
	const order = await call(via, "intake.getOrder", { sender_id: sender, order_id }, deps.callOptions());
	if (!order || Number(order.sender_id) !== sender) throw orderNotFound();
	const a = await latestAttempt(deps.db, sender, order_id);
	if (a?.state !== "booked" || !a.awb_number) {
		throw fail("not_booked", order_id);
	}
	const awb_number = a.awb_number;
	const found = await courierAdapter(deps, via, a.logistic_id);
	if (found?.courier.adapter !== "sandbox") {
		throw fail("not_sandbox_courier", order_id, a.courier_name);
	}
	await call(
		via,
		"simulator.emitScan",
		{ awb_number, event: input.event, ...(input.reason ? { reason: input.reason } : {}) },
		deps.callOptions(),
	);
	// not coalesced: this answer waits for its own order update to reach intake
	let res: IngestResult;
	try {
		const answer = await found.adapter.trackMany([awb_number]);
		res = await ingestScans(
			deps.db,
			[...answer].map(([awb, scans]) => ({ awb_number: awb, scans, source: "poll" as const })),
		);
	} catch (err) {
		if (!(err instanceof CourierUnavailable)) throw err;
		throw fail("courier_unavailable", { scan: a.courier_name });
	}
	await deliverNow(deps, a.attempt_id, res.outbox);
	void announce(deps, res);
	const now = await shipmentStatusOf(deps.db, a.attempt_id);
	const status: ShipmentStatus =
		now?.state === "cancelled" ? "cancelled" : (now?.shipment_status ?? "booked");
	return { order_id, awb_number, event: input.event, status, status_name: statusNameOf(status) };
}

/** Validated query of `GET /v1/orders/{id}/tracking`. */
export interface TrackingQuery {
	order_id: number;
	scan_limit: number;
}

/**
 * Validates the tracking read: path `id` a positive integer; query
 * `scan_limit` an integer from 1 to {@link SCAN_LIMIT_MAX} (absent or empty:
 * {@link SCAN_LIMIT_DEFAULT}).
 * @throws ApiError 400 `validation_failed` with one detail per bad field
 */
export function parseTrackingQuery(params: Record<string, unknown>): TrackingQuery {
	const details: string[] = [];
	const order_id = parsePositiveInt(params.id, { trim: false });
	if (order_id === null) details.push("id: must be a positive integer");
	let scan_limit: number | null = SCAN_LIMIT_DEFAULT;
	if (params.scan_limit !== undefined && params.scan_limit !== "") {
		scan_limit = parsePositiveInt(params.scan_limit, { trim: false });
		if (scan_limit === null || scan_limit > SCAN_LIMIT_MAX) {
			details.push(`scan_limit: must be an integer from 1 to ${SCAN_LIMIT_MAX}`);
		}
	}
	if (details.length || order_id === null || scan_limit === null) throw validationFailed(details);
	return { order_id, scan_limit };
}

/**
 * `GET /v1/orders/{id}/tracking` (§2.6, §4.3): the scans of the order's
 * current shipment (its latest booking, when it holds an AWB: booked, or
 * cancelled), oldest first, capped at `scan_limit` keeping the NEWEST
 * (`truncated` when older ones were left out); `status_name` and
 * `order_status_id` of that shipment's folded status (cancelled for a
 * cancelled booking), else of the order's status as intake holds it (never
 * booked, booking in progress or failed: no scans). A status this build does
 * not know answers its own string and id 0.
 * @throws ApiError 404 `order not found` (missing or another account's), 503 `service_unavailable`
 */
export async function trackingOf(
	deps: BookingDeps,
	via: Caller,
	sender: number,
	q: TrackingQuery,
): Promise<TrackingAnswer> {
	const [order, shipment] = await Promise.all([
		call(via, "intake.getOrder", { sender_id: sender, order_id: q.order_id }, deps.callOptions()),
		trackedShipment(deps.db, sender, q.order_id),
	]);
	if (!order || Number(order.sender_id) !== sender) throw orderNotFound();
	const status: string = !shipment
		? order.status
		: shipment.state === "cancelled"
			? "cancelled"
			: (shipment.shipment_status ?? "booked");
	let scans: TrackingScanView[] = [];
	let truncated = false;
	if (shipment) {
		const read = await scansOf(deps.db, shipment.attempt_id, q.scan_limit);
		truncated = read.truncated;
		scans = read.scans.map((s) => ({
			at: new Date(s.at).toISOString(),
			location: s.location,
			status: s.status,
			status_name: statusNameOf(s.status),
			courier_code: s.courier_code,
			courier_status: s.courier_status,
			remarks: s.remarks,
		}));
	}
	const known = isLifecycleStatus(status);
	return {
		scans,
		truncated,
		scan_limit: q.scan_limit,
		status_name: known ? statusNameOf(status) : status,
		order_status_id: known ? orderStatusIdOf(status) : 0,
	};
}

/**
 * `booking.shipmentByAwb` (the buyer's tracking page, issue 29;
 * docs/decisions/0108-buyer-tracking-page.md): the live booked shipment holding `awb_number`
 * — its account and order (for the page's brand and the AWB look-up's phone check), courier,
 * folded status, promised delivery date and newest `scan_limit` scans (oldest first) — or
 * null when no live booking holds it (unknown, cancelled, failed). Nothing about the buyer.
 */
export async function shipmentByAwb(
	deps: BookingDeps,
	awb_number: string,
	scan_limit: number,
): Promise<AwbShipmentView | null> {
	const row = await bookedShipmentByAwb(deps.db, awb_number);
	if (!row) return null;
	const { scans } = await scansOf(deps.db, Number(row.attempt_id), scan_limit);
	const at = row.shipment_status_at ?? row.booked_at;
	return {
		sender_id: Number(row.sender_id),
		order_id: Number(row.order_id),
		awb_number,
		logistic_id: row.logistic_id,
		courier_name: row.courier_name,
		status: row.shipment_status ?? "booked",
		status_at: at ? new Date(at).toISOString() : null,
		edd: row.edd,
		scans: scans.map((s) => ({ at: new Date(s.at).toISOString(), location: s.location, status: s.status })),
	};
}
