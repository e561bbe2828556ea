/**
 * The OpenAPI operation of a route definition (issue 26;
 * lib/platform/openapi/route.ts; docs/decisions/0093-route-definitions.md).
 * What the definition writes is copied; the rest is derived:
 * - `operationId` (default the action name), `tags` (its `tag`);
 * - parameters: its path parameters (in route order), the query fields
 *   converted from its `query` validator schema, then `queryParams`;
 * - the JSON request body converted from its `body` validator schema (or its
 *   `bodySchema`, or `requestBody` as written);
 * - responses: its own answers, then its errors by catalogue code (status and
 *   text from the catalogue; codes of one status joined with "; "; `extra`
 *   members added to the envelope), then, on bearer routes, the 403s of its
 *   access rule and the gateway's 400 / 503 texts (`bearerResponses`).
 * The document builder (lib/openapi/index.ts) then adds the answers the
 * gateway gives on every route of a kind (401, 429, 413, 415, 500, 503 …).
 */

import { CATALOGUE } from "../platform/errors/catalogue";
import { documented, json, pathParam, ref } from "../platform/openapi/components";
import { BEARER, bearerResponses, queryParamsOf } from "../platform/openapi/helpers";
import type { RouteDefinition, RouteError } from "../platform/openapi/route";
import { fromValidator } from "../platform/openapi/schema";
import type { JsonSchema, Operation, Parameter, Response } from "../platform/openapi/types";

/** Path parameter names of a route key, in order (`:id`, `t{/:token}`, `template.:format`). */
export function pathParamNames(route: string): string[] {
	return [...route.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]);
}

/** The documents body shapes (spec §7 exception) of a catalogued code. */
function documentsShape(code: keyof typeof CATALOGUE): boolean {
	const body = (CATALOGUE[code] as { body?: string }).body;
	return body === "documents_conflict" || body === "documents_message";
}

/** The error responses of a definition's `errors`, keyed by status. */
export function errorResponses(errors: readonly RouteError[], documents: boolean): Record<string, Response> {
	const byStatus = new Map<
		number,
		{ texts: string[]; extra: Record<string, JsonSchema>; conflict: boolean }
	>();
	for (const e of errors) {
		const code = typeof e === "string" ? e : e.code;
		const entry = CATALOGUE[code];
		const when = typeof e === "string" ? undefined : e.when;
		const slot = byStatus.get(entry.status) ?? { texts: [], extra: {}, conflict: false };
		// a documents_message entry's key is ours and never on the wire: its text alone
		const internalKey = (entry as { body?: string }).body === "documents_message";
		slot.texts.push(internalKey ? (when ?? entry.description) : documented(code, when));
		if (typeof e !== "string" && e.extra) Object.assign(slot.extra, e.extra);
		if ((entry as { body?: string }).body === "documents_conflict") slot.conflict = true;
		byStatus.set(entry.status, slot);
		if (documentsShape(code) && !documents)
			throw new Error(`${code} has a /v1/documents/ body shape but the route is elsewhere`);
	}
	const out: Record<string, Response> = {};
	for (const [status, { texts, extra, conflict }] of byStatus) {
		// "a.; b." reads badly: a text ends its sentence only where the list ends
		const text = texts.map((t, i) => (i < texts.length - 1 ? t.replace(/\.$/, "") : t)).join("; ");
		const base = conflict
			? ref("DocumentsConflict")
			: documents && (status === 400 || status === 404)
				? ref("DocumentsError")
				: ref("Error");
		const schema = Object.keys(extra).length
			? { allOf: [base, { type: "object" as const, properties: extra }] }
			: base;
		out[String(status)] = json(text, schema);
	}
	return out;
}

/**
 * Whether the route takes a JSON body (its definition documents one): then its
 * own 400 also names the gateway's `invalid_json` / `invalid_body`. A bearer
 * POST without a documented body still gets the gateway's 400, 413 and 415 from
 * the document builder (the gateway parses whatever body is sent).
 */
function takesJsonBody(def: RouteDefinition): boolean {
	return (def.kind ?? "api") === "api" && (def.body !== undefined || def.bodySchema !== undefined);
}

/** The request body of a definition, if any. */
function requestBodyOf(def: RouteDefinition): Operation["requestBody"] {
	if (def.requestBody) return def.requestBody;
	const schema: JsonSchema | undefined = def.body
		? fromValidator(def.body, { ...def.bodyNotes, kind: "schema" })
		: def.bodySchema;
	if (!schema) return undefined;
	return { required: def.bodyOptional !== true, content: { "application/json": { schema } } };
}

/**
 * The OpenAPI operation of `def`, answered by `action` (see the module notes).
 * @throws Error when `path` does not document exactly the route's path parameters.
 */
export function operationOf(action: string, def: RouteDefinition): Operation {
	const names = pathParamNames(def.route);
	const documentedNames = Object.keys(def.path ?? {});
	if (names.join() !== [...documentedNames].sort((a, b) => names.indexOf(a) - names.indexOf(b)).join())
		throw new Error(
			`${def.route}: path parameters ${names.join(", ")} vs documented ${documentedNames.join(", ")}`,
		);
	const parameters: Parameter[] = [
		...names.map((n) => {
			const doc = def.path?.[n];
			return pathParam(n, doc?.description ?? "", doc?.schema ?? { type: "string" });
		}),
		...(def.query
			? queryParamsOf(fromValidator(def.query, { kind: "schema" }), def.queryNotes, def.queryDefaults)
			: []),
		...(def.queryParams ?? []),
	];
	const kind = def.kind ?? "api";
	const bearer = kind === "api" || kind === "upload";
	const documents = def.route.includes(" /v1/documents/");
	const own = errorResponses(def.errors ?? [], documents);
	for (const status of Object.keys(own))
		if (status in def.responses)
			throw new Error(`${def.route}: status ${status} both in responses and errors`);
	const responses = bearer
		? bearerResponses({ ...def.responses }, own, {
				body: takesJsonBody(def),
				writes: def.access?.writes,
				capability: def.access?.capability,
				pathParams: names.length > 0,
				documents,
			})
		: { ...def.responses, ...own };
	const op: Operation = {
		operationId: def.operationId ?? action,
		...(def.summary ? { summary: def.summary } : {}),
		description: def.description,
		tags: [def.tag],
		...(bearer ? { security: BEARER } : {}),
		...(parameters.length ? { parameters } : {}),
		...(requestBodyOf(def) ? { requestBody: requestBodyOf(def) } : {}),
		responses,
		...def.extra,
	};
	return op;
}
