/**
 * The HTTP routes of pickup requests (issue 28; docs/decisions/0107-pickup-requests.md),
 * answered by the `warehouses` service (lib/warehouses/pickups.ts): request, list, read,
 * change, cancel. One definition each (lib/platform/openapi/route.ts); the query and body
 * schemas here are the ones the actions validate with.
 */
import type { ValidationSchema } from "fastest-validator";
import { ID_PATH_SCHEMA, json } from "../../platform/openapi/components";
import { int, nullableStr, PAGINATION, str, utc } from "../../platform/openapi/helpers";
import { defineRoutes, type RouteError } from "../../platform/openapi/route";
import type { JsonSchema } from "../../platform/openapi/types";
import {
	PICKUP_MAX_DAYS_AHEAD,
	PICKUP_MAX_PACKAGES,
	PICKUP_SLOTS,
	PICKUP_STATUSES,
	PICKUPS_DEFAULT_LIMIT,
	PICKUPS_MAX_LIMIT,
} from "../warehouses";

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_MESSAGES = { stringPattern: "must be a date YYYY-MM-DD" };
const POSITIVE = { stringPattern: "must be a positive integer" };
const SLOT_MESSAGES = { enumValue: `must be one of ${PICKUP_SLOTS.join(", ")}` };

/** Body of `POST /v1/pickups`. */
export const PICKUP_CREATE_BODY = {
	$$strict: "remove",
	warehouse_id: { type: "number", integer: true, positive: true },
	logistic_id: { type: "number", integer: true, positive: true },
	pickup_date: { type: "string", pattern: DATE, optional: true, messages: DATE_MESSAGES },
	slot: { type: "enum", values: [...PICKUP_SLOTS], optional: true, messages: SLOT_MESSAGES },
	expected_package_count: { type: "number", integer: true, min: 1, max: PICKUP_MAX_PACKAGES },
} as const satisfies ValidationSchema;

/** Body of `PATCH /v1/pickups/{id}` (at least one field; checked by the action). */
export const PICKUP_CHANGE_BODY = {
	$$strict: "remove",
	pickup_date: { type: "string", pattern: DATE, optional: true, messages: DATE_MESSAGES },
	slot: { type: "enum", values: [...PICKUP_SLOTS], optional: true, messages: SLOT_MESSAGES },
	expected_package_count: {
		type: "number",
		integer: true,
		min: 1,
		max: PICKUP_MAX_PACKAGES,
		optional: true,
	},
} as const satisfies ValidationSchema;

/** Query of `GET /v1/pickups` (numbers as digit strings, no `convert`: docs/ARCHITECTURE.md §8 validators). */
export const PICKUPS_QUERY = {
	$$strict: "remove",
	limit: { type: "string", pattern: /^[1-9][0-9]{0,2}$/, optional: true, messages: POSITIVE },
	from: { type: "string", pattern: DATE, optional: true, messages: DATE_MESSAGES },
	to: { type: "string", pattern: DATE, optional: true, messages: DATE_MESSAGES },
	warehouse_id: { type: "string", pattern: /^[1-9][0-9]{0,17}$/, optional: true, messages: POSITIVE },
	logistic_id: { type: "string", pattern: /^[1-9][0-9]{0,8}$/, optional: true, messages: POSITIVE },
	status: {
		type: "enum",
		values: [...PICKUP_STATUSES],
		optional: true,
		messages: { enumValue: `must be one of ${PICKUP_STATUSES.join(", ")}` },
	},
	cursor: { type: "string", optional: true, max: 2048 },
} as const satisfies ValidationSchema;

