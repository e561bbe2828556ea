/**
 * Moleculer's built-in middleware factories by name (`Middlewares` of the moleculer package: `Metrics`, `Timeout`,
 * `Fallback`, …), exported at run time but absent from its typings. The replacements of lib/platform
 * (request-metrics.ts, call-fallback.ts) build on them; test/unit/framework-patches.spec.ts pins their text.
 */
import type { Middleware, ServiceBroker } from "moleculer";
import * as moleculer from "moleculer";

/** Moleculer's built-in middlewares: each a factory of the middleware for one broker. */
export const BuiltIn = (
	moleculer as unknown as { Middlewares: Record<string, (broker: ServiceBroker) => Middleware> }
).Middlewares;
