/**
 * The working-day calendar of the system (issue 28; docs/decisions/0106-working-days-and-edd.md):
 * Sundays off by rule, the holidays of `data/holidays.json` (national ones
 * close every courier hub; a state's close the hubs in that state; each with
 * its source), and per courier its pickup week days and daily cut-off (rates
 * data). Dates are IST calendar days `YYYY-MM-DD`; times are instants.
 *
 * Answers "the next pickup day for a courier at a warehouse in state S after
 * time T" ({@link nextPickupDay}) and the estimated delivery date of a lane
 * ({@link estimateDelivery}); pure, so the quote engine calls it per row.
 */
import holidayData from "../../data/holidays.json";
import { addDays, IST_OFFSET_MS, istDay } from "./ist-date";

/** One holiday as the data file writes it. */
interface HolidayEntry {
	date: string;
	name: string;
	source: string;
}

/** A state name as compared: trimmed, lower case, `&` as `and`, spaces collapsed. */
export function stateKey(state: string | null | undefined): string {
	return (state ?? "").trim().toLowerCase().replace(/&/g, "and").replace(/\s+/g, " ");
}

const NATIONAL: ReadonlySet<string> = new Set((holidayData.national as HolidayEntry[]).map((h) => h.date));
const BY_STATE: ReadonlyMap<string, ReadonlySet<string>> = new Map(
	Object.entries(holidayData.states as Record<string, HolidayEntry[]>).map(([state, list]) => [
		stateKey(state),
		new Set(list.map((h) => h.date)),
	]),
);

/** True when `day` (`YYYY-MM-DD`) is a national holiday, or a holiday of `state` (when given). */
export function isHoliday(day: string, state?: string | null): boolean {
	if (NATIONAL.has(day)) return true;
	return state ? (BY_STATE.get(stateKey(state))?.has(day) ?? false) : false;
}

/** Week day of an IST calendar day (0 = Sunday). */
export function weekdayOf(day: string): number {
	return new Date(`${day}T00:00:00Z`).getUTCDay();
}

/** A courier's pickup rules: the week days it picks up on (0 = Sunday) and its daily cut-off (minutes after midnight IST). */
export interface PickupRules {
	weekdays: readonly number[];
	cutoff_minutes: number;
}

/** The default pickup rules: Monday to Saturday, cut-off 14:00 IST. */
export const DEFAULT_PICKUP: PickupRules = { weekdays: [1, 2, 3, 4, 5, 6], cutoff_minutes: 14 * 60 };

/** `"HH:MM"` (24 h) → minutes after midnight; null when not a time. */
export function minutesOf(hhmm: string): number | null {
	const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(hhmm);
	return m ? Number(m[1]) * 60 + Number(m[2]) : null;
}

/** Longest search for a working day (a safety bound: real calendars need a few days at most). */
const MAX_SEARCH_DAYS = 60;

/** True when the courier picks up on `day` in `state`: one of its week days and no holiday there. */
export function isPickupDay(day: string, rules: PickupRules, state?: string | null): boolean {
	return rules.weekdays.includes(weekdayOf(day)) && !isHoliday(day, state);
}

/**
 * The next pickup day (IST) of a courier with `rules` at a warehouse in
 * `state`, for a request made at `now`: today when it is a pickup day and
 * `now` is before the cut-off, else the first pickup day after today.
 */
export function nextPickupDay(rules: PickupRules, state: string | null | undefined, now: Date): string {
	const today = istDay(now);
	const minutes = Math.floor(((now.getTime() + IST_OFFSET_MS) % 86_400_000) / 60_000);
	let day = minutes < rules.cutoff_minutes ? today : addDays(today, 1);
	for (let i = 0; i < MAX_SEARCH_DAYS && !isPickupDay(day, rules, state); i++) day = addDays(day, 1);
	return day;
}

/** True when parcels are delivered on `day` in `state`: not a Sunday, no holiday there. */
export function isDeliveryDay(day: string, state?: string | null): boolean {
	return weekdayOf(day) !== 0 && !isHoliday(day, state);
}

/**
 * The day `n` transit days after `from`: transit counts working days (not
 * Sundays, not national holidays: hubs are closed), and the last day is moved
 * to the next delivery day in the destination `state`.
 */
export function afterTransit(from: string, n: number, state?: string | null): string {
	let day = from;
	for (let left = n, i = 0; left > 0 && i < MAX_SEARCH_DAYS; i++) {
		day = addDays(day, 1);
		if (weekdayOf(day) !== 0 && !NATIONAL.has(day)) left--;
	}
	for (let i = 0; i < MAX_SEARCH_DAYS && !isDeliveryDay(day, state); i++) day = addDays(day, 1);
	return day;
}

/** Whole calendar days from IST day `a` to IST day `b`. */
export function daysBetween(a: string, b: string): number {
	return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000);
}

/** An estimated delivery: the promised IST date and the range in calendar days from today (IST). */
export interface DeliveryEstimate {
	/** the latest likely delivery day (the promise), IST `YYYY-MM-DD` */
	edd: string;
	edd_range: { min_days: number; max_days: number };
	/** the pickup day it assumes, IST */
	pickup_date: string;
}

/**
 * The estimated delivery of a shipment booked at `now` with a courier of
 * `rules` from a warehouse in `fromState` to `toState`, whose transit is
 * `transit` working days ({min, max}): picked up on {@link nextPickupDay},
 * delivered between {@link afterTransit} of min and of max. With
 * `observedDays` (a lane's learned transit: calendar days from pickup to
 * delivery) the latest day is the first delivery day at least that many
 * calendar days after pickup instead.
 */
export function estimateDelivery(
	rules: PickupRules,
	transit: { min: number; max: number },
	fromState: string | null | undefined,
	toState: string | null | undefined,
	now: Date,
	observedDays?: number,
): DeliveryEstimate {
	const today = istDay(now);
	const pickup_date = nextPickupDay(rules, fromState, now);
	let latest = afterTransit(pickup_date, transit.max, toState);
	if (observedDays !== undefined) {
		latest = addDays(pickup_date, observedDays);
		for (let i = 0; i < MAX_SEARCH_DAYS && !isDeliveryDay(latest, toState); i++) latest = addDays(latest, 1);
	}
	const byCard = afterTransit(pickup_date, transit.min, toState);
	const earliest = byCard < latest ? byCard : latest;
	return {
		edd: latest,
		edd_range: { min_days: daysBetween(today, earliest), max_days: daysBetween(today, latest) },
		pickup_date,
	};
}

/** The next cut-off instant after `now` (ISO-8601 UTC): today's when still ahead, else tomorrow's. */
export function nextCutoff(rules: PickupRules, now: Date): string {
	const today = istDay(now);
	const at = (day: string) => Date.parse(`${day}T00:00:00Z`) - IST_OFFSET_MS + rules.cutoff_minutes * 60_000;
	const t = at(today) > now.getTime() ? at(today) : at(addDays(today, 1));
	return new Date(t).toISOString();
}
