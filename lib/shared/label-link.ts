/**
 * Signed label links (spec §4.4, §5 rule 7): `GET /v1/documents/label/t/{token}`
 * needs no bearer token; the token `{awb}.{hmac}` is the credential.
 *
 * - `hmac` is HMAC-SHA256 of the AWB text, base64url without padding (43
 *   characters), under a purpose key derived from a secret:
 *   `HMAC-SHA256(secret, "msa-label-link-v1")`, so the link key is never the
 *   raw secret and never the page-cursor key (lib/platform/cursor.ts derives its own
 *   from the same secret). Derived keys are cached as `KeyObject`s.
 * - Key rotation (docs/decisions/0035-signed-label-links.md):
 * `LABEL_LINK_SECRET`
 *   signs (and verifies); `LABEL_LINK_PREVIOUS_SECRETS`, a comma-separated
 *   list, verifies only, so links issued under an older secret keep working
 *   until ops drop it from the list. A secret in neither never verifies.
 * - Verification checks the shape first (one `.`, a printable AWB, exactly 43
 *   base64url characters), then compares the given text with the expected
 *   text of EVERY accepted key in constant time (`timingSafeEqual` on equal
 *   lengths), without stopping at the first match. Comparing the canonical
 *   base64url text, not decoded bytes, refuses the non-canonical spellings of
 *   a valid tag (the last character carries 2 unused bits).
 * - Links carry no expiry: a merchant prints days after booking. A link stops
 *   working when its AWB is no longer the order's live booking (cancelled),
 *   or when the secret that signed it is retired.
 *
 * Pure functions over the environment (lib/platform/config.ts `setting`), read at each
 * use (cheap: the parsed keys are cached by the values), shared by every service that signs or
 * verifies (this module imports only lib/platform/config.ts): booking signs in its
 * request path (book/sync's `label_url`), intake signs the `label_url` of its
 * order answers (status, detail, list rows; one HMAC per row), documents
 * verifies. None of them calls another service to sign
 * (docs/decisions/0080-label-url-on-every-order.md).
 */
import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from "node:crypto";
import { setting } from "../platform/config";
import { keptJoin } from "./kept-join";

/** Printable AWB: 4 to 40 letters, digits or hyphens (DOMAIN "AWB": validate only length and character set). */
export const AWB_PATTERN = /^[A-Za-z0-9][A-Za-z0-9-]{3,39}$/;

/** True when `awb` may be printed (and used in a file name or a signed link). */
export function isPrintableAwb(awb: unknown): awb is string {
	return typeof awb === "string" && AWB_PATTERN.test(awb);
}

/**
 * Domain separation of the link keys, per purpose (never the raw secret, never the cursor
 * key, and a label link never opens a tracking page nor the reverse): label downloads, and
 * the buyer's tracking page (issue 29; docs/decisions/0108-buyer-tracking-page.md).
 */
const KEY_LABELS = { label: "msa-label-link-v1", tracking: "msa-tracking-page-v1" } as const;
/** What a signed link opens. */
type LinkPurpose = keyof typeof KEY_LABELS;

/** Length of the base64url HMAC-SHA256 tag (32 bytes, unpadded). */
export const LINK_TAG_LENGTH = 43;

/** Path prefix of signed links (before the token). */
export const LABEL_LINK_PREFIX = "/v1/documents/label/t/";

const TAG_RE = /^[A-Za-z0-9_-]{43}$/;

/** Longest token accepted: a 40-character AWB, the dot and the tag. */
const MAX_TOKEN_LENGTH = 40 + 1 + LINK_TAG_LENGTH;

/** The keys of the current configuration. */
interface LinkKeys {
	/** the configuration the keys were derived from (cache key: `setting` answers the same array while unchanged) */
	current: string;
	previousAll: readonly string[];
	/** derived from LABEL_LINK_SECRET: signs */
	sign: KeyObject;
	/** the signing key first, then the previous ones: verify */
	verify: KeyObject[];
	/**
	 * Tokens these keys verified, with their AWB (docs/decisions/0142-verified-link-tokens.md): a link opened again
	 * (a buyer's tracking page refreshed, a label printed twice) is not verified again. Only tokens that passed are
	 * kept, so a forged token is never in it; new keys (a secret changed) start empty.
	 */
	verified: Map<string, string>;
	/** Tokens these keys signed, by AWB: a link made again (an order read again) is not signed again. */
	signed: Map<string, string>;
}

