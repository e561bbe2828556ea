/**
 * The HTTP routes of the `warehouses` service (spec §2.9, §3 last paragraph,
 * §4.5, §7, §8; docs/decisions/0006-warehouses.md): list, create, update,
 * soft delete. One definition each (issue 26; lib/platform/openapi/route.ts,
 * docs/ARCHITECTURE.md §9).
 *
 * The input rules live here, as part of the contract: the field lists and
 * the fastest-validator rule of each field ({@link ruleFor}), which
 * lib/warehouses/validation.ts compiles and the body schemas below convert
 * (`fromValidator`); the two booleans `is_return_same` / `is_default` and
 * the return-leg rule (required unless `is_return_same`) are checked by hand
 * there and described by hand here.
 */
import type { ValidationRuleObject, ValidationSchema } from "fastest-validator";
import { ID_PATH_SCHEMA, json, queryParam } from "../../platform/openapi/components";
import { int, nullableStr, str, utc } from "../../platform/openapi/helpers";
import { defineRoutes } from "../../platform/openapi/route";
import { fromValidator } from "../../platform/openapi/schema";
import type { JsonSchema } from "../../platform/openapi/types";
import { hasControlChars, PHONE_10_DIGITS, PINCODE_FORMAT } from "../../shared/fields";
import { WAREHOUSE_TYPES } from "../common";
import { WAREHOUSE_COLUMNS } from "../warehouses";

// ---------------------------------------------------------------------------
// Input rules (compiled by lib/warehouses/validation.ts)
// ---------------------------------------------------------------------------

/** Forward fields a create requires (spec §2.9). */
export const FORWARD_REQUIRED = [
	"warehouse_name",
	"contact_person_name",
	"contact_no",
	"address_line_1",
	"city",
	"state",
	"pincode",
] as const;
/** Forward fields that may be absent, null or empty. */
export const FORWARD_OPTIONAL = ["contact_email", "address_line_2", "gstin"] as const;
/** Return-leg fields required unless `is_return_same` (spec §2.9). */
export const RETURN_REQUIRED = [
	"return_warehouse_name",
	"return_contact_person_name",
	"return_contact_no",
	"return_address_line_1",
	"return_city",
	"return_state",
	"return_pincode",
] as const;
/** Return-leg fields that may be absent. */
export const RETURN_OPTIONAL = ["return_contact_email", "return_address_line_2"] as const;

/** The `details` messages of the field rules (spec §7 `validation_failed`). */
const BASE_MESSAGES = {
	required: "is required",
	string: "must be a string",
	stringEmpty: "is required",
	stringMin: "must be at least {expected} characters",
	stringMax: "must be at most {expected} characters",
	email: "must be a valid email address",
	emailEmpty: "is required",
	emailMax: "must be at most {expected} characters",
	enumValue: `must be one of ${WAREHOUSE_TYPES.join(", ")}`,
	controlChars: "must not contain control characters",
};

/** fastest-validator `custom` check of text fields: no control characters (after the rule's trim). */
function noControlChars(value: unknown, errors: Array<{ type: string }>): unknown {
	if (typeof value === "string" && hasControlChars(value)) errors.push({ type: "controlChars" });
	return value;
}

const GSTIN = /^[0-9]{2}[A-Z]{5}[0-9]{4}[A-Z][1-9A-Z]Z[0-9A-Z]$/;

