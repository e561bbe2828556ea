/**
 * Courier coverage (spec §2.8 `serviceable_pincodes`, `unique_pincodes`): how
 * many pincodes of the India Post directory each active courier serves for a
 * shipment direction, by its pincode-prefix serviceability rules. Pure: the
 * catalog snapshot and the directory's pincodes are passed in.
 */
import type { CourierLimits, RatesActions, ShipmentDirection, Zone } from "../contracts";
import { type CatalogSnapshot, cardKey } from "./catalog";
import { serves } from "./pricing";

/** Answer of `rates.coverage` (lib/contracts/rates.ts). */
export type Coverage = RatesActions["rates.coverage"]["result"];

const ZONES: readonly Zone[] = ["A", "B", "C", "D", "E"];

/**
 * The end of a lane the merchant's customer is at: forward shipments deliver
 * to the directory pincode, reverse shipments pick up from it.
 */
export function customerEnd(direction: ShipmentDirection): "pickup" | "delivery" {
	return direction === "forward" ? "delivery" : "pickup";
}

/**
 * Coverage of every active courier doing `direction`: `couriers[logistic_id]` =
 * how many of `pincodes` it serves at the customer's end ({@link customerEnd};
 * the longest matching prefix rule decides, no rule = served, lib/rates/pricing.ts
 * `serves`); `unique_pincodes` = pincodes served by at least one of them;
 * `limits[logistic_id]` = its weight limit (kg, null = none), mode and the
 * zones it has a `direction` rate card for. Rate-card gaps (a zone without a
 * card) do not reduce the pincode counts: a zone depends on both ends of a lane.
 */
export function coverageOf(
	snap: CatalogSnapshot,
	pincodes: readonly string[],
	direction: ShipmentDirection,
): Coverage {
	const end = customerEnd(direction);
	const couriers: Record<string, number> = {};
	const limits: Record<string, CourierLimits> = {};
	const union = new Set<string>();
	let everyPin = false;
	for (const c of snap.couriers) {
		if (!c.active || !(direction === "forward" ? c.forward : c.reverse)) continue;
		const rules = snap.rules.get(c.logistic_id) ?? [];
		let n = 0;
		if (rules.length === 0) {
			n = pincodes.length;
			everyPin = true;
		} else {
			for (const p of pincodes) {
				if (!serves(rules, p, end)) continue;
				n++;
				union.add(p);
			}
		}
		couriers[String(c.logistic_id)] = n;
		limits[String(c.logistic_id)] = {
			max_weight_kg: c.max_weight_g === null ? null : c.max_weight_g / 1000,
			mode: c.mode,
			zones: ZONES.filter((z) => snap.cards.has(cardKey(c.logistic_id, z, direction))),
		};
	}
	return { couriers, unique_pincodes: everyPin ? new Set(pincodes).size : union.size, limits };
}

/**
 * In-memory cache of {@link coverageOf} per direction. The directory's
 * pincodes are fetched once (`fetchPincodes`, concurrent callers share the
 * call; a failure is not cached) and dropped by {@link clearPincodes} on
 * `pincode.changed`; the counts are recomputed whenever the catalog snapshot
 * (a rates reload, `rates.changed`, the periodic reload) or the pincodes change.
 */
export class CoverageCache {
	private pins?: Promise<string[]>;
	private memo?: { snap: CatalogSnapshot; pins: readonly string[]; byDir: Map<ShipmentDirection, Coverage> };

	constructor(private readonly fetchPincodes: () => Promise<string[]>) {}

	/** Coverage of `direction` against catalog `snap` (computed at most once per snapshot and directory). */
	async get(snap: CatalogSnapshot, direction: ShipmentDirection): Promise<Coverage> {
		const pins = await this.pincodes();
		if (!this.memo || this.memo.snap !== snap || this.memo.pins !== pins) {
			this.memo = { snap, pins, byDir: new Map() };
		}
		let c = this.memo.byDir.get(direction);
		if (!c) {
			c = coverageOf(snap, pins, direction);
			this.memo.byDir.set(direction, c);
		}
		return c;
	}

	/** Drops the cached directory (and so the counts): the next {@link get} fetches it again. */
	clearPincodes(): void {
		this.pins = undefined;
		this.memo = undefined;
	}

	private pincodes(): Promise<string[]> {
		if (!this.pins) {
			const p = this.fetchPincodes();
			this.pins = p;
			p.catch(() => {
				if (this.pins === p) this.pins = undefined;
			});
		}
		return this.pins;
	}
}
