/**
 * The HTTP routes of the `devauth` service, one definition each (issue 26;
 * lib/platform/openapi/route.ts, docs/ARCHITECTURE.md §9).
 */
import { defineRoutes } from "../../platform/openapi/route";

export const DEVAUTH_ROUTES = defineRoutes({});
