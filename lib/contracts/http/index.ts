/**
 * Every HTTP route of the API, one definition each (issue 26;
 * lib/platform/openapi/route.ts, docs/decisions/0093-route-definitions.md):
 * the gateway's alias tables (lib/gateway/routes.ts) and the OpenAPI document
 * (lib/openapi/index.ts) are built from {@link ROUTES}; each service's action
 * takes its access rule and its validator schemas from its own entry.
 * Order: the services' files in this order, each in its own order; the
 * gateway then puts literal paths before parameters (lib/gateway/routes.ts).
 */
import { BILLING_ROUTES } from "./billing";
import { BOOKING_ROUTES } from "./booking";
import { DEVAUTH_ROUTES } from "./devauth";
import { DOCUMENTS_ROUTES } from "./documents";
import { GATEWAY_ROUTES } from "./gateway";
import { INTAKE_ROUTES } from "./intake";
import { INTAKE_BULK_ROUTES } from "./intake-bulk";
import { NDR_ROUTES } from "./ndr";
import { NOTIFICATIONS_ROUTES } from "./notifications";
import { PICKUPS_ROUTES } from "./pickups";
import { PINCODE_ROUTES } from "./pincode";
import { RATES_ROUTES } from "./rates";
import { WAREHOUSES_ROUTES } from "./warehouses";
import { WEBHOOKS_ROUTES } from "./webhooks";

/** Every route definition, keyed by the action (or docs handler) that answers it. */
export const ROUTES = {
	...PINCODE_ROUTES,
	...RATES_ROUTES,
	...INTAKE_ROUTES,
	...INTAKE_BULK_ROUTES,
	...BOOKING_ROUTES,
	...BILLING_ROUTES,
	...NDR_ROUTES,
	...WEBHOOKS_ROUTES,
	...NOTIFICATIONS_ROUTES,
	...WAREHOUSES_ROUTES,
	...PICKUPS_ROUTES,
	...DOCUMENTS_ROUTES,
	...GATEWAY_ROUTES,
	...DEVAUTH_ROUTES,
} as const;

/** The route definitions' table, as the gateway and the document builder read it. */
export type Routes = typeof ROUTES;
