/**
 * Retention of delivered outbox rows (lib/platform/outbox.ts purgeDeliveredOutbox,
 * mixins/db.mixin.ts): rows delivered more than OUTBOX_RETENTION_HOURS ago
 * are deleted, oldest first in rounds; undelivered rows never, rows a relay
 * holds are skipped until released. Real PostgreSQL: a table of its own
 * schema, and the ndr service's own event outbox through its started service.
 */
import assert from "node:assert/strict";
import type { ServiceBroker } from "moleculer";
import { Client } from "pg";
import { exec, getSequelize, select } from "../../lib/platform/db";
import { outboxRetentionHours, purgeDeliveredOutbox } from "../../lib/platform/outbox";
import type { DbVars } from "../../mixins/db.mixin";
import { startBroker } from "../helpers/broker";

describe("outbox retention: delivered rows past OUTBOX_RETENTION_HOURS are purged", () => {
	const schema = `purge_test_${process.pid}_${Date.now().toString(36)}`;
	const t = { schema, table: "event_outbox" as const };

	before(async () => {
		await exec(getSequelize(), `CREATE SCHEMA "${schema}"`);
		await exec(
			getSequelize(),
			`CREATE TABLE "${schema}".event_outbox (
			   id bigserial PRIMARY KEY, tag text NOT NULL, delivered_at timestamptz NULL,
			   created_at timestamptz NOT NULL DEFAULT now())`,
		);
	});
	after(() => exec(getSequelize(), `DROP SCHEMA IF EXISTS "${schema}" CASCADE`));

	/**
	 * Inserts rows in this order (ids ascending), each created `createdH` hours ago and delivered
	 * `deliveredH` hours ago (null: undelivered); as in a real outbox, later ids are created later.
	 */
	async function insert(rows: [tag: string, createdH: number, deliveredH: number | null][]): Promise<void> {
		await exec(
			getSequelize(),
			`INSERT INTO "${schema}".event_outbox (tag, created_at, delivered_at)
			 SELECT u.tag, now() - make_interval(hours => u.created),
			        CASE WHEN u.delivered IS NULL THEN NULL ELSE now() - make_interval(hours => u.delivered) END
			 FROM unnest($1::text[], $2::int[], $3::int[]) WITH ORDINALITY AS u(tag, created, delivered, i) ORDER BY u.i`,
			[rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])],
		);
	}
	const tags = async () =>
		(
			await select<{ tag: string }>(getSequelize(), `SELECT tag FROM "${schema}".event_outbox ORDER BY id`)
		).map((r) => r.tag);

	it("reads OUTBOX_RETENTION_HOURS: 168 by default, 0 keeps for ever, anything else malformed refuses", () => {
		assert.equal(outboxRetentionHours({}), 168);
		assert.equal(outboxRetentionHours({ OUTBOX_RETENTION_HOURS: " 24 " }), 24);
		assert.equal(outboxRetentionHours({ OUTBOX_RETENTION_HOURS: "0" }), 0);
		for (const bad of ["-1", "1.5", "a week"])
			assert.throws(() => outboxRetentionHours({ OUTBOX_RETENTION_HOURS: bad }), /OUTBOX_RETENTION_HOURS/);
	});

	it("deletes rows delivered before the retention, oldest first in rounds; keeps newer and undelivered ones", async () => {
		await insert([
			["stuck-30d", 720, null],
			["old-1", 200, 200],
			["old-2", 190, 190],
			["late-6d", 185, 150], // created 185 h ago, delivered after an outage 150 h ago: kept
			["late-5d", 183, 120], // with late-6d a round of 2 that deletes nothing: the walk goes on
			["old-3", 180, 180],
			["old-4", 170, 170],
			["recent-1h", 1, 1],
			["pending", 0, null],
		]);
		assert.equal(await purgeDeliveredOutbox(getSequelize(), t, 0, 2), 0, "retention 0 keeps everything");
		assert.equal((await tags()).length, 9);
		// rounds of 2 by id: kept rows (stuck, delivered late) do not stop the walk; the round reaching a row
		// created after the cut-off (recent-1h) ends it
		assert.equal(await purgeDeliveredOutbox(getSequelize(), t, 168, 2), 4);
		assert.deepEqual(await tags(), ["stuck-30d", "late-6d", "late-5d", "recent-1h", "pending"]);
		assert.equal(await purgeDeliveredOutbox(getSequelize(), t, 168, 2), 0, "nothing more to purge");
	});

	it("skips rows another session holds (FOR UPDATE: a second replica's purge) and deletes them on a later run once released", async () => {
		await exec(getSequelize(), `DELETE FROM "${schema}".event_outbox`);
		await insert([
			["held", 200, 200],
			["free", 199, 199],
		]);
		const other = new Client({ connectionString: process.env.DATABASE_URL });
		await other.connect();
		try {
			await other.query("BEGIN");
			await other.query(`SELECT id FROM "${schema}".event_outbox WHERE tag = 'held' FOR UPDATE`);
			assert.equal(await purgeDeliveredOutbox(getSequelize(), t, 168, 10), 1);
			assert.deepEqual(await tags(), ["held"]);
			await other.query("COMMIT");
		} finally {
			await other.end();
		}
		assert.equal(await purgeDeliveredOutbox(getSequelize(), t, 168, 10), 1);
		assert.deepEqual(await tags(), []);
	});

	describe("in a started service (ndr: its event outbox)", () => {
		let broker: ServiceBroker;
		const tag = `purge-${process.pid}-${Date.now()}`;
		before(async () => {
			broker = await startBroker(["ndr"]);
		});
		after(() => broker?.stop());

		it("purgeDeliveredOutboxes deletes the service's old delivered rows and only those", async () => {
			await exec(
				getSequelize(),
				`INSERT INTO ndr.event_outbox (event, delivered_at, created_at) VALUES
				 (jsonb_build_object('event_id', $1 || ':old'), now() - interval '8 days', now() - interval '8 days'),
				 (jsonb_build_object('event_id', $1 || ':new'), now() - interval '1 hour', now() - interval '1 hour'),
				 (jsonb_build_object('event_id', $1 || ':pending'), NULL, now() - interval '9 days')`,
				[tag],
			);
			// the outbox also holds other tests' rows of this run, all recent: the walk by id ends at the first
			// created after the cut-off, so the old row goes first in the table (its id below every other)
			await exec(
				getSequelize(),
				`UPDATE ndr.event_outbox SET id = (SELECT min(id) - 1 FROM ndr.event_outbox) WHERE event->>'event_id' = $1`,
				[`${tag}:old`],
			);
			const svc = broker.getLocalService("ndr") as unknown as DbVars;
			assert.ok((await svc.purgeDeliveredOutboxes()) >= 1);
			const left = await select<{ e: string }>(
				getSequelize(),
				"SELECT event->>'event_id' AS e FROM ndr.event_outbox WHERE event->>'event_id' LIKE $1 ORDER BY id",
				[`${tag}:%`],
			);
			assert.deepEqual(
				left.map((r) => r.e),
				[`${tag}:new`, `${tag}:pending`],
			);
		});
	});
});
