/**
 * Internal courier catalogue actions: `rates.listCouriers` `{direction?}` and `rates.getCourier` `{logistic_id}` (lib/contracts/rates.ts).
 */
import { strict as assert } from "node:assert";
import { SANDBOX_DELHIVERY } from "../../../lib/rates/seed";
import { rejects } from "../../helpers/broker";
import { callAs, callRaw } from "../../helpers/call";
import { useRates } from "./setup";

describe("rates.listCouriers / rates.getCourier (internal)", () => {
	const t = useRates();

	it("lists active couriers by default priority with exactly the CourierInfo keys", async () => {
		const all = await callAs(t.broker, "rates.listCouriers", {});
		assert.deepEqual(
			all.map((c) => c.logistic_id),
			[1, 2, 3, 4, SANDBOX_DELHIVERY.logistic_id],
		);
		assert.deepEqual(all[0], {
			logistic_id: 1,
			logistic_name: "Sandbox Express",
			adapter: "sandbox",
			code: "sbx-express",
			forward: true,
			reverse: false,
			cod: true,
			default_priority: 1,
			active: true,
			// data/sandbox-rates.json: an air courier, cut-off 15:00 IST, Monday to Saturday
			pickup: { weekdays: [1, 2, 3, 4, 5, 6], cutoff_minutes: 15 * 60 },
		});
	});

	it("filters by direction (forward, reverse; absent → all)", async () => {
		const ids = async (direction?: unknown) =>
			(await callRaw(t.broker, "rates.listCouriers", direction === undefined ? {} : { direction })).map(
				(c) => c.logistic_id,
			);
		const dl = SANDBOX_DELHIVERY.logistic_id;
		assert.deepEqual(await ids("forward"), [1, 2, 4, dl]);
		assert.deepEqual(await ids("reverse"), [3, dl]);
		assert.deepEqual(await ids(), [1, 2, 3, 4, dl]);
		const err = await rejects(() => ids("sideways"));
		assert.equal(err.name, "ValidationError");
		const old = await rejects(() => ids(0));
		assert.equal(old.name, "ValidationError", "the spec's shipment_type numbers stay at the HTTP edge");
	});

	it("gets one courier or null", async () => {
		const c = await callAs(t.broker, "rates.getCourier", { logistic_id: 3 });
		assert.equal(c?.code, "sbx-reverse");
		assert.equal(c?.reverse, true);
		assert.equal(await callAs(t.broker, "rates.getCourier", { logistic_id: 99 }), null);
	});
});
