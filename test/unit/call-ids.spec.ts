/**
 * Ids of the broker's calls and events (lib/platform/call-ids.ts, moleculer.config.ts `uidGenerator`; issue 32,
 * docs/decisions/0152-call-ids-from-a-process-prefix.md): a random prefix per broker and a counter; never repeated
 * by one broker, different between brokers, and what a call's context carries in production options.
 */
import { strict as assert } from "node:assert";
import { type Context, ServiceBroker } from "moleculer";
import { callIdGenerator } from "../../lib/platform/call-ids";
import { testBrokerOptions } from "../helpers/broker";

const ID = /^([A-Za-z0-9_-]{16})-([0-9a-z]+)$/;

describe("call ids (lib/platform/call-ids.ts)", () => {
	it("one generator: 16 random base64url characters, a dash and a base-36 count from 1, never repeated", () => {
		const next = callIdGenerator();
		const seen = new Set<string>();
		let prefix: string | undefined;
		for (let i = 1; i <= 100_000; i++) {
			const id = next();
			const m = ID.exec(id);
			assert.ok(m, `malformed id ${id}`);
			prefix ??= m[1];
			assert.equal(m[1], prefix);
			assert.equal(Number.parseInt(m[2], 36), i);
			seen.add(id);
		}
		assert.equal(seen.size, 100_000);
	});

	it("two generators draw different prefixes", () => {
		const prefixes = new Set(Array.from({ length: 1000 }, () => ID.exec(callIdGenerator()())?.[1]));
		assert.equal(prefixes.size, 1000);
	});

	it("the production broker options give each context such an id, one prefix per broker", async () => {
		const brokers = [0, 1].map(
			(i) => new ServiceBroker(testBrokerOptions(false, { nodeID: `call-ids-${i}-${process.pid}` })),
		);
		try {
			const seen: { outer: string; inner: string; parent?: string | null }[] = [];
			for (const b of brokers) {
				b.createService({
					name: "ids",
					actions: {
						outer: async (ctx: Context) => ({ outer: ctx.id, ...((await ctx.call("ids.inner")) as object) }),
						inner: (ctx: Context) => ({ inner: ctx.id, parent: ctx.parentID }),
					},
				});
				await b.start();
				seen.push((await b.call("ids.outer")) as (typeof seen)[number]);
			}
			const prefixes = seen.map((s) => {
				const outer = ID.exec(s.outer);
				const inner = ID.exec(s.inner);
				assert.ok(outer && inner, `not call ids: ${JSON.stringify(s)}`);
				assert.equal(inner[1], outer[1]);
				assert.notEqual(s.inner, s.outer);
				assert.equal(s.parent, s.outer);
				return outer[1];
			});
			assert.notEqual(prefixes[0], prefixes[1]);
		} finally {
			await Promise.all(brokers.map((b) => b.stop()));
		}
	});
});
