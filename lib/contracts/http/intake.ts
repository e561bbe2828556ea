/**
 * The HTTP routes of the `intake` service answered one by one (spec §2.1–§2.5,
 * §2.12, §3, §4.1, §4.3, §4.8, §7, §8): order creation (forward, reverse), the
 * booking status record, the orders list and detail, the unshipped queue
 * (list, error types, counts, edit) and hiding an order. One definition each
 * (issue 26; lib/platform/openapi/route.ts, docs/ARCHITECTURE.md §9); the bulk
 * upload routes are in ./intake-bulk.ts. Our decisions:
 * docs/decisions/0005-orders.md, docs/decisions/0030-orders-read-side.md,
 * docs/decisions/0031-unshipped-queue.md, docs/decisions/0021-cursors.md,
 * docs/decisions/0008-gateway.md.
 *
 * The create bodies are the fastest-validator schemas intake compiles
 * (./intake-input.ts `forwardSchema`, `reverseSchema`, compiled by
 * lib/intake/validation.ts from these definitions); their leaves are custom
 * checks (parse and normalise), so each leaf's JSON shape is given as an
 * override by field path (the structure, required-ness and unknown-field rule
 * still come from the schema). Queries, path ids and the unshipped edit are
 * parsed by hand-written code (lib/intake/list.ts, lib/intake/unshipped.ts)
 * and described by hand here, their bounds read from ./intake-input.ts, the
 * constants that code uses.
 *
 * Units everywhere: weights kg, dimensions cm, money rupees (≤ 2 decimals;
 * stored as paise), timestamps ISO-8601 UTC, `order_date` / date filters India
 * Standard Time days.
 */
import { authErrors, ID_PATH_SCHEMA, json, queryParam } from "../../platform/openapi/components";
import { defineRoutes } from "../../platform/openapi/route";
import { fromValidator } from "../../platform/openapi/schema";
import type { JsonSchema, Parameter, Response } from "../../platform/openapi/types";
import { BUCKETS, SHIPMENT_STATUSES } from "../../shared/shipment-status";
import { COD_STATUSES } from "../billing";
import {
	AWB_MAX_LENGTH,
	CITY_MAX_LENGTH,
	EDIT_WINDOW_DAYS,
	EDITABLE_FIELDS,
	ERROR_TYPE_NAMES,
	forwardSchema,
	MAX_AMOUNT_RUPEES,
	MAX_DIMENSION_CM,
	MAX_ORDER_NO_LENGTH,
	MAX_WEIGHT_KG,
	ORDERS_DEFAULT_LIMIT,
	ORDERS_MAX_LIMIT,
	reverseSchema,
	UNSHIPPED_DEFAULT_LIMIT,
	UNSHIPPED_MAX_LIMIT,
	UNSHIPPED_ORDER_NO_MAX,
} from "./intake-input";

// ---------------------------------------------------------------------------
// small schema builders
// ---------------------------------------------------------------------------

type Schema = JsonSchema;

/** A string. */
const str = (description: string, extra: Partial<Schema> = {}): Schema =>
	({ type: "string", description, ...extra }) as Schema;
/** A string or null. */
const nstr = (description: string, extra: Partial<Schema> = {}): Schema =>
	({ type: ["string", "null"], description, ...extra }) as Schema;
/** An integer. */
const int = (description: string, extra: Partial<Schema> = {}): Schema =>
	({ type: "integer", description, ...extra }) as Schema;
/** An integer or null. */
const nint = (description: string, extra: Partial<Schema> = {}): Schema =>
	({ type: ["integer", "null"], description, ...extra }) as Schema;
/** A number. */
const num = (description: string, extra: Partial<Schema> = {}): Schema =>
	({ type: "number", description, ...extra }) as Schema;
/** A number or null. */
const nnum = (description: string, extra: Partial<Schema> = {}): Schema =>
	({ type: ["number", "null"], description, ...extra }) as Schema;
/** An ISO-8601 UTC timestamp. */
const ts = (description: string): Schema =>
	str(`${description} (ISO-8601 UTC timestamp)`, { format: "date-time" });
/** An ISO-8601 UTC timestamp or null. */
const nts = (description: string): Schema =>
	nstr(`${description} (ISO-8601 UTC timestamp; null: not reached)`, { format: "date-time" });
/** A closed object: every listed property required, nothing else allowed. */
const closed = (description: string, properties: Record<string, Schema>): Schema => ({
	type: "object",
	description,
	required: Object.keys(properties),
	properties,
	additionalProperties: false,
});
/** `closed`, or null. */
const nclosed = (description: string, properties: Record<string, Schema>): Schema => ({
	...closed(description, properties),
	type: ["object", "null"],
});
/** An array of `items`. */
const arr = (description: string, items: Schema, extra: Partial<Schema> = {}): Schema =>
	({ type: "array", description, items, ...extra }) as Schema;

/** Booking states (§2.4, §3). */
const BOOKING_STATES = ["not_shipped", "booking_in_progress", "booked", "failed"];
/** Every lifecycle status (lib/shared/shipment-status.ts), for descriptions (the spec does not enumerate them). */
const LIFECYCLE_STATUSES = ["new", "booking_queued", "booking_failed", ...SHIPMENT_STATUSES];

