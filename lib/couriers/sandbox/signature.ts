/**
 * Signature of the sandbox couriers' scan push (lib/couriers/sandbox/wire.ts
 * {@link WirePushScan}): header `x-sandbox-signature: sha256=<hex>`, the hex
 * HMAC-SHA256 of the raw body bytes under the shared secret
 * (`SANDBOX_WEBHOOK_SECRET`, ./settings.ts). The simulator signs
 * ({@link signPush}); the adapter verifies ({@link verifyPushSignature}).
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** The `x-sandbox-signature` value of `raw` under `secret`: `sha256=<64 lower-case hex digits>`. */
export function signPush(raw: Buffer | string, secret: string): string {
	return `sha256=${createHmac("sha256", secret).update(raw).digest("hex")}`;
}

/**
 * Whether `header` is the signature of `raw` under `secret` (constant-time
 * comparison). A missing header, another scheme than `sha256=` or anything
 * but 64 hex digits → false, never a throw.
 */
export function verifyPushSignature(raw: Buffer, header: string | undefined, secret: string): boolean {
	const m = /^sha256=([0-9a-fA-F]{64})$/.exec(String(header ?? "").trim());
	if (!m) return false;
	const given = Buffer.from(m[1].toLowerCase(), "hex");
	const wanted = createHmac("sha256", secret).update(raw).digest();
	return given.length === wanted.length && timingSafeEqual(given, wanted);
}
