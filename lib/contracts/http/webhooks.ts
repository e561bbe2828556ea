/**
 * The HTTP routes of the `webhooks` service (issue 11 "Webhooks";
 * docs/decisions/0044-merchant-webhooks.md): subscribe, list, read, change
 * and delete an endpoint, rotate its signing secret, read its deliveries log,
 * redeliver a delivery, send a test event. One definition each (issue 26;
 * lib/platform/openapi/route.ts, docs/ARCHITECTURE.md §9).
 *
 * Inputs are validated by hand (lib/webhooks/api.ts `parseCreate`,
 * `parsePatch`, `parseDeliveryQuery`, `parseId`; URLs by lib/webhooks/ssrf.ts):
 * the body schemas and query parameters here are written by hand from those
 * functions, with the limits of the contract (lib/contracts/webhooks.ts
 * `WEBHOOK_MAX_DESCRIPTION`, `WEBHOOK_MAX_URL_LENGTH`).
 *
 * Also here: {@link WEBHOOK_EVENT_DOCS}, the document's top-level `webhooks`
 * section (the POST a merchant's receiver gets per event type: the Standard
 * Webhooks envelope `{type, timestamp, data}` and the three signature headers).
 */
import type { OpenAPIV3_1 } from "openapi-types";
import { ID_PATH_SCHEMA, json, queryParam } from "../../platform/openapi/components";
import { int, nullableStr, PAGINATION, str, utc } from "../../platform/openapi/helpers";
import { defineRoutes } from "../../platform/openapi/route";
import type { JsonSchema, Operation } from "../../platform/openapi/types";
import {
	WEBHOOK_EVENT_TYPES,
	WEBHOOK_MAX_DESCRIPTION,
	WEBHOOK_MAX_URL_LENGTH,
	WEBHOOK_TEST_TYPE,
	type WebhookEventType,
} from "../webhooks";

// ---------------------------------------------------------------------------
// Documented shapes
// ---------------------------------------------------------------------------

const TAG = "webhooks";

const EVENT_TYPE: JsonSchema = {
	type: "string",
	enum: [...WEBHOOK_EVENT_TYPES],
	description: "an event type a merchant can subscribe to",
};

const URL_INPUT: JsonSchema = {
	type: "string",
	maxLength: WEBHOOK_MAX_URL_LENGTH,
	description:
		"the receiver: `https` (`http` too only in the sandbox, SANDBOX=1), no user name or password; its host must not be, or resolve to, a loopback (allowed in the sandbox), private, link-local (169.254.169.254 metadata), unique-local, carrier-grade NAT or other non-public address (422 `url_not_allowed`; checked again at every delivery). An IPv6 address embedding IPv4 (IPv4-compatible `::/96`, IPv4-mapped, IPv4-translated, NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002::/16`, Teredo `2001::/32`) is judged by its embedded IPv4 address(es), as the plain IPv4 address would be: `[::a9fe:a9fe]` is refused as 169.254.169.254 is.",
};

/** An endpoint as the API shows it (lib/contracts/webhooks.ts `WebhookView`). */
const VIEW_PROPS: Record<string, JsonSchema> = {
	id: int("the endpoint"),
	url: str("the receiver URL (normalised)"),
	events: { type: "array", items: EVENT_TYPE, description: "subscribed event types (no duplicates)" },
	description: nullableStr(`the merchant's note (at most ${WEBHOOK_MAX_DESCRIPTION} characters), or null`),
	enabled: {
		type: "boolean",
		description: "false: no delivery is made (disabled by PATCH or after continuous failure)",
	},
	disabled_reason: nullableStr(
		"why it is disabled: `disabled by the merchant`, or `every delivery failed since <time> (the whole retry schedule of a delivery); last error: …`; null while enabled",
	),
	disabled_at: utc("when it was disabled", true),
	created_at: utc("created"),
	updated_at: utc("last changed"),
};
const VIEW_REQUIRED = Object.keys(VIEW_PROPS);

const VIEW: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: VIEW_REQUIRED,
	properties: VIEW_PROPS,
};

/** The view plus the signing secret (lib/contracts/webhooks.ts `WebhookWithSecret`). */
const WITH_SECRET: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: [...VIEW_REQUIRED, "secret"],
	properties: {
		...VIEW_PROPS,
		secret: str(
			"the signing secret `whsec_<base64>` (Standard Webhooks): shown only in this answer; keep it to verify `webhook-signature`",
			{ pattern: "^whsec_[A-Za-z0-9+/=]+$" },
		),
	},
};

