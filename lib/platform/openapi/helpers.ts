/**
 * Building blocks of the OpenAPI 3.1 operations every route definition uses
 * (issue 11, issue 26): the responses of a bearer route and the gateway
 * codes merged into them, error responses with extra members, query
 * parameters from a converted validator schema, and short schema builders
 * (integers, strings, rupees, UTC timestamps, ids, the §2.12 pagination block).
 */
import { errors, json, queryParam, ref } from "./components";
import type { JsonSchema, Parameter, Response } from "./types";

/** Bearer JWT security requirement (spec §5). */
export const BEARER = [{ bearer: [] }];

/** How a route is reached, for the answers the gateway itself makes ({@link bearerResponses}). */
export interface RouteTraits {
	/** takes a JSON body (gateway: 400 `invalid_json`/`invalid_body`, 413, 415) */
	body?: boolean;
	/** access rule `writes` (403 `Read-only role`) */
	writes?: boolean;
	/** access rule capability (403 `forbidden` with `cap`) */
	capability?: string;
	/** has a path parameter (gateway: 400 `bad_request` for an undecodable one) */
	pathParams?: boolean;
	/**
	 * `/v1/documents/*` (spec §7 exception): the gateway's own 400/404 answers
	 * are `{message}` ({@link ref} `DocumentsError`), not the §2.11 envelope
	 */
	documents?: boolean;
}

/** `r`'s description with `text` appended (or `text` alone). */
function also(r: Response | undefined, text: string): string {
	if (!r) return text;
	const own = r.description.trimEnd();
	return `${/[.!?)`]$/.test(own) ? own : `${own}.`} ${text}`;
}

/** A §2.11 error response, or a `{message}` one (documents' 400/404). */
function errorResponse(status: string, text: string, documents: boolean): Response {
	return documents && (status === "400" || status === "404")
		? json(text, ref("DocumentsError"))
		: errors({ [status]: text })[status];
}

/**
 * The responses of a bearer route: its own `ok` answers and `own` errors (a
 * text becomes a §2.11 envelope response — for `traits.documents` a 400/404
 * becomes `DocumentsError`; or give a full Response), plus the 403s of its
 * access rule (spec §5 rules 1–2) and the gateway's own codes merged into a
 * status the route documents itself (400 `invalid_json` / `invalid_body` for
 * JSON bodies, 400 `bad_request` for an undecodable path parameter, 503
 * `service_unavailable`). Statuses the route does not document at all (401,
 * 429, 413, 415, 500, 503, and 400 for JSON bodies) are added by the document
 * builder from `GATEWAY_RESPONSES` (lib/openapi/index.ts).
 */
export function bearerResponses(
	ok: Record<string, Response>,
	own: Record<number, string | Response>,
	traits: RouteTraits = {},
): Record<string, Response> {
	const docs = traits.documents === true;
	const out: Record<string, Response> = { ...ok };
	for (const [status, v] of Object.entries(own))
		out[status] = typeof v === "string" ? errorResponse(status, v, docs) : v;
	const forbid: string[] = [];
	if (traits.writes)
		forbid.push("`Read-only role` (merchant_finance, merchant_support, merchant_staff; spec §5 rule 1)");
	if (traits.capability)
		forbid.push(
			`\`forbidden\` with \`cap: "${traits.capability}"\` (the role lacks the capability; spec §5 rule 2)`,
		);
	if (forbid.length) {
		const text = `${forbid.join("; ")}.`;
		out["403"] = out["403"]
			? { ...out["403"], description: also(out["403"], text) }
			: errorResponse("403", text, docs);
	}
	const gw400: string[] = [];
	if (traits.body)
		gw400.push(
			"gateway: `invalid_json` (the body is not JSON or not a JSON object), `invalid_body` (unreadable body)",
		);
	if (traits.pathParams) gw400.push("gateway: `bad_request` (an undecodable path parameter such as `%ZZ`)");
	if (gw400.length && (out["400"] || !traits.body)) {
		const text = `${gw400.join("; ")}.`;
		out["400"] = out["400"]
			? { ...out["400"], description: also(out["400"], text) }
			: errorResponse("400", text, docs);
	}
	if (out["503"]) {
		out["503"] = {
			...out["503"],
			description: also(
				out["503"],
				"`service_unavailable`: a service this route needs is unreachable; retry (gateway).",
			),
		};
	}
	return out;
}

