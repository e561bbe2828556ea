/**
 * The publishers' side of merchant events (issue 11;
 * docs/decisions/0044-merchant-webhooks.md): each publishing service (intake,
 * booking, ndr, billing) keeps an `<schema>.event_outbox` table, written in the same
 * transaction as the state change (by a trigger of that service's migrations:
 * an order row inserted, a seq-2 booking `order_update` outbox row, an NDR
 * case opened or closed; by billing's statement that opens a weight discrepancy), and runs an {@link EventOutboxRelay} that publishes
 * the rows to the durable channel `merchant.events` (lib/platform/channels.ts;
 * acknowledged by JetStream / Redis) and marks them delivered. The rows of one
 * relay round (≤ 200, oldest first) travel as ONE message
 * {@link MerchantEventBatch} (`msgId` derived from the row ids, so JetStream
 * drops a re-publish of the same round): a bulk import's 85,000 order.created
 * events are ~430 acknowledged publishes, not 85,000 (each a NATS request: ~10
 * s of CPU in the importing process and as much in the consumer). The consumer
 * stores each event once by its `event_id`, so a round taken again after a
 * crash and published with other rows adds nothing twice. The relay wakes on
 * the table's `NOTIFY` (sent at commit, naming the smallest id the insert
 * added: the pass reads from there; received over the process's one LISTEN
 * connection, lib/platform/pg-listen.ts) and polls every `EVENT_OUTBOX_POLL_MS`
 * (1000) from the table's start as a fallback; passes begin at most every
 * `EVENT_OUTBOX_PACE_MS` (25), so under a stream of commits one pass carries
 * the events of several (docs/decisions/0139-paced-event-relay.md); a round's rows are locked
 * `FOR UPDATE SKIP LOCKED` in the transaction that publishes and marks them,
 * so several pods of a service share the work; a failed publish is retried
 * with capped exponential backoff (lib/platform/outbox.ts
 * `outboxRetryDelayMs`).
 */
import { createHash } from "node:crypto";
import type { ServiceBroker } from "moleculer";
import type { Sequelize } from "sequelize";
import { MERCHANT_EVENTS_CHANNEL, type MerchantEvent, type MerchantEventBatch } from "../contracts";
import { publishToChannel } from "./channels";
import { loadConfig, setting } from "./config";
import { exec, type Migration, select } from "./db";
import { outboxRetryDelayMs } from "./outbox";
import { listen } from "./pg-listen";

/** Schemas that keep an event outbox. */
export type EventOutboxSchema = "intake" | "booking" | "ndr" | "billing" | "warehouses";

/** The NOTIFY channel of a schema's event outbox. */
export function eventOutboxChannel(schema: EventOutboxSchema): string {
	return `msa_event_outbox_${schema}`;
}

/**
 * SQL creating `<schema>.event_outbox` (id, the event as JSON, when due, when
 * delivered, tries, last error) and the statement trigger that NOTIFYs the
 * relay at commit. For the publisher's migration.
 */
export function eventOutboxDdl(schema: EventOutboxSchema): string[] {
	return [
		`CREATE TABLE IF NOT EXISTS ${schema}.event_outbox (
			id bigserial PRIMARY KEY,
			event jsonb NOT NULL,
			next_attempt_at timestamptz NOT NULL DEFAULT now(),
			delivered_at timestamptz NULL,
			tries integer NOT NULL DEFAULT 0,
			last_error text NULL,
			created_at timestamptz NOT NULL DEFAULT now()
		)`,
		`CREATE INDEX IF NOT EXISTS event_outbox_due ON ${schema}.event_outbox (next_attempt_at, id) WHERE delivered_at IS NULL`,
		`CREATE OR REPLACE FUNCTION ${schema}.event_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN PERFORM pg_notify('${eventOutboxChannel(schema)}', ''); RETURN NULL; END $$`,
		`DROP TRIGGER IF EXISTS event_outbox_notify ON ${schema}.event_outbox`,
		`CREATE TRIGGER event_outbox_notify AFTER INSERT ON ${schema}.event_outbox
		 FOR EACH STATEMENT EXECUTE FUNCTION ${schema}.event_outbox_notify()`,
	];
}

/**
 * A migration of a publishing service making its event outbox announce what
 * each insert added (docs/decisions/0118-event-outbox-ranges.md): the
 * statement trigger NOTIFYs the smallest id the statement inserted (the
 * payload, decimal text; no notification for an insert of no rows), so the
 * relay woken by it reads from there (`id >= that`) instead of from the
 * table's start; the id-ordered `(id) WHERE delivered_at IS NULL` index
 * (lib/platform/outbox.ts `undeliveredByIdMigration`'s, under the same
 * name) replaces the `(next_attempt_at, id)` one where a schema still has it.
 */
