/**
 * JSON answers serialised by code compiled from the route definitions'
 * response schemas (issue 32; docs/decisions/0096-compiled-serializers.md):
 * fast-json-stringify (Fastify's) turns each documented JSON success answer
 * (`responses["2xx"].content["application/json"].schema` of
 * lib/contracts/http/*.ts, the `#/components/schemas/*` it refers to
 * included) into a function that writes exactly the documented fields, in
 * their order, with no reflection over the object: faster than
 * `JSON.stringify` on large answers (a page of 50 orders).
 *
 * Only closed schemas are compiled (every object `additionalProperties:
 * false` or with its properties listed), so an answer the contract check of
 * the test suite accepts serialises to the same JSON as `JSON.stringify`;
 * any other answer (errors, binary, undocumented statuses, schemas that do
 * not compile) keeps `JSON.stringify`. With `GATEWAY_SERIALIZER_CHECK=1` (the
 * test suite sets it) every compiled serialisation is compared with
 * `JSON.stringify`'s and a difference throws, so a divergence fails the test
 * that met it.
 */
import fastJson from "fast-json-stringify";
import type { OpenAPIV3_1 } from "openapi-types";
import type { RouteDefinition } from "../platform/openapi/route";

/** A compiled serialiser of one answer. */
type Serialize = (data: unknown) => string;

/** Serialisers by action, then by status. */
export type Serializers = Map<string, Map<number, Serialize>>;

/** The JSON schema of a documented answer, if it is JSON. */
function jsonSchemaOf(r: OpenAPIV3_1.ResponseObject | undefined): Record<string, unknown> | undefined {
	const schema = r?.content?.["application/json"]?.schema;
	return schema && typeof schema === "object" ? (schema as Record<string, unknown>) : undefined;
}

/**
 * Whether every object `schema` describes says what happens to properties it
 * does not list (`additionalProperties` false, true or a schema): then the
 * compiled serialiser writes what JSON.stringify writes. `$ref`s are followed
 * into `components` (once each).
 */
export function isClosed(
	schema: unknown,
	components: Record<string, unknown>,
	seen = new Set<string>(),
): boolean {
	if (!schema || typeof schema !== "object") return true;
	if (Array.isArray(schema)) return schema.every((s) => isClosed(s, components, seen));
	const s = schema as Record<string, unknown>;
	if (typeof s.$ref === "string") {
		const name = s.$ref.replace("#/components/schemas/", "");
		if (seen.has(name)) return true;
		seen.add(name);
		return isClosed(components[name], components, seen);
	}
	const isObject =
		s.type === "object" || (Array.isArray(s.type) && s.type.includes("object")) || "properties" in s;
	if (isObject && s.additionalProperties === undefined) return false;
	for (const key of ["properties", "patternProperties"])
		if (s[key] && !Object.values(s[key] as object).every((v) => isClosed(v, components, seen))) return false;
	for (const key of ["items", "additionalProperties", "oneOf", "anyOf", "allOf", "prefixItems", "not"])
		if (s[key] !== undefined && typeof s[key] === "object" && !isClosed(s[key], components, seen))
			return false;
	return true;
}

/**
 * The compiled serialisers of `routes` (success answers only), their
 * `#/components/schemas/*` references resolved against `components`.
 * A schema that does not compile is skipped (its answers keep JSON.stringify).
 */
export function compileSerializers(
	routes: Readonly<Record<string, RouteDefinition>>,
	components: Record<string, unknown>,
): Serializers {
	const out: Serializers = new Map();
	for (const [action, def] of Object.entries(routes)) {
		for (const [status, response] of Object.entries(def.responses)) {
			const code = Number(status);
			if (!(code >= 200 && code < 300)) continue;
			const schema = jsonSchemaOf(response);
			if (!schema || !isClosed(schema, components)) continue;
			try {
				const fn = fastJson({ ...schema, components: { schemas: components } } as never) as Serialize;
				const byStatus = out.get(action) ?? new Map<number, Serialize>();
				byStatus.set(code, fn);
				out.set(action, byStatus);
			} catch {
				// not compilable (a keyword fast-json-stringify does not support): JSON.stringify serves it
			}
		}
	}
	return out;
}

/**
 * The body of an answer: the compiled serialiser of `action`'s `status` when
 * there is one, else `JSON.stringify`. With `check`, the two are compared.
 * @throws Error (only with `check`) when the compiled output differs from JSON.stringify's
 */
export function serialize(
	serializers: Serializers,
	action: string | undefined,
	status: number,
	data: unknown,
	check = false,
): string {
	const fn = action ? serializers.get(action)?.get(status) : undefined;
	if (!fn) return JSON.stringify(data);
	const body = fn(data);
	if (check) {
		const plain = JSON.stringify(data);
		if (JSON.stringify(canonical(JSON.parse(body))) !== JSON.stringify(canonical(JSON.parse(plain))))
			throw new Error(
				`compiled serialiser of ${action} ${status} differs from JSON.stringify: ${body} vs ${plain}`,
			);
	}
	return body;
}

/** `value` with every object's keys sorted (so two JSON texts compare by content, not key order). */
function canonical(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(canonical);
	if (value && typeof value === "object")
		return Object.fromEntries(
			Object.keys(value)
				.sort()
				.map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
		);
	return value;
}
