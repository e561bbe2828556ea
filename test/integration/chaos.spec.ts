/**
 * Fault injection, short form (issue 12; the long form with the benchmark
 * table is `npm run chaos`, bench/faults.ts): the gateway, two intake
 * processes, two booking processes and the other services in a sixth process,
 * all over the real NATS, PostgreSQL and Redis; a load of 10 create + book
 * flows per second through the gateway while booking and intake processes are
 * killed (`kill -9`) and stopped (SIGTERM) one after another, each started
 * again at once. Checked from the API alone: every acknowledged order exists
 * exactly once, every acknowledged booking ends booked with its own AWB, no
 * request waited 5 s or more, and a fresh create + book succeeds after every
 * restart. Speed is printed, not asserted (a loaded 2-core CI machine).
 */
import { strict as assert } from "node:assert";
import { type ChaosCluster, formatFigures, startChaosCluster } from "../chaos/harness";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("integration: availability under kill -9 and SIGTERM of service processes (issue 12)", function () {
	this.timeout(150_000);
	let c: ChaosCluster | undefined;

	before(async () => {
		c = await startChaosCluster({
			groups: [
				{ name: "gateway", services: "gateway" },
				{ name: "intake", services: "intake", replicas: 2 },
				{ name: "booking", services: "booking", replicas: 2 },
				{
					name: "core",
					services: "pincode,rates,warehouses,billing,ndr,webhooks,notifications,documents,simulator",
				},
			],
			// a booking job in flight on a killed process runs again once its BullMQ lock expires
			// (60 s by default): short here, so the verdict does not wait a minute for it
			env: { BOOKING_LOCK_MS: "5000" },
		});
	});

	after(async () => {
		await c?.close();
	});

	it("loses and duplicates nothing acknowledged, and no caller waits 5 s, while processes die", async () => {
		const cl = c as ChaosCluster;
		cl.startLoad(10, 30_000);
		await sleep(2000);
		for (const [key, signal] of [
			["booking-0", "SIGKILL"],
			["intake-0", "SIGKILL"],
			["booking-1", "SIGTERM"],
			["intake-1", "SIGTERM"],
		] as const) {
			await cl.fault(key, signal);
			await sleep(1500);
		}
		const loadEnd = Date.now();
		await cl.stopLoad();
		const figures = cl.figures(loadEnd);
		console.log(`\n${formatFigures(figures)}`);
		const v = await cl.verdict(60_000);
		console.log(
			`  ${v.flows} flows, ${v.acknowledged} orders and ${v.bookAcknowledged} bookings acknowledged, ` +
				`${cl.requests.filter((r) => r.status === 0 || r.status >= 500).length} of ${cl.requests.length} requests 5xx/dropped`,
		);
		assert.ok(v.flows >= 50, `load ran (${v.flows} flows)`);
		assert.deepEqual(v.lostOrDuplicated, [], "acknowledged orders lost or duplicated");
		assert.deepEqual(v.notBooked, [], "acknowledged bookings not booked with their own AWB");
		assert.deepEqual(v.sharedAwbs, [], "AWBs on two orders");
		assert.equal(v.unfinished, 0, "flows that never got both acknowledgements");
		const longest = cl.requests.reduce((m, r) => Math.max(m, r.end - r.start), 0);
		assert.ok(longest < 5000, `a request waited ${longest} ms (limit 5 s)`);
		for (const f of figures)
			assert.ok(f.readyToServeMs !== undefined, `no fresh create + book succeeded after ${f.fault}`);
	});
});
