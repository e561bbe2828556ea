/**
 * The HTTP routes of the `booking` service, one definition each (issue 26;
 * lib/platform/openapi/route.ts, docs/ARCHITECTURE.md §9): booking (book,
 * book/sync, cancel; spec §4.2, §2.4, §3), courier rankings (§4.2, §2.8),
 * tracking (§2.6, §4.3), sandbox scan events
 * (docs/ARCHITECTURE.md §4) and the courier scan webhooks (ours, no bearer
 * token).
 *
 * Every input of these routes is validated by hand (lib/booking/params.ts,
 * cancel.ts, couriers.ts, tracking.ts), not by a validator
 * schema: bodies are documented here as JSON Schema (`bodySchema`), queries
 * as written (`queryParams`), each saying so; the bounds they share with the
 * parsers (`MAX_RANKING`, `SCAN_LIMIT_*`, `SANDBOX_EVENTS`,
 * `SHIPMENT_TYPE_MSG`) live in lib/contracts/booking.ts. Error codes: spec §7
 * plus docs/decisions/0009-booking.md, docs/decisions/0010-sync-booking.md,
 * docs/decisions/0015-cancel.md, docs/decisions/0019-courier-rankings.md,
 * docs/decisions/0020-wallet.md, docs/decisions/0029-shipment-tracking.md.
 */
import { ID_PATH_SCHEMA, json, queryParam } from "../../platform/openapi/components";
import { idInput, int, nullableStr, rupees, str } from "../../platform/openapi/helpers";
import { defineRoutes, type RouteError } from "../../platform/openapi/route";
import type { JsonSchema } from "../../platform/openapi/types";
import { SHIPMENT_STATUSES } from "../../shared/shipment-status";
import {
	MAX_RANKING,
	SANDBOX_EVENTS,
	SCAN_LIMIT_DEFAULT,
	SCAN_LIMIT_MAX,
	SHIPMENT_TYPE_MSG,
} from "../booking";

/** A lane zone (docs/decisions/0004-rates-and-serviceability.md). */
const ZONE: JsonSchema = {
	type: "string",
	enum: ["A", "B", "C", "D", "E"],
	description:
		"Zone (docs/decisions/0004-rates-and-serviceability.md): A same district, B same state, C metro to metro, D rest of India, E special regions.",
};

/** A normalized shipment status (lib/shared/shipment-status.ts). */
const STATUS: JsonSchema = {
	type: "string",
	enum: [...SHIPMENT_STATUSES],
	description:
		"normalized shipment status (lib/shared/shipment-status.ts; docs/decisions/0029-shipment-tracking.md)",
};

// ---------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------

/** 202 of book (and of book/sync when handed to the worker): never the AWB (spec §4.2). */
const BOOK_QUEUED: JsonSchema = {
	description:
		'Queued (spec §4.2, §3): forced courier `{status, idem_key}`, AUTO `{status, mode:"auto", idem_key}`. Never carries the AWB: poll `GET /v1/orders/status`.',
	oneOf: [
		{
			type: "object",
			additionalProperties: false,
			required: ["status", "idem_key"],
			properties: {
				status: { const: "queued" },
				idem_key: str("`bk_<attempt id>`: the booking attempt, also our reference at the courier", {
					pattern: "^bk_[0-9]+$",
				}),
			},
		},
		{
			type: "object",
			additionalProperties: false,
			required: ["status", "mode", "idem_key"],
			properties: {
				status: { const: "queued" },
				mode: { const: "auto", description: "AUTO: the account's ranking with fall-over" },
				idem_key: str("`bk_<attempt id>` of the first attempt", { pattern: "^bk_[0-9]+$" }),
			},
		},
	],
};

