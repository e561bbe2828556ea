/** `warehouses` service — DELETE /v1/warehouses/:id: soft delete, 404, 409 warehouse_in_use, 503, warehouses.changed. Broker and fakes: ./setup.ts. */
import { strict as assert } from "node:assert";
import { newSender, rejects } from "../../helpers/broker";
import { eventually } from "../../helpers/poll";
import { fake, useWarehouses, valid } from "./setup";

describe("warehouses: DELETE /v1/warehouses/:id", function () {
	this.timeout(60_000);
	const h = useWarehouses();
	const { create, remove, rowOf, defaultsOf } = h;

	it("soft-deletes: 200 {data:{id, deleted:1}}", async () => {
		const sender = newSender();
		const id = (await create(sender, valid())).data.id;
		const res = await remove(sender, String(id));
		assert.deepEqual(res, { data: { id, deleted: 1 } });
		const row = await rowOf(id);
		assert.equal(row.retired, true);
		assert.equal(row.active, false);
		assert.ok(row.retired_at instanceof Date);
	});

	it("answers 404 not_found for foreign, missing, already deleted and malformed ids", async () => {
		const sender = newSender();
		const foreign = (await create(newSender(), valid())).data.id;
		const id = (await create(sender, valid())).data.id;
		await remove(sender, id);
		for (const bad of [foreign, 987654321, id, "x1", "2.0", 0]) {
			const err = await rejects(() => remove(sender, bad));
			assert.equal(err.code, 404, `id ${bad}`);
			assert.deepEqual(Object.keys(err.data.body).sort(), ["error", "message"]);
			assert.equal(err.data.body.error, "not_found");
		}
		assert.equal((await rowOf(foreign)).retired, false);
	});

	it("answers 409 warehouse_in_use with at most 20 order_ids while orders ship from it", async () => {
		const sender = newSender();
		const id = (await create(sender, valid())).data.id;
		const ids = Array.from({ length: 25 }, (_, i) => 5000 + i);
		fake.usage.set(id, { count: 25, unshipped: 18, awaiting_pickup: 7, order_ids: ids });
		const err = await rejects(() => remove(sender, id));
		assert.equal(err.code, 409);
		const body = err.data.body;
		assert.equal(body.error, "warehouse_in_use");
		assert.equal(typeof body.message, "string");
		assert.equal(body.count, 25);
		assert.equal(body.unshipped, 18);
		assert.equal(body.awaiting_pickup, 7);
		assert.deepEqual(body.order_ids, ids.slice(0, 20));
		assert.equal((await rowOf(id)).retired, false);
		fake.usage.delete(id);
		assert.deepEqual(await remove(sender, id), { data: { id, deleted: 1 } });
	});

	it("broadcasts warehouses.changed after a delete, not after a refused one", async () => {
		const sender = newSender();
		const id = (await create(sender, valid())).data.id;
		fake.usage.set(id, { count: 1, unshipped: 1, awaiting_pickup: 0, order_ids: [77] });
		await rejects(() => remove(sender, id));
		fake.usage.delete(id);
		await remove(sender, id);
		await eventually(async () => fake.changes.filter((c) => c.sender_id === sender && c.id === id).length, {
			ok: (n) => n >= 1,
			what: "warehouses.changed after DELETE",
			ms: 25_000,
		});
		assert.equal(fake.changes.filter((c) => c.sender_id === sender && c.id === id).length, 1);
	});

	it("two concurrent deletes: one 200, one 404; the default moves once", async () => {
		const sender = newSender();
		const id = (await create(sender, valid())).data.id;
		const other = (await create(sender, valid())).data.id;
		const results = await Promise.allSettled([remove(sender, id), remove(sender, id)]);
		const ok = results.filter((r) => r.status === "fulfilled") as PromiseFulfilledResult<any>[];
		const failed = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
		assert.equal(ok.length, 1);
		assert.deepEqual(ok[0].value, { data: { id, deleted: 1 } });
		assert.equal(failed.length, 1);
		assert.equal(failed[0].reason.code, 404);
		assert.equal(failed[0].reason.data.body.error, "not_found");
		assert.deepEqual(await defaultsOf(sender), [other]);
	});

	it("answers 404 before asking intake (a foreign id is 404 even while intake is down)", async () => {
		const sender = newSender();
		const foreign = (await create(newSender(), valid())).data.id;
		fake.intakeDown = true;
		const err = await rejects(() => remove(sender, foreign));
		assert.equal(err.code, 404);
		assert.equal(err.data.body.error, "not_found");
		fake.intakeDown = false;
		const own = (await create(sender, valid())).data.id;
		await remove(sender, own);
		assert.deepEqual(
			fake.usageCalls.filter((c) => c.sender_id === sender),
			[{ sender_id: sender, warehouse_id: own }],
			"intake asked about the caller's warehouse only",
		);
	});

	it("answers 503 service_unavailable and keeps the row when intake cannot be asked", async () => {
		const sender = newSender();
		const id = (await create(sender, valid())).data.id;
		fake.intakeDown = true;
		const err = await rejects(() => remove(sender, id));
		assert.equal(err.code, 503);
		assert.equal(err.data.body.error, "service_unavailable");
		assert.equal((await rowOf(id)).retired, false);
	});
});
