/**
 * booking's outbox lease for rows a request has just committed
 * (lib/booking/store/attempts.ts leaseOutbox with `ids`; book/sync, cancel and
 * the tracking answer deliver their order updates before answering). A relay
 * round may lease those rows between the commit and the request's own lease:
 * the request still takes them (waiting for a lease statement in flight, not
 * skipping the rows), so its answer follows intake's acknowledgement; a row
 * scheduled for later (a delayed `enqueue_booking`, never leased) stays with the
 * relay. Real PostgreSQL, rows of this test only.
 */
import assert from "node:assert/strict";
import { Client } from "pg";
import { BOOKING_MIGRATIONS } from "../../../lib/booking/migrations";
import { leaseOutbox } from "../../../lib/booking/store";
import { loadConfig } from "../../../lib/platform/config";
import { exec, getSequelize, migrate, select } from "../../../lib/platform/db";

/** Inserts one outbox row; answers its id. */
async function addRow(kind: string, payload: Record<string, unknown>, dueInS: number): Promise<number> {
	const [r] = await select<{ id: string }>(
		getSequelize(),
		`INSERT INTO booking.outbox (kind, payload, next_attempt_at)
		 VALUES ($1, $2::jsonb, now() + make_interval(secs => $3)) RETURNING id`,
		[kind, JSON.stringify(payload), dueInS],
	);
	return Number(r.id);
}

/** What a relay round's lease does to row $1: invisible for 30 s, one try more. */
const RELAY_LEASE =
	"UPDATE booking.outbox SET next_attempt_at = now() + interval '30 seconds', tries = tries + 1 WHERE id = $1";

/** A relay round's lease of row `id`, committed. */
async function leasedByRelay(id: number): Promise<void> {
	await exec(getSequelize(), RELAY_LEASE, [id]);
}

describe("booking outbox: a request takes the rows it just committed, even from a relay round", () => {
	const ids: number[] = [];
	before(() => migrate(getSequelize(), "booking", BOOKING_MIGRATIONS));
	after(() => exec(getSequelize(), "DELETE FROM booking.outbox WHERE id = ANY($1::bigint[])", [ids]));

	it("takes over its row a relay round leased in between; leaves a row scheduled for later", async () => {
		const update = await addRow("order_update", { order_id: 1, seq: 1, state: "booking_in_progress" }, 0);
		const delayed = await addRow("enqueue_booking", { attempt_id: 1 }, 3600);
		ids.push(update, delayed);
		await leasedByRelay(update);
		const got = await leaseOutbox(getSequelize(), 2, 30_000, [update, delayed]);
		assert.deepEqual(
			got.map((r) => [r.id, r.kind, r.tries]),
			[[update, "order_update", 2]],
		);
		// a relay's round (no ids) still skips the leased row
		const [row] = await select<{ later: boolean }>(
			getSequelize(),
			"SELECT next_attempt_at > now() AS later FROM booking.outbox WHERE id = $1",
			[update],
		);
		assert.equal(row.later, true);
	});

	it("waits for a relay's lease statement in flight instead of skipping the row", async () => {
		const update = await addRow("order_update", { order_id: 2, seq: 1, state: "booking_in_progress" }, 0);
		ids.push(update);
		const other = new Client({ connectionString: loadConfig().databaseUrl });
		await other.connect();
		try {
			// another relay's lease, its transaction not yet committed
			await other.query("BEGIN");
			await other.query(RELAY_LEASE, [update]);
			const leasing = leaseOutbox(getSequelize(), 1, 30_000, [update]);
			await new Promise((r) => setTimeout(r, 200));
			await other.query("COMMIT");
			const got = await leasing;
			assert.deepEqual(
				got.map((r) => [r.id, r.tries]),
				[[update, 2]],
			);
		} finally {
			await other.end();
		}
	});
});
