/**
 * fastest-validator schemas → JSON Schema 2020-12 (the dialect of OpenAPI 3.1;
 * issue 11). The services validate their input with fastest-validator (lib/platform/validate.ts);
 * the OpenAPI document describes the same bodies and queries by converting
 * those very schemas, so the document cannot drift from the code.
 *
 * Conversion rules (fastest-validator 1.19, `considerNullAsAValue: false`, the
 * project's setting):
 * - object schemas (`{a: rule, $$strict}`) and `object` rules → `type: "object"`
 *   with `properties`; a property is `required` unless its rule is `optional`
 *   or has a `default`. `strict: true` → `additionalProperties: false`;
 *   `strict: "remove"` → unknown fields allowed (they are dropped) and said in
 *   the description; `minProps`/`maxProps` → `minProperties`/`maxProperties`.
 * - `optional` and `nullable` both accept `null` (fastest-validator skips
 *   null for an optional field) → the type list gains `"null"`.
 * - string: min/max/length → minLength/maxLength, pattern (RegExp or string)
 *   → pattern, enum, numeric/alpha/alphanum/alphadash/hex/base64/singleLine →
 *   patterns, `empty: false` → minLength 1; `trim`/`convert` noted in the
 *   description. email/url/uuid/date → string formats (`date` with
 *   `convert` also accepts epoch milliseconds).
 * - number: min/max/equal/positive/negative/integer → minimum/maximum/const/
 *   exclusiveMinimum/exclusiveMaximum/`type: "integer"`; `convert` noted.
 * - boolean, any, enum (values), equal (value → const), array (items,
 *   min/max/length/unique/enum/contains), tuple (→ prefixItems), record
 *   (→ additionalProperties/propertyNames), multi and rule lists (→ `anyOf`,
 *   or `oneOf` when every branch has a distinct JSON type), forbidden (the
 *   property is left out), shorthand strings (`"string|min:3|optional"`,
 *   `"number[]"`) and `$$type` objects.
 * - custom rules (`type: "custom"` or a `custom` check on another type) have
 *   no machine-readable shape: the result is the base type (none for a bare
 *   custom rule) plus a `description` saying a custom check applies; give the
 *   real shape with a `jsonSchema` key on the rule (fastest-validator ignores
 *   unknown rule keys) or with `opts.overrides` keyed by field path.
 * - `description` / `$$description` on a rule or schema is copied through;
 *   `jsonSchema` on a rule (or `$$jsonSchema` on an object schema) is merged
 *   over the generated schema (its keys win).
 */
import type { ValidationRule, ValidationSchema } from "fastest-validator";
import type { JsonSchema } from "./types";

/** Options of {@link fromValidator}. */
export interface FromValidatorOptions {
	/**
	 * JSON Schemas by field path (`"receiver.pincode"`, array items as
	 * `"items[]"`, the root as `""`): replace the generated schema of that
	 * field entirely (its `required`-ness still comes from the rule).
	 */
	overrides?: Record<string, JsonSchema>;
	/**
	 * Descriptions by field path, appended to the generated description
	 * (units, spec section) without restating the shape.
	 */
	descriptions?: Record<string, string>;
	/**
	 * How to read an object argument: `"schema"` (an object schema, as
	 * fastest-validator's `compile` reads it) or `"rule"` (one rule such as
	 * `{type: "object", props}`). Default: a rule when its `type` is a rule
	 * name (`"object"`, `"string"`, …), else a schema; pass `"schema"` for an
	 * object schema with a field named `type` written as a bare type name.
	 */
	kind?: "schema" | "rule";
}

/** A rule as written in a schema: object, shorthand string or list of alternatives. */
type Rule = ValidationRule | ValidationSchema | string;
/** A rule in object form (keys vary by type; read through narrow getters). */
type RuleObject = Record<string, unknown>;
/** JSON Schema under construction. */
type Out = Record<string, unknown>;