/** fastest-validator rule of one base field (without the `return_` prefix). */
export function ruleFor(base: string, optional: boolean): ValidationRuleObject {
	const text = (min: number, max: number): ValidationRuleObject => ({
		type: "string",
		trim: true,
		empty: false,
		min,
		max,
		optional,
		nullable: optional,
		custom: noControlChars,
		messages: BASE_MESSAGES,
	});
	const digits = (pattern: RegExp, message: string): ValidationRuleObject => ({
		type: "string",
		trim: true,
		empty: false,
		pattern,
		optional,
		messages: { ...BASE_MESSAGES, stringPattern: message },
	});
	switch (base) {
		case "warehouse_name":
			return text(3, 191);
		case "contact_person_name":
			return text(3, 100);
		case "address_line_1":
			return text(10, 255);
		case "address_line_2":
			return text(1, 255);
		case "city":
		case "state":
			return text(1, 100);
		case "contact_no":
			return digits(PHONE_10_DIGITS, "must be 10 digits");
		case "pincode":
			return digits(PINCODE_FORMAT, "must be 6 digits");
		case "contact_email":
			return {
				type: "email",
				max: 191,
				optional,
				nullable: optional,
				custom: noControlChars,
				messages: BASE_MESSAGES,
			};
		case "gstin":
			return {
				type: "string",
				trim: true,
				pattern: GSTIN,
				optional,
				nullable: optional,
				messages: {
					...BASE_MESSAGES,
					stringPattern: "must be a valid GSTIN (15 characters, e.g. 27AAPFU0939F1ZV)",
				},
			};
		case "warehouse_type":
			return { type: "enum", values: [...WAREHOUSE_TYPES], optional, messages: BASE_MESSAGES };
		default:
			throw new Error(`no rule for ${base}`);
	}
}

// ---------------------------------------------------------------------------
// Documented shapes
// ---------------------------------------------------------------------------

/** Field name without the `return_` prefix (validation.ts `baseOf`). */
const baseOf = (field: string) => (field.startsWith("return_") ? field.slice("return_".length) : field);

/** Units / meaning per base field, appended to the generated descriptions. */
const NOTES: Record<string, string> = {
	warehouse_name: "Unique per account among non-retired warehouses, case-insensitive (spec §2.9, §8).",
	contact_person_name: "Who the courier asks for at pickup.",
	contact_no: "10-digit phone (a JSON number is read as its digits).",
	contact_email: "null or empty = none.",
	address_line_1: "Street address; couriers refuse sparse addresses (at least 10 characters).",
	address_line_2: "null or empty = none.",
	city: "City.",
	state: "State.",
	pincode: "Six digits; must exist in the India Post directory (else `pincode: not a known Indian pincode`).",
	gstin: "GSTIN, 15 characters; null or empty = none.",
	warehouse_type: "Default `fulfillment_pickup`.",
};

/**
 * The fastest-validator schema of the forward fields, rule by rule as
 * lib/warehouses/validation.ts compiles them (`checkFields`): on create the
 * forward required fields are required; on a patch every field is optional.
 */
function forwardRules(create: boolean): ValidationSchema {
	const schema: ValidationSchema = { $$strict: false };
	for (const f of FORWARD_REQUIRED) schema[f] = ruleFor(f, !create);
	for (const f of [...FORWARD_OPTIONAL, "warehouse_type"]) schema[f] = ruleFor(f, true);
	return schema;
}

/**
 * The rules of the return leg (`return_*`), applied only when
 * `is_return_same` is not true (required ones required on create).
 */
function returnRules(create: boolean): ValidationSchema {
	const schema: ValidationSchema = { $$strict: false };
	for (const f of RETURN_REQUIRED) schema[f] = ruleFor(baseOf(f), !create);
	for (const f of RETURN_OPTIONAL) schema[f] = ruleFor(baseOf(f), true);
	return schema;
}

/** Descriptions by field path for {@link fromValidator}. */
function notes(): Record<string, string> {
	const out: Record<string, string> = {};
	for (const f of [...FORWARD_REQUIRED, ...FORWARD_OPTIONAL, "warehouse_type"]) out[f] = NOTES[f] ?? "";
	for (const f of [...RETURN_REQUIRED, ...RETURN_OPTIONAL])
		out[f] = `Return leg (§2.9): as \`${baseOf(f)}\`.`;
	return out;
}

