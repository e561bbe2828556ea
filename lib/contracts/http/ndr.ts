/**
 * The HTTP routes of the `ndr` service (spec §2.10, §4.2, §4.6, §7, §8;
 * docs/decisions/0037-ndr-courier-actions.md, docs/decisions/0038-ndr-cases.md):
 * the courier action `POST /v1/shipping/ndr`, the list `GET /v1/ndr`, the
 * counts and the comments. One definition each (issue 26;
 * lib/platform/openapi/route.ts, docs/ARCHITECTURE.md §9).
 *
 * Every input of the ndr service is validated by hand (lib/ndr/act-input.ts
 * `parseNdrActBody`, lib/ndr/list.ts `parseNdrListQuery`, `parseComment`,
 * `parseNdrOrderId`): no validator schema to share, so the bodies and query
 * parameters here are written by hand and say so; the bounds and lists they
 * name (limits, tabs, acts, reasons, the `invalid_ndr_act` message) are the
 * contract's (lib/contracts/ndr.ts), which the parsers import.
 */
import { ID_PATH_SCHEMA, json, queryParam } from "../../platform/openapi/components";
import { idInput, int, nullableStr, PAGINATION, rupees, str, utc } from "../../platform/openapi/helpers";
import { defineRoutes } from "../../platform/openapi/route";
import type { JsonSchema } from "../../platform/openapi/types";
import {
	COMMENT_MAX,
	INVALID_NDR_ACT_MESSAGE,
	NDR_ACTS,
	NDR_DEFAULT_LIMIT,
	NDR_MAX_LIMIT,
	NDR_REASONS,
	NDR_TABS,
} from "../ndr";

// ---------------------------------------------------------------------------
// Documented shapes (written by hand: the inputs are parsed by hand)
// ---------------------------------------------------------------------------

/** A free-text address part as lib/ndr/act-input.ts checks it (trimmed, no control characters). */
const text = (description: string, min: number, max: number): JsonSchema => ({
	type: "string",
	minLength: min,
	maxLength: max,
	description: `${description} Trimmed; no control characters.`,
});

/** The body of `POST /v1/shipping/ndr`, as lib/ndr/act-input.ts `parseNdrActBody` checks it by hand. */
const ACT_BODY: JsonSchema = {
	type: "object",
	description:
		"Validated by hand (lib/ndr/act-input.ts `parseNdrActBody`). `deferred_date` only with DEFER_DLV; `phone` / `address` only with EDIT_DETAILS (at least one of them there). Unknown keys are ignored.",
	required: ["order_id", "logistic_id"],
	properties: {
		order_id: idInput("the order with the failed delivery (spec §4.2)."),
		logistic_id: idInput("the shipment's courier (must be the one the shipment is with)."),
		ndr_act: {
			type: ["string", "null"],
			enum: [...NDR_ACTS, null],
			default: NDR_ACTS[0],
			description: `the action (the courier's own words, case-sensitive); absent or null = ${NDR_ACTS[0]}. Anything else is 400 \`invalid_ndr_act\`.`,
		},
		deferred_date: {
			type: "string",
			pattern: "^\\d{4}-\\d{2}-\\d{2}$",
			description:
				"DEFER_DLV (required there, refused otherwise): a real calendar day `YYYY-MM-DD` in India Standard Time, after today and at most 6 days after the first failed delivery.",
		},
		phone: {
			type: ["string", "integer"],
			description:
				"EDIT_DETAILS: the buyer's new 10-digit Indian mobile starting 6–9; separators and a `+91` / `91` / `0` prefix accepted.",
		},
		address: {
			type: "object",
			description:
				"EDIT_DETAILS: the buyer's new address (order receiver rules); the pincode cannot change at the courier.",
			required: ["address_1"],
			properties: {
				address_1: text("street address, 3–255 characters.", 3, 255),
				address_2: {
					...text("second line, at most 255 characters; empty = none.", 0, 255),
					type: ["string", "null"],
				},
				landmark: {
					...text("landmark, at most 255 characters; empty = none.", 0, 255),
					type: ["string", "null"],
				},
				city: { ...text("city, at most 100 characters.", 0, 100), type: ["string", "null"] },
				state: { ...text("state, at most 100 characters.", 0, 100), type: ["string", "null"] },
				pincode: {
					type: ["string", "integer", "null"],
					description: "six digits, the first 1–9",
				},
			},
		},
	},
};