/** Most tokens one set of keys keeps as verified, and as signed; when full, a map starts over. */
const KEPT_TOKENS_MAX = 20_000;

/** Keeps `value` under `key` in one of {@link LinkKeys}' token maps, starting the map over when it is full. */
function keepToken(map: Map<string, string>, key: string, value: string): void {
	if (map.size >= KEPT_TOKENS_MAX) map.clear();
	map.set(key, value);
}

const cached: Partial<Record<LinkPurpose, LinkKeys>> = {};

function derive(secret: string, purpose: LinkPurpose): KeyObject {
	return createSecretKey(createHmac("sha256", secret).update(KEY_LABELS[purpose]).digest());
}

/**
 * The link keys of the current environment.
 * @throws Error when `LABEL_LINK_SECRET` is not set (a deployment error: the
 *   processes that sign or verify refuse to start without it, lib/platform/system.ts)
 */
function linkKeys(purpose: LinkPurpose = "label"): LinkKeys {
	const current = setting("LABEL_LINK_SECRET") ?? "";
	const previousAll = setting("LABEL_LINK_PREVIOUS_SECRETS");
	const hit = cached[purpose];
	if (hit && hit.current === current && hit.previousAll === previousAll) return hit;
	if (!current) throw new Error("LABEL_LINK_SECRET is required to sign and verify label links");
	const sign = derive(current, purpose);
	const previous = previousAll.filter((s) => s !== current);
	const keys = {
		current,
		previousAll,
		sign,
		verify: [sign, ...previous.map((s) => derive(s, purpose))],
		verified: new Map<string, string>(),
		signed: new Map<string, string>(),
	};
	cached[purpose] = keys;
	return keys;
}

/**
 * What a label link of an AWB depends on besides the AWB: the public base and the signing secret (one string, to
 * compare; never written out). Answers kept with their links (lib/intake/list.ts) are made again when it changes.
 */
export function labelLinkInputs(): string {
	return inputsText(publicBase(), setting("LABEL_LINK_SECRET") ?? "");
}

/** Joins {@link labelLinkInputs}' parts, the same text while both are unchanged (read once per list page). */
const inputsText = keptJoin("\n");

/** True when a link secret is configured (for start-up checks). */
export function labelLinkConfigured(): boolean {
	return !!setting("LABEL_LINK_SECRET");
}

function tagOf(key: KeyObject, awb: string): string {
	return createHmac("sha256", key).update(awb).digest("base64url");
}

/**
 * The signed token `{awb}.{hmac}` of an AWB, under `LABEL_LINK_SECRET`.
 * @param awb a printable AWB (`^[A-Za-z0-9][A-Za-z0-9-]{3,39}$`, lib/documents/data.ts)
 * @throws Error when the AWB is not printable or no secret is configured
 */
export function signLabelToken(awb: string): string {
	return signToken(awb, "label");
}

/** {@link signLabelToken} for `purpose`; an AWB these keys signed before gets the same token at once ({@link LinkKeys.signed}). */
function signToken(awb: string, purpose: LinkPurpose): string {
	if (!isPrintableAwb(awb)) throw new Error(`cannot sign a ${purpose} link for an unprintable AWB`);
	const keys = linkKeys(purpose);
	let token = keys.signed.get(awb);
	if (token === undefined) {
		token = `${awb}.${tagOf(keys.sign, awb)}`;
		keepToken(keys.signed, awb, token);
	}
	return token;
}

/**
 * Verifies a token `{awb}.{hmac}` against the current and previous secrets.
 * Answers the AWB when the tag is the exact base64url HMAC of the AWB under
 * one accepted key; null for anything else (not a string, empty, too long, no
 * or several dots, an unprintable AWB, a tag not exactly 43 base64url
 * characters, a tampered AWB or tag, another key). Never throws for client
 * input; throws only when no secret is configured.
 */
