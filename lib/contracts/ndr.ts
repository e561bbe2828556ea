/**
 * Contract of the `ndr` service (issue 9; spec §2.10, §4.2 `POST /v1/shipping/ndr`,
 * §4.6, §7; docs/decisions/0038-ndr-cases.md): failed-delivery cases opened
 * from the durable `shipment.status_changed` channel, the merchant's list,
 * counts and comments, courier NDR actions, the deadline policy and buyer
 * notifications. Money in rupees, times ISO-8601 UTC.
 */
import { messageOf } from "../platform/errors/catalogue";
import type { RouteParams } from "../platform/openapi/route";
import type { Address, PaymentMode } from "./common";
import type { NDR_ROUTES } from "./http/ndr";

/** The NDR route definitions (lib/contracts/http/ndr.ts). */
type Routes = typeof NDR_ROUTES;

/** The accepted `tab` values of `GET /v1/ndr`, in display order. */
export const NDR_TABS = ["action_required", "action_requested", "delivered", "rto"] as const;

/** One tab of the NDR list. */
export type NdrTab = (typeof NDR_TABS)[number];

/** Page size of `GET /v1/ndr` when `limit` is absent (§8 "not shown": as the orders list). */
export const NDR_DEFAULT_LIMIT = 50;
/** Largest `limit` of `GET /v1/ndr` (§4.8, §8). */
export const NDR_MAX_LIMIT = 1000;
/** Longest NDR comment (§8), in characters (Unicode code points) after trimming. */
export const COMMENT_MAX = 255;

/**
 * The closed list of NDR reasons (issue 9; DOMAIN.md "Tracking and NDR"):
 * the `reason` of a case, mapped from the courier's words by
 * lib/ndr/reasons.ts `ndrReasonOf`.
 */
export const NDR_REASONS = [
	"consignee_unavailable",
	"address_issue",
	"refused",
	"cod_not_ready",
	"future_delivery",
	"premises_closed",
	"out_of_delivery_area",
	"other",
] as const;

/** One NDR reason code. */
export type NdrReason = (typeof NDR_REASONS)[number];

/**
 * The buyer's message about a case's latest failed attempt, as a list row shows it: the
 * notifications service's `failed_delivery` message (issue 29, docs/decisions/0109-buyer-messages.md;
 * `template` the event's name), or for a case opened before it, the record ndr kept then
 * (`template` `ndr_attempt_failed`).
 */
export interface NdrNotificationView {
	channel: string;
	template: string;
	/**
	 * `queued`, `held` (quiet hours), `sent`, `delivered` (only when a provider reported
	 * delivery), `failed`, `simulated` (the sandbox: nothing was sent), `suppressed` (opted out)
	 */
	status: "queued" | "held" | "sent" | "delivered" | "failed" | "simulated" | "suppressed";
	provider: string | null;
	/** the buyer's number, masked (last 4 digits), or null when the order had none usable */
	recipient: string | null;
	sent_at: string | null;
	delivered_at: string | null;
	failed_at: string | null;
	error: string | null;
	created_at: string;
}

/** The latest NDR action of a case (merchant's or the policy's). */
export interface NdrActionView {
	act: "RE-ATTEMPT" | "DEFER_DLV" | "EDIT_DETAILS" | "RTO";
	/** `merchant` (POST /v1/shipping/ndr) or `system` (the deadline policy) */
	by: "merchant" | "system" | "buyer";
	/**
	 * `sent` (handed to the courier, its decision not known yet), `failed` (not
	 * handed over), then, for a courier that decides later (Delhivery), `accepted`
	 * or `refused` (the case is back in `action_required`: act again)
	 */
	status: "sent" | "failed" | "accepted" | "refused";
	/** the courier's request id (sent), else null */
	request_id: string | null;
	error: string | null;
	/** the courier's words on its later decision (e.g. why it refused), else null */
	courier_remarks: string | null;
	/** when the courier was last asked for its decision, else null */
	checked_at: string | null;
	at: string;
}

/**
 * One row of `GET /v1/ndr` (§2.10: the NDR row plus `order_value` and
 * `notification`; every field in docs/decisions/0038-ndr-cases.md).
 */
