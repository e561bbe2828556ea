/**
 * The sandbox couriers' actual transit, as a stated distribution per zone
 * (issue 28; the EDD accuracy bench, bench/edd-accuracy.ts): how many working
 * days (not Sundays, not national holidays: lib/shared/calendar.ts
 * `afterTransit`) a parcel really spends between its pickup and its delivery.
 * The rate card only states a range (data/sandbox-rates.json `transit_days`);
 * real lanes run mostly inside it with a tail of late deliveries, longer in
 * the far zones. Pure and deterministic: draws come from a seedable PRNG
 * ({@link mulberry32}), so a run with the same seed draws the same days.
 */
import type { Zone } from "../contracts";

/** One outcome of a zone's distribution: `days` working days from pickup to delivery, with probability `p` (0–1). */
export interface TransitOutcome {
	days: number;
	p: number;
}

/**
 * The stated distribution of actual transit per zone (working days from
 * pickup to delivery → probability; each zone's sums to 1), set against
 * Sandbox Surface's forward card (A 1–2, B 2–4, C 3–5, D 4–7, E 6–10 working
 * days): mostly inside the card's range, beyond its max 10 % of the time in
 * zones A and B, 15 % in C, 18 % in D and 22 % in E (the far lanes: line
 * hauls miss connections, north-east and J&K hubs close for weather).
 */
export const TRANSIT_DISTRIBUTION: Readonly<Record<Zone, readonly TransitOutcome[]>> = {
	A: [
		{ days: 1, p: 0.55 },
		{ days: 2, p: 0.35 },
		{ days: 3, p: 0.1 },
	],
	B: [
		{ days: 2, p: 0.25 },
		{ days: 3, p: 0.4 },
		{ days: 4, p: 0.25 },
		{ days: 5, p: 0.1 },
	],
	C: [
		{ days: 3, p: 0.3 },
		{ days: 4, p: 0.35 },
		{ days: 5, p: 0.2 },
		{ days: 6, p: 0.1 },
		{ days: 7, p: 0.05 },
	],
	D: [
		{ days: 4, p: 0.15 },
		{ days: 5, p: 0.3 },
		{ days: 6, p: 0.25 },
		{ days: 7, p: 0.12 },
		{ days: 8, p: 0.1 },
		{ days: 9, p: 0.08 },
	],
	E: [
		{ days: 6, p: 0.1 },
		{ days: 7, p: 0.2 },
		{ days: 8, p: 0.25 },
		{ days: 9, p: 0.15 },
		{ days: 10, p: 0.08 },
		{ days: 11, p: 0.1 },
		{ days: 12, p: 0.07 },
		{ days: 14, p: 0.05 },
	],
};

/**
 * mulberry32, a small well-known 32-bit PRNG: answers a function that
 * returns the next number of the sequence of `seed` (any integer), uniform
 * in [0, 1). Not for anything secret.
 */
export function mulberry32(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

/**
 * Draws one shipment's actual transit in `zone` from
 * {@link TRANSIT_DISTRIBUTION}: working days from pickup to delivery (a
 * positive integer), using one number of `rng` (uniform in [0, 1)).
 */
export function drawTransitDays(zone: Zone, rng: () => number): number {
	const outcomes = TRANSIT_DISTRIBUTION[zone];
	let u = rng();
	for (const o of outcomes) {
		u -= o.p;
		if (u < 0) return o.days;
	}
	return outcomes[outcomes.length - 1].days;
}

/** The share (0–1) of `zone`'s actual transits longer than `maxDays` working days (e.g. a card's max). */
export function shareBeyond(zone: Zone, maxDays: number): number {
	return TRANSIT_DISTRIBUTION[zone].reduce((s, o) => s + (o.days > maxDays ? o.p : 0), 0);
}

/** `zone`'s distribution in words, e.g. `1 d 55 %, 2 d 35 %, 3 d 10 %` (working days, percent). */
export function describeTransit(zone: Zone): string {
	return TRANSIT_DISTRIBUTION[zone].map((o) => `${o.days} d ${Math.round(o.p * 100)} %`).join(", ");
}
