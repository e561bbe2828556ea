/**
 * End to end, run the way ops will (issue 13): each Deployment of k8s/base
 * in its own process — gateway, intake (INTAKE_BULK_WORKER=off), intake-bulk
 * (the bulk worker only, issue 10), rates, booking, billing, documents,
 * warehouses, ndr, webhooks, pincode and the sandbox simulator, 12 processes,
 * each with its manifest's literal environment (SERVICES, INTAKE_BULK_WORKER,
 * NODE_OPTIONS …) — COMPILED as production runs them (`start:prod`, dist/),
 * over the real NATS, PostgreSQL and Redis (the fault harness of
 * test/chaos/harness.ts).
 *
 * 1. The typical flow, then the same flow a few times a second and a bulk
 *    CSV upload (processed by intake-bulk: the intake process has no bulk
 *    worker) while each process's VmRSS is sampled: at rest (10 s after
 *    start) and under load, neither may exceed the memory request of its
 *    manifest (k8s/base/<name>.yaml; the table is printed).
 * 2. Booking stopped (SIGTERM) and restarted mid-run under a small create +
 *    book load: no acknowledged order lost or duplicated, every acknowledged
 *    booking booked with its own AWB (checked from the API).
 * 3. SIGTERM to each other process in turn (restarted at once) under a create
 *    + book load and GETs on every service's routes: no request answered 5xx
 *    other than 503 `service_unavailable` (the only process of a service is
 *    down), none accepted and then dropped, nothing acknowledged lost.
 */