/** 200 of book/sync: the AWB booked and charged (spec §4.2; lib/contracts/booking.ts `BookSyncAnswer`). */
const BOOK_SYNC_ANSWER: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: ["status", "awb", "forward_id", "logistic_id", "order_id", "courier_name", "label_url"],
	properties: {
		status: { const: "booked" },
		awb: str("the AWB the courier issued"),
		forward_id: str("`bk_<attempt id>` of the attempt that booked (the async route's `idem_key`)", {
			pattern: "^bk_[0-9]+$",
		}),
		logistic_id: int("the courier that booked it (for AUTO, after any fall-over)"),
		order_id: int("the order"),
		courier_name: str("the courier's display name"),
		label_url: str(
			"the AWB's signed label link `/v1/documents/label/t/<awb>.<hmac>` (relative to the API base, or absolute when `PUBLIC_BASE_URL` is set); no bearer token needed (spec §4.4).",
		),
	},
};

/** 200 of cancel (spec §4.2; lib/contracts/booking.ts `CancelAnswer`). */
const CANCEL_ANSWER: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: ["status", "awb", "forward_id", "refunded", "order_id", "mode"],
	properties: {
		status: { const: "cancelled" },
		awb: nullableStr("the cancelled AWB; null when the booking was cancelled before the courier issued one"),
		forward_id: str("`bk_<attempt id>` of the cancelled booking", { pattern: "^bk_[0-9]+$" }),
		refunded: rupees(
			"refunded to the wallet for this booking (0 when nothing was charged); a repeat reports the same amount, paid once.",
		),
		order_id: int("the order"),
		mode: {
			type: "string",
			enum: ["auto", "forced"],
			description: "how the cancelled booking chose its courier",
		},
	},
};

/** Answer of GET /v1/shipping/couriers and PATCH …/priority (spec §4.2, §2.8; inner shapes docs/decisions/0019-courier-rankings.md). */
const COURIERS_ANSWER: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: ["data", "strategy", "unique_pincodes", "rules", "restrictions", "shipments_30d"],
	properties: {
		data: {
			type: "array",
			description: "the account's AUTO ranking for the direction, in AUTO order (spec §2.8)",
			items: {
				type: "object",
				additionalProperties: false,
				required: ["logistic_id", "logistic_name", "enabled", "priority", "serviceable_pincodes"],
				properties: {
					logistic_id: int("the courier"),
					logistic_name: str("its display name"),
					enabled: {
						type: "boolean",
						description: "always true: only couriers of the active rate card are listed",
					},
					priority: int("position in the AUTO ranking, 1 = first; a permutation of 1..n", { minimum: 1 }),
					serviceable_pincodes: int(
						"India Post pincodes the courier serves at the customer's end (delivery end forward, pickup end reverse)",
						{ minimum: 0 },
					),
				},
			},
		},
		strategy: {
			type: "object",
			additionalProperties: false,
			required: ["mode", "source", "shipment_type", "direction"],
			properties: {
				mode: { const: "priority" },
				source: {
					type: "string",
					enum: ["account", "default"],
					description: "`account` once the account's own ranking applies, else `default`",
				},
				shipment_type: { type: "integer", enum: [0, 1, 2], description: "the `shipment_type` asked" },
				direction: { type: "string", enum: ["forward", "reverse"] },
			},
		},
		unique_pincodes: int("pincodes served by at least one of the couriers", { minimum: 0 }),
		rules: {
			type: "array",
			description: "what each courier takes, in ranking order",
			items: {
				type: "object",
				additionalProperties: false,
				required: [
					"logistic_id",
					"logistic_name",
					"forward",
					"reverse",
					"cod",
					"max_weight_kg",
					"mode",
					"zones",
				],
				properties: {
					logistic_id: int("the courier"),
					logistic_name: str("its display name"),
					forward: { type: "boolean", description: "books forward shipments" },
					reverse: { type: "boolean", description: "collects returns" },
					cod: { type: "boolean", description: "collects cash on delivery (forward only)" },
					max_weight_kg: { type: ["number", "null"], description: "heaviest parcel in kg; null = no limit" },
					mode: { type: ["string", "null"], enum: ["air", "surface", null], description: "transport mode" },
					zones: { type: "array", items: ZONE, description: "zones with a rate card for the direction" },
				},
			},
		},
		restrictions: {
			type: "object",
			additionalProperties: false,
			required: ["reorder_only", "cod_couriers", "reverse_couriers"],
			properties: {
				reorder_only: { const: true, description: "the ranking can be reordered, not extended (spec §4.2)" },
				cod_couriers: {
					type: "array",
					items: { type: "integer" },
					description: "ids collecting COD, ascending; empty for reverse",
				},
				reverse_couriers: {
					type: "array",
					items: { type: "integer" },
					description: "ids collecting returns, ascending",
				},
			},
		},
		shipments_30d: int(
			"the account's bookings of this direction that got an AWB in the last 30 × 24 h (UTC), cancelled ones excluded",
			{ minimum: 0 },
		),
	},
};

