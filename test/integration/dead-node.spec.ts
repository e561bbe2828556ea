/**
 * A dead node costs no call when a replica remains (issue 30;
 * lib/platform/dead-node.ts, docs/decisions/0113-dead-node-rescue.md), over
 * the real NATS: two member processes host `deadtest.slowRead` (retry-safe
 * for this spec) and `deadtest.slowWrite` (not), a broker in this process
 * calls them through the queue group, and the member that received the call
 * is killed with SIGKILL while it holds it.
 *
 * - the retry-safe call is answered by the other member within 1 s, and the
 *   dead node is out of the caller's registry at once (not after the 6 s
 *   heartbeat timeout);
 * - the other call is not sent again (it may be running on a live node): it
 *   times out as before and the live member never sees it;
 * - `probeNode` says `dead` for the killed node, `alive` for the live one.
 */
import { strict as assert } from "node:assert";
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { ServiceBroker } from "moleculer";
import { DeadNodeRescue, probeNode } from "../../lib/platform/dead-node";
import { testBrokerOptions } from "../helpers/broker";

const root = resolve(__dirname, "../..");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A member process and what it printed. */
interface MemberProc {
	id: string;
	child: ChildProcess;
	out: string;
}

function startMember(id: string, namespace: string): Promise<MemberProc> {
	const child = spawn(
		process.execPath,
		["--require", "tsx/cjs", resolve(root, "test/fixtures/processes/dead-node-member.ts")],
		{
			cwd: root,
			env: { ...process.env, NODEID: id, NAMESPACE: namespace },
			stdio: ["ignore", "pipe", "pipe"],
		},
	);
	const m: MemberProc = { id, child, out: "" };
	child.stdout?.on("data", (d: Buffer) => {
		m.out += d.toString();
	});
	child.stderr?.on("data", (d: Buffer) => {
		m.out += d.toString();
	});
	return new Promise((ok, fail) => {
		const end = Date.now() + 30_000;
		const poll = setInterval(() => {
			if (m.out.includes(`ready ${id}`)) {
				clearInterval(poll);
				ok(m);
			} else if (child.exitCode !== null || Date.now() > end) {
				clearInterval(poll);
				fail(new Error(`member ${id} did not start: ${m.out}`));
			}
		}, 50);
	});
}

function kill9(m: MemberProc): Promise<void> {
	if (m.child.exitCode !== null || m.child.signalCode !== null) return Promise.resolve();
	return new Promise((r) => {
		m.child.once("exit", () => r());
		m.child.kill("SIGKILL");
	});
}

/** Resolves with the member that printed `got <tag>` (polls every 2 ms). */
async function receiver(members: MemberProc[], tag: string, ms = 5000): Promise<MemberProc> {
	const end = Date.now() + ms;
	for (;;) {
		const m = members.find((x) => x.out.includes(`got ${tag} `));
		if (m) return m;
		if (Date.now() > end) throw new Error(`no member received ${tag}`);
		await sleep(2);
	}
}