/**
 * A body schema: the forward rules, the hand-checked booleans, and the return
 * leg's rules under `else` (they apply when `is_return_same` is not true; when
 * it is, every `return_*` sent is ignored and the forward values are mirrored).
 */
function bodySchema(create: boolean, description: string, extra: Record<string, unknown> = {}): JsonSchema {
	const forward = fromValidator(forwardRules(create), { descriptions: notes() });
	const ret = fromValidator(returnRules(create), { descriptions: notes() });
	const retProps: Record<string, JsonSchema> = {};
	for (const f of [...RETURN_REQUIRED, ...RETURN_OPTIONAL])
		retProps[f] = {
			description: `Return leg's \`${baseOf(f)}\`: ignored when \`is_return_same\` is true; otherwise validated as in the \`else\` branch${create && (RETURN_REQUIRED as readonly string[]).includes(f) ? " and required" : ""}.`,
		};
	const schema: Record<string, unknown> = {
		...forward,
		description,
		properties: {
			...(forward.properties ?? {}),
			...retProps,
			is_return_same: {
				...LOOSE_BOOL,
				description:
					"Checked by hand (lib/shared/fields.ts `parseBool`). True: the return leg mirrors the forward address (any `return_*` sent is ignored). Absent counts as false on create (the return block is then required, messages prefixed `return_`); on a patch the stored value applies.",
			},
			is_default: {
				...LOOSE_BOOL,
				description:
					"Checked by hand. True makes this the account's default warehouse (the previous default is cleared); on a patch false on the default hands it to the oldest other active warehouse.",
			},
		},
		if: { required: ["is_return_same"], properties: { is_return_same: TRUTHY } },
		else: ret,
		...extra,
	};
	return schema as JsonSchema;
}

/** The legacy booleans (lib/shared/fields.ts `parseBool`): true/false, 1/0, "true"/"false", "1"/"0". */
const LOOSE_BOOL: JsonSchema = {
	oneOf: [
		{ type: "boolean" },
		{ type: "integer", enum: [0, 1] },
		{ type: "string", pattern: "^\\s*([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|[01])\\s*$" },
	],
};
/** `is_return_same` given as truthy. */
const TRUTHY: JsonSchema = {
	oneOf: [{ const: true }, { const: 1 }, { type: "string", pattern: "^\\s*([Tt][Rr][Uu][Ee]|1)\\s*$" }],
};

const CREATE_BODY = bodySchema(
	true,
	"Spec §2.9 input (every rule in lib/warehouses/validation.ts). Unknown keys (`sender_id` too) are ignored. Failures come back together, one `details` entry per field.",
);

const PATCH_BODY = bodySchema(
	false,
	"Any subset of the create fields plus `is_default` (docs/decisions/0006-warehouses.md); `null` clears an optional field (a required one cannot be cleared). The resulting record must be valid as on create: with `is_return_same` false (sent or stored) the stored-plus-sent return block must be complete. A body naming no updatable field is 400 `body: no updatable field`.",
	{ minProperties: 1 },
);