/** A pickup request (lib/contracts/warehouses.ts `PickupView`). */
const PICKUP: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: [
		"id",
		"warehouse_id",
		"logistic_id",
		"courier_name",
		"pickup_date",
		"slot",
		"expected_package_count",
		"status",
		"courier_pickup_id",
		"courier_note",
		"source",
		"shipments_picked_up",
		"picked_up_at",
		"missed_at",
		"cancelled_at",
		"created_at",
		"updated_at",
	],
	properties: {
		id: int("the pickup request"),
		warehouse_id: int("the warehouse collected from"),
		logistic_id: int("the courier"),
		courier_name: str("the courier's name"),
		pickup_date: str("the day (IST)", { format: "date" }),
		slot: { type: "string", enum: [...PICKUP_SLOTS], description: "the time window (IST)" },
		expected_package_count: int("parcels announced to the courier"),
		status: {
			type: "string",
			enum: [...PICKUP_STATUSES],
			description:
				"`requested` (stored; the courier has not confirmed it yet and is asked again), `scheduled` (the courier confirmed it), `picked_up` (a shipment from this warehouse with this courier got its pickup scan that day), `missed` (the day ended without one; webhook `pickup.missed`), `cancelled`",
		},
		courier_pickup_id: nullableStr("the courier's reference; null until it confirmed"),
		courier_note: nullableStr(
			"what the courier said or could not be asked (e.g. a courier with no cancellation call); null when nothing",
		),
		source: {
			type: "string",
			enum: ["api", "manifest"],
			description: "`api` (POST /v1/pickups) or `manifest` (asked for by POST /v1/documents/manifest)",
		},
		shipments_picked_up: int("shipments scanned as picked up that day"),
		picked_up_at: utc("the first pickup scan", true),
		missed_at: utc("when it was found missed", true),
		cancelled_at: utc("when it was cancelled", true),
		created_at: utc("when it was asked for"),
		updated_at: utc("its last change"),
	},
};

const PICKUP_ID = { id: { description: "the pickup request id", schema: ID_PATH_SCHEMA } };
/** Access of the writes: capability `warehouses.write`; read-only roles are refused. */
const WRITE = { writes: true, capability: "warehouses.write" } as const;

const DATE_ERROR: RouteError = {
	code: "invalid_pickup_date",
	extra: { next_pickup_date: str("the first day that can be asked for (IST)", { format: "date" }) },
};
const EXISTS_ERROR: RouteError = { code: "pickup_exists", extra: { pickup: PICKUP } };
const NOT_CHANGEABLE: RouteError = {
	code: "pickup_not_changeable",
	extra: { status: { type: "string", enum: [...PICKUP_STATUSES] } },
};

const DAY_RULES = `The day (IST) must be today or one of the next ${PICKUP_MAX_DAYS_AHEAD} days, a week day the courier collects on (Monday–Saturday for most), not a national holiday nor one of the warehouse's state, and not today once the courier's cut-off has passed (14:00 IST for surface couriers, 15:00 for air; \`GET /v1/shipping/edd\` names the next pickup day). Slots: ${PICKUP_SLOTS.join(", ")} (IST); today's must not have begun.`;

