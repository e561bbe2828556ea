/** `warehouses` service — the default warehouse: exactly one per account through create, PATCH, DELETE. Broker and fakes: ./setup.ts. */
import { strict as assert } from "node:assert";
import { newSender } from "../../helpers/broker";
import { useWarehouses, valid } from "./setup";

describe("warehouses: default warehouse", function () {
	this.timeout(60_000);
	const h = useWarehouses();
	const { create, list, update, remove, defaultsOf } = h;

	it("keeps exactly one default per account through create, PATCH and DELETE", async () => {
		const sender = newSender();
		const a = (await create(sender, valid({ is_default: false }))).data.id;
		assert.deepEqual(
			await defaultsOf(sender),
			[a],
			"the first warehouse becomes default even when is_default:false",
		);
		const b = (await create(sender, valid())).data.id;
		assert.deepEqual(await defaultsOf(sender), [a]);
		const c = (await create(sender, valid({ is_default: true }))).data.id;
		assert.deepEqual(await defaultsOf(sender), [c], "is_default:true moves the default");
		const res = await update(sender, a, { is_default: "true" });
		assert.equal(res.data.is_default, true);
		assert.deepEqual(await defaultsOf(sender), [a]);
		assert.equal((await list(sender)).data[0].id, a, "default listed first");
		const unset = await update(sender, a, { is_default: false });
		assert.equal(unset.data.is_default, false, "the answer is the row after the change");
		assert.deepEqual(await defaultsOf(sender), [b], "unsetting hands the default to the oldest other");
		await remove(sender, b);
		assert.deepEqual(await defaultsOf(sender), [a], "deleting the default promotes the oldest remaining");
		await remove(sender, a);
		assert.deepEqual(await defaultsOf(sender), [c]);
		const res2 = await update(sender, c, { is_default: false });
		assert.equal(res2.data.is_default, true, "the only warehouse stays default");
		await remove(sender, c);
		assert.deepEqual(await defaultsOf(sender), []);
		const d = (await create(sender, valid())).data.id;
		assert.deepEqual(await defaultsOf(sender), [d]);
	});

	it("keeps one default under concurrent first creates", async () => {
		const sender = newSender();
		const results = await Promise.all([1, 2, 3, 4].map(() => create(sender, valid())));
		assert.equal(results.length, 4);
		assert.equal((await defaultsOf(sender)).length, 1);
	});
});
