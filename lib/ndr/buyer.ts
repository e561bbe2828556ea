/**
 * Failed deliveries answered by the buyer on the tracking page (issue 29;
 * docs/decisions/0110-buyer-ndr-answers.md). The notifications service shows the form while the
 * shipment's case waits for an answer (`ndr.buyerCase`) and hands the buyer's answer here
 * (`ndr.buyerAnswer`):
 * - `reattempt` with a day → `DEFER_DLV`; `update` (address line, landmark, phone) →
 *   `EDIT_DETAILS`; both through the path of `POST /v1/shipping/ndr` (./requests.ts
 *   `requestAct`: the same body rules, the courier's window, the courier call), recorded
 *   `by: buyer`;
 * - `decline` → the case to RTO (./policy.ts `requestRto`), recorded `by: buyer`;
 * - with the merchant's `ndr_buyer_answers: approve` (`apply: false`), nothing goes to the
 *   courier: the answer waits on the case (`buyer_answer`, status `awaiting_approval`) for the
 *   merchant's own action.
 * One answer per attempt: an answer to an attempt already answered returns the first (a failed
 * one, refused by the courier, may be replaced).
 */
import type { Context } from "moleculer";
import type { CallMeta, NdrBuyerAnswerInput, NdrBuyerCase } from "../contracts";
import { errorBodyOf, fail } from "../platform/errors";
import { parseNdrActBody } from "./act-input";
import type { NdrDeps } from "./deps";
import { requestRto } from "./policy";
import { requestAct } from "./requests";
import { type BuyerAnswerOnCase, type CaseRow, claimBuyerAnswer, liveCaseOf, setBuyerAnswer } from "./store";

/** The buyer's view of an AWB's live case, or null (none, or another account's). */
export async function buyerCase(
	deps: NdrDeps,
	sender_id: number,
	awb_number: string,
): Promise<NdrBuyerCase | null> {
	const c = await liveCaseOf(deps.db, awb_number);
	if (!c || c.sender_id !== sender_id) return null;
	return {
		order_id: c.order_id,
		awb_number: c.awb_number,
		logistic_id: c.logistic_id,
		tab: c.status,
		attempts: c.attempts,
		max_attempts: deps.settings.maxAttempts,
		first_pending_at: new Date(c.first_pending_at).toISOString(),
		reason: c.reason,
		buyer_answer: c.buyer_answer,
	};
}

/**
 * Applies (or, `apply: false`, keeps for the merchant) the buyer's answer to the latest attempt of
 * the AWB's case. → the answer as kept on the case.
 * Errors: 409 `no_open_ndr` (no case waiting for an answer: none, closed, or the merchant acted),
 * `ndr_attempt_changed` (a newer attempt failed since the page was shown); 400
 * `validation_failed` (the act's body rules, the DEFER_DLV window); 503 `ndr_unavailable`,
 * `service_unavailable`. A courier's refusal is not thrown: the answer is kept `failed` with its words.
 */
export async function buyerAnswer(
	deps: NdrDeps,
	ctx: Context<unknown, CallMeta>,
	p: NdrBuyerAnswerInput,
	now = new Date(),
): Promise<BuyerAnswerOnCase> {
	const c = await liveCaseOf(deps.db, p.awb_number);
	if (!c || c.sender_id !== p.sender_id || c.status !== "action_required")
		throw fail("no_open_ndr", c?.order_id ?? 0);
	if (p.attempt_no !== c.attempts) throw fail("ndr_attempt_changed", c.attempts);
	const before = c.buyer_answer;
	if (before && before.attempt_no === c.attempts && before.status !== "failed" && before.status !== "pending")
		return before;
	const base = { attempt_no: c.attempts, choice: p.choice, details: { ...p.details }, at: now.toISOString() };
	// one request at a time per attempt: a double-submitted form (or two tabs) sends one action
	const staleBefore = new Date(now.getTime() - CLAIM_STALE_MS);
	if (!(await claimBuyerAnswer(deps.db, c.id, { ...base, status: "pending", error: null }, staleBefore))) {
		const now2 = await liveCaseOf(deps.db, p.awb_number);
		return now2?.buyer_answer ?? { ...base, status: "pending", error: null };
	}
	try {
		const answer = await applyAnswer(deps, ctx, c, p, base, now);
		await setBuyerAnswer(deps.db, c.id, answer);
		return answer;
	} catch (err) {
		// nothing was decided: the claim goes, so the buyer can send the form again
		await setBuyerAnswer(deps.db, c.id, before);
		throw err;
	}
}

/** How long a `pending` claim blocks another answer to the same attempt (a crashed request's claim lapses). */
const CLAIM_STALE_MS = 60_000;

/** The answer after it was applied or kept: the action through the merchant's path, or the RTO. */
async function applyAnswer(
	deps: NdrDeps,
	ctx: Context<unknown, CallMeta>,
	c: CaseRow,
	p: NdrBuyerAnswerInput,
	base: Omit<BuyerAnswerOnCase, "status" | "error">,
	now: Date,
): Promise<BuyerAnswerOnCase> {
	let answer: BuyerAnswerOnCase;
	if (!p.apply) answer = { ...base, status: "awaiting_approval", error: null };
	else if (p.choice === "decline") {
		const moved = await requestRto(deps, ctx, c, now, {
			by: "buyer",
			actor: "buyer",
			reason: "the buyer declined the parcel on the tracking page",
		});
		if (!moved) throw fail("service_unavailable");
		answer = { ...base, status: "applied", error: null };
	} else {
		const input = parseNdrActBody({
			order_id: c.order_id,
			logistic_id: c.logistic_id,
			...(p.choice === "reattempt"
				? { ndr_act: "DEFER_DLV", deferred_date: p.details.deferred_date }
				: {
						ndr_act: "EDIT_DETAILS",
						...(p.details.phone ? { phone: p.details.phone } : {}),
						...(p.details.address_1
							? { address: { address_1: p.details.address_1, landmark: p.details.landmark || undefined } }
							: {}),
					}),
		});
		try {
			await requestAct(deps, ctx, p.sender_id, { by: "buyer", actor: "buyer" }, input);
			answer = { ...base, status: "applied", error: null };
		} catch (err) {
			const body = errorBodyOf(err)?.body;
			if (body?.error !== "reattempt_failed") throw err;
			answer = { ...base, status: "failed", error: String(body.message ?? "refused by the courier") };
		}
	}
	return answer;
}