/** 200 answer of `POST /v1/shipping/ndr` (lib/contracts/ndr.ts `NdrActAnswer`). */
const ACT_ANSWER: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: ["status", "awb", "forward_id", "order_id", "ndr_act", "request_id"],
	properties: {
		status: {
			const: "requested",
			description: "the courier accepted the request; its outcome is the next scan",
		},
		awb: str("the shipment's AWB"),
		forward_id: str("`bk_<attempt id>`: our booking of the shipment", { pattern: "^bk_[0-9]+$" }),
		order_id: int("the order"),
		ndr_act: { type: "string", enum: [...NDR_ACTS] },
		request_id: str("the courier's request id (Delhivery's upload id)"),
	},
};

/** `last_action` of a row (lib/contracts/ndr.ts `NdrActionView`). */
const ACTION_VIEW: JsonSchema = {
	description: "the case's latest action (the merchant's or the deadline policy's), or null",
	oneOf: [
		{ type: "null" },
		{
			type: "object",
			additionalProperties: false,
			required: ["act", "by", "status", "request_id", "error", "courier_remarks", "checked_at", "at"],
			properties: {
				act: { type: "string", enum: [...NDR_ACTS, "RTO"] },
				by: {
					type: "string",
					enum: ["merchant", "system", "buyer"],
					description:
						"`system`: the deadline policy; `buyer`: the buyer's answer on the tracking page (docs/decisions/0110-buyer-ndr-answers.md)",
				},
				status: {
					type: "string",
					enum: ["sent", "failed", "accepted", "refused"],
					description:
						"`sent`: handed to the courier, its decision not known yet; `failed`: not handed over; `accepted` / `refused`: the courier's later decision (couriers that decide acts asynchronously, e.g. Delhivery). After `refused` the case is back in tab `action_required`: act again.",
				},
				request_id: nullableStr("the courier's request id when sent"),
				error: nullableStr("why it failed"),
				courier_remarks: nullableStr("the courier's words on its later decision (why it refused), else null"),
				checked_at: utc("when the courier was last asked for its decision, null when never", true),
				at: utc("when"),
			},
		},
	],
};

/** `buyer_answer` of a row (lib/contracts/ndr.ts `NdrBuyerAnswer`). */
const BUYER_ANSWER_VIEW: JsonSchema = {
	description:
		"the buyer's answer on the tracking page to the latest failed attempt (docs/decisions/0110-buyer-ndr-answers.md), or null",
	oneOf: [
		{ type: "null" },
		{
			type: "object",
			additionalProperties: false,
			required: ["attempt_no", "choice", "details", "status", "error", "at"],
			properties: {
				attempt_no: { type: "integer", description: "the attempt answered" },
				choice: {
					type: "string",
					enum: ["reattempt", "update", "decline"],
					description:
						"`reattempt` on `details.deferred_date` (DEFER_DLV), `update` of `details.address_1` / `landmark` / `phone` (EDIT_DETAILS), `decline` (RTO)",
				},
				details: { type: "object", description: "what the buyer gave" },
				status: {
					type: "string",
					enum: ["pending", "applied", "awaiting_approval", "failed"],
					description:
						"`pending`: being sent to the courier (a second submit of the form waits for it); `applied`: sent to the courier as an action `by: buyer`; `awaiting_approval` (your `ndr_buyer_answers: approve`): act on it with `POST /v1/shipping/ndr`; `failed`: the courier refused it (`error`)",
				},
				error: nullableStr("the courier's words of a refusal"),
				at: utc("answered"),
			},
		},
	],
};

/** `notification` of a row (lib/contracts/ndr.ts `NdrNotificationView`). */
const NOTIFICATION_VIEW: JsonSchema = {
	description:
		"the buyer's message about the latest failed attempt and how it landed (spec §2.10): the notifications service's `failed_delivery` message on the newest channel (docs/decisions/0109-buyer-messages.md), or for a case opened before it the record kept then; null when the buyer has no contact, the event is switched off, or the notifications service could not be asked within 1 s",
	oneOf: [
		{ type: "null" },
		{
			type: "object",
			additionalProperties: false,
			required: [
				"channel",
				"template",
				"status",
				"provider",
				"recipient",
				"sent_at",
				"delivered_at",
				"failed_at",
				"error",
				"created_at",
			],
			properties: {
				channel: str("e.g. `sms`"),
				template: str("`failed_delivery` (`ndr_attempt_failed` on a case opened before buyer messages)"),
				status: {
					type: "string",
					enum: ["queued", "held", "sent", "delivered", "failed", "simulated", "suppressed"],
					description:
						"`queued` (not handed to the provider yet), `held` (quiet hours), `sent` (a provider accepted it), `delivered` (only when a provider reported the delivery), `failed` (`error` says why), `simulated` (the sandbox: nothing was sent to the buyer; `sent_at` and `delivered_at` stay null), `suppressed` (the buyer opted out)",
				},
				provider: nullableStr("the provider that took it"),
				recipient: nullableStr("the buyer's number masked (`******1234`), or null"),
				sent_at: utc("sent", true),
				delivered_at: utc("delivered", true),
				failed_at: utc("failed", true),
				error: nullableStr("why it failed"),
				created_at: utc("queued"),
			},
		},
	],
};

