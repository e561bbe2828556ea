/**
 * The HTTP routes of the `rates` service (spec §4.2, §2.7, §7;
 * docs/decisions/0004-rates-and-serviceability.md): serviceability and rates
 * of a lane. One definition each (issue 26; lib/platform/openapi/route.ts,
 * docs/ARCHITECTURE.md §9).
 *
 * The input rules live here, as part of the contract: the lane rules
 * ({@link LANE_RULES}), the COD amount ({@link RUPEES}), the direction
 * ({@link DIRECTION}) and the query schema of `GET /v1/shipping/serviceable`
 * ({@link SERVICEABLE_QUERY}) that lib/rates/params.ts compiles (after its
 * strict reading of the query strings and its check of the three required
 * values, {@link REQUIRED_MESSAGE}); the query parameters are converted from
 * that very schema.
 */
import type { ValidationSchema } from "fastest-validator";
import type { ErrorCode } from "../../platform/errors/catalogue";
import { json } from "../../platform/openapi/components";
import { int, rupees, str } from "../../platform/openapi/helpers";
import { defineRoutes } from "../../platform/openapi/route";
import type { JsonSchema } from "../../platform/openapi/types";
import type { ShipmentDirection } from "../common";

// ---------------------------------------------------------------------------
// Input rules (compiled by lib/rates/params.ts)
// ---------------------------------------------------------------------------

/** Text of the §7 error for a missing from_pin, to_pin or physical_weight (code = message). */
export const REQUIRED_MESSAGE = "from_pin, to_pin and physical_weight are required" satisfies ErrorCode;

/** Upper bound of a weight in kg: keeps integer gram arithmetic exact (not in the spec; documented in the README). */
export const MAX_WEIGHT_KG = 100_000;
/** Upper bound of an amount in rupees: keeps integer paise arithmetic exact (not in the spec; documented in the README). */
export const MAX_COLLECTABLE_RUPEES = 1_000_000_000;

/** A six-digit pincode (a JSON number is read as its digits before the check, lib/rates/params.ts). */
const PIN = {
	type: "string",
	pattern: /^[0-9]{6}$/,
	messages: { stringPattern: "The '{field}' field must be 6 digits" },
} as const;

/**
 * Rules shared by both inputs of the quote engine (`GET /v1/shipping/serviceable`
 * and `rates.quote`): the two pincodes and the two weights (kg, finite,
 * physical > 0, volumetric ≥ 0, both at most {@link MAX_WEIGHT_KG}); other
 * keys are removed.
 */
export const LANE_RULES = {
	$$strict: "remove",
	from_pin: PIN,
	to_pin: PIN,
	physical_weight: { type: "number", positive: true, finite: true, max: MAX_WEIGHT_KG },
	volumetric_weight: {
		type: "number",
		min: 0,
		finite: true,
		max: MAX_WEIGHT_KG,
		optional: true,
	},
} as const satisfies ValidationSchema;

/** An amount in rupees (the COD amount), optional: finite, 0 to {@link MAX_COLLECTABLE_RUPEES}. */
export const RUPEES = {
	type: "number",
	min: 0,
	finite: true,
	max: MAX_COLLECTABLE_RUPEES,
	optional: true,
} as const;

/** "forward" | "reverse", optional. */
export const DIRECTION = {
	type: "enum",
	values: ["forward", "reverse"] satisfies ShipmentDirection[],
	optional: true,
	messages: { enumValue: "The '{field}' field must be forward or reverse" },
} as const;

/**
 * The query schema of `GET /v1/shipping/serviceable` (spec §4.2 names), as
 * lib/rates/params.ts compiles it: {@link LANE_RULES} + `collectable_amount`
 * {@link RUPEES} + `order_type` any (1 = COD, anything else prepaid) +
 * `operation` {@link DIRECTION}.
 */
export const SERVICEABLE_QUERY = {
	...LANE_RULES,
	collectable_amount: RUPEES,
	order_type: { type: "any", optional: true },
	operation: DIRECTION,
} as const satisfies ValidationSchema;

/**
 * The query schema of `GET /v1/shipping/edd` (ours; issue 28): the two
 * pincodes (six digits) and the payment mode (default prepaid).
 */
export const EDD_QUERY = {
	$$strict: "remove",
	from_pin: { type: "string", pattern: /^[0-9]{6}$/, messages: { stringPattern: "must be 6 digits" } },
	to_pin: { type: "string", pattern: /^[0-9]{6}$/, messages: { stringPattern: "must be 6 digits" } },
	payment_mode: { type: "enum", values: ["prepaid", "cod"], optional: true, default: "prepaid" },
} as const satisfies ValidationSchema;

// ---------------------------------------------------------------------------
// Documented shapes
// ---------------------------------------------------------------------------

/** A zone A–E (docs/decisions/0004-rates-and-serviceability.md). */
const ZONE: JsonSchema = {
	type: "string",
	enum: ["A", "B", "C", "D", "E"],
	description:
		"Zone (docs/decisions/0004-rates-and-serviceability.md): A same district, B same state, C metro to metro, D rest of India, E special regions.",
};

