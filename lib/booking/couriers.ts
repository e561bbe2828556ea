/**
 * Per-account courier rankings at the HTTP edge (spec §2.8, §4.2, §7):
 * `GET /v1/shipping/couriers` and `PATCH /v1/shipping/couriers/priority`.
 * The spec's `shipment_type` numbers exist only here (0 forward, 1 or 2
 * reverse); inside, a {@link ShipmentDirection}. Inner shapes of `strategy`,
 * `rules` and `restrictions` are ours
 * (docs/decisions/0019-courier-rankings.md).
 */
import type { Sequelize } from "sequelize";
import {
	type Caller,
	type CallOptions,
	type CourierInfo,
	type CourierLimits,
	type CouriersAnswer,
	call,
	directionOf,
	MAX_RANKING,
	SHIPMENT_TYPE_MSG,
	type ShipmentDirection,
} from "../contracts";
import { fail, failWith, validationFailed } from "../platform/errors";
import { isPlainObject, parsePositiveInt } from "../shared/fields";
import { accountRanking } from "./ranking";
import { bookedLast30Days, type RankingRow, replaceRanking } from "./store/rankings";

/** A `shipment_type` as the spec numbers it. */
export type ShipmentType = 0 | 1 | 2;

/** What a couriers answer is built for: the direction and the `shipment_type` asked (echoed in `strategy`). */
export interface RankingScope {
	direction: ShipmentDirection;
	shipment_type: ShipmentType;
}

/**
 * The `shipment_type` query of `GET /v1/shipping/couriers`: absent → 0
 * (forward); `0` forward, `1` or `2` reverse (a query string or a JSON
 * number, surrounding whitespace ignored: lib/contracts `directionOf`).
 * @throws ApiError 400 `shipment_type must be 0 (forward), 1 or 2 (reverse)` for anything else (an empty value too)
 */
export function couriersQuery(params: Record<string, unknown> | null | undefined): RankingScope {
	const v = params?.shipment_type;
	if (v === undefined) return { direction: "forward", shipment_type: 0 };
	const direction = directionOf(v);
	if (!direction) throw fail(SHIPMENT_TYPE_MSG);
	return { direction, shipment_type: Number(typeof v === "string" ? v.trim() : v) as ShipmentType };
}

/** A parsed `PATCH /v1/shipping/couriers/priority` body. */
export interface PriorityInput extends RankingScope {
	order: RankingRow[];
}

/** `0` / `1` as a JSON integer or a digit string; undefined otherwise. */
function zeroOrOne(v: unknown): 0 | 1 | undefined {
	if (v === 0 || v === "0") return 0;
	if (v === 1 || v === "1") return 1;
	return undefined;
}

/**
 * Validates the PATCH body `{shipment_type: 0|1, order: [{logistic_id, priority}]}`
 * (ids and priorities JSON integers or digit strings; other keys, `sender_id`
 * included, ignored). Only the shape: whether the order fits the card is
 * {@link checkRanking}'s job.
 * @throws ApiError 400 `validation_failed` with `details` such as
 *   `shipment_type: must be 0 (forward) or 1 (reverse)`, `order: is required`,
 *   `order: must be a non-empty array of {logistic_id, priority}`,
 *   `order: at most 100 couriers`, `order[2].priority: must be a positive integer`
 */
export function parsePriorityBody(body: unknown): PriorityInput {
	const b = isPlainObject(body) ? body : {};
	const details: string[] = [];
	const st = zeroOrOne(b.shipment_type);
	if (b.shipment_type === undefined || b.shipment_type === null) details.push("shipment_type: is required");
	else if (st === undefined) details.push("shipment_type: must be 0 (forward) or 1 (reverse)");
	const order: RankingRow[] = [];
	if (b.order === undefined || b.order === null) details.push("order: is required");
	else if (!Array.isArray(b.order) || b.order.length === 0)
		details.push("order: must be a non-empty array of {logistic_id, priority}");
	else if (b.order.length > MAX_RANKING) details.push(`order: at most ${MAX_RANKING} couriers`);
	else {
		b.order.forEach((item: unknown, i: number) => {
			if (!isPlainObject(item)) {
				details.push(`order[${i}]: must be an object {logistic_id, priority}`);
				return;
			}
			const logistic_id = parsePositiveInt(item.logistic_id, { trim: false });
			const priority = parsePositiveInt(item.priority, { trim: false });
			if (logistic_id === null) details.push(`order[${i}].logistic_id: must be a positive integer`);
			if (priority === null) details.push(`order[${i}].priority: must be a positive integer`);
			if (logistic_id !== null && priority !== null) order.push({ logistic_id, priority });
		});
	}
	if (details.length || st === undefined) throw validationFailed(details);
	return { direction: st === 0 ? "forward" : "reverse", shipment_type: st, order };
}

const idList = (ids: Iterable<number>) => [...ids].sort((a, b) => a - b);

/**
 * Checks a new ranking against `card` (the active couriers of the direction),
 * in this order (reorder only, spec §4.2):
 * @throws ApiError 400 `duplicate_logistic` `{logistic_ids}`: a courier listed more than once
 * @throws ApiError 400 `unknown_logistic` `{logistic_ids}`: a courier not on the active card for the direction
 * @throws ApiError 400 `incomplete_ranking` `{missing}`: a courier of the card left out
 * @throws ApiError 400 `incomplete_ranking` `{priorities}`: priorities not a permutation of 1..n
 *   (the message names the out-of-range and repeated values)
 */