/** One row of `GET /v1/ndr` (lib/contracts/ndr.ts `NdrRow`; spec §2.10). */
const NDR_ROW: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: [
		"id",
		"order_id",
		"customer_order_no",
		"awb_number",
		"logistic_id",
		"courier_name",
		"forward_id",
		"tab",
		"reason",
		"courier_reason",
		"attempts",
		"max_attempts",
		"first_pending_at",
		"last_attempt_at",
		"action_deadline_at",
		"last_action",
		"closed_status",
		"closed_at",
		"payment_mode",
		"order_value",
		"cod_amount",
		"consignee",
		"comments",
		"notification",
		"buyer_answer",
		"opened_at",
		"updated_at",
	],
	properties: {
		id: int("the NDR case"),
		order_id: int("the order"),
		customer_order_no: str("the merchant's reference"),
		awb_number: str("the shipment's AWB"),
		logistic_id: int("the courier"),
		courier_name: str("its display name"),
		forward_id: str("`bk_<attempt id>`", { pattern: "^bk_[0-9]+$" }),
		tab: { type: "string", enum: [...NDR_TABS] },
		reason: {
			type: "string",
			enum: [...NDR_REASONS],
			description: "reason of the latest failed attempt (closed list)",
		},
		courier_reason: str("the courier's words of the latest failed attempt"),
		attempts: int("failed delivery attempts so far", { minimum: 1 }),
		max_attempts: int("failed attempts after which the shipment goes RTO"),
		first_pending_at: utc("scan time of the first failed attempt"),
		last_attempt_at: utc("scan time of the latest failed attempt"),
		action_deadline_at: utc(
			"`action_required` only: when a re-attempt (or RTO) is requested on the merchant's behalf; else null",
			true,
		),
		last_action: ACTION_VIEW,
		closed_status: nullableStr(
			"closed cases: the shipment status that closed it (`delivered`, `rto_initiated`, …) or `rto_requested`; else null",
		),
		closed_at: utc("closed", true),
		payment_mode: { type: "string", enum: ["prepaid", "cod"] },
		order_value: rupees("the order's declared total."),
		cod_amount: { type: ["number", "null"], description: "rupees to collect, COD orders only, else null" },
		consignee: {
			type: "object",
			additionalProperties: false,
			required: ["name", "city", "pincode"],
			properties: {
				name: nullableStr("consignee's name"),
				city: nullableStr("destination city"),
				pincode: nullableStr("destination pincode"),
			},
		},
		comments: int("comments on the case", { minimum: 0 }),
		notification: NOTIFICATION_VIEW,
		buyer_answer: BUYER_ANSWER_VIEW,
		opened_at: utc("case opened"),
		updated_at: utc("case last changed"),
	},
};

// ---------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------