export const PICKUPS_ROUTES = defineRoutes({
	"warehouses.createPickup": {
		route: "POST /v1/pickups",
		access: WRITE,
		tag: "warehouses",
		operationId: "pickups_create",
		summary: "Ask a courier to collect at a warehouse",
		description: `Ours (issue 28; docs/decisions/0107-pickup-requests.md). Asks courier \`logistic_id\` to collect \`expected_package_count\` parcels at your warehouse \`warehouse_id\` on \`pickup_date\` (default: the courier's next pickup day) in \`slot\` (default: the first not begun). ${DAY_RULES} The request is stored before the courier is asked: \`scheduled\` when the courier confirmed it (\`courier_pickup_id\`), \`requested\` when it could not be reached (it is asked again within minutes). One live request per warehouse, courier and day. Capability \`warehouses.write\`; read-only roles are refused.`,
		body: PICKUP_CREATE_BODY,
		bodyNotes: {
			descriptions: {
				warehouse_id: "one of your active warehouses",
				logistic_id: "an active courier (GET /v1/shipping/couriers)",
				pickup_date: "IST day; default the courier's next pickup day",
				slot: "IST time window; default the first not begun",
				expected_package_count: `parcels to collect, 1–${PICKUP_MAX_PACKAGES}`,
			},
		},
		responses: { "201": json("The request, scheduled (or requested).", PICKUP) },
		errors: [
			"validation_failed",
			{ code: "invalid_pickup_address", when: "`warehouse_id` is not one of your active warehouses" },
			{ code: "unknown_logistic", when: "`logistic_id` is not an active forward courier" },
			DATE_ERROR,
			EXISTS_ERROR,
			{ code: "pickup_failed", when: "the courier refused (its words); nothing stored" },
			"service_unavailable",
		],
	},
	"warehouses.pickups": {
		route: "GET /v1/pickups",
		access: { auth: true },
		tag: "warehouses",
		operationId: "pickups_list",
		summary: "Your pickup requests",
		description: `Ours (docs/decisions/0107-pickup-requests.md): newest request first, cursor-paged (default ${PICKUPS_DEFAULT_LIMIT}, at most ${PICKUPS_MAX_LIMIT}); filters: the pickup day range, warehouse, courier, status. Any authenticated role.`,
		query: PICKUPS_QUERY,
		queryNotes: {
			limit: `page size (default ${PICKUPS_DEFAULT_LIMIT})`,
			from: "pickup day on or after (IST)",
			to: "pickup day on or before (IST)",
			warehouse_id: "only this warehouse",
			logistic_id: "only this courier",
			status: "only this status",
			cursor: "a `nextCursor` of this route with the same filters",
		},
		responses: {
			"200": json("A page of requests.", {
				type: "object",
				additionalProperties: false,
				required: ["data", "pagination"],
				properties: { data: { type: "array", items: PICKUP }, pagination: PAGINATION },
			}),
		},
		errors: [
			{ code: "validation_failed", when: "a filter malformed, or `to` before `from`" },
			"cursor: unrecognised shape",
		],
	},
	"warehouses.pickup": {
		route: "GET /v1/pickups/:id",
		access: { auth: true },
		tag: "warehouses",
		operationId: "pickups_get",
		summary: "A pickup request",
		description:
			"Ours (docs/decisions/0107-pickup-requests.md): the request, its status and the courier's reference. Any authenticated role.",
		path: PICKUP_ID,
		responses: { "200": json("The request.", PICKUP) },
		errors: ["pickup_not_found"],
	},
	"warehouses.changePickup": {
		route: "PATCH /v1/pickups/:id",
		access: WRITE,
		tag: "warehouses",
		operationId: "pickups_change",
		summary: "Reschedule a pickup request",
		description: `Ours (docs/decisions/0107-pickup-requests.md): a new day, slot or parcel count for a \`requested\` or \`scheduled\` request, through the courier (a courier with no call to move a request, such as Delhivery, gets a new request for the new day and \`courier_note\` says the old one lapses; a new slot or count on the same day is then kept here only). ${DAY_RULES} Capability \`warehouses.write\`; read-only roles are refused.`,
		path: PICKUP_ID,
		body: PICKUP_CHANGE_BODY,
		responses: { "200": json("The request, changed.", PICKUP) },
		errors: [
			{ code: "validation_failed", when: "a field malformed, or `body: no updatable field`" },
			"pickup_not_found",
			{ code: "invalid_pickup_address", when: "its warehouse was deleted" },
			DATE_ERROR,
			NOT_CHANGEABLE,
			EXISTS_ERROR,
			{ code: "pickup_failed", when: "the courier refused the change (its words); nothing changed" },
			"pickup_unavailable",
		],
	},
	"warehouses.cancelPickup": {
		route: "POST /v1/pickups/:id/cancel",
		access: WRITE,
		tag: "warehouses",
		operationId: "pickups_cancel",
		summary: "Cancel a pickup request",
		description:
			"Ours (docs/decisions/0107-pickup-requests.md): cancels a `requested` or `scheduled` request through the courier (a courier with no cancellation call, such as Delhivery: recorded here, the request lapses at the courier when nothing is handed over; `courier_note` says so). A cancelled request answers unchanged. One already collected cannot be cancelled (409). Capability `warehouses.write`; read-only roles are refused. No body.",
		path: PICKUP_ID,
		responses: { "200": json("The request, cancelled.", PICKUP) },
		errors: [
			"pickup_not_found",
			{ ...NOT_CHANGEABLE, when: "already picked up or missed" } as RouteError,
			{ code: "pickup_failed", when: "the courier refused (its words); nothing changed" },
			"pickup_unavailable",
		],
	},
});
