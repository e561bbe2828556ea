/**
 * Leaving a NATS queue group loses no request (issue 30; moleculer.config.ts
 * `releaseAll`, used by `gapless` when Moleculer re-makes the queue groups
 * and by `QueueGroupCalls.stopping`), over the real NATS: while a burst of
 * messages is published to a queue group, its member subscribes again and
 * leaves its old subscription. Drained, every message is handled. The nats
 * client's plain `unsubscribe()` (what Moleculer does) drops the ones the
 * server had already routed to the old subscription: with it in place of
 * `releaseAll` this spec failed in 3 of 5 runs (20,000 published, fewer
 * handled); the race does not show every time, so no test asserts the loss.
 */
import { strict as assert } from "node:assert";
import { connect, type NatsConnection } from "nats";
import { releaseAll } from "../../moleculer.config";

const BURST = 20_000;

/** Publishes BURST messages while the member re-subscribes; answers how many the member handled. */
async function burstWhileResubscribing(
	leave: (subs: { unsubscribe(): void; drain(): Promise<void> }[]) => Promise<void>,
): Promise<number> {
	const subject = `${process.env.NAMESPACE}.drain.${Math.random().toString(36).slice(2)}`;
	const member: NatsConnection = await connect({ servers: process.env.TEST_NATS_URL });
	const publisher: NatsConnection = await connect({ servers: process.env.TEST_NATS_URL });
	try {
		let handled = 0;
		const opts = { queue: "q", callback: () => void handled++ };
		const old = member.subscribe(subject, opts);
		await member.flush();
		const sending = (async () => {
			for (let i = 0; i < BURST; i++) {
				publisher.publish(subject);
				if (i % 500 === 0) await new Promise((r) => setImmediate(r));
			}
			await publisher.flush();
		})();
		await new Promise((r) => setTimeout(r, 5));
		member.subscribe(subject, opts);
		await member.flush();
		await leave([old]);
		await sending;
		await member.flush();
		await new Promise((r) => setTimeout(r, 200));
		return handled;
	} finally {
		await publisher.close();
		await member.close();
	}
}

describe("integration: leaving a NATS queue group while requests arrive (issue 30)", function () {
	this.timeout(30_000);

	it("releaseAll (drain) handles every message routed to the old subscription", async () => {
		const handled = await burstWhileResubscribing((subs) => releaseAll(subs));
		assert.equal(handled, BURST);
	});
});
