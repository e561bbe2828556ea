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
import { IST_OFFSET_MS } from "./ist-date";

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

/** Milliseconds in a day. */
const DAY_MS = 86_400_000;

/** Days since 1970-01-01 of an IST calendar day `YYYY-MM-DD` (the quote path works on these, not strings). */
const dayNumber = (day: string): number => Date.parse(`${day}T00:00:00Z`) / DAY_MS;
/** `YYYY-MM-DD` of a day number. */
const dayString = (n: number): string => new Date(n * DAY_MS).toISOString().slice(0, 10);
/** Week day of a day number (0 = Sunday; day 0 was a Thursday). */
const weekdayNumber = (n: number): number => (((n + 4) % 7) + 7) % 7;

const NATIONAL: ReadonlySet<number> = new Set(
	(holidayData.national as HolidayEntry[]).map((h) => dayNumber(h.date)),
);
const BY_STATE: ReadonlyMap<string, ReadonlySet<number>> = new Map(
	Object.entries(holidayData.states as Record<string, HolidayEntry[]>).map(([state, list]) => [
		stateKey(state),
		new Set(list.map((h) => dayNumber(h.date))),
	]),
);
/** The holidays of a state as given (its key computed once per name). */
const stateDays = new Map<string, ReadonlySet<number> | null>();
function holidaysOf(state: string | null | undefined): ReadonlySet<number> | null {
	if (!state) return null;
	let days = stateDays.get(state);
	if (days === undefined) {
		days = BY_STATE.get(stateKey(state)) ?? null;
		if (stateDays.size < 1000) stateDays.set(state, days);
	}
	return days;
}

/** True when day number `n` is a national holiday or one of `state`'s. */
const holidayOn = (n: number, state: ReadonlySet<number> | null): boolean =>
	NATIONAL.has(n) || (state?.has(n) ?? false);

/** True when `day` (`YYYY-MM-DD`) is a national holiday, or a holiday of `state` (when given). */
export function isHoliday(day: string, state?: string | null): boolean {
	return holidayOn(dayNumber(day), holidaysOf(state));
}

/** Names of the holidays by day number: national ones, then each state's (key {@link stateKey}). */
const NAMES: ReadonlyMap<string, string> = new Map([
	...(holidayData.national as HolidayEntry[]).map((h): [string, string] => [`|${h.date}`, h.name]),
	...Object.entries(holidayData.states as Record<string, HolidayEntry[]>).flatMap(([state, list]) =>
		list.map((h): [string, string] => [`${stateKey(state)}|${h.date}`, h.name]),
	),
]);

/**
 * The name of the holiday on `day` (`YYYY-MM-DD`): the national one, else `state`'s (when
 * given), else null. For messages (a pickup refused on a holiday names it).
 */
