/**
 * The transit's pending remote calls live in a ChurnMap (lib/platform/churn-map.ts `PendingCallsTable`,
 * docs/decisions/0148-pending-calls-table.md): two brokers with the system's broker options over real NATS.
 * Calls in flight are in the table and leave it when answered; Moleculer's own walk of the table when a node
 * leaves (`removePendingRequestByNodeID`: forEach and delete) rejects exactly that node's calls.
 */
import assert from "node:assert/strict";
import { Errors, ServiceBroker } from "moleculer";
import { ChurnMap } from "../../lib/platform/churn-map";
import { middlewareNames, testBrokerOptions } from "../helpers/broker";

interface TransitParts {
	pendingRequests: Map<string, { nodeID: string | null; action: { name: string } }>;
	removePendingRequestByNodeID(nodeID: string): void;
}
const transitOf = (b: ServiceBroker): TransitParts => b.transit as unknown as TransitParts;

describe("integration: the transit's pending calls in a ChurnMap (PendingCallsTable)", function () {
	this.timeout(30_000);
	const namespace = `${process.env.NAMESPACE}-pending-table`;
	let caller: ServiceBroker;
	const callees: ServiceBroker[] = [];
	/** resolves every held call of callee `i` */
	const release: Array<() => void> = [];

	before(async () => {
		for (const i of [0, 1]) {
			let open: () => void = () => undefined;
			let gate = new Promise<void>((r) => {
				open = r;
			});
			release[i] = () => {
				open();
				gate = new Promise<void>((r) => {
					open = r;
				});
			};
			const b = new ServiceBroker(testBrokerOptions(true, { namespace, nodeID: `pending-callee-${i}` }));
			b.createService({
				name: `held${i}`,
				actions: {
					/** answers `{ i }` once released */
					async n(ctx) {
						await gate;
						return { i: ctx.params.i };
					},
				},
			});
			callees.push(b);
		}
		caller = new ServiceBroker(testBrokerOptions(true, { namespace, nodeID: "pending-caller" }));
		await Promise.all([...callees.map((b) => b.start()), caller.start()]);
		await caller.waitForServices(["held0", "held1"], 10_000);
	});
	after(async () => {
		for (const r of release) r();
		await caller?.stop();
		for (const b of callees) await b.stop();
	});

	it("is registered by the production broker options with a transporter, not without one", () => {
		assert.ok(middlewareNames("nats://127.0.0.1:4222").includes("PendingCallsTable"));
		assert.ok(!middlewareNames(undefined).includes("PendingCallsTable"));
		assert.ok(transitOf(caller).pendingRequests instanceof ChurnMap);
	});

	it("holds each call in flight and lets it go when answered", async () => {
		const table = transitOf(caller).pendingRequests;
		const calls = Array.from({ length: 50 }, (_, i) => caller.call("held0.n", { i }));
		await new Promise((r) => setTimeout(r, 200));
		assert.equal(table.size, 50);
		assert.deepEqual(new Set([...table.values()].map((req) => req.action.name)), new Set(["held0.n"]));
		release[0]?.();
		const answers = await Promise.all(calls);
		assert.deepEqual(
			answers.map((a) => (a as { i: number }).i),
			Array.from({ length: 50 }, (_, i) => i),
		);
		assert.equal(table.size, 0);
		assert.deepEqual([...table.keys()], []);
	});

	it("rejects only the calls of a node that left, through Moleculer's own walk of the table", async () => {
		const table = transitOf(caller).pendingRequests;
		// calls pinned to a node carry its id (a queue-group call has none: lib/platform/dead-node.ts follows those)
		const to = (nodeID: string, action: string, i: number) =>
			caller.call(action, { i }, { nodeID }).then(
				() => "answered",
				(e) => e,
			);
		const gone = Array.from({ length: 10 }, (_, i) => to("pending-callee-0", "held0.n", i));
		const kept = Array.from({ length: 5 }, (_, i) => to("pending-callee-1", "held1.n", i));
		await new Promise((r) => setTimeout(r, 200));
		assert.equal(table.size, 15);
		transitOf(caller).removePendingRequestByNodeID("pending-callee-0");
		assert.equal(table.size, 5);
		for (const e of await Promise.all(gone)) assert.ok(e instanceof Errors.RequestRejectedError, String(e));
		release[1]?.();
		assert.deepEqual(await Promise.all(kept), Array(5).fill("answered"));
		assert.equal(table.size, 0);
		release[0]?.(); // the callee's own handlers finish; their answers find no pending call
	});
});