export interface NdrRow {
	/** the case id */
	id: number;
	order_id: number;
	customer_order_no: string;
	awb_number: string;
	logistic_id: number;
	courier_name: string;
	/** our booking id `bk_<attempt id>` (as book/sync and cancel answer it) */
	forward_id: string;
	/** the tab the case is in */
	tab: NdrTab;
	/** closed list ({@link NDR_REASONS}; lib/ndr/reasons.ts maps the courier's words) of the latest failed attempt */
	reason: string;
	/** the courier's words of the latest failed attempt */
	courier_reason: string;
	/** failed delivery attempts so far */
	attempts: number;
	/** failed attempts after which the shipment goes RTO */
	max_attempts: number;
	/** scan time of the first failed attempt */
	first_pending_at: string;
	/** scan time of the latest failed attempt */
	last_attempt_at: string;
	/** `action_required` only: when a re-attempt (or RTO) is requested on the merchant's behalf; else null */
	action_deadline_at: string | null;
	last_action: NdrActionView | null;
	/** closed cases: the shipment status that closed it (`delivered`, `rto_initiated`, …) or `rto_requested`; else null */
	closed_status: string | null;
	closed_at: string | null;
	payment_mode: PaymentMode;
	/** rupees: the order's declared total */
	order_value: number;
	/** rupees, COD orders only, else null */
	cod_amount: number | null;
	consignee: { name: string | null; city: string | null; pincode: string | null };
	comments: number;
	notification: NdrNotificationView | null;
	/** the buyer's answer on the tracking page to the latest attempt (issue 29), or null */
	buyer_answer: NdrBuyerAnswer | null;
	opened_at: string;
	updated_at: string;
}

/**
 * A buyer's answer on the tracking page to a case's latest failed attempt (issue 29;
 * docs/decisions/0110-buyer-ndr-answers.md): `pending` (being sent), `applied` (sent as an action `by: buyer`),
 * `awaiting_approval` (the merchant's `ndr_buyer_answers: approve`: act on it with `POST
 * /v1/shipping/ndr`), `failed` (the courier refused it: `error`). `at` ISO-8601 UTC.
 */
export interface NdrBuyerAnswer {
	attempt_no: number;
	choice: "reattempt" | "update" | "decline";
	/** `deferred_date` (IST day), or `address_1`, `landmark`, `phone`, as the buyer gave them */
	details: Record<string, unknown>;
	status: "pending" | "applied" | "awaiting_approval" | "failed";
	error: string | null;
	at: string;
}

/** The buyer's view of an AWB's live NDR case (`ndr.buyerCase`, for the tracking page). */
export interface NdrBuyerCase {
	order_id: number;
	awb_number: string;
	logistic_id: number;
	/** `action_required`: waiting for an answer; `action_requested`: the merchant acted; `rto` */
	tab: NdrTab | "closed";
	attempts: number;
	max_attempts: number;
	first_pending_at: string;
	reason: string;
	buyer_answer: NdrBuyerAnswer | null;
}

/** Params of `ndr.buyerAnswer` (built by the notifications service from the page's form). */
export interface NdrBuyerAnswerInput {
	sender_id: number;
	awb_number: string;
	/** the attempt the page showed */
	attempt_no: number;
	choice: "reattempt" | "update" | "decline";
	details: { deferred_date?: string; address_1?: string; landmark?: string; phone?: string };
	/** false: keep it for the merchant's approval */
	apply: boolean;
}

/** 200 answer of `GET /v1/ndr` (§2.12 envelope). */
export interface NdrPage {
	data: NdrRow[];
	pagination: { mode: "cursor"; limit: number; nextCursor: string | null };
}

/** 200 answer of `GET /v1/ndr/counts`: one number per tab, keys = {@link NDR_TABS}. */
export type NdrCounts = Record<NdrTab, number>;

/** 201 answer of `POST /v1/ndr/{id}/comment`: the created comment row (fields: docs/decisions/0038-ndr-cases.md). */
export interface NdrComment {
	id: number;
	/** the case it belongs to */
	ndr_id: number;
	order_id: number;
	awb_number: string;
	/** trimmed, 1–255 characters */
	comment: string;
	/** the author's `sub` (token subject) and role */
	created_by: string;
	created_by_role: string;
	created_at: string;
}

/** NDR actions a merchant can ask of the courier (§4.2 `ndr_act`; Delhivery's `act` of `POST /api/p/update`). */
export type NdrAct = "RE-ATTEMPT" | "DEFER_DLV" | "EDIT_DETAILS";

/** Every {@link NdrAct}, in the order the spec lists them (the first is the default). */
export const NDR_ACTS: readonly NdrAct[] = ["RE-ATTEMPT", "DEFER_DLV", "EDIT_DETAILS"];