const stateSchema = str(
	"Booking state (spec §2.4, §3): `not_shipped` (created, no booking requested), `booking_in_progress`, `booked` (AWB and courier filled), `failed` (`failure_reason` set).",
	{ enum: BOOKING_STATES },
);
const statusSchema = str(
	`Lifecycle status (spec §2.4: values not enumerated by the contract; ours, lib/shared/shipment-status.ts): ${LIFECYCLE_STATUSES.map((s) => `\`${s}\``).join(", ")}.`,
);

/** §2.12 pagination object. */
const pagination = (max: number, def: number): Schema =>
	closed("Pagination (spec §2.12, §4.8).", {
		mode: str("Always `cursor`.", { const: "cursor" }),
		limit: int(`The page size used (1–${max}; default ${def}).`, { minimum: 1, maximum: max }),
		nextCursor: nstr(
			"Opaque cursor of the next page (pass it back as `cursor`; never build one); null on the last page.",
		),
	});

/** A §2.12 page of `row`. */
const page = (description: string, row: Schema, max: number, def: number): Schema =>
	closed(description, { data: arr("The rows of this page.", row), pagination: pagination(max, def) });

// ---------------------------------------------------------------------------
// parameters
// ---------------------------------------------------------------------------

/** Path `id` of an order (`GET /v1/orders/{id}`, edit, hide). */
const ORDER_ID_PATH = {
	id: {
		description:
			'The order\'s `order_id` (spec §4.3): a positive integer written in digits (no sign, no leading zero, ≤ 2^53 − 1). Anything else is 400 `validation_failed` with `field: "id"`.',
		schema: ID_PATH_SCHEMA,
	},
};

/** `cursor` of a list. */
const cursorParam = (list: string): Parameter =>
	queryParam(
		"cursor",
		`\`nextCursor\` of a previous page of ${list} (spec §4.8): issued by the service, bound to the account and the filters; anything else is 400 \`cursor: unrecognised shape\`.`,
	);

/** `limit` of a list. */
const limitParam = (max: number, def: number): Parameter =>
	queryParam("limit", `Page size, 1–${max}; default ${def}. May change from page to page.`, {
		type: "integer",
		minimum: 1,
		maximum: max,
		default: def,
	});

// ---------------------------------------------------------------------------
// shared answers
// ---------------------------------------------------------------------------

/**
 * The 403 the intake read routes have always documented (the generic role
 * answer, lib/platform/openapi/components.ts `authErrors`); their access rule
 * (any authenticated role) derives none.
 */
const READ_403: Record<string, Response> = { "403": authErrors["403"] };

/** When a path id answers 400 `validation_failed` (lib/intake/list.ts `parseOrderId`). */
const BAD_ORDER_ID =
	'`field` "id", `details` `["id: must be a positive integer"]`: the path id is not a positive integer';

/**
 * 400 `validation_failed` of a path id that is not a positive integer (the
 * last 400 text: the gateway's is appended, hence the full stop).
 */
const ORDER_ID_400 = { code: "validation_failed", when: `${BAD_ORDER_ID}.` } as const;

/** 404 `order not found` of the routes under `/v1/orders/{id}`. */
const ORDER_404 = {
	code: "order not found",
	when: "no such order on the account (code and message alike, spec §7; not found and not yours are the same answer, spec §1 rule 4)",
} as const;

/**
 * When a §7 code that is its own message is answered (the unshipped queue's
 * filters; the catalogue's text would name the query field as a code).
 */
const SPEC_CODE = "a bad value (spec §7; the text is the code and the message, body `field`)";

/** Who may create and change orders (spec §5 rules 1–2). */
const WRITE = { writes: true, capability: "orders.write" } as const;
/** Any authenticated role. */
const READ = { auth: true } as const;

// ---------------------------------------------------------------------------
// create (§2.1, §2.2, §4.1)
// ---------------------------------------------------------------------------

/** Text leaf: trimmed, `min`–`max` characters, no control characters (lib/intake/validation.ts `text`). */
function text(what: string, min: number, max: number): Schema {
	const bounds = min > 0 ? `${min}–${max} characters` : `at most ${max} characters (\`""\` counts as absent)`;
	return str(`${what}: ${bounds} after trimming surrounding whitespace; no control characters.`, {
		...(min > 0 ? { minLength: min } : {}),
		maxLength: max,
	});
}

/** Decimal leaf: JSON number or plain decimal string (lib/intake/validation.ts `decimal`). */
function decimal(
	what: string,
	bounds: { gt?: number; min?: number; max: number; places: number; optional?: boolean },
): Schema {
	const lower = bounds.gt !== undefined ? `> ${bounds.gt}` : `≥ ${bounds.min ?? 0}`;
	return {
		description: `${what}: ${lower} and ≤ ${bounds.max}, at most ${bounds.places} decimals. A JSON number or a plain decimal string (\`"1.25"\`)${bounds.optional ? '; `""` counts as absent' : ""}.`,
		anyOf: [
			{
				type: "number",
				...(bounds.gt !== undefined ? { exclusiveMinimum: bounds.gt } : { minimum: bounds.min ?? 0 }),
				maximum: bounds.max,
			},
			{
				type: "string",
				pattern: bounds.optional
					? "^\\s*([0-9]{1,12}(\\.[0-9]+)?)?\\s*$"
					: "^\\s*[0-9]{1,12}(\\.[0-9]+)?\\s*$",
			},
		],
	};
}

/** Positive-integer id leaf: JSON integer or digit string. */
function idLeaf(what: string): Schema {
	return {
		description: `${what}: a positive integer (JSON integer or digit string).`,
		anyOf: [
			{ type: "integer", minimum: 1 },
			{ type: "string", pattern: "^\\s*[1-9][0-9]{0,15}\\s*$" },
		],
	};
}

const PINCODE_LEAF: Schema = {
	description:
		"Indian pincode: 6 digits, the first 1–9 (`^[1-9]\\d{5}$`); a JSON integer is accepted. Stored as the 6-digit string.",
	anyOf: [
		{ type: "string", pattern: "^\\s*[1-9][0-9]{5}\\s*$" },
		{ type: "integer", minimum: 100000, maximum: 999999 },
	],
};

const MOBILE_LEAF: Schema = {
	description:
		"Indian mobile number: 10 digits starting 6–9; spaces, hyphens, dots and brackets are ignored and a `+91`, `91` or `0` prefix is accepted (a JSON integer too). Stored as the bare 10 digits.",
	anyOf: [{ type: "string" }, { type: "integer" }],
};

const ORDER_TYPE_LEAF: Schema = {
	description: 'Payment mode (spec §2.1): `0` prepaid, `1` COD (`"0"`/`"1"` accepted).',
	enum: [0, 1, "0", "1"],
};

const ORDER_DATE_LEAF: Schema = str(
	"When the merchant took the order: `YYYY-MM-DD` (an India Standard Time day) or an ISO-8601 timestamp (no offset means IST), from 2000-01-01 up to one day ahead of now. Default: the time of creation.",
);

