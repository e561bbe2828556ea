/**
 * OpenAPI 3.1 descriptions (issue 11) of the shipping routes: pincode lookup
 * (spec §4.7), serviceability and rates (§4.2, §2.7), booking (book,
 * book/sync, cancel; §4.2, §2.4, §3), courier rankings (§4.2, §2.8), the
 * wallet (ours), tracking (§2.6, §4.3), sandbox scan events
 * (docs/ARCHITECTURE.md §4) and the courier scan webhooks (ours, no bearer
 * token).
 *
 * Keys are the gateway alias keys of lib/gateway/routes.ts exactly. Query and
 * body schemas come from the validator schemas the services use where one
 * exists (`fromValidator`); the booking inputs are validated by hand
 * (lib/booking/params.ts, cancel.ts, couriers.ts, wallet.ts, tracking.ts) and
 * are described by hand here, each saying so. Error codes: spec §7 plus
 * (docs/decisions/0009-booking.md, docs/decisions/0010-sync-booking.md,
 * docs/decisions/0015-cancel.md, docs/decisions/0019-courier-rankings.md,
 * docs/decisions/0020-wallet.md, docs/decisions/0029-shipment-tracking.md,
 * docs/decisions/0004-rates-and-serviceability.md,
 * docs/decisions/0008-gateway.md).
 */
import type { ValidationSchema } from "fastest-validator";
import { MAX_RANKING, SHIPMENT_TYPE_MSG } from "../../booking/couriers";
import { SANDBOX_EVENTS, SCAN_LIMIT_DEFAULT, SCAN_LIMIT_MAX } from "../../booking/tracking";
import { WALLET_DEFAULT_LIMIT, WALLET_MAX_LIMIT } from "../../booking/wallet";
import { CURSOR_UNRECOGNISED } from "../../platform/cursor";
import { errors, ID_PATH_SCHEMA, json, pathParam, queryParam } from "../../platform/openapi/components";
import {
	BEARER,
	bearerResponses,
	errorWith,
	idInput,
	int,
	nullableStr,
	PAGINATION,
	queryParamsOf,
	rupees,
	str,
} from "../../platform/openapi/helpers";
import { fromValidator } from "../../platform/openapi/schema";
import type { AreaPaths, JsonSchema, Operation } from "../../platform/openapi/types";
import { DIRECTION, LANE_RULES, REQUIRED_MESSAGE, RUPEES } from "../../rates/params";
import { SHIPMENT_STATUSES } from "../../shared/shipment-status";

const ZONE: JsonSchema = {
	type: "string",
	enum: ["A", "B", "C", "D", "E"],
	description:
		"Zone (docs/decisions/0004-rates-and-serviceability.md): A same district, B same state, C metro to metro, D rest of India, E special regions.",
};
const STATUS: JsonSchema = {
	type: "string",
	enum: [...SHIPMENT_STATUSES],
	description:
		"normalized shipment status (lib/shared/shipment-status.ts; docs/decisions/0029-shipment-tracking.md)",
};

// ---------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------

/** One element of `data` of a quote (spec §2.7). */
const QUOTE: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: [
		"logistic_id",
		"courier_name",
		"total",
		"cod_charge",
		"freight_charge",
		"shipping_charge_tax",
		"zone",
		"weight",
		"rto_charge",
		"performance",
	],
	properties: {
		logistic_id: int("the courier's id on the rate card"),
		courier_name: str("the courier's display name"),
		total: rupees("freight + COD + GST, each part rounded once to the paisa (spec §2.7)."),
		cod_charge: rupees("COD fee: max(flat, % × `collectable_amount`) on forward COD quotes, else 0."),
		freight_charge: rupees("freight for the chargeable weight and zone."),
		shipping_charge_tax: rupees("GST, 18 % of freight + COD."),
		zone: ZONE,
		weight: {
			type: "number",
			description:
				"chargeable weight in kg: max(physical, volumetric) rounded up to the courier's slab, at least its minimum.",
		},
		rto_charge: rupees(
			"return-to-origin charge: the courier's percentage of forward freight, before tax (0 on reverse).",
		),
		performance: {
			description:
				"delivered / RTO percentages and average turnaround on this exact lane, or null when the lane has fewer than 20 shipments with the courier (spec §2.7: never invented).",
			oneOf: [
				{ type: "null" },
				{
					type: "object",
					additionalProperties: false,
					required: ["delivered_pct", "rto_pct", "avg_tat_days"],
					properties: {
						delivered_pct: { type: "number", description: "percent of shipments delivered (0–100)" },
						rto_pct: { type: "number", description: "percent of shipments returned to origin (0–100)" },
						avg_tat_days: {
							type: ["number", "null"],
							description:
								"average days from pickup to delivery (delivered shipments only); null before the first delivery",
						},
					},
				},
			],
		},
	},
};