/**
 * A §2.11 error response whose body also carries the documented extra
 * members `properties` (the envelope allows extra members; spec §7 "body says what").
 */
export function errorWith(description: string, properties: Record<string, JsonSchema>): Response {
	return json(description, { allOf: [ref("Error"), { type: "object", properties }] });
}

/** A query value is a string or absent, never null: drops `null` from a converted schema's types / enum. */
function withoutNull(s: JsonSchema): JsonSchema {
	const out: JsonSchema = { ...s };
	if (Array.isArray(out.type)) {
		const types = out.type.filter((t) => t !== "null");
		out.type = (types.length === 1 ? types[0] : types) as JsonSchema["type"];
	}
	if (Array.isArray(out.enum)) out.enum = out.enum.filter((v) => v !== null);
	return out;
}

/**
 * Query parameters from the properties of a converted validator schema
 * (`fromValidator`; `required` from its `required` list, `null` dropped as a
 * query value cannot be null). `notes` (units, defaults, spec section) go
 * before the generated description; `defaults` set the parameters' defaults.
 */
export function queryParamsOf(
	schema: JsonSchema,
	notes: Record<string, string> = {},
	defaults: Record<string, string | number> = {},
): Parameter[] {
	const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
	const required = new Set(schema.required ?? []);
	return Object.entries(props).map(([name, s]) => {
		const { description, ...rest } = withoutNull(s);
		const text = [notes[name], description].filter(Boolean).join(" ");
		const param = defaults[name] === undefined ? rest : { ...rest, default: defaults[name] };
		return queryParam(name, text, param, required.has(name));
	});
}

/** An integer schema with a description (and extra keywords). */
export const int = (description: string, extra: JsonSchema = {}): JsonSchema => ({
	type: "integer",
	description,
	...extra,
});
/** A string schema with a description (and extra keywords). */
export const str = (description: string, extra: JsonSchema = {}): JsonSchema => ({
	type: "string",
	description,
	...extra,
});
/** A string-or-null schema with a description. */
export const nullableStr = (description: string): JsonSchema => ({ type: ["string", "null"], description });
/** A money amount in rupees (at most 2 decimals; stored as paise). */
export const rupees = (description: string): JsonSchema => ({
	type: "number",
	description: `${description} Rupees (at most 2 decimals).`,
});
/** A UTC ISO-8601 timestamp, or null when `nullable`. */
export const utc = (description: string, nullable = false): JsonSchema => ({
	type: nullable ? ["string", "null"] : "string",
	format: "date-time",
	description: `${description} (UTC ISO-8601)`,
});

/**
 * A positive integer id as the hand-written parsers accept it in a body
 * (lib/shared/fields.ts `parsePositiveInt`, untrimmed): a JSON integer or a string
 * of digits (no sign, no spaces, no leading zero), at most 2^53 − 1.
 */
export const idInput = (description: string): JsonSchema => ({
	description: `${description} A JSON integer or a string of digits (no sign, no spaces, no leading zero), positive, at most 2^53 − 1.`,
	oneOf: [
		{ type: "integer", minimum: 1 },
		{ type: "string", pattern: "^[1-9][0-9]*$" },
	],
});

/** Cursor pagination block (spec §2.12, §4.8). */
export const PAGINATION: JsonSchema = {
	type: "object",
	additionalProperties: false,
	required: ["mode", "limit", "nextCursor"],
	description: "Spec §2.12, §4.8.",
	properties: {
		mode: { const: "cursor" },
		limit: int("the page size used", { minimum: 1, maximum: 1000 }),
		nextCursor: nullableStr("pass back as `cursor` for the next page; null on the last page"),
	},
};
