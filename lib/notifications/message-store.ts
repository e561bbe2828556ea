/**
 * SQL of buyer messages (schema `notifications`, ./migrations.ts 0002): the accounts'
 * preferences, the messages and their states, opt-outs.
 * Every function takes the `notifications` connection; none calls another service.
 */
import type { Sequelize, Transaction } from "sequelize";
import { exec, select } from "../platform/db";
import type { MessageChannel, MessageEvent, MessageLang } from "./providers/types";

/** The states of a message (docs/decisions/0109-buyer-messages.md). */
export type MessageStatus = "queued" | "held" | "sent" | "delivered" | "failed" | "simulated" | "suppressed";

/** A stored preference row (no row: the defaults of ./preferences.ts). */
export interface StoredPreferences {
	channels: string[];
	events: string[];
	quiet_start: number | null;
	quiet_end: number | null;
	language: MessageLang;
	ndr_answers: "apply" | "approve";
	updated_at: Date;
}

/** The account's stored preferences, or undefined. */
export async function preferencesRow(db: Sequelize, sender: number): Promise<StoredPreferences | undefined> {
	const [row] = await select<StoredPreferences>(
		db,
		`SELECT channels, events, quiet_start, quiet_end, language, ndr_answers, updated_at
		 FROM notifications.preferences WHERE sender_id = $1`,
		[sender],
	);
	return row;
}

/** Writes the account's whole preferences (upsert); the row after. */
export async function savePreferences(
	db: Sequelize,
	sender: number,
	p: Omit<StoredPreferences, "updated_at">,
): Promise<StoredPreferences> {
	const [row] = await select<StoredPreferences>(
		db,
		`INSERT INTO notifications.preferences (sender_id, channels, events, quiet_start, quiet_end, language, ndr_answers)
		 VALUES ($1, $2, $3, $4, $5, $6, $7)
		 ON CONFLICT (sender_id) DO UPDATE SET channels = $2, events = $3, quiet_start = $4, quiet_end = $5,
		   language = $6, ndr_answers = $7, updated_at = now()
		 RETURNING channels, events, quiet_start, quiet_end, language, ndr_answers, updated_at`,
		[sender, p.channels, p.events, p.quiet_start, p.quiet_end, p.language, p.ndr_answers],
	);
	return row;
}

/** A stored message. */
export interface MessageRow {
	id: number;
	sender_id: number;
	order_id: number | null;
	awb_number: string | null;
	event: MessageEvent;
	event_key: string;
	seq: number;
	channel: MessageChannel;
	lang: MessageLang;
	recipient: string;
	vars: Record<string, string>;
	body: string;
	subject: string | null;
	provider: string | null;
	provider_ref: string | null;
	status: MessageStatus;
	tries: number;
	hold_until: Date | null;
	error: string | null;
	created_at: Date;
	sent_at: Date | null;
	delivered_at: Date | null;
	failed_at: Date | null;
	updated_at: Date;
}

/** A message to record (its first state decided by the caller: queued, held or suppressed). */
export type NewMessage = Pick<
	MessageRow,
	| "sender_id"
	| "order_id"
	| "awb_number"
	| "event"
	| "event_key"
	| "seq"
	| "channel"
	| "lang"
	| "recipient"
	| "vars"
	| "body"
	| "hold_until"
> & { subject: string; status: "queued" | "held" | "suppressed" };

const num = (r: MessageRow): MessageRow => ({
	...r,
	id: Number(r.id),
	sender_id: Number(r.sender_id),
	order_id: r.order_id === null ? null : Number(r.order_id),
});

/**
 * Records a message once per (`event_key`, `channel`): the new row, or the row already there
 * (a redelivered event), with `created` saying which.
 */
