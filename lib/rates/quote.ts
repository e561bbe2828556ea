/**
 * The quote engine (spec §2.7, §4.2): prices every candidate courier of the
 * catalog snapshot on a lane and explains every courier left out. Pure: the
 * pincode facts of both ends are passed in.
 */
import type { DroppedCourier, PincodeInfo, Quote, QuoteParams, QuoteResult } from "../contracts";
import { estimateDelivery } from "../shared/calendar";
import { kgToGrams } from "../shared/lane";
import { toPaise, toRupees } from "../shared/money";
import { type CatalogSnapshot, type CourierRow, cardKey, laneKey } from "./catalog";
import { priceCharges, serves, zoneOf } from "./pricing";
import { syncedLimitRefusal, syncedRefusal } from "./serviceability";

/**
 * The one internal lane query both entry points end in (lib/rates/params.ts:
 * `GET /v1/shipping/serviceable` and `rates.quote`): {@link QuoteParams} with
 * the defaults applied. Weights kg, `cod_amount` rupees.
 */
export type LaneQuery = Required<Omit<QuoteParams, "logistic_id">> & Pick<QuoteParams, "logistic_id">;

const drop = (
	c: Pick<CourierRow, "logistic_id" | "logistic_name">,
	reason: string,
	detail: string,
): DroppedCourier => ({
	logistic_id: c.logistic_id,
	logistic_name: c.logistic_name,
	reason,
	detail,
});

const kg = (g: number) => g / 1000;

/**
 * Candidate couriers: the active ones by default priority, or only the one
 * named by `logistic_id` (an unknown id → dropped `unknown_courier`, an
 * inactive one → dropped `inactive`).
 */
function candidates(snap: CatalogSnapshot, q: LaneQuery, dropped: DroppedCourier[]): CourierRow[] {
	if (q.logistic_id === undefined) return snap.couriers.filter((c) => c.active);
	const c = snap.byId.get(q.logistic_id);
	if (!c) {
		dropped.push(
			drop({ logistic_id: q.logistic_id, logistic_name: "" }, "unknown_courier", "no such courier"),
		);
		return [];
	}
	if (!c.active) {
		dropped.push(drop(c, "inactive", `${c.logistic_name} is not active`));
		return [];
	}
	return [c];
}

/**
 * Prices the lane `q` with every candidate courier, sorted by default priority.
 *
 * Per courier, in this order, the first failing check drops it with a reason:
 * `reverse_not_supported` / `forward_not_supported` (direction),
 * `cod_config_missing` (COD forward quote, no COD configuration) or
 * `cod_not_supported` (configuration present but COD switched off),
 * `no_rate_card` (no card for the zone and direction), `not_serviceable`
 * (a serviceability rule excludes the pickup or delivery pincode, or the
 * courier's synced pincode serviceability says it does not serve the lane
 * for this direction and payment: lib/rates/serviceability.ts `syncedRefusal`,
 * or a COD amount above what it collects at the delivery pincode:
 * `syncedLimitRefusal`), `over_weight_limit` (billable weight above a synced
 * pincode's stated maximum, or the courier's).
 * An unknown pincode at either end drops every candidate with `unknown_pincode`.
 *
 * Charges: lib/rates/pricing.ts `priceCharges` (paise), answered in rupees;
 * `weight` is the chargeable weight in kg; `performance` comes from
 * `rates.lane_performance` (≥ 20 shipments on that courier and lane) or is null.
 * `edd` / `edd_range` (issue 28; lib/shared/calendar.ts `estimateDelivery`):
 * the courier's next pickup day at `now` in the pickup state, then its transit
 * days for the zone and direction (the lane's observed 80th percentile once it
 * has ≥ 20 delivered shipments); null when the courier has no transit data.
 */
