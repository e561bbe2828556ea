/** `warehouses` service — warehouses.resolve / warehouses.get: the contract Warehouse. Broker and fakes: ./setup.ts. */
import { strict as assert } from "node:assert";
import { newSender } from "../../helpers/broker";
import { callAs, callRaw } from "../../helpers/call";
import { RETURN_BLOCK, useWarehouses, valid } from "./setup";

describe("warehouses: internal reads", function () {
	this.timeout(60_000);
	const h = useWarehouses();
	const { create, remove } = h;

	it("warehouses.resolve answers the caller's active warehouse or null", async () => {
		const sender = newSender();
		const id = (await create(sender, valid())).data.id;
		const row = await callAs(h.broker(), "warehouses.resolve", { sender_id: sender, id });
		assert.ok(row);
		assert.equal(row.id, id);
		assert.equal(row.warehouse_code, `WH${sender}-${id}`);
		assert.equal(row.return_to.pincode, "560001");
		assert.equal(await callAs(h.broker(), "warehouses.resolve", { sender_id: newSender(), id }), null);
		assert.equal(await callRaw(h.broker(), "warehouses.resolve", { sender_id: sender, id: "nope" }), null);
		assert.equal(
			(await callRaw(h.broker(), "warehouses.resolve", { sender_id: String(sender), id: String(id) }))?.id,
			id,
		);
		await remove(sender, id);
		assert.equal(await callAs(h.broker(), "warehouses.resolve", { sender_id: sender, id }), null);
		const got = await callAs(h.broker(), "warehouses.get", {
			sender_id: sender,
			id,
			include_retired: true,
		});
		assert.equal(got?.retired, true);
		assert.equal(await callAs(h.broker(), "warehouses.get", { sender_id: sender, id }), null);
	});

	it("answers the contract Warehouse: pickup leg, and the return leg by the §2.9 rule", async () => {
		const sender = newSender();
		const same = (await create(sender, valid({ warehouse_name: "Same Return" }))).data.id;
		const w = await callAs(h.broker(), "warehouses.resolve", { sender_id: sender, id: same });
		assert.ok(w);
		assert.deepEqual(w, {
			id: same,
			sender_id: sender,
			warehouse_code: `WH${sender}-${same}`,
			warehouse_type: "pickup",
			gstin: "29ABCDE1234F1Z5",
			pickup: {
				warehouse_name: "Same Return",
				name: "Ravi Kumar",
				phone: "9876543210",
				email: "ops@example.in",
				address_1: "12 MG Road, Shivajinagar",
				address_2: "Near Metro Station",
				city: "Bengaluru",
				state: "Karnataka",
				pincode: "560001",
			},
			return_to: w.pickup,
			is_return_same: true,
			active: true,
			retired: false,
			is_default: true,
		});

		const separate = (await create(sender, valid({ is_return_same: false, ...RETURN_BLOCK }))).data.id;
		const got = await callAs(h.broker(), "warehouses.get", { sender_id: sender, id: separate });
		assert.ok(got);
		assert.equal(got.is_default, false);
		assert.equal(got.pickup.city, "Bengaluru");
		assert.deepEqual(got.return_to, {
			warehouse_name: "Returns Desk",
			name: "Asha Rao",
			phone: "9123456780",
			email: "returns@example.in",
			address_1: "44 Linking Road, Bandra West",
			address_2: null,
			city: "Mumbai",
			state: "Maharashtra",
			pincode: "400001",
		});
	});
});
