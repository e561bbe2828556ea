/**
 * One definition per HTTP route (issue 26; docs/decisions/0093-route-definitions.md;
 * docs/ARCHITECTURE.md §9). A service's routes are defined
 * once, in lib/contracts/http/<service>.ts, as a {@link RouteDefinition} keyed
 * by the action that answers them; from that one object come:
 * - the gateway alias (lib/gateway/routes.ts builds every alias table from the
 *   definitions: `route` is the key, the definition's key the action, `kind`
 *   the table);
 * - the action's access rule (the service's action declares
 *   `access: <ROUTES>["<action>"].access`; the document derives the 403s from it);
 * - the request validator: `query` / `body`, when given, are the
 *   fastest-validator schemas the action compiles (lib/platform/validate.ts),
 *   and the OpenAPI parameters and body are converted from those very objects
 *   (lib/platform/openapi/schema.ts `fromValidator`);
 * - the TypeScript type of the contract entry's `params` ({@link RouteParams}:
 *   the path parameters as strings, the validated query and body inferred
 *   from the schemas by {@link Infer});
 * - the OpenAPI operation (lib/openapi/operation.ts `operationOf`): summary,
 *   description, parameters, body, the route's own answers, and its errors
 *   named by catalogue code (lib/platform/errors/catalogue.ts: status and text
 *   from the catalogue; a route may add a note or extra body members).
 *
 * Nothing here runs per request: definitions are plain data read at start.
 */
import type { ValidationSchema } from "fastest-validator";
import type { ActionAccess } from "../auth";
import type { ErrorCode } from "../errors/catalogue";
import type { JsonSchema, Operation, Parameter, Response } from "./types";

/**
 * Which gateway route table serves a route (lib/gateway/route-options.ts):
 * - `api` (default): bearer token, JSON body on POST/PATCH/PUT;
 * - `upload`: bearer token, the raw multipart stream (bulk upload);
 * - `courier_push`: courier scan webhooks, no token, the raw body;
 * - `link`: signed label links, no token, rate-limited per address;
 * - `page`: the buyer's pages (`/track…`, issue 29): no token (a signed one in the path, or an
 *   AWB and phone digits in the query), HTML, rate-limited per address as links;
 * - `probe`: liveness/readiness, answered by the local gateway;
 * - `docs`: the API reference (the "action" is a handler name of lib/openapi/serve.ts);
 * - `dev_idp`: the development identity provider (never documented).
 */
export type RouteKind =
	| "api"
	| "upload"
	| "courier_push"
	| "link"
	| "page"
	| "probe"
	| "docs"
	| "dev_idp"
	| "ops";

/**
 * A documented error of a route: a catalogued code (its status and its
 * one-line text come from the catalogue), or the code with `when` this route
 * answers it (replaces the catalogue's general text) and the `extra` members
 * its body carries (the §2.11 envelope allows extra members; spec §7).
 */
export type RouteError =
	| ErrorCode
	| { readonly code: ErrorCode; readonly when?: string; readonly extra?: Record<string, JsonSchema> };

/** What the document says about one path parameter. */
export interface PathParamDoc {
	readonly description: string;
	/** default `{type: "string"}`; ids use `ID_PATH_SCHEMA` */
	readonly schema?: JsonSchema;
}

/**
 * The one definition of an HTTP route. Everything the OpenAPI operation says
 * that is not derived (from the kind, the method, the access rule, the
 * schemas and the catalogue) is written here, once.
 */
export interface RouteDefinition {
	/** `"<METHOD> <path>"` in moleculer-web / path-to-regexp 8 syntax (`:name` a path parameter) */
	readonly route: string;
	/** gateway table (default `api`) */
	readonly kind?: RouteKind;
	/** the action's access rule (spec §5 rules 1–2); absent on unauthenticated kinds */
	readonly access?: ActionAccess;
	/** OpenAPI tag (the area of the reference) */
	readonly tag: string;
	readonly summary?: string;
	readonly description: string;
	/** default: the action name */
	readonly operationId?: string;
	/** one entry per `:name` of `route` (checked by the type of {@link defineRoutes}) */
	readonly path?: Readonly<Record<string, PathParamDoc>>;
	/** the fastest-validator schema the action compiles for its query (documented from it) */
	readonly query?: ValidationSchema;
	/** notes (units, meaning) per query field, put before the generated text */
	readonly queryNotes?: Readonly<Record<string, string>>;
	/** documented defaults per query field */
	readonly queryDefaults?: Readonly<Record<string, string | number>>;
	/** query parameters validated by hand (documented as written), after those of `query` */
	readonly queryParams?: readonly Parameter[];
	/** the fastest-validator schema the action compiles for its JSON body */
	readonly body?: ValidationSchema;
	/** `fromValidator` options for `body`: descriptions and shapes by field path */
	readonly bodyNotes?: {
		readonly descriptions?: Record<string, string>;
		readonly overrides?: Record<string, JsonSchema>;
	};
	/** a JSON body validated by hand: its JSON Schema as written */
	readonly bodySchema?: JsonSchema;
	/** the body is optional (default: required when the route has one) */
	readonly bodyOptional?: boolean;
	/** any other request body (multipart, raw), as written */
	readonly requestBody?: Operation["requestBody"];
	/** the route's own answers by status (success answers, and any answer not in the §2.11 envelope) */
	readonly responses: Readonly<Record<string, Response>>;
	/** its documented errors, by catalogue code */
	readonly errors?: readonly RouteError[];
	/** further operation keys (e.g. `x-…` extensions, `callbacks`), merged last */
	readonly extra?: Partial<Operation>;
	/** false: served but not in the document (the dev IdP) */
	readonly documented?: boolean;
}

