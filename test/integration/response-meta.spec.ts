/**
 * A response over NATS carries the call's meta back without the caller's `meta.user` (lib/platform/response-meta.ts,
 * docs/decisions/0143-response-meta-without-user.md): two brokers over real NATS with the system's broker options.
 * The RESPONSE packets the caller receives are seen at its transit's message handler (Moleculer's
 * `transitMessageHandler` hook).
 */
import assert from "node:assert/strict";
import { type Context, type Middleware, ServiceBroker } from "moleculer";
import { responseMeta } from "../../lib/platform/response-meta";
import { testBrokerOptions } from "../helpers/broker";

/** A packet as the transit's message handler is handed it. */
interface SeenPacket {
	payload: { meta: Record<string, unknown> };
}

describe("integration: a response over NATS does not carry the caller's meta.user back", function () {
	this.timeout(30_000);
	const namespace = `${process.env.NAMESPACE}-response-meta`;
	let caller: ServiceBroker;
	let callee: ServiceBroker;
	/** The meta of every RESPONSE packet the caller received. */
	const responses: Record<string, unknown>[] = [];
	/** What the callee saw of `meta.user`. */
	const seen: unknown[] = [];
	/** The meta of outer.run's context after its call of probe.page. */
	let outerMeta: Record<string, unknown> = {};

	before(async () => {
		callee = new ServiceBroker(testBrokerOptions(true, { namespace, nodeID: "response-meta-callee" }));
		callee.createService({
			name: "probe",
			actions: {
				/** sets the answer's status and type in meta, as the notifications pages do, and answers the caller's sender */
				page(ctx: Context<unknown, Record<string, unknown>>) {
					seen.push(ctx.meta.user);
					ctx.meta.$statusCode = 201;
					ctx.meta.$responseType = "text/html; charset=utf-8";
					return { sender: (ctx.meta.user as { sender_id: number }).sender_id };
				},
				/** fails after setting meta */
				fails(ctx: Context<unknown, Record<string, unknown>>) {
					ctx.meta.$statusCode = 409;
					throw new Error("refused");
				},
			},
		});
		const options = testBrokerOptions(true, { namespace, nodeID: "response-meta-caller" });
		caller = new ServiceBroker({
			...options,
			middlewares: [
				...(options.middlewares ?? []),
				{
					name: "SeeResponses",
					// framework boundary: Moleculer's typing of the hook does not say it answers the wrapped handler
					transitMessageHandler: ((next: (cmd: string, packet: SeenPacket) => unknown) =>
						(cmd: string, packet: SeenPacket) => {
							if (cmd === "RES") responses.push({ ...packet.payload.meta });
							return next(cmd, packet);
						}) as unknown as Middleware["transitMessageHandler"],
				},
			],
		});
		caller.createService({
			name: "outer",
			actions: {
				/** calls probe.page from a context of its own and records that context's meta after the call */
				async run(ctx: Context<unknown, Record<string, unknown>>) {
					await ctx.call("probe.page", {});
					outerMeta = { ...ctx.meta };
					return true;
				},
			},
		});
		await Promise.all([callee.start(), caller.start()]);
		await caller.waitForServices(["probe"]);
	});
	after(() => Promise.all([caller?.stop(), callee?.stop()]));

	it("the callee gets the user; the response carries what it set, not the user; the caller keeps its own", async () => {
		const user = { sender_id: 4242, role: "merchant", caps: ["orders.write"], read_only: false };
		const meta: Record<string, unknown> = { user, $answerText: 2 };
		const answer = await caller.call("probe.page", {}, { meta });
		assert.deepEqual(answer, { sender: 4242 });
		assert.deepEqual(seen.at(-1), user);
		const sent = responses.at(-1) as Record<string, unknown>;
		assert.equal("user" in sent, false, "no user in the RESPONSE packet");
		assert.equal(sent.$statusCode, 201);
		assert.equal(sent.$responseType, "text/html; charset=utf-8");

		// the caller's context meta after the call: its own user, the callee's additions merged
		await caller.call("outer.run", {}, { meta: { user } });
		assert.deepEqual(outerMeta.user, user);
		assert.equal(outerMeta.$statusCode, 201);
	});

	it("an error response carries what the callee set, not the user", async () => {
		const user = { sender_id: 4243, role: "merchant", caps: [], read_only: true };
		await assert.rejects(caller.call("probe.fails", {}, { meta: { user } }), /refused/);
		const sent = responses.at(-1) as Record<string, unknown>;
		assert.equal("user" in sent, false);
		assert.equal(sent.$statusCode, 409);
	});

	it("responseMeta: a new object without user, the meta itself when it has none", () => {
		const meta = { user: { sender_id: 1 }, $statusCode: 200 };
		const out = responseMeta(meta);
		assert.deepEqual(out, { $statusCode: 200 });
		assert.deepEqual(
			meta,
			{ user: { sender_id: 1 }, $statusCode: 200 },
			"the context's meta is left as it is",
		);
		const none = { $statusCode: 204 };
		assert.equal(responseMeta(none), none);
	});
});
