/**
 * How DeadNodeRescue (lib/platform/dead-node.ts, docs/decisions/0145-rescue-from-pending-calls.md) follows the
 * transit's pending calls, on a broker's parts as far as it reads them (the transit's `pendingRequests`, its NATS
 * client's `request`, the registry's endpoints): a call pending for longer than RESCUE_AFTER_MS since its own start
 * has its action's hosts probed at the next sweep; a call pinned to one node, one younger than that, and one the
 * transit still lists past its deadline are not. The real NATS and killed processes are
 * test/integration/dead-node.spec.ts.
 */
import assert from "node:assert/strict";
import type { ServiceBroker } from "moleculer";
import { ChurnMap } from "../../../lib/platform/churn-map";
import { DeadNodeRescue, RESCUE_AFTER_MS, SWEEP_MS } from "../../../lib/platform/dead-node";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `process.hrtime()` as it read `ms` milliseconds ago. */
function hrtimeAgo(ms: number): [number, number] {
	const [s, ns] = process.hrtime();
	const total = s * 1e9 + ns - ms * 1e6;
	return [Math.floor(total / 1e9), total % 1e9];
}

/** A pending request as Moleculer's transit records it, for a call to `action` begun `ageMs` ago. */
function pending(action: string, ageMs: number, timeout: number, nodeID: string | null = null) {
	return {
		action: { name: action },
		nodeID,
		ctx: {
			id: `${action}-${ageMs}`,
			action: { name: action },
			options: { timeout },
			startHrTime: hrtimeAgo(ageMs),
		},
		resolve: () => undefined,
		reject: () => undefined,
		stream: false,
	};
}

describe("unit: DeadNodeRescue follows the transit's pending calls (record 0145)", () => {
	const probes: string[] = [];
	// the table PendingCallsTable gives the transit in production (lib/platform/churn-map.ts)
	const pendingRequests = new ChurnMap<ReturnType<typeof pending>>();
	const broker = {
		nodeID: "caller",
		logger: { warn: () => undefined },
		localBus: { on: () => undefined },
		registry: {
			getActionEndpoints: (action: string) => ({
				endpoints: [{ local: false, node: { id: `host-of-${action}` } }],
			}),
		},
		transit: {
			pendingRequests,
			_sendRequest: () => undefined,
			tx: {
				prefix: "MOL-test",
				client: {
					subscribe: () => ({ unsubscribe: () => undefined }),
					request: async (subject: string) => {
						probes.push(subject);
						return {};
					},
				},
			},
		},
	} as unknown as ServiceBroker;
	const rescue = DeadNodeRescue() as unknown as {
		created(b: ServiceBroker): void;
		started(b: ServiceBroker): void;
		stopped(): void;
		followed(): number;
	};

	before(() => {
		rescue.created(broker);
		rescue.started(broker);
	});
	after(() => rescue.stopped());

	it("probes the hosts of a call unanswered since its start, and no other", async () => {
		const calls = [
			pending("intake.orderDetail", RESCUE_AFTER_MS + 500, 4000), // old enough: probed
			pending("intake.listOrders", 0, 4000), // just sent: not yet
			pending("intake.status", RESCUE_AFTER_MS + 500, 4000, "node-7"), // pinned to a node: never followed
			pending("rates.quote", 10_000, 4000), // still listed 6 s past its deadline: not followed again
		];
		for (const c of calls) pendingRequests.set(c.ctx.id, c);
		assert.equal(rescue.followed(), 3, "the calls sent to a queue group");
		await sleep(SWEEP_MS * 3);
		assert.deepEqual([...new Set(probes)], ["MOL-test.ALIVE.host-of-intake.orderDetail"]);
		pendingRequests.clear();
		assert.equal(rescue.followed(), 0);
	});
});