export function quoteLane(
	snap: CatalogSnapshot,
	from: PincodeInfo,
	to: PincodeInfo,
	q: LaneQuery,
	now: Date = new Date(),
): QuoteResult {
	const dropped: DroppedCourier[] = [];
	const data: Quote[] = [];
	const list = candidates(snap, q, dropped);
	const unknown = [!from.found ? `from_pin ${q.from_pin}` : "", !to.found ? `to_pin ${q.to_pin}` : ""].filter(
		Boolean,
	);
	if (unknown.length) {
		const detail = `${unknown.join(" and ")} not in the pincode directory`;
		for (const c of list) dropped.push(drop(c, "unknown_pincode", detail));
		return { data, dropped_couriers: dropped };
	}
	const zone = zoneOf(from, to);
	const billableG = kgToGrams(Math.max(q.physical_weight, q.volumetric_weight));
	const reverse = q.direction === "reverse";
	const wantsCod = q.payment_mode === "cod" && !reverse;
	const codAmountPaise = wantsCod ? toPaise(q.cod_amount) : null;
	for (const c of list) {
		if (reverse && !c.reverse) {
			dropped.push(drop(c, "reverse_not_supported", `${c.logistic_name} does not do reverse pickups`));
			continue;
		}
		if (!reverse && !c.forward) {
			dropped.push(drop(c, "forward_not_supported", `${c.logistic_name} does reverse pickups only`));
			continue;
		}
		const codCfg = wantsCod ? snap.cod.get(c.logistic_id) : undefined;
		if (wantsCod && !codCfg) {
			dropped.push(drop(c, "cod_config_missing", `${c.logistic_name} has no COD configuration`));
			continue;
		}
		if (wantsCod && !c.cod) {
			dropped.push(drop(c, "cod_not_supported", `${c.logistic_name} does not collect COD`));
			continue;
		}
		const card = snap.cards.get(cardKey(c.logistic_id, zone, q.direction));
		if (!card) {
			dropped.push(drop(c, "no_rate_card", `no ${q.direction} rate card for zone ${zone}`));
			continue;
		}
		const rules = snap.rules.get(c.logistic_id);
		const pickupOk = serves(rules, q.from_pin, "pickup");
		const deliveryOk = serves(rules, q.to_pin, "delivery");
		if (!pickupOk || !deliveryOk) {
			const which = [
				!pickupOk ? `pickup pincode ${q.from_pin}` : "",
				!deliveryOk ? `delivery pincode ${q.to_pin}` : "",
			]
				.filter(Boolean)
				.join(" and ");
			dropped.push(drop(c, "not_serviceable", `${c.logistic_name} does not serve ${which}`));
			continue;
		}
		const refusal = syncedRefusal(
			snap.synced?.get(c.logistic_id),
			q.from_pin,
			q.to_pin,
			q.direction,
			wantsCod,
		);
		if (refusal) {
			dropped.push(drop(c, "not_serviceable", `${c.logistic_name} does not serve ${refusal}`));
			continue;
		}
		const limit = syncedLimitRefusal(
			snap.syncedLimits?.get(c.logistic_id),
			q.from_pin,
			q.to_pin,
			codAmountPaise,
			billableG,
		);
		if (limit) {
			dropped.push(drop(c, limit.reason, `${c.logistic_name}: ${limit.detail}`));
			continue;
		}
		if (c.max_weight_g !== null && billableG > c.max_weight_g) {
			dropped.push(
				drop(
					c,
					"over_weight_limit",
					`billable weight ${kg(billableG)} kg exceeds the ${kg(c.max_weight_g)} kg limit`,
				),
			);
			continue;
		}
		// RTO: forward legs only; a courier with no RTO rule is assumed to charge the forward freight (100 %).
		const rtoBp = reverse ? null : (snap.rto.get(c.logistic_id) ?? 10_000);
		const ch = priceCharges(billableG, card, codCfg ?? null, codAmountPaise, rtoBp);
		const lane = laneKey(c.logistic_id, q.from_pin, q.to_pin);
		const perf = snap.performance.get(lane);
		const transit = snap.transit.get(cardKey(c.logistic_id, zone, q.direction));
		const est = transit
			? estimateDelivery(c.pickup, transit, from.state, to.state, now, snap.learned.get(lane))
			: null;
		data.push({
			logistic_id: c.logistic_id,
			courier_name: c.logistic_name,
			total: toRupees(ch.total_paise),
			cod_charge: toRupees(ch.cod_paise),
			freight_charge: toRupees(ch.freight_paise),
			shipping_charge_tax: toRupees(ch.tax_paise),
			zone,
			weight: kg(ch.chargeable_g),
			rto_charge: toRupees(ch.rto_paise),
			performance: perf
				? {
						delivered_pct: perf.delivered_pct,
						rto_pct: perf.rto_pct,
						avg_tat_days: perf.avg_tat_days,
					}
				: null,
			edd: est ? est.edd : null,
			edd_range: est ? est.edd_range : null,
		});
	}
	return { data, dropped_couriers: dropped };
}
