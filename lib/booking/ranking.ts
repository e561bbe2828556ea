/**
 * AUTO courier ranking (spec §2.8, §4.2 book).
 *
 * Seam: today the ranking is the default courier priority from
 * `rates.listCouriers` (CourierInfo.default_priority). A per-merchant ranking
 * table (`PATCH /v1/shipping/couriers/priority`) is a later issue: implement
 * it by changing {@link rankCouriers} only — it receives the sender and the
 * shipment direction, and its callers take the first ranked courier that prices the lane.
 */
import {
	type Caller,
	type CallOptions,
	type CourierInfo,
	call,
	type Quote,
	type ShipmentDirection,
} from "../contracts";

/**
 * Couriers in AUTO order for `sender_id` and `direction`: the active couriers
 * of that direction (`rates.listCouriers {direction}`) by default priority,
 * then logistic_id. `opts` are the call's options (timeout, 503 code); a rates
 * failure raises what {@link call} raises (503 `opts.unavailable`).
 */
export async function rankCouriers(
	via: Caller,
	_sender_id: number,
	direction: ShipmentDirection,
	opts: CallOptions = {},
): Promise<CourierInfo[]> {
	const list = await call(via, "rates.listCouriers", { direction }, opts);
	return (list ?? [])
		.filter((c) => c.active)
		.sort((a, b) => a.default_priority - b.default_priority || a.logistic_id - b.logistic_id);
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