/** 200 of `GET /v1/orders/{id}/tracking` (spec §2.6; lib/contracts/booking.ts `TrackingAnswer`). */
const TRACKING_ANSWER: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: ["scans", "truncated", "scan_limit", "status_name", "order_status_id"],
	description: "Spec §2.6; scan fields docs/decisions/0029-shipment-tracking.md.",
	properties: {
		scans: {
			type: "array",
			description: "the current shipment's scans, oldest first (the newest `scan_limit` kept)",
			items: {
				type: "object",
				additionalProperties: false,
				required: ["at", "location", "status", "status_name", "courier_code", "courier_status", "remarks"],
				properties: {
					at: str("scan time, UTC ISO-8601", { format: "date-time" }),
					location: str("where the courier scanned it (may be empty)"),
					status: STATUS,
					status_name: str("display name of `status`"),
					courier_code: str("the courier's own status code (e.g. `EOD-38`; `MANIFEST` for our manifest)"),
					courier_status: str("the courier's own words"),
					remarks: nullableStr("courier remarks (e.g. the failed-delivery reason), null when none"),
				},
			},
		},
		truncated: { type: "boolean", description: "true when older scans were left out to keep `scan_limit`" },
		scan_limit: int("the cap applied", { minimum: 1, maximum: SCAN_LIMIT_MAX }),
		status_name: str(
			"the shipment's folded status name; `Cancelled` for a cancelled booking; else the order's status (e.g. new, booking queued)",
		),
		order_status_id: int("numeric id of that status (lib/shared/shipment-status.ts)"),
	},
};

/** 200 of the sandbox scan event (lib/contracts/booking.ts `SandboxEventAnswer`). */
const SANDBOX_EVENT_ANSWER: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: ["order_id", "awb_number", "event", "status", "status_name"],
	properties: {
		order_id: int("the order"),
		awb_number: str("its AWB"),
		event: { type: "string", enum: [...SANDBOX_EVENTS], description: "the scan emitted" },
		status: {
			...STATUS,
			description: "the shipment's status after the scan was folded (terminal stays terminal)",
		},
		status_name: str("display name of `status`"),
	},
};

/** 200 of the courier scan webhook (lib/contracts/booking.ts `PushAnswer`). */
const PUSH_ANSWER: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: ["accepted", "applied"],
	properties: {
		accepted: int("scans in the body for shipments we hold (re-sent ones included)", { minimum: 0 }),
		applied: int("shipments whose status changed", { minimum: 0 }),
	},
};

// ---------------------------------------------------------------------------
// Request bodies (validated by hand)
// ---------------------------------------------------------------------------

/** Hand-written checks of book (lib/booking/params.ts `parseBookInput`). */
const BOOK_BODY: JsonSchema = {
	type: "object",
	description:
		"Validated by hand (lib/booking/params.ts `parseBookInput`), not by a validator schema. Other keys (`sender_id` too) are ignored.",
	required: ["order_id"],
	properties: {
		order_id: idInput("the order to book (spec §4.2)."),
		logistic_id: {
			...idInput("forced courier; absent or null = AUTO (the account's ranking with fall-over)."),
			oneOf: [
				{ type: "integer", minimum: 1 },
				{ type: "string", pattern: "^[1-9][0-9]*$" },
				{ type: "null" },
			],
		},
	},
};

