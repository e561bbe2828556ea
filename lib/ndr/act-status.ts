/**
 * The courier's later decision on a sent NDR act (issue 9 follow-up; spec §4.2
 * `POST /v1/shipping/ndr`; DOMAIN "Delhivery NDR actions"): Delhivery answers
 * an act with an upload id and decides it asynchronously
 * (`GET /api/cmu/get_bulk_upl/<id>`). After an act is recorded `sent` with a
 * request id at a courier whose adapter has `ndrActionStatus`, a BullMQ
 * delayed job of queue {@link ACT_STATUS_QUEUE} (worker action
 * `ndr.checkActStatus`) asks for the outcome: first after `NDR_ACT_POLL_MS`
 * (default 60 s), then after twice the previous delay (at most
 * {@link ACT_POLL_MAX_GAP_MS} apart) while the courier has not decided, for at
 * most {@link ACT_POLL_WINDOW_MS} after the act (then the action stays `sent`).
 *
 * - accepted → action `accepted`;
 * - refused (or the courier does not know the upload id) → action `refused`
 *   with the courier's words in `courier_remarks`, and the case back in
 *   `action_required` (./store.ts `settleAction`): the merchant must act again;
 * - pending, courier or rates unreachable → the next poll is scheduled.
 *
 * Jobs are at-least-once: an action no longer `sent` is left alone.
 */
import { type Caller, call, type NdrActCheck } from "../contracts";
import { adapterFor, type CourierAdapter, CourierRefused } from "../couriers";
import { getQueue } from "../platform/queue";
import { messageOf, type NdrDeps } from "./deps";
import { type ActionRecord, actionForCheck, markActionChecked, recordAction, settleAction } from "./store";

/** BullMQ queue of the polls (without prefix). */
export const ACT_STATUS_QUEUE = "ndr-act-status";
/** No poll is scheduled later than this long (ms) after the act was recorded (24 h). */
export const ACT_POLL_WINDOW_MS = 86_400_000;
/** Longest gap (ms) between two polls (1 h). */
export const ACT_POLL_MAX_GAP_MS = 3_600_000;

/** Delay (ms) before poll number `n` (0 = the first): `pollMs` × 2^n, at most {@link ACT_POLL_MAX_GAP_MS}. */
export function pollDelay(pollMs: number, n: number): number {
	return Math.min(pollMs * 2 ** Math.min(n, 30), ACT_POLL_MAX_GAP_MS);
}

/**
 * Adds poll number `n` of action `action_id` to {@link ACT_STATUS_QUEUE},
 * delayed `delayMs` (jobId `act-<id>-<n>`: a repeated add is one job). An
 * unexpected failure of the job itself is retried by BullMQ (5 attempts,
 * exponential backoff from 1 s). Throws when the queue backend is unreachable.
 */
export async function enqueueActCheck(action_id: number, n: number, delayMs: number): Promise<void> {
	await getQueue(ACT_STATUS_QUEUE).add(
		"check",
		{ action_id, n },
		{
			jobId: `act-${action_id}-${n}`,
			delay: delayMs,
			attempts: 5,
			backoff: { type: "exponential", delay: 1_000 },
			removeOnComplete: true,
			removeOnFail: true,
		},
	);
}

/**
 * Schedules the first poll of a just-recorded `sent` action (after
 * `settings.actPollMs`) when `polls` (the courier decides later: ./courier-action.ts
 * `sendNdrAction`). Never throws: a queue failure is logged (the act itself
 * stands; its outcome is then not followed).
 */
export async function scheduleFirstCheck(deps: NdrDeps, action_id: number, polls: boolean): Promise<void> {
	if (!polls) return;
	try {
		await enqueueActCheck(action_id, 0, pollDelay(deps.settings.actPollMs, 0));
	} catch (err) {
		deps.logger.warn(`ndr action ${action_id}: outcome poll not scheduled: ${messageOf(err)}`);
	}
}

/**
 * Records an action the courier took (`status` `sent`, its `request_id`; the
 * case moves to `action_requested`: ./store.ts `recordAction`) and schedules
 * its first outcome poll ({@link scheduleFirstCheck}). Used by the merchant's
 * act (./requests.ts) and the deadline policy (./policy.ts). Returns the action id.
 * @throws when the database fails (a queue failure only logs)
 */
export async function recordSentAction(
	deps: NdrDeps,
	base: Omit<ActionRecord, "status" | "request_id" | "error_code" | "error_message">,
	request_id: string,
	polls: boolean,
): Promise<number> {
	const action_id = await recordAction(deps.db, {
		...base,
		status: "sent",
		request_id,
		error_code: null,
		error_message: null,
	});
	await scheduleFirstCheck(deps, action_id, polls);
	return action_id;
}

/**
 * One poll (job of {@link ACT_STATUS_QUEUE}, action `ndr.checkActStatus`):
 * asks the courier of action `action_id` for the outcome of its request id
 * and records it (module doc), or schedules poll `n + 1`.
 * @returns {@link NdrActCheck} `{action_id, status, rescheduled}`; `status`
 *   null when no such action
 * @throws only when the database or the queue fails (BullMQ retries the job)
 */
export async function checkActStatus(
	deps: NdrDeps,
	via: Caller,
	action_id: number,
	n: number,
	now: Date = new Date(),
): Promise<NdrActCheck> {
	const a = await actionForCheck(deps.db, action_id);
	if (!a) return { action_id, status: null, rescheduled: false };
	if (a.status !== "sent" || !a.request_id) return { action_id, status: a.status, rescheduled: false };
	let adapter: CourierAdapter | null = null;
	let pendingWords: string | null = null;
	try {
		const courier = await call(via, "rates.getCourier", { logistic_id: a.logistic_id }, deps.callOptions());
		try {
			adapter = courier && adapterFor(courier);
		} catch {
			/* no integration */
		}
		if (!adapter?.ndrActionStatus) return { action_id, status: "sent", rescheduled: false };
		const outcomes = await adapter.ndrActionStatus(a.request_id);
		const mine = outcomes.find((o) => o.awb_number === a.awb_number);
		if (mine && mine.state !== "pending") {
			await settleAction(deps.db, action_id, mine.state, mine.remarks, deps.settings.deadlineMs);
			return { action_id, status: mine.state, rescheduled: false };
		}
		pendingWords = mine?.remarks ?? null;
	} catch (err) {
		if (err instanceof CourierRefused) {
			await settleAction(deps.db, action_id, "refused", err.message, deps.settings.deadlineMs);
			return { action_id, status: "refused", rescheduled: false };
		}
		deps.logger.warn(`ndr action ${action_id}: outcome not known yet: ${messageOf(err)}`);
	}
	await markActionChecked(deps.db, action_id, pendingWords);
	const delay = pollDelay(deps.settings.actPollMs, n + 1);
	if (now.getTime() + delay - new Date(a.created_at).getTime() > ACT_POLL_WINDOW_MS) {
		deps.logger.warn(
			`ndr action ${action_id}: the courier has not decided request ${a.request_id}; no more polls`,
		);
		return { action_id, status: "sent", rescheduled: false };
	}
	await enqueueActCheck(action_id, n + 1, delay);
	return { action_id, status: "sent", rescheduled: true };
}