/** Overrides of the receiver-shaped leaves under `prefix` (receiver, return address). */
function addressLeaves(prefix: string, allOptional: boolean): Record<string, Schema> {
	const min = (n: number) => (allOptional ? 0 : n);
	return {
		[`${prefix}.name`]: text("Name", min(1), 100),
		[`${prefix}.address_1`]: text("Address line 1", min(3), 255),
		[`${prefix}.address_2`]: text("Address line 2", 0, 255),
		[`${prefix}.landmark`]: text("Landmark", 0, 255),
		[`${prefix}.city`]: text("City", 0, 100),
		[`${prefix}.state`]: text("State", 0, 100),
		[`${prefix}.pincode`]: PINCODE_LEAF,
		[`${prefix}.mobile_no`]: MOBILE_LEAF,
	};
}

/** Leaf overrides shared by forward and reverse bodies. */
const COMMON_LEAVES: Record<string, Schema> = {
	customer_order_no: {
		description: `The merchant's own reference and the idempotency key (spec §2.1, §3): 1–${MAX_ORDER_NO_LENGTH} characters of \`A-Z a-z 0-9 _ - / # .\` after trimming; a JSON integer is accepted and stored as its decimal string. Used later as \`order_no\` (returns: with \`-R\` appended).`,
		anyOf: [
			{ type: "string", pattern: "^\\s*[A-Za-z0-9_\\-/#.]+\\s*$" },
			{ type: "integer", minimum: 0 },
		],
	},
	channel: text(
		"Where the order came from (spec §2.1; `B2B` is refused with 400 `unsupported_channel`)",
		0,
		50,
	),
	...addressLeaves("receiver", false),
	"receiver.email": {
		...text(
			"The buyer's e-mail (ours, issue 29): buyer messages by e-mail go to it (docs/decisions/0109-buyer-messages.md); lower-cased",
			0,
			191,
		),
		format: "email",
	},
	"product.product_name": text("Product name", 1, 255),
	"product.product_sku": text("SKU", 0, 100),
	"product.physical_weight": decimal("Dead weight, kg", { gt: 0, max: MAX_WEIGHT_KG, places: 3 }),
	"product.declared_order_total": decimal("Declared order value, rupees", {
		min: 0,
		max: MAX_AMOUNT_RUPEES,
		places: 2,
	}),
	"product.cod_amount": decimal(
		"Amount the courier collects, rupees: required and > 0 (and ≤ `declared_order_total`) when `order.order_type` is 1; absent, null or 0 for prepaid orders and returns",
		{ min: 0, max: MAX_AMOUNT_RUPEES, places: 2, optional: true },
	),
	"product.length": decimal("Length, cm", { gt: 0, max: MAX_DIMENSION_CM, places: 2, optional: true }),
	"product.width": decimal("Width, cm", { gt: 0, max: MAX_DIMENSION_CM, places: 2, optional: true }),
	"product.height": decimal("Height, cm", { gt: 0, max: MAX_DIMENSION_CM, places: 2, optional: true }),
	"order.rto_address_id": idLeaf(
		"Warehouse undelivered parcels return to; one of the caller's active warehouses (else 400 `invalid_pickup_address`)",
	),
	"order.order_date": ORDER_DATE_LEAF,
	"order.order_from_source": text("Source system of the order", 0, 50),
};

/** `fromValidator` notes of the `POST /v1/intake/order` body ({@link forwardSchema}). */
const FORWARD_NOTES = {
	overrides: {
		...COMMON_LEAVES,
		"order.pickup_address_id": idLeaf(
			"The warehouse the order ships from; one of the caller's active warehouses (else 400 `invalid_pickup_address`)",
		),
		"order.order_type": ORDER_TYPE_LEAF,
	},
	descriptions: {
		"": "A forward order (spec §2.1). One product per order (multi-SKU lists and B2B / multi-box markers such as `boxes`, `packages`, `is_b2b`, a box count over 1 are refused with 400 `unsupported_channel`). A `sender_id` (top level or in `order`) other than the caller's is refused with 403 `cannot create order for another sender`; equal to the caller's, it is ignored.",
		receiver: "Who receives the parcel (spec §2.1).",
		product: "The parcel (spec §2.1): kg, cm, rupees.",
		order: "Order settings (spec §2.1).",
	},
};

/** `fromValidator` notes of the `POST /v1/intake/reverse` body ({@link reverseSchema}). */
const REVERSE_NOTES = {
	overrides: {
		...COMMON_LEAVES,
		...addressLeaves("order.return_address", true),
		"order.pickup_address_id": idLeaf(
			"The caller's warehouse the return goes back to, when `reverse_pickup_address_id` is absent (one of the two is required)",
		),
		"order.reverse_pickup_address_id": idLeaf(
			"The caller's warehouse the return goes back to; when given it is the order's warehouse (overrides `pickup_address_id`)",
		),
		"order.order_type": {
			description: "Returns are prepaid: absent or `0` (`1` is 400 `validation_failed`).",
			enum: [0, 1, "0", "1"],
		},
		"order.forward_source": str("Where the forward shipment was made (spec §2.2).", {
			enum: ["tekipost", "external"],
		}),
		"order.old_fwd_awb_no": str(
			"AWB of the forward shipment (spec §2.2, §8): 1–50 characters of `A-Z a-z 0-9 -` (a JSON integer accepted).",
			{ maxLength: 50 },
		),
	},
	descriptions: {
		"": "A return (reverse order, spec §2.2): the forward shape, where `receiver` is the buyer the courier collects from. Stored reference: `customer_order_no` + `-R` (`shipment_type` 1), so a return never collides with its forward order. B2B markers: 400 `unsupported_channel`; another `sender_id`: 403 `cannot create order for another sender`.",
		receiver: "Where the courier collects the return (the buyer).",
		product: "The parcel (spec §2.1): kg, cm, rupees; prepaid (`cod_amount` absent or 0).",
		order: "Order settings (spec §2.2).",
		"order.return_address":
			"Where the buyer's return is collected, as the merchant knows it (every field optional).",
	},
};

