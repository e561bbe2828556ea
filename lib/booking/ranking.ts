/**
 * AUTO courier ranking (spec §2.8, §4.2 book and couriers).
 *
 * Each account has its own ranking per shipment direction (`booking.rankings`,
 * set by `PATCH /v1/shipping/couriers/priority`). {@link rankCouriers} answers
 * it over the couriers of the active rate card; AUTO walks it in order and
 * books with the first courier that prices the lane ({@link pickAuto}) and
 * accepts.
 */
import type { Sequelize } from "sequelize";
import {
	type Caller,
	type CallOptions,
	type CourierInfo,
	call,
	type Quote,
	type ShipmentDirection,
} from "../contracts";
import { type RankingRow, rankingOf } from "./store/rankings";

/** Default AUTO order: default priority (1 = first), then logistic_id. */
const byDefault = (a: CourierInfo, b: CourierInfo) =>
	a.default_priority - b.default_priority || a.logistic_id - b.logistic_id;

/**
 * Orders `couriers` (the active couriers of one direction's card) by the
 * account's stored `rows`: ranked couriers by stored priority (then
 * logistic_id), then couriers without a row (added to the card after the
 * account last ranked) by default priority, then logistic_id. Rows of couriers
 * no longer on the card are ignored. Pure. `ranked` says whether any row
 * applied (false: the default order).
 */
export function applyRanking(
	couriers: CourierInfo[],
	rows: RankingRow[],
): { couriers: CourierInfo[]; ranked: boolean } {
	const pos = new Map(rows.map((r) => [r.logistic_id, r.priority]));
	const ranked = couriers
		.filter((c) => pos.has(c.logistic_id))
		.sort(
			(a, b) =>
				(pos.get(a.logistic_id) as number) - (pos.get(b.logistic_id) as number) ||
				a.logistic_id - b.logistic_id,
		);
	const rest = couriers.filter((c) => !pos.has(c.logistic_id)).sort(byDefault);
	return { couriers: [...ranked, ...rest], ranked: ranked.length > 0 };
}

/**
 * The account's ranking: active couriers of the card for `direction`
 * (`rates.listCouriers {direction}`) in the order of the account's
 * `booking.rankings` rows for that direction ({@link applyRanking}); no rows →
 * default priority, then logistic_id. `opts` are the rates call's options
 * (timeout, 503 code); a rates failure raises what {@link call} raises
 * (503 `opts.unavailable`).
 */
export async function rankCouriers(
	db: Sequelize,
	via: Caller,
	sender_id: number,
	direction: ShipmentDirection,
	opts: CallOptions = {},
): Promise<CourierInfo[]> {
	return (await accountRanking(db, via, sender_id, direction, opts)).couriers;
}

/**
 * {@link rankCouriers} plus whether the account's own rows applied (`ranked`
 * false: the default order), for `GET /v1/shipping/couriers` `strategy.source`.
 */
export async function accountRanking(
	db: Sequelize,
	via: Caller,
	sender_id: number,
	direction: ShipmentDirection,
	opts: CallOptions = {},
): Promise<{ couriers: CourierInfo[]; ranked: boolean }> {
	const [list, rows] = await Promise.all([
		call(via, "rates.listCouriers", { direction }, opts),
		rankingOf(db, sender_id, direction),
	]);
	return applyRanking(
		(list ?? []).filter((c) => c.active),
		rows,
	);
}

/** The top-ranked courier that prices the lane, with its quote (rupees); null when none does. */
export function pickAuto(
	ranked: CourierInfo[],
	quotes: Quote[],
): { courier: CourierInfo; quote: Quote } | null {
	for (const c of ranked) {
		const q = quotes.find((x) => x.logistic_id === c.logistic_id);
		if (q) return { courier: c, quote: q };
	}
	return null;
}