/** Hand-written checks of book/sync (lib/booking/params.ts `parseBookSyncInput`). */
const BOOK_SYNC_BODY: JsonSchema = {
	type: "object",
	description:
		"Validated by hand (lib/booking/params.ts `parseBookSyncInput`). Other keys are ignored. `operation: reverse` books a return order and needs `logistic_id`; `book` books a forward order.",
	required: ["order_id"],
	properties: {
		order_id: idInput("the order to book."),
		logistic_id: {
			...idInput("forced courier; absent or null = AUTO (forward only)."),
			oneOf: [
				{ type: "integer", minimum: 1 },
				{ type: "string", pattern: "^[1-9][0-9]*$" },
				{ type: "null" },
			],
		},
		operation: {
			type: ["string", "null"],
			enum: ["book", "reverse", null],
			default: "book",
			description: "`book` (forward orders, default) or `reverse` (return orders)",
		},
	},
};

/** Hand-written checks of cancel (lib/booking/cancel.ts `parseCancelInput`). */
const CANCEL_BODY: JsonSchema = {
	type: "object",
	description: "Validated by hand (lib/booking/cancel.ts `parseCancelInput`). Other keys are ignored.",
	required: ["order_id", "logistic_id"],
	properties: {
		order_id: idInput("the booked order."),
		logistic_id: idInput("the courier the order is booked with (spec §4.2)."),
	},
};

/** Hand-written checks of the ranking change (lib/booking/couriers.ts `parsePriorityBody`). */
const PRIORITY_BODY: JsonSchema = {
	type: "object",
	description:
		"Validated by hand (lib/booking/couriers.ts `parsePriorityBody`). Reorder only: every courier of the active rate card for the direction exactly once, priorities a permutation of 1..n (spec §4.2). Other keys are ignored.",
	required: ["shipment_type", "order"],
	properties: {
		shipment_type: {
			description: '0 forward, 1 reverse (a JSON integer or "0"/"1")',
			oneOf: [
				{ type: "integer", enum: [0, 1] },
				{ type: "string", enum: ["0", "1"] },
			],
		},
		order: {
			type: "array",
			minItems: 1,
			maxItems: MAX_RANKING,
			items: {
				type: "object",
				required: ["logistic_id", "priority"],
				properties: {
					logistic_id: idInput("a courier of the active card."),
					priority: idInput("its position, 1 = first."),
				},
			},
		},
	},
};

/** Hand-written checks of the sandbox scan event (lib/booking/tracking.ts `parseSandboxEvent`). */
const SANDBOX_EVENT_BODY: JsonSchema = {
	type: "object",
	description: "Validated by hand (lib/booking/tracking.ts `parseSandboxEvent`).",
	required: ["event"],
	properties: {
		event: { type: "string", enum: [...SANDBOX_EVENTS], description: "the courier scan to emit" },
		reason: {
			type: ["string", "null"],
			maxLength: 255,
			description: "failed-delivery reason; required (non-blank) for `undelivered`; trimmed",
		},
	},
};

/** The sandbox courier's push body (Delhivery's scan push shape; docs/decisions/0028-courier-scans.md). */
const SCAN_PUSH: JsonSchema = {
	type: "object",
	required: ["Shipment"],
	properties: {
		Shipment: {
			type: "object",
			required: ["AWB", "Status"],
			properties: {
				AWB: { type: "string" },
				Status: {
					type: "object",
					required: ["StatusDateTime"],
					properties: {
						Status: { type: "string", description: "the courier's words" },
						StatusCode: { type: "string", description: "the courier's status code, e.g. `EOD-38`" },
						StatusType: { type: "string", description: "UD, PU, PP, DL, RT, CN, LT…" },
						StatusLocation: { type: "string" },
						StatusDateTime: {
							type: "string",
							description: "scan time; without a zone it is India Standard Time",
						},
						Instructions: { type: "string", description: "remarks (e.g. NDR reason)" },
					},
				},
			},
		},
	},
};