export function eventOutboxRangesMigration(name: string, schema: EventOutboxSchema): Migration {
	return {
		name,
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(
				`CREATE INDEX IF NOT EXISTS event_outbox_undelivered_id ON ${schema}.event_outbox (id) WHERE delivered_at IS NULL`,
			);
			await q(`DROP INDEX IF EXISTS ${schema}.event_outbox_due`);
			await q(`CREATE OR REPLACE FUNCTION ${schema}.event_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
				DECLARE lo bigint;
				BEGIN
					SELECT min(id) INTO lo FROM new_rows;
					IF lo IS NOT NULL THEN PERFORM pg_notify('${eventOutboxChannel(schema)}', lo::text); END IF;
					RETURN NULL;
				END $$`);
			await q(`DROP TRIGGER IF EXISTS event_outbox_notify ON ${schema}.event_outbox`);
			await q(`CREATE TRIGGER event_outbox_notify AFTER INSERT ON ${schema}.event_outbox
				REFERENCING NEW TABLE AS new_rows
				FOR EACH STATEMENT EXECUTE FUNCTION ${schema}.event_outbox_notify()`);
		},
	};
}

/**
 * Where a relay woken by notification `payload` must read from: the smallest
 * id the notifying insert added ({@link eventOutboxRangesMigration}), or 0 (the
 * table's start) for any other payload (a trigger from before that migration
 * sends an empty one).
 */
export function notifiedFrom(payload: string | undefined): number {
	const id = payload && /^[1-9][0-9]{0,18}$/.test(payload) ? Number(payload) : 0;
	return Number.isSafeInteger(id) ? id : 0;
}

/** Rows taken per relay round (locked, published, marked in one transaction), sent as one message (~300 bytes an event: far below NATS's 1 MB). */
const BATCH = 200;
/** Base of the retry backoff of a failed publish (ms). */
const RETRY_BASE_MS = 500;
/** Publish acknowledgement budget (ms). */
const PUBLISH_TIMEOUT_MS = 5_000;

/** Resolves `p` or rejects after `ms`. */
function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	return Promise.race([
		p,
		new Promise<T>((_, reject) => {
			timer = setTimeout(() => reject(new Error(`no acknowledgement within ${ms} ms`)), ms);
		}),
	]).finally(() => clearTimeout(timer));
}

/**
 * JetStream message id of a relay round: the schema and its row ids (a
 * SHA-256, so any number of ids fits), the same for a re-publish of the same
 * rows after a lost acknowledgement.
 */
export function batchMsgId(schema: EventOutboxSchema, ids: number[]): string {
	return `${schema}:${createHash("sha256").update(ids.join(",")).digest("base64url")}`;
}

/** What the relay logs to. */
interface RelayLogger {
	warn(msg: string): void;
}

/** Relays one schema's event outbox to the `merchant.events` channel (see the module doc). */
export class EventOutboxRelay {
	private unlisten: (() => Promise<void>) | undefined;
	private timer: NodeJS.Timeout | undefined;
	private running: Promise<unknown> | undefined;
	private again = false;
	private stopped = false;
	/** When the last pass began (`performance.now()`, ms): the next begins {@link paceMs} after it at the earliest. */
	private lastPassAt = Number.NEGATIVE_INFINITY;
	/**
	 * Where the next pass reads from: the smallest id announced by a
	 * notification since the last pass began, 0 when a pass from the table's
	 * start is due (at start, on the poll timer), null when nothing is pending.
	 */
	private from: number | null = 0;

	constructor(
		private readonly db: Sequelize,
		private readonly schema: EventOutboxSchema,
		private readonly broker: ServiceBroker,
		private readonly logger: RelayLogger,
		private readonly pollMs = setting("EVENT_OUTBOX_POLL_MS"),
		private readonly paceMs = setting("EVENT_OUTBOX_PACE_MS"),
	) {}

	/**
	 * Starts listening and polling. The LISTEN is on the process's one shared
	 * connection (lib/platform/pg-listen.ts) and best effort: polling covers its loss.
	 */
	async start(): Promise<void> {
		this.stopped = false;
		this.from = 0;
		this.timer = setInterval(() => this.wake(0), this.pollMs);
		try {
			const unlisten = await listen(loadConfig().databaseUrl, eventOutboxChannel(this.schema), {
				onNotify: (payload) => this.wake(notifiedFrom(payload)),
				onError: (err) => this.logger.warn(`${this.schema} event outbox listener: ${err.message}`),
			});
			// stopped while the LISTEN was in flight: leave the channel at once
			if (this.stopped) await unlisten();
			else this.unlisten = unlisten;
		} catch (err) {
			this.logger.warn(
				`${this.schema} event outbox: LISTEN failed (polling only): ${(err as Error).message}`,
			);
		}
		this.kick();
	}

	/** Stops listening and polling; waits for the round in progress. */
	async stop(): Promise<void> {
		this.stopped = true;
		if (this.timer) clearInterval(this.timer);
		this.timer = undefined;
		await this.unlisten?.().catch(() => undefined);
		this.unlisten = undefined;
		await this.running;
	}