/** One element of `dropped_couriers` (spec §2.7). */
const DROPPED: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: ["logistic_id", "logistic_name", "reason", "detail"],
	properties: {
		logistic_id: int("the courier's id"),
		logistic_name: str("the courier's display name"),
		reason: str(
			"machine reason (an open list, spec §2.7): forward_not_supported, reverse_not_supported, cod_config_missing, cod_not_supported, no_rate_card, not_serviceable, over_weight_limit, unknown_pincode, unknown_courier, inactive.",
		),
		detail: str("human words"),
	},
};

const QUOTE_RESULT: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: ["data", "dropped_couriers"],
	description:
		"Spec §2.7: the couriers pricing the lane (by courier priority) and those that do not, with why.",
	properties: {
		data: { type: "array", items: QUOTE },
		dropped_couriers: { type: "array", items: DROPPED },
	},
};

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

const WALLET_ANSWER: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: ["balance", "credit_limit", "data", "pagination"],
	properties: {
		balance: rupees("refunds − charges over the whole ledger (post-paid: negative = owed)."),
		credit_limit: {
			type: ["number", "null"],
			description: "the account's credit limit in rupees; null = no limit",
		},
		data: {
			type: "array",
			description: "wallet movements, newest first",
			items: {
				type: "object",
				additionalProperties: false,
				required: ["id", "kind", "amount", "order_id", "attempt_id", "awb_number", "note", "created_at"],
				properties: {
					id: int("movement id"),
					kind: { type: "string", enum: ["charge", "refund"] },
					amount: rupees("positive amount of the movement."),
					order_id: int("the order"),
					attempt_id: int("the booking attempt"),
					awb_number: nullableStr("the AWB, when the booking had one"),
					note: nullableStr("free text"),
					created_at: str("UTC ISO-8601", { format: "date-time" }),
				},
			},
		},
		pagination: PAGINATION,
	},
};

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
// Request schemas
// ---------------------------------------------------------------------------

/**
 * The query schema of `GET /v1/shipping/serviceable`: lib/rates/params.ts
 * compiles exactly these rules (`LANE_RULES` + `collectable_amount` `RUPEES` +
 * `order_type` any + `operation` `DIRECTION`).
 */
const SERVICEABLE_QUERY: ValidationSchema = {
	...LANE_RULES,
	collectable_amount: RUPEES,
	order_type: { type: "any", optional: true },
	operation: DIRECTION,
};

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

const CANCEL_BODY: JsonSchema = {
	type: "object",
	description: "Validated by hand (lib/booking/cancel.ts `parseCancelInput`). Other keys are ignored.",
	required: ["order_id", "logistic_id"],
	properties: {
		order_id: idInput("the booked order."),
		logistic_id: idInput("the courier the order is booked with (spec §4.2)."),
	},
};

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
// Operations
// ---------------------------------------------------------------------------

const pincodeLookup: Operation = {
	operationId: "pincode_lookup",
	summary: "Look up a pincode",
	description:
		"Spec §4.7: the city (the district of the India Post office chosen by docs/decisions/0003-pincode-directory.md) and state of a pincode. Shared reference data, not specific to an account; any authenticated role. An unknown pincode is a 200 with `found:false`, not a 404.",
	tags: ["shipping"],
	security: BEARER,
	parameters: [
		pathParam("pincode", "six digits `^[0-9]{6}$` after every whitespace character is stripped (spec §4.7)", {
			type: "string",
		}),
	],
	responses: bearerResponses(
		{
			"200": json(
				'Known: `{found:true, pincode, city, state}`; unknown: `{found:false, pincode, city:"", state:""}`.',
				{
					type: "object",
					additionalProperties: false,
					required: ["found", "pincode", "city", "state"],
					properties: {
						found: { type: "boolean", description: "whether the India Post directory has it" },
						pincode: str("the pincode, whitespace stripped", { pattern: "^[0-9]{6}$" }),
						city: str("district of the chosen office; empty when not found"),
						state: str("state; empty when not found"),
					},
				},
			),
		},
		{
			400: "`pincode must be 6 digits` (code = message, spec §7): not six digits after whitespace is stripped.",
			502: "`lookup_failed`: the directory cannot be read; retry (spec §7).",
		},
		{ pathParams: true },
	),
};