describe("integration: a call held by a node killed with SIGKILL (issue 30)", function () {
	this.timeout(90_000);
	const namespace = `${process.env.NAMESPACE}-dead`;
	let caller: ServiceBroker;
	let members: MemberProc[] = [];
	const rescue = DeadNodeRescue({ retrySafe: (a) => a === "deadtest.slowRead" });

	async function twoMembers(): Promise<void> {
		for (const m of members) await kill9(m);
		const n = Date.now().toString(36);
		members = await Promise.all([startMember(`dt-a-${n}`, namespace), startMember(`dt-b-${n}`, namespace)]);
		const end = Date.now() + 15_000;
		for (;;) {
			const list = caller.registry.getActionEndpoints("deadtest.slowRead");
			const nodes = new Set(list?.endpoints.map((e) => e.node.id) ?? []);
			if (members.every((m) => nodes.has(m.id))) break;
			if (Date.now() > end) throw new Error(`the caller does not see both members: ${[...nodes].join(",")}`);
			await sleep(50);
		}
	}

	before(async () => {
		const base = testBrokerOptions(true, { nodeID: `dt-caller-${process.pid}`, namespace });
		const middlewares = (base.middlewares ?? []).map((m) =>
			(m as { name?: string }).name === "DeadNodeRescue" ? rescue : m,
		);
		assert.ok(
			middlewares.some((m) => (m as { name?: string }).name === "DeadNodeRescue"),
			"the production options register DeadNodeRescue with a transporter",
		);
		caller = new ServiceBroker({ ...base, middlewares });
		await caller.start();
	});

	after(async () => {
		for (const m of members) await kill9(m);
		await caller?.stop();
	});

	it("follows a call while it is unanswered (the transit's pending requests), not once it settled", async () => {
		await twoMembers();
		const call = caller.call<{ node: string; tag: string }, { ms: number; tag: string }>(
			"deadtest.slowRead",
			{ ms: 100, tag: "f1" },
			{ timeout: 4000 },
		);
		await receiver(members, "f1");
		assert.equal(rescue.followed(), 1, "the call in flight is followed");
		assert.equal((await call).tag, "f1");
		await Promise.resolve(); // one more turn: the settle reaction may be queued beside the caller's
		assert.equal(rescue.followed(), 0, "not followed once settled");
		const hooks = rescue as unknown as Record<string, unknown>;
		assert.equal(
			hooks.remoteAction ?? hooks.localAction ?? hooks.call,
			undefined,
			"no work as a call is made",
		);
	});

	it("answers a retry-safe call from the live member within 1 s and drops the dead node from the registry at once", async () => {
		await twoMembers();
		const t0 = Date.now();
		const call = caller.call<{ node: string; tag: string }, { ms: number; tag: string }>(
			"deadtest.slowRead",
			{ ms: 150, tag: "r1" },
			{ timeout: 4000 },
		);
		const got = await receiver(members, "r1");
		await kill9(got);
		const answer = await call;
		const took = Date.now() - t0;
		const live = members.find((m) => m !== got) as MemberProc;
		assert.equal(answer.node, live.id, "answered by the live member");
		assert.equal(answer.tag, "r1");
		assert.ok(took < 1000, `answered after ${took} ms`);
		assert.ok(live.out.includes("got r1 "), "the live member received it again");
		const nodes = new Set(
			caller.registry.getActionEndpoints("deadtest.slowRead")?.endpoints.map((e) => e.node.id),
		);
		assert.ok(!nodes.has(got.id), `${got.id} still in the registry`);
		assert.equal(await probeNode(caller, got.id), "dead");
		assert.equal(await probeNode(caller, live.id), "alive");
	});

	it("answers every one of 20 concurrent retry-safe calls within 1 s when the member holding some of them dies", async () => {
		await twoMembers();
		const t0 = Date.now();
		const calls = Array.from({ length: 20 }, (_, i) =>
			caller
				.call<{ node: string; tag: string }, { ms: number; tag: string }>(
					"deadtest.slowRead",
					{ ms: 150, tag: `m${i}` },
					{ timeout: 4000 },
				)
				.then(
					(v) => ({ ok: v, ms: Date.now() - t0 }),
					(err: Error) => ({ err: String(err), ms: Date.now() - t0 }),
				),
		);
		const victim = await receiver(members, "m0");
		await kill9(victim);
		const answers = await Promise.all(calls);
		const live = members.find((m) => m !== victim) as MemberProc;
		for (const a of answers) {
			assert.ok("ok" in a, JSON.stringify(a));
			assert.equal(a.ok.node, live.id);
			assert.ok(a.ms < 1000, `answered after ${a.ms} ms`);
		}
	});

	it("a node id that died before and came back (a restarted pod keeps its name) is rescued again when it dies again", async () => {
		await twoMembers();
		const first = caller.call("deadtest.slowRead", { ms: 150, tag: "p1" }, { timeout: 4000 });
		const victim = await receiver(members, "p1");
		await kill9(victim);
		await first;
		// the same node id again, seen by the caller again
		const again = await startMember(victim.id, namespace);
		members = [...members.filter((m) => m !== victim), again];
		const end = Date.now() + 15_000;
		while (
			!caller.registry.getActionEndpoints("deadtest.slowRead")?.endpoints.some((e) => e.node.id === again.id)
		) {
			if (Date.now() > end) throw new Error("the restarted member was not seen again");
			await sleep(50);
		}
		const t0 = Date.now();
		const calls = Array.from({ length: 10 }, (_, i) =>
			caller
				.call<{ node: string }, { ms: number; tag: string }>(
					"deadtest.slowRead",
					{ ms: 150, tag: `q${i}` },
					{ timeout: 4000 },
				)
				.then(
					(v) => ({ node: v.node, ms: Date.now() - t0 }),
					(err: Error) => ({ node: String(err), ms: Date.now() - t0 }),
				),
		);
		const endGot = Date.now() + 5000;
		while (!again.out.includes("got q")) {
			if (Date.now() > endGot) throw new Error("the restarted member received none of the calls");
			await sleep(2);
		}
		await kill9(again);
		const live = members.find((m) => m !== again) as MemberProc;
		for (const a of await Promise.all(calls)) {
			assert.equal(a.node, live.id, JSON.stringify(a));
			assert.ok(a.ms < 1000, `answered after ${a.ms} ms`);
		}
	});

	it("does not send a call of an action that is not retry-safe again: it times out, the live member never sees it", async () => {
		await twoMembers();
		const call = caller.call("deadtest.slowWrite", { ms: 150, tag: "w1" }, { timeout: 1500 }).then(
			() => undefined,
			(err: Error) => err,
		);
		const got = await receiver(members, "w1");
		await kill9(got);
		const err = await call;
		assert.ok(err, "the call failed");
		assert.equal(err?.name, "RequestTimeoutError", String(err));
		const live = members.find((m) => m !== got) as MemberProc;
		assert.ok(!live.out.includes("got w1 "), "the live member received the call");
	});
});