// ---------------------------------------------------------------------------
// Errors shared by book and book/sync
// ---------------------------------------------------------------------------

/** The 400s book and book/sync share after the body's ids (docs/decisions/0009-booking.md). */
const BOOK_ERRORS_400: readonly RouteError[] = [
	{ code: "unsupported_channel", when: "B2B / multi-box order" },
	{ code: "invalid_pickup_address", when: "the order's pickup warehouse is retired" },
	{ code: "unknown_logistic", when: "forced courier not on the active rate card." },
];

/** The body `state` of a 409 `already_booked` / `booking_in_progress`. */
const BOOK_STATE: Record<string, JsonSchema> = {
	state: { type: "string", enum: ["booked", "booking_in_progress"] },
};

/** The 409s of book and book/sync, with their extra body members (spec §3, §4.2; docs/decisions/0020-wallet.md). */
const BOOK_ERRORS_409: readonly RouteError[] = [
	{
		code: "already_booked",
		when: "the order is already booked (body `state`); a failed or cancelled order may be booked again",
		extra: BOOK_STATE,
	},
	{
		code: "booking_in_progress",
		when: "a booking of the order is already running (body `state`)",
		extra: BOOK_STATE,
	},
	{
		code: "credit_limit_exceeded",
		when: "body `credit_limit`, `outstanding`, `needed`, rupees: the booking would take the account past its credit limit (docs/decisions/0020-wallet.md).",
		extra: {
			credit_limit: { type: "number", description: "rupees" },
			outstanding: {
				type: "number",
				description: "rupees: charges − refunds + quoted totals of queued bookings",
			},
			needed: { type: "number", description: "rupees: the quoted total of this booking" },
		},
	},
];

/** The order id in the path of the tracking and sandbox routes. */
const ORDER_ID = { schema: ID_PATH_SCHEMA };

/** Who may book, cancel or emit a sandbox scan (spec §5 rule 1: read-only roles are refused). */
const WRITES = { writes: true } as const;
/** Any authenticated role. */
const ANY_ROLE = { auth: true } as const;

// ---------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------

