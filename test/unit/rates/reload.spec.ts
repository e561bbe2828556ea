/**
 * Reloads: lib/platform/reloader.ts semantics, and `rates.reload` / `pincode.reload` reaching every node over NATS.
 */
import { strict as assert } from "node:assert";
import { getSequelize } from "../../../lib/platform/db";
import { Reloader } from "../../../lib/platform/reloader";
import { as, startBroker } from "../../helpers/broker";
import { callAs, callRaw } from "../../helpers/call";
import { eventually } from "../../helpers/poll";
import { byId, seeded, useRates } from "./setup";

describe("rates: reload path", () => {
	const t = useRates();
	const serviceable = (params: Record<string, unknown>) => t.serviceable(params);

	/** A read whose result the test releases by hand. */
	function deferredReads() {
		const pending: Array<{ resolve: (v: number) => void; reject: (e: Error) => void }> = [];
		const reloader = new Reloader<number>(
			() =>
				new Promise<number>((resolve, reject) => {
					pending.push({ resolve, reject });
				}),
		);
		return { reloader, pending };
	}

	it("Reloader: concurrent callers share a read; a call during a read gets a read started after it", async () => {
		const { reloader, pending } = deferredReads();
		const first = reloader.load();
		assert.equal(pending.length, 1);
		// asked while read 1 runs (e.g. an operator reload during the periodic one): must not get read 1
		const second = reloader.load();
		const third = reloader.load();
		assert.equal(pending.length, 1, "at most one read at a time");
		pending[0].resolve(1);
		assert.equal(await first, 1);
		await new Promise((r) => setImmediate(r));
		assert.equal(pending.length, 2, "the waiting callers started ONE new read");
		pending[1].resolve(2);
		assert.equal(await second, 2);
		assert.equal(await third, 2);
		// idle again: the next call reads anew
		const fourth = reloader.load();
		assert.equal(pending.length, 3);
		pending[2].resolve(3);
		assert.equal(await fourth, 3);
	});

	it("Reloader: a failed read rejects its callers only; waiting callers still get a fresh read", async () => {
		const { reloader, pending } = deferredReads();
		const first = reloader.load();
		const second = reloader.load();
		pending[0].reject(new Error("db down"));
		await assert.rejects(first, /db down/);
		await new Promise((r) => setImmediate(r));
		assert.equal(pending.length, 2);
		pending[1].resolve(7);
		assert.equal(await second, 7);
	});

	it("rates.reload and pincode.reload on one node reach every other node (broadcast over NATS)", async function () {
		this.timeout(60_000);
		process.env.SANDBOX = "1";
		const tag = `${process.pid}-${Date.now().toString(36)}`;
		const a = await startBroker(["pincode", "rates"], { nats: true, nodeID: `rates-a-${tag}` });
		const b = await startBroker(["pincode", "rates"], { nats: true, nodeID: `rates-b-${tag}` });
		const db = getSequelize();
		const card = seeded.cards.get("1:C:forward")!;
		try {
			await eventually(
				() => a.registry.getServiceList({ onlyAvailable: true }).filter((x) => x.nodeID === b.nodeID).length,
				{ ok: (n) => n >= 2, what: "node a sees node b's services", ms: 10_000 },
			);
			await eventually(
				() => b.registry.getServiceList({ onlyAvailable: true }).filter((x) => x.nodeID === a.nodeID).length,
				{ ok: (n) => n >= 2, what: "node b sees node a's services", ms: 10_000 },
			);
			// query strings as the gateway passes them (the contract types the validated query)
			const onB = (params: Record<string, unknown>) =>
				callRaw(b, "rates.serviceable", params, { ...as(t.sender), nodeID: b.nodeID });
			const delhiBlr = { from_pin: "110001", to_pin: "560001", physical_weight: "0.5" };
			const delhiKochi = { from_pin: "110001", to_pin: "682001", physical_weight: "0.5" };
			assert.equal(byId(await onB(delhiBlr), 1)!.freight_charge, card.first_slab_paise / 100);
			assert.equal((await onB(delhiKochi)).data[0].zone, "D", "node b caches Kochi as not special");

			// a rate-card edit, reloaded through node a: node b prices with it too
			await db.query(
				"UPDATE rates.rate_cards SET first_slab_paise = first_slab_paise + 100 WHERE logistic_id = 1 AND zone = 'C' AND direction = 'forward'",
			);
			await callAs(a, "rates.reload", {}, { nodeID: a.nodeID });
			await eventually(async () => byId(await onB(delhiBlr), 1)!.freight_charge, {
				ok: (f) => f === (card.first_slab_paise + 100) / 100,
				what: "node b's freight after the reload on node a",
				ms: 10_000,
			});

			// a zone-fact edit, reloaded through node a: node b's directory AND its rates cache follow
			await db.query(
				"INSERT INTO pincode.special_states (state, region) VALUES ('Kerala', 'test') ON CONFLICT DO NOTHING",
			);
			await callAs(a, "pincode.reload", {}, { nodeID: a.nodeID });
			await eventually(async () => (await onB(delhiKochi)).data[0].zone, {
				ok: (z) => z === "E",
				what: "node b's zone for Kochi after pincode.reload on node a",
				ms: 10_000,
			});
			// node b's own directory follows too (its rates may have been answered by node a's pincode first: with
			// NATS queue groups a call is not preferred locally)
			const bPincode: any = b.getLocalService("pincode");
			await eventually(() => bPincode.directory.get("682001").special, {
				ok: (sp) => sp === true,
				what: "node b's own directory after pincode.reload on node a",
				ms: 10_000,
			});
		} finally {
			await db.query(
				"UPDATE rates.rate_cards SET first_slab_paise = $1 WHERE logistic_id = 1 AND zone = 'C' AND direction = 'forward'",
				{ bind: [card.first_slab_paise] },
			);
			await db.query("DELETE FROM pincode.special_states WHERE state = 'Kerala'");
			await Promise.all([a.stop(), b.stop()]);
		}
		// the in-process t.broker of this file never saw the edits
		assert.equal(
			byId(await serviceable({ from_pin: "110001", to_pin: "560001", physical_weight: "0.5" }), 1)!
				.freight_charge,
			card.first_slab_paise / 100,
		);
	});
});
