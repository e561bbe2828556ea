/**
 * The operations behind the `rates` actions and events (spec §4.2
 * serviceable, §2.7 rate quote and `performance`, §2.8 coverage): the
 * in-memory catalog snapshot and its reload, the pincode facts behind their
 * LRU/TTL cache, quotes, courier reads, lane outcomes. Plain functions over
 * {@link RatesDeps}; the serviceability sync is in ./sync.ts. SQL in
 * ./store.ts, ./catalog.ts and ./serviceability.ts.
 *
 * Hot path (`rates.serviceable`, `rates.quote`): no database query, the
 * catalog snapshot in memory and one `pincode.lookupMany` call per quote for
 * the pincodes not cached.
 */
import {
	broadcast,
	type Caller,
	type CourierInfo,
	call,
	type EddAnswer,
	type LaneOutcomeParams,
	type PaymentMode,
	type PincodeInfo,
	type QuoteResult,
	type ResultOf,
	type ShipmentDirection,
} from "../contracts";
import { ApiError, failWith } from "../platform/errors";
import { shareAnswer } from "../platform/shared-answers";
import { nextCutoff, nextPickupDay } from "../shared/calendar";
import { type CatalogSnapshot, courierInfo, laneKey, lanePerformanceOf } from "./catalog";
import type { RatesDeps } from "./deps";
import { unavailable } from "./deps";
import { type LaneQuery, quoteLane } from "./quote";
import { readSyncStatus } from "./serviceability";
import { recordLaneOutcome } from "./store";

/** The in-memory catalog, loading it if needed; 503 `rate_unavailable` if it cannot be read. */
export async function getCatalog(d: RatesDeps): Promise<CatalogSnapshot> {
	return d.catalog ?? reloadCatalog(d);
}

/**
 * Reads a fresh catalog (a read started after this call; concurrent callers
 * share it) and swaps it in; 503 `rate_unavailable` on failure (old catalog kept).
 */
export async function reloadCatalog(d: RatesDeps): Promise<CatalogSnapshot> {
	try {
		d.catalog = await d.catalogLoader.load();
		return d.catalog;
	} catch (err) {
		d.logger.error("rates catalog unavailable", (err as Error).message);
		throw unavailable();
	}
}

/**
 * Pincode facts of `pins` (six-digit strings): cached ones from the LRU,
 * the rest with one `pincode.lookupMany` call (timeout
 * `settings.pincodeTimeoutMs`). 503 `rate_unavailable` when the pincode
 * service fails (any error, its own 502 included) or cannot be reached.
 */
export async function pincodeFacts(
	d: RatesDeps,
	ctx: Caller,
	pins: string[],
): Promise<Record<string, PincodeInfo>> {
	const out: Record<string, PincodeInfo> = {};
	const missing: string[] = [];
	for (const p of new Set(pins)) {
		const hit = d.pincodeCache.get(p);
		if (hit) out[p] = hit;
		else missing.push(p);
	}
	if (missing.length) {
		let res: Record<string, PincodeInfo>;
		try {
			res = await call(
				ctx,
				"pincode.lookupMany",
				{ pincodes: missing },
				{ timeout: d.settings.pincodeTimeoutMs, unavailable: false },
			);
		} catch (err) {
			d.logger.warn("pincode facts unavailable", (err as Error).message);
			throw unavailable();
		}
		for (const p of missing) {
			const info = res?.[p];
			if (!info || typeof info.found !== "boolean") throw unavailable();
			d.pincodeCache.set(p, info);
			out[p] = info;
		}
	}
	return out;
}

/**
 * Prices a parsed lane query against the cached catalog (`rates.quote`, and `rates.serviceable` through
 * {@link serviceableQuote}): never throws `lane_not_priced` (an unpriced lane answers `data: []`);
 * 503 `rate_unavailable` on an unexpected failure.
 *
 * The answer is kept (frozen: callers share it) and given again for the same query while the catalog snapshot
 * and both pincodes' cached facts are the same objects, until the earliest next cut-off of the couriers it
 * prices (their `edd` and pickup day move then) or the next full hour, whichever comes first: the rule of the EDD
 * answers (docs/decisions/0106-working-days-and-edd.md; issue 32, docs/decisions/0116-kept-quotes.md). A lane
 * outcome recorded into the snapshot ({@link recordOutcome}) forgets every kept answer.
 */
export async function runQuote(d: RatesDeps, ctx: Caller, q: LaneQuery): Promise<QuoteResult> {
	const key = laneKeyOf(q);
	return keptQuote(d, q, key) ?? quoteAnew(d, ctx, q, key);
}

