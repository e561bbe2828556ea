/**
 * A rolling update loses nothing (issue 30): the split topology over the real
 * NATS, PostgreSQL and Redis (two gateways, two intake and two booking
 * processes, the other services in one more), a load of 10 create + book
 * flows per second through the gateways, and every process of the gateway,
 * intake and booking groups replaced one by one as a Deployment with
 * `maxSurge: 1, maxUnavailable: 0` replaces its pods: the new process started
 * and ready first (a new gateway then joins the rotation), then the old one
 * taken out of the rotation and stopped with SIGTERM (test/chaos/harness.ts
 * `replace`). Checked from the API alone: no request answered 5xx or left
 * without an answer, every acknowledged order exists exactly once, every
 * acknowledged booking ends booked with its own AWB.
 */
import { strict as assert } from "node:assert";
import { type ChaosCluster, formatFigures, startChaosCluster } from "../chaos/harness";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("integration: a rolling update of every gateway, intake and booking process under load (issue 30)", function () {
	this.timeout(240_000);
	let c: ChaosCluster | undefined;

	before(async () => {
		c = await startChaosCluster({
			groups: [
				{ name: "gateway", services: "gateway", replicas: 2 },
				{ name: "intake", services: "intake", replicas: 2 },
				{ name: "booking", services: "booking", replicas: 2 },
				{
					name: "core",
					services: "pincode,rates,warehouses,billing,ndr,webhooks,notifications,documents,simulator",
				},
			],
		});
	});

	after(async () => {
		await c?.close();
	});

	it("answers every request (no 5xx, none dropped) and loses nothing while each process is replaced", async () => {
		const cl = c as ChaosCluster;
		cl.startLoad(10, 30_000);
		await sleep(1500);
		for (const key of ["gateway-0", "gateway-1", "intake-0", "intake-1", "booking-0", "booking-1"]) {
			const next = await cl.replace(key);
			assert.ok(cl.members.has(next) && !cl.members.has(key));
			await sleep(500);
		}
		const loadEnd = Date.now();
		await cl.stopLoad();
		console.log(`\n${formatFigures(cl.figures(loadEnd))}`);
		const failed = cl.requests.filter((r) => r.status === 0 || r.status >= 500);
		const v = await cl.verdict(60_000);
		console.log(
			`  ${v.flows} flows, ${v.acknowledged} orders and ${v.bookAcknowledged} bookings acknowledged, ` +
				`${failed.length} of ${cl.requests.length} requests 5xx/dropped`,
		);
		assert.ok(v.flows >= 50, `load ran (${v.flows} flows)`);
		assert.deepEqual(
			failed.map((r) => `${r.kind} ${r.status} ${r.code ?? r.error ?? ""} after ${r.end - r.start} ms`),
			[],
			"requests answered 5xx or dropped during the rolling update",
		);
		assert.deepEqual(v.lostOrDuplicated, [], "acknowledged orders lost or duplicated");
		assert.deepEqual(v.notBooked, [], "acknowledged bookings not booked with their own AWB");
		assert.deepEqual(v.sharedAwbs, [], "AWBs on two orders");
		assert.equal(v.unfinished, 0, "flows that never got both acknowledgements");
	});
});