/** The NDR routes, keyed by the action that answers each. */
export const NDR_ROUTES = defineRoutes({
	"ndr.act": {
		route: "POST /v1/shipping/ndr",
		access: { writes: true },
		tag: "ndr",
		operationId: "ndr_act",
		summary: "Send a failed-delivery action to the courier",
		description:
			"Spec §4.2, §7; docs/decisions/0037-ndr-courier-actions.md: asks the courier to re-attempt, defer or deliver with new details, on the order's open NDR case. A transient courier failure is retried (at most 3 calls, backoff with jitter, within 10 s). The outcome is recorded on the case; an accepted act moves it to `action_requested`. Read-only roles are refused (§5 rule 3 calls accepting them a defect).",
		bodySchema: ACT_BODY,
		responses: { "200": json("Accepted by the courier.", ACT_ANSWER) },
		errors: [
			{
				code: "invalid_ndr_act",
				when: `\`${INVALID_NDR_ACT_MESSAGE}\`, answered before any other field failure`,
			},
			{
				code: "validation_failed",
				when: "with `details` (ids, `deferred_date`, `phone`, `address.*`; `logistic_id` not the shipment's courier; a DEFER_DLV date outside the window).",
			},
			{ code: "order not found", when: "no such order on the account (code = message)." },
			{ code: "no_open_ndr", when: "the order has no open NDR case" },
			{ code: "ndr_attempts_exhausted", when: "the last allowed attempt failed: the shipment goes RTO." },
			{
				code: "reattempt_failed",
				when: "the courier refused (its words), or it has no NDR integration here (spec §7).",
			},
			{ code: "ndr_unavailable", when: "the courier could not be reached after the retries; retry." },
		],
	},
	"ndr.list": {
		route: "GET /v1/ndr",
		access: { auth: true },
		tag: "ndr",
		operationId: "ndr_list",
		summary: "List failed deliveries",
		description:
			"Spec §4.6, §2.10, §2.12; docs/decisions/0038-ndr-cases.md: the caller's NDR cases of one tab, newest first, cursor-paged, each with `order_value` and `notification`. Values are trimmed; an empty filter is no filter. Any authenticated role. Query validated by hand (lib/ndr/list.ts `parseNdrListQuery`).",
		queryParams: [
			queryParam("tab", "required, no default", { type: "string", enum: [...NDR_TABS] }, true),
			queryParam("limit", `page size, integer 1–${NDR_MAX_LIMIT}, default ${NDR_DEFAULT_LIMIT}`, {
				type: "string",
				pattern: "^[0-9]+$",
				default: String(NDR_DEFAULT_LIMIT),
			}),
			queryParam("cursor", "a `nextCursor` of this list for the same tab and filters"),
			queryParam("awb_number", "exact AWB, 1–64 letters, digits or hyphens", {
				type: "string",
				pattern: "^[A-Za-z0-9-]{1,64}$",
			}),
			queryParam(
				"date_from",
				"cases whose first failed attempt is on or after this India Standard Time day, `YYYY-MM-DD` (a real calendar date)",
				{ type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" },
			),
		],
		responses: {
			"200": json("A page of cases.", {
				type: "object",
				additionalProperties: false,
				required: ["data", "pagination"],
				properties: { data: { type: "array", items: NDR_ROW }, pagination: PAGINATION },
			}),
		},
		errors: [
			{ code: "bad_tab", when: "absent or not accepted; `message` lists the tabs" },
			{ code: "bad_date", when: "`date_from` not `YYYY-MM-DD` or not a real day" },
			{
				code: "validation_failed",
				when: "with `field` and `details` (`limit`, `awb_number`)",
				extra: { field: { type: "string", description: "the first offending query key" } },
			},
			{ code: "cursor: unrecognised shape", when: "code = message (spec §7)." },
		],
	},
	"ndr.counts": {
		route: "GET /v1/ndr/counts",
		access: { auth: true },
		tag: "ndr",
		operationId: "ndr_counts",
		summary: "Failed deliveries per tab",
		description:
			"Spec §4.6: one number per tab, the total `GET /v1/ndr?tab=<tab>` pages through with no filters. Any authenticated role.",
		responses: {
			"200": json("Counts; keys are exactly the accepted `tab` values.", {
				type: "object",
				additionalProperties: false,
				required: [...NDR_TABS],
				properties: Object.fromEntries(
					NDR_TABS.map((t) => [t, int(`cases in tab \`${t}\``, { minimum: 0 })]),
				),
			}),
		},
	},
	"ndr.comment": {
		route: "POST /v1/ndr/:id/comment",
		access: { capability: "ndr.act", writes: true },
		tag: "ndr",
		operationId: "ndr_comment",
		summary: "Comment on a failed delivery",
		description:
			"Spec §4.6, §7, §8: adds a comment to the order's newest NDR case (open or closed). Capability `ndr.act` and a write: merchant_finance, merchant_support (which holds `ndr.act`) and merchant_staff all get 403 `Read-only role`. Input validated by hand (lib/ndr/list.ts `parseComment`, `parseNdrOrderId`).",
		path: { id: { description: "the order id, a positive integer", schema: ID_PATH_SCHEMA } },
		bodySchema: {
			type: "object",
			description: "Validated by hand. Unknown keys are ignored.",
			required: ["comment"],
			properties: {
				comment: {
					type: "string",
					minLength: 1,
					maxLength: COMMENT_MAX,
					description: `trimmed, then 1–${COMMENT_MAX} characters (Unicode code points)`,
				},
			},
		},
		responses: {
			"201": json("The created comment row.", {
				type: "object",
				additionalProperties: false,
				required: [
					"id",
					"ndr_id",
					"order_id",
					"awb_number",
					"comment",
					"created_by",
					"created_by_role",
					"created_at",
				],
				properties: {
					id: int("the comment"),
					ndr_id: int("the case it belongs to"),
					order_id: int("the order"),
					awb_number: str("the shipment's AWB"),
					comment: str("the text, trimmed"),
					created_by: str("the author's token subject (`sub`)"),
					created_by_role: str("the author's role"),
					created_at: utc("created"),
				},
			}),
		},
		errors: [
			{ code: "empty_comment", when: "absent, null or blank" },
			{ code: "comment_too_long", when: `over ${COMMENT_MAX} characters` },
			{
				code: "validation_failed",
				when: "`id` not a positive integer, `comment` not a string (spec §7).",
			},
			{
				code: "order not found",
				when: "no NDR case for that order on the account (missing and another account's alike).",
			},
		],
	},
});
