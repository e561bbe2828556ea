/**
 * AUTO fall-over (spec §4.2 book, §2.8; issue 6): when the courier of an AUTO
 * booking refuses definitively, the booking moves on to the next courier of
 * the account's ranking that prices the lane; a forced `logistic_id` never
 * falls over. Pure helpers: the walk itself is in services/booking.service.ts.
 */
import type { CourierInfo, Quote } from "../contracts";
import type { AttemptRow, ChainEntry } from "./store";

/**
 * The next courier to try after attempt `a` refused: the first of `ranked`
 * (the account's ranking for the direction) that prices the lane (has a quote
 * in `quotes`, i.e. is not among the quote's dropped couriers: lane, COD,
 * reverse) and was not tried yet by this booking (`a` or its chain). Null
 * when none is left.
 */
export function nextCourier(
	a: Pick<AttemptRow, "logistic_id" | "chain">,
	ranked: CourierInfo[],
	quotes: Quote[],
): { courier: CourierInfo; quote: Quote } | null {
	const tried = new Set([a.logistic_id, ...a.chain.map((c) => c.logistic_id)]);
	for (const c of ranked) {
		if (tried.has(c.logistic_id)) continue;
		const q = quotes.find((x) => x.logistic_id === c.logistic_id);
		if (q) return { courier: c, quote: q };
	}
	return null;
}

/** The chain of attempt `a` extended by its own refusal `reason` (plain words). */
export function chainAfter(
	a: Pick<AttemptRow, "logistic_id" | "courier_name" | "chain">,
	reason: string,
): ChainEntry[] {
	return [...a.chain, { logistic_id: a.logistic_id, courier_name: a.courier_name, reason }];
}

/**
 * The failure_reason of a booking whose couriers all refused: every refusal in
 * order, in plain words ("Sandbox Express refused: …; Sandbox Surface refused: …").
 */
export function chainReason(chain: ChainEntry[]): string {
	return chain.map((c) => c.reason).join("; ");
}

/** A duration in plain words: "2 minutes", "1 minute", "90 seconds". */
export function durationWords(ms: number): string {
	if (ms >= 60_000 && ms % 60_000 === 0) {
		const m = ms / 60_000;
		return `${m} minute${m === 1 ? "" : "s"}`;
	}
	const s = Math.round(ms / 1000);
	return `${s} second${s === 1 ? "" : "s"}`;
}
