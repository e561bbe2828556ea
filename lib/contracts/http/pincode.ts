/**
 * The HTTP routes of the `pincode` service (spec §4.7, §7;
 * docs/decisions/0003-pincode-directory.md): the pincode lookup. One
 * definition each (issue 26; lib/platform/openapi/route.ts,
 * docs/ARCHITECTURE.md §9).
 *
 * The path parameter is checked by hand (services/pincode.service.ts: every
 * whitespace character stripped, then `^[0-9]{6}$`), as documented here.
 */
import { json } from "../../platform/openapi/components";
import { str } from "../../platform/openapi/helpers";
import { defineRoutes } from "../../platform/openapi/route";

/** The pincode routes, keyed by the action that answers each. */
export const PINCODE_ROUTES = defineRoutes({
	"pincode.lookup": {
		route: "GET /v1/pincode/:pincode",
		access: { auth: true },
		tag: "shipping",
		operationId: "pincode_lookup",
		summary: "Look up a pincode",
		description:
			"Spec §4.7: the city (the district of the India Post office chosen by docs/decisions/0003-pincode-directory.md) and state of a pincode. Shared reference data, not specific to an account; any authenticated role. An unknown pincode is a 200 with `found:false`, not a 404.",
		path: {
			pincode: {
				description: "six digits `^[0-9]{6}$` after every whitespace character is stripped (spec §4.7)",
			},
		},
		responses: {
			"200": json(
				'Known: `{found:true, pincode, city, state}`; unknown: `{found:false, pincode, city:"", state:""}`.',
				{
					type: "object",
					additionalProperties: false,
					required: ["found", "pincode", "city", "state"],
					properties: {
						found: { type: "boolean", description: "whether the India Post directory has it" },
						pincode: str("the pincode, whitespace stripped", { pattern: "^[0-9]{6}$" }),
						city: str("district of the chosen office; empty when not found"),
						state: str("state; empty when not found"),
					},
				},
			),
		},
		errors: [
			{
				code: "pincode must be 6 digits",
				when: "not six digits after whitespace is stripped (code = message, spec §7).",
			},
			{ code: "lookup_failed", when: "the directory cannot be read; retry (spec §7)." },
		],
	},
});
