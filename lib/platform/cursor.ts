/**
 * Opaque, tamper-evident page cursors for every list endpoint (spec §2.12,
 * §4.8; docs/ARCHITECTURE.md §6: "Cursors are opaque, tamper-evident (signed),
 * and rejected with `cursor: unrecognised shape` when not ours").
 *
 * A cursor is `<payload>.<signature>`, both base64url (URL-safe, no padding):
 * the payload is the JSON `{k: kind, p: position}` (the list it belongs to and
 * a small position in it, e.g. `{k:"wallet", p:{s: sender_id, id: 41}}`), the
 * signature HMAC-SHA256 of the payload text under a key derived from the
 * configured secret (`CURSOR_SECRET`, else `LABEL_LINK_SECRET`; the zero-setup
 * start generates the latter, so cursors work with no configuration). A
 * cursor of another kind, one whose payload or signature was modified, one
 * signed under another secret, or anything else the client makes up is
 * refused with 400 `cursor: unrecognised shape`.
 *
 * Cursors carry no expiry: a position stays meaningful (keyset paging), and
 * rotating the secret invalidates every cursor issued before.
 */

import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from "node:crypto";
import { LRUCache } from "lru-cache";
import { setting } from "./config";
import { type ApiError, type ErrorCode, fail } from "./errors";

/** A cursor position: a small flat JSON object (ids, timestamps as strings, the account). */
export type CursorPosition = Record<string, string | number | boolean | null>;

/** The §7 code (and message) for a cursor that is not ours. */
export const CURSOR_UNRECOGNISED = "cursor: unrecognised shape" satisfies ErrorCode;

/** Longest cursor accepted (bytes); positions are a few ids. */
const MAX_CURSOR_LENGTH = 512;

/** Domain separation: the cursor key is never the label-link key itself. */
const KEY_LABEL = "msa-cursor-v1";

let cachedKey: { secret: string; key: KeyObject } | undefined;

/**
 * The HMAC key cursors are signed with now: HMAC-SHA256(secret, "msa-cursor-v1") of `CURSOR_SECRET`, else
 * `LABEL_LINK_SECRET` (read at each use, so a test or the zero-setup start can set them before the first cursor).
 * The same object while the secret is unchanged, so a kept answer that holds a cursor is given again only under
 * the key it was signed with (lib/intake/list.ts `keptListPage`).
 * @throws Error when neither is configured (a deployment error, not the client's)
 */
export function currentCursorKey(): KeyObject {
	const secret = setting("CURSOR_SECRET") ?? setting("LABEL_LINK_SECRET");
	if (!secret) throw new Error("CURSOR_SECRET (or LABEL_LINK_SECRET) is required to sign page cursors");
	if (cachedKey?.secret !== secret) {
		// a KeyObject: HMAC with it costs a fifth of HMAC with a Buffer key (measured, once per list page)
		cachedKey = { secret, key: createSecretKey(createHmac("sha256", secret).update(KEY_LABEL).digest()) };
	}
	return cachedKey.key;
}

/** True when a cursor key is configured (for start-up checks). */
export function cursorSecretConfigured(): boolean {
	return !!(setting("CURSOR_SECRET") ?? setting("LABEL_LINK_SECRET"));
}

/** Most signatures {@link signature} keeps. */
const KEPT_SIGNATURES = 1_000;
/** Signatures (base64url) by payload, made under {@link signedUnder}; the least recently used goes first. */
const signatures = new LRUCache<string, string>({ max: KEPT_SIGNATURES });
let signedUnder: KeyObject | undefined;

/**
 * The base64url HMAC-SHA256 of `payload` under the cursor key. The signatures of the {@link KEPT_SIGNATURES}
 * cursors used last are kept (forgotten when the key changes): a list read again (a dashboard refreshed, the bench)
 * makes the same next cursor, and the page after it verifies the cursor the page before made, so most cursors are
 * signed once. `keep` false (verifying what a client sent): a kept signature is read, a new one is not kept, so
 * made-up cursors cannot push out the kept ones.
 */
function signature(payload: string, keep: boolean): string {
	const key = currentCursorKey();
	if (key !== signedUnder) {
		signatures.clear();
		signedUnder = key;
	}
	let sig = signatures.get(payload);
	if (sig === undefined) {
		sig = createHmac("sha256", key).update(payload).digest("base64url");
		if (keep) signatures.set(payload, sig);
	}
	return sig;
}

/** Signatures kept in this process (for tests). */
export function keptSignatureCount(): number {
	return signatures.size;
}

/** 400 `cursor: unrecognised shape` (§7, list endpoints): the §2.11 envelope, that text as code and message. */
export function cursorUnrecognised(): ApiError {
	return fail(CURSOR_UNRECOGNISED);
}

/**
 * Encodes `position` in list `kind` into an opaque signed cursor (the
 * `pagination.nextCursor` of a page).
 * @param kind the list, e.g. "wallet", "orders"
 * @param position a flat JSON object; keep it small (ids)
 */
export function encodeCursor(kind: string, position: CursorPosition): string {
	const payload = Buffer.from(JSON.stringify({ k: kind, p: position })).toString("base64url");
	return `${payload}.${signature(payload, true)}`;
}

const B64URL = /^[A-Za-z0-9_-]+$/;

function isPosition(v: unknown): v is CursorPosition {
	if (!v || typeof v !== "object" || Array.isArray(v)) return false;
	return Object.values(v).every((x) => x === null || ["string", "number", "boolean"].includes(typeof x));
}

/**
 * Decodes a cursor the client passed back: the position, when the cursor is
 * one we signed for list `kind` and `accept` (if given) accepts its position.
 * @param kind the list the cursor must belong to
 * @param cursor the raw query value (anything the client sent)
 * @param accept narrows the position to the list's shape (e.g. a positive id and the caller's account)
 * @throws 400 `cursor: unrecognised shape` for anything else (garbage, another
 *   list's cursor, a modified one, one signed under another secret, a
 *   repeated query parameter)
 */
export function decodeCursor<P extends CursorPosition = CursorPosition>(
	kind: string,
	cursor: unknown,
	accept?: (p: CursorPosition) => p is P,
): P {
	if (typeof cursor !== "string" || cursor.length > MAX_CURSOR_LENGTH) throw cursorUnrecognised();
	const [payload, sig, ...rest] = cursor.split(".");
	if (rest.length || !payload || !sig || !B64URL.test(payload) || !B64URL.test(sig))
		throw cursorUnrecognised();
	// compare the canonical text: base64url decoding ignores the spare bits of the last character
	const given = Buffer.from(sig);
	const want = Buffer.from(signature(payload, false));
	if (given.length !== want.length || !timingSafeEqual(given, want)) throw cursorUnrecognised();
	let body: unknown;
	try {
		body = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
	} catch {
		throw cursorUnrecognised();
	}
	const { k, p } = (body ?? {}) as { k?: unknown; p?: unknown };
	if (k !== kind || !isPosition(p) || (accept && !accept(p))) throw cursorUnrecognised();
	return p as P;
}