const createdBody = closed("Order created (spec §3, §4.1).", {
	order_id: int("The new order's id.", { minimum: 1 }),
});
const dedupedBody = closed(
	"A live order of the caller already has this `customer_order_no` (spec §3): nothing was written; the existing order's id.",
	{
		order_id: int("The existing order's id.", { minimum: 1 }),
		deduped: { type: "boolean", const: true, description: "Always true." },
	},
);

/** `order_no` of a return's create answers (services/intake.service.ts `createReverse`). */
const reverseOrderNo = str(
	"The stored reference of the return: `customer_order_no` + `-R` (e.g. `SO-1001-R`). Query its status with it (`GET /v1/orders/status?order_no=SO-1001-R`); the lists and the detail show it as `order_no`.",
	{ pattern: "-R$" },
);

/** The success answers of both create routes (services/intake.service.ts `createOrder`, `createReverse`). */
function createAnswers(kind: "forward" | "reverse"): Record<string, Response> {
	const withOrderNo = (s: Schema): Schema =>
		kind === "reverse"
			? {
					...s,
					required: [...(s.required ?? []), "order_no"],
					properties: { ...s.properties, order_no: reverseOrderNo },
				}
			: s;
	return {
		"201": json("Order created, committed before the answer (spec §3, §4.1).", withOrderNo(createdBody)),
		"200": json(
			"Duplicate reference: the caller already has a live order with this `customer_order_no` (spec §3). A cancelled booking releases the number: it then creates a new order (201).",
			withOrderNo(dedupedBody),
		),
	};
}

/** The errors of both create routes. */
function createErrors(kind: "forward" | "reverse") {
	return [
		{
			code: "validation_failed",
			when: `with \`details\`, one \`field: reason\` per failing field${kind === "reverse" ? " (e.g. `order.forward_source: must be tekipost or external`)" : ""}`,
		},
		{ code: "unsupported_channel", when: "B2B / multi-box input (the field named in the message)" },
		{
			code: "invalid_pickup_address",
			when: "a named warehouse is not one of the caller's active warehouses (not found and not yours are the same answer, spec §1 rule 4).",
		},
		{
			code: "cannot create order for another sender",
			when: "the body's `sender_id` (top level or in `order`) is not the caller's.",
		},
		{
			code: "reference_in_use",
			when: `the stored reference is held by ${kind === "forward" ? "a return (`…-R`)" : "a forward order literally numbered `…-R`"}`,
		},
	] as const;
}

// ---------------------------------------------------------------------------
// status, orders list and detail (§2.4, §2.5, §2.12, §3, §4.3, §4.8)
// ---------------------------------------------------------------------------

const labelUrlSchema: Schema = nstr(
	"The signed label link of the AWB (spec §4.4, §5 rule 7): `/v1/documents/label/t/{awb}.{hmac}` (absolute when `PUBLIC_BASE_URL` is configured, else relative to the API base), the same link `POST /v1/shipping/book/sync` answers. It downloads the label with NO `Authorization` header (the token is the credential; `LABEL_LINK_SECRET`, rotated through `LABEL_LINK_PREVIOUS_SECRETS`). Filled for every `booked` order however it was booked (async or sync) and whatever its later lifecycle status; null when the order has no live AWB (not booked yet, in progress, failed, cancelled).",
);

const BUCKET_VALUES = BUCKETS.filter((b) => b !== "all");

/** Fields of a list row (lib/contracts/intake.ts `OrderListRow`). */
const listRowProps: Record<string, Schema> = {
	order_id: int("The order's id.", { minimum: 1 }),
	order_no: str("The stored reference: `customer_order_no` as sent, `-R` appended for returns."),
	shipment_type: int("`0` forward, `1` reverse.", { enum: [0, 1] }),
	order_type: int("Payment mode: `0` prepaid, `1` COD.", { enum: [0, 1] }),
	channel: nstr("Where the order came from (spec §2.5)."),
	order_value: num("Declared order total, rupees (spec §2.5).", { minimum: 0 }),
	cod_amount: nnum("Amount the courier collects, rupees; null for prepaid orders.", { minimum: 0 }),
	receiver: closed("The consignee: who receives it (forward) or where a return is collected.", {
		name: str("Name."),
		city: nstr("City, as sent; null when not given."),
		pincode: str("6-digit pincode.", { pattern: "^[0-9]{6}$" }),
	}),
	pickup_address_id: nint("The warehouse the order ships from (returns: goes back to); null when none.", {
		minimum: 1,
	}),
	state: stateSchema,
	status: statusSchema,
	status_name: str("`status` in words (e.g. `Ready for pickup`)."),
	bucket: {
		type: ["string", "null"],
		description:
			"List bucket of `status` (spec §3); null for orders not booked yet (listed only under `all`).",
		enum: [...BUCKET_VALUES, null],
	},
	awb_number: nstr("The AWB; null until booked."),
	courier: nstr("The courier's name; null until booked."),
	logistic_id: nint("The courier's id; null until booked.", { minimum: 1 }),
	tracking_url: nstr(
		"Buyer-facing tracking page of the AWB (spec §2.5; `TRACKING_URL_TEMPLATE`); null until the order has an AWB.",
	),
	label_url: labelUrlSchema,
	created_at: ts("When the order was created"),
	booked_at: nts("When the order was booked"),
	status_at: ts("When `status` was reached (`created_at` for an order no update reached yet)"),
};

const productOut = closed("The parcel (spec §2.1 names): kg, cm, rupees.", {
	product_name: str("Product name."),
	product_sku: nstr("SKU; null when not given."),
	physical_weight: num("Dead weight, kg.", { exclusiveMinimum: 0 }),
	declared_order_total: num("Declared order value, rupees.", { minimum: 0 }),
	cod_amount: nnum("Amount to collect, rupees; null unless COD.", { minimum: 0 }),
	length: nnum("Length, cm; null when not given."),
	width: nnum("Width, cm; null when not given."),
	height: nnum("Height, cm; null when not given."),
});

