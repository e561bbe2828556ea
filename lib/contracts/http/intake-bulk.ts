/**
 * The HTTP routes of the `intake` service's bulk upload (issue 10), one definition each (issue 26;
 * lib/platform/openapi/route.ts, docs/ARCHITECTURE.md §9).
 */
import { defineRoutes } from "../../platform/openapi/route";

export const INTAKE_BULK_ROUTES = defineRoutes({});