/** The §2.9 row of `GET /v1/warehouses` and `PATCH /v1/warehouses/{id}` (lib/contracts/warehouses.ts `WarehouseView`). */
const WAREHOUSE_ROW: JsonSchema = {
	type: "object",
	additionalProperties: false,
	// the row's fields: the stored warehouse fields in their order (lib/warehouses/rows.ts), then the read-side ones
	required: [
		"id",
		...WAREHOUSE_COLUMNS,
		"active",
		"retired",
		"is_default",
		"warehouse_code",
		"courier_registered",
		"courier_registrations",
		"shipped_30d",
		"created_at",
		"updated_at",
	],
	properties: {
		id: int("the warehouse id (`pickup_address_id` of orders)"),
		warehouse_name: str("name, 3–191 characters"),
		contact_person_name: str("contact person"),
		contact_no: str("10-digit phone", { pattern: "^\\d{10}$" }),
		contact_email: nullableStr("e-mail, or null"),
		address_line_1: str("street address"),
		address_line_2: nullableStr("second line, or null"),
		city: str("city"),
		state: str("state"),
		pincode: str("six digits", { pattern: "^\\d{6}$" }),
		gstin: nullableStr("GSTIN, or null"),
		warehouse_type: { type: "string", enum: [...WAREHOUSE_TYPES] },
		is_return_same: { type: "boolean", description: "the return leg mirrors the forward address" },
		return_warehouse_name: nullableStr(
			"return leg: business name (required on input when `is_return_same` is false; the forward name when it is true)",
		),
		return_contact_person_name: nullableStr("return leg: contact person (filled once validated)"),
		return_contact_no: nullableStr("return leg: 10-digit phone (filled once validated)"),
		return_contact_email: nullableStr("return leg: e-mail, or null"),
		return_address_line_1: nullableStr("return leg: street address (filled once validated)"),
		return_address_line_2: nullableStr("return leg: second line, or null"),
		return_city: nullableStr("return leg: city (filled once validated)"),
		return_state: nullableStr("return leg: state (filled once validated)"),
		return_pincode: nullableStr("return leg: six digits (filled once validated)"),
		active: { type: "boolean", description: "usable for new orders" },
		retired: { type: "boolean", description: "soft-deleted (listed only with `include=inactive`)" },
		is_default: { type: "boolean", description: "the account's default warehouse (exactly one)" },
		warehouse_code: str("`WH<sender_id>-<id>`: the pickup location name couriers know", {
			pattern: "^WH[0-9]+-[0-9]+$",
		}),
		courier_registered: {
			type: "boolean",
			description: "registered with every active courier for the current version of the address",
		},
		courier_registrations: {
			type: "array",
			description: "each courier's registration of the current version",
			items: {
				type: "object",
				additionalProperties: false,
				required: ["logistic_id", "status", "reason"],
				properties: {
					logistic_id: int("the courier"),
					logistic_name: str("its display name (absent when the courier list was unavailable)"),
					status: {
						type: "string",
						enum: ["pending", "registered", "refused"],
						description: "`pending` until the courier answered for the current version",
					},
					reason: nullableStr("the courier's words when refused (or the last transient error while pending)"),
				},
			},
		},
		shipped_30d: {
			type: ["integer", "null"],
			minimum: 0,
			description:
				"orders shipped from it in the last 30 days; null when the order service cannot be reached (never invented)",
		},
		created_at: utc("created"),
		updated_at: utc("last changed"),
	},
};

/** The `{data: …}` answer around `schema` (no other member). */
function dataOf(schema: JsonSchema): JsonSchema {
	return { type: "object", additionalProperties: false, required: ["data"], properties: { data: schema } };
}

/** The warehouse id in the path. */
const ID_PATH = {
	id: {
		description:
			"the warehouse id; anything but a positive integer answers 404 `not_found` (as a missing one)",
		schema: ID_PATH_SCHEMA,
	},
};

/** Who may change warehouses (spec §5 rules 1–2). */
const WRITE = { writes: true, capability: "warehouses.write" } as const;

/** The 400 of a create or a change: every failing field at once. */
const VALIDATION = {
	code: "validation_failed",
	when: "with `details`, one `field: reason` per failing field (spec §7; return-leg messages prefixed `return_`; `warehouse_name: already exists` for a duplicate name; `pincode: not a known Indian pincode`).",
} as const;

// ---------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------