const serviceable: Operation = {
	operationId: "rates_serviceable",
	summary: "Couriers and charges for a lane",
	description:
		"Spec §4.2, §2.7: prices a lane (pickup pincode → delivery pincode) with every courier on the active rate card, and lists those that cannot take it in `dropped_couriers`. Any authenticated role. Pricing rules: docs/decisions/0004-rates-and-serviceability.md. Query values arrive as strings; blank optional values count as absent; unknown keys (`sender_id` too) are ignored.",
	tags: ["shipping"],
	security: BEARER,
	parameters: queryParamsOf(
		fromValidator(SERVICEABLE_QUERY),
		{
			from_pin: "Pickup pincode.",
			to_pin: "Delivery pincode.",
			physical_weight: "Parcel weight in kg, greater than zero.",
			volumetric_weight: "Volumetric weight in kg (L × B × H / 5000 for cm), default 0.",
			collectable_amount: "COD amount in rupees (COD quotes only).",
			order_type: "`1` = COD; anything else prepaid (spec §4.2).",
			operation: "`reverse` prices the return leg; `forward` (default) the forward leg.",
		},
		{ volumetric_weight: 0, operation: "forward" },
	),
	responses: bearerResponses(
		{ "200": json("Quotes (spec §2.7), money in rupees, `weight` the chargeable kg.", QUOTE_RESULT) },
		{
			400: `\`${REQUIRED_MESSAGE}\` (code = message, spec §7) when one is missing or blank; \`validation_failed\` with \`details\` (one per field) for malformed values.`,
			422: errorWith(
				"`lane_not_priced`: no courier on the rate card prices the lane (an unknown pincode included); `dropped_couriers` says why per courier (spec §7).",
				{ dropped_couriers: { type: "array", items: DROPPED } },
			),
			503: "`rate_unavailable`: the pricing engine or the pincode directory is unreachable; retry (spec §7).",
		},
	),
};

const BOOK_ERRORS_400 =
	"`unsupported_channel` (B2B / multi-box order); `invalid_pickup_address` (the order's pickup warehouse is retired); `unknown_logistic` (forced courier not on the active rate card).";
const BOOK_409 = errorWith(
	"`already_booked` / `booking_in_progress` (body `state`; a failed or cancelled order may be booked again); `credit_limit_exceeded` (body `credit_limit`, `outstanding`, `needed`, rupees: the booking would take the account past its credit limit; docs/decisions/0020-wallet.md).",
	{
		state: { type: "string", enum: ["booked", "booking_in_progress"] },
		credit_limit: { type: "number", description: "rupees" },
		outstanding: {
			type: "number",
			description: "rupees: charges − refunds + quoted totals of queued bookings",
		},
		needed: { type: "number", description: "rupees: the quoted total of this booking" },
	},
);

const book: Operation = {
	operationId: "booking_book",
	summary: "Book an order (asynchronous)",
	description:
		"Spec §4.2, §3: queues the booking of one of the caller's orders with a forced courier (`logistic_id`) or AUTO (absent: the account's ranking with fall-over, docs/decisions/0011-auto-fall-over.md). Answers 202 once the attempt is committed; the worker calls the courier (AWB usually within 8 s): poll `GET /v1/orders/status`. Read-only roles are refused (spec §5 rule 3 calls accepting them a defect; docs/decisions/0002-authentication.md).",
	tags: ["shipping"],
	security: BEARER,
	requestBody: { required: true, content: { "application/json": { schema: BOOK_BODY } } },
	responses: bearerResponses(
		{ "202": json("Queued; never the AWB.", BOOK_QUEUED) },
		{
			400: `\`order_id must be a positive integer\` (code = message, spec §7: missing or malformed); \`validation_failed\` (\`logistic_id: must be a positive integer\`); ${BOOK_ERRORS_400}`,
			403: "`cannot create booking for another sender` (spec §7: a missing order and another account's order get this same answer).",
			409: BOOK_409,
			422: "`lane_not_priced`: the forced courier (or, AUTO, no courier) prices the order's lane.",
			503: "`rate_unavailable`: rates unreachable; retry.",
		},
		{ body: true, writes: true },
	),
};