/** The §2.1 receiver block as stored (detail, unshipped rows). */
const receiverOut = (description: string): Schema =>
	closed(description, {
		name: str("Name."),
		address_1: str("Address line 1."),
		address_2: nstr("Address line 2; null when not given."),
		landmark: nstr("Landmark; null when not given."),
		city: nstr("City; null when not given."),
		state: nstr("State; null when not given."),
		pincode: str("6-digit pincode.", { pattern: "^[0-9]{6}$" }),
		mobile_no: str("The bare 10-digit mobile number.", { pattern: "^[0-9]{10}$" }),
	});

const detailBody = closed(
	"The shipment object (spec §2.5: the full order row plus `channel` and `tracking_url`; every field in docs/decisions/0030-orders-read-side.md). Money rupees, weight kg, dimensions cm, timestamps ISO-8601 UTC (null: not reached).",
	{
		...listRowProps,
		receiver: receiverOut(
			"The §2.1 receiver block as stored (who receives it, or where a return is collected).",
		),
		order_status_id: int("Numeric id of `status` (spec §2.6 ids; 0 for a status unknown to this version).", {
			minimum: 0,
		}),
		order_date: ts("When the merchant took the order (`order.order_date`, else the creation time)"),
		order_from_source: nstr("Source system of the order; null when not given."),
		product: productOut,
		rto_address_id: nint("Warehouse undelivered parcels return to; null when not given.", { minimum: 1 }),
		reverse: nclosed("Returns only (spec §2.2); null for forward orders.", {
			forward_source: nstr("`tekipost` or `external`."),
			old_fwd_awb_no: nstr("AWB of the forward shipment."),
			reverse_pickup_address_id: nint("The caller's warehouse the return goes back to, when given.", {
				minimum: 1,
			}),
			return_address: {
				type: ["object", "null"],
				description:
					"Where the buyer's return is collected, as sent (§2.1 receiver names; only fields given).",
				additionalProperties: { type: "string" },
			},
		}),
		charges: nclosed(
			"The booked shipment's charges, rupees (from booking); null unless booked, or when booking's live shipment has another AWB.",
			{
				freight_charge: num("Freight, rupees."),
				cod_charge: num("COD fee, rupees."),
				shipping_charge_tax: num("GST on freight and COD fee, rupees."),
				total: num("Total charged, rupees."),
			},
		),
		failure_reason: nstr("Plain-words reason of a failed booking; else null."),
		failure_code: nstr(
			"Machine code of a failed booking (`courier_refused`, `courier_unreachable`, `pickup_unavailable`, `order_changed`, `booking_error`); else null.",
		),
		manifested_at: nts("When the parcel was manifested (Ready-for-pickup)"),
		picked_up_at: nts("When the courier first had the parcel"),
		delivered_at: nts("When delivered"),
		rto_at: nts("When the return to origin started"),
		closed_at: nts("When the shipment reached a final status"),
		released_at: nts("When a cancellation released the order number"),
		hidden_at: nts("When the order was hidden from the lists (`POST /v1/orders/{id}/hide`)"),
		edited_at: nts("When the buyer details were last edited (`PATCH /v1/orders/unshipped/{id}`)"),
		label_downloaded_at: nts("The last download of the current AWB's label (documents)"),
		cod_status: {
			type: ["string", "null"],
			enum: [...COD_STATUSES, null],
			description:
				"Where the COD cash of the shipment is (billing; docs/decisions/0102-cod-remittance.md): `pending` (not delivered), `collected` (delivered, the courier holds it), `remitted` (the courier paid it), `paid` (paid out to you), `not_collected` (returned, lost, damaged or cancelled). Null for a prepaid order and for a COD order without an AWB.",
		},
		cod_remittance: nclosed(
			"The courier's remittance that paid the COD amount (billing); null until remitted.",
			{
				reference: str("The courier's remittance reference."),
				remitted_on: str("The remittance date (YYYY-MM-DD, the courier's).", { format: "date" }),
				amount: num("Amount remitted for this shipment, rupees."),
			},
		),
		tracking_page_url: nstr(
			"The buyer's tracking page of the AWB (issue 29; docs/decisions/0108-buyer-tracking-page.md): `/track/{awb}.{hmac}` (prefixed with `PUBLIC_BASE_URL` when set), a signed link that is itself the credential: give it to the buyer only. Null unless booked.",
		),
		updated_at: ts("Last change of the order row"),
	},
);

// ---------------------------------------------------------------------------
// unshipped queue (§2.5, §3, §4.3)
// ---------------------------------------------------------------------------

const errorTypeSchema = str("Why the order is stuck (closed list, `GET /v1/orders/unshipped/error-types`).", {
	enum: [...ERROR_TYPE_NAMES],
});

const unshippedRow = closed(
	"An unshipped row (spec §2.5: `order_value`, `channel`, `confirmation`, `address` and the reason the order is stuck).",
	{
		order_id: int("The order's id.", { minimum: 1 }),
		customer_order_no: str("The stored reference (returns carry `-R`)."),
		shipment_type: int("`0` forward, `1` reverse.", { enum: [0, 1] }),
		order_type: int("`0` prepaid, `1` COD.", { enum: [0, 1] }),
		channel: nstr("Where the order came from."),
		order_value: num("Declared order total, rupees.", { minimum: 0 }),
		cod_amount: nnum("Amount to collect, rupees; null unless COD.", { minimum: 0 }),
		confirmation: str(
			"Buyer confirmation of a cash-on-delivery order (spec §2.5; values ours): `not_required` (prepaid orders and returns), `pending` (forward COD orders).",
			{ enum: ["not_required", "pending"] },
		),
		address: receiverOut(
			"The buyer (forward) or where a return is collected, by the §2.1 receiver names (the PATCH's names).",
		),
		product_name: str("Product name."),
		physical_weight: num("Dead weight, kg.", { exclusiveMinimum: 0 }),
		pickup_address_id: nint("The pickup warehouse; null when none (`pickup_address_missing`).", {
			minimum: 1,
		}),
		state: str("Booking state: `not_shipped`, `booking_in_progress` or `failed`.", {
			enum: ["not_shipped", "booking_in_progress", "failed"],
		}),
		status: statusSchema,
		error_type: errorTypeSchema,
		reason: str("Why the order is stuck, in plain words (the courier's failure reason when there is one)."),
		created_at: ts("When the order was created"),
		order_date: ts("When the merchant took the order"),
		edited_at: nts("Last buyer-detail edit"),
	},
);

