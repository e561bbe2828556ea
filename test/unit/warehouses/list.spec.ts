/** `warehouses` service — GET /v1/warehouses: §2.9 rows, order, shipped_30d, include=inactive. Broker and fakes: ./setup.ts. */
import { strict as assert } from "node:assert";
import { newSender } from "../../helpers/broker";
import { fake, RETURN_BLOCK, ROW_FIELDS, useWarehouses, valid } from "./setup";

describe("warehouses: GET /v1/warehouses", function () {
	this.timeout(60_000);
	const h = useWarehouses();
	const { create, list, remove } = h;

	it("answers every §2.9 field, default first then newest, with shipped_30d from intake", async () => {
		const sender = newSender();
		const first = (await create(sender, valid({ warehouse_name: "First" }))).data.id;
		const second = (
			await create(sender, valid({ warehouse_name: "Second", is_return_same: false, ...RETURN_BLOCK }))
		).data.id;
		const third = (await create(sender, valid({ warehouse_name: "Third", gstin: undefined }))).data.id;
		fake.shipped.set(sender, { [String(second)]: 7, [String(first)]: 2 });
		const before = Date.now();
		const res = await list(sender);
		assert.deepEqual(
			res.data.map((r: any) => r.id),
			[first, third, second],
		);
		for (const row of res.data) for (const f of ROW_FIELDS) assert.ok(f in row, `row has ${f}`);
		const byId = new Map(res.data.map((r: any) => [r.id, r]));
		const s: any = byId.get(second);
		assert.equal(s.shipped_30d, 7);
		assert.equal((byId.get(first) as any).shipped_30d, 2);
		assert.equal((byId.get(third) as any).shipped_30d, 0);
		assert.equal(s.warehouse_name, "Second");
		assert.equal(s.contact_person_name, "Ravi Kumar");
		assert.equal(s.contact_no, "9876543210");
		assert.equal(s.contact_email, "ops@example.in");
		assert.equal(s.address_line_1, "12 MG Road, Shivajinagar");
		assert.equal(s.address_line_2, "Near Metro Station");
		assert.equal(s.city, "Bengaluru");
		assert.equal(s.state, "Karnataka");
		assert.equal(s.pincode, "560001");
		assert.equal(s.is_return_same, false);
		assert.equal(s.return_warehouse_name, "Returns Desk");
		assert.equal(s.return_contact_person_name, "Asha Rao");
		assert.equal(s.return_contact_no, "9123456780");
		assert.equal(s.return_contact_email, "returns@example.in");
		assert.equal(s.return_address_line_1, "44 Linking Road, Bandra West");
		assert.equal(s.return_address_line_2, null);
		assert.equal(s.return_city, "Mumbai");
		assert.equal(s.return_state, "Maharashtra");
		assert.equal(s.return_pincode, "400001");
		assert.equal(s.active, true);
		assert.equal(s.retired, false);
		assert.equal(s.is_default, false);
		assert.equal(s.gstin, "29ABCDE1234F1Z5");
		assert.equal((byId.get(third) as any).gstin, null);
		assert.equal(s.warehouse_code, `WH${sender}-${second}`);
		assert.equal(s.warehouse_type, "pickup");
		assert.equal(typeof s.courier_registered, "boolean");
		assert.deepEqual(
			s.courier_registrations.map((r: any) => r.logistic_id),
			[1, 3],
		);
		const call = fake.shippedCalls.filter((c) => c.sender_id === sender).at(-1)!;
		const since = Date.parse(call.since);
		assert.ok(Math.abs(before - 30 * 86_400_000 - since) < 60_000, "since is now - 30 days");
	});

	it("answers shipped_30d null when intake cannot be reached", async () => {
		const sender = newSender();
		await create(sender, valid());
		fake.intakeDown = true;
		const res = await list(sender);
		assert.equal(res.data.length, 1);
		assert.equal(res.data[0].shipped_30d, null);
	});

	it("shows only the caller's rows; include=inactive adds retired ones; unknown include values are ignored", async () => {
		const sender = newSender();
		const keep = (await create(sender, valid())).data.id;
		const gone = (await create(sender, valid())).data.id;
		await remove(sender, gone);
		await create(newSender(), valid());
		assert.deepEqual(
			(await list(sender)).data.map((r: any) => r.id),
			[keep],
		);
		assert.deepEqual(
			(await list(sender, { include: "bogus" })).data.map((r: any) => r.id),
			[keep],
		);
		const all = await list(sender, { include: "foo, INACTIVE" });
		assert.deepEqual(
			all.data.map((r: any) => r.id),
			[keep, gone],
		);
		const retired = all.data[1];
		assert.equal(retired.retired, true);
		assert.equal(retired.active, false);
		assert.equal(retired.is_default, false);
	});

	it("answers an empty list for a new account", async () => {
		assert.deepEqual(await list(newSender()), { data: [] });
	});
});