/** `edd_range` of a quote row and of `GET /v1/shipping/edd` (issue 28): calendar days from today (IST), or null. */
const EDD_RANGE: JsonSchema = {
	oneOf: [
		{ type: "null" },
		{
			type: "object",
			additionalProperties: false,
			required: ["min_days", "max_days"],
			properties: {
				min_days: int("calendar days from today (IST) to the earliest likely delivery day"),
				max_days: int("calendar days from today (IST) to `edd`"),
			},
		},
	],
	description: "null with `edd`",
};

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
		"edd",
		"edd_range",
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
		edd: {
			type: ["string", "null"],
			format: "date",
			description:
				"Ours (issue 28; docs/decisions/0106-working-days-and-edd.md): the estimated delivery date (IST) if booked now — the latest likely day: the courier's next pickup day at the pickup pincode (its cut-off, pickup week days, national and state holidays), then its transit working days for the zone (or, once the lane has 20 delivered shipments with the courier, their observed 80th percentile), moved to a delivery day at the destination. null when the courier has no transit data.",
		},
		edd_range: EDD_RANGE,
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

/** The §2.7 answer of a quote (lib/contracts/rates.ts `QuoteResult`). */
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

// ---------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------

/** The rates routes, keyed by the action that answers each. */
export const RATES_ROUTES = defineRoutes({
	"rates.serviceable": {
		route: "GET /v1/shipping/serviceable",
		access: { auth: true },
		tag: "shipping",
		operationId: "rates_serviceable",
		summary: "Couriers and charges for a lane",
		description:
			"Spec §4.2, §2.7: prices a lane (pickup pincode → delivery pincode) with every courier on the active rate card, and lists those that cannot take it in `dropped_couriers`. Any authenticated role. Pricing rules: docs/decisions/0004-rates-and-serviceability.md. Query values arrive as strings; blank optional values count as absent; unknown keys (`sender_id` too) are ignored.",
		query: SERVICEABLE_QUERY,
		queryNotes: {
			from_pin: "Pickup pincode.",
			to_pin: "Delivery pincode.",
			physical_weight: "Parcel weight in kg, greater than zero.",
			volumetric_weight: "Volumetric weight in kg (L × B × H / 5000 for cm), default 0.",
			collectable_amount: "COD amount in rupees (COD quotes only).",
			order_type: "`1` = COD; anything else prepaid (spec §4.2).",
			operation: "`reverse` prices the return leg; `forward` (default) the forward leg.",
		},
		queryDefaults: { volumetric_weight: 0, operation: "forward" },
		responses: {
			"200": json("Quotes (spec §2.7), money in rupees, `weight` the chargeable kg.", QUOTE_RESULT),
		},
		errors: [
			{ code: REQUIRED_MESSAGE, when: "one of the three is missing or blank (code = message, spec §7)" },
			{ code: "validation_failed", when: "with `details` (one per field) for malformed values." },
			{
				code: "lane_not_priced",
				when: "no courier on the rate card prices the lane (an unknown pincode included); `dropped_couriers` says why per courier (spec §7).",
				extra: { dropped_couriers: { type: "array", items: DROPPED } },
			},
			{
				code: "rate_unavailable",
				when: "the pricing engine or the pincode directory is unreachable; retry (spec §7).",
			},
		],
	},
	"rates.edd": {
		route: "GET /v1/shipping/edd",
		access: { auth: true },
		tag: "shipping",
		operationId: "rates_edd",
		summary: "The earliest delivery date for a storefront",
		description:
			"Ours (issue 28; docs/decisions/0106-working-days-and-edd.md): the earliest estimated delivery date (IST) among the active couriers that serve the lane for the payment mode, for a product page (“get it by …”). The same estimate as the `edd` of `GET /v1/shipping/serviceable` rows (a 0.5 kg parcel). Cacheable: `Cache-Control: private, max-age=` the seconds until the chosen courier's next pickup cut-off (when the answer can change; at most 1 h), and a strong `ETag` (a matching `If-None-Match` answers 304). `serviceable: false` and `edd: null` when no courier serves the lane. Any authenticated role.",
		query: EDD_QUERY,
		queryNotes: {
			from_pin: "Pickup pincode (the warehouse's).",
			to_pin: "Delivery pincode (the buyer's).",
			payment_mode: "`prepaid` (default) or `cod`.",
		},
		queryDefaults: { payment_mode: "prepaid" },
		responses: {
			"200": json("The earliest estimate.", {
				type: "object",
				additionalProperties: false,
				required: [
					"from_pin",
					"to_pin",
					"payment_mode",
					"serviceable",
					"edd",
					"edd_range",
					"logistic_id",
					"courier_name",
					"pickup_date",
					"valid_until",
				],
				properties: {
					from_pin: str("as asked"),
					to_pin: str("as asked"),
					payment_mode: { type: "string", enum: ["prepaid", "cod"] },
					serviceable: {
						type: "boolean",
						description: "some courier serves the lane with a transit estimate",
					},
					edd: {
						type: ["string", "null"],
						format: "date",
						description: "the earliest promised delivery date (IST) among the couriers",
					},
					edd_range: EDD_RANGE,
					logistic_id: { type: ["integer", "null"], description: "the courier of that estimate" },
					courier_name: { type: ["string", "null"] },
					pickup_date: {
						type: ["string", "null"],
						format: "date",
						description: "the pickup day it assumes (IST)",
					},
					valid_until: str("when the answer can change next: the courier's next cut-off, UTC", {
						format: "date-time",
					}),
				},
			}),
			"304": { description: "Not modified: the `If-None-Match` ETag is current." },
		},
		errors: [
			{ code: "validation_failed", when: "with `details`: from_pin, to_pin (6 digits), payment_mode" },
			{ code: "rate_unavailable", when: "the pincode directory is unreachable; retry." },
		],
	},
});