import { strict as assert } from "node:assert";
import { type ChaosCluster, RETRY_503, startChaosCluster } from "../chaos/harness";
import {
	compareWithManifests,
	deploymentGroups,
	formatRssTable,
	manifestPath,
	RssSampler,
	type RssVerdictRow,
} from "../chaos/rss";
import { bulkCsv, warehouseBody } from "../helpers/fixtures";
import { client, typicalFlow, uploadBulkCsv } from "../helpers/flow";
import { buildOnce } from "../helpers/processes";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("e2e: every service in its own compiled process over NATS (issue 13)", function () {
	this.timeout(120_000);
	let c: ChaosCluster | undefined;
	let spawnedAt = 0;
	let labelOrder = 0;

	before(async () => {
		await buildOnce();
		spawnedAt = Date.now();
		c = await startChaosCluster({
			groups: deploymentGroups(),
			compiled: true,
			// a booking job in flight on a stopped process runs again once its BullMQ lock expires
			env: { BOOKING_LOCK_MS: "5000" },
		});
	});

	after(async () => {
		await c?.close();
	});

	function cluster(): ChaosCluster {
		assert.ok(c, "cluster started");
		return c;
	}

	it("serves the typical flow; each process's RSS at rest and under the flow stays within its manifest's memory request", async function () {
		const cl = cluster();
		const base = cl.gateways()[0].probe;
		const sampler = new RssSampler(cl);
		await sleep(Math.max(0, spawnedAt + 10_000 - Date.now()));
		sampler.rest();
		const first = await typicalFlow(base, cl.token);
		assert.ok(first.label.length > 1000);
		labelOrder = first.order_id;
		// the typical flow at ~3/s for 8 s and a bulk upload of 3,000 rows, each process's RSS sampled all along
		const wh = await client(base, cl.token).post("/v1/warehouses", warehouseBody());
		assert.equal(wh.status, 201, JSON.stringify(wh.body));
		const ROWS = 3000;
		sampler.start();
		const bulk = uploadBulkCsv(base, cl.token, wh.body.data.id, bulkCsv(`SPLIT${Date.now()}`, ROWS));
		const flows: Promise<unknown>[] = [];
		for (let i = 0; i < 24; i++) {
			flows.push(typicalFlow(base, cl.token));
			await sleep(333);
		}
		await Promise.all(flows);
		const job = await bulk;
		sampler.stop();
		assert.equal(job.status, "completed", JSON.stringify(job));
		assert.equal(job.counts.created, ROWS, JSON.stringify(job.counts));
		const rows = compareWithManifests([...sampler.rows.values()]);
		console.log(
			`\n  RSS (MiB), each service alone in its compiled process:\n${indent(formatRssTable(rows))}`,
		);
		if (rows.every((r) => r.manifest === undefined)) this.skip(); // k8s/base/<service>.yaml not written yet: nothing to compare with
		for (const r of rows.filter((x) => !x.manifest && x.service !== "simulator"))
			console.warn(`  no manifest at ${manifestPath(r.service)}: ${r.service} not checked`);
		assert.ok(
			rows.every((r) => r.restMiB !== undefined && r.loadMiB !== undefined),
			"every process measured",
		);
		const over: RssVerdictRow[] = rows.filter((r) => r.over);
		assert.deepEqual(
			over.map(
				(r) =>
					`${r.service}: ${Math.max(r.restMiB ?? 0, r.loadMiB ?? 0).toFixed(0)} MiB > request ${r.manifest?.requestMiB} MiB`,
			),
			[],
			"measured RSS over the manifest's memory request",
		);
	});

	it("loses and duplicates no booking when booking is stopped (SIGTERM) and restarted mid-run", async () => {
		const cl = cluster();
		cl.startLoad(4, 30_000, "b");
		await sleep(2500);
		const f = await cl.fault("booking-0", "SIGTERM");
		await sleep(2500);
		await cl.stopLoad();
		const v = await cl.verdict(40_000);
		console.log(
			`  booking SIGTERM → ready in ${(((f.readyAt ?? f.at) - f.at) / 1000).toFixed(1)} s; ${v.flows} flows, ` +
				`${v.acknowledged} orders and ${v.bookAcknowledged} bookings acknowledged`,
		);
		assert.ok(v.flows >= 15, `load ran (${v.flows} flows)`);
		assert.ok(
			cl.flows.some((x) => x.startedAt < f.at && x.bookAcked) &&
				cl.flows.some((x) => x.startedAt > (f.readyAt ?? f.at) && x.bookAcked),
			"bookings acknowledged before the stop and after the restart",
		);
		assert.deepEqual(v.lostOrDuplicated, [], "acknowledged orders lost or duplicated");
		assert.deepEqual(v.notBooked, [], "acknowledged bookings not booked with their own AWB");
		assert.deepEqual(v.sharedAwbs, [], "AWBs on two orders");
		assert.equal(v.unfinished, 0, "flows that never got both acknowledgements");
	});

	it("answers no in-flight request 5xx and loses nothing when each service process gets SIGTERM under load", async () => {
		const cl = cluster();
		assert.ok(labelOrder, "the typical flow booked an order");
		const quote =
			"/v1/shipping/serviceable?from_pin=110001&to_pin=560001&physical_weight=0.8&order_type=1&collectable_amount=1499";
		const reads = [
			"/v1/pincode/560001",
			quote,
			"/v1/warehouses",
			"/v1/orders?limit=5",
			"/v1/shipping/couriers",
			`/v1/documents/label/${labelOrder}`,
			"/v1/ndr/counts",
			"/v1/wallet",
			"/v1/webhooks",
			`/v1/orders/${labelOrder}/tracking`,
		];
		const firstRequest = cl.requests.length;
		const firstFault = cl.faults.length;
		cl.startLoad(3, 30_000, "t");
		cl.startReads(10, reads);
		await sleep(1000);
		// booking had its own test above; the gateway last (while it restarts, connections are refused)
		const order = [
			"intake",
			"intake-bulk",
			"rates",
			"pincode",
			"warehouses",
			"billing",
			"documents",
			"ndr",
			"webhooks",
			"notifications",
			"simulator",
			"gateway",
		];
		for (const name of order) {
			await cl.fault(`${name}-0`, "SIGTERM");
			await sleep(400);
		}
		const loadEnd = Date.now();
		await cl.stopReads();
		await cl.stopLoad();
		const faults = cl.faults.slice(firstFault);
		const problems: string[] = [];
		for (const [i, f] of faults.entries()) {
			const until = faults[i + 1]?.at ?? loadEnd;
			const bad = cl.lostOrFailed(f, until, { refusedOk: f.name.endsWith("gateway-0") });
			for (const r of bad.slice(0, 3))
				problems.push(
					`${f.name}: ${r.kind} ${r.path ?? ""} → ${r.status || r.error} ${r.code ?? ""} after ${r.end - r.start} ms`,
				);
			if (bad.length > 3) problems.push(`${f.name}: … ${bad.length} in all`);
		}
		const mine = cl.requests.slice(firstRequest);
		const refused = mine.filter((r) => r.error === "ECONNREFUSED");
		const by503 = [...RETRY_503].map((code) => {
			const x = mine.filter((r) => r.status === 503 && r.code === code);
			return `${x.length} × 503 ${code} (${x.filter((r) => r.retryAfter !== undefined).length} with Retry-After)`;
		});
		const secs = (a: number, b?: number) => `${(((b ?? a) - a) / 1000).toFixed(1)}`;
		console.log(
			`  ${faults.length} SIGTERMs, ${mine.length} requests: ${by503.join(", ")}, ` +
				`${refused.length} refused while the gateway restarted\n  stop + restart → ready (s): ` +
				faults
					.map(
						(f) =>
							`${f.name.replace(/^SIGTERM /, "")} ${secs(f.at, f.restartedAt)} + ${secs(f.restartedAt ?? f.at, f.readyAt)}`,
					)
					.join(", "),
		);
		assert.deepEqual(problems, [], "requests answered 5xx (other than 503 service_unavailable) or dropped");
		// in-flight work ends within the 4 s request timeout: no process waits out the 15 s shutdown
		// timeout for a context that never ends (a timed-out remote call did: lib/platform/remote-deadline.ts)
		const slow = faults.filter((f) => (f.restartedAt ?? f.at) - f.at > 10_000).map((f) => f.name);
		assert.deepEqual(slow, [], "processes that took over 10 s to stop on SIGTERM");
		for (const p of reads)
			assert.ok(
				mine.some((r) => r.path === p && r.status === 200),
				`GET ${p} never answered 200`,
			);
		const v = await cl.verdict(40_000);
		assert.ok(v.flows >= 20, `load ran (${v.flows} flows)`);
		assert.deepEqual(v.lostOrDuplicated, [], "acknowledged orders lost or duplicated");
		assert.deepEqual(v.notBooked, [], "acknowledged bookings not booked with their own AWB");
		assert.deepEqual(v.sharedAwbs, [], "AWBs on two orders");
		assert.equal(v.unfinished, 0, "flows that never got both acknowledgements");
	});
});

function indent(s: string): string {
	return s
		.split("\n")
		.map((l) => `  ${l}`)
		.join("\n");
}
