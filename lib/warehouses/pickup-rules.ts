/**
 * The rules of a pickup day and slot (issue 28; docs/decisions/0107-pickup-requests.md),
 * pure so they are tested with a frozen clock: which day a request may name for a courier
 * at a warehouse, the default day and slot, and the time sent to the courier. Days are IST
 * calendar days `YYYY-MM-DD`; slots are IST time windows.
 */
import { PICKUP_MAX_DAYS_AHEAD, PICKUP_SLOTS, type PickupSlot } from "../contracts/warehouses";
import type { PickupRules } from "../shared/calendar";
import { holidayName, nextPickupDay } from "../shared/calendar";
import { addDays, IST_OFFSET_MS, istDay } from "../shared/ist-date";

/** The time sent to the courier for a slot: its start (`HH:mm`, IST). */
export function slotStart(slot: PickupSlot): string {
	return slot.slice(0, 5);
}

/** Minutes after IST midnight of `now`. */
function istMinutes(now: Date): number {
	const t = now.getTime() + IST_OFFSET_MS;
	return Math.floor((t % 86_400_000) / 60_000);
}

/** Minutes after midnight of `HH:mm`. */
const minutes = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** `HH:mm` of minutes after midnight. */
const hhmm = (m: number): string =>
	`${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`;

/** Week day names for messages (0 = Sunday). */
const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** The refusal of a day: why, and the first day that can be asked for. */
export interface DayRefusal {
	why: string;
	next_pickup_date: string;
}

/**
 * Whether `day` may be asked for at `now` with a courier of `rules` (its name `courier`)
 * at a warehouse in `state`: null when it may, else the refusal. Refused: a day before today
 * (IST); more than {@link PICKUP_MAX_DAYS_AHEAD} days ahead; today once the courier's cut-off
 * has passed; a week day the courier does not collect on; a national holiday or one of the
 * warehouse's state (named in the words).
 */
export function refuseDay(
	day: string,
	rules: PickupRules,
	courier: string,
	state: string | null | undefined,
	now: Date,
): DayRefusal | null {
	const today = istDay(now);
	const next_pickup_date = nextPickupDay(rules, state, now);
	const refuse = (why: string): DayRefusal => ({ why, next_pickup_date });
	if (day < today) return refuse(`pickup_date ${day} is in the past (today is ${today} IST)`);
	const last = addDays(today, PICKUP_MAX_DAYS_AHEAD);
	if (day > last)
		return refuse(
			`pickup_date ${day} is more than ${PICKUP_MAX_DAYS_AHEAD} days ahead (the last is ${last})`,
		);
	if (day === today && istMinutes(now) >= rules.cutoff_minutes)
		return refuse(`${courier}'s cut-off for today (${hhmm(rules.cutoff_minutes)} IST) has passed`);
	const weekday = new Date(`${day}T00:00:00Z`).getUTCDay();
	if (!rules.weekdays.includes(weekday))
		return refuse(`${courier} does not collect on ${WEEKDAYS[weekday]}s`);
	const holiday = holidayName(day, state);
	if (holiday) return refuse(`${day} is a holiday (${holiday}): ${courier}'s hub is closed`);
	return null;
}

/**
 * The slot of a request for `day` at `now`: `asked` when given (refused with words when it
 * is today and has already begun), else the first slot that has not begun (any slot on a
 * later day: the first). Null words when no slot is left today.
 */
export function slotFor(
	day: string,
	asked: PickupSlot | undefined,
	now: Date,
): { slot: PickupSlot } | { why: string } {
	const today = day === istDay(now);
	const left = today ? PICKUP_SLOTS.filter((s) => minutes(s) > istMinutes(now)) : [...PICKUP_SLOTS];
	if (asked !== undefined) {
		return left.includes(asked) ? { slot: asked } : { why: `slot ${asked} has already begun today` };
	}
	return left[0] ? { slot: left[0] } : { why: "no pickup slot is left today" };
}
