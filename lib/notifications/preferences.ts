/**
 * A merchant's buyer-message preferences (issue 29; docs/decisions/0109-buyer-messages.md):
 * `GET/PATCH /v1/settings/notifications` — which channels and events reach buyers, quiet hours
 * (IST; messages are held, not dropped), the messages' language, and whether a buyer's answer
 * to a failed delivery is applied at once (`apply`) or waits for the merchant (`approve`).
 *
 * Defaults (no row): SMS and e-mail on, WhatsApp off (it needs approved templates), every event
 * on, no quiet hours, English, `apply`.
 */
import type { NotificationPreferences, PreferencesPatch } from "../contracts";
import { validationFailed } from "../platform/errors";
import { IST_OFFSET_MS } from "../shared/ist-date";
import type { NotificationsDeps } from "./deps";
import { preferencesRow, type StoredPreferences, savePreferences } from "./message-store";
import { providerSettings } from "./providers";
import { MESSAGE_CHANNELS } from "./providers/types";
import { BUYER_EVENTS, type BuyerEvent } from "./templates";

/** The defaults of an account that never changed them. */
export const DEFAULT_PREFERENCES: Omit<StoredPreferences, "updated_at"> = {
	channels: ["sms", "email"],
	events: [...BUYER_EVENTS],
	quiet_start: null,
	quiet_end: null,
	language: "en",
	ndr_answers: "apply",
};

/** Preferences as the modules use them (a row or the defaults). */
export type Preferences = Omit<StoredPreferences, "updated_at"> & { updated_at: Date | null };

/** The account's preferences (the defaults when never set). */
export async function preferencesOf(deps: NotificationsDeps, sender: number): Promise<Preferences> {
	return (await preferencesRow(deps.db, sender)) ?? { ...DEFAULT_PREFERENCES, updated_at: null };
}

/** `HH:MM` of minutes after midnight. */
const hhmm = (m: number): string =>
	`${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`;

/** The API view of preferences. */
export function preferencesView(p: Preferences): NotificationPreferences {
	return {
		channels: {
			sms: p.channels.includes("sms"),
			whatsapp: p.channels.includes("whatsapp"),
			email: p.channels.includes("email"),
		},
		events: Object.fromEntries(BUYER_EVENTS.map((e) => [e, p.events.includes(e)])) as Record<
			BuyerEvent,
			boolean
		>,
		quiet_hours:
			p.quiet_start === null || p.quiet_end === null
				? null
				: { start: hhmm(p.quiet_start), end: hhmm(p.quiet_end) },
		language: p.language,
		ndr_buyer_answers: p.ndr_answers,
		providers: providerSettings(),
		updated_at: p.updated_at ? new Date(p.updated_at).toISOString() : null,
	};
}

/** Minutes of `HH:MM` (00:00–23:59). */
function minutesOf(s: string): number {
	const [h, m] = s.split(":").map(Number);
	return h * 60 + m;
}

/**
 * `PATCH /v1/settings/notifications`: applies any subset (channels and events as partial maps of
 * booleans, `quiet_hours` `{start, end}` or null, `language`, `ndr_buyer_answers`). → the view.
 * @throws 400 `validation_failed` (`body: no updatable field`; `quiet_hours: start and end must differ`)
 */
export async function changePreferences(
	deps: NotificationsDeps,
	sender: number,
	patch: PreferencesPatch,
): Promise<NotificationPreferences> {
	const keys = ["channels", "events", "quiet_hours", "language", "ndr_buyer_answers"] as const;
	if (!keys.some((k) => patch[k] !== undefined)) throw validationFailed(["body: no updatable field"]);
	const now = await preferencesOf(deps, sender);
	const channels = new Set(now.channels);
	for (const [c, on] of Object.entries(patch.channels ?? {}))
		if (on === true) channels.add(c);
		else if (on === false) channels.delete(c);
	const events = new Set(now.events);
	for (const [e, on] of Object.entries(patch.events ?? {}))
		if (on === true) events.add(e);
		else if (on === false) events.delete(e);
	let { quiet_start, quiet_end } = now;
	if (patch.quiet_hours === null) {
		quiet_start = null;
		quiet_end = null;
	} else if (patch.quiet_hours) {
		quiet_start = minutesOf(patch.quiet_hours.start);
		quiet_end = minutesOf(patch.quiet_hours.end);
		if (quiet_start === quiet_end) throw validationFailed(["quiet_hours: start and end must differ"]);
	}
	const saved = await savePreferences(deps.db, sender, {
		channels: MESSAGE_CHANNELS.filter((c) => channels.has(c)),
		events: BUYER_EVENTS.filter((e) => events.has(e)),
		quiet_start,
		quiet_end,
		language: patch.language ?? now.language,
		ndr_answers: patch.ndr_buyer_answers ?? now.ndr_answers,
	});
	return preferencesView(saved);
}

/**
 * When a message made at `now` may be sent: null (now) outside quiet hours, else the end of
 * the quiet hours (IST) as a UTC instant. A window may span midnight (`21:00`–`08:00`).
 */
export function holdUntil(p: Pick<Preferences, "quiet_start" | "quiet_end">, now: Date): Date | null {
	if (p.quiet_start === null || p.quiet_end === null) return null;
	const ist = new Date(now.getTime() + IST_OFFSET_MS);
	const minute = ist.getUTCHours() * 60 + ist.getUTCMinutes();
	const { quiet_start: s, quiet_end: e } = p;
	const inside = s < e ? minute >= s && minute < e : minute >= s || minute < e;
	if (!inside) return null;
	const minutesToEnd = (e - minute + 1440) % 1440;
	const end = new Date(now.getTime() + minutesToEnd * 60_000);
	end.setUTCSeconds(0, 0);
	return end;
}