export async function insertMessage(
	db: Sequelize,
	m: NewMessage,
): Promise<{ row: MessageRow; created: boolean }> {
	const ins = await select<MessageRow>(
		db,
		`INSERT INTO notifications.messages (sender_id, order_id, awb_number, event, event_key, seq, channel, lang,
		   recipient, vars, body, subject, status, hold_until)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12, $13, $14)
		 ON CONFLICT (event_key, channel) DO NOTHING RETURNING *`,
		[
			m.sender_id,
			m.order_id,
			m.awb_number,
			m.event,
			m.event_key,
			m.seq,
			m.channel,
			m.lang,
			m.recipient,
			JSON.stringify(m.vars),
			m.body,
			m.subject,
			m.status,
			m.hold_until,
		],
	);
	if (ins[0]) return { row: num(ins[0]), created: true };
	const [row] = await select<MessageRow>(
		db,
		"SELECT * FROM notifications.messages WHERE event_key = $1 AND channel = $2",
		[m.event_key, m.channel],
	);
	return { row: num(row), created: false };
}

/** One message by id, or null. */
export async function messageById(db: Sequelize, id: number): Promise<MessageRow | null> {
	const [row] = await select<MessageRow>(db, "SELECT * FROM notifications.messages WHERE id = $1", [id]);
	return row ? num(row) : null;
}

/** The newest seq of a message already recorded for an AWB (0 when none). */
export async function latestSeq(db: Sequelize, awb_number: string): Promise<number> {
	const [row] = await select<{ s: number | null }>(
		db,
		"SELECT max(seq) AS s FROM notifications.messages WHERE awb_number = $1",
		[awb_number],
	);
	return Number(row?.s ?? 0);
}

/** A provider's answer to record (see ./providers/types.ts `SendResult`). */
export type Settlement =
	| { status: "sent" | "simulated"; provider: string; provider_ref: string }
	| { status: "failed"; provider: string; error: string }
	| { status: "suppressed" };

/**
 * Records a send's outcome on a message still `queued` or `held` (a message settled already is
 * left as it is: a job run twice changes nothing). Answers whether it changed.
 */
export async function settleMessage(db: Sequelize, id: number, s: Settlement): Promise<boolean> {
	const { count } = await exec(
		db,
		`UPDATE notifications.messages SET status = $2, provider = COALESCE($3, provider), provider_ref = $4, error = $5,
		   sent_at = CASE WHEN $2 = 'sent' THEN now() ELSE sent_at END,
		   failed_at = CASE WHEN $2 = 'failed' THEN now() ELSE failed_at END,
		   tries = tries + CASE WHEN $2 = 'suppressed' THEN 0 ELSE 1 END, hold_until = NULL, updated_at = now()
		 WHERE id = $1 AND status IN ('queued', 'held')`,
		[
			id,
			s.status,
			"provider" in s ? s.provider : null,
			"provider_ref" in s ? s.provider_ref : null,
			"error" in s ? s.error : null,
		],
	);
	return count > 0;
}

/** Counts a try that could not tell (the provider unreachable): the error kept, the message still pending. */
export async function noteTry(db: Sequelize, id: number, provider: string, error: string): Promise<void> {
	await exec(
		db,
		`UPDATE notifications.messages SET tries = tries + 1, provider = $2, error = $3, status = 'queued', updated_at = now()
		 WHERE id = $1 AND status IN ('queued', 'held')`,
		[id, provider, error],
	);
}

/**
 * A provider's delivery report: a `sent` message becomes `delivered` or `failed` (a report
 * never moves a message back, and one for an unknown id changes nothing). Answers the ids changed.
 */
export async function applyReport(
	db: Sequelize,
	provider: string,
	provider_ref: string,
	status: "delivered" | "failed",
	at: Date,
	error: string | null,
): Promise<number[]> {
	const rows = await select<{ id: string }>(
		db,
		`UPDATE notifications.messages SET status = $3,
		   delivered_at = CASE WHEN $3 = 'delivered' THEN $4::timestamptz ELSE delivered_at END,
		   failed_at = CASE WHEN $3 = 'failed' THEN $4::timestamptz ELSE failed_at END,
		   error = CASE WHEN $3 = 'failed' THEN $5 ELSE error END, updated_at = now()
		 WHERE provider = $1 AND provider_ref = $2 AND status = 'sent' RETURNING id`,
		[provider, provider_ref, status, at, error],
	);
	return rows.map((r) => Number(r.id));
}