/** Message of 400 `invalid_ndr_act` (§7: "not one of the three values"): `ndr_act must be one of …`. */
export const INVALID_NDR_ACT_MESSAGE = messageOf("invalid_ndr_act", NDR_ACTS);

/**
 * New delivery address of an `EDIT_DETAILS` act (trimmed; optional parts
 * absent when not given): the street part of an {@link Address}, with its
 * `city`, `state` and `pincode` (6 digits, first 1–9) optional; no name,
 * phone (the act's own `phone`) or email.
 */
export type NdrAddress = Pick<Address, "address_1" | "address_2" | "landmark"> &
	Partial<Pick<Address, "city" | "state" | "pincode">>;

/**
 * Validated body of `POST /v1/shipping/ndr` (lib/ndr/act-input.ts
 * `parseNdrActBody`): `deferred_date` only with `DEFER_DLV`; `phone` and/or
 * `address` only with `EDIT_DETAILS` (at least one of them there).
 */
export interface NdrActInput {
	order_id: number;
	logistic_id: number;
	ndr_act: NdrAct;
	/** `YYYY-MM-DD`, an India Standard Time calendar day (DEFER_DLV) */
	deferred_date?: string;
	/** the buyer's new phone, bare 10 digits (EDIT_DETAILS) */
	phone?: string;
	/** the buyer's new address (EDIT_DETAILS) */
	address?: NdrAddress;
}

/** 200 answer of `POST /v1/shipping/ndr` (§4.2). */
export interface NdrActAnswer {
	/** `requested`: the courier accepted the action (asynchronous at the courier) */
	status: "requested";
	awb: string;
	/** `bk_<attempt id>` */
	forward_id: string;
	order_id: number;
	ndr_act: "RE-ATTEMPT" | "DEFER_DLV" | "EDIT_DETAILS";
	/** the courier's request id (Delhivery's upload id) */
	request_id: string;
}

/** Answer of `ndr.tick` (one policy pass). */
export interface NdrTickResult {
	/** automatic re-attempts the courier accepted */
	reattempted: number;
	/** cases moved to RTO (attempts exhausted) */
	rto: number;
	/** automatic re-attempts that failed (retried after `NDR_POLICY_RETRY_MS`) */
	failed: number;
}

/** Answer of `ndr.checkActStatus` (one poll of a sent act's outcome, lib/ndr/act-status.ts). */
export interface NdrActCheck {
	action_id: number;
	/** the action's status after the poll; `sent` while the courier has not decided; null: no such action */
	status: "sent" | "failed" | "accepted" | "refused" | null;
	/** whether another poll was scheduled */
	rescheduled: boolean;
}

export interface NdrActions {
	/** GET /v1/ndr (§4.6, §2.10, §2.12): the caller's cases of one tab, newest first. */
	"ndr.list": { params: RouteParams<Routes["ndr.list"]>; result: NdrPage };
	/** GET /v1/ndr/counts (§4.6): one number per tab. */
	"ndr.counts": { params: RouteParams<Routes["ndr.counts"]>; result: NdrCounts };
	/** POST /v1/ndr/{id}/comment (§4.6, §7): 201 the created comment. */
	"ndr.comment": { params: RouteParams<Routes["ndr.comment"]>; result: NdrComment };
	/** POST /v1/shipping/ndr (§4.2, §7): the action sent to the courier. */
	"ndr.act": { params: RouteParams<Routes["ndr.act"]>; result: NdrActAnswer };
	/**
	 * Ops / tests: one policy pass now, as of `now` (ISO-8601; default the
	 * clock): automatic re-attempts after the deadline, RTO after the last
	 * attempt.
	 */
	"ndr.tick": { params: { now?: string }; result: NdrTickResult };
	/** Internal (the tracking page, issue 29): the buyer's view of an AWB's live case, or null. */
	"ndr.buyerCase": { params: { sender_id: number; awb_number: string }; result: NdrBuyerCase | null };
	/** Internal (the tracking page, issue 29): the buyer's answer to the latest failed attempt. */
	"ndr.buyerAnswer": { params: NdrBuyerAnswerInput; result: NdrBuyerAnswer };
	/**
	 * Worker of BullMQ queue `ndr-act-status` (lib/ndr/act-status.ts): asks the
	 * courier for the outcome of sent action `action_id` (poll number `n`, from 0)
	 * and records it, or schedules the next poll. Not aliased over HTTP.
	 */
	"ndr.checkActStatus": { params: { action_id: number; n?: number }; result: NdrActCheck };
}

export type NdrEvents = Record<never, never>;
