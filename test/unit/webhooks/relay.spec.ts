/**
 * Event outbox relay (lib/platform/merchant-events-outbox.ts, issue 11 / issue 10's bulk
 * benchmark): due rows leave as one `merchant.events` message per round of at
 * most 200, oldest first, and are marked delivered; a round that cannot be
 * published stays in the outbox with a backoff and its error, and goes out
 * once the channel is back; a relay woken by a commit reads from the smallest
 * id that commit added (docs/decisions/0118-event-outbox-ranges.md), the poll
 * timer's pass from the table's start. Real PostgreSQL (the ndr schema's outbox, no ndr
 * service running) and the channels of an in-process broker (Redis Streams).
 */
import assert from "node:assert/strict";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { ServiceBroker } from "moleculer";
import { Client } from "pg";
import { MERCHANT_EVENTS_CHANNEL, type MerchantEvent, type MerchantEventBatch } from "../../../lib/contracts";
import { NDR_MIGRATIONS } from "../../../lib/ndr/migrations";
import { channelSubscriptions } from "../../../lib/platform/channels";
import { loadConfig } from "../../../lib/platform/config";
import { exec, getSequelize, migrate, select } from "../../../lib/platform/db";
import {
	batchMsgId,
	EventOutboxRelay,
	eventOutboxChannel,
	notifiedFrom,
} from "../../../lib/platform/merchant-events-outbox";
import brokerOptions from "../../../moleculer.config";
import { testBrokerOptions } from "../../helpers/broker";
import { eventually } from "../../helpers/poll";