/** One delivery of the log (lib/contracts/webhooks.ts `WebhookDeliveryView`). */
const DELIVERY: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: [
		"id",
		"message_id",
		"event_type",
		"order_id",
		"status",
		"attempt",
		"status_code",
		"latency_ms",
		"error",
		"last_attempt_at",
		"next_retry_at",
		"delivered_at",
		"created_at",
	],
	properties: {
		id: int("the delivery (one per event and endpoint)"),
		message_id: str("the `webhook-id` header of every attempt and redelivery", {
			pattern: "^msg_[a-z2-7]{26}$",
		}),
		event_type: { type: "string", enum: [...WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_TYPE] },
		order_id: {
			type: ["integer", "null"],
			description: "the order the event is about; null for `webhook.test`",
		},
		status: {
			type: "string",
			enum: ["pending", "delivered", "failed"],
			description: "`pending` (to be tried or retried), `delivered` (a 2xx answer), `failed` (gave up)",
		},
		attempt: int("attempts made so far", { minimum: 0 }),
		status_code: {
			type: ["integer", "null"],
			description: "HTTP status of the last attempt; null: no answer",
		},
		latency_ms: { type: ["integer", "null"], description: "duration of the last attempt, ms" },
		error: nullableStr(
			"the last attempt's failure in our words (`HTTP 500`, `timeout after 10000 ms`, `redirect not followed (302)`, `address not allowed: …`)",
		),
		last_attempt_at: utc("the last attempt", true),
		next_retry_at: utc("when the next retry is due (pending after a failure)", true),
		delivered_at: utc("when a 2xx came", true),
		created_at: utc("when the event was fanned out to the endpoint"),
	},
};

/** The fields of a create body (and of a PATCH, with `enabled`). */
const BODY_PROPS: Record<string, JsonSchema> = {
	url: URL_INPUT,
	events: {
		type: "array",
		minItems: 1,
		items: EVENT_TYPE,
		description: "event types to receive (duplicates dropped)",
	},
	description: {
		type: ["string", "null"],
		maxLength: WEBHOOK_MAX_DESCRIPTION,
		description: `a note, trimmed, at most ${WEBHOOK_MAX_DESCRIPTION} characters; "" or null = none`,
	},
};

/** The endpoint id in the path. */
const ID_PATH = {
	id: {
		description: "the endpoint id, a positive integer (anything else is 404 `webhook_not_found`)",
		schema: ID_PATH_SCHEMA,
	},
};

/** Who may change endpoints: capability `orders.write`, read-only roles refused first (spec §5 rules 1–2). */
const WRITE = { capability: "orders.write", writes: true } as const;
/** Who may read them: every authenticated role. */
const READ = { auth: true } as const;

// ---------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------