	/**
	 * What a commit notification does (`from`: {@link notifiedFrom} of its
	 * payload) and the poll timer does (`from` 0): notes that rows from id
	 * `from` on may be due and runs a pass now, or right after the one in
	 * progress.
	 */
	wake(from: number): void {
		this.from = this.from === null ? from : Math.min(this.from, from);
		this.kick();
	}

	/** Resolves once no pass is running or due to run after the one in progress. */
	async idle(): Promise<void> {
		while (this.running) await this.running;
	}

	/**
	 * Runs a relay pass from where {@link wake} noted (the start when nothing was): now, or right after the one in
	 * progress, but never sooner than {@link paceMs} after the last one began (docs/decisions/0139-paced-event-relay.md).
	 * A wake while a pass runs or waits is served by the next pass, which reads from the smallest id noted.
	 */
	private kick(): void {
		if (this.stopped) return;
		if (this.running) {
			this.again = true;
			return;
		}
		const wait = this.lastPassAt + this.paceMs - performance.now();
		if (wait > 0) {
			this.running = new Promise<void>((ok) => setTimeout(ok, wait)).finally(() => {
				this.running = undefined;
				// the pass about to begin serves every wake of the wait
				this.again = false;
				this.kick();
			});
			return;
		}
		this.lastPassAt = performance.now();
		const from = this.from ?? 0;
		this.from = null;
		this.running = this.pass(from)
			.catch((err: Error) => this.logger.warn(`${this.schema} event outbox relay: ${err.message}`))
			.finally(() => {
				this.running = undefined;
				if (this.again) {
					this.again = false;
					this.kick();
				}
			});
	}

	/**
	 * Publishes due rows with ids from `from` on (default: all), a round of at
	 * most {@link BATCH} at a time, until a round comes back short or a publish
	 * fails; each round reads on after the last id of the one before. Answers
	 * how many were delivered.
	 *
	 * Why `from`: a delivered row leaves a dead entry in the undelivered index
	 * until VACUUM, and PostgreSQL's bitmap scan of that index visits each of
	 * them and its heap block, so a round read from the table's start costs in
	 * proportion to every row delivered since the last VACUUM. A notified pass
	 * reads from the smallest id committed since the last pass began; rows it
	 * cannot see there (in backoff, or left by a relay that died) are read by
	 * the poll timer's pass from the start.
	 *
	 * A round is one transaction: its rows are locked `FOR UPDATE SKIP
	 * LOCKED` (other relays skip them), published, then marked delivered, so
	 * a delivered row is written once (a lease written before the publish
	 * cost a second UPDATE of each row: ~1/3 of the relay's PostgreSQL time
	 * in a bulk import). A relay that dies mid-round releases its rows at
	 * once (its session ends); a published round whose commit is lost is
	 * published again with the same JetStream `msgId` and the consumer's
	 * per-event key adds nothing twice. A failed publish counts a try and
	 * reschedules the round's rows with backoff, in the same transaction.
	 */
	async pass(from = 0): Promise<number> {
		let delivered = 0;
		let after = from;
		for (;;) {
			const round = await this.db.transaction(async (transaction) => {
				const rows = await select<{ id: string; event: MerchantEvent; tries: number }>(
					this.db,
					`SELECT id, event, tries FROM ${this.schema}.event_outbox
					 WHERE delivered_at IS NULL AND next_attempt_at <= now() AND id >= $2
					 ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
					[BATCH, after],
					transaction,
				);
				if (!rows.length) return { n: 0, failed: false, last: after };
				const ids = rows.map((r) => Number(r.id));
				const batch: MerchantEventBatch = { events: rows.map((r) => r.event) };
				try {
					await withTimeout(
						publishToChannel(this.broker, MERCHANT_EVENTS_CHANNEL, batch, {
							msgId: batchMsgId(this.schema, ids),
						}),
						PUBLISH_TIMEOUT_MS,
					);
				} catch (err) {
					const msg = (err as Error).message;
					this.logger.warn(
						`${this.schema} events ${ids[0]}..${ids[ids.length - 1]} (${ids.length}) not published: ${msg}`,
					);
					await exec(
						this.db,
						`UPDATE ${this.schema}.event_outbox o
						 SET tries = o.tries + 1, next_attempt_at = now() + make_interval(secs => u.ms / 1000), last_error = $3
						 FROM unnest($1::bigint[], $2::double precision[]) AS u(id, ms) WHERE o.id = u.id`,
						[ids, rows.map((r) => outboxRetryDelayMs(r.tries + 1, RETRY_BASE_MS)), msg.slice(0, 1000)],
						transaction,
					);
					return { n: 0, failed: true, last: after };
				}
				await exec(
					this.db,
					`UPDATE ${this.schema}.event_outbox SET delivered_at = now(), tries = tries + 1, last_error = NULL
					 WHERE id = ANY($1::bigint[])`,
					[ids],
					transaction,
				);
				return { n: ids.length, failed: false, last: ids[ids.length - 1] };
			});
			delivered += round.n;
			if (round.failed || round.n < BATCH || this.stopped) return delivered;
			after = round.last + 1;
		}
	}
}
