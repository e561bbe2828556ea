/**
 * moleculer-web 0.11's request and route shapes as the gateway
 * (services/gateway.service.ts) and its route options
 * (./route-options.ts) use them. moleculer-web's own typings leave both
 * untyped (`any`), so these state the fields read and set; the pinned
 * version is checked by test/unit/gateway/upstream.spec.ts.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Context } from "moleculer";
import type { CallMeta } from "../contracts";
import type { DocsHandler } from "../openapi/serve";
import type { ActionAccess } from "../platform/auth";

/** A request as moleculer-web decorates it (the fields the gateway reads). */
export type GwRequest = IncomingMessage & {
	$ctx?: Context<unknown, CallMeta>;
	/** the routed action's schema (set once an alias matched and its endpoint was found) */
	$action?: { name?: string; access?: ActionAccess };
	/** the matched alias; undefined when the URL matched none */
	$alias?: unknown;
	$params?: Record<string, unknown>;
	$startTime?: [number, number];
	parsedUrl?: string;
	originalUrl?: string;
	body?: unknown;
	/** query params; moleculer-web keeps a value set before it parses the URL */
	query?: Record<string, string>;
};

/** Options of one route (moleculer-web `addRoute`), as far as the gateway uses them. */
export interface RouteOptions {
	name: string;
	path: string;
	aliases: Record<
		string,
		| string
		/** `stream`: the raw request body is the action's `ctx.stream` (the bulk upload) */
		| { type: "stream"; action: string }
		/** function alias (the `docs` route): answers itself or calls `next(err)` */
		| DocsHandler
	>;
	mappingPolicy: "restrict";
	/** false: params are `{body, query, params}` instead of body, query and path params merged */
	mergeParams?: boolean;
	bodyParsers: false | Record<string, unknown>;
	/** path-to-regexp 8 options of the route's aliases (ours: `ROUTE_MATCHING`) */
	pathToRegexpOptions?: { sensitive?: boolean; trailing?: boolean };
	logging: boolean;
	callOptions?: { nodeID?: string; meta?: Record<string, unknown> };
	authentication?: boolean;
	authorization?: boolean;
	onBeforeCall?: (ctx: Context, route: unknown, req: GwRequest, res: ServerResponse) => void | Promise<void>;
	/** the answer as sent (`data`), or what replaces it (moleculer-web awaits it before sending) */
	onAfterCall?: (ctx: Context, route: unknown, req: GwRequest, res: ServerResponse, data: unknown) => unknown;
}

/** A route as moleculer-web's `createRoute` makes it (the fields the gateway reads). */
export interface WebRoute {
	/** the options it was added with (`addRoute`) */
	opts: RouteOptions & { use?: unknown[] };
	/** connect-style middlewares, run in order: its body parsers, then the service's and its own `use` */
	middlewares: unknown[];
	/** the route's CORS options, when on (ours: never) */
	cors?: unknown;
}