// ---------------------------------------------------------------------------
// Types derived from a definition
// ---------------------------------------------------------------------------

/** `"token}"` → `"token"`; `"format"` stays. */
type ParamName<N extends string> = N extends `${infer H}}${string}` ? H : N;

/**
 * The path parameter names of a route key, e.g.
 * `PathParamNames<"POST /v1/intake/jobs/:id/review/:row/:decision">` =
 * `"id" | "row" | "decision"`; `template.:format` and `t{/:token}` included.
 */
export type PathParamNames<R extends string> = R extends `${string}:${infer N}/${infer Rest}`
	? ParamName<N> | PathParamNames<`/${Rest}`>
	: R extends `${string}:${infer N}`
		? ParamName<N>
		: never;

/** Keys of a fastest-validator object schema that are fields (not `$$strict` …). */
type FieldKey<S> = Exclude<keyof S, `$$${string}`>;

/** Whether a rule may be absent after validation. */
type IsOptional<R> = R extends { optional: true }
	? R extends { default: unknown }
		? false
		: true
	: R extends string
		? R extends `${string}|optional${string}`
			? true
			: false
		: false;

/** The type of a shorthand rule (`"string"`, `"number|optional"`, `"string[]"`). */
type Shorthand<R extends string> = R extends `${infer T}|${string}`
	? Shorthand<T>
	: R extends `${infer T}[]`
		? Shorthand<T>[]
		: R extends "string" | "email" | "url" | "uuid" | "objectID" | "luhn" | "mac"
			? string
			: R extends "number"
				? number
				: R extends "boolean"
					? boolean
					: unknown;

/**
 * The value type a caller may pass for a fastest-validator rule: what the
 * rule lets through, and for a `convert: true` number or boolean also the
 * strings it converts (a query value arrives as a string).
 */
export type InferRule<R> = R extends string
	? Shorthand<R>
	: R extends readonly (infer E)[]
		? InferRule<E>
		: R extends { type: "string" | "email" | "url" | "uuid" | "objectID" | "luhn" | "mac" }
			? string
			: R extends { type: "number" }
				? R extends { convert: true }
					? number | string
					: number
				: R extends { type: "boolean" }
					? R extends { convert: true }
						? boolean | string | number
						: boolean
					: R extends { type: "date" }
						? Date
						: R extends { type: "enum"; values: readonly (infer V)[] }
							? V
							: R extends { type: "equal"; value: infer V }
								? V
								: R extends { type: "array"; items: infer I }
									? InferRule<I>[]
									: R extends { type: "array" }
										? unknown[]
										: R extends { type: "object"; props: infer P }
											? Infer<P>
											: R extends { type: "multi"; rules: readonly (infer M)[] }
												? InferRule<M>
												: R extends { type: "forbidden" }
													? never
													: unknown;

/** A rule's type with `null` when it is nullable. */
type Nullable<R> = R extends { nullable: true } ? null : never;

/**
 * The TypeScript type of what a fastest-validator object schema lets
 * through, e.g. `Infer<{a: {type: "string"}, b: {type: "number", optional: true}}>`
 * = `{a: string; b?: number}`. Custom rules and `any` are `unknown`.
 */
export type Infer<S> = S extends ValidationSchema
	? {
			[K in FieldKey<S> as IsOptional<S[K]> extends true ? never : K]: InferRule<S[K]> | Nullable<S[K]>;
		} & {
			[K in FieldKey<S> as IsOptional<S[K]> extends true ? K : never]?:
				| InferRule<S[K]>
				| Nullable<S[K]>
				| null;
		}
	: Record<string, unknown>;

/** An object type with its intersections merged (for readable hovers). */
type Merge<T> = { [K in keyof T]: T[K] };

/**
 * The `params` an action receives for a route: its path parameters as
 * strings, the validated query and body (inferred from `query` / `body`),
 * and any other key as unknown (the gateway passes the query and body as
 * sent; the action reads only what it validated). Routes validated by hand
 * type what they parse in their own parser.
 */
export type RouteParams<D extends RouteDefinition> = Merge<
	{ readonly [K in PathParamNames<D["route"]>]: string } & (D extends { query: infer Q }
		? Infer<Q>
		: unknown) &
		(D extends { body: infer B } ? Infer<B> : unknown)
> &
	Record<string, unknown>;

/** Checks that each definition documents exactly its route's path parameters. */
type CheckedPaths<D> = {
	[A in keyof D]: D[A] extends { route: infer R extends string }
		? [PathParamNames<R>] extends [never]
			? D[A]
			: D[A] & { readonly path: { readonly [K in PathParamNames<R>]: PathParamDoc } }
		: D[A];
};

/**
 * Declares a service's routes, keyed by the action that answers each (kept
 * literal, so alias tables and contract types can be derived). A route with
 * path parameters must document each of them in `path`.
 */
export function defineRoutes<const D extends Record<string, RouteDefinition>>(defs: D & CheckedPaths<D>): D {
	return defs;
}
