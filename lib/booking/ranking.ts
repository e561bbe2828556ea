/**
 * AUTO courier ranking (spec §2.8, §4.2 book).
 *
 * Seam: today the ranking is the default courier priority from
 * `rates.listCouriers` (CourierInfo.default_priority). A per-merchant ranking
 * table (`PATCH /v1/shipping/couriers/priority`) is a later issue: implement
 * it by changing {@link rankCouriers} only — it receives the sender and the
 * shipment type, and its callers take the first ranked courier that prices the lane.
 */
import type { CourierInfo, Quote } from "../contracts";

/** Calls another service (ctx.call / broker.call shaped). */
export type Caller = <R>(action: string, params: Record<string, unknown>) => Promise<R>;

/**
 * Couriers in AUTO order for `sender_id` and `shipment_type` (0 forward, 1 reverse):
 * active couriers by default priority, then logistic_id.
 */
export async function rankCouriers(
	call: Caller,
	_sender_id: number,
	shipment_type: 0 | 1,
): Promise<CourierInfo[]> {
	const list = await call<CourierInfo[]>("rates.listCouriers", { shipment_type });
	return (list ?? [])
		.filter((c) => c.active)
		.sort((a, b) => a.default_priority - b.default_priority || a.logistic_id - b.logistic_id);
}

/** The top-ranked courier that prices the lane, with its quote; null when none does. */
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