/**
 * {@link runQuote} past its synchronous look ({@link keptQuote} found nothing under `key`, `JSON.stringify(q)`):
 * loads the catalog and both pincodes' facts, looks again, else prices the lane and keeps the answer.
 */
async function quoteAnew(d: RatesDeps, ctx: Caller, q: LaneQuery, key: string): Promise<QuoteResult> {
	const [snap, facts] = await Promise.all([getCatalog(d), pincodeFacts(d, ctx, [q.from_pin, q.to_pin])]);
	const from = facts[q.from_pin];
	const to = facts[q.to_pin];
	const now = Date.now();
	// a concurrent identical query may have kept its answer while this one awaited
	const again = keptAnswer(key, snap, from, to, now);
	if (again) return again;
	let result: QuoteResult;
	try {
		result = quoteLane(snap, from, to, q, new Date(now));
	} catch (err) {
		if (err instanceof ApiError) throw err;
		d.logger.error("quote failed", (err as Error).message);
		throw unavailable();
	}
	if (quoteAnswers.size >= QUOTE_CACHE_MAX) quoteAnswers.clear();
	quoteAnswers.set(key, {
		snap,
		from,
		to,
		result: shareAnswer(result),
		until: quoteValidUntil(snap, result, now),
	});
	return result;
}

/**
 * The answer {@link runQuote} keeps for `q`, when it holds now, found without awaiting anything: the catalog
 * snapshot it was made from is the one loaded, both pincodes' cached facts are the objects it was made from
 * (their recency refreshed, as {@link pincodeFacts} refreshes it), and its `until` has not passed. Else
 * `undefined`, and {@link runQuote} goes the whole way (loads what is missing, checks again, prices). `key` is the
 * query's key, `JSON.stringify(q)`, when the caller already made it.
 */
export function keptQuote(d: RatesDeps, q: LaneQuery, key = laneKeyOf(q)): QuoteResult | undefined {
	const snap = d.catalog;
	if (!snap) return undefined;
	const from = d.pincodeCache.get(q.from_pin);
	const to = d.pincodeCache.get(q.to_pin);
	return from && to ? keptAnswer(key, snap, from, to, Date.now()) : undefined;
}

/**
 * The key of `q` among kept answers, `JSON.stringify(q)`: made once for a frozen query (a parsed serviceable query is
 * given again for the same values: lib/rates/params.ts) and kept while it lives, made each time for any other.
 */
function laneKeyOf(q: LaneQuery): string {
	let key = laneKeys.get(q);
	if (key === undefined) {
		key = JSON.stringify(q);
		if (Object.isFrozen(q)) laneKeys.set(q, key);
	}
	return key;
}

/** The keys of frozen lane queries ({@link laneKeyOf}). */
const laneKeys = new WeakMap<LaneQuery, string>();

/** The kept answer under `key` when it was made from `snap`, `from` and `to` and holds at `now` (epoch ms). */
function keptAnswer(
	key: string,
	snap: CatalogSnapshot,
	from: PincodeInfo,
	to: PincodeInfo,
	now: number,
): QuoteResult | undefined {
	const hit = quoteAnswers.get(key);
	return hit && hit.snap === snap && hit.from === from && hit.to === to && now < hit.until
		? hit.result
		: undefined;
}

/** Largest number of kept quote answers (distinct queries) before the store starts over. */
const QUOTE_CACHE_MAX = 20_000;

/** The quote answers already made, by query ({@link runQuote}). */
const quoteAnswers = new Map<
	string,
	{ snap: CatalogSnapshot; from: PincodeInfo; to: PincodeInfo; result: QuoteResult; until: number }
>();

/**
 * Until when (ms since epoch) a quote `result` made at `now` (ms since epoch) from `snap` holds: the next full hour
 * (UTC), or an earlier next cut-off of a courier it prices.
 */
export function quoteValidUntil(snap: CatalogSnapshot, result: QuoteResult, now: number): number {
	let until = nextFullHour(now);
	const at = new Date(now);
	for (const row of result.data) {
		const courier = snap.byId.get(row.logistic_id);
		if (courier) until = Math.min(until, Date.parse(nextCutoff(courier.pickup, at)));
	}
	return until;
}

/** The next full hour (UTC) after `now` (both epoch ms): how long a kept EDD answer or quote holds at most. */
function nextFullHour(now: number): number {
	return Math.ceil((now + 1) / (EDD_MAX_AGE_S * 1000)) * EDD_MAX_AGE_S * 1000;
}

/**
 * `rates.serviceable` (spec §4.2): {@link runQuote}, and 422
 * `{error:"lane_not_priced", message, dropped_couriers}` when no courier
 * prices the lane (the message names an unknown pincode when that is why).
 * A kept answer that holds ({@link keptQuote}) is answered at once, not as a promise (issue 32).
 * @throws ApiError 422 `lane_not_priced` (synchronously for a kept answer); the promise rejects with what
 *   {@link runQuote} throws
 */
