/**
 * Settings of the SMTP e-mail provider of buyer messages (Karrio-style: settings, proxy, mapper,
 * index; lib/notifications/providers/types.ts). Read from the environment when the provider is
 * built, only through {@link setting} (lib/platform/config.ts declares the variables).
 *
 * Environment:
 * - `SMTP_URL` → the submission server, `smtp://user:pass@host:port` (STARTTLS when the server
 *   offers it) or `smtps://user:pass@host:port` (TLS from the first byte), as nodemailer reads a
 *   connection URL; user and password percent-encoded. A Secret: never logged, never repeated in
 *   an error message.
 * - `SMTP_FROM` → the sender address (a bare `local@domain`): the From address and envelope
 *   sender; its domain names our Message-IDs (`<msa-<id>@domain>`).
 * - `SMTP_TIMEOUT_MS` → connection, greeting and per-answer timeout in ms (default 15000).
 */
import { setting } from "../../../platform/config";

/** Connection settings of the SMTP provider. */
export interface SmtpSettings {
	/** `SMTP_URL` as configured (a Secret: holds the password; never logged) */
	url: string;
	/** the password of {@link SmtpSettings.url} as written and decoded (none: empty): scrubbed from any error text */
	secrets: string[];
	/** `SMTP_FROM`: the sender address, `local@domain` */
	from: string;
	/** the domain of {@link SmtpSettings.from}, lower case (right-hand side of our Message-IDs) */
	fromDomain: string;
	/** connection, greeting and per-answer timeout, ms */
	timeoutMs: number;
}

/**
 * A bare address `local@domain` (RFC 5321 Mailbox without quoted local parts): no spaces, no
 * brackets, quotes, commas or semicolons (which would make a list or a display name), one `@`,
 * a dotted domain of letters, digits and hyphens (or an already punycoded one).
 */
const BARE_ADDRESS =
	/^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+)$/;

/** Whether `s` is one bare address `local@domain` (see {@link BARE_ADDRESS}); at most 254 characters (RFC 5321 §4.5.3.1.3). */
export function isBareAddress(s: string): boolean {
	return s.length <= 254 && BARE_ADDRESS.test(s);
}

/**
 * Builds the SMTP settings from `env` (only through {@link setting}).
 * @throws Error when `SMTP_URL` or `SMTP_FROM` is missing, `SMTP_URL` is not an `smtp://` /
 *   `smtps://` URL with a host (the message never repeats the URL: it holds the password),
 *   `SMTP_FROM` is not a bare address, or `SMTP_TIMEOUT_MS` is not allowed (lib/platform/config.ts)
 */
export function smtpSettings(env: NodeJS.ProcessEnv = process.env): SmtpSettings {
	const url = setting("SMTP_URL", env);
	if (!url) throw new Error("SMTP_URL is not set");
	let parsed: URL;
	try {
		parsed = new URL(url);
	} catch {
		throw new Error("SMTP_URL must be an smtp:// or smtps:// URL (value not shown: it holds the password)");
	}
	if ((parsed.protocol !== "smtp:" && parsed.protocol !== "smtps:") || !parsed.hostname)
		throw new Error(
			"SMTP_URL must be an smtp:// or smtps:// URL with a host (value not shown: it holds the password)",
		);
	const secrets = new Set<string>();
	if (parsed.password) {
		secrets.add(parsed.password);
		try {
			secrets.add(decodeURIComponent(parsed.password));
		} catch {
			/* not valid percent-encoding: nodemailer keeps it as written */
		}
	}
	const from = setting("SMTP_FROM", env);
	if (!from) throw new Error("SMTP_FROM is not set");
	if (!isBareAddress(from)) throw new Error(`SMTP_FROM must be a bare address local@domain (got "${from}")`);
	return {
		url,
		secrets: [...secrets],
		from,
		fromDomain: from.slice(from.lastIndexOf("@") + 1).toLowerCase(),
		timeoutMs: setting("SMTP_TIMEOUT_MS", env),
	};
}