/** The booking routes, keyed by the action that answers each. */
export const BOOKING_ROUTES = defineRoutes({
	"booking.tracking": {
		route: "GET /v1/orders/:id/tracking",
		access: ANY_ROLE,
		tag: "shipping",
		operationId: "booking_tracking",
		summary: "Courier scans of an order",
		description:
			"Spec §2.6, §4.3: the scans of the order's current shipment (its latest booking holding an AWB), oldest first, capped at `scan_limit` (the newest kept, `truncated` set). Any authenticated role. Input validated by hand (lib/booking/tracking.ts `parseTrackingQuery`).",
		path: { id: { ...ORDER_ID, description: "the order id (`order_id`), a positive integer" } },
		queryParams: [
			queryParam(
				"scan_limit",
				`most scans answered, integer 1–${SCAN_LIMIT_MAX}, default ${SCAN_LIMIT_DEFAULT}`,
				{ type: "string", pattern: "^[0-9]+$", default: String(SCAN_LIMIT_DEFAULT) },
			),
		],
		responses: { "200": json("Tracking result (spec §2.6).", TRACKING_ANSWER) },
		errors: [
			{
				code: "validation_failed",
				when: `with \`details\` (\`id: must be a positive integer\`, \`scan_limit: must be an integer from 1 to ${SCAN_LIMIT_MAX}\`).`,
			},
			{ code: "order not found", when: "missing or another account's order (code = message, spec §7)." },
		],
	},
	"booking.sandboxEvent": {
		route: "POST /v1/sandbox/orders/:order_id/events",
		access: WRITES,
		tag: "shipping",
		operationId: "booking_sandboxEvent",
		summary: "Emit a sandbox courier scan (sandbox only)",
		description:
			"docs/ARCHITECTURE.md §4; docs/decisions/0029-shipment-tracking.md: only with `SANDBOX=1` (otherwise 404 as an unknown route). The sandbox courier emits the scan for the order's AWB, booking polls it back and folds it at once, and the answer carries the folded status. Read-only roles are refused.",
		path: { order_id: { ...ORDER_ID, description: "the order id, a positive integer" } },
		bodySchema: SANDBOX_EVENT_BODY,
		responses: { "200": json("The scan emitted and the status it folded into.", SANDBOX_EVENT_ANSWER) },
		errors: [
			{ code: "validation_failed", when: "with `details` (`order_id`, `event`, `reason`)." },
			{ code: "not_found", when: "not a sandbox deployment (`Route not found`)" },
			{ code: "order not found", when: "missing or another account's order." },
			{ code: "not_booked", when: "the order's latest booking holds no live AWB" },
			{ code: "not_sandbox_courier", when: "booked with a courier that is not a sandbox one." },
			{
				code: "courier_unavailable",
				when: "the courier could not be asked back (the poller folds the scan later).",
			},
		],
	},
	"booking.book": {
		route: "POST /v1/shipping/book",
		access: WRITES,
		tag: "shipping",
		operationId: "booking_book",
		summary: "Book an order (asynchronous)",
		description:
			"Spec §4.2, §3: queues the booking of one of the caller's orders with a forced courier (`logistic_id`) or AUTO (absent: the account's ranking with fall-over, docs/decisions/0011-auto-fall-over.md). Answers 202 once the attempt is committed; the worker calls the courier (AWB usually within 8 s): poll `GET /v1/orders/status`. Read-only roles are refused (spec §5 rule 3 calls accepting them a defect; docs/decisions/0002-authentication.md).",
		bodySchema: BOOK_BODY,
		responses: { "202": json("Queued; never the AWB.", BOOK_QUEUED) },
		errors: [
			{
				code: "order_id must be a positive integer",
				when: "missing or malformed (code = message, spec §7)",
			},
			{ code: "validation_failed", when: "`logistic_id: must be a positive integer`" },
			...BOOK_ERRORS_400,
			{
				code: "cannot create booking for another sender",
				when: "a missing order and another account's order get this same answer (spec §7).",
			},
			...BOOK_ERRORS_409,
			{
				code: "lane_not_priced",
				when: "the forced courier (or, AUTO, no courier) prices the order's lane.",
			},
			{ code: "rate_unavailable", when: "rates unreachable; retry." },
		],
	},
	"booking.bookSync": {
		route: "POST /v1/shipping/book/sync",
		access: WRITES,
		tag: "shipping",
		operationId: "booking_bookSync",
		summary: "Book an order and wait for the AWB",
		description:
			'Spec §4.2, §3 row "any → book/sync": books inline and answers the AWB (typically 30–40 s; use a client timeout of at least 45 s, §8). Same attempt and checks as `POST /v1/shipping/book`. A transient courier failure or the `BOOKING_SYNC_BUDGET_MS` budget running out answers 202 with the async body and hands the booking to the worker: a 202 or a client timeout never means "not booked" (docs/decisions/0010-sync-booking.md). Read-only roles are refused.',
		bodySchema: BOOK_SYNC_BODY,
		responses: {
			"200": json("Booked and charged; the order update is delivered before the answer.", BOOK_SYNC_ANSWER),
			"202": json(
				"Handed to the worker (transient courier failure or budget spent); follow `GET /v1/orders/status`.",
				BOOK_QUEUED,
			),
		},
		errors: [
			{ code: "order_id and logistic_id must be positive integers", when: "code = message (spec §7)" },
			{
				code: "validation_failed",
				when: "`operation` not book/reverse, `reverse` without `logistic_id`, operation not matching the order's direction",
			},
			...BOOK_ERRORS_400,
			{ code: "cannot create booking for another sender", when: "missing or another account's order." },
			...BOOK_ERRORS_409,
			{
				code: "booking_failed",
				when: "the courier refused (`message` is the courier's words; for AUTO the whole chain), or the booking was cancelled meanwhile (spec §7)",
			},
			{
				code: "lane_not_priced",
				when: "the forced courier (or, AUTO, no courier) prices the order's lane.",
			},
			{ code: "rate_unavailable", when: "rates unreachable; retry." },
		],
	},
	"booking.cancel": {
		route: "POST /v1/shipping/cancel",
		access: WRITES,
		tag: "shipping",
		operationId: "booking_cancel",
		summary: "Cancel a booking",
		description:
			"Spec §4.2, §3, §7; docs/decisions/0015-cancel.md: cancels the order's latest booking at courier `logistic_id` and refunds its charge to the wallet. Booked: cancelled at the courier first; queued: cancelled at once; in flight at the courier: recorded, and the worker cancels a late AWB. Repeating a cancel answers the same body (the refund is paid once). The order number is released for reuse. Read-only roles are refused.",
		bodySchema: CANCEL_BODY,
		responses: {
			"200": json(
				"Cancelled (or recorded for cancellation while the courier call is in flight).",
				CANCEL_ANSWER,
			),
		},
		errors: [
			{
				code: "validation_failed",
				when: "with `details` (`order_id: must be a positive integer`, `logistic_id: must be a positive integer`).",
			},
			{
				code: "cannot cancel for another sender",
				when: "a missing order and another account's order alike (spec §7).",
			},
			{
				code: "not_cancellable",
				when: "no booking, the latest booking failed, or it is booked at another courier than `logistic_id` (the message says which; ours).",
			},
			{
				code: "cancel_failed",
				when: "the courier refused (its words), or the courier has no integration here (spec §7).",
			},
			{
				code: "cancel_unavailable",
				when: "courier or rates unreachable, nothing changed; retry (spec §7).",
			},
		],
	},
	"booking.couriers": {
		route: "GET /v1/shipping/couriers",
		access: ANY_ROLE,
		tag: "shipping",
		operationId: "booking_couriers",
		summary: "The account's courier ranking",
		description:
			"Spec §4.2, §2.8: the couriers of the active rate card for a direction in the account's AUTO order, with coverage, what each takes and the account's 30-day volume (inner shapes: docs/decisions/0019-courier-rankings.md). Any authenticated role.",
		queryParams: [
			queryParam("shipment_type", "0 forward (default when absent), 1 or 2 reverse (spec §2.8); trimmed", {
				type: "string",
				enum: ["0", "1", "2"],
				default: "0",
			}),
		],
		responses: { "200": json("The ranking.", COURIERS_ANSWER) },
		errors: [
			{
				code: SHIPMENT_TYPE_MSG,
				when: "every other value, an empty one included (code = message, spec §7).",
			},
			{ code: "rate_unavailable", when: "rates or the pincode directory unreachable; retry." },
		],
	},
	"booking.setPriority": {
		route: "PATCH /v1/shipping/couriers/priority",
		access: { writes: true, capability: "courier.rank" },
		tag: "shipping",
		operationId: "booking_setPriority",
		summary: "Reorder the account's courier ranking",
		description:
			"Spec §4.2, §2.8: replaces the account's AUTO ranking for one direction (reorder only: cannot add or remove a courier) in one transaction and answers the re-read ranking, exactly the GET answer for that `shipment_type`. Capability `courier.rank`; read-only roles are refused. Checks, first failing wins: shape, duplicates, unknown couriers, missing couriers, priorities (docs/decisions/0019-courier-rankings.md).",
		bodySchema: PRIORITY_BODY,
		responses: { "200": json("The re-read ranking.", COURIERS_ANSWER) },
		errors: [
			{
				code: "validation_failed",
				when: `with \`details\` (malformed body, \`shipment_type\` not 0|1, more than ${MAX_RANKING} entries)`,
			},
			{
				code: "duplicate_logistic",
				extra: { logistic_ids: { type: "array", items: { type: "integer" } } },
			},
			{
				code: "unknown_logistic",
				when: "not on the active card for the direction (`logistic_ids`)",
				extra: { logistic_ids: { type: "array", items: { type: "integer" } } },
			},
			{
				code: "incomplete_ranking",
				when: "a courier of the card left out (`missing`), or priorities not a permutation of 1..n (`priorities`) (spec §7).",
				extra: {
					missing: { type: "array", items: { type: "integer" } },
					priorities: { type: "array", items: { type: "integer" } },
				},
			},
			{ code: "rate_unavailable", when: "rates unreachable, nothing written; retry." },
		],
	},
	"booking.courierPush": {
		route: "POST /v1/tracking/webhooks/:courier",
		kind: "courier_push",
		tag: "shipping",
		operationId: "booking_courierPush",
		summary: "Courier scan webhook",
		description:
			"Ours (docs/decisions/0029-shipment-tracking.md (Push), docs/decisions/0078-sandbox-scan-signatures.md): a courier pushes tracking scans. No bearer token: the courier's signature over the RAW body is the credential, checked before anything is parsed; with no key configured for the courier every push is refused (there is no default key). The sandbox couriers sign `<x-sandbox-timestamp>.<raw body>` (header `x-sandbox-signature: sha256=<hex HMAC-SHA256>` under `SANDBOX_WEBHOOK_SECRET`); a timestamp more than 5 minutes old or more than 1 minute ahead, or a signed request received before (a replay), is refused. Any content type; the body is kept raw (at most 512 KB). Never rate-limited. Scans are folded into each shipment's status; re-sent scans (signed anew) are deduplicated. A text field carrying U+0000 refuses the whole push (400).",
		path: {
			courier: {
				description: "the courier's code on the rate card (e.g. `sbx-express`)",
				schema: { type: "string", maxLength: 100 },
			},
		},
		// Header parameters: a definition has no field of its own for them; `queryParams` are appended
		// to the operation's parameters as written, after the path parameter.
		queryParams: [
			{
				name: "x-sandbox-signature",
				in: "header",
				required: false,
				description:
					"the sandbox courier's signature `sha256=<64 hex digits>`: HMAC-SHA256 of `<x-sandbox-timestamp>.<raw body>` under `SANDBOX_WEBHOOK_SECRET`; other couriers use their own header",
				schema: { type: "string", pattern: "^sha256=[0-9a-fA-F]{64}$" },
			},
			{
				name: "x-sandbox-timestamp",
				in: "header",
				required: false,
				description:
					"the sandbox courier's signing time, unix seconds (covered by the signature); accepted from 5 minutes before to 1 minute after the receiver's clock",
				schema: { type: "string", pattern: "^[0-9]{1,12}$" },
			},
		],
		requestBody: {
			required: true,
			description:
				"The courier's own push format, signed byte for byte. The sandbox courier sends Delhivery's scan push: one `{Shipment}` object or an array of them.",
			content: {
				"application/json": { schema: { oneOf: [SCAN_PUSH, { type: "array", items: SCAN_PUSH }] } },
				"*/*": { schema: { type: "string", contentMediaType: "application/octet-stream" } },
			},
		},
		responses: { "200": json("Accepted and folded.", PUSH_ANSWER) },
		errors: [
			{
				code: "validation_failed",
				when: "with `details: [\"body: <the adapter's words>\"]`: not the courier's format, a scan without a readable time; `body: Shipment.<field> must not contain control characters` (U+0000 and the other controls but TAB, LF, CR; lib/platform/text-rule.ts)",
			},
			{ code: "invalid_body", when: "unreadable body (gateway)." },
			{
				code: "invalid_signature",
				when: "the signature (or the sandbox timestamp) header is missing, does not match the body, is outside the timestamp window, was received before (a replay), or no key is configured for the courier.",
			},
			{ code: "not_found", when: "no active courier with that code, or one without an integration." },
			{ code: "payload_too_large", when: "the body is over 512 KB (gateway)." },
			{ code: "service_unavailable", when: "booking or rates unreachable; retry (gateway)." },
		],
	},
});
