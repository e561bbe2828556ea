/**
 * The pickup day and slot rules (issue 28; lib/warehouses/pickup-rules.ts,
 * docs/decisions/0107-pickup-requests.md) with a frozen clock in IST: the cut-off
 * closing today, the 7-day horizon, past days, Sundays, national and state
 * holidays (named), a courier collecting on Sundays, and the slots left today.
 */
import assert from "node:assert/strict";
import { DEFAULT_PICKUP } from "../../../lib/shared/calendar";
import { refuseDay, slotFor, slotStart } from "../../../lib/warehouses/pickup-rules";

/** An instant given as an IST wall-clock time. */
const ist = (local: string) => new Date(`${local}+05:30`);

describe("pickup rules (IST, frozen clock)", () => {
	// Tuesday 2026-12-01, 11:30 IST; cut-off 14:00 (Monday–Saturday)
	const now = ist("2026-12-01T11:30:00");

	it("today before the cut-off and the next 7 days are accepted", () => {
		for (const day of ["2026-12-01", "2026-12-02", "2026-12-05", "2026-12-08"]) {
			assert.equal(refuseDay(day, DEFAULT_PICKUP, "Sandbox Express", "Delhi", now), null, day);
		}
	});

	it("refuses today once the cut-off has passed, naming the cut-off and the next pickup day", () => {
		const late = ist("2026-12-01T14:00:00");
		const r = refuseDay("2026-12-01", DEFAULT_PICKUP, "Sandbox Express", "Delhi", late);
		assert.deepEqual(r, {
			why: "Sandbox Express's cut-off for today (14:00 IST) has passed",
			next_pickup_date: "2026-12-02",
		});
		// one minute before: still today
		assert.equal(refuseDay("2026-12-01", DEFAULT_PICKUP, "X", "Delhi", ist("2026-12-01T13:59:00")), null);
		// a 15:00 cut-off (air) keeps today open at 14:00
		const air = { ...DEFAULT_PICKUP, cutoff_minutes: 15 * 60 };
		assert.equal(refuseDay("2026-12-01", air, "X", "Delhi", late), null);
	});

	it("refuses a past day and one beyond 7 days", () => {
		assert.match(
			refuseDay("2026-11-30", DEFAULT_PICKUP, "X", "Delhi", now)?.why ?? "",
			/^pickup_date 2026-11-30 is in the past \(today is 2026-12-01 IST\)$/,
		);
		assert.match(
			refuseDay("2026-12-09", DEFAULT_PICKUP, "X", "Delhi", now)?.why ?? "",
			/more than 7 days ahead \(the last is 2026-12-08\)/,
		);
	});

	it("refuses a Sunday unless the courier collects on Sundays", () => {
		const r = refuseDay("2026-12-06", DEFAULT_PICKUP, "Sandbox Express", "Delhi", now);
		assert.equal(r?.why, "Sandbox Express does not collect on Sundays");
		assert.equal(r?.next_pickup_date, "2026-12-01");
		const everyDay = { ...DEFAULT_PICKUP, weekdays: [0, 1, 2, 3, 4, 5, 6] };
		assert.equal(refuseDay("2026-12-06", everyDay, "X", "Delhi", now), null);
	});

	it("refuses a national holiday everywhere and a state holiday only in that state, by name", () => {
		// Christmas (Friday 2026-12-25), asked on 2026-12-21
		const dec21 = ist("2026-12-21T09:00:00");
		const xmas = refuseDay("2026-12-25", DEFAULT_PICKUP, "Sandbox Express", "Delhi", dec21);
		assert.match(
			xmas?.why ?? "",
			/^2026-12-25 is a holiday \(Christmas[^)]*\): Sandbox Express's hub is closed$/,
		);
		// Shivaji Jayanti (Thursday 2026-02-19) closes Maharashtra's hubs, not Delhi's
		const feb16 = ist("2026-02-16T09:00:00");
		const mh = refuseDay("2026-02-19", DEFAULT_PICKUP, "X", "maharashtra ", feb16);
		assert.equal(mh?.why, "2026-02-19 is a holiday (Chhatrapati Shivaji Maharaj Jayanti): X's hub is closed");
		assert.equal(refuseDay("2026-02-19", DEFAULT_PICKUP, "X", "Delhi", feb16), null);
	});

	it("slots: the first not begun by default, an asked slot refused once begun today, any slot on a later day", () => {
		assert.deepEqual(slotFor("2026-12-01", undefined, ist("2026-12-01T09:00:00")), { slot: "10:00-13:00" });
		assert.deepEqual(slotFor("2026-12-01", undefined, now), { slot: "13:00-16:00" });
		assert.deepEqual(slotFor("2026-12-01", "10:00-13:00", now), {
			why: "slot 10:00-13:00 has already begun today",
		});
		assert.deepEqual(slotFor("2026-12-01", "16:00-19:00", now), { slot: "16:00-19:00" });
		assert.deepEqual(slotFor("2026-12-02", "10:00-13:00", now), { slot: "10:00-13:00" });
		assert.deepEqual(slotFor("2026-12-01", undefined, ist("2026-12-01T16:30:00")), {
			why: "no pickup slot is left today",
		});
		assert.equal(slotStart("13:00-16:00"), "13:00");
	});
});
