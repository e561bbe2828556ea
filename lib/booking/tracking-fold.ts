/**
 * The fold of courier scans into one shipment status (issue 7; spec §2.6, §3;
 * lib/shared/shipment-status.ts `foldsOver`): pure functions, no I/O. The
 * transaction that applies them is lib/booking/store/tracking.ts `ingestScans`.
 *
 * Rule: a shipment's scans are folded oldest first over its current status
 * (`foldsOver`): a scan replaces the status only when the current one is not
 * terminal and the scan's (rank, time) is greater. So a late, duplicated or
 * out-of-order scan never moves a shipment backwards, and a terminal status
 * (delivered, rto_delivered, lost, damaged, cancelled) never reopens. A
 * cancelled booking counts as status `cancelled` whatever its scans say.
 */
import type { LaneOutcomeParams } from "../contracts";
import { foldsOver, type LifecycleStatus, type ShipmentStatus } from "../shared/shipment-status";

/** What the fold reads of a locked attempt (times as Date, ids as numbers). */
export interface FoldTarget {
	attempt_id: number;
	order_id: number;
	sender_id: number;
	logistic_id: number;
	awb_number: string;
	state: "booked" | "cancelled";
	shipment_status: ShipmentStatus | null;
	shipment_status_at: Date | null;
	booked_at: Date | null;
	picked_up_at: Date | null;
	order_seq: number;
	from_pin: string | null;
	to_pin: string | null;
}

/** A newly stored scan of the attempt (the ones the dedupe let through). */
export interface NewScan {
	status: ShipmentStatus;
	at: Date;
	courier_status: string;
	remarks: string | null;
}

/** What the fold of an attempt's new scans decided. */
export interface FoldResult {
	/** the status after the fold */
	status: LifecycleStatus;
	/** time of the latest scan folded (the fold's clock: equal ranks compare against it) */
	status_at: Date | null;
	/** when `status` was reached: the time of the first scan of the run that set it */
	reached_at: Date | null;
	/** whether the status differs from before */
	changed: boolean;
	/** whether anything of the attempt's tracking columns changes (status, its time, pick-up time) */
	dirty: boolean;
	/** the earliest picked_up scan time, kept or new */
	picked_up_at: Date | null;
	/** the undelivered scans that folded (each a failed delivery attempt, NDR) */
	undelivered: NewScan[];
}

/** The current status of an attempt as the fold sees it: cancelled bookings are `cancelled` (terminal). */
export function currentStatus(a: Pick<FoldTarget, "state" | "shipment_status">): LifecycleStatus {
	return a.state === "cancelled" ? "cancelled" : (a.shipment_status ?? "booked");
}

/**
 * Folds `scans` (any order; sorted here by time) over attempt `a`'s current
 * status with {@link foldsOver}. Scans of equal time keep the order given.
 */
export function foldScans(a: FoldTarget, scans: NewScan[]): FoldResult {
	const before = currentStatus(a);
	let status = before;
	let at: Date | null = a.shipment_status_at ?? a.booked_at;
	let reached: Date | null = at;
	let picked = a.picked_up_at;
	const undelivered: NewScan[] = [];
	const sorted = [...scans].sort((x, y) => x.at.getTime() - y.at.getTime());
	for (const s of sorted) {
		if (s.status === "picked_up" && a.state === "booked" && (!picked || s.at < picked)) picked = s.at;
		if (!foldsOver(status, at, s.status, s.at)) continue;
		if (s.status !== status) reached = s.at;
		status = s.status;
		at = s.at;
		if (s.status === "undelivered") undelivered.push(s);
	}
	const changed = status !== before;
	const dirty =
		changed ||
		at?.getTime() !== (a.shipment_status_at ?? a.booked_at)?.getTime() ||
		picked?.getTime() !== a.picked_up_at?.getTime();
	return { status, status_at: at, reached_at: reached, changed, dirty, picked_up_at: picked, undelivered };
}

/** Turnaround in days, two decimals, never negative: `from` (pick-up, else booking) to `to`. */
export function tatDays(from: Date, to: Date): number {
	return Math.max(0, Math.round((to.getTime() - from.getTime()) / 864_000) / 100);
}

/**
 * The lane outcome (`rates.recordLaneOutcome`) of an attempt that just became
 * delivered or rto_delivered, or null (another status, or an attempt without
 * its lane's pincodes — booked before the lane was recorded). `tat_days`:
 * from the first pick-up scan (else the booking) to the terminal scan.
 */
export function laneOutcomeOf(a: FoldTarget, f: FoldResult): LaneOutcomeParams | null {
	if (!f.changed || (f.status !== "delivered" && f.status !== "rto_delivered")) return null;
	if (!a.from_pin || !a.to_pin || !f.reached_at) return null;
	const from = f.picked_up_at ?? a.booked_at ?? f.reached_at;
	return {
		attempt_id: a.attempt_id,
		logistic_id: a.logistic_id,
		from_pin: a.from_pin,
		to_pin: a.to_pin,
		outcome: f.status === "delivered" ? "delivered" : "rto",
		tat_days: tatDays(from, f.reached_at),
	};
}
