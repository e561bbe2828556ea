/**
 * Signature of the sandbox couriers' scan push (lib/couriers/sandbox/wire.ts
 * {@link WirePushScan}; docs/decisions/0078-sandbox-scan-signatures.md), in the
 * manner of Stripe and Standard Webhooks: header `x-sandbox-timestamp: <unix
 * seconds>` and header `x-sandbox-signature: sha256=<hex>`, the hex
 * HMAC-SHA256 of `<timestamp>.<raw body bytes>` under the installation's key
 * (`SANDBOX_WEBHOOK_SECRET`, ./settings.ts; no default). A push is authentic
 * when the signature matches and the timestamp is at most
 * {@link PUSH_MAX_AGE_S} seconds old and at most {@link PUSH_MAX_SKEW_S}
 * seconds ahead; a push seen before is refused by booking
 * (lib/booking/push-replay.ts, keyed by {@link pushReplayKey}). The simulator
 * signs ({@link signedPushHeaders}); the adapter verifies ({@link checkPushSignature}).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { PUSH_SIGNATURE_HEADER, PUSH_TIMESTAMP_HEADER } from "./wire";

/** Oldest accepted push timestamp: this many seconds before now. */
export const PUSH_MAX_AGE_S = 300;
/** Newest accepted push timestamp: this many seconds after now (clock skew). */
export const PUSH_MAX_SKEW_S = 60;

/** The HMAC-SHA256 of `<timestamp>.<raw>` under `secret` (32 bytes). */
function mac(raw: Buffer | string, secret: string, timestamp: number): Buffer {
	return createHmac("sha256", secret)
		.update(`${timestamp}.`)
		.update(typeof raw === "string" ? Buffer.from(raw, "utf8") : raw)
		.digest();
}

/**
 * The `x-sandbox-signature` value of `raw` sent at `timestamp` (unix seconds)
 * under `secret`: `sha256=<64 lower-case hex digits>` of `<timestamp>.<raw>`.
 */
export function signPush(raw: Buffer | string, secret: string, timestamp: number): string {
	return `sha256=${mac(raw, secret, timestamp).toString("hex")}`;
}

/**
 * The headers signing `raw` now (`nowMs`, ms since the epoch):
 * `x-sandbox-timestamp` (unix seconds) and `x-sandbox-signature`.
 */
export function signedPushHeaders(
	raw: Buffer | string,
	secret: string,
	nowMs = Date.now(),
): Record<typeof PUSH_TIMESTAMP_HEADER | typeof PUSH_SIGNATURE_HEADER, string> {
	const ts = Math.floor(nowMs / 1000);
	return { [PUSH_TIMESTAMP_HEADER]: String(ts), [PUSH_SIGNATURE_HEADER]: signPush(raw, secret, ts) };
}

/** The verdict of {@link checkPushSignature}. */
export type PushVerdict = "ok" | "no_secret" | "missing" | "stale" | "mismatch";

/**
 * Checks a pushed body's headers (lower-cased names) against `secret` at
 * `nowMs`: `no_secret` (no key configured: every push is refused),
 * `missing` (either header absent or malformed: the timestamp must be 1–12
 * digits, the signature `sha256=` and 64 hex digits), `stale` (timestamp more
 * than {@link PUSH_MAX_AGE_S} s old or {@link PUSH_MAX_SKEW_S} s ahead),
 * `mismatch` (wrong signature; constant-time comparison), else `ok`.
 * Never throws.
 */
export function checkPushSignature(
	raw: Buffer,
	headers: Record<string, string | undefined>,
	secret: string,
	nowMs = Date.now(),
): PushVerdict {
	if (!secret) return "no_secret";
	const ts = /^\d{1,12}$/.exec(String(headers[PUSH_TIMESTAMP_HEADER] ?? "").trim());
	const sig = /^sha256=([0-9a-fA-F]{64})$/.exec(String(headers[PUSH_SIGNATURE_HEADER] ?? "").trim());
	if (!ts || !sig) return "missing";
	const at = Number(ts[0]);
	const now = Math.floor(nowMs / 1000);
	if (at < now - PUSH_MAX_AGE_S || at > now + PUSH_MAX_SKEW_S) return "stale";
	const given = Buffer.from(sig[1], "hex");
	const wanted = mac(raw, secret, at);
	return given.length === wanted.length && timingSafeEqual(given, wanted) ? "ok" : "mismatch";
}

/**
 * The replay key of an authentic push: its signature, lower-cased hex (the
 * HMAC covers the timestamp and the body, so a resend at another second is
 * another key; the case is normalised so `SHA256` digits in upper case are
 * the same push). Null when the header is malformed.
 */
export function pushReplayKey(headers: Record<string, string | undefined>): string | null {
	const sig = /^sha256=([0-9a-fA-F]{64})$/.exec(String(headers[PUSH_SIGNATURE_HEADER] ?? "").trim());
	return sig ? sig[1].toLowerCase() : null;
}
