/**
 * The NDR deadline policy (issue 9; DOMAIN.md "Tracking and NDR": "the seller
 * has about 24 h to act on an NDR; without action a re-attempt is requested
 * on their behalf; after three attempts the parcel goes RTO";
 * docs/decisions/0038-ndr-cases.md).
 *
 * One pass ({@link policyPass}), as of an instant `now` (the timer's clock, or
 * the `now` given to `ndr.tick`, so tests control time without sleeping):
 * 1. leases the due cases (./store.ts `leaseDueCases`: `action_required` past
 *    `deadline_at`, or with `maxAttempts` failed attempts; FOR UPDATE SKIP
 *    LOCKED and a lease, so pods running passes at once take disjoint cases);
 * 2. a case with `maxAttempts` failed attempts goes RTO: recorded as an `RTO`
 *    action by `system`, the case moves to tab `rto` (`closed_status`
 *    `rto_requested`). Couriers have no RTO request in their NDR API (they
 *    return a parcel after their own last attempt); a sandbox courier's
 *    simulator is told to emit `rto_initiated` first (as the courier would),
 *    which reaches the case back through booking's scans and the channel;
 * 3. any other due case gets a `RE-ATTEMPT` on the merchant's behalf through
 *    ./courier-action.ts `sendNdrAction` (recorded by `system`): accepted →
 *    tab `action_requested`; refused or unreachable → recorded as failed and
 *    tried again `policyRetryMs` later.
 * The buyer's messages are the notifications service's (issue 29).
 */
import { type Caller, call, type NdrTickResult } from "../contracts";
import { recordSentAction } from "./act-status";
import { sendNdrAction } from "./courier-action";
import { messageOf, type NdrDeps } from "./deps";
import { type CaseRow, leaseDueCases, recordAction, releaseLease } from "./store";

/** Runs one policy pass as of `now` (see the module doc). */
export async function policyPass(deps: NdrDeps, via: Caller, now: Date): Promise<NdrTickResult> {
	const s = deps.settings;
	const out: NdrTickResult = { reattempted: 0, rto: 0, failed: 0 };
	// batch after batch while full and moving (a case whose RTO could not be requested is released: bounded)
	for (let round = 0; round < 20; round++) {
		const due = await leaseDueCases(deps.db, now, s.maxAttempts, s.batch, s.leaseMs);
		let moved = 0;
		for (const c of due) {
			if (c.attempts >= s.maxAttempts) {
				if (await requestRto(deps, via, c, now)) out.rto++;
				else out.failed++;
			} else if (await autoReattempt(deps, via, c, now)) out.reattempted++;
			else out.failed++;
			moved++;
		}
		if (due.length < s.batch || !moved) break;
	}
	return out;
}

/** RE-ATTEMPT on the merchant's behalf; answers whether the courier accepted it. */
async function autoReattempt(deps: NdrDeps, via: Caller, c: CaseRow, now: Date): Promise<boolean> {
	const base = {
		case_id: c.id,
		sender_id: c.sender_id,
		order_id: c.order_id,
		act: "RE-ATTEMPT" as const,
		by: "system" as const,
		actor: "system",
		details: { reason: "action deadline passed" },
		attempt_no: c.attempts,
		at: now,
	};
	try {
		const { request_id, polls } = await sendNdrAction(
			via,
			{
				awb_number: c.awb_number,
				logistic_id: c.logistic_id,
				input: { order_id: c.order_id, logistic_id: c.logistic_id, ndr_act: "RE-ATTEMPT" },
				first_pending_at: c.first_pending_at.toISOString(),
			},
			{ now, callOptions: deps.callOptions() },
		);
		await recordSentAction(deps, base, request_id, polls);
		return true;
	} catch (err) {
		const e = err as { type?: unknown };
		await recordAction(
			deps.db,
			{
				...base,
				status: "failed",
				request_id: null,
				error_code: typeof e.type === "string" ? e.type : "error",
				error_message: messageOf(err),
			},
			new Date(now.getTime() + deps.settings.policyRetryMs),
		);
		deps.logger.warn(`ndr case ${c.id}: automatic re-attempt failed: ${messageOf(err)}`);
		return false;
	}
}

/**
 * Moves a case to RTO, recorded by `who` (the policy when its attempts are exhausted, or the
 * buyer who declined the parcel: issue 29). A sandbox courier's simulator first emits
 * `rto_initiated` for the AWB (couriers have no RTO request in their NDR API; a real courier
 * returns the parcel after its own last attempt). If that cannot be asked, the lease is released
 * and nothing is recorded. Answers whether it moved.
 */
export async function requestRto(
	deps: NdrDeps,
	via: Caller,
	c: CaseRow,
	now: Date,
	who: { by: "system" | "buyer"; actor: string; reason: string } = {
		by: "system",
		actor: "system",
		reason: `${c.attempts} failed delivery attempts`,
	},
): Promise<boolean> {
	try {
		const courier = await call(via, "rates.getCourier", { logistic_id: c.logistic_id }, deps.callOptions());
		if (courier?.adapter === "sandbox") {
			await call(
				via,
				"simulator.emitScan",
				{ awb_number: c.awb_number, event: "rto_initiated" },
				deps.callOptions(),
			);
		}
	} catch (err) {
		deps.logger.warn(`ndr case ${c.id}: RTO not requested yet: ${messageOf(err)}`);
		await releaseLease(deps.db, c.id);
		return false;
	}
	await recordAction(deps.db, {
		case_id: c.id,
		sender_id: c.sender_id,
		order_id: c.order_id,
		act: "RTO",
		by: who.by,
		actor: who.actor,
		details: { reason: who.reason },
		status: "sent",
		request_id: null,
		error_code: null,
		error_message: null,
		attempt_no: c.attempts,
		at: now,
	});
	return true;
}
