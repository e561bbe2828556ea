/**
 * The merchant's brand on the buyer tracking page (issue 29;
 * docs/decisions/0108-buyer-tracking-page.md): `GET/PATCH /v1/settings/branding`.
 */
import type { Branding } from "../contracts";
import { validationFailed } from "../platform/errors";
import { hasControlChars } from "../shared/fields";
import type { NotificationsDeps } from "./deps";
import { brandOf, saveBrand } from "./store";
import { forgetBrand } from "./track";

/** The fields a change may name. */
const FIELDS = ["brand_name", "logo_url", "colour", "support_phone", "support_email"] as const;

/** A validated change (lib/contracts/http/notifications.ts `BRANDING_BODY`): absent keeps, null clears. */
export type BrandingChange = Partial<Record<(typeof FIELDS)[number], string | null>>;

/** `GET /v1/settings/branding`: the caller's brand (all null until set). */
export function getBranding(deps: NotificationsDeps, sender: number): Promise<Branding> {
	return brandOf(deps.db, sender);
}

/**
 * `PATCH /v1/settings/branding`: applies `change` over the stored brand (colour upper-cased),
 * stores it whole, and drops this process's cached copy (others pick it up within a minute).
 * @throws 400 `validation_failed`: `body: no updatable field`; `brand_name: must not contain
 *   control characters`; `logo_url: must be an https URL` (one that does not parse)
 */
export async function setBranding(
	deps: NotificationsDeps,
	sender: number,
	change: BrandingChange,
): Promise<Branding> {
	const named = FIELDS.filter((f) => change[f] !== undefined);
	if (named.length === 0) throw validationFailed(["body: no updatable field"]);
	const bad: string[] = [];
	if (typeof change.brand_name === "string" && hasControlChars(change.brand_name))
		bad.push("brand_name: must not contain control characters");
	if (typeof change.logo_url === "string" && !URL.canParse(change.logo_url))
		bad.push("logo_url: must be an https URL");
	if (bad.length) throw validationFailed(bad);
	const now = await brandOf(deps.db, sender);
	const next = {
		brand_name: change.brand_name === undefined ? now.brand_name : change.brand_name,
		logo_url: change.logo_url === undefined ? now.logo_url : change.logo_url,
		colour: change.colour === undefined ? now.colour : (change.colour?.toUpperCase() ?? null),
		support_phone: change.support_phone === undefined ? now.support_phone : change.support_phone,
		support_email: change.support_email === undefined ? now.support_email : change.support_email,
	};
	const saved = await saveBrand(deps.db, sender, next);
	forgetBrand(sender);
	return saved;
}