/** Leaves of the create body's receiver, reused for the PATCH body (same rules, lib/intake/unshipped.ts). */
const receiverIn = (fromValidator(forwardSchema, FORWARD_NOTES).properties?.receiver ?? {}) as Schema;
const receiverInProps = (receiverIn.properties ?? {}) as Record<string, Schema>;
const patchProps: Record<string, Schema> = Object.fromEntries(
	EDITABLE_FIELDS.map((f) => {
		const leaf = receiverInProps[f] ?? {};
		const required = (receiverIn.required ?? []).includes(f);
		const note = required
			? ' Required on the order: `null` or `""` is refused.'
			: ' `null` or `""` clears it.';
		return [f, { ...leaf, description: `${leaf.description ?? ""}${note}`.trim() } as Schema];
	}),
);

// ---------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------

/** The intake routes answered one by one (not the bulk upload's), keyed by the action that answers each. */
export const INTAKE_ROUTES = defineRoutes({
	"intake.createOrder": {
		route: "POST /v1/intake/order",
		access: WRITE,
		tag: "intake",
		operationId: "intake_createOrder",
		summary: "Create a forward order",
		description:
			"Creates a forward order, `not_shipped` with status `new` (spec §2.1, §3, §4.1, §7). Creating does not book it (§1 rule 5): book with `POST /v1/shipping/book`. Idempotent on `customer_order_no`: concurrent identical calls create one order. Capability `orders.write`; read-only roles are refused (spec §5). Unknown fields are ignored.",
		body: forwardSchema,
		bodyNotes: FORWARD_NOTES,
		responses: createAnswers("forward"),
		errors: createErrors("forward"),
	},
	"intake.createReverse": {
		route: "POST /v1/intake/reverse",
		access: WRITE,
		tag: "intake",
		operationId: "intake_createReverse",
		summary: "Create a return (reverse order)",
		description:
			"Creates a return order (spec §2.2, §4.1, §7): stored as `customer_order_no` + `-R`, `shipment_type` 1, prepaid. The answer names that stored reference as `order_no` (201 `{order_id, order_no}`, 200 `{order_id, deduped, order_no}`): query its status with it (`GET /v1/orders/status?order_no=<customer_order_no>-R`). Capability `orders.write`; read-only roles are refused (spec §5).",
		body: reverseSchema,
		bodyNotes: REVERSE_NOTES,
		responses: createAnswers("reverse"),
		errors: createErrors("reverse"),
	},
	"intake.status": {
		route: "GET /v1/orders/status",
		access: READ,
		tag: "intake",
		operationId: "intake_status",
		summary: "Booking status of an order",
		description:
			"The booking status record of the caller's order with this reference (spec §2.4, §4.3, §7): poll after `POST /v1/shipping/book` until `state` is no longer `booking_in_progress`, backing off to every 10–15 s (§8). Read-your-writes: once the book call answered 202, this never reads `not_shipped`. A reference reused after a cancellation answers the live order (else the newest). Any authenticated role.",
		queryParams: [
			queryParam(
				"order_no",
				"The stored reference, exactly as sent on create (surrounding whitespace trimmed); a return is queried with its `-R` suffix.",
				{ type: "string" },
				true,
			),
		],
		responses: {
			"200": json(
				"The status record (spec §2.4).",
				closed("Booking status record.", {
					order_no: str("The merchant's reference (stored: returns carry `-R`)."),
					state: stateSchema,
					awb_number: nstr("The AWB; filled when `booked`, else null."),
					courier: nstr("The courier's name; filled when `booked`, else null."),
					status: statusSchema,
					failure_reason: nstr("Plain-words reason when `failed`, else null."),
					created_at: ts("When the order was created"),
					label_url: labelUrlSchema,
				}),
			),
			...READ_403,
		},
		errors: [
			{
				code: "order_no is required",
				when: "absent or empty (the text is the code and the message)",
			},
			{
				code: "order_not_found",
				when: "no order with that reference on the account (another merchant's reference included); never means not yet booked",
			},
		],
	},
	"intake.listOrders": {
		route: "GET /v1/orders",
		access: READ,
		tag: "intake",
		operationId: "intake_listOrders",
		summary: "List orders",
		description: `The caller's orders, newest first (\`order_id\` descending), cursor-paged (spec §2.5, §2.12, §3, §4.3, §4.8). Filters combine with AND; every value is trimmed and an empty value is no filter; unknown keys (\`sender_id\` included) are ignored. Hidden orders are never listed. Walking the cursors visits every order that existed at the start exactly once. The list reads intake's stored state (right after a 202 an order may read \`not_shipped\` here for under a second; \`GET /v1/orders/status\` reads through). Any authenticated role. Parsed by hand-written code (lib/intake/list.ts \`parseOrderListQuery\`), described here by hand.`,
		queryParams: [
			queryParam(
				"bucket",
				"Lifecycle slice (spec §3); default `all` (every order, including those not booked yet). Case-sensitive; anything else is 400 `bucket: unrecognised`.",
				{
					type: "string",
					enum: [...BUCKETS],
					default: "all",
				},
			),
			limitParam(ORDERS_MAX_LIMIT, ORDERS_DEFAULT_LIMIT),
			cursorParam("this list (bound to the same filters)"),
			queryParam("awb_number", `Exact, case-sensitive AWB: 1–${AWB_MAX_LENGTH} letters, digits or hyphens.`, {
				type: "string",
				maxLength: AWB_MAX_LENGTH,
				pattern: "^[A-Za-z0-9-]+$",
			}),
			queryParam(
				"order_no",
				`Exact stored reference (1–${MAX_ORDER_NO_LENGTH + 2} of letters, digits and \`_ - / # .\`); a return is also found by the \`customer_order_no\` it was created with (without \`-R\`).`,
				{ type: "string", maxLength: MAX_ORDER_NO_LENGTH + 2, pattern: "^[A-Za-z0-9_\\-/#.]+$" },
			),
			queryParam("shipment_type", "`0` forward, `1` reverse.", { type: "string", enum: ["0", "1"] }),
			queryParam(
				"date_from",
				"Inclusive India Standard Time day (`YYYY-MM-DD`, a real calendar date) of `created_at` (when the order was created with us, not `order_date`); not after `date_to`.",
				{ type: "string", format: "date" },
			),
			queryParam("date_to", "Inclusive India Standard Time day (`YYYY-MM-DD`) of `created_at`.", {
				type: "string",
				format: "date",
			}),
			queryParam(
				"city",
				`Destination city: case-insensitive exact match on the receiver's city; 1–${CITY_MAX_LENGTH} characters, no control characters.`,
				{ type: "string", maxLength: CITY_MAX_LENGTH },
			),
			queryParam(
				"cod_status",
				"COD orders whose current shipment's cash is in this state (docs/decisions/0102-cod-remittance.md): `pending` (not delivered; also a COD order with an AWB whose first status has not reached billing), `collected`, `remitted`, `paid`, `not_collected`. Kept by billing and delivered to this list moments after each change (the order's detail reads billing directly).",
				{ type: "string", enum: [...COD_STATUSES] },
			),
		],
		responses: {
			"200": json(
				"One page of orders (spec §2.12).",
				page(
					"Orders, newest first.",
					closed("A shipment list row (spec §2.5).", listRowProps),
					ORDERS_MAX_LIMIT,
					ORDERS_DEFAULT_LIMIT,
				),
			),
			...READ_403,
		},
		errors: [
			{ code: "bucket: unrecognised", when: '`field` "bucket"; checked first' },
			{
				code: "validation_failed",
				when: "`field` the first bad key, `details` one `key: reason` per bad filter: limit, awb_number, order_no, shipment_type, date_from, date_to, city, cod_status",
			},
			{
				code: "cursor: unrecognised shape",
				when: "tampered, another account's or list's, or issued for other filters",
			},
		],
	},
	"intake.listUnshipped": {
		route: "GET /v1/orders/unshipped",
		access: READ,
		tag: "intake",
		operationId: "intake_listUnshipped",
		summary: "List unshipped orders",
		description: `The caller's stuck orders (spec §2.5, §2.12, §4.3, §4.8): not hidden, not cancelled, booking state \`not_shipped\`, \`booking_in_progress\` or \`failed\`; forward and reverse; newest first (keyset on \`order_id\`). Empty values count as absent; unknown keys (\`sender_id\` included) are ignored; a key given twice is a bad value. Any authenticated role. Parsed by hand-written code (lib/intake/unshipped.ts \`parseUnshippedQuery\`), described here by hand.`,
		queryParams: [
			limitParam(UNSHIPPED_MAX_LIMIT, UNSHIPPED_DEFAULT_LIMIT),
			cursorParam("this list (bound to the same filters)"),
			queryParam("error_type", "Only rows of this `error_type`.", {
				type: "string",
				enum: [...ERROR_TYPE_NAMES],
			}),
			queryParam(
				"customer_order_no",
				`The stored reference, exact and case-sensitive (a return by its \`-R\` reference); at most ${UNSHIPPED_ORDER_NO_MAX} characters.`,
				{ type: "string", maxLength: UNSHIPPED_ORDER_NO_MAX },
			),
			queryParam("pickup_address_id", "Only orders shipping from this warehouse.", {
				type: "string",
				pattern: "^[1-9]\\d*$",
			}),
			queryParam("order_type", "`0` prepaid, `1` COD.", { type: "string", enum: ["0", "1"] }),
			queryParam(
				"amount_min",
				"Inclusive lower bound of the declared order total, rupees (not above `amount_max`).",
				{
					type: "string",
					pattern: "^\\d{1,9}(\\.\\d{1,2})?$",
				},
			),
			queryParam("amount_max", "Inclusive upper bound of the declared order total, rupees.", {
				type: "string",
				pattern: "^\\d{1,9}(\\.\\d{1,2})?$",
			}),
		],
		responses: {
			"200": json(
				"One page of unshipped rows (spec §2.12).",
				page("Unshipped orders, newest first.", unshippedRow, UNSHIPPED_MAX_LIMIT, UNSHIPPED_DEFAULT_LIMIT),
			),
			...READ_403,
		},
		errors: [
			{ code: "order_type: must be 0 (prepaid) or 1 (COD)", when: SPEC_CODE },
			{ code: "amount_min: must be a rupee amount", when: SPEC_CODE },
			{ code: "amount_max: must be a rupee amount", when: SPEC_CODE },
			{
				code: "validation_failed",
				when: "`details`, `field`: for `limit`, `error_type`, `customer_order_no`, `pickup_address_id`, amount_min > amount_max",
			},
			"cursor: unrecognised shape",
		],
	},
	"intake.unshippedErrorTypes": {
		route: "GET /v1/orders/unshipped/error-types",
		access: READ,
		tag: "intake",
		operationId: "intake_unshippedErrorTypes",
		summary: "Unshipped error types",
		description:
			'The values `GET /v1/orders/unshipped?error_type=` accepts (spec §4.3: shape "not shown"; ours), every type of the closed list in a fixed order, with the caller\'s count of each now (both directions). No query. Any authenticated role.',
		responses: {
			"200": json(
				"Every error type.",
				closed("Error types.", {
					data: arr(
						"One entry per error type, fixed order.",
						closed("An error type.", {
							error_type: errorTypeSchema,
							label: str("Short words for a filter chip."),
							description: str("What it means and what to do."),
							count: int("The caller's unshipped orders of this type now.", { minimum: 0 }),
						}),
						{ minItems: ERROR_TYPE_NAMES.length, maxItems: ERROR_TYPE_NAMES.length },
					),
				}),
			),
			...READ_403,
		},
	},
	"intake.unshippedCounts": {
		route: "GET /v1/orders/unshipped/counts",
		access: READ,
		tag: "intake",
		operationId: "intake_unshippedCounts",
		summary: "Unshipped counts",
		description:
			"Counts of the unshipped queue (spec §4.3). Forward: `unshipped` (state not_shipped), `failed`, `in_queue` (booking_in_progress), `total` their sum. Reverse: `unshipped` (not_shipped and booking_in_progress returns) and `failed`. Hidden orders are not counted. Any authenticated role.",
		queryParams: [
			queryParam("shipment_type", "`0` forward (default, also when empty), `1` reverse.", {
				type: "string",
				enum: ["0", "1"],
				default: "0",
			}),
		],
		responses: {
			"200": json("The counts.", {
				oneOf: [
					closed("Forward counts.", {
						total: int("unshipped + failed + in_queue.", { minimum: 0 }),
						unshipped: int("Orders not booked yet (state not_shipped).", { minimum: 0 }),
						failed: int("Orders whose booking failed.", { minimum: 0 }),
						in_queue: int("Orders being booked.", { minimum: 0 }),
					}),
					closed("Reverse counts.", {
						unshipped: int("Returns not booked yet or being booked.", { minimum: 0 }),
						failed: int("Returns whose booking failed.", { minimum: 0 }),
					}),
				],
			}),
			...READ_403,
		},
		errors: [
			{
				code: "shipment_type: must be 0 (forward) or 1 (reverse)",
				when: SPEC_CODE,
			},
		],
	},
	"intake.editUnshipped": {
		route: "PATCH /v1/orders/unshipped/:id",
		access: WRITE,
		tag: "intake",
		operationId: "intake_editUnshipped",
		summary: "Edit an unshipped order's buyer details",
		description: `Edits the buyer's details of an unbooked order (spec §3, §4.3, §7). Editable: the caller's order, not hidden, not cancelled, booking state \`not_shipped\` or \`failed\`, created less than ${EDIT_WINDOW_DAYS} days ago (\`created_at\`); a booking queued or booked at booking but not yet reported also refuses the edit. Each field is validated and normalised by the create rules (lib/intake/validation.ts through \`parseOrderInput\`; hand-written allow-list in lib/intake/unshipped.ts \`parseReceiverPatch\`, described here from the create schema's receiver leaves). An empty body is a valid no-op. Capability \`orders.write\`; read-only roles are refused.`,
		path: ORDER_ID_PATH,
		bodySchema: {
			type: "object",
			description: `Flat §2.1 receiver keys (allow-list; spec §4.3 "not shown", ours): ${EDITABLE_FIELDS.join(", ")}. Any other key is 400 \`validation_failed\` \`<key>: is not an editable field\`; \`sender_id\` (and \`id\`) are ignored.`,
			properties: {
				...patchProps,
				sender_id: { description: "Ignored (spec §1 rule 3, §4.3: stripped)." },
			},
			additionalProperties: false,
		},
		bodyOptional: true,
		responses: {
			"200": json(
				"Edited (or nothing to change).",
				closed("Edit result (spec §4.3).", {
					order_id: int("The order.", { minimum: 1 }),
					status: statusSchema,
					changed: arr(
						"The fields whose stored value changed (after normalisation), in allow-list order; `edited_at` is stamped only when not empty.",
						str("A field name.", { enum: [...EDITABLE_FIELDS] }),
					),
				}),
			),
		},
		errors: [
			{
				code: "validation_failed",
				when: `${BAD_ORDER_ID}; or (\`details\`, \`field\` the first offending key) a body key outside the allow-list or a value the create rules refuse.`,
			},
			ORDER_404,
			{
				code: "not_editable",
				when: "with `reason`: `booked`, `booking_in_progress`, `cancelled`, `hidden` (still the caller's: 409, not 404), `expired` (older than the editable window); without `reason` when the order changed during the edit",
			},
		],
	},
	"intake.hideOrder": {
		route: "POST /v1/orders/:id/hide",
		access: WRITE,
		tag: "intake",
		operationId: "intake_hideOrder",
		summary: "Hide an order",
		description:
			"Hides one of the caller's orders, in any state, from every list and count (spec §3, §4.3, §7). Never contacts the courier and never changes the booking; closes the order's open cancellation at booking (`closed`, `refunded`), then stamps `hidden_at` (the first time only). Idempotent: a repeat answers the same body with booking's `closed` (false on a repeat) and `refunded` read again. The detail still answers a hidden order. Capability `orders.write`; read-only roles are refused.",
		path: ORDER_ID_PATH,
		responses: {
			"200": json(
				"Hidden.",
				closed("Hide result (spec §4.3).", {
					order_id: int("The order.", { minimum: 1 }),
					order_no: str("The stored reference (returns carry `-R`)."),
					hidden: { type: "boolean", const: true, description: "Always true." },
					closed: { type: "boolean", description: "An open cancellation was closed by this call." },
					refunded: num("Rupees refunded for the order's cancelled bookings (wallet ledger).", {
						minimum: 0,
					}),
				}),
			),
		},
		errors: [
			ORDER_ID_400,
			{ ...ORDER_404, when: `${ORDER_404.when}; booking is not asked` },
			{ code: "service_unavailable", when: "booking could not be asked: nothing hidden; retry." },
		],
	},
	"intake.orderDetail": {
		route: "GET /v1/orders/:id",
		access: READ,
		tag: "intake",
		operationId: "intake_orderDetail",
		summary: "Read an order",
		description:
			"The caller's order with its shipment (spec §2.5, §4.3, §7): order, receiver, product, warehouse ids, courier, AWB, charges, lifecycle status and every timestamp, `channel`, `tracking_url`, the signed `label_url` of a booked order. A hidden order is still answered (with `hidden_at`). Once the order has an AWB, booking and documents are asked for `charges` and `label_downloaded_at`, and billing for `cod_status` and `cod_remittance` of a COD order (3 s each). Any authenticated role.",
		path: ORDER_ID_PATH,
		responses: {
			"200": json("The shipment object.", detailBody),
			...READ_403,
		},
		errors: [
			ORDER_ID_400,
			ORDER_404,
			{
				code: "service_unavailable",
				when: "booking, documents or (COD) billing could not be asked for an order with an AWB; retry.",
			},
		],
	},
});
