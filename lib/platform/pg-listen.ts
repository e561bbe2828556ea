/**
 * One PostgreSQL LISTEN connection per process and database, shared by every
 * subscriber in the process (the event outbox relays of the services it runs:
 * lib/platform/merchant-events-outbox.ts; docs/decisions/0121-one-listen-connection.md,
 * issue 32).
 *
 * Why one: PostgreSQL 15 signals every backend that listens on any channel of
 * the database at each NOTIFY's commit, whatever the channel; each signalled
 * backend wakes, reads the notification queue and drops what it does not
 * listen to. With one connection per relay, a process running five services
 * woke five backends per NOTIFY where one would read it. One connection
 * listening on every channel its subscribers name is woken once.
 *
 * Best effort, as each relay's own connection was: a subscriber whose
 * connection fails or is lost is told through `onError` and relies on its poll
 * timer. A connection that was lost is replaced at the next subscription,
 * which listens again on every channel that still has subscribers.
 */
import { Client, type Notification } from "pg";
import { loadConfig } from "./config";

/** One subscriber of a channel. */
export interface ListenSubscriber {
	/** called with the payload of each notification on the channel (`''` for none) */
	onNotify(payload: string): void;
	/** called when the shared connection reports an error (after which it may be gone) */
	onError(err: Error): void;
}

/** The shared connection of one database URL, its channels and their subscribers. */
class ListenConnection {
	private client: Client | undefined;
	private readonly channels = new Map<string, Set<ListenSubscriber>>();
	/** Every change (connect, LISTEN, UNLISTEN, end) runs after the one before: no LISTEN on a connection being ended. */
	private chain: Promise<unknown> = Promise.resolve();

	constructor(private readonly url: string) {}

	/** Runs `op` after every change queued before it; answers its result. */
	private serial<T>(op: () => Promise<T>): Promise<T> {
		const run = this.chain.then(op, op);
		this.chain = run.catch(() => undefined);
		return run;
	}

	/**
	 * The connected client; when there is none (first use, or the last one was
	 * lost) a new one, listening on every channel that has subscribers.
	 */
	private async connected(): Promise<Client> {
		if (this.client) return this.client;
		// `<DB_APPLICATION_NAME>-listen` in pg_stat_activity (a name in the URL wins)
		const c = new Client({
			connectionString: this.url,
			application_name: `${loadConfig().dbApplicationName}-listen`,
		});
		c.on("notification", (n: Notification) => {
			for (const s of this.channels.get(n.channel) ?? []) s.onNotify(n.payload ?? "");
		});
		c.on("error", (err: Error) => {
			if (this.client === c) this.client = undefined;
			c.end().catch(() => undefined);
			for (const subs of this.channels.values()) for (const s of subs) s.onError(err);
		});
		c.on("end", () => {
			if (this.client === c) this.client = undefined;
		});
		try {
			await c.connect();
			for (const channel of this.channels.keys()) await c.query(`LISTEN ${channel}`);
		} catch (err) {
			await c.end().catch(() => undefined);
			throw err;
		}
		this.client = c;
		return c;
	}

	/** Adds `sub` to `channel`; LISTENs on the channel when it is new to the connection. Rejects when that fails. */
	add(channel: string, sub: ListenSubscriber): Promise<void> {
		return this.serial(async () => {
			const subs = this.channels.get(channel);
			if (subs && this.client) {
				subs.add(sub);
				return;
			}
			const c = await this.connected();
			// a channel that had subscribers is already listened to by a connection just opened
			if (!subs) await c.query(`LISTEN ${channel}`);
			this.channels.set(channel, new Set([...(subs ?? []), sub]));
		});
	}

	/** Removes `sub`; UNLISTENs a channel left without subscribers, and ends the connection left without channels. */
	remove(channel: string, sub: ListenSubscriber): Promise<void> {
		return this.serial(async () => {
			const subs = this.channels.get(channel);
			if (!subs?.delete(sub) || subs.size) return;
			this.channels.delete(channel);
			const c = this.client;
			if (!c) return;
			if (this.channels.size) {
				await c.query(`UNLISTEN ${channel}`).catch(() => undefined);
				return;
			}
			this.client = undefined;
			await c.end().catch(() => undefined);
		});
	}
}

/** The shared connection per database URL. */
const connections = new Map<string, ListenConnection>();

/** A channel name as LISTEN takes it unquoted (folded to lower case by PostgreSQL, as `pg_notify` names are compared). */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Subscribes `sub` to NOTIFY channel `channel` (lower-case identifier) of the
 * database at `url`, over the process's one LISTEN connection to it. Resolves
 * once the channel is listened to; rejects when the connection or the LISTEN
 * fails (the subscriber is then not added). Answers the unsubscribe, which
 * resolves once the channel is dropped (and the connection ended, when it was
 * the last).
 */
export async function listen(
	url: string,
	channel: string,
	sub: ListenSubscriber,
): Promise<() => Promise<void>> {
	if (!CHANNEL.test(channel)) throw new Error(`not a channel name: ${channel}`);
	let conn = connections.get(url);
	if (!conn) {
		conn = new ListenConnection(url);
		connections.set(url, conn);
	}
	const shared = conn;
	await shared.add(channel, sub);
	return () => shared.remove(channel, sub);
}
