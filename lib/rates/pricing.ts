/**
 * Pure pricing rules of the rates service (spec §2.7, §4.2; DOMAIN.md "Zones",
 * "Weight and price"). No I/O: everything here works on the in-memory catalog
 * snapshot and pincode facts, in integer grams and integer paise.
 */
import type { PincodeInfo, Zone } from "../contracts";

/** GST on courier services (SAC 9968): 18 %, in basis points. */
export const GST_BP = 1800;

/** A rate card of one courier × zone × direction, in grams and paise. */
export interface RateCard {
	first_slab_g: number;
	first_slab_paise: number;
	additional_slab_g: number;
	additional_slab_paise: number;
	min_chargeable_g: number;
}

/** COD fee rule: max(flat, percent × COD amount). */
export interface CodConfig {
	flat_paise: number;
	percent_bp: number;
}

const norm = (s: string | undefined | null) => (s ?? "").trim().toLowerCase();

/**
 * Zone of a lane (README "Zones"), from the two ends' pincode facts:
 * - A: same city, i.e. same district and same state;
 * - else E: either end is in a special region (north-east, J&K, Ladakh, islands);
 * - else C: both ends are in a metro area (any two metros, including the same one);
 * - else B: same state;
 * - else D: rest of India.
 * District and state names are compared case-insensitively.
 */
export function zoneOf(from: PincodeInfo, to: PincodeInfo): Zone {
	const fd = norm(from.district ?? from.city);
	const td = norm(to.district ?? to.city);
	const sameState = norm(from.state) === norm(to.state) && norm(from.state) !== "";
	if (sameState && fd !== "" && fd === td) return "A";
	if (from.special || to.special) return "E";
	if (from.metro && to.metro) return "C";
	if (sameState) return "B";
	return "D";
}

/** Integer division of non-negative integers rounding half up (one rounding, to the paisa). */
export function divRound(numerator: number, denominator: number): number {
	return Math.floor((2 * numerator + denominator) / (2 * denominator));
}

/**
 * Chargeable weight (grams) and the number of additional slabs: the billable
 * weight (max of physical and volumetric, grams) raised to the card's minimum,
 * then rounded UP to the first slab and whole additional slabs.
 * E.g. slabs 0.5 + 0.5 kg: 500 g → 500 g (0 extra), 510 g → 1000 g (1 extra).
 */
export function chargeable(billableG: number, card: RateCard): { grams: number; extraSlabs: number } {
	const g = Math.max(billableG, card.min_chargeable_g);
	if (g <= card.first_slab_g) return { grams: card.first_slab_g, extraSlabs: 0 };
	const extraSlabs = Math.ceil((g - card.first_slab_g) / card.additional_slab_g);
	return { grams: card.first_slab_g + extraSlabs * card.additional_slab_g, extraSlabs };
}

/** Charges of one priced courier, integer paise. */
export interface Charges {
	chargeable_g: number;
	freight_paise: number;
	cod_paise: number;
	tax_paise: number;
	total_paise: number;
	rto_paise: number;
}

/**
 * Prices one courier on one lane, in integer paise:
 * - freight = first-slab price + additional slabs × additional-slab price;
 * - COD (forward COD orders only) = max(flat, percent_bp × COD amount), rounded to the paisa;
 * - GST (`shipping_charge_tax`) = 18 % of (freight + COD), rounded to the paisa;
 * - total = freight + COD + GST (so the parts always add up);
 * - RTO estimate = rto_bp × freight (forward only; reverse legs have no RTO), pre-tax.
 * @param codAmountPaise COD amount in paise, or null for a prepaid / reverse quote
 * @param rtoBp RTO percent of the freight in basis points, or null for a reverse leg
 */
export function priceCharges(
	billableG: number,
	card: RateCard,
	cod: CodConfig | null,
	codAmountPaise: number | null,
	rtoBp: number | null,
): Charges {
	const { grams, extraSlabs } = chargeable(billableG, card);
	const freight = card.first_slab_paise + extraSlabs * card.additional_slab_paise;
	const codPaise =
		cod && codAmountPaise !== null
			? Math.max(cod.flat_paise, divRound(cod.percent_bp * codAmountPaise, 10_000))
			: 0;
	const tax = divRound(GST_BP * (freight + codPaise), 10_000);
	const rto = rtoBp === null ? 0 : divRound(rtoBp * freight, 10_000);
	return {
		chargeable_g: grams,
		freight_paise: freight,
		cod_paise: codPaise,
		tax_paise: tax,
		total_paise: freight + codPaise + tax,
		rto_paise: rto,
	};
}

/** A pincode-prefix serviceability rule of one courier. */
export interface ServiceabilityRule {
	prefix: string;
	applies_to: "pickup" | "delivery" | "both";
	serviceable: boolean;
}

/**
 * Whether a courier serves `pincode` at one end of the lane: the rule with the
 * longest matching prefix (for that end, or "both") decides; no rule = served.
 */
export function serves(
	rules: readonly ServiceabilityRule[] | undefined,
	pincode: string,
	end: "pickup" | "delivery",
): boolean {
	let best: ServiceabilityRule | undefined;
	for (const r of rules ?? []) {
		if (r.applies_to !== "both" && r.applies_to !== end) continue;
		if (!pincode.startsWith(r.prefix)) continue;
		if (
			!best ||
			r.prefix.length > best.prefix.length ||
			(r.prefix.length === best.prefix.length && !r.serviceable)
		)
			best = r;
	}
	return best ? best.serviceable : true;
}
