import { messageOf } from "../platform/errors";
/**
 * Limits on JSON request bodies checked BEFORE they are parsed (issue 12):
 * a body nested deeper than {@link MAX_JSON_DEPTH} is refused at the gateway's
 * body parser (400 `body_too_deep`), so no later step (a clone, a validator
 * building a message with `String(value)`, a log line) can recurse on it.
 *
 * The scan is a single loop over the raw text (no recursion, no allocation):
 * it counts `[` / `{` against `]` / `}` outside string literals (`"`, with
 * `\` escapes). It does not validate JSON; `JSON.parse` does that afterwards.
 */

/**
 * Deepest nesting of objects and arrays a JSON request body may have. The
 * deepest body of the contract is 3 (an order's `order.return_address`); 32
 * leaves room for clients that wrap data, while bounding every recursion.
 */
export const MAX_JSON_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * True when the JSON text `raw` (a string, or UTF-8 bytes: every byte that
 * matters here is ASCII and never part of a multi-byte sequence) opens more
 * than `max` nested objects/arrays at some point. Brackets inside string
 * literals do not count. Linear time, constant memory.
 */
export function jsonTooDeep(raw: string | Uint8Array, max = MAX_JSON_DEPTH): boolean {
	const text = typeof raw === "string";
	const n = raw.length;
	let depth = 0;
	let inString = false;
	for (let i = 0; i < n; i++) {
		const c = text ? (raw as string).charCodeAt(i) : (raw as Uint8Array)[i];
		if (inString) {
			if (c === BACKSLASH) i++;
			else if (c === QUOTE) inString = false;
			continue;
		}
		if (c === QUOTE) inString = true;
		else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
			if (++depth > max) return true;
		} else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
	}
	return false;
}

/** The error a body parser's `verify` hook throws for a too-deep body (mapped to 400 `body_too_deep` by lib/gateway/errors.ts). */
export class BodyTooDeepError extends Error {
	/** body-parser keeps `status` and `type` of an error thrown by `verify` */
	readonly status = 400;
	readonly type = "entity.too.deep";
	constructor(max: number) {
		super(messageOf("body_too_deep", max));
		this.name = "BodyTooDeepError";
	}
}

/**
 * The error a body parser's `verify` hook throws for a JSON body declared in a
 * charset other than UTF-8 (mapped to 415 `unsupported_media_type` by
 * lib/gateway/errors.ts, as body-parser's own `charset.unsupported`).
 */
export class UnsupportedCharsetError extends Error {
	/** body-parser keeps `status` and `type` of an error thrown by `verify` */
	readonly status = 415;
	readonly type = "charset.unsupported";
	constructor(charset: string) {
		super(`Unsupported charset "${charset.slice(0, 40)}": JSON bodies are UTF-8`);
		this.name = "UnsupportedCharsetError";
	}
}

/**
 * `verify(req, res, buf, encoding)` hook of body-parser's JSON parser (the /v1
 * and dev IdP routes), run on the raw (already decompressed) bytes before
 * they are decoded and parsed:
 * - throws {@link UnsupportedCharsetError} (415) when the request declares a
 *   `charset` other than UTF-8 (body-parser would accept any `utf-*` label
 *   iconv-lite knows: UTF-7, UTF-16, UTF-32…; none is JSON's interchange
 *   encoding, and decoding them could fail after the checks below);
 * - throws {@link BodyTooDeepError} (400) when the body nests deeper than `max`
 *   (the UTF-8 bytes are scanned as they are).
 * `encoding` is the request's charset, lower-cased, or body-parser's default
 * ("utf-8") when none is declared.
 */
export function verifyJsonDepth(max = MAX_JSON_DEPTH) {
	return (_req: unknown, _res: unknown, buf: Buffer, encoding: string | null): void => {
		const enc = (encoding ?? "utf-8").toLowerCase();
		// RFC 8259 §8.1: JSON exchanged between systems is UTF-8 (body-parser already refuses labels not starting "utf-")
		if (enc !== "utf-8") throw new UnsupportedCharsetError(enc);
		if (jsonTooDeep(buf, max)) throw new BodyTooDeepError(max);
	};
}
