/**
 * The working-day calendar (issue 28; lib/shared/calendar.ts,
 * docs/decisions/0106-working-days-and-edd.md) with a frozen clock in IST:
 * the pickup cut-off, Sundays, national holidays (data/holidays.json: Republic
 * Day, Independence Day, Gandhi Jayanti are fixed dates), a state's holiday
 * closing only that state's hubs, a courier picking up on Sundays, transit
 * counted in working days and moved to a delivery day at the destination,
 * the estimate's range and the observed transit, and the next cut-off.
 */
import assert from "node:assert/strict";
import holidays from "../../data/holidays.json";
import {
	afterTransit,
	DEFAULT_PICKUP,
	estimateDelivery,
	isHoliday,
	minutesOf,
	nextCutoff,
	nextPickupDay,
	stateKey,
} from "../../lib/shared/calendar";
import { isCalendarDay } from "../../lib/shared/ist-date";

/** An instant given as an IST wall-clock time. */
const ist = (local: string) => new Date(`${local}+05:30`);

describe("working-day calendar (IST)", () => {
	it("the data file: real days, sorted, sourced; the fixed national holidays of 2026 and 2027 present", () => {
		const sources = Object.keys(holidays.sources);
		const lists: [string, { date: string; source: string }[]][] = [
			["national", holidays.national],
			...Object.entries(holidays.states as Record<string, { date: string; source: string }[]>),
		];
		for (const [name, list] of lists) {
			for (const h of list) {
				assert.ok(isCalendarDay(h.date), `${name}: ${h.date}`);
				assert.ok(sources.includes(h.source), `${name} ${h.date}: source ${h.source}`);
			}
			const dates = list.map((h) => h.date);
			assert.deepEqual(dates, [...dates].sort(), `${name} sorted`);
		}
		for (const d of ["2026-01-26", "2026-08-15", "2026-10-02", "2026-12-25", "2027-01-26", "2027-08-15"])
			assert.equal(isHoliday(d), true, d);
		assert.ok(Object.keys(holidays.states).length >= 5, "at least five states");
	});

	it("next pickup day: today before the cut-off, tomorrow after it; Sundays and national holidays skipped", () => {
		// Friday 23 January 2026
		assert.equal(nextPickupDay(DEFAULT_PICKUP, "Delhi", ist("2026-01-23T13:59:00")), "2026-01-23");
		assert.equal(nextPickupDay(DEFAULT_PICKUP, "Delhi", ist("2026-01-23T14:00:00")), "2026-01-24");
		// Saturday after the cut-off: Sunday off, Monday 26 January is Republic Day → Tuesday
		assert.equal(nextPickupDay(DEFAULT_PICKUP, "Delhi", ist("2026-01-24T16:00:00")), "2026-01-27");
		// the IST day decides, not the UTC one: 00:30 IST on Tuesday is still Monday 19:00 UTC
		assert.equal(nextPickupDay(DEFAULT_PICKUP, "Delhi", ist("2026-01-27T00:30:00")), "2026-01-27");
		// a courier picking up on Sundays, with a 17:00 cut-off
		const everyDay = { weekdays: [0, 1, 2, 3, 4, 5, 6], cutoff_minutes: minutesOf("17:00") ?? 0 };
		assert.equal(nextPickupDay(everyDay, "Delhi", ist("2026-01-24T16:00:00")), "2026-01-24");
		assert.equal(nextPickupDay(everyDay, "Delhi", ist("2026-01-24T17:30:00")), "2026-01-25");
		assert.equal(minutesOf("24:00"), null);
	});

	it("a state's holiday closes that state's hubs only", () => {
		const states = holidays.states as Record<string, { date: string }[]>;
		const [state, list] = Object.entries(states).find(([, l]) => l.some((h) => !isHoliday(h.date))) ?? [];
		assert.ok(state && list, "a state with a holiday of its own");
		// a state holiday on a working day: the day before it, after the cut-off
		const day = list
			.map((h) => h.date)
			.find((d) => !isHoliday(d) && ![0, 1].includes(new Date(`${d}T00:00:00Z`).getUTCDay()));
		assert.ok(day, `${state}: a holiday of its own on Tuesday to Saturday`);
		const eve = new Date(Date.parse(`${day}T00:00:00+05:30`) - 8 * 3_600_000); // 16:00 IST the day before
		assert.equal(isHoliday(day, state), true);
		assert.equal(isHoliday(day, state.toUpperCase()), true, "state names compared case-insensitively");
		assert.notEqual(nextPickupDay(DEFAULT_PICKUP, state, eve), day, `${state} is closed on ${day}`);
		const other = Object.keys(states).find((s) => !states[s].some((h) => h.date === day)) ?? "Delhi";
		assert.equal(nextPickupDay(DEFAULT_PICKUP, other, eve), day, `${other} works on ${day}`);
		assert.equal(stateKey("  Jammu & Kashmir "), "jammu and kashmir");
	});

	it("transit counts working days and lands on a delivery day at the destination", () => {
		// Thursday 13 August 2026 + 2: Friday 14 (1), Saturday 15 Independence Day and Sunday 16 skipped, Monday 17 (2)
		assert.equal(afterTransit("2026-08-13", 2, "Delhi"), "2026-08-17");
		assert.equal(afterTransit("2026-08-13", 0, "Delhi"), "2026-08-13");
		// Friday 2 October 2026 (Gandhi Jayanti) as the landing day moves to Saturday 3
		assert.equal(afterTransit("2026-09-30", 1, "Delhi"), "2026-10-01");
		assert.equal(afterTransit("2026-10-01", 1, "Delhi"), "2026-10-03");
	});

	it("an estimate: the pickup day, the latest day promised, the range in calendar days from today", () => {
		const e = estimateDelivery(
			DEFAULT_PICKUP,
			{ min: 2, max: 4 },
			"Delhi",
			"Karnataka",
			ist("2026-08-12T15:00:00"),
		);
		// Wednesday after the cut-off: picked up Thursday 13; +2 → Monday 17; +4 → Wednesday 19
		assert.equal(e.pickup_date, "2026-08-13");
		assert.equal(e.edd, "2026-08-19");
		assert.deepEqual(e.edd_range, { min_days: 5, max_days: 7 });
		// the observed transit (calendar days) replaces the card's latest day
		const seen = estimateDelivery(
			DEFAULT_PICKUP,
			{ min: 2, max: 4 },
			"Delhi",
			"Karnataka",
			ist("2026-08-12T15:00:00"),
			3,
		);
		assert.equal(seen.edd, "2026-08-17", "13 + 3 = Sunday 16 → Monday 17");
		assert.deepEqual(seen.edd_range, { min_days: 5, max_days: 5 });
	});

	it("the next cut-off instant: today's while ahead, else tomorrow's (UTC)", () => {
		assert.equal(nextCutoff(DEFAULT_PICKUP, ist("2026-08-12T10:00:00")), "2026-08-12T08:30:00.000Z");
		assert.equal(nextCutoff(DEFAULT_PICKUP, ist("2026-08-12T14:00:00")), "2026-08-13T08:30:00.000Z");
	});
});
