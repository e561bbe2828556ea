/**
 * Calendar days in India Standard Time (UTC+05:30 all year, no daylight
 * saving): what the couriers' files, pickup dates, NDR filters and payout
 * cycles count in. Dates are `YYYY-MM-DD` strings; instants ISO-8601 UTC.
 */

/** IST's offset from UTC, ms. */
export const IST_OFFSET_MS = 330 * 60_000;

const DAY_MS = 86_400_000;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The IST calendar day of `t` (default now), `YYYY-MM-DD`. */
export function istDay(t: Date = new Date()): string {
	return new Date(t.getTime() + IST_OFFSET_MS).toISOString().slice(0, 10);
}

/** True when `s` is `YYYY-MM-DD` and a real calendar day (`2025-02-30` is not). */
export function isCalendarDay(s: unknown): s is string {
	if (typeof s !== "string" || !DAY.test(s)) return false;
	// month 13 or day 32 parse to NaN (toISOString would throw): not a day
	const t = Date.parse(`${s}T00:00:00Z`);
	return Number.isFinite(t) && new Date(t).toISOString().startsWith(s);
}

/** The calendar day `days` after `date` (`YYYY-MM-DD`; negative: before). */
export function addDays(date: string, days: number): string {
	return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** The instant (ISO-8601 UTC) IST day `date` begins: its midnight in India. */
export function istMidnight(date: string): string {
	return new Date(Date.parse(`${date}T00:00:00Z`) - IST_OFFSET_MS).toISOString();
}
