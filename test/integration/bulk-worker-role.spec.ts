/**
 * Integration: the bulk worker deployment (issue 10; lib/intake/bulk/role.ts,
 * k8s/base/intake-bulk.yaml) over real NATS. Intake runs twice: as msa-intake
 * (`INTAKE_BULK_WORKER=off`: API and uploads, no bulk worker) and as
 * msa-intake-bulk (`only`: the bulk worker, no other action). An upload
 * through the gateway is stored by the API node and processed by the worker
 * node; the worker node advertises and subscribes to `intake.processBulkJob`
 * only, so the gateway's order calls all land on the API node.
 */
import { strict as assert } from "node:assert";
import type { ServiceBroker } from "moleculer";
import { useCluster } from "../helpers/cluster";
import { bulkCsv, freshRef, orderBody } from "../helpers/fixtures";
import { merchantWithWarehouse, uploadBulkCsv } from "../helpers/flow";
import { eventually } from "../helpers/poll";

/** NATS subjects a broker's transporter subscribes to (queue groups and its own). */
function subjectsOf(b: ServiceBroker): string[] {
	const tx = (b.transit as unknown as { tx: { subscriptions: { getSubject(): string }[] } }).tx;
	return tx.subscriptions.map((s) => s.getSubject());
}

/** The intake service instance of a broker with its BullMQ workers. */
/** What the spec reads of an intake instance. */
interface IntakeUnderTest {
	$workers?: unknown[];
	eventRelay?: unknown;
	settings: { bulkRole?: string; bulkNice?: number };
}

function intakeOf(b: ServiceBroker): IntakeUnderTest {
	return b.getLocalService("intake") as unknown as IntakeUnderTest;
}

describe("integration: bulk worker deployment (INTAKE_BULK_WORKER off / only)", function () {
	this.timeout(120_000);
	const cluster = useCluster(
		"it-bulkrole",
		[
			["gateway"],
			{ services: ["intake"], env: { INTAKE_BULK_WORKER: "off" } },
			// nice 0: this broker shares the test process, whose threads must keep their priority
			{ services: ["intake"], env: { INTAKE_BULK_WORKER: "only", INTAKE_BULK_NICE: "0" } },
			["pincode", "rates", "warehouses"],
		],
		["intake", "pincode", "warehouses"],
	);

	it("the worker node advertises and subscribes to processBulkJob only; the API node runs no bulk worker", async () => {
		const [gateway, api, worker] = cluster.brokers;
		assert.equal(intakeOf(api).settings.bulkRole, "off");
		assert.equal(intakeOf(worker).settings.bulkRole, "only");
		assert.equal(
			intakeOf(worker).settings.bulkNice,
			0,
			"the nice the broker was created with, not the default",
		);
		assert.equal(intakeOf(api).$workers?.length, 0, "the API node runs no BullMQ worker");
		assert.equal(intakeOf(worker).$workers?.length, 1, "the worker node runs the intake-bulk worker");
		assert.ok(intakeOf(api).eventRelay, "the API node relays the event outbox");
		assert.equal(
			intakeOf(worker).eventRelay,
			undefined,
			"the worker node leaves the outbox to the API nodes",
		);
		const intakeActions = (b: ServiceBroker) =>
			Object.keys((b.getLocalService("intake") as unknown as { actions: Record<string, unknown> }).actions);
		assert.deepEqual(intakeActions(worker), ["processBulkJob"]);
		assert.ok(intakeActions(api).includes("createOrder") && intakeActions(api).includes("bulkUpload"));
		const subs = subjectsOf(worker).filter((s) => s.includes(".REQB.intake."));
		assert.deepEqual(
			subs.map((s) => s.replace(/^.*\.REQB\./, "")),
			["intake.processBulkJob"],
			"queue groups of the worker node",
		);
		assert.ok(subjectsOf(api).some((s) => s.endsWith(".REQB.intake.createOrder")));
		// seen from the gateway: order creation has one node, the API one
		// undefined until the gateway has heard of the action (discovery is asynchronous)
		const nodes = (action: string) =>
			(
				gateway.registry.getActionEndpoints(action) as unknown as
					| { endpoints: { node: { id: string } }[] }
					| undefined
			)?.endpoints.map((e) => e.node.id) ?? [];
		await eventually(async () => (nodes("intake.createOrder").length > 0 ? true : null), {
			what: "intake.createOrder known to the gateway",
		});
		assert.deepEqual(nodes("intake.createOrder"), [api.nodeID]);
	});

	it("an upload stored by the API node is processed by the worker node, each order created once", async () => {
		const [, api, worker] = cluster.brokers;
		const { token, api: http, warehouse_id } = await merchantWithWarehouse(cluster);
		const ref = freshRef("ROLE");
		const N = 60;
		// the API node runs no bulk worker (first test): a completed job was processed by the worker node
		assert.equal(intakeOf(api).$workers?.length, 0);
		assert.equal(intakeOf(worker).$workers?.length, 1);
		const job = await uploadBulkCsv(cluster.base, token, warehouse_id, bulkCsv(ref, N));
		assert.equal(job.status, "completed", JSON.stringify(job));
		assert.equal(job.counts.created, N);
		const found = await http.get(`/v1/orders?order_no=${ref}-7`);
		assert.equal(found.body.data.length, 1);
		// 20 order creations through the gateway: all answered (the worker node has no createOrder to take them)
		for (let i = 0; i < 20; i++) {
			const o = await http.post("/v1/intake/order", orderBody(warehouse_id, `${ref}-api-${i}`));
			assert.equal(o.status, 201, JSON.stringify(o.body));
		}
	});
});