/** The webhook routes, keyed by the action that answers each. */
export const WEBHOOKS_ROUTES = defineRoutes({
	"webhooks.create": {
		route: "POST /v1/webhooks",
		access: WRITE,
		tag: TAG,
		operationId: "webhooks_create",
		summary: "Subscribe an endpoint",
		description:
			"Issue 11: a receiver for the listed event types, enabled, with a new `whsec_` signing secret shown only in this answer (and on rotation). Capability `orders.write`; read-only roles 403. At most `WEBHOOK_MAX_ENDPOINTS` (20) per account.",
		bodySchema: {
			type: "object",
			required: ["url", "events"],
			description: "Validated by hand (lib/webhooks/api.ts `parseCreate`). Unknown keys are ignored.",
			properties: BODY_PROPS,
		},
		responses: { "201": json("The endpoint with its signing secret.", WITH_SECRET) },
		errors: [
			{
				code: "validation_failed",
				when: "`url` missing or not an absolute URL, `events` empty or with an unknown type, `description` not a string or too long (each in `details`).",
			},
			"webhook_limit_reached",
			{
				code: "url_not_allowed",
				when: "the URL's scheme, credentials or address is refused (see `url`; an embedded IPv4 address is named, e.g. `::a00:1 is a private address (IPv4-compatible, embeds 10.0.0.1)`), or its host does not resolve.",
			},
		],
	},
	"webhooks.list": {
		route: "GET /v1/webhooks",
		access: READ,
		tag: TAG,
		operationId: "webhooks_list",
		summary: "The account's endpoints",
		description:
			"Issue 11: every endpoint of the caller's account, oldest first, never a secret. Any authenticated role.",
		responses: {
			"200": json("The endpoints.", {
				type: "object",
				additionalProperties: false,
				required: ["data"],
				properties: { data: { type: "array", items: VIEW } },
			}),
		},
	},
	"webhooks.get": {
		route: "GET /v1/webhooks/:id",
		access: READ,
		tag: TAG,
		operationId: "webhooks_get",
		summary: "One endpoint",
		description: "Issue 11: the endpoint, without its secret. Any authenticated role.",
		path: ID_PATH,
		responses: { "200": json("The endpoint.", VIEW) },
		errors: ["webhook_not_found"],
	},
	"webhooks.update": {
		route: "PATCH /v1/webhooks/:id",
		access: WRITE,
		tag: TAG,
		operationId: "webhooks_update",
		summary: "Change an endpoint",
		description:
			"Issue 11: one or more of `url`, `events`, `description`, `enabled` (false disables it: no delivery is made, pending ones end `failed`; true re-enables it and clears the disabled reason). Capability `orders.write`.",
		path: ID_PATH,
		bodySchema: {
			type: "object",
			minProperties: 1,
			description: "Validated by hand (lib/webhooks/api.ts `parsePatch`); at least one field.",
			properties: { ...BODY_PROPS, enabled: { type: "boolean" } },
		},
		responses: { "200": json("The endpoint as changed.", VIEW) },
		errors: [
			{
				code: "validation_failed",
				when: "no field given, or a field malformed (as on create; `enabled` not a boolean), each in `details`.",
			},
			"webhook_not_found",
			{ code: "url_not_allowed", when: "the URL is refused (see create)." },
		],
	},
	"webhooks.remove": {
		route: "DELETE /v1/webhooks/:id",
		access: WRITE,
		tag: TAG,
		operationId: "webhooks_remove",
		summary: "Delete an endpoint",
		description:
			"Issue 11: the endpoint and its deliveries log; pending deliveries are dropped. Capability `orders.write`.",
		path: ID_PATH,
		responses: {
			"200": json("Deleted.", {
				type: "object",
				additionalProperties: false,
				required: ["id", "deleted"],
				properties: { id: int("the endpoint"), deleted: { const: true } },
			}),
		},
		errors: ["webhook_not_found"],
	},
	"webhooks.rotateSecret": {
		route: "POST /v1/webhooks/:id/rotate-secret",
		access: WRITE,
		tag: TAG,
		operationId: "webhooks_rotate_secret",
		summary: "Rotate the signing secret",
		description:
			"Issue 11: a new `whsec_` secret, shown only in this answer. For 24 hours (`WEBHOOK_PREVIOUS_SECRET_H`) every delivery carries a signature by each secret (space-separated in `webhook-signature`), so a receiver still holding the old one verifies while it switches. Capability `orders.write`.",
		path: ID_PATH,
		responses: { "200": json("The endpoint with its new secret.", WITH_SECRET) },
		errors: ["webhook_not_found"],
	},
	"webhooks.deliveries": {
		route: "GET /v1/webhooks/:id/deliveries",
		access: READ,
		tag: TAG,
		operationId: "webhooks_deliveries",
		summary: "The endpoint's deliveries log",
		description:
			"Issue 11, spec §2.12, §4.8: the endpoint's deliveries, newest first: event, message id, attempts, last status code, latency, error, next retry. Any authenticated role. The receiver's answer bodies are never shown.",
		path: ID_PATH,
		// validated by hand (lib/webhooks/api.ts `parseDeliveryQuery`)
		queryParams: [
			queryParam("limit", "page size 1–1000 (default 50)", { type: "string", pattern: "^[0-9]+$" }),
			queryParam(
				"cursor",
				"`pagination.nextCursor` of the previous page (bound to the account, endpoint and `status`)",
			),
			queryParam("status", "only deliveries in this state", {
				type: "string",
				enum: ["pending", "delivered", "failed"],
			}),
		],
		responses: {
			"200": json("A page of deliveries (spec §2.12).", {
				type: "object",
				additionalProperties: false,
				required: ["data", "pagination"],
				properties: { data: { type: "array", items: DELIVERY }, pagination: PAGINATION },
			}),
		},
		errors: [
			{ code: "validation_failed", when: "`limit` or `status` malformed" },
			{
				code: "cursor: unrecognised shape",
				when: "a cursor that is not ours, or of another endpoint or filter.",
			},
			"webhook_not_found",
		],
	},
	"webhooks.redeliver": {
		route: "POST /v1/webhooks/:id/deliveries/:delivery_id/redeliver",
		access: WRITE,
		tag: TAG,
		operationId: "webhooks_redeliver",
		summary: "Send a delivery again",
		description:
			"Issue 11: the delivery is pending again with a fresh retry schedule: same event, same `webhook-id` (receivers dedupe on it). Capability `orders.write`.",
		path: {
			...ID_PATH,
			delivery_id: { description: "the delivery id (anything else is 404 `delivery_not_found`)" },
		},
		responses: { "202": json("The delivery, pending.", DELIVERY) },
		errors: [
			// first: the catalogue's `webhook_not_found` text ends with a full stop
			{ code: "delivery_not_found", when: "no such delivery of that endpoint" },
			"webhook_not_found",
			"webhook_disabled",
		],
	},
	"webhooks.test": {
		route: "POST /v1/webhooks/:id/test",
		access: WRITE,
		tag: TAG,
		operationId: "webhooks_test",
		summary: "Send a test event",
		description:
			"Issue 11: a `webhook.test` event (data `{endpoint_id, message}`) to this endpoint only, signed and retried like any other. Capability `orders.write`.",
		path: ID_PATH,
		responses: { "202": json("The test delivery, pending.", DELIVERY) },
		errors: ["webhook_not_found", "webhook_disabled"],
	},
});

