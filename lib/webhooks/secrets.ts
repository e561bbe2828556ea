/**
 * Endpoint signing secrets (issue 11; Standard Webhooks): generated as
 * `whsec_<base64 of 32 random bytes>`, shown in full only by create and
 * rotate-secret, and stored encrypted at rest (AES-256-GCM) under a key
 * from configuration: `WEBHOOK_SECRET_KEY`, else derived from
 * `LABEL_LINK_SECRET` (which the zero-setup start generates; a deployment
 * sets it, or the process refuses to start), so nothing is needed to start
 * and a database dump alone never yields a secret. The service must sign, so
 * the secret is kept (encrypted), never only hashed.
 *
 * Signing (`webhook-signature`) uses the `standardwebhooks` library; during
 * the 24 h after a rotation the header carries a signature by each secret,
 * space-separated, as the specification allows, so a receiver still holding
 * the old secret verifies.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { setting } from "../platform/config";

/** Format tag of a stored secret (`v1.<iv>.<tag>.<ciphertext>`, base64url parts). */
const STORED_VERSION = "v1";

/** Domain separation of the key derived from `LABEL_LINK_SECRET`. */
const KEY_LABEL = "msa-webhook-secrets-v1";

/** True when a key can be derived (start-up check). */
export function secretKeyConfigured(): boolean {
	return !!(setting("WEBHOOK_SECRET_KEY") ?? setting("LABEL_LINK_SECRET"));
}

/**
 * The 32-byte AES key: SHA-256 of `WEBHOOK_SECRET_KEY`, else of
 * `LABEL_LINK_SECRET` with a label (read at each use).
 * @throws Error when neither is set (a deployment error)
 */
function key(): Buffer {
	const own = setting("WEBHOOK_SECRET_KEY");
	if (own) return createHash("sha256").update(own).digest();
	const link = setting("LABEL_LINK_SECRET");
	if (!link)
		throw new Error("WEBHOOK_SECRET_KEY (or LABEL_LINK_SECRET) is required to store webhook secrets");
	return createHash("sha256").update(`${KEY_LABEL}:${link}`).digest();
}

/** A new signing secret `whsec_…` (32 random bytes, base64). */
export function newSecret(): string {
	return `whsec_${randomBytes(32).toString("base64")}`;
}

/** Encrypts a secret for storage (AES-256-GCM, random 12-byte IV). */
export function sealSecret(secret: string): string {
	const iv = randomBytes(12);
	const c = createCipheriv("aes-256-gcm", key(), iv);
	const ct = Buffer.concat([c.update(secret, "utf8"), c.final()]);
	return [STORED_VERSION, iv, c.getAuthTag(), ct]
		.map((p) => (typeof p === "string" ? p : p.toString("base64url")))
		.join(".");
}

/**
 * Decrypts a stored secret.
 * @throws Error when it was sealed under another key or is not ours
 */
export function openSecret(stored: string): string {
	const [v, iv, tag, ct] = stored.split(".");
	if (v !== STORED_VERSION || !iv || !tag || ct === undefined)
		throw new Error("webhook secret: unknown format");
	const d = createDecipheriv("aes-256-gcm", key(), Buffer.from(iv, "base64url"));
	d.setAuthTag(Buffer.from(tag, "base64url"));
	return Buffer.concat([d.update(Buffer.from(ct, "base64url")), d.final()]).toString("utf8");
}

/** The three Standard Webhooks headers of one attempt. */
export interface SignedHeaders {
	"webhook-id": string;
	"webhook-timestamp": string;
	"webhook-signature": string;
}

/**
 * Signs `body` for message `msgId` at time `at` with each of `secrets`
 * (current first): `webhook-signature` is `v1,<sig>` per secret, space-separated.
 */
export function signHeaders(msgId: string, at: Date, body: string, secrets: string[]): SignedHeaders {
	const sigs = secrets.map((s) => new Webhook(s).sign(msgId, at, body));
	return {
		"webhook-id": msgId,
		"webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
		"webhook-signature": sigs.join(" "),
	};
}
