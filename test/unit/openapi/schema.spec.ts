/**
 * fastest-validator → JSON Schema 2020-12 (lib/platform/openapi/schema.ts, issue 11):
 * the mapping of each rule, and agreement: for schemas without custom checks
 * or conversions, ajv on the converted schema accepts exactly what
 * fastest-validator accepts.
 */
import assert from "node:assert/strict";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import Validator, { type ValidationRule, type ValidationSchema } from "fastest-validator";
import { fromValidator, parseShorthand } from "../../../lib/platform/openapi/schema";

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const fv = new Validator();

/** Same verdict from fastest-validator and from ajv on the converted schema, for every value. */
function agree(schema: ValidationSchema, values: unknown[]): void {
	const json = fromValidator(structuredClone(schema));
	const check = fv.compile(structuredClone(schema));
	const validate = ajv.compile(json);
	for (const v of values) {
		const fvOk = check(structuredClone(v)) === true;
		const ajvOk = validate(v) === true;
		assert.equal(
			ajvOk,
			fvOk,
			`value ${JSON.stringify(v)}: fastest-validator ${fvOk}, JSON Schema ${ajvOk}\n${JSON.stringify(json)}`,
		);
	}
}

describe("openapi: fromValidator", () => {
	it("converts an object schema: required unless optional, optional accepts null, $$strict → additionalProperties:false", () => {
		const s = fromValidator({
			$$strict: true,
			name: "string|min:3|max:10",
			nick: { type: "string", optional: true },
			age: { type: "number", integer: true, positive: true },
			tags: { type: "array", items: "string", min: 1, max: 3 },
		});
		assert.deepEqual(s, {
			type: "object",
			properties: {
				name: { type: "string", minLength: 3, maxLength: 10 },
				nick: { type: ["string", "null"] },
				age: { type: "integer", exclusiveMinimum: 0 },
				tags: { type: "array", items: { type: "string" }, minItems: 1, maxItems: 3 },
			},
			required: ["name", "age", "tags"],
			additionalProperties: false,
		});
	});

	it('strict "remove" leaves unknown fields allowed and says they are dropped', () => {
		const s = fromValidator({ $$strict: "remove", a: "string" });
		assert.equal(s.additionalProperties, undefined);
		assert.match(String(s.description), /ignored/);
	});

	it("string rules: length, pattern, enum, email, url, uuid, numeric, empty:false, trim noted", () => {
		assert.deepEqual(fromValidator("string|length:6"), { type: "string", minLength: 6, maxLength: 6 });
		assert.deepEqual(fromValidator({ type: "string", pattern: /^[1-9]\d{5}$/ }), {
			type: "string",
			pattern: "^[1-9]\\d{5}$",
		});
		assert.deepEqual(fromValidator({ type: "string", enum: ["a", "b"] }), {
			type: "string",
			enum: ["a", "b"],
		});
		assert.deepEqual(fromValidator({ type: "email", max: 191 }), {
			type: "string",
			maxLength: 191,
			format: "email",
		});
		assert.equal(fromValidator("url").format, "uri");
		assert.equal(fromValidator("uuid").format, "uuid");
		assert.equal(fromValidator({ type: "string", numeric: true }).pattern, "^-?[0-9]+(\\.[0-9]+)?$");
		assert.equal(fromValidator({ type: "string", empty: false }).minLength, 1);
		assert.match(String(fromValidator({ type: "string", trim: true }).description), /trimmed/);
	});

	it("number rules: min/max, positive/negative, integer, equal, convert noted", () => {
		assert.deepEqual(fromValidator({ type: "number", min: 0, max: 50 }), {
			type: "number",
			minimum: 0,
			maximum: 50,
		});
		assert.deepEqual(fromValidator({ type: "number", negative: true }), {
			type: "number",
			exclusiveMaximum: 0,
		});
		assert.deepEqual(fromValidator({ type: "number", equal: 3 }), { type: "number", const: 3 });
		assert.match(String(fromValidator({ type: "number", convert: true }).description), /numeric string/);
	});

	it("enum, equal, boolean, date, any, forbidden", () => {
		assert.deepEqual(fromValidator({ type: "enum", values: ["prepaid", "cod"] }), {
			enum: ["prepaid", "cod"],
		});
		assert.deepEqual(fromValidator({ type: "equal", value: "yes" }), { const: "yes" });
		assert.deepEqual(fromValidator("boolean"), { type: "boolean" });
		assert.deepEqual(fromValidator("date"), { type: "string", format: "date-time" });
		assert.deepEqual(fromValidator("any"), {});
		const s = fromValidator({ a: "string", secret: "forbidden" });
		assert.deepEqual(Object.keys(s.properties ?? {}), ["a"]);
	});

	it("nullable adds null to the type, and to enums and unions", () => {
		assert.deepEqual(fromValidator({ type: "number", nullable: true }), { type: ["number", "null"] });
		assert.deepEqual(fromValidator({ type: "enum", values: ["a"], optional: true }), { enum: ["a", null] });
		const multi = fromValidator({ $$root: true, type: "multi", rules: ["string", "number"], nullable: true });
		assert.deepEqual(multi, { oneOf: [{ type: "string" }, { type: "number" }, { type: "null" }] });
	});

	it("multi and rule lists → oneOf when the types are disjoint, anyOf otherwise", () => {
		assert.deepEqual(fromValidator({ a: ["string", "number"] }).properties?.a, {
			oneOf: [{ type: "string" }, { type: "number" }],
		});
		assert.deepEqual(fromValidator({ a: ["string|min:3", "string|numeric"] }).properties?.a, {
			anyOf: [
				{ type: "string", minLength: 3 },
				{ type: "string", pattern: "^-?[0-9]+(\\.[0-9]+)?$" },
			],
		});
	});

	it("nested objects, $$type objects, arrays of objects, tuples and records", () => {
		const s = fromValidator({
			address: { $$type: "object|optional", city: "string", pin: "string|length:6" },
			items: { type: "array", items: { type: "object", strict: true, props: { sku: "string" } } },
			pair: { type: "tuple", items: ["string", "number"] },
			counts: { type: "record", key: { type: "string", alpha: true }, value: "number" },
		});
		assert.deepEqual(s.properties?.address, {
			type: ["object", "null"],
			properties: { city: { type: "string" }, pin: { type: "string", minLength: 6, maxLength: 6 } },
			required: ["city", "pin"],
		});
		assert.deepEqual(s.properties?.items, {
			type: "array",
			items: {
				type: "object",
				properties: { sku: { type: "string" } },
				required: ["sku"],
				additionalProperties: false,
			},
		});
		assert.deepEqual(s.properties?.pair, {
			type: "array",
			prefixItems: [{ type: "string" }, { type: "number" }],
			minItems: 2,
			maxItems: 2,
		});
		assert.deepEqual(s.properties?.counts, {
			type: "object",
			additionalProperties: { type: "number" },
			propertyNames: { pattern: "^[a-zA-Z]+$" },
		});
		assert.deepEqual(s.required, ["items", "pair", "counts"]);
	});

	it("custom rules: the base type plus a description, or the rule's jsonSchema, or an override by path", () => {
		const check = (v: unknown) => v;
		const s = fromValidator(
			{
				pincode: { type: "custom", check, description: "6 digits (spec §2.1)" },
				weight: { type: "number", custom: check },
				mobile: { type: "custom", check, jsonSchema: { type: "string", pattern: "^[6-9]\\d{9}$" } },
				sku: { type: "custom", check, optional: true },
			},
			{ overrides: { sku: { type: "string", maxLength: 100 } }, descriptions: { weight: "kg" } },
		);
		const props = s.properties as Record<string, Record<string, unknown>>;
		assert.match(String(props.pincode.description), /^6 digits \(spec §2\.1\) A custom check applies/);
		assert.equal(props.pincode.type, undefined);
		assert.equal(props.weight.type, "number");
		assert.match(String(s.properties?.weight?.description), /custom check.*kg$/);
		assert.deepEqual(s.properties?.mobile, { type: "string", pattern: "^[6-9]\\d{9}$" });
		assert.deepEqual(s.properties?.sku, { type: ["string", "null"], maxLength: 100 });
		assert.deepEqual(s.required, ["pincode", "weight", "mobile"]);
	});

	it("description and $$description pass through; default makes a field not required", () => {
		const s = fromValidator({
			$$description: "A lane (spec §4.2).",
			weight: { type: "number", positive: true, description: "dead weight, kg" },
			mode: { type: "enum", values: ["a", "b"], default: "a" },
		});
		assert.equal(s.description, "A lane (spec §4.2).");
		assert.equal(s.properties?.weight?.description, "dead weight, kg");
		assert.equal((s.properties as Record<string, Record<string, unknown>>).mode.default, "a");
		assert.deepEqual(s.required, ["weight"]);
	});

	it("a single rule, a $$root rule and kind:'schema' for a field named type", () => {
		assert.deepEqual(fromValidator({ type: "object", props: { a: "string" } }), {
			type: "object",
			properties: { a: { type: "string" } },
			required: ["a"],
		});
		assert.deepEqual(fromValidator({ $$root: true, type: "string", min: 2 }), {
			type: "string",
			minLength: 2,
		});
		const asSchema = fromValidator({ type: "string" }, { kind: "schema" });
		assert.deepEqual(asSchema, {
			type: "object",
			properties: { type: { type: "string" } },
			required: ["type"],
		});
	});

	it("does not mutate its input (fastest-validator's compile does)", () => {
		const schema: ValidationSchema = { $$strict: true, a: { $$type: "object", b: "string" } };
		const before = JSON.stringify(schema);
		fromValidator(schema);
		assert.equal(JSON.stringify(schema), before);
	});

	it("parses shorthands like fastest-validator", () => {
		assert.deepEqual(parseShorthand("string|min:3|optional|no-empty"), {
			type: "string",
			min: 3,
			optional: true,
			empty: false,
		});
		assert.deepEqual(parseShorthand("number[]"), { type: "array", items: "number" });
	});

	it("refuses what is not a schema", () => {
		assert.throws(() => fromValidator(42 as unknown as ValidationRule), /schema must be/);
	});

	describe("agreement with fastest-validator", () => {
		it("objects: required, optional, null, strict", () => {
			agree({ $$strict: true, a: "string|min:2|max:4", b: { type: "number", optional: true, min: 0 } }, [
				{ a: "ab" },
				{ a: "abcd", b: 0 },
				{ a: "ab", b: null },
				{ a: "a" },
				{ a: "abcde" },
				{ b: 1 },
				{ a: "ab", b: -1 },
				{ a: "ab", c: 1 },
				{ a: 12 },
				null,
				[],
			]);
		});

		it("numbers, integers, enums, equal, booleans", () => {
			agree(
				{
					n: { type: "number", positive: true, max: 50 },
					i: { type: "number", integer: true, min: 1, optional: true },
					e: { type: "enum", values: ["prepaid", "cod"] },
					q: { type: "equal", value: 1, strict: true, optional: true },
					f: "boolean|optional",
				},
				[
					{ n: 1, e: "cod" },
					{ n: 50, e: "prepaid", i: 3, q: 1, f: true },
					{ n: 0, e: "cod" },
					{ n: 51, e: "cod" },
					{ n: 1, e: "other" },
					{ n: 1, e: "cod", i: 1.5 },
					{ n: 1, e: "cod", i: 0 },
					{ n: 1, e: "cod", q: 2 },
					{ n: 1, e: "cod", f: "yes" },
					{ n: "1", e: "cod" },
				],
			);
		});

		it("strings: length, pattern, enum, alphanum, email, url", () => {
			agree(
				{
					pin: { type: "string", pattern: /^[1-9]\d{5}$/ },
					code: { type: "string", alphanum: true, length: 3, optional: true },
					kind: { type: "string", enum: ["x", "y"], optional: true },
					mail: { type: "email", optional: true },
					site: { type: "url", optional: true },
				},
				[
					{ pin: "110001" },
					{ pin: "010001" },
					{ pin: "11000" },
					{ pin: "110001", code: "a1B" },
					{ pin: "110001", code: "a-1" },
					{ pin: "110001", code: "ab" },
					{ pin: "110001", kind: "z" },
					{ pin: "110001", mail: "ops@example.in" },
					{ pin: "110001", mail: "nope" },
					{ pin: "110001", site: "https://example.in/x" },
					{ pin: "110001", site: "example" },
				],
			);
		});

		it("arrays, nested objects and unions", () => {
			agree(
				{
					ids: { type: "array", items: "number|integer|positive", min: 1, max: 3 },
					addr: { type: "object", optional: true, strict: true, props: { city: "string" } },
					ref: ["string|min:1", "number|integer"],
				},
				[
					{ ids: [1], ref: "a" },
					{ ids: [1, 2, 3], ref: 7, addr: { city: "Pune" } },
					{ ids: [], ref: "a" },
					{ ids: [1, 2, 3, 4], ref: "a" },
					{ ids: [0], ref: "a" },
					{ ids: [1], ref: 1.5 },
					{ ids: [1], ref: "" },
					{ ids: [1], ref: "a", addr: { city: "Pune", pin: 1 } },
					{ ids: [1], ref: "a", addr: {} },
					{ ids: "1", ref: "a" },
				],
			);
		});
	});
});