const bookSync: Operation = {
	operationId: "booking_bookSync",
	summary: "Book an order and wait for the AWB",
	description:
		'Spec §4.2, §3 row "any → book/sync": books inline and answers the AWB (typically 30–40 s; use a client timeout of at least 45 s, §8). Same attempt and checks as `POST /v1/shipping/book`. A transient courier failure or the `BOOKING_SYNC_BUDGET_MS` budget running out answers 202 with the async body and hands the booking to the worker: a 202 or a client timeout never means "not booked" (docs/decisions/0010-sync-booking.md). Read-only roles are refused.',
	tags: ["shipping"],
	security: BEARER,
	requestBody: { required: true, content: { "application/json": { schema: BOOK_SYNC_BODY } } },
	responses: bearerResponses(
		{
			"200": json("Booked and charged; the order update is delivered before the answer.", BOOK_SYNC_ANSWER),
			"202": json(
				"Handed to the worker (transient courier failure or budget spent); follow `GET /v1/orders/status`.",
				BOOK_QUEUED,
			),
		},
		{
			400: `\`order_id and logistic_id must be positive integers\` (code = message, spec §7); \`validation_failed\` (\`operation\` not book/reverse, \`reverse\` without \`logistic_id\`, operation not matching the order's direction); ${BOOK_ERRORS_400}`,
			403: "`cannot create booking for another sender` (missing or another account's order).",
			409: BOOK_409,
			422: "`booking_failed`: the courier refused (`message` is the courier's words; for AUTO the whole chain), or the booking was cancelled meanwhile (spec §7); `lane_not_priced`.",
			503: "`rate_unavailable`: rates unreachable; retry.",
		},
		{ body: true, writes: true },
	),
};

const cancel: Operation = {
	operationId: "booking_cancel",
	summary: "Cancel a booking",
	description:
		"Spec §4.2, §3, §7; docs/decisions/0015-cancel.md: cancels the order's latest booking at courier `logistic_id` and refunds its charge to the wallet. Booked: cancelled at the courier first; queued: cancelled at once; in flight at the courier: recorded, and the worker cancels a late AWB. Repeating a cancel answers the same body (the refund is paid once). The order number is released for reuse. Read-only roles are refused.",
	tags: ["shipping"],
	security: BEARER,
	requestBody: { required: true, content: { "application/json": { schema: CANCEL_BODY } } },
	responses: bearerResponses(
		{
			"200": json(
				"Cancelled (or recorded for cancellation while the courier call is in flight).",
				CANCEL_ANSWER,
			),
		},
		{
			400: "`validation_failed` with `details` (`order_id: must be a positive integer`, `logistic_id: must be a positive integer`).",
			403: "`cannot cancel for another sender` (spec §7: a missing order and another account's order alike).",
			409: "`not_cancellable` (ours): no booking, the latest booking failed, or it is booked at another courier than `logistic_id` (the message says which).",
			422: "`cancel_failed`: the courier refused (its words), or the courier has no integration here (spec §7).",
			503: "`cancel_unavailable`: courier or rates unreachable, nothing changed; retry (spec §7).",
		},
		{ body: true, writes: true },
	),
};

const couriers: Operation = {
	operationId: "booking_couriers",
	summary: "The account's courier ranking",
	description:
		"Spec §4.2, §2.8: the couriers of the active rate card for a direction in the account's AUTO order, with coverage, what each takes and the account's 30-day volume (inner shapes: docs/decisions/0019-courier-rankings.md). Any authenticated role.",
	tags: ["shipping"],
	security: BEARER,
	parameters: [
		queryParam("shipment_type", "0 forward (default when absent), 1 or 2 reverse (spec §2.8); trimmed", {
			type: "string",
			enum: ["0", "1", "2"],
			default: "0",
		}),
	],
	responses: bearerResponses(
		{ "200": json("The ranking.", COURIERS_ANSWER) },
		{
			400: `\`${SHIPMENT_TYPE_MSG}\` (code = message, spec §7): every other value, an empty one included.`,
			503: "`rate_unavailable`: rates or the pincode directory unreachable; retry.",
		},
	),
};