/**
 * Messages the sweep re-adds: `queued` with no change since `olderThan`, `held` whose quiet hours
 * ended before it (a held message's delayed job is not re-added while it is still waiting).
 */
export async function pendingMessages(db: Sequelize, olderThan: Date, limit: number): Promise<MessageRow[]> {
	const rows = await select<MessageRow>(
		db,
		`SELECT * FROM notifications.messages
		 WHERE status IN ('queued', 'held') AND updated_at < $1 AND (status = 'queued' OR hold_until < $1)
		 ORDER BY updated_at LIMIT $2`,
		[olderThan, limit],
	);
	return rows.map(num);
}

/** An order's messages, oldest first (at most 200). */
export async function messagesOfOrder(
	db: Sequelize,
	sender: number,
	order_id: number,
): Promise<MessageRow[]> {
	const rows = await select<MessageRow>(
		db,
		"SELECT * FROM notifications.messages WHERE sender_id = $1 AND order_id = $2 ORDER BY id LIMIT 200",
		[sender, order_id],
	);
	return rows.map(num);
}

/** The newest failed-delivery message of each AWB (for the NDR list's `notification` field). */
export async function latestFailedDelivery(
	db: Sequelize,
	sender: number,
	awbs: string[],
): Promise<MessageRow[]> {
	if (awbs.length === 0) return [];
	const rows = await select<MessageRow>(
		db,
		`SELECT DISTINCT ON (awb_number) * FROM notifications.messages
		 WHERE sender_id = $1 AND awb_number = ANY($2) AND event = 'failed_delivery'
		 ORDER BY awb_number, id DESC`,
		[sender, awbs],
	);
	return rows.map(num);
}

/** Whether the account's buyer `recipient` opted out. */
export async function isOptedOut(db: Sequelize, sender: number, recipient: string): Promise<boolean> {
	const rows = await select(
		db,
		"SELECT 1 FROM notifications.opt_outs WHERE sender_id = $1 AND recipient = $2",
		[sender, recipient],
	);
	return rows.length > 0;
}

/**
 * Records opt-outs of `recipients` for `sender` (or, with `sender` null, for every account
 * that messaged one of them: a STOP reply reaches a shared sender number) and suppresses their
 * pending messages, in one transaction. Answers the opt-outs added.
 */
export async function optOut(
	db: Sequelize,
	sender: number | null,
	recipients: string[],
	source: "reply" | "link",
): Promise<number> {
	if (recipients.length === 0) return 0;
	return db.transaction(async (t: Transaction) => {
		const added = await select(
			db,
			`INSERT INTO notifications.opt_outs (sender_id, recipient, source)
			 SELECT DISTINCT m.sender_id, m.recipient, $3 FROM notifications.messages m
			 WHERE m.recipient = ANY($2) AND ($1::bigint IS NULL OR m.sender_id = $1)
			 UNION
			 SELECT $1::bigint, r, $3 FROM unnest($2::text[]) r WHERE $1::bigint IS NOT NULL
			 ON CONFLICT DO NOTHING RETURNING 1`,
			[sender, recipients, source],
			t,
		);
		await exec(
			db,
			`UPDATE notifications.messages SET status = 'suppressed', hold_until = NULL, updated_at = now()
			 WHERE recipient = ANY($2) AND ($1::bigint IS NULL OR sender_id = $1) AND status IN ('queued', 'held')`,
			[sender, recipients],
			t,
		);
		return added.length;
	});
}

/** How many test messages the account made since `since`. */
export async function testSendsSince(db: Sequelize, sender: number, since: Date): Promise<number> {
	const [row] = await select<{ n: string }>(
		db,
		"SELECT count(*) AS n FROM notifications.messages WHERE sender_id = $1 AND event = 'test' AND created_at >= $2",
		[sender, since],
	);
	return Number(row?.n ?? 0);
}