// ---------------------------------------------------------------------------
// The document's `webhooks` section: what a receiver gets
// ---------------------------------------------------------------------------

/** The Standard Webhooks request headers every delivery carries. */
const SIGNATURE_HEADERS: OpenAPIV3_1.ParameterObject[] = [
	{
		name: "webhook-id",
		in: "header",
		required: true,
		description:
			"the message id `msg_…`: the same on every retry and redelivery of this event (dedupe on it)",
		schema: { type: "string" },
	},
	{
		name: "webhook-timestamp",
		in: "header",
		required: true,
		description: "seconds since the Unix epoch of this attempt (reject ones far from now: replay protection)",
		schema: { type: "string", pattern: "^[0-9]+$" },
	},
	{
		name: "webhook-signature",
		in: "header",
		required: true,
		description:
			'`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` under the endpoint\'s `whsec_` secret; space-separated, one per secret, during the 24 h after a rotation. Verify with a Standard Webhooks library (`standardwebhooks`).',
		schema: { type: "string" },
	},
];

const ORDER_DATA: Record<string, JsonSchema> = {
	order_id: int("the order"),
	order_no: nullableStr("the merchant's order reference (`customer_order_no`; a return's ends in `-R`)"),
};

/**
 * Per event type (every subscribable type and `webhook.test`: a type added to `WEBHOOK_EVENT_TYPES` without its entry
 * here fails the type check): summary and the `data` members besides `order_id` / `order_no`.
 */
const EVENTS: Record<
	WebhookEventType | typeof WEBHOOK_TEST_TYPE,
	{ summary: string; data: Record<string, JsonSchema>; required?: string[]; account?: true }