const setPriority: Operation = {
	operationId: "booking_setPriority",
	summary: "Reorder the account's courier ranking",
	description:
		"Spec §4.2, §2.8: replaces the account's AUTO ranking for one direction (reorder only: cannot add or remove a courier) in one transaction and answers the re-read ranking, exactly the GET answer for that `shipment_type`. Capability `courier.rank`; read-only roles are refused. Checks, first failing wins: shape, duplicates, unknown couriers, missing couriers, priorities (docs/decisions/0019-courier-rankings.md).",
	tags: ["shipping"],
	security: BEARER,
	requestBody: { required: true, content: { "application/json": { schema: PRIORITY_BODY } } },
	responses: bearerResponses(
		{ "200": json("The re-read ranking.", COURIERS_ANSWER) },
		{
			400: errorWith(
				"`validation_failed` with `details` (malformed body, `shipment_type` not 0|1, more than 100 entries); `duplicate_logistic` (`logistic_ids`); `unknown_logistic` (`logistic_ids`: not on the active card for the direction); `incomplete_ranking` (`missing`: a courier of the card left out; or `priorities`: not a permutation of 1..n) (spec §7).",
				{
					logistic_ids: { type: "array", items: { type: "integer" } },
					missing: { type: "array", items: { type: "integer" } },
					priorities: { type: "array", items: { type: "integer" } },
				},
			),
			503: "`rate_unavailable`: rates unreachable, nothing written; retry.",
		},
		{ body: true, writes: true, capability: "courier.rank" },
	),
};

const wallet: Operation = {
	operationId: "booking_wallet",
	summary: "The account's post-paid wallet",
	description:
		"Ours (docs/decisions/0020-wallet.md; spec §2.12, §4.8): balance, credit limit and the ledger's movements (one charge per booked attempt, one refund per cancelled one), newest first, cursor-paged. Money in rupees. Any authenticated role (read-only roles may read). Query validated by hand (lib/booking/wallet.ts `parseWalletQuery`).",
	tags: ["shipping"],
	security: BEARER,
	parameters: [
		queryParam(`limit`, `page size, integer 1–${WALLET_MAX_LIMIT}, default ${WALLET_DEFAULT_LIMIT}`, {
			type: "string",
			pattern: "^[0-9]+$",
			default: String(WALLET_DEFAULT_LIMIT),
		}),
		queryParam("cursor", "a `nextCursor` of this route for this account; absent or empty = first page"),
	],
	responses: bearerResponses(
		{ "200": json("Balance and a page of movements.", WALLET_ANSWER) },
		{
			400: `\`validation_failed\` (\`limit: must be an integer from 1 to ${WALLET_MAX_LIMIT}\`); \`${CURSOR_UNRECOGNISED}\` (code = message: not a cursor this route issued to this account).`,
		},
	),
};

const tracking: Operation = {
	operationId: "booking_tracking",
	summary: "Courier scans of an order",
	description:
		"Spec §2.6, §4.3: the scans of the order's current shipment (its latest booking holding an AWB), oldest first, capped at `scan_limit` (the newest kept, `truncated` set). Any authenticated role. Input validated by hand (lib/booking/tracking.ts `parseTrackingQuery`).",
	tags: ["shipping"],
	security: BEARER,
	parameters: [
		pathParam("id", "the order id (`order_id`), a positive integer", ID_PATH_SCHEMA),
		queryParam(
			"scan_limit",
			`most scans answered, integer 1–${SCAN_LIMIT_MAX}, default ${SCAN_LIMIT_DEFAULT}`,
			{ type: "string", pattern: "^[0-9]+$", default: String(SCAN_LIMIT_DEFAULT) },
		),
	],
	responses: bearerResponses(
		{ "200": json("Tracking result (spec §2.6).", TRACKING_ANSWER) },
		{
			400: `\`validation_failed\` with \`details\` (\`id: must be a positive integer\`, \`scan_limit: must be an integer from 1 to ${SCAN_LIMIT_MAX}\`).`,
			404: "`order not found` (code = message, spec §7): missing or another account's order.",
		},
		{ pathParams: true },
	),
};