const STRING_PATTERNS: Record<string, string> = {
	numeric: "^-?[0-9]+(\\.[0-9]+)?$",
	alpha: "^[a-zA-Z]+$",
	alphanum: "^[a-zA-Z0-9]+$",
	alphadash: "^[a-zA-Z0-9_-]+$",
	hex: "^([0-9a-fA-F]{2})+$",
	base64: "^(?:[A-Za-z0-9+\\/]{4})*(?:[A-Za-z0-9+\\/]{2}==|[A-Za-z0-9+\\/]{3}=)?$",
	singleLine: "^[^\\r\\n]*$",
};

/**
 * Parses a fastest-validator shorthand (`"string|min:3|optional"`,
 * `"number[]"`, `"string|no-empty"`) into its object form, as
 * fastest-validator's own `parseShortHand` does.
 */
export function parseShorthand(str: string): RuleObject {
	const parts = str.split("|").map((s) => s.trim());
	const head = parts[0];
	const out: RuleObject = head.endsWith("[]") ? { type: "array", items: head.slice(0, -2) } : { type: head };
	for (const p of parts.slice(1)) {
		const idx = p.indexOf(":");
		if (idx !== -1) {
			const key = p.slice(0, idx).trim();
			const raw = p.slice(idx + 1).trim();
			out[key] =
				raw === "true" ? true : raw === "false" ? false : Number.isNaN(Number(raw)) ? raw : Number(raw);
		} else if (p.startsWith("no-")) out[p.slice(3)] = false;
		else out[p] = true;
	}
	return out;
}

