/**
 * The HTTP routes of the `documents` service, one definition each (issue 26;
 * lib/platform/openapi/route.ts, docs/ARCHITECTURE.md §9).
 */
import { defineRoutes } from "../../platform/openapi/route";

export const DOCUMENTS_ROUTES = defineRoutes({});