export function holidayName(day: string, state?: string | null): string | null {
	return NAMES.get(`|${day}`) ?? (state ? (NAMES.get(`${stateKey(state)}|${day}`) ?? null) : null);
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

/** True when the courier picks up on day number `n` in a state with holidays `state`. */
const pickupOn = (n: number, rules: PickupRules, state: ReadonlySet<number> | null): boolean =>
	rules.weekdays.includes(weekdayNumber(n)) && !holidayOn(n, state);

/** The IST day number of `now` and whether it is before `cutoff_minutes` that day. */
function istNow(now: Date, cutoff_minutes: number): { today: number; beforeCutoff: boolean } {
	const t = now.getTime() + IST_OFFSET_MS;
	const today = Math.floor(t / DAY_MS);
	return { today, beforeCutoff: (t - today * DAY_MS) / 60_000 < cutoff_minutes };
}

/** Day number of the next pickup day (see {@link nextPickupDay}). */
function nextPickupNumber(rules: PickupRules, state: ReadonlySet<number> | null, now: Date): number {
	const { today, beforeCutoff } = istNow(now, rules.cutoff_minutes);
	let n = beforeCutoff ? today : today + 1;
	for (let i = 0; i < MAX_SEARCH_DAYS && !pickupOn(n, rules, state); i++) n++;
	return n;
}

/**
 * The next pickup day (IST) of a courier with `rules` at a warehouse in
 * `state`, for a request made at `now`: today when it is a pickup day and
 * `now` is before the cut-off, else the first pickup day after today.
 */
export function nextPickupDay(rules: PickupRules, state: string | null | undefined, now: Date): string {
	return dayString(nextPickupNumber(rules, holidaysOf(state), now));
}

/** True when parcels are delivered on day number `n` in a state with holidays `state`. */
const deliveryOn = (n: number, state: ReadonlySet<number> | null): boolean =>
	weekdayNumber(n) !== 0 && !holidayOn(n, state);

/**
 * Whether IST day `day` (`YYYY-MM-DD`) is a delivery day in `state`: not a Sunday, not a national
 * holiday, not one of the state's (the days a buyer may ask a failed delivery to be tried again).
 */
export function isDeliveryDay(day: string, state?: string | null): boolean {
	return deliveryOn(dayNumber(day), holidaysOf(state));
}

/** Day number of {@link afterTransit}. */
function afterTransitNumber(from: number, n: number, state: ReadonlySet<number> | null): number {
	let day = from;
	for (let left = n, i = 0; left > 0 && i < MAX_SEARCH_DAYS; i++) {
		day++;
		if (weekdayNumber(day) !== 0 && !NATIONAL.has(day)) left--;
	}
	for (let i = 0; i < MAX_SEARCH_DAYS && !deliveryOn(day, state); i++) day++;
	return day;
}

/**
 * The day `n` transit days after `from`: transit counts working days (not
 * Sundays, not national holidays: hubs are closed), and the last day is moved
 * to the next delivery day in the destination `state`.
 */
export function afterTransit(from: string, n: number, state?: string | null): string {
	return dayString(afterTransitNumber(dayNumber(from), n, holidaysOf(state)));
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
 * Estimates already made, by everything they depend on (the IST day, before
 * or after the cut-off, the rules, transit, states, observed days): the quote
 * path asks the same few questions all day. Cleared when it grows past
 * {@link MEMO_MAX} (a new day brings new keys).
 */
const memo = new Map<string, DeliveryEstimate>();
const MEMO_MAX = 5000;

/**
 * The estimated delivery of a shipment booked at `now` with a courier of
 * `rules` from a warehouse in `fromState` to `toState`, whose transit is
 * `transit` working days ({min, max}): picked up on {@link nextPickupDay},
 * delivered between {@link afterTransit} of min and of max. With
 * `observedDays` (a lane's learned transit: calendar days from pickup to
 * delivery) the latest day is the first delivery day at least that many
 * calendar days after pickup instead. Answers are memoised (the same
 * object for the same question: treat it as read-only).
 */
export function estimateDelivery(
	rules: PickupRules,
	transit: { min: number; max: number },
	fromState: string | null | undefined,
	toState: string | null | undefined,
	now: Date,
	observedDays?: number,
): DeliveryEstimate {
	const { today, beforeCutoff } = istNow(now, rules.cutoff_minutes);
	const key = `${today}|${beforeCutoff}|${rules.cutoff_minutes}|${rules.weekdays.join("")}|${transit.min}|${transit.max}|${fromState}|${toState}|${observedDays}`;
	const hit = memo.get(key);
	if (hit) return hit;
	const from = holidaysOf(fromState);
	const to = holidaysOf(toState);
	const pickup = nextPickupNumber(rules, from, now);
	let latest = afterTransitNumber(pickup, transit.max, to);
	if (observedDays !== undefined) {
		latest = pickup + observedDays;
		for (let i = 0; i < MAX_SEARCH_DAYS && !deliveryOn(latest, to); i++) latest++;
	}
	const earliest = Math.min(afterTransitNumber(pickup, transit.min, to), latest);
	const out: DeliveryEstimate = {
		edd: dayString(latest),
		edd_range: { min_days: earliest - today, max_days: latest - today },
		pickup_date: dayString(pickup),
	};
	if (memo.size >= MEMO_MAX) memo.clear();
	memo.set(key, out);
	return out;
}

/** The next cut-off instant after `now` (ISO-8601 UTC): today's when still ahead, else tomorrow's. */
export function nextCutoff(rules: PickupRules, now: Date): string {
	const { today, beforeCutoff } = istNow(now, rules.cutoff_minutes);
	const day = beforeCutoff ? today : today + 1;
	return new Date(day * DAY_MS - IST_OFFSET_MS + rules.cutoff_minutes * 60_000).toISOString();
}