/** The warehouse routes, keyed by the action that answers each. */
export const WAREHOUSES_ROUTES = defineRoutes({
	"warehouses.list": {
		route: "GET /v1/warehouses",
		access: { auth: true },
		tag: "warehouses",
		operationId: "warehouses_list",
		summary: "List the account's warehouses",
		description:
			"Spec §4.5, §2.9: the caller's warehouses, the default first, then the newest first, with courier registration state and 30-day volume. Any authenticated role.",
		queryParams: [
			queryParam(
				"include",
				"comma-separated options: `inactive` also lists retired (soft-deleted) rows; other values are ignored",
				{ type: "string" },
			),
		],
		responses: {
			"200": json("The warehouses.", dataOf({ type: "array", items: WAREHOUSE_ROW })),
		},
	},
	"warehouses.create": {
		route: "POST /v1/warehouses",
		access: WRITE,
		tag: "warehouses",
		operationId: "warehouses_create",
		summary: "Create a warehouse",
		description:
			"Spec §4.5, §2.9: adds a pickup warehouse and registers it with every active courier. The account's first warehouse, or one sent with `is_default: true`, becomes the default. Orders that arrived before any warehouse existed are adopted (`orders_repaired`). Capability `warehouses.write`; read-only roles are refused.",
		bodySchema: CREATE_BODY,
		responses: {
			"201": json(
				"Created (committed before the answer).",
				dataOf({
					type: "object",
					additionalProperties: false,
					required: ["id", "orders_repaired"],
					properties: {
						id: int("the new warehouse id"),
						orders_repaired: int(
							"orders without a warehouse adopted by this one (0 when the order service could not be reached)",
							{ minimum: 0 },
						),
					},
				}),
			),
		},
		errors: [VALIDATION],
	},
	"warehouses.update": {
		route: "PATCH /v1/warehouses/:id",
		access: WRITE,
		tag: "warehouses",
		operationId: "warehouses_update",
		summary: "Change a warehouse",
		description:
			'Spec §4.5 ("payload and response: not shown"; docs/decisions/0006-warehouses.md): changes any subset of the fields. `is_default: true` makes it the default; `false` on the default hands it to the oldest other active warehouse. A change a courier sees re-registers the address with every courier. Capability `warehouses.write`; read-only roles are refused.',
		path: ID_PATH,
		bodySchema: PATCH_BODY,
		responses: {
			"200": json("The changed row, as listed.", dataOf(WAREHOUSE_ROW)),
		},
		errors: [
			{ ...VALIDATION, when: `${VALIDATION.when} \`body: no updatable field\` for a body naming none.` },
			{
				code: "not_found",
				when: "not a positive integer id, missing, another account's or retired (spec §1 rule 4).",
			},
		],
	},
	"warehouses.remove": {
		route: "DELETE /v1/warehouses/:id",
		access: WRITE,
		tag: "warehouses",
		operationId: "warehouses_remove",
		summary: "Delete (retire) a warehouse",
		description:
			"Spec §4.5, §3: soft delete (`active` false, `retired` true) when no open order ships from it; a deleted default hands the default to the oldest remaining active warehouse. Listing with `include=inactive` still shows it. Capability `warehouses.write`; read-only roles are refused.",
		path: ID_PATH,
		responses: {
			"200": json(
				"Retired.",
				dataOf({
					type: "object",
					additionalProperties: false,
					required: ["id", "deleted"],
					properties: { id: int("the warehouse id"), deleted: { const: 1 } },
				}),
			),
		},
		errors: [
			{
				code: "not_found",
				when: "not a positive integer id, missing, another account's or already deleted (spec §7).",
			},
			{
				code: "warehouse_in_use",
				when: "open orders still ship from it; nothing changed (spec §7, §8).",
				extra: {
					count: int("open orders shipping from it", { minimum: 1 }),
					unshipped: int("of which not shipped yet", { minimum: 0 }),
					awaiting_pickup: int("of which booked and awaiting pickup", { minimum: 0 }),
					order_ids: {
						type: "array",
						maxItems: 20,
						items: { type: "integer" },
						description: "up to 20 of them",
					},
				},
			},
			{
				code: "service_unavailable",
				when: "the order service cannot be asked about open orders; nothing deleted, retry.",
			},
		],
	},
});