export function verifyLabelToken(token: unknown): string | null {
	return verifyToken(token, "label");
}

/**
 * {@link verifyLabelToken} for `purpose`; a token these keys verified before is answered its AWB at once
 * ({@link LinkKeys.verified}).
 */
function verifyToken(token: unknown, purpose: LinkPurpose): string | null {
	if (typeof token !== "string" || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return null;
	const keys = linkKeys(purpose);
	const known = keys.verified.get(token);
	if (known !== undefined) return known;
	const dot = token.indexOf(".");
	if (dot < 0 || token.indexOf(".", dot + 1) !== -1) return null;
	const awb = token.slice(0, dot);
	const tag = token.slice(dot + 1);
	if (!isPrintableAwb(awb) || tag.length !== LINK_TAG_LENGTH || !TAG_RE.test(tag)) return null;
	const given = Buffer.from(tag, "latin1");
	let ok = false;
	for (const key of keys.verify) {
		const expected = Buffer.from(tagOf(key, awb), "latin1");
		// equal lengths (both 43), so timingSafeEqual never throws; every key is tried
		if (timingSafeEqual(given, expected)) ok = true;
	}
	if (!ok) return null;
	keepToken(keys.verified, token, awb);
	return awb;
}

/**
 * The base every `label_url` is built on: `PUBLIC_BASE_URL`
 * (checked, without trailing slashes; lib/platform/config.ts), or "" (a path relative
 * to the API's own base).
 */
function publicBase(): string {
	return setting("PUBLIC_BASE_URL") ?? "";
}

/**
 * The signed link of an AWB's label: `/v1/documents/label/t/{awb}.{hmac}`,
 * prefixed with `PUBLIC_BASE_URL` when configured (an absolute URL), else a
 * path relative to the API base (docs/decisions/0035-signed-label-links.md).
 * @throws as {@link signLabelToken}
 */
export function labelLinkUrl(awb: string): string {
	return `${publicBase()}${LABEL_LINK_PREFIX}${signLabelToken(awb)}`;
}

/**
 * The `label_url` of an order answer (§2.4 status, §2.5 list row and detail):
 * the signed link of `awb_number` ({@link labelLinkUrl}) when the order is
 * `booked` (every lifecycle status after booking, delivered and RTO included:
 * the label is served while the AWB is the order's live booking); null for
 * any other state (not booked yet, in progress, failed, cancelled — a
 * cancelled order reads `not_shipped`), without an AWB, or for an AWB that no
 * link can carry (not printable: documents would refuse it).
 * @throws Error when `LABEL_LINK_SECRET` is not set (intake refuses to start without it)
 */
export function bookedLabelUrl(state: string, awb_number: string | null | undefined): string | null {
	if (state !== "booked" || !isPrintableAwb(awb_number)) return null;
	return labelLinkUrl(awb_number);
}

/** Path prefix of the buyer's tracking page (before the token). */
export const TRACKING_PAGE_PREFIX = "/track/";

/**
 * The buyer's tracking page token of an AWB (issue 29; docs/decisions/0108-buyer-tracking-page.md):
 * `{awb}.{hmac}` as a label link's, under the same secrets and rotation, with its own derived key.
 * @throws Error when the AWB is not printable or no secret is configured
 */
export function signTrackingToken(awb: string): string {
	return signToken(awb, "tracking");
}

/** Verifies a tracking page token: the AWB, or null (as {@link verifyLabelToken}; a label token never passes). */
export function verifyTrackingToken(token: unknown): string | null {
	return verifyToken(token, "tracking");
}

/**
 * The `tracking_page_url` of a booked order (issue 29): `/track/{awb}.{hmac}`, prefixed with
 * `PUBLIC_BASE_URL` when configured; null when the order is not `booked` or has no printable AWB
 * (as {@link bookedLabelUrl}).
 * @throws Error when `LABEL_LINK_SECRET` is not set
 */
export function bookedTrackingPageUrl(state: string, awb_number: string | null | undefined): string | null {
	if (state !== "booked" || !isPrintableAwb(awb_number)) return null;
	return `${publicBase()}${TRACKING_PAGE_PREFIX}${signTrackingToken(awb_number)}`;
}