export function serviceableQuote(
	d: RatesDeps,
	ctx: Caller,
	q: LaneQuery,
): QuoteResult | Promise<QuoteResult> {
	const key = laneKeyOf(q);
	const kept = keptQuote(d, q, key);
	if (kept) return servedLane(kept, q);
	return quoteAnew(d, ctx, q, key).then((res) => servedLane(res, q));
}

/** `res` when it prices the lane; else 422 `lane_not_priced` ({@link serviceableQuote}). */
function servedLane(res: QuoteResult, q: LaneQuery): QuoteResult {
	if (res.data.length === 0) {
		const unknown = res.dropped_couriers.find((x) => x.reason === "unknown_pincode");
		const message = unknown
			? `No courier prices this lane: ${unknown.detail}`
			: `No courier on the rate card prices ${q.from_pin} → ${q.to_pin}`;
		throw failWith("lane_not_priced", { dropped_couriers: res.dropped_couriers }, message);
	}
	return res;
}

/** Longest lifetime of a cached EDD answer (s): the next cut-off, at most an hour away. */
export const EDD_MAX_AGE_S = 3600;

/**
 * `GET /v1/shipping/edd` (ours; issue 28; docs/decisions/0106-working-days-and-edd.md):
 * the earliest `edd` among the rows of a 0.5 kg forward quote of the lane
 * (ties: the earlier `min_days`, then the quote's order), with the pickup day
 * it assumes and `valid_until` (that courier's next cut-off, or the next
 * full hour (UTC) when that comes first, so an answer and its ETag are stable
 * within the hour). A lane no courier serves answers `serviceable: false`,
 * nulls, and `valid_until` the next full hour.
 * @throws 503 `rate_unavailable` (pincode directory or catalog unreachable)
 */
export async function earliestDelivery(
	d: RatesDeps,
	ctx: Caller,
	q: { from_pin: string; to_pin: string; payment_mode?: PaymentMode | null },
	now: Date = new Date(),
): Promise<EddAnswer> {
	const payment_mode: PaymentMode = q.payment_mode === "cod" ? "cod" : "prepaid";
	const key = `${q.from_pin}|${q.to_pin}|${payment_mode}`;
	const snap = await getCatalog(d);
	const hit = eddAnswers.get(key);
	if (hit && hit.snap === snap && now.getTime() < hit.until) return hit.answer;
	const facts = await pincodeFacts(d, ctx, [q.from_pin, q.to_pin]);
	const res = quoteLane(
		snap,
		facts[q.from_pin],
		facts[q.to_pin],
		{
			from_pin: q.from_pin,
			to_pin: q.to_pin,
			physical_weight: 0.5,
			volumetric_weight: 0,
			payment_mode,
			cod_amount: 0,
			direction: "forward",
		},
		now,
	);
	let best: (typeof res.data)[number] | null = null;
	for (const row of res.data) {
		if (!row.edd || !row.edd_range) continue;
		if (
			!best?.edd ||
			row.edd < best.edd ||
			(row.edd === best.edd && row.edd_range.min_days < (best.edd_range?.min_days ?? Infinity))
		)
			best = row;
	}
	// at most the next full hour (UTC): the answer, and its ETag, stay the same until then
	const cap = nextFullHour(now.getTime());
	const courier = best ? snap.byId.get(best.logistic_id) : undefined;
	const cutoff = courier ? Date.parse(nextCutoff(courier.pickup, now)) : cap;
	const pickup = courier ? nextPickupDay(courier.pickup, facts[q.from_pin].state, now) : null;
	const until = Math.min(cutoff, cap);
	const answer: EddAnswer = {
		from_pin: q.from_pin,
		to_pin: q.to_pin,
		payment_mode,
		serviceable: best !== null,
		edd: best?.edd ?? null,
		edd_range: best?.edd_range ?? null,
		logistic_id: best?.logistic_id ?? null,
		courier_name: best?.courier_name ?? null,
		pickup_date: pickup,
		valid_until: new Date(until).toISOString(),
	};
	if (eddAnswers.size >= EDD_CACHE_MAX) eddAnswers.clear();
	// frozen and marked: every caller gets this object until `until`; the gateway encodes it once
	eddAnswers.set(key, { snap, answer: shareAnswer(answer), until });
	return answer;
}

/** Largest number of cached EDD answers (lanes × payment modes) kept before the cache starts over. */
const EDD_CACHE_MAX = 20_000;

/**
 * The EDD answers already made, by lane and payment mode: each holds until
 * its `valid_until` (the next cut-off or full hour) or a new catalog
 * snapshot, so a storefront's repeated question is answered from memory.
 */
