/**
 * Lane performance (spec §2.7 `performance`; issue 7): `rates.recordLaneOutcome`
 * counts delivered / RTO outcomes into `rates.lane_performance` once per
 * attempt id, and the quote answers real figures once the lane has
 * MIN_LANE_SHIPMENTS shipments, without a reload.
 */
import { strict as assert } from "node:assert";
import type { LaneOutcomeParams } from "../../../lib/contracts";
import { exec, getSequelize, select } from "../../../lib/platform/db";
import { MIN_LANE_SHIPMENTS } from "../../../lib/rates/catalog";
import { rejects } from "../../helpers/broker";
import { callAs, callRaw } from "../../helpers/call";
import { byId, useRates } from "./setup";

/** Attempt ids unique to this spec run. */
const firstAttempt = 7_000_000 + Math.floor(Math.random() * 1_000_000) * 100;
let nextAttempt = firstAttempt;

describe("rates: lane performance from shipment outcomes", () => {
	const t = useRates();

	// the test run's database is shared by the spec files: leave the lanes as found (empty)
	after(async () => {
		const db = getSequelize();
		await exec(db, "DELETE FROM rates.lane_outcomes WHERE attempt_id > $1 AND attempt_id <= $2", [
			firstAttempt,
			nextAttempt,
		]);
		await exec(
			db,
			"DELETE FROM rates.lane_performance WHERE (logistic_id, from_pin, to_pin) IN ((2, '110001', '560001'), (1, '400001', '560001'))",
		);
	});

	const record = (p: Omit<LaneOutcomeParams, "attempt_id"> & { attempt_id?: number }) =>
		callAs(t.broker, "rates.recordLaneOutcome", {
			attempt_id: p.attempt_id ?? ++nextAttempt,
			...p,
		});
	const performanceOf = async (from_pin: string, to_pin: string, logistic_id: number) => {
		const res = await callAs(t.broker, "rates.quote", {
			from_pin,
			to_pin,
			physical_weight: 0.5,
		});
		const q = byId(res, logistic_id);
		assert.ok(q, `courier ${logistic_id} prices ${from_pin} → ${to_pin}`);
		return q.performance;
	};
	const laneRow = async (logistic_id: number, from_pin: string, to_pin: string) =>
		(
			await select<{ shipments: number; delivered: number; rto: number; tat_days_sum: string }>(
				getSequelize(),
				`SELECT shipments, delivered, rto, tat_days_sum FROM rates.lane_performance
				  WHERE logistic_id = $1 AND from_pin = $2 AND to_pin = $3`,
				[logistic_id, from_pin, to_pin],
			)
		)[0];

	it("after MIN_LANE_SHIPMENTS outcomes the quote carries the lane's figures; a repeated attempt changes nothing", async () => {
		const lane = { logistic_id: 2, from_pin: "110001", to_pin: "560001" };
		assert.equal(MIN_LANE_SHIPMENTS, 20);
		assert.equal(
			await performanceOf(lane.from_pin, lane.to_pin, 2),
			null,
			"no history: null, never invented",
		);
		const first = ++nextAttempt;
		// 15 delivered in 2.5 days, 4 RTO (their days do not count into the average)
		assert.deepEqual(await record({ ...lane, attempt_id: first, outcome: "delivered", tat_days: 2.5 }), {
			recorded: true,
		});
		for (let i = 1; i < 15; i++) await record({ ...lane, outcome: "delivered", tat_days: 2.5 });
		const rto = ++nextAttempt;
		await record({ ...lane, attempt_id: rto, outcome: "rto", tat_days: 9 });
		for (let i = 1; i < 4; i++) await record({ ...lane, outcome: "rto", tat_days: 9 });
		assert.equal(await performanceOf(lane.from_pin, lane.to_pin, 2), null, "19 shipments: still null");
		await record({ ...lane, outcome: "delivered", tat_days: 4 });
		// 20 shipments: 16 delivered (80 %), 4 RTO (20 %), (15 × 2.5 + 4) / 16 = 2.59 → 2.6 days
		const want = { delivered_pct: 80, rto_pct: 20, avg_tat_days: 2.6 };
		assert.deepEqual(await performanceOf(lane.from_pin, lane.to_pin, 2), want);
		assert.deepEqual(await laneRow(2, lane.from_pin, lane.to_pin), {
			shipments: 20,
			delivered: 16,
			rto: 4,
			tat_days_sum: "41.50",
		});

		// the same attempts again (as an outbox re-delivers them), even with another outcome: nothing changes
		assert.deepEqual(await record({ ...lane, attempt_id: first, outcome: "delivered", tat_days: 2.5 }), {
			recorded: false,
		});
		assert.deepEqual(await record({ ...lane, attempt_id: rto, outcome: "delivered", tat_days: 1 }), {
			recorded: false,
		});
		assert.deepEqual(await performanceOf(lane.from_pin, lane.to_pin, 2), want);
		assert.equal((await laneRow(2, lane.from_pin, lane.to_pin)).shipments, 20);

		// other lanes and couriers are untouched; the database says the same after a reload
		assert.equal(await performanceOf(lane.to_pin, lane.from_pin, 2), null);
		assert.equal(await performanceOf(lane.from_pin, lane.to_pin, 1), null);
		await callAs(t.broker, "rates.reload", {});
		assert.deepEqual(await performanceOf(lane.from_pin, lane.to_pin, 2), want);
	});

	it("concurrent outcomes: each distinct attempt counted once, a repeated one once in all", async () => {
		const lane = { logistic_id: 1, from_pin: "400001", to_pin: "560001" };
		const same = ++nextAttempt;
		const dup = await Promise.all(
			Array.from({ length: 10 }, () =>
				record({ ...lane, attempt_id: same, outcome: "delivered", tat_days: 3 }),
			),
		);
		assert.equal(dup.filter((r) => r.recorded).length, 1);
		await Promise.all(
			Array.from({ length: 24 }, (_, i) =>
				record({ ...lane, outcome: i < 6 ? "rto" : "delivered", tat_days: i < 6 ? 10 : 3 }),
			),
		);
		// 25 shipments: 19 delivered in 3 days, 6 RTO
		assert.deepEqual(await laneRow(1, lane.from_pin, lane.to_pin), {
			shipments: 25,
			delivered: 19,
			rto: 6,
			tat_days_sum: "57.00",
		});
		assert.deepEqual(await performanceOf(lane.from_pin, lane.to_pin, 1), {
			delivered_pct: 76,
			rto_pct: 24,
			avg_tat_days: 3,
		});
		const outcomes = await select<{ n: string }>(
			getSequelize(),
			"SELECT count(*) AS n FROM rates.lane_outcomes WHERE logistic_id = 1 AND from_pin = $1 AND to_pin = $2",
			[lane.from_pin, lane.to_pin],
		);
		assert.equal(Number(outcomes[0].n), 25);
	});

	it("answers recorded:false for a courier no longer in the database (no retry loop) and refuses malformed outcomes; nothing is written", async () => {
		const attempt_id = ++nextAttempt;
		assert.deepEqual(
			await record({
				attempt_id,
				logistic_id: 99,
				from_pin: "110001",
				to_pin: "560001",
				outcome: "delivered",
				tat_days: 1,
			}),
			{ recorded: false },
		);
		const good = { logistic_id: 3, from_pin: "110001", to_pin: "560001", outcome: "delivered", tat_days: 1 };
		for (const bad of [
			{ from_pin: "11001" },
			{ to_pin: "abcdef" },
			{ outcome: "lost" },
			{ tat_days: -1 },
			{ attempt_id: 0 },
			{ logistic_id: 1.5 },
		]) {
			const e = await rejects(() =>
				callRaw(t.broker, "rates.recordLaneOutcome", { attempt_id, ...good, ...bad }),
			);
			assert.equal(e.name, "ValidationError", JSON.stringify(bad));
		}
		const rows = await select<{ n: string }>(
			getSequelize(),
			"SELECT count(*) AS n FROM rates.lane_outcomes WHERE attempt_id = $1",
			[attempt_id],
		);
		assert.equal(Number(rows[0].n), 0);
	});
});
