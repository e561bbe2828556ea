/** `warehouses` service — POST /v1/warehouses: 201, orders_repaired from intake, duplicate names. Broker and fakes: ./setup.ts. */
import { strict as assert } from "node:assert";
import { as, newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { expectInvalid, fake, useWarehouses, valid } from "./setup";

describe("warehouses: POST /v1/warehouses", function () {
	this.timeout(60_000);
	const h = useWarehouses();
	const { create, remove, rowOf } = h;

	it("answers 201 {data:{id, orders_repaired}} and commits the row for the token's account", async () => {
		const sender = newSender();
		const other = newSender();
		const opts = as(sender);
		const res = await callAs(h.broker(), "warehouses.create", valid({ sender_id: other }), opts);
		assert.deepEqual(Object.keys(res), ["data"]);
		assert.deepEqual(Object.keys(res.data).sort(), ["id", "orders_repaired"]);
		assert.equal(res.data.orders_repaired, 0);
		assert.equal((opts.meta as any).$statusCode, 201);
		const row = await rowOf(res.data.id);
		assert.equal(Number(row.sender_id), sender);
		assert.equal(row.warehouse_code, `WH${sender}-${res.data.id}`);
		assert.equal(row.version, 1);
		assert.equal(row.active, true);
		assert.equal(row.retired, false);
		assert.equal(row.is_default, true);
		assert.equal(row.warehouse_type, "pickup");
		assert.equal(row.gstin, "29ABCDE1234F1Z5");
	});

	it("reports the orders adopted by intake as orders_repaired", async () => {
		const sender = newSender();
		fake.adopt.set(sender, 3);
		const res = await create(sender, valid());
		assert.equal(res.data.orders_repaired, 3);
		assert.deepEqual(
			fake.adoptCalls.find((c) => c.sender_id === sender),
			{ sender_id: sender, warehouse_id: res.data.id },
		);
	});

	it("still creates (orders_repaired 0) when intake cannot be reached", async () => {
		const sender = newSender();
		fake.adopt.set(sender, 5);
		fake.intakeDown = true;
		const res = await create(sender, valid());
		assert.equal(res.data.orders_repaired, 0);
		assert.ok(await rowOf(res.data.id));
	});

	it("rejects a duplicate name (case-insensitive, trimmed) with 400, per account only", async () => {
		const sender = newSender();
		await create(sender, valid({ warehouse_name: "Okhla Hub" }));
		await expectInvalid(create(sender, valid({ warehouse_name: "  okhla HUB " })), [
			"warehouse_name: already exists",
		]);
		const res = await create(newSender(), valid({ warehouse_name: "Okhla Hub" }));
		assert.ok(res.data.id > 0);
	});

	it("allows a deleted warehouse's name again", async () => {
		const sender = newSender();
		const a = await create(sender, valid({ warehouse_name: "Reused Name" }));
		await remove(sender, a.data.id);
		const b = await create(sender, valid({ warehouse_name: "Reused Name" }));
		assert.notEqual(b.data.id, a.data.id);
	});
});