> = {
	"order.created": {
		summary: "An order was created (single, return or bulk)",
		data: {
			direction: { type: "string", enum: ["forward", "reverse"] },
			payment_mode: { type: "string", enum: ["prepaid", "cod"] },
			status: str("the order's status, `new`"),
			pickup_address_id: { type: ["integer", "null"], description: "the pickup warehouse" },
		},
	},
	"order.booked": {
		summary: "A courier booked the order's shipment",
		data: {
			awb_number: str("the AWB"),
			courier: str("the courier's name"),
			logistic_id: int("the courier"),
			status: { const: "booked" },
			tracking_page_url: str(
				"the buyer's tracking page (docs/decisions/0108-buyer-tracking-page.md; a signed link: give it to the buyer only)",
			),
		},
		required: ["awb_number", "courier"],
	},
	"order.booking_failed": {
		summary: "Booking the order failed (every courier tried refused or failed)",
		data: {
			status: { const: "booking_failed" },
			reason: nullableStr("why, in plain words (the courier's where it refused)"),
			failure_code: nullableStr(
				"`courier_refused`, `courier_unreachable`, `pickup_unavailable`, `order_changed` or `booking_error`",
			),
		},
		required: ["reason"],
	},
	"order.cancelled": {
		summary:
			"The order's booking was cancelled (`POST /v1/shipping/cancel`, or the courier call of a booking cancelled while in flight); the order may be booked again",
		data: {
			status: { const: "cancelled" },
			awb_number: nullableStr("the AWB cancelled at the courier, or null when none had been issued"),
			courier: str("the courier's name"),
			logistic_id: int("the courier"),
			refunded: {
				type: "number",
				minimum: 0,
				description: "rupees refunded to the wallet for this booking (0 when nothing was charged)",
			},
		},
		required: ["status", "logistic_id", "refunded"],
	},
	"shipment.status_changed": {
		summary: "The shipment's normalized status moved (a courier scan, or a manifest: `manifested`; spec §6)",
		data: {
			awb_number: str("the AWB"),
			courier: str("the courier's name (when known)"),
			logistic_id: int("the courier"),
			status: str("the normalized status (spec §2.6), e.g. `picked_up`, `delivered`"),
			status_name: str("its display name"),
			status_at: utc("when the status was reached (the scan's time)"),
			manifest_no: str("the manifest, on `manifested`"),
			courier_status: str("`undelivered` only: the courier's status words"),
			remarks: nullableStr("`undelivered` only: the courier's remarks"),
			tracking_page_url: str("the buyer's tracking page (absent once cancelled; a signed link)"),
		},
		required: ["awb_number", "status", "status_at"],
	},
	"ndr.opened": {
		summary: "A failed delivery opened an NDR case (spec §2.10)",
		data: {
			ndr_id: int("the NDR case"),
			awb_number: str("the AWB"),
			courier: nullableStr("the courier's name"),
			logistic_id: int("the courier"),
			reason: str("the reason (closed list of the NDR tabs)"),
			attempts: int("failed attempts so far"),
			status: { const: "undelivered" },
			tab: str("the NDR tab the case is in"),
		},
		required: ["ndr_id", "awb_number"],
	},
	"ndr.closed": {
		summary: "An NDR case closed: delivered, returned (RTO), lost, damaged or cancelled",
		data: {
			ndr_id: int("the NDR case"),
			awb_number: str("the AWB"),
			courier: nullableStr("the courier's name"),
			logistic_id: int("the courier"),
			reason: str("the last failed attempt's reason"),
			attempts: int("failed attempts"),
			status: str("the shipment status that closed it, e.g. `delivered`, `rto_initiated`"),
			tab: str("`delivered`, `rto` or `closed`"),
		},
		required: ["ndr_id", "awb_number", "status"],
	},
	"weight_discrepancy.opened": {
		summary:
			"A courier charged a heavier weight than declared: a weight discrepancy opened, its extra charge held (docs/decisions/0105-weight-discrepancies.md)",
		data: {
			discrepancy_id: int("the discrepancy (GET /v1/weight-discrepancies/{id})"),
			awb_number: str("the AWB"),
			logistic_id: int("the courier"),
			status: { const: "open" },
			declared_weight: { type: "number", description: "our chargeable weight, kg" },
			charged_weight: { type: "number", description: "the courier's chargeable weight, kg" },
			extra_charge: { type: "number", description: "rupees held in the wallet" },
			respond_by: utc("accept or dispute before this, else it is auto-accepted"),
		},
		required: ["discrepancy_id", "awb_number", "extra_charge", "respond_by"],
	},
	"cod.exception": {
		summary:
			"A courier's COD remittance line for one of your shipments did not reconcile: a wrong amount, an undelivered shipment, or a second payment (docs/decisions/0102-cod-remittance.md)",
		data: {
			awb_number: str("the AWB"),
			kind: { type: "string", enum: ["amount_mismatch", "not_delivered", "duplicate"] },
			detail: str("why, in words"),
			expected_amount: { type: ["number", "null"], description: "the shipment's COD amount, rupees" },
			amount: { type: ["number", "null"], description: "what the courier's line paid, rupees" },
			remittance_reference: nullableStr("the courier's remittance reference"),
			remitted_on: nullableStr("its date (YYYY-MM-DD)"),
		},
		required: ["awb_number", "kind", "detail"],
	},
	"remittance.paid": {
		summary:
			"A COD payout was paid to your bank account (docs/decisions/0104-cod-payouts.md); about the account, not one order: no order_id",
		account: true,
		data: {
			remittance_id: int("the payout (GET /v1/remittances/{id})"),
			cycle_date: str("the payout cycle (IST date)"),
			shipments: int("COD shipments it pays"),
			gross_cod: { type: "number", description: "rupees" },
			deductions: { type: "number", description: "rupees" },
			net: { type: "number", description: "rupees paid" },
			utr: str("the bank transfer's UTR"),
			paid_at: utc("when ops recorded the payment"),
		},
		required: ["remittance_id", "net", "utr"],
	},
	"pickup.missed": {
		summary:
			"A pickup request's day passed without a pickup scan of any of its shipments (docs/decisions/0107-pickup-requests.md); about a warehouse, not one order: no order_id",
		account: true,
		data: {
			pickup_id: int("the pickup request (GET /v1/pickups/{id})"),
			warehouse_id: int("the warehouse"),
			logistic_id: int("the courier"),
			courier: str("the courier's name"),
			pickup_date: str("the day it was asked for (IST date)"),
			slot: str("the time window asked for (IST)"),
			expected_package_count: int("parcels announced"),
			courier_pickup_id: nullableStr("the courier's reference"),
		},
		required: ["pickup_id", "warehouse_id", "logistic_id", "pickup_date"],
	},
	[WEBHOOK_TEST_TYPE]: {
		summary: "A test event (POST /v1/webhooks/{id}/test), to that endpoint only",
		data: { endpoint_id: int("the endpoint"), message: str("a fixed text") },
	},
};