function num(r: RuleObject, key: string): number | undefined {
	const v = r[key];
	return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

function str(r: RuleObject, key: string): string | undefined {
	const v = r[key];
	return typeof v === "string" ? v : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Normalises any rule form into an object rule (arrays → multi, `$$type` objects → object rules). */
function toRuleObject(rule: Rule): RuleObject {
	if (typeof rule === "string") return parseShorthand(rule);
	if (Array.isArray(rule)) {
		const rules = rule as Rule[];
		const objs = rules.map(toRuleObject);
		const out: RuleObject = { type: "multi", rules };
		if (objs.every((o) => o.optional === true)) out.optional = true;
		if (objs.every((o) => o.nullable === true)) out.nullable = true;
		return out;
	}
	const obj = rule as RuleObject;
	if (typeof obj.$$type === "string") {
		const base = parseShorthand(obj.$$type);
		const props: RuleObject = {};
		const meta: RuleObject = {};
		for (const [k, v] of Object.entries(obj)) {
			if (k === "$$type") continue;
			if (k.startsWith("$$")) meta[k.slice(2)] = v;
			else props[k] = v;
		}
		return { ...base, ...meta, props };
	}
	return obj;
}

function appendDescription(out: Out, text: string | undefined): void {
	if (!text) return;
	const prev = typeof out.description === "string" ? out.description : "";
	out.description = prev ? `${prev} ${text}` : text;
}

/** Adds `"null"` to the schema's accepted types (or wraps it in anyOf when it has none). */
function allowNull(s: Out): Out {
	const t = s.type;
	if (typeof t === "string") return t === "null" ? s : { ...s, type: [t, "null"] };
	if (Array.isArray(t)) return t.includes("null") ? s : { ...s, type: [...t, "null"] };
	if (Array.isArray(s.anyOf)) return { ...s, anyOf: [...s.anyOf, { type: "null" }] };
	if (Array.isArray(s.oneOf)) return { ...s, oneOf: [...s.oneOf, { type: "null" }] };
	if ("const" in s) return { ...s, const: undefined, enum: [s.const, null] };
	if (Array.isArray(s.enum)) return s.enum.includes(null) ? s : { ...s, enum: [...s.enum, null] };
	if (Object.keys(s).every((k) => k === "description" || k === "default")) return s; // accepts anything
	const { description, ...rest } = s;
	return description === undefined
		? { anyOf: [rest, { type: "null" }] }
		: { description, anyOf: [rest, { type: "null" }] };
}

function patternSource(p: unknown): string | undefined {
	if (p instanceof RegExp) return p.source;
	return typeof p === "string" ? p : undefined;
}

function stringLike(r: RuleObject, out: Out): void {
	out.type = "string";
	const len = num(r, "length");
	if (len !== undefined) {
		out.minLength = len;
		out.maxLength = len;
	}
	const min = num(r, "min");
	const max = num(r, "max");
	if (min !== undefined) out.minLength = min;
	if (max !== undefined) out.maxLength = max;
	if (r.empty === false && (out.minLength === undefined || (out.minLength as number) < 1)) out.minLength = 1;
	const patterns: string[] = [];
	const p = patternSource(r.pattern);
	if (p !== undefined) patterns.push(p);
	for (const [flag, pat] of Object.entries(STRING_PATTERNS)) if (r[flag] === true) patterns.push(pat);
	if (patterns.length === 1) out.pattern = patterns[0];
	else if (patterns.length > 1) out.allOf = patterns.map((pattern) => ({ pattern }));
	const contains = str(r, "contains");
	if (contains !== undefined) appendDescription(out, `Must contain \`${contains}\`.`);
	if (Array.isArray(r.enum)) out.enum = [...r.enum];
	const notes: string[] = [];
	if (r.trim === true || r.trimLeft === true || r.trimRight === true)
		notes.push("surrounding whitespace is trimmed before the checks");
	if (r.lowercase === true) notes.push("lower-cased");
	if (r.uppercase === true) notes.push("upper-cased");
	if (r.convert === true) notes.push("a non-string value is converted to its string form");
	if (notes.length) appendDescription(out, `Input: ${notes.join("; ")}.`);
}

function numberLike(r: RuleObject, out: Out): void {
	out.type = r.integer === true ? "integer" : "number";
	const min = num(r, "min");
	const max = num(r, "max");
	if (min !== undefined) out.minimum = min;
	if (max !== undefined) out.maximum = max;
	if (r.positive === true && (min === undefined || min <= 0)) {
		out.minimum = undefined;
		out.exclusiveMinimum = 0;
	}
	if (r.negative === true && (max === undefined || max >= 0)) {
		out.maximum = undefined;
		out.exclusiveMaximum = 0;
	}
	const eq = num(r, "equal");
	if (eq !== undefined) out.const = eq;
	const ne = num(r, "notEqual");
	if (ne !== undefined) out.not = { const: ne };
	if (r.convert === true) appendDescription(out, "Input: a numeric string is accepted and converted.");
}

function objectLike(r: RuleObject, path: string, opts: FromValidatorOptions): Out {
	const props = (isRecord(r.props) ? r.props : isRecord(r.properties) ? r.properties : undefined) as
		| Record<string, Rule>
		| undefined;
	const out: Out = { type: "object" };
	if (props) {
		const properties: Record<string, Out> = {};
		const required: string[] = [];
		for (const [name, sub] of Object.entries(props)) {
			if (name.startsWith("$$") || sub === undefined) continue;
			const subObj = toRuleObject(sub);
			if (subObj.type === "forbidden") continue;
			properties[name] = convert(subObj, path ? `${path}.${name}` : name, opts);
			if (subObj.optional !== true && subObj.default === undefined) required.push(name);
		}
		out.properties = properties;
		if (required.length) out.required = required;
	}
	const minP = num(r, "minProps");
	const maxP = num(r, "maxProps");
	if (minP !== undefined) out.minProperties = minP;
	if (maxP !== undefined) out.maxProperties = maxP;
	if (r.strict === true) out.additionalProperties = false;
	else if (r.strict === "remove") appendDescription(out, "Unknown fields are ignored (dropped).");
	return out;
}

/** JSON types a branch accepts, or undefined when it is not a plain typed schema. */
function typesOf(s: Out): string[] | undefined {
	if (typeof s.type === "string") return [s.type === "integer" ? "number" : s.type];
	if (Array.isArray(s.type)) return s.type.map((t) => (t === "integer" ? "number" : String(t)));
	return undefined;
}

function convert(r: RuleObject, path: string, opts: FromValidatorOptions): Out {
	const override = opts.overrides?.[path];
	let out: Out;
	if (override) out = { ...(override as Out) };
	else {
		out = {};
		const type = str(r, "type") ?? "any";
		switch (type) {
			case "string":
				stringLike(r, out);
				break;
			case "email":
				stringLike(r, out);
				out.format = "email";
				break;
			case "url":
				stringLike(r, out);
				out.format = "uri";
				break;
			case "uuid":
				stringLike(r, out);
				out.format = "uuid";
				break;
			case "objectID":
				stringLike(r, out);
				out.pattern = "^[0-9a-fA-F]{24}$";
				break;
			case "mac":
				stringLike(r, out);
				out.pattern = "^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{4}\\.){2}[0-9a-fA-F]{4}$";
				break;
			case "luhn":
				stringLike(r, out);
				appendDescription(out, "Must pass the Luhn checksum.");
				break;
			case "currency":
				stringLike(r, out);
				appendDescription(out, "A currency amount.");
				break;
			case "date":
				if (r.convert === true) {
					out.anyOf = [{ type: "string", format: "date-time" }, { type: "integer" }];
					appendDescription(out, "A date: ISO-8601 text or epoch milliseconds.");
				} else {
					out.type = "string";
					out.format = "date-time";
				}
				break;
			case "number":
				numberLike(r, out);
				break;
			case "boolean":
				out.type = "boolean";
				if (r.convert === true)
					appendDescription(out, 'Input: "true"/"false", "1"/"0", "on"/"off" and 1/0 are accepted.');
				break;
			case "enum":
				if (Array.isArray(r.values)) out.enum = [...r.values];
				break;
			case "equal":
				out.const = r.value;
				break;
			case "object":
				out = objectLike(r, path, opts);
				break;
			case "array": {
				out.type = "array";
				if (r.items !== undefined) out.items = convert(toRuleObject(r.items as Rule), `${path}[]`, opts);
				const len = num(r, "length");
				if (len !== undefined) {
					out.minItems = len;
					out.maxItems = len;
				}
				const min = num(r, "min");
				const max = num(r, "max");
				if (min !== undefined) out.minItems = min;
				if (max !== undefined) out.maxItems = max;
				if (r.empty === false && (out.minItems === undefined || (out.minItems as number) < 1))
					out.minItems = 1;
				if (r.unique === true) out.uniqueItems = true;
				if (Array.isArray(r.enum)) out.items = { ...((out.items as Out) ?? {}), enum: [...r.enum] };
				if (r.contains !== undefined) out.contains = { const: r.contains };
				break;
			}
			case "tuple":
				out.type = "array";
				if (Array.isArray(r.items)) {
					const items = r.items as Rule[];
					out.prefixItems = items.map((it, i) => convert(toRuleObject(it), `${path}[${i}]`, opts));
					out.minItems = items.length;
					out.maxItems = items.length;
				}
				break;
			case "record": {
				out.type = "object";
				out.additionalProperties = convert(toRuleObject((r.value as Rule) ?? "any"), `${path}{}`, opts);
				if (r.key !== undefined) {
					const k = convert(toRuleObject(r.key as Rule), `${path}{key}`, opts);
					const { type: _t, ...names } = k;
					if (Object.keys(names).length) out.propertyNames = names;
				}
				break;
			}
			case "multi": {
				const rules = (Array.isArray(r.rules) ? r.rules : []) as Rule[];
				const branches = rules.map((b, i) =>
					convert(toRuleObject(b), rules.length > 1 ? `${path}|${i}` : path, opts),
				);
				const types = branches.map(typesOf);
				const flat = types.flatMap((t) => t ?? []);
				const disjoint = types.every((t) => t !== undefined) && new Set(flat).size === flat.length;
				if (branches.length === 1) out = branches[0];
				else out[disjoint ? "oneOf" : "anyOf"] = branches;
				break;
			}
			case "custom":
				break;
			case "forbidden":
				out.not = {};
				break;
			case "class":
			case "function":
				appendDescription(out, `A ${type} value (not representable in JSON).`);
				break;
			default:
				// "any" and unknown (plugin) types: no constraint
				if (type !== "any") appendDescription(out, `Checked by the \`${type}\` rule.`);
		}
		const hasCustom = type === "custom" || r.custom !== undefined || r.check !== undefined;
		const js = isRecord(r.jsonSchema) ? r.jsonSchema : isRecord(r.$$jsonSchema) ? r.$$jsonSchema : undefined;
		if (js) out = { ...out, ...js };
		else if (hasCustom) appendDescription(out, "A custom check applies (see the field's rules).");
	}
	const desc = str(r, "description") ?? str(r, "$$description");
	if (desc && !(override && typeof override.description === "string")) {
		// the rule's own description goes first, generated notes after it
		const generated = typeof out.description === "string" ? out.description : "";
		out.description = generated && !generated.includes(desc) ? `${desc} ${generated}` : desc;
	}
	appendDescription(out, opts.descriptions?.[path]);
	if (r.default !== undefined && typeof r.default !== "function") out.default = r.default;
	if (r.optional === true || r.nullable === true) out = allowNull(out);
	for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
	return out;
}

/**
 * Converts a fastest-validator schema (an object schema `{field: rule, $$strict}`,
 * a `$$root` rule, or a single rule — object, shorthand string or list of
 * alternatives) into a JSON Schema 2020-12 object for the OpenAPI document.
 *
 * Pure: the input is not mutated (fastest-validator's `compile` mutates its
 * argument, so convert before or after compiling, both work). See the module
 * comment for the mapping; `opts.overrides` replaces the schema of a field by
 * path and `opts.descriptions` appends text (units, spec section) to it.
 *
 * @throws Error when `schema` is not an object, string or array.
 */
export function fromValidator(
	schema: ValidationSchema | ValidationRule,
	opts: FromValidatorOptions = {},
): JsonSchema {
	if (schema === null || (typeof schema !== "object" && typeof schema !== "string"))
		throw new Error("fromValidator: a schema must be an object, a shorthand string or a list of rules");
	let root: RuleObject;
	if (typeof schema === "string" || Array.isArray(schema)) root = toRuleObject(schema as Rule);
	else {
		const obj = schema as RuleObject;
		if (obj.$$root === true) {
			const { $$root: _r, ...rule } = obj;
			root = toRuleObject(rule as Rule);
		} else if (opts.kind === "rule" || (opts.kind === undefined && isRuleType(obj)))
			root = toRuleObject(obj as Rule);
		else
			root = {
				type: "object",
				strict: obj.$$strict,
				props: obj,
				description: obj.$$description,
				jsonSchema: obj.$$jsonSchema,
			};
	}
	return convert(root, "", opts) as JsonSchema;
}

const RULE_TYPES = new Set([
	"any",
	"array",
	"boolean",
	"class",
	"currency",
	"custom",
	"date",
	"email",
	"enum",
	"equal",
	"forbidden",
	"function",
	"luhn",
	"mac",
	"multi",
	"number",
	"object",
	"objectID",
	"record",
	"string",
	"tuple",
	"url",
	"uuid",
]);

/**
 * True when `obj` is a single rule (`{type: "object", props}`) rather than an
 * object schema that happens to have a field named `type` whose rule is a
 * shorthand string (`{type: "string|optional"}` is a schema with a `type` field).
 */
function isRuleType(obj: RuleObject): boolean {
	return typeof obj.type === "string" && RULE_TYPES.has(obj.type);
}
