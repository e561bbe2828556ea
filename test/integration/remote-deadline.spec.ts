/**
 * A remote call that times out leaves nothing behind (lib/platform/remote-deadline.ts):
 * two brokers over real NATS with the system's broker options; the callee
 * never answers. Without RemoteCallDeadline, Moleculer 0.15.2 keeps the
 * timed-out call's context tracked forever and a graceful stop of the
 * caller waits the whole `tracking.shutdownTimeout` (15 s).
 */
import assert from "node:assert/strict";
import { Errors, ServiceBroker } from "moleculer";
import { testBrokerOptions } from "../helpers/broker";
import { eventually } from "../helpers/poll";

/** The contexts Moleculer's ContextTracker holds for a broker's remote calls. */
const tracked = (b: ServiceBroker): unknown[] =>
	(b as unknown as { _trackedContexts: unknown[] })._trackedContexts;

describe("integration: a timed-out remote call is settled (RemoteCallDeadline)", function () {
	this.timeout(30_000);
	let caller: ServiceBroker;
	let callee: ServiceBroker;

	before(async () => {
		const namespace = `${process.env.NAMESPACE}-deadline`;
		// the callee's own stalled handlers are its contexts: it stops without waiting for them
		callee = new ServiceBroker(
			testBrokerOptions(true, {
				namespace,
				nodeID: "deadline-callee",
				tracking: { enabled: true, shutdownTimeout: 200 },
			}),
		);
		callee.createService({
			name: "stall",
			actions: {
				/** never answers (a node that took the request and hung) */
				never: () => new Promise(() => undefined),
				/** answers after `ms` */
				async after(ctx) {
					await new Promise((r) => setTimeout(r, Number(ctx.params.ms)));
					return { ok: ctx.params.ms };
				},
			},
		});
		caller = new ServiceBroker(testBrokerOptions(true, { namespace, nodeID: "deadline-caller" }));
		await Promise.all([callee.start(), caller.start()]);
		await caller.waitForServices(["stall"], 10_000);
	});
	after(async () => {
		await callee?.stop();
		await caller?.stop();
	});

	it("rejects at the timeout, then drops the context; a stop does not wait for it", async () => {
		const calls = [1, 2, 3].map(() =>
			caller.call("stall.never", { big: "x".repeat(1000) }, { timeout: 300 }),
		);
		for (const c of calls) {
			const err = await c.then(
				() => assert.fail("answered"),
				(e: unknown) => e,
			);
			assert.ok(err instanceof Errors.RequestTimeoutError, String(err));
			assert.equal((err as Errors.MoleculerError).code, 504);
		}
		await eventually(() => tracked(caller).length === 0, {
			what: "no tracked context left on the caller",
			ms: 2_000,
		});

		// answers within the timeout are untouched
		assert.deepEqual(await caller.call("stall.after", { ms: 50 }, { timeout: 1_000 }), { ok: 50 });
		assert.equal(tracked(caller).length, 0);

		// one more stalled call in flight past its deadline, then a graceful stop: no 15 s wait
		await caller.call("stall.never", {}, { timeout: 200 }).catch(() => undefined);
		const t0 = Date.now();
		await caller.stop();
		const took = Date.now() - t0;
		assert.ok(took < 5_000, `the caller took ${took} ms to stop`);
	});
});