const sandboxEvent: Operation = {
	operationId: "booking_sandboxEvent",
	summary: "Emit a sandbox courier scan (sandbox only)",
	description:
		"docs/ARCHITECTURE.md §4; docs/decisions/0029-shipment-tracking.md: only with `SANDBOX=1` (otherwise 404 as an unknown route). The sandbox courier emits the scan for the order's AWB, booking polls it back and folds it at once, and the answer carries the folded status. Read-only roles are refused.",
	tags: ["shipping"],
	security: BEARER,
	parameters: [pathParam("order_id", "the order id, a positive integer", ID_PATH_SCHEMA)],
	requestBody: { required: true, content: { "application/json": { schema: SANDBOX_EVENT_BODY } } },
	responses: bearerResponses(
		{ "200": json("The scan emitted and the status it folded into.", SANDBOX_EVENT_ANSWER) },
		{
			400: "`validation_failed` with `details` (`order_id`, `event`, `reason`).",
			404: "`not_found` (`Route not found`: not a sandbox deployment); `order not found` (missing or another account's order).",
			409: "`not_booked` (the order's latest booking holds no live AWB); `not_sandbox_courier` (booked with a courier that is not a sandbox one).",
			503: "`courier_unavailable`: the courier could not be asked back (the poller folds the scan later).",
		},
		{ body: true, writes: true, pathParams: true },
	),
};

const courierPush: Operation = {
	operationId: "booking_courierPush",
	summary: "Courier scan webhook",
	description:
		"Ours (docs/decisions/0029-shipment-tracking.md (Push), docs/decisions/0078-sandbox-scan-signatures.md): a courier pushes tracking scans. No bearer token: the courier's signature over the RAW body is the credential, checked before anything is parsed; with no key configured for the courier every push is refused (there is no default key). The sandbox couriers sign `<x-sandbox-timestamp>.<raw body>` (header `x-sandbox-signature: sha256=<hex HMAC-SHA256>` under `SANDBOX_WEBHOOK_SECRET`); a timestamp more than 5 minutes old or more than 1 minute ahead, or a signed request received before (a replay), is refused. Any content type; the body is kept raw (at most 512 KB). Never rate-limited. Scans are folded into each shipment's status; re-sent scans (signed anew) are deduplicated. A text field carrying U+0000 refuses the whole push (400).",
	tags: ["shipping"],
	security: [],
	parameters: [
		pathParam("courier", "the courier's code on the rate card (e.g. `sbx-express`)", {
			type: "string",
			maxLength: 100,
		}),
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
	responses: {
		"200": json("Accepted and folded.", PUSH_ANSWER),
		...errors({
			400: "`validation_failed` (`details: [\"body: <the adapter's words>\"]`: not the courier's format, a scan without a readable time; `body: Shipment.<field> must not contain control characters` (U+0000 and the other controls but TAB, LF, CR; lib/platform/text-rule.ts)); gateway: `invalid_body` (unreadable body).",
			401: "`invalid_signature`: the signature (or the sandbox timestamp) header is missing, does not match the body, is outside the timestamp window, was received before (a replay), or no key is configured for the courier.",
			404: "`not_found`: no active courier with that code, or one without an integration.",
			413: "`payload_too_large`: the body is over 512 KB (gateway).",
			503: "`service_unavailable`: booking or rates unreachable; retry (gateway).",
		}),
	},
};

/** Operations of the shipping area, keyed by gateway alias (lib/gateway/routes.ts). */
export const paths: AreaPaths = {
	"GET /v1/pincode/:pincode": pincodeLookup,
	"GET /v1/shipping/serviceable": serviceable,
	"GET /v1/orders/:id/tracking": tracking,
	"POST /v1/sandbox/orders/:order_id/events": sandboxEvent,
	"POST /v1/shipping/book": book,
	"POST /v1/shipping/book/sync": bookSync,
	"POST /v1/shipping/cancel": cancel,
	"GET /v1/shipping/couriers": couriers,
	"PATCH /v1/shipping/couriers/priority": setPriority,
	"GET /v1/wallet": wallet,
	"POST /v1/tracking/webhooks/:courier": courierPush,
};