export function checkRanking(card: CourierInfo[], order: RankingRow[], direction: ShipmentDirection): void {
	const seen = new Set<number>();
	const dup = new Set<number>();
	for (const r of order) (seen.has(r.logistic_id) ? dup : seen).add(r.logistic_id);
	if (dup.size) {
		const ids = idList(dup);
		throw failWith("duplicate_logistic", { logistic_ids: ids }, ids);
	}
	const onCard = new Map(card.map((c) => [c.logistic_id, c]));
	const unknown = idList(order.map((r) => r.logistic_id).filter((id) => !onCard.has(id)));
	if (unknown.length) {
		throw failWith("unknown_logistic", { logistic_ids: unknown }, unknown, direction);
	}
	const missing = card.filter((c) => !seen.has(c.logistic_id));
	if (missing.length) {
		const names = missing.map((c) => `${c.logistic_id} (${c.logistic_name})`).join(", ");
		throw failWith(
			"incomplete_ranking",
			{ missing: missing.map((c) => c.logistic_id) },
			{ direction, missing: names },
		);
	}
	const n = order.length;
	const outOfRange = idList(new Set(order.map((r) => r.priority).filter((p) => p > n)));
	const counts = new Map<number, number>();
	for (const r of order) counts.set(r.priority, (counts.get(r.priority) ?? 0) + 1);
	const repeated = idList([...counts].filter(([, k]) => k > 1).map(([p]) => p));
	if (outOfRange.length || repeated.length) {
		const why = [
			outOfRange.length ? `out of range: ${outOfRange.join(", ")}` : "",
			repeated.length ? `repeated: ${repeated.join(", ")}` : "",
		]
			.filter(Boolean)
			.join("; ");
		throw failWith("incomplete_ranking", { priorities: order.map((r) => r.priority) }, { n, why });
	}
}

/**
 * `PATCH /v1/shipping/couriers/priority` after parsing: reads the active card
 * for the direction (`rates.listCouriers`), {@link checkRanking}s the order,
 * and stores it as the account's ranking for that direction in one
 * transaction (the other direction and other accounts untouched).
 * @throws what {@link checkRanking} throws; 503 `opts.unavailable` when rates cannot be reached
 */
export async function setRanking(
	db: Sequelize,
	via: Caller,
	sender_id: number,
	input: PriorityInput,
	opts: CallOptions = {},
): Promise<void> {
	const list = await call(via, "rates.listCouriers", { direction: input.direction }, opts);
	checkRanking(
		(list ?? []).filter((c) => c.active),
		input.order,
		input.direction,
	);
	await replaceRanking(db, sender_id, input.direction, input.order);
}

/** One element of `rules` (ours): what a courier takes. */
export interface CourierRule {
	logistic_id: number;
	logistic_name: string;
	forward: boolean;
	reverse: boolean;
	/** collects cash on delivery (forward shipments only) */
	cod: boolean;
	/** kg, null = no limit */
	max_weight_kg: number | null;
	mode: CourierLimits["mode"] | null;
	/** zones it has a rate card for in this direction */
	zones: CourierLimits["zones"];
}

/**
 * The answer of `GET /v1/shipping/couriers` (and of the PATCH, re-read after
 * the write) for `sender_id` and `scope`:
 * - `data`: the account's ranking ({@link accountRanking}), `{logistic_id,
 *   logistic_name, enabled: true, priority: 1..n, serviceable_pincodes}`
 *   (couriers of the active card only, so every one is enabled);
 * - `strategy`: `{mode:"priority", source:"account"|"default", shipment_type, direction}`;
 * - `unique_pincodes`: directory pincodes served by at least one of them (`rates.coverage`);
 * - `rules`: {@link CourierRule} per courier, in ranking order;
 * - `restrictions`: `{reorder_only: true, cod_couriers, reverse_couriers}` (ids, ascending;
 *   `cod_couriers` is empty for reverse: returns never collect COD);
 * - `shipments_30d`: the account's bookings of the direction booked in the last 30 days
 *   (cancelled ones excluded).
 * @throws 503 `opts.unavailable` when rates cannot be reached
 */
export async function couriersAnswer(
	db: Sequelize,
	via: Caller,
	sender_id: number,
	scope: RankingScope,
	opts: CallOptions = {},
): Promise<CouriersAnswer> {
	const { direction } = scope;
	const [ranking, cov, shipments_30d] = await Promise.all([
		accountRanking(db, via, sender_id, direction, opts),
		call(via, "rates.coverage", { direction }, opts),
		bookedLast30Days(db, sender_id, direction),
	]);
	const couriers = ranking.couriers;
	const ids = (pred: (c: CourierInfo) => boolean) => idList(couriers.filter(pred).map((c) => c.logistic_id));
	return {
		data: couriers.map((c, i) => ({
			logistic_id: c.logistic_id,
			logistic_name: c.logistic_name,
			enabled: true,
			priority: i + 1,
			serviceable_pincodes: cov.couriers[String(c.logistic_id)] ?? 0,
		})),
		strategy: {
			mode: "priority",
			source: ranking.ranked ? "account" : "default",
			shipment_type: scope.shipment_type,
			direction,
		},
		unique_pincodes: cov.unique_pincodes,
		rules: couriers.map((c): CourierRule => {
			const lim = cov.limits?.[String(c.logistic_id)];
			return {
				logistic_id: c.logistic_id,
				logistic_name: c.logistic_name,
				forward: c.forward,
				reverse: c.reverse,
				cod: c.cod,
				max_weight_kg: lim?.max_weight_kg ?? null,
				mode: lim?.mode ?? null,
				zones: lim?.zones ?? [],
			};
		}),
		restrictions: {
			reorder_only: true,
			cod_couriers: direction === "forward" ? ids((c) => c.cod) : [],
			reverse_couriers: ids((c) => c.reverse),
		},
		shipments_30d,
	};
}