const eddAnswers = new Map<string, { snap: CatalogSnapshot; answer: EddAnswer; until: number }>();

/**
 * Active couriers by default priority (then logistic_id) doing `dir`
 * (forward shipments / reverse pickups; undefined → all), as CourierInfo[].
 */
export async function listCouriers(d: RatesDeps, dir: ShipmentDirection | undefined): Promise<CourierInfo[]> {
	const snap = await getCatalog(d);
	return snap.couriers
		.filter((c) => c.active && (dir === undefined || (dir === "forward" ? c.forward : c.reverse)))
		.map(courierInfo);
}

/** One courier (active or not) by `logisticId`, or null. */
export async function findCourier(d: RatesDeps, logisticId: number): Promise<CourierInfo | null> {
	const c = (await getCatalog(d)).byId.get(logisticId);
	return c ? courierInfo(c) : null;
}

/** `rates.coverage`: the cached coverage of `direction` over the current catalog (./coverage.ts). */
export async function coverage(
	d: RatesDeps,
	direction: ShipmentDirection,
): Promise<ResultOf<"rates.coverage">> {
	return d.coverageCache.get(await getCatalog(d), direction);
}

/**
 * `rates.recordLaneOutcome` (spec §2.7 `performance`; issue 7): records
 * outcome `p` once per `attempt_id` (./store.ts) and puts the lane's new
 * counters into this instance's snapshot. `{recorded: false}` for a repeat
 * or an unknown courier (logged); 503 `rate_unavailable` when the database
 * cannot be reached.
 */
export async function recordOutcome(d: RatesDeps, p: LaneOutcomeParams): Promise<{ recorded: boolean }> {
	let lane: Awaited<ReturnType<typeof recordLaneOutcome>>;
	try {
		lane = await recordLaneOutcome(d.db, p);
	} catch (err) {
		// no such courier in the database (the snapshot may lag a new one, so the database decides)
		// (a courier removed since the shipment was booked: nothing to count it into; answering
		// `recorded:false` lets booking's outbox deliver the row instead of retrying it forever)
		if ((err as Error).name === "SequelizeForeignKeyConstraintError") {
			d.logger.warn(`lane outcome of attempt ${p.attempt_id} not recorded: unknown courier ${p.logistic_id}`);
			return { recorded: false };
		}
		d.logger.error("lane outcome not recorded", (err as Error).message);
		throw unavailable();
	}
	if (!lane) return { recorded: false };
	const perf = lanePerformanceOf(lane);
	// into the snapshot in use now (none loaded yet: its first load reads the lane); counters only
	// grow, so an answer that raced a later one never replaces it
	const cur = d.catalog;
	const key = laneKey(p.logistic_id, p.from_pin, p.to_pin);
	const held = cur?.performance.get(key);
	if (cur && perf && (!held || held.shipments <= perf.shipments)) {
		cur.performance.set(key, perf);
		// kept quotes answered the lane's old performance
		quoteAnswers.clear();
	}
	return { recorded: true };
}

/**
 * `rates.reload`: re-reads the catalog, clears the pincode cache and
 * broadcasts `rates.changed`; answers the counts. 503 `rate_unavailable`
 * (nothing broadcast, previous catalog kept) when the read fails.
 */
export async function reloadEverywhere(d: RatesDeps, ctx: Caller): Promise<ResultOf<"rates.reload">> {
	const snap = await reloadCatalog(d);
	d.pincodeCache.clear();
	await broadcast(ctx, "rates.changed", {});
	return { couriers: snap.couriers.length, rate_cards: snap.cards.size, lanes: snap.performance.size };
}

/**
 * Another rates instance changed the catalog: drop the cached pincode facts
 * and reload (a failed read is logged by {@link reloadCatalog}; the previous
 * catalog stays).
 */
export async function catalogChanged(d: RatesDeps): Promise<void> {
	d.pincodeCache.clear();
	await reloadCatalog(d).catch(() => undefined);
}

/** The pincode directory or its zone facts were reloaded: drop the cached pincode facts and coverage. */
export function pincodesChanged(d: RatesDeps): void {
	d.pincodeCache.clear();
	d.coverageCache.clearPincodes();
}

/** `rates.serviceabilityStatus`: the last sync of every courier; 503 `rate_unavailable` when unreadable. */
export async function serviceabilityStatus(d: RatesDeps): Promise<ResultOf<"rates.serviceabilityStatus">> {
	try {
		return { couriers: await readSyncStatus(d.db) };
	} catch (err) {
		d.logger.error("serviceability status unavailable", (err as Error).message);
		throw unavailable();
	}
}