/** The POST a receiver gets for event `type`. */
function eventItem(type: string, e: (typeof EVENTS)[keyof typeof EVENTS]): OpenAPIV3_1.PathItemObject {
	const test = type === WEBHOOK_TEST_TYPE;
	const data: JsonSchema = {
		type: "object",
		description: "the event's data (unknown members may be added later: ignore them)",
		required:
			test || e.account
				? test
					? ["endpoint_id"]
					: (e.required ?? [])
				: ["order_id", "order_no", ...(e.required ?? [])],
		properties: test || e.account ? e.data : { ...ORDER_DATA, ...e.data },
	};
	const post: Operation = {
		operationId: `webhook_${type.replace(/\./g, "_")}`,
		summary: e.summary,
		description:
			"Sent to each enabled endpoint subscribed to this type, signed per Standard Webhooks (HMAC-SHA256, the endpoint's `whsec_` secret). At least once: retried with exponential backoff and jitter for about 24 h (10 s per attempt; redirects are not followed) until a 2xx answer, with the same `webhook-id`; a shipment's status events are sent in order. An endpoint failing for a whole retry schedule is disabled with the reason.",
		security: [],
		parameters: SIGNATURE_HEADERS,
		requestBody: {
			required: true,
			content: {
				"application/json": {
					schema: {
						type: "object",
						required: ["type", "timestamp", "data"],
						properties: {
							type: { const: type },
							timestamp: utc("when the event happened"),
							data,
						},
					},
				},
			},
		},
		responses: {
			"2XX": { description: "received; any 2xx ends the retries" },
			default: { description: "any other answer (or none within 10 s) is retried" },
		},
	};
	// openapi-types types a 3.1 path item as an intersection with the 3.0 one; the shapes are the 3.1 ones
	return { post } as OpenAPIV3_1.PathItemObject;
}

/**
 * The OpenAPI `webhooks` section (top level of the document, OpenAPI 3.1):
 * event type → the POST the merchant's receiver gets (Standard Webhooks
 * envelope `{type, timestamp, data}`, headers `webhook-id`,
 * `webhook-timestamp`, `webhook-signature`), one per subscribable type plus
 * `webhook.test`.
 */
export const WEBHOOK_EVENT_DOCS: Record<string, OpenAPIV3_1.PathItemObject> = Object.fromEntries(
	Object.entries(EVENTS).map(([type, e]) => [type, eventItem(type, e)]),
);