describe("event outbox relay: one channel message per round", function () {
	this.timeout(30_000);
	const got: MerchantEventBatch[] = [];
	/** When each message of `got` arrived (`performance.now()`, ms). */
	const gotAt: number[] = [];
	let broker: ServiceBroker;
	const warnings: string[] = [];
	const logger = { warn: (m: string) => warnings.push(m) };
	const tag = `relay-${process.pid}-${Date.now()}`;

	before(async () => {
		await migrate(getSequelize(), "ndr", NDR_MIGRATIONS);
		// nothing else of this run may sit due in the outbox the relay under test drains
		await exec(getSequelize(), "UPDATE ndr.event_outbox SET delivered_at = now() WHERE delivered_at IS NULL");
		broker = new ServiceBroker(testBrokerOptions(false));
		const probe = {
			name: "relay-probe",
			channels: channelSubscriptions({
				[MERCHANT_EVENTS_CHANNEL]: {
					group: `probe-${tag}`,
					handler(payload) {
						// the relay publishes batches; a lone event (the older message shape) is not this probe's
						if ("events" in payload && payload.events.some((e) => e.event_id.startsWith(tag))) {
							got.push(payload);
							gotAt.push(performance.now());
						}
					},
				},
			}),
		};
		broker.createService(probe);
		await broker.start();
	});
	after(() => broker?.stop());

	/**
	 * Inserts `n` ndr.opened events of this spec, due now (or in an hour when `inBackoff`, as a failed
	 * round leaves them); answers their event ids in insertion order.
	 */
	async function insertEvents(n: number, from: number, inBackoff = false): Promise<string[]> {
		const events: MerchantEvent[] = Array.from({ length: n }, (_, i) => ({
			event_id: `${tag}:${from + i}`,
			type: "ndr.opened",
			sender_id: 7,
			order_id: from + i,
			occurred_at: new Date().toISOString(),
			data: { order_id: from + i },
		}));
		await exec(
			getSequelize(),
			`INSERT INTO ndr.event_outbox (event, next_attempt_at)
			 SELECT x, now() + CASE WHEN $2 THEN interval '1 hour' ELSE interval '0' END
			 FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS t(x, i) ORDER BY i`,
			[JSON.stringify(events), inBackoff],
		);
		return events.map((e) => e.event_id);
	}

	it("publishes 450 due rows as three messages (200, 200, 50) in order and marks them delivered", async () => {
		const ids = await insertEvents(450, 1);
		const relay = new EventOutboxRelay(getSequelize(), "ndr", broker, logger);
		assert.equal(await relay.pass(), 450);
		await eventually(() => got, { what: "three messages", ok: (g) => g.length === 3 });
		assert.deepEqual(
			got.map((b) => b.events.length),
			[200, 200, 50],
		);
		assert.deepEqual(
			got.flatMap((b) => b.events.map((e) => e.event_id)),
			ids,
		);
		const [left] = await select<{ n: string }>(
			getSequelize(),
			"SELECT count(*) AS n FROM ndr.event_outbox WHERE event->>'event_id' LIKE $1 AND delivered_at IS NULL",
			[`${tag}:%`],
		);
		assert.equal(Number(left.n), 0);
		assert.equal(await relay.pass(), 0, "nothing due: nothing sent");
	});

	it("keeps a round it cannot publish, with a backoff and the error, and sends it once the channel is back", async () => {
		got.length = 0;
		const ids = await insertEvents(3, 1000);
		const down = new ServiceBroker(testBrokerOptions(false)); // not started: its channel adapter is not connected
		const failing = new EventOutboxRelay(getSequelize(), "ndr", down, logger);
		assert.equal(await failing.pass(), 0);
		const rows = await select<{ tries: number; last_error: string | null; later: boolean }>(
			getSequelize(),
			`SELECT tries, last_error, next_attempt_at > now() AS later FROM ndr.event_outbox
			 WHERE event->>'event_id' = ANY($1::text[]) AND delivered_at IS NULL`,
			[ids],
		);
		assert.equal(rows.length, 3);
		for (const r of rows) {
			assert.equal(r.tries, 1);
			assert.match(String(r.last_error), /merchant\.events: adapter not connected/);
			assert.equal(r.later, true);
		}
		assert.ok(warnings.some((w) => w.includes("not published")));
		await exec(
			getSequelize(),
			"UPDATE ndr.event_outbox SET next_attempt_at = now() WHERE event->>'event_id' = ANY($1::text[])",
			[ids],
		);
		const relay = new EventOutboxRelay(getSequelize(), "ndr", broker, logger);
		assert.equal(await relay.pass(), 3);
		await eventually(() => got, { what: "the retried round", ok: (g) => g.length === 1 });
		assert.deepEqual(
			got[0].events.map((e) => e.event_id),
			ids,
		);
	});

	it("writes a round's rows once, at delivery: others skip them mid-publish; a relay that dies mid-round leaves them due at once", async function () {
		this.timeout(30_000);
		got.length = 0;
		// relay A's channel reaches Redis through a forwarder that stops forwarding: its publish hangs
		let stalled = false;
		const redis = new URL(process.env.REDIS_URL as string);
		const sockets = new Set<Socket>();
		const forwarder = createServer((client) => {
			const upstream = connect(Number(redis.port || 6379), redis.hostname);
			sockets.add(client).add(upstream);
			client.on("data", (d) => {
				if (!stalled) upstream.write(d);
			});
			upstream.pipe(client);
			client.on("error", () => upstream.destroy());
			upstream.on("error", () => client.destroy());
		});
		await new Promise<void>((r) => forwarder.listen(0, "127.0.0.1", r));
		const port = (forwarder.address() as AddressInfo).port;
		const viaForwarder = new ServiceBroker(
			brokerOptions(
				{ ...loadConfig(), transporter: undefined, redisUrl: `redis://127.0.0.1:${port}` },
				{ logger: false, nodeID: `relay-a-${tag}` },
			),
		);
		await viaForwarder.start();
		try {
			const ids = await insertEvents(5, 2000);
			const before = await select<{ tries: number; due: string }>(
				getSequelize(),
				"SELECT tries, next_attempt_at::text AS due FROM ndr.event_outbox WHERE event->>'event_id' = ANY($1::text[]) ORDER BY id",
				[ids],
			);
			stalled = true;
			const a = new EventOutboxRelay(getSequelize(), "ndr", viaForwarder, logger);
			const aPass = a.pass().catch((e: Error) => e);
			// A holds the round (locked in its transaction) while its publish hangs
			const [holder] = await eventually(
				() =>
					select<{ pid: number }>(
						getSequelize(),
						`SELECT l.pid FROM pg_locks l WHERE l.relation = 'ndr.event_outbox'::regclass
						 AND l.mode = 'RowShareLock' AND l.pid <> pg_backend_pid()`,
					),
				{ what: "relay A's round locked", ok: (r) => r.length === 1 },
			);
			const b = new EventOutboxRelay(getSequelize(), "ndr", broker, logger);
			assert.equal(await b.pass(), 0, "B skips the rows A holds");
			const during = await select<{ tries: number; due: string; delivered_at: Date | null }>(
				getSequelize(),
				"SELECT tries, next_attempt_at::text AS due, delivered_at FROM ndr.event_outbox WHERE event->>'event_id' = ANY($1::text[]) ORDER BY id",
				[ids],
			);
			assert.deepEqual(
				during.map((r) => [r.tries, r.due, r.delivered_at]),
				before.map((r) => [r.tries, r.due, null]),
				"nothing written before the publish (no lease)",
			);
			// A's process dies mid-round (its session ends): the rows are due again at once
			// pg_terminate_backend only signals the backend; its locks go when it has exited, so wait for that
			// (B's SKIP LOCKED round would otherwise still skip the rows; CI saw 0 !== 5 once)
			await exec(getSequelize(), "SELECT pg_terminate_backend($1)", [holder.pid]);
			await eventually(
				() =>
					select<{ pid: number }>(getSequelize(), "SELECT pid FROM pg_stat_activity WHERE pid = $1", [
						holder.pid,
					]),
				{ what: "relay A's backend gone", ok: (r) => r.length === 0 },
			);
			assert.equal(await b.pass(), 5);
			await eventually(() => got, { what: "B's round", ok: (g) => g.length === 1 });
			assert.deepEqual(
				got[0].events.map((e) => e.event_id),
				ids,
			);
			const after = await select<{ tries: number; delivered: boolean }>(
				getSequelize(),
				"SELECT tries, delivered_at IS NOT NULL AS delivered FROM ndr.event_outbox WHERE event->>'event_id' = ANY($1::text[])",
				[ids],
			);
			assert.deepEqual(
				after.map((r) => [r.tries, r.delivered]),
				ids.map(() => [1, true]),
			);
			assert.ok((await aPass) instanceof Error, "A's round ends in an error (its session is gone)");
		} finally {
			stalled = false;
			for (const sock of sockets) sock.destroy();
			await viaForwarder.stop().catch(() => undefined);
			await new Promise((r) => forwarder.close(r));
		}
	});

	/** The outbox ids of event ids `eventIds` of this spec, in id order. */
	async function rowIds(eventIds: string[]): Promise<number[]> {
		const rows = await select<{ id: string }>(
			getSequelize(),
			"SELECT id FROM ndr.event_outbox WHERE event->>'event_id' = ANY($1::text[]) ORDER BY id",
			[eventIds],
		);
		return rows.map((r) => Number(r.id));
	}

	/** Whether the row of event id `eventId` is marked delivered. */
	async function delivered(eventId: string): Promise<boolean> {
		const [r] = await select<{ delivered: boolean }>(
			getSequelize(),
			"SELECT delivered_at IS NOT NULL AS delivered FROM ndr.event_outbox WHERE event->>'event_id' = $1",
			[eventId],
		);
		return r.delivered;
	}

	it("announces the smallest id of each insert in the NOTIFY payload, and nothing for an insert of no rows", async () => {
		const c = new Client({ connectionString: loadConfig().databaseUrl });
		const heard: string[] = [];
		c.on("notification", (n) => heard.push(String(n.payload)));
		await c.connect();
		try {
			await c.query(`LISTEN ${eventOutboxChannel("ndr")}`);
			await exec(
				getSequelize(),
				"INSERT INTO ndr.event_outbox (event) SELECT x FROM jsonb_array_elements('[]'::jsonb) AS t(x)",
			);
			const ids = await rowIds(await insertEvents(3, 3000));
			await eventually(() => heard, { what: "the insert's notification", ok: (h) => h.length > 0 });
			await new Promise((r) => setTimeout(r, 200)); // room for a wrong second one
			assert.deepEqual(heard, [String(ids[0])]);
			assert.equal(notifiedFrom(heard[0]), ids[0]);
		} finally {
			await c.end();
		}
		await exec(getSequelize(), "UPDATE ndr.event_outbox SET delivered_at = now() WHERE delivered_at IS NULL");
	});

	it("reads a payload as a row id, anything else as the table's start", () => {
		assert.equal(notifiedFrom("1234"), 1234);
		assert.equal(notifiedFrom("9007199254740991"), 9007199254740991);
		for (const bad of [undefined, "", "0", "-5", "12a", " 12", "1e3", "9007199254740993", "01"])
			assert.equal(notifiedFrom(bad), 0, String(bad));
	});

	it("a pass woken by a commit reads from the id it announced; a due row below it waits for the poll's pass from the start", async () => {
		got.length = 0;
		const relay = new EventOutboxRelay(getSequelize(), "ndr", broker, logger, 60_000);
		await relay.start();
		try {
			await relay.idle();
			// a row in backoff (as a failed round leaves it): announced, read, not due
			const [held] = await insertEvents(1, 4000, true);
			const [low] = await insertEvents(1, 4001);
			await eventually(() => got, {
				what: "the first row's round",
				ok: (g) => g.some((b) => b.events.some((e) => e.event_id === low)),
			});
			await relay.idle();
			assert.equal(await delivered(held), false);
			// its backoff ends (no insert, no notification), then a later commit wakes the relay
			await exec(
				getSequelize(),
				"UPDATE ndr.event_outbox SET next_attempt_at = now() WHERE event->>'event_id' = $1",
				[held],
			);
			const [later] = await insertEvents(1, 4002);
			await eventually(() => got, {
				what: "the later row's round",
				ok: (g) => g.some((b) => b.events.some((e) => e.event_id === later)),
			});
			await relay.idle();
			assert.deepEqual(
				got.flatMap((b) => b.events.map((e) => e.event_id)),
				[low, later],
				"the woken passes read from the ids announced",
			);
			assert.equal(await delivered(held), false);
			relay.wake(0); // the poll timer's pass
			await relay.idle();
			assert.equal(await delivered(held), true);
			assert.deepEqual(
				got.flatMap((b) => b.events.map((e) => e.event_id)),
				[low, later, held],
			);
		} finally {
			await relay.stop();
		}
	});

	it("begins a pass at most every EVENT_OUTBOX_PACE_MS: a commit after a quiet spell goes at once, commits in a stream share the next pass", async () => {
		const pace = 1_000;
		const relay = new EventOutboxRelay(getSequelize(), "ndr", broker, logger, 60_000, pace);
		await relay.start();
		try {
			await relay.idle();
			got.length = 0;
			gotAt.length = 0;
			await new Promise((ok) => setTimeout(ok, pace + 100));
			// a quiet spell: the commit's pass begins at once
			const aAt = performance.now();
			const [a] = await insertEvents(1, 5000);
			await eventually(() => got, { what: "the first commit's message", ok: (g) => g.length === 1 });
			assert.deepEqual(
				got[0].events.map((e) => e.event_id),
				[a],
			);
			assert.ok(gotAt[0] - aAt < pace, `relayed ${(gotAt[0] - aAt).toFixed(0)} ms after the commit`);
			// two commits right after: one pass, no sooner than `pace` after the first pass began
			const [b] = await insertEvents(1, 5001);
			const [c] = await insertEvents(1, 5002);
			await eventually(() => got, { what: "the stream's message", ok: (g) => g.length >= 2 });
			await relay.idle();
			assert.deepEqual(
				got.map((m) => m.events.map((e) => e.event_id)),
				[[a], [b, c]],
				"both commits of the stream in one pass",
			);
			assert.ok(
				gotAt[1] - aAt >= pace,
				`the second pass ${(gotAt[1] - aAt).toFixed(0)} ms after the first commit`,
			);
			assert.equal(await delivered(c), true);
		} finally {
			await relay.stop();
		}
	});

	it("names a round by its rows: the same rows, the same JetStream message id", () => {
		assert.equal(batchMsgId("intake", [1, 2, 3]), batchMsgId("intake", [1, 2, 3]));
		assert.notEqual(batchMsgId("intake", [1, 2, 3]), batchMsgId("intake", [1, 2]));
		assert.notEqual(batchMsgId("intake", [1, 2, 3]), batchMsgId("ndr", [1, 2, 3]));
	});
});
